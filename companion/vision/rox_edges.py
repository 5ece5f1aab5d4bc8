"""Rox element cards' 16 edge symbols, cut out of the rectified card and counted by
element (``read_rox_edges``); an unsure card is read again through its outline fitted
to the photo and through its sure neighbours' outlines stepped over, and then searched
for through nudged outlines, and on a photo blurred by motion read again sharpened. A
card the locator took for a scoring card by its shape is an element card if its edge
symbols read sure (``element_cards_by_edges``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.align import fit_card_outline, piece_aspect
from companion.vision.deblur import sharpened_choices
from companion.vision.detections import (
    MIN_CONFIDENCE,
    Detections,
    quad_iou,
    reach_circles,
    rectify,
    side_lengths,
    within_reach,
)
from companion.vision.reading import (
    EDGE_FITS,
    Image,
    Model,
    available_model,
    load_model,
    nudged,
    read_quads,
    softmax,
    stepped_outlines,
)
from companion.vision.segment import unsqueezed

ROX_EDGE_SIDE = 96
"""Rox cards are rectified to this square side to cut out their 16 edge symbols."""


ROX_EDGE_MARGIN = 0.11
ROX_EDGE_PATCH = 0.17


def rox_edge_places(side: float) -> list[tuple[float, float]]:
    """Centres of the 16 edge symbols in a square crop: four per side, clockwise from
    the top-left corner, ``ROX_EDGE_MARGIN`` of the side in from the edge."""
    m = ROX_EDGE_MARGIN * side
    span = side - 2 * m
    places = []
    for k in range(4):
        places.append((m + k / 4 * span, m))
    for k in range(4):
        places.append((side - m, m + k / 4 * span))
    for k in range(4):
        places.append((side - m - k / 4 * span, side - m))
    for k in range(4):
        places.append((m, side - m - k / 4 * span))
    return places


def rox_edge_patches(square: Image, size: int) -> npt.NDArray[np.uint8]:
    """The 16 edge-symbol patches (16, size, size, 3) of a rectified square Rox card:
    each the square around its symbol's place (``rox_edge_places``) warped to ``size``,
    all in one remap (the same sampling as ``rectify`` on each, a grey level apart at
    most)."""
    map_x, map_y = _edge_patch_maps(square.shape[0], size)
    out: npt.NDArray[np.uint8] = cv2.remap(square, map_x, map_y, cv2.INTER_LINEAR,
                                           borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(16, size, size, *square.shape[2:])


@lru_cache(maxsize=8)
def _edge_patch_maps(side: int, size: int) -> tuple[npt.NDArray[np.float32],
                                                      npt.NDArray[np.float32]]:
    """Where each pixel of the 16 stacked patches samples the square card."""
    half = ROX_EDGE_PATCH * side / 2
    step = np.arange(size, dtype=np.float64) * (2 * half / size)
    xs, ys = [], []
    for cx, cy in rox_edge_places(side):
        grid_x, grid_y = np.meshgrid(cx - half + step, cy - half + step)
        xs.append(grid_x)
        ys.append(grid_y)
    return (np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.float32))


EDGE_SURE_AT = 0.7
"""A card's product of symbol sureness must reach this to be sure; it is reported on
the readers' common scale (``MIN_CONFIDENCE`` 0.5 falls here). On 340 located cards
(rendered seeds 60020-60044) 244 of 245 cards at 0.7 or more were counted exactly,
17 of 27 between 0.5 and 0.7."""


CENTRE_SURE_AT = 0.8
"""The element card model's probability for a card's centre element must reach this to
be sure; it is put on the readers' common scale as the edge symbols' sureness is
(``centre_certainty``: ``MIN_CONFIDENCE`` falls here). Of the located element cards on
dev 60400-60459, 60600-60659, 61000-61059 (normal) and 61600-61659 (hard), 3382 read
right, all from 0.84 on but one (0.74, hard); the 3 read wrong at 0.60 (60456: a fire
stone washed out by glare, read magic, surely at 0.5), 0.46 and 0.76 (hard)."""


def centre_certainty(probability: float) -> float:
    """The element card model's ``probability`` for a card's centre element on the
    readers' common scale (``CENTRE_SURE_AT`` falls at ``MIN_CONFIDENCE``)."""
    return float(probability ** (np.log(MIN_CONFIDENCE) / np.log(CENTRE_SURE_AT)))


EDGE_COUNTS_SURE = 0.6
"""A card's edge counts are reported sure (``counted_certainty``: put at ``MIN_CONFIDENCE``)
from this sureness on (the scale of ``EDGE_SURE_AT``, which the reading and search steps
below use), not from ``MIN_CONFIDENCE``. Located element cards matched to the truth,
dev 60100-60499 normal / 60700-60799 hard, counted exactly by sureness band:

    band        normal right/wrong   hard right/wrong
    0.0-0.3     15/45                65/231
    0.3-0.4     9/2                  17/8
    0.4-0.5     12/3                 22/5
    0.5-0.6     13/1                 26/1
    0.6-0.7     6/0                  31/0
    0.7-0.8     42/0                 49/7
    0.8-0.9     980/8                258/7
    0.9-1.0     4444/1               596/2

Below 0.5 a card is too often wrong to be sure (the cards reported unsure on dev 61100-
61159 normal were all counted wrong but one); from 0.6 none of 37 was. Reported from 0.6,
dev 60321 (a fire card counted 0.54, one symbol wrong) is unsure, and exact states
are unchanged on normal 60300+40, 61100+60, 60000+40, 61200+60, hard 61500+40,
61600+30."""


def counted_certainty(sureness: float) -> float:
    """A card's edge counts' ``sureness`` (``read_rox_edges``) on the readers' common scale
    (``EDGE_COUNTS_SURE`` falls at ``MIN_CONFIDENCE``)."""
    return float(sureness ** (np.log(MIN_CONFIDENCE) / np.log(EDGE_COUNTS_SURE)))


EDGE_NUDGED_SURE = 0.7
"""A searched reading is kept only at this sureness: the best of several readings is
surer than one reading by chance alone (nudges alone, on 590 located cards, seeds
60000-60044: kept from 0.7, sure and wrong 4 -> 5; from 0.5, 4 -> 9)."""


EDGE_SEARCH_SCALES = (0.92, 1.0, 1.08)
EDGE_SEARCH_TURNS = (-4.0, 0.0, 4.0)
EDGE_SEARCH_SHIFT = 0.05
"""A card still unsure after the outline fit is searched for coarse to fine: its located
and its best fitted outline each scaled by 8 % and turned by 4° either way, or moved by
5 % of its side each way (16 outlines each), then the surest of all those moved by half
as much each way (8 more). Located outlines of cards in a row are often a little small,
askew or off along the row (the seams are faint). On 1548 located cards (seeds
60000-60119, normal), against the nudges of 5 % and 3 % it replaces: unsure 52 -> 28,
sure and wrong 7 -> 7. Without the shifts in the coarse step: 33 unsure; a finer grid
of scales and turns: one unsure fewer, one sure and wrong more."""


EDGE_SEARCH_ROUNDS = 2
"""Rounds of the search: a card still under ``EDGE_NUDGED_SURE`` after a round but at
least ``EDGE_AGAIN_FROM`` is searched again from the surest outline the round found
(``EDGE_SEARCH_*`` about it): a located outline off by more than one step's reach (a
card's side located 15 % short, its centre 5-10 % off) is reached in two. On the located
cards fully in view of dev seeds 61300-61339 and 61200-61239 (normal) and 61500-61519
(hard), against one round: unsure 7 -> 5, 42 -> 39 and 69 -> 67, sure and wrong
unchanged (0, 1, 2); 61600-61639 and 61000-61039 (normal) unchanged."""
EDGE_AGAIN_FROM = 0.35
"""Cards read less sure than this after the first round are not searched again: of 74
second rounds on the dev seeds above, none from under 0.39 found a reading to keep."""
EDGE_AGAIN_SURE = 0.8
"""A reading found in a later round is kept only this sure, not ``EDGE_NUDGED_SURE``:
the best of more readings is surer by chance alone (kept from 0.7, a card of dev 61635
was read 0.71 with one symbol wrong)."""


EDGE_SEARCH_CARDS = 6
"""At most this many cards a photo are searched for, the unsure ones first and the surest
first among those as among the rest (each costs 40 readings of 16 symbols, 24 more in
a second round): a photo's time stays bounded however many cards it leaves
unsure. On hard rendered scenes (seeds 60000-60029, 382 located cards) the edge reading
took 125 ms a photo with the nudges before the search and 200 ms with it (101 -> 87
unsure), as with no bound; three cards at most left 91 unsure, and at normal
difficulty one photo of 30 (61012) with four unsure cards lost one."""


EDGE_REFIT_BELOW = 0.8
"""Cards read less sure than this are read again through their fitted outline; the
surer cards keep their reading, and the photo its time (on 391 located cards, fitting
every card or only those below 0.8 gave the same counts; below 0.7 made one sure and
wrong. With the search after it, on 1548 located cards, 0.8 and 0.9 gave the same
counts, 0.8 about 8 ms a photo sooner)."""
EDGE_FIT_CHECK_BELOW = 0.9
"""Cards read from ``EDGE_REFIT_BELOW`` up to this are read through their fitted outline
too, and take its reading when it is surer, but keep the outline they were read through
(the outline their unsure neighbours are stepped from: moving it there lost a hard card,
dev 61920). A located outline askew by a few pixels can read one symbol of a
neighbouring card surely enough: of the located cards of dev 60100-60499 (normal)
counted 0.8-0.9 (``EDGE_COUNTS_SURE``'s table) 8 of 988 were wrong, from 0.9 1 of 4445
(dev 61704: a water card counted 0.81 through an outline sheared 10 px across its seam,
an air ring of the next card taken for its water drop; fitted 0.99 and right).
Photo -> state, dev 61700+40 normal: exact 31 -> 32 (61704, read whole and wrong
before), 61600+40 normal and 61900+40 hard unchanged."""


EDGE_SEARCH_BELOW = 0.8
"""Cards still read less sure than this after the fit are searched for (``_edge_search``),
those under ``MIN_CONFIDENCE`` first: a card read fairly sure through an outline a few
pixels off can have one symbol wrong, and the search finds a surer reading of it. On
the located cards of rendered seeds 61200-61239 and 61300-61339 (normal), searching
from 0.8 rather than from 0.5: sure and wrong 5 -> 1, sure and exact 1019 -> 1023,
photos read exactly 56 -> 60 of 80; the edge reading took about 4 % more time a photo
(hard: 11-17 %). From 0.9: 61 photos, 25-45 % more time."""


EDGE_STEP_PITCH = 1.02
EDGE_STEP_OVERLAP = 0.3
"""A card still under ``EDGE_SEARCH_BELOW`` after the fit is read through each sure
neighbour's outline (read at least ``EDGE_REFIT_BELOW``) stepped one card over along
one of its axes, ``EDGE_STEP_PITCH`` of its side (a row's cards lie side by side, a
thin gap apart), where the stepped outline's centre lies in the card's and overlaps no
other card's outline ``EDGE_STEP_OVERLAP`` (IoU); the search starts from the surest such
outline too. A located outline swollen by a hand's shadow or cut short at a faint seam
is then read through one of a card's size and slant."""
EDGE_STEP_ROUNDS = 2
"""Rounds of stepping and search: a neighbour the search made sure steps over to the
cards still unsure, which are searched again from there (a row's cards are often
unsure side by side, and the stepped outline, off by the gap, needs the search)."""


def read_rox_edges(balanced: Image, quads: npt.NDArray[np.float32], models_dir: Path
                   ) -> list[tuple[dict[str, int], float]]:
    """Count each Rox card's 16 edge symbols by element: ({element: count} over all five
    elements, how sure the counts are). Sureness is the product over the 16 symbols of
    each one's top probability against the model's typical one on a right reading
    (``Model.sure``, at most 1 each): a card read as plainly as the model reads its right
    crops is sure; the product is put on the readers' common scale by ``EDGE_SURE_AT``.

    A card read less sure than ``EDGE_REFIT_BELOW`` is read again through its outline
    fitted to the card's edges in the photo (``align.fit_card_outline``, the
    ``EDGE_FITS`` best fits), and the surest reading kept: an outline a few pixels off
    cuts every symbol's patch askew. (On 390 located cards, rendered seeds
    60000-60029, with small nudges after it: sure and exact 317 -> 371, sure and wrong
    2 -> 1.) A card read fairly sure (up to ``EDGE_FIT_CHECK_BELOW``) is read so too, but
    keeps its outline. A card still less sure than ``EDGE_SEARCH_BELOW`` is read through its sure
    neighbours' outlines stepped over (``EDGE_STEP_*``), then searched for from those
    outlines (``_edge_search``), and the surest reading kept if it reaches
    ``EDGE_NUDGED_SURE``. (Reading each card at its four quarter turns and averaging was
    tried: on 590 located cards it gained one exact card and cost 30 ms a photo.)
    Cards still under ``EDGE_SEARCH_BELOW`` are then read all so again on the photo
    sharpened against the motion blur measured round the cards (``deblur.sharpened_choices``,
    ``STREAK_CHOICES``), when a streak is measured there, and the surer reading kept;
    the sure cards keep their reading and outline there, as neighbours to step over
    from. (Reading them
    again, and searching those the sharpening left unsure, was about half the sharpened
    reading's time for nothing: dev 61600-61659 hard, outlines read a photo, median
    346 -> 322, max 1047 -> 936; cards sure and right 655 -> 655, sure and wrong
    15 -> 14; normal 61400-61459 and 60600-60659 unchanged.)"""
    model = load_model("rox_edge", models_dir)
    if len(quads) == 0:
        return []
    out, outlines = _read_edges(model, balanced, quads)
    still = [k for k, (_, sure) in enumerate(out) if sure < EDGE_SEARCH_BELOW]
    sharp = _surest_sharpened(model, balanced, quads, [outlines[k] for k in still]
                              ) if still else None
    if sharp is not None:
        again, _ = _read_edges(model, sharp, quads, known={
            k: (out[k], outlines[k]) for k in range(len(quads)) if k not in still})
        for k in still:
            if again[k][1] > out[k][1]:
                out[k] = again[k]
    return out


STREAK_CHOICES = 2
"""The photo is sharpened against each of the two deepest streaks measured round the
cards (``deblur.motion_streaks``), and the unsure cards are read again on the one whose
sharpened photo reads them surest (``_surest_sharpened``): the deepest dip of the
cepstrum is not always the streak (dev 61819 normal: a dip 4 px out along the rows, 3.3
deep, before the 8 px slanting streak's 3.1; sharpened against it the photo's 18 whole
cards read at 0.37 (median), 2 sure, against the streak 0.82, all 18 sure and right).
Photo -> state, element cards reported unknown, dev 61000, 61400, 61600, 61800 (+40,
normal): 8, 3, 20, 20 -> 8, 3, 20, 10 (61819 13 -> 4, 61838 3 -> 1); 61200, 60600 (+40)
unchanged; hard 61900+40 unchanged, 61500+40 169 -> 171 (61521: two cards read sure and
right sharpened against the deepest dip now unsure); exact photos and cards read sure
and wrong unchanged on all of them. Turning the chosen streak by 8 degrees either way
(a third and fourth choice) made no photo more exact (dev 61228, 61237, 61002 and
more)."""


def _surest_sharpened(model: Model, balanced: Image, quads: npt.NDArray[np.float32],
                      outlines: list[npt.NDArray[np.float32]]) -> Image | None:
    """Of the photos sharpened against each of the ``STREAK_CHOICES`` deepest streaks
    measured round the cards at ``quads``, the one on which the cards at ``outlines`` (the
    unsure ones) read surest (median sureness; the deeper streak on a tie); None when no
    streak is measured (``deblur.STREAK_DEPTH_FROM``)."""
    choices = sharpened_choices(balanced, quads, STREAK_CHOICES)
    if len(choices) < 2:
        return choices[0] if choices else None
    sureness = [float(np.median([sure for _, sure in _edge_readings(model, sharp, outlines)]))
                for sharp in choices]
    return choices[int(np.argmax(sureness))]


def _read_edges(model: Model, balanced: Image, quads: npt.NDArray[np.float32], *,
                known: Mapping[int, tuple[tuple[dict[str, int], float],
                                          npt.NDArray[np.float32]]] | None = None
                ) -> tuple[list[tuple[dict[str, int], float]], list[npt.NDArray[np.float32]]]:
    """``read_rox_edges`` in one photo: each card's reading and the outline it was read
    through, read at the located outlines, then the unsure cards through fitted, stepped
    and searched outlines. The cards ``known`` (reading, outline; all sure, from the
    photo before it was sharpened) are not read again: only the unsure cards' readings
    are wanted then, and the sure ones are their neighbours to step over from."""
    known = known or {}
    unknown = [k for k in range(len(quads)) if k not in known]
    read = dict(zip(unknown, _edge_readings(model, balanced, [quads[k] for k in unknown]),
                    strict=True))
    out = [known[k][0] if k in known else read[k] for k in range(len(quads))]
    refit = [k for k, (_, sure) in enumerate(out) if sure < EDGE_FIT_CHECK_BELOW and k not in known]
    checked = {k for k in refit if out[k][1] >= EDGE_REFIT_BELOW}  # keep their outline
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0) if refit else balanced
    aspects = _photo_aspects(quads, refit)
    fitted = {k: fit_card_outline(smooth, quads[k], aspect=aspects[k], count=EDGE_FITS)
              for k in refit}
    outlines = [known[k][1] if k in known else quads[k] for k in range(len(quads))]
    tried = [(k, fit) for k, fits in fitted.items() for fit in fits]
    for (k, fit), reading in zip(tried, _edge_readings(model, balanced, [f for _, f in tried]),
                                 strict=True):
        if reading[1] > out[k][1]:
            out[k] = reading
            if k not in checked:
                outlines[k] = fit
    stepped_from: set[int] = set()
    for again in range(EDGE_STEP_ROUNDS):
        sure = {k for k, (_, sure) in enumerate(out) if sure >= EDGE_REFIT_BELOW}
        stepped = _read_stepped(model, balanced, out, outlines, sure - stepped_from)
        stepped_from |= sure
        unsure = sorted((k for k, (_, sure) in enumerate(out) if sure < EDGE_SEARCH_BELOW
                         and (not again or k in stepped)),
                        key=lambda k: (out[k][1] >= MIN_CONFIDENCE, -out[k][1]))[:EDGE_SEARCH_CARDS]
        starts = [stepped.get(k, [])[:1] if again else
                  [quads[k], *fitted.get(k, [])[:1], *stepped.get(k, [])[:1]] for k in unsure]
        for k, (best, outline) in zip(unsure, _edge_search(model, balanced, starts), strict=True):
            if best[1] >= EDGE_NUDGED_SURE and best[1] > out[k][1]:
                out[k], outlines[k] = best, outline
    _colour_checked(model, balanced, out, outlines, unknown)
    moved = [k for k in range(len(quads))
             if k not in known and not np.array_equal(outlines[k], quads[k])]
    for k, overlap in zip(moved, _overlaps(moved, outlines), strict=True):
        if overlap >= EDGE_OVERLAP_UNSURE:
            out[k] = (out[k][0], min(out[k][1], EDGE_OVERLAP_SURE))
    return out, outlines


def _colour_checked(model: Model, balanced: Image, out: list[tuple[dict[str, int], float]],
                    outlines: list[npt.NDArray[np.float32]], cards: Sequence[int]) -> None:
    """Each of ``cards`` still under ``EDGE_SEARCH_BELOW`` read again through the outline
    its reading was kept through, its colourless magic symbols counted sure
    (``_colour_opinion``), its pale stars read as a coloured element read magic; kept in
    ``out`` when the model counts it the same there (the stars aside). Only
    once the outline is chosen: the fits and the search, taking the surest of many
    outlines, find ones whose patch misses a coloured symbol and shows bare card, read
    magic and colourless (counted so in them, dev 61000+40, 61300+40, 61700+40 normal
    and 61900+40 hard: 11 cards more read sure and wrong, 4 photos read whole and
    wrong)."""
    unsure = [k for k in cards if out[k][1] < EDGE_SEARCH_BELOW]
    as_read: list[dict[str, int]] = []
    for k, again, counted in zip(unsure, _edge_readings(
            model, balanced, [outlines[k] for k in unsure], colour=True, as_read=as_read),
                                 as_read, strict=True):
        if counted == out[k][0]:
            out[k] = again


EDGE_OVERLAP_UNSURE = 0.06
EDGE_OVERLAP_SURE = 0.5
"""A card read through an outline other than its located one (fitted, stepped over or
searched for) that overlaps another card's outline this much (IoU) or more is read no
surer than ``EDGE_OVERLAP_SURE`` (unsure on the readers' scale): it reaches over the
neighbour's row of edge symbols (0.11 of a side in), and the search, taking the surest
of many outlines, can find one that reads some of those surely (dev 61953 hard: a magic
card read 0.97 through an outline 26 % too large, four of the next card's earth symbols
for its own, the photo read whole and wrong). Readings 0.6 or surer through such
outlines, dev 61940+40 hard: from IoU 0.06, 6 wrong and 2 right (below 0.06: 4 wrong,
190 right); 61900+40 hard 1 right (0.10); 61600+40 and 61700+40 normal none (all under
0.05); photo -> state on 61500+40 normal, one right card left unsure (61522, a photo
read unsure for another card too)."""


def _overlaps(cards: list[int], outlines: list[npt.NDArray[np.float32]]) -> list[float]:
    """For each of ``cards``, its outline's largest overlap (IoU) with another card's
    ``outlines``."""
    if not cards:
        return []
    near = within_reach(np.array([outlines[k] for k in cards]),
                        *reach_circles(np.array(outlines)))
    return [max((quad_iou(outlines[k], outlines[j]) for j in near[n] if j != k),
                default=0.0) for n, k in enumerate(cards)]


def _photo_aspects(quads: npt.NDArray[np.float32], cards: Sequence[int]) -> dict[int, float]:
    """Each of ``cards``' long side over its short side as the photo shows it at ``quads``
    (the ``aspect`` its outline is fitted to): a square along the card's located axes,
    squeezed as the camera squeezes the cards round it (``segment.unsqueezed``). A
    photo taken at a slant shows a square card as a rectangle, and a fit kept square
    there takes a row of symbols for the card's edge: dev 61612 (normal), a small card
    44 by 58 px fitted 55 by 58 and searched from there to a sure and wrong count (read
    whole and wrong). Photo -> state against fits kept square: dev 61600+40 normal exact
    33 -> 34 (61612), 61700+40 normal and 61900+40 hard unchanged (hard: element cards
    counted sure 414 -> 423 of 595, sure and wrong 3 -> 2); the same time. On ranges
    not looked at while making it, against fits kept square: 61200+60 and 61400+60
    normal unchanged, 61300+60 and 61500+60 hard one scene each less exact (61303,
    61556: a card left unsure, not read wrong)."""
    square = piece_aspect("rox_card")
    out = {}
    for k, unsqueeze in zip(cards, unsqueezed(list(quads), list(range(len(quads))),
                                              at=cards), strict=True):
        quad = quads[k]
        right = unsqueeze @ (quad[1] - quad[0]).astype(np.float64)
        along = right / max(float(np.linalg.norm(right)), 1e-9)
        squeeze = np.linalg.inv(unsqueeze)
        sides = sorted((float(np.linalg.norm(squeeze @ along)),
                        float(np.linalg.norm(squeeze @ np.array([-along[1], along[0]])))))
        out[k] = square * sides[1] / max(sides[0], 1e-9)
    return out


def _read_stepped(model: Model, balanced: Image, out: list[tuple[dict[str, int], float]],
                  outlines: list[npt.NDArray[np.float32]], sure: set[int]
                  ) -> dict[int, list[npt.NDArray[np.float32]]]:
    """Each card still under ``EDGE_SEARCH_BELOW`` read through its ``sure`` neighbours'
    outlines stepped over (``EDGE_STEP_PITCH``), keeping (in ``out`` and ``outlines``) a
    surer reading; returns each card's stepped outlines, surest first."""
    steps = stepped_outlines(dict(enumerate(outlines)), sorted(sure),
                             [k for k, (_, sure) in enumerate(out) if sure < EDGE_SEARCH_BELOW],
                             pitch=EDGE_STEP_PITCH, overlap=EDGE_STEP_OVERLAP)
    stepped: dict[int, list[npt.NDArray[np.float32]]] = {}
    for (k, step), reading in sorted(zip(steps, _edge_readings(
            model, balanced, [step for _, step in steps]), strict=True), key=lambda t: -t[1][1]):
        stepped.setdefault(k, []).append(step)
        if reading[1] > out[k][1]:
            out[k], outlines[k] = reading, step
    return stepped


ELEMENT_EDGES_SURE = 0.7
"""A piece the locator judged a Rox scoring card by its shape is an element card when its
16 edge symbols read at least this sure through one of its outlines fitted square (the
best of a few readings, as ``EDGE_NUDGED_SURE``): a scoring card shows no edge symbols,
an element card partly covered too few. Of the located scoring cards on rendered seeds
61200-61239 and 61300-61339 (normal) and 61200-61239 (hard), no real one read above
0.05; of the element cards judged scoring, the whole ones whose outline was not a
fragment read 0.57-0.99 (4 of 5 at 0.7 or more), every covered one below 0.05."""


ELEMENT_CHECK_REACH = 1.5
"""Only a scoring card within this many element-card sides of an element card's centre
is checked (``element_cards_by_edges``): scoring cards lie apart from the rows, and
fitting an outline costs a few milliseconds a card."""


ELEMENT_STONE_SURE = 0.97
"""A piece the locator judged a Rox scoring card by its shape is an element card when,
through one of its outlines fitted square, the element card model reads its centre
stone as fire, water, earth or air this sure: a scoring card has no stone (the model
reads scoring cards as magic, the element without a coloured stone: 0.91-1.0 on dev
60300-60319 normal), and edge symbols smeared by blur may read unsure on a card whose
stone still shows (dev 60308: an earth card at a row's end read a scoring 6 at 0.95,
its stone earth at 1.00). Element cards taken for scoring cards, dev 60000-60059 and
60300-60359 normal, 60600-60659 hard: 9, 9, 36 -> 7, 6, 29 (the rest partly under a
hand, and flagged); scoring cards taken for element cards: 0, 0, 1 -> 0, 0, 1."""
STONE_ELEMENTS = ("fire", "water", "earth", "air")
"""The elements whose centre stone is coloured; magic's is not, and looks like a scoring
card to the model."""


def _element_stones(balanced: Image, tried: list[tuple[int, npt.NDArray[np.float32]]],
                    models_dir: Path) -> dict[int, tuple[float, npt.NDArray[np.float32]]]:
    """Of the pieces ``tried`` (piece, outline fitted square), those whose centre stone
    reads a coloured element surely (``ELEMENT_STONE_SURE``), each with its surest
    outline, as ``element_cards_by_edges`` keeps them."""
    if not tried or not available_model("rox_card", models_dir):
        return {}
    model = load_model("rox_card", models_dir)
    coloured = [model.labels.index(name) for name in STONE_ELEMENTS]
    found: dict[int, tuple[float, npt.NDArray[np.float32]]] = {}
    for (k, fit), reading in zip(tried, read_quads(model, balanced, [f for _, f in tried]),
                                 strict=True):
        sure = float(reading.probs[coloured].max())
        if sure >= ELEMENT_STONE_SURE and sure > found.get(k, (0.0, fit))[0]:
            found[k] = (sure, fit)
    return found


ELEMENT_CHECK_ROUNDS = 2
"""Rounds of ``element_cards_by_edges``: a card it made an element card brings the pieces
within ``ELEMENT_CHECK_REACH`` of it into reach of the next round (dev 61154: a row's
last two cards taken for scoring cards, the second out of reach of every element card
until the first was one)."""


def element_cards_by_edges(balanced: Image, detections: Detections, models_dir: Path
                            ) -> Detections:
    """``detections`` with the Rox scoring cards that are element cards made element cards
    (``_element_cards_once``), round after round while a round makes one
    (``ELEMENT_CHECK_ROUNDS``)."""
    for _ in range(ELEMENT_CHECK_ROUNDS):
        checked = _element_cards_once(balanced, detections, models_dir)
        if checked.kinds == detections.kinds:
            return checked
        detections = checked
    return detections


def _element_cards_once(balanced: Image, detections: Detections, models_dir: Path
                        ) -> Detections:
    """``detections`` with each Rox scoring card against an element card
    (``ELEMENT_CHECK_REACH``) whose edge symbols read sure (``ELEMENT_EDGES_SURE``)
    through its outline fitted square, or through a sure neighbour's outline stepped
    over (``EDGE_STEP_*``; searched from there, as ``read_rox_edges``), turned into an
    element card with that outline: the locator judges the two kinds by shape alone
    (44×68 mm beside 68×68), and a square card's outline located a little narrow or off
    looks like a scoring card's, and may read unsure fitted (dev 61833: two cards of a
    row beside a hand's fingers). A centre stone read surely as a coloured element
    (``ELEMENT_STONE_SURE``) makes it an element card too."""
    cards = [i for i, kind in enumerate(detections.kinds) if kind == "rox_card"]
    centres = detections.quads.mean(axis=1)
    sides = np.array([float(side_lengths(q).mean()) for q in detections.quads])
    scoring = [i for i, kind in enumerate(detections.kinds) if kind == "rox_scoring"
               and any(np.linalg.norm(centres[i] - centres[j]) <= ELEMENT_CHECK_REACH * sides[j]
                       for j in cards)]
    if not scoring:
        return detections
    model = load_model("rox_edge", models_dir)
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
    square = piece_aspect("rox_card")
    near = [j for j in cards if any(np.linalg.norm(centres[i] - centres[j])
                                    <= ELEMENT_CHECK_REACH * sides[j] for i in scoring)]
    tried = [(k, fit) for k in scoring + near for fit in fit_card_outline(
        smooth, detections.quads[k], aspect=square, count=EDGE_FITS)]
    tried += [(j, detections.quads[j]) for j in near]
    best: dict[int, tuple[float, npt.NDArray[np.float32]]] = {}
    for (k, fit), (_, sure) in zip(tried, _edge_readings(model, balanced,
                                                          [f for _, f in tried]), strict=True):
        if sure >= (EDGE_REFIT_BELOW if k in near else ELEMENT_EDGES_SURE) and \
                sure > best.get(k, (0.0, fit))[0]:
            best[k] = (sure, fit)
    best |= _element_stones(balanced, [(k, fit) for k, fit in tried
                                       if k in scoring and k not in best], models_dir)
    outlines = {k: best[k][1] if k in best else detections.quads[k] for k in cards + scoring}
    steps = stepped_outlines(outlines, [j for j in near if j in best],
                             [i for i in scoring if i not in best],
                             pitch=EDGE_STEP_PITCH, overlap=EDGE_STEP_OVERLAP)
    surest: dict[int, tuple[float, npt.NDArray[np.float32]]] = {}
    for (i, step), (_, sure) in zip(steps, _edge_readings(model, balanced,
                                                           [s for _, s in steps]), strict=True):
        if sure > surest.get(i, (-1.0, step))[0]:
            surest[i] = (sure, step)
    best |= {i: read for i, read in surest.items() if read[0] >= ELEMENT_EDGES_SURE}
    again = [i for i in surest if i not in best]
    for i, ((_, sure), found) in zip(again, _edge_search(
            model, balanced, [[surest[i][1]] for i in again]), strict=True):
        if sure >= ELEMENT_EDGES_SURE:
            best[i] = (sure, found)
    converted = [i for i in scoring if i in best]
    if not converted:
        return detections
    kinds = list(detections.kinds)
    quads = detections.quads.copy()
    for i in converted:
        kinds[i], quads[i] = "rox_card", best[i][1]
    return detections.with_fields(kinds=tuple(kinds), quads=quads)


def _edge_search(model: Model, balanced: Image, outlines: list[list[npt.NDArray[np.float32]]]
                 ) -> list[tuple[tuple[dict[str, int], float], npt.NDArray[np.float32]]]:
    """The surest reading of each card, and its outline, found coarse to fine
    (``EDGE_SEARCH_*``) from its ``outlines`` (the located one, the best fitted one and
    the best stepped one if any; or a newly stepped one): each scaled, turned
    or moved, then the surest of all those moved half as far each way; a card
    still under ``EDGE_NUDGED_SURE`` is searched so again from its surest outline
    (``EDGE_SEARCH_ROUNDS``)."""
    best = _edge_search_round(model, balanced, outlines)
    for _ in range(EDGE_SEARCH_ROUNDS - 1):
        again = [n for n, (reading, _) in enumerate(best)
                 if EDGE_AGAIN_FROM <= reading[1] < EDGE_NUDGED_SURE]
        for n, found in zip(again, _edge_search_round(
                model, balanced, [[best[n][1]] for n in again]), strict=True):
            if found[0][1] >= EDGE_AGAIN_SURE and found[0][1] > best[n][0][1]:
                best[n] = found
    return best


def _edge_search_round(model: Model, balanced: Image,
                       outlines: list[list[npt.NDArray[np.float32]]]
                       ) -> list[tuple[tuple[dict[str, int], float], npt.NDArray[np.float32]]]:
    """One coarse-to-fine round of ``_edge_search``: each card's surest reading and its
    outline."""
    if not outlines:
        return []
    shapes = [(scale, turn) for scale in EDGE_SEARCH_SCALES for turn in EDGE_SEARCH_TURNS
              if (scale, turn) != (1.0, 0.0)]
    shift = EDGE_SEARCH_SHIFT
    steps = [(dx, dy) for dx in (-shift, 0.0, shift) for dy in (-shift, 0.0, shift) if dx or dy]
    coarse = [(n, nudged(outline, scale, 0.0, 0.0, turn=turn))
              for n, card in enumerate(outlines) for outline in card for scale, turn in shapes]
    coarse += [(n, nudged(outline, 1.0, dx, dy))
               for n, card in enumerate(outlines) for outline in card for dx, dy in steps]
    steps = [(dx / 2, dy / 2) for dx, dy in steps]
    read = _edge_readings(model, balanced, [quad for _, quad in coarse])
    surest = [max((j for j, (m, _) in enumerate(coarse) if m == n), key=lambda j: read[j][1])
              for n in range(len(outlines))]
    moved = [nudged(coarse[j][1], 1.0, dx, dy) for j in surest for dx, dy in steps]
    fine = _edge_readings(model, balanced, moved)
    out = []
    for n, j in enumerate(surest):
        part = slice(n * len(steps), (n + 1) * len(steps))
        tried = [(read[j], coarse[j][1]), *zip(fine[part], moved[part], strict=True)]
        out.append(max(tried, key=lambda t: t[0][1]))
    return out


def _edge_readings(model: Model, balanced: Image, quads: list[npt.NDArray[np.float32]], *,
                   colour: bool = False, as_read: list[dict[str, int]] | None = None
                   ) -> list[tuple[dict[str, int], float]]:
    """(counts, sureness on the common scale) of the cards at ``quads``, in one call;
    with ``colour``, a symbol read magic that shows no colour counts sure, one read a
    coloured element as pale as magic is doubted, and one read so hesitantly, magic
    second, is a star read magic (``_colour_opinion``, ``STAR_*``). The counts as the
    model read them, before that, are put in ``as_read`` when given."""
    if not quads:
        return []
    side = ROX_EDGE_SIDE
    squares = [rectify(balanced, quad, size=(side, side)) for quad in quads]
    patches = np.concatenate([rox_edge_patches(square, model.size[0]) for square in squares])
    every = softmax(model.logits(patches)).reshape(len(quads), 16, -1)
    magic = model.labels.index("magic")
    out = []
    for square, probs in zip(squares, every, strict=True):
        picks = probs.argmax(axis=1)
        counts = {label: int((picks == k).sum()) for k, label in enumerate(model.labels)}
        if as_read is not None:
            as_read.append(counts)
        each = np.minimum(1.0, probs.max(axis=1) / model.sure)
        if colour and (each < 1.0).any():  # a second opinion from the symbols' colour
            white, doubted = _colour_opinion(square, probs, magic, model.size[0])
            each[white & (each < 1.0)] = 1.0
            each[doubted & (each < 1.0)] = RIVAL_DOUBTED
            stars = doubted & (probs.max(axis=1) < STAR_READ_BELOW) & (
                probs[:, magic] >= STAR_SECOND_FROM)
            picks = np.where(stars, magic, picks)
            each[stars] = 1.0
            counts = {label: int((picks == k).sum()) for k, label in enumerate(model.labels)}
        product = float(np.prod(each))
        out.append((counts, product ** (np.log(0.5) / np.log(EDGE_SURE_AT))))
    return out


MAGIC_COLOURLESS = 0.2
"""A symbol read magic (a white star with a thin dark outline, the one element without a
coloured ink) counts as read surely when its ink's chroma (``_edge_chroma``) is under
this share of the median over the card's symbols read surely as a coloured element
(``COLOURED_REFERENCE_SURE``, at least ``COLOURED_REFERENCE_COUNT`` of them): in a
glare spot the star's outline fades into the white card and the model reads a blank
patch magic at only 0.5-0.95 (air second), while the card's coloured symbols keep their
colour there (dev 61036: four element cards counted right at sureness 0.03-0.48, their
magic stars at 0.03-0.11 of the coloured symbols' chroma). On the located cards of dev
60200-60259, 61000-61039, 61300-61339 (normal) and 60800-60839 (hard), symbols read
magic: right ones at 0.16 of it (median), coloured ones read magic (in a shadow or a
glare spot, on a dark card, blurred) from 0.05, hence ``LIGHT_CARD`` and ``LIT_ALIKE``;
cards made sure by it at 0.2: 5, all right; at 0.25: 8, one wrong (hard 60824). Photo ->
state, dev 61000+40 normal: exact 31 -> 32 (61036); 61300+40, 61700+40 normal and
61900+40 hard unchanged; located element cards made sure 4, 1, 1 and 0, all right, none
made wrong."""
COLOURED_REFERENCE_SURE = 0.95
COLOURED_REFERENCE_COUNT = 3
"""The card's symbols read a coloured element at this probability or more, and at least
this many of them, give the chroma a coloured symbol shows on that card
(``MAGIC_COLOURLESS``); fewer, and no symbol read magic is made sure."""


def _colour_opinion(square: Image, probs: npt.NDArray[np.float64], magic: int, size: int
                    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Of the 16 edge symbols of the rectified card ``square`` (read ``probs``), lit as
    the rest of the card (``LIT_ALIKE``) on a light card (``LIGHT_CARD``): those read
    magic that show no more colour than ``MAGIC_COLOURLESS`` of the card's surely read
    coloured symbols, or than ``RIVAL_PALER`` of its surely read symbols of the element
    read second for it (white stars); and those read as a coloured element, magic
    second, that show under ``RIVAL_PALER`` of the colour of the card's other symbols
    read surely as that element (doubted). Neither when too few coloured
    symbols are read (``COLOURED_REFERENCE_*``)."""
    chroma, light = _edge_chroma(square, size)
    picks, sure = probs.argmax(axis=1), probs.max(axis=1)
    coloured = (picks != magic) & (sure >= COLOURED_REFERENCE_SURE)
    card = float(np.median(light))
    none = np.zeros(16, bool)
    if coloured.sum() < COLOURED_REFERENCE_COUNT or card < LIGHT_CARD:
        return none, none
    lit = np.abs(light - card) <= LIT_ALIKE
    rival = np.argsort(probs, axis=1)[:, -2]

    def paler_than(k: int, element: int) -> bool:
        alike = coloured & (picks == element)
        alike[k] = False
        return bool(alike.any()) and chroma[k] < RIVAL_PALER * float(np.median(chroma[alike]))

    white = (picks == magic) & (chroma < MAGIC_COLOURLESS * float(np.median(chroma[coloured])))
    for k in np.flatnonzero((picks == magic) & ~white & (rival != magic)
                            & (sure + probs[np.arange(16), rival] >= RIVAL_SHARE)):
        white[k] = paler_than(k, rival[k])
    doubted = none.copy()
    for k in np.flatnonzero((picks != magic) & (rival == magic)):
        doubted[k] = paler_than(k, picks[k])
    return white & lit, doubted & lit


RIVAL_PALER = 0.35
RIVAL_SHARE = 0.95
RIVAL_DOUBTED = 0.5
"""A symbol read magic whose second reading (with the first, at least ``RIVAL_SHARE`` of
its probability) is a coloured element counts sure (``_colour_opinion``) when its ink's
chroma is under ``RIVAL_PALER`` of the card's symbols read surely as that element: on a
cream card the white star looks pale blue once the card is balanced white, and the
model hesitates between magic and water, but the card's water drops are three to five
times as coloured (dev 61017 normal: three cards counted right at 0.3-0.45, their magic
stars at 0.21-0.28 of their water drops' chroma). The other way round, a symbol read
under ``Model.sure`` as a coloured element, magic second, that pale against the card's
other symbols of that element is doubted, counted read at even odds (``RIVAL_DOUBTED``):
dev 61017 water read for four magic stars of another card at 0.78-0.96, 0.25-0.29 of
its water drops' chroma; 61712, air for a magic star at 0.85, 0.26 of its air rings'.
Offline on the located cards of dev 60200-60259, 61000-61039, 61300-61339 (normal) and
60800-60839 (hard), through the outlines read: cards made sure by the white stars 5
(0.35) or 6 (0.5), all right; symbols doubted 18 (0.35), 15 of them magic stars, two
on cards read sure (0.93, not checked: ``_colour_checked``), one on a card counted
wrong. ``RIVAL_SHARE`` 0.95 rather than 0.97: dev 61712 normal, two cards' stars read
magic at 0.61 and 0.70, air 0.35 and 0.27 second, 0.2-0.3 of the air rings' chroma, the
photo read exactly with them; on the located cards of dev 61000, 61400, 61600, 61700,
61800 (+40), 60200+60 (normal) and 60800+40 (hard), stars made sure 57 more, none of
them a coloured symbol (0.9: 85, none either, but no photo more read exactly and a hard
card, 61903, read unsure and wrong). Photo -> state, 61700+40 normal: exact 32 -> 33
(61712); 61000, 61400, 61600, 61800 (+40 normal) and 61900+40 hard unchanged (32, 31,
35, 33 of 40; 14), none newly wrong; hard element cards made sure and right 1 (61924)."""


STAR_READ_BELOW = 0.9
STAR_SECOND_FROM = 0.08
"""A symbol doubted (``RIVAL_PALER``: read as a coloured element, magic second, as pale
as magic against the card's other symbols of that element) read under
``STAR_READ_BELOW``, magic at ``STAR_SECOND_FROM`` or more, is a white magic star and
read magic, surely: on the located cards of dev 61000, 61400, 61600, 61700 and 61800
(+40 each, normal) so doubted were 38 symbols, 35 stars (water, air, earth or fire read
for them at 0.43-0.88, magic 0.09-0.43 second; 61017, 61712: cream cards or glare) and
three coloured symbols, read 0.94-0.99, magic 0.00-0.04. Photo -> state on those five
ranges and 61900+40 hard: exact unchanged (32, 31, 35, 32, 33 of 40; 14), no reading
newly wrong; element cards unsure -> sure and right 7 (61017, 61608, 61712 x5), unsure
and wrong -> unsure and right 2 (61712, hard 61919), none newly sure and wrong."""


LIGHT_CARD = 128
"""A card whose symbols' surroundings are this light or darker (CIELAB L on 0-255, the
median over its 16 patches' rims) is a dark card, whose magic star is white on dark and
plain to the model: a colourless patch there is a symbol washed out (dev 60245, a dark
card's fire symbols blurred away and read magic; without it, dev 61932 hard had a dark
card's water symbol read magic counted sure, the photo read whole and wrong)."""
LIT_ALIKE = 15
"""A symbol's surroundings (its patch's rim) must be this close in lightness (CIELAB L
on 0-255) to the card's (the median over its 16 patches) for its colour to be judged
against the card's coloured symbols: in a shadow, under a hand or in a glare spot on
part of the card, a coloured symbol fades too (dev 61709 normal: a water and an earth
symbol by a hand, read magic, counted sure without it; 61326: air symbols 32-45
darker; hard 60804: a water symbol in a glare spot 104 lighter). Right magic symbols
read under ``Model.sure`` lay within 6 of their card's (5th percentile), those of dev
61036, under a glare spot covering whole cards, within 1."""


EDGE_INK_PIXELS = 5
"""The most coloured pixels of a symbol's patch core that give its ink's chroma
(``_edge_chroma``): a symbol 6 px across in the photo leaves a few pixels of full ink
once rectified."""


def _edge_chroma(square: Image, size: int) -> tuple[npt.NDArray[np.float32],
                                                    npt.NDArray[np.float32]]:
    """Each edge symbol's ink chroma on the rectified card ``square`` (the mean CIELAB
    a*b* distance, from the median colour of its patch's rim, the card round the
    symbol, of the ``EDGE_INK_PIXELS`` farthest pixels in the patch's core, within 0.4
    of its side from the middle), and the lightness of its rim."""
    lab = rox_edge_patches(np.asarray(cv2.cvtColor(square, cv2.COLOR_BGR2LAB), np.uint8),
                           size).astype(np.float32)
    rim, core = _patch_rim_core(size)
    card = np.median(lab[:, rim], axis=1)  # (16, 3)
    ink = np.linalg.norm(lab[:, core, 1:] - card[:, None, 1:], axis=2)
    return (np.asarray(np.sort(ink, axis=1)[:, -EDGE_INK_PIXELS:].mean(axis=1), np.float32),
            np.asarray(card[:, 0], np.float32))


@lru_cache(maxsize=4)
def _patch_rim_core(size: int) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """A ``size`` patch's rim (the outer pixel and a half) and core (within 0.4 of its
    side from the middle), as masks."""
    ys, xs = np.mgrid[0:size, 0:size] - (size - 1) / 2
    radius = np.hypot(xs, ys)
    return radius > size / 2 - 1.5, radius < size * 0.4
