"""Card outlines the locator got wrong, mended around the first reading: two or three
touching Nox or Qwixx cards in one outline cut apart (``split_card_pairs``), a square-
looking card read along its row (``across_neighbour``), Cat in the Box cards' outlines
running onto the board trimmed to a card's size (``trimmed_to_card_size``), played
Qwixx cards checked at a card's size in a score sheet's plane
(``cards_checked_on_sheets``), Rox scoring cards outlined square taken back from the
element cards (``scoring_cards_by_number``), and score-sheet boxes, fingertips or
things far from the board taken for cards dropped."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.synth.pieces import PIECE_MM
from companion.vision.align import fit_card_outline
from companion.vision.detections import (
    JOINED,
    MIN_CONFIDENCE,
    Detections,
    cut_across,
    cut_along_first_edge,
    quad_axes,
    quad_iou,
    rectify,
    rotate_quad,
    side_lengths,
)
from companion.vision.reading import (
    EDGE_FITS,
    PIECE_ASPECT,
    PROBABILITIES,
    UNSURE,
    Image,
    Model,
    Reading,
    available_model,
    down_vector,
    load_model,
    nudged,
    portrait_first,
    read_quads,
    surer_readings,
    with_readings,
)

PAIR_KINDS = ("nox_card", "catbox_card")
"""Kinds that lie side by side in rows (a Nox kitty, a Cat in the Box trick), where a
square-looking card is read along its row (``across_neighbour``). Cat in the Box: a
trick seen from a tilted camera, its cards outlined on their side, read 2 as 8 at 0.95
(dev 61932 hard, the reading whole and wrong); photo -> state exact 61900+60 hard
42 -> 45 (61927, 61931 unsure, 61958 whole and wrong), normal 61800+60 58 -> 58 and 61000+100
93 -> 93, none newly wrong."""


SPLIT_KINDS = ("nox_card", "qwixx_card")
"""Kinds whose touching cards the locator now and then gives one outline (a Nox kitty,
a Qwixx play of one colour): ``split_card_pairs``."""


PAIR_AREA = 1.3
"""An outline this many times the area of its neighbours' (the median of the
``PAIR_NEIGHBOURS`` nearest pieces of its kind) may be two or more cards side by side:
two if squarer than one card, three if its area holds three and its thirds look more
like a card than it does (``_joined_count``). 1.3 rather than 1.4: two cards lying
apart from larger, nearer cards measured 1.35 (dev 60029: a 14 and a 12 read as one 2
at 0.84); the halves' reading (``PAIR_SURE``) still decides."""


PAIR_TWICE_AREA = 1.7
"""An outline this many times its neighbours' area is two cards when even one of its
halves reads sure (``PAIR_SURE``), whatever its shape: of two cards of a Qwixx play side
by side, one turned a little, the straight cut leaves the turned one's half unsure (dev
60027: a y7 and a y8 read as one y12 at 0.88; halves y7 at 1.00 and y6 at 0.46). The
unsure half is read again through outlines fitted to the photo, or reported unsure,
like any card."""


JOINED_AREA = 2.2
JOINED_CONFIDENCE = 0.45
"""An outline ``split_card_pairs`` leaves whole though its area is ``JOINED_AREA`` times
its neighbours' or more is read no surer than ``JOINED_CONFIDENCE`` (under the readers'
bar, ``MIN_CONFIDENCE``): it holds two or three cards whose halves read unsure, and its
reading names one number for them, often surely (dev 61014: b9 and b8 read b2 at 0.93;
61124: r8, r9, r11 read g2 at 0.90; 61149: y5 and y6 read y12 at 0.84, ratios 3.07,
4.07, 2.37). Unsplit outlines of one card, Qwixx dev 60000-60059 and 61000-61099
normal: ratio at most 1.84; hard 60500-60539: 2.77 and 2.21, both read wrong. Cutting
such outlines again with each part fitted to the photo read parts surely wrong (r12
at 0.97 for an r8), so they are reported, not guessed. ``data[JOINED]`` marks them.
Qwixx only: a Nox card outlined with its stack's peeking cards measures up to 4.5
times its neighbours (dev 60500 hard) and still reads right surely."""
JOINED_KINDS = ("qwixx_card",)


SQUARE_CUT = 1.2
"""An outline of two cards whose sides differ by less than this factor is cut both
ways, across each pair of sides, and the first cut whose halves read as two cards is
taken: two cards side by side along their long sides make a near square, and a cut
across the wrong pair of sides leaves each half across both cards (dev 61274 normal: a
15 and a 5, 53 by 54 px, read 15 at 0.88 whole, halves 0.30 and 0.51). Photo -> state:
Nox 61200+100 normal exact 89 -> 90 (61274, read whole and wrong before), 61000+100
normal and 61600+60 hard, Qwixx 61000+100 normal the same scenes; CPU the same."""


PAIR_NEIGHBOURS = 4
SQUARE_LOOK = 1.35
"""A card whose outline is less than this many times as long as wide (a camera's
tilt squeezes it) shows no axis of its own: which of its sides is its top is judged
from its neighbour (``across_neighbour``)."""


FORESHORTENED_SURE = 0.95
"""A card of a row (``PAIR_KINDS``) not square-looking whose nearest card still lies
beyond its top or bottom edge is read a quarter turn round as well, and taken so when
that reads at least this sure and the outline as given did not: a camera tilted
steeply squeezes a kitty's cards near the photo's edge to look landscape, and read
along their longer side they read wrong fairly surely (dev 61958 hard, Nox: a 10 and
an 11 read 8 and 4 at 0.81). Read both ways sure of different numbers, the card is left
unsure (the two readings' mean). Photo -> state, Nox hard 61900+60 exact 33 -> 35,
60700+60 34 -> 35 (verdicts right 3 more), 60500+60 and 61600+60 unchanged; normal
61800+60 and 61000+100 unchanged; Cat in the Box hard 60500+60 one more exact (a
whole-and-wrong reading), 61900+60 and normal 61800+60 unchanged. One scene newly
whole and wrong: Nox 61924 hard, whose row read sideways had hidden that the locator
missed one of its cards (a 3)."""


NEIGHBOUR_REACH = 1.6
"""The neighbour whose place says which way a card lies is its nearest card of its kind
within this many card sizes (the square root of its area); it must lie across the card
(their axes more than 60° apart, ``ACROSS_COS``), so that a quarter turn lines them up.
Located Nox cards, seeds 61300-61399 (normal): 9 of 1180 read on their side -> 2 (the
card's and its nearest neighbour's axes were 76°-89° apart; single cards are read as
before). From 1.4 to 1.6: a card squeezed by a steep camera is small for its row's
pitch (dev 61924 hard: a 3 outlined 29x40 px, its neighbour 49 px away, read 8 at 0.85
on its side; 60736: a 5 so, given to the next kitty). Photo -> state, Nox hard 61900,
60700 + 60 exact 35 -> 36, 37 -> 38 (both whole and wrong before), 60500 + 60 and normal
61000, 61100, 61300 + 60 unchanged; two scenes wrong either way now with a wrong
verdict too (60720, 60731 hidden); Cat in the Box hard 61900, 60500 and normal 61700
+ 60 unchanged."""


ACROSS_COS = 0.5
PAIR_SURE = 0.9
"""Such an outline is two cards when both its halves read at least this sure, the same
way up (three cards when at least two of its thirds do: the cut through a wider outline
is rougher, and an unsure part is read again through other outlines like any card).
Located Nox cards on seeds 61000-61119 (normal): of 39 candidates, the 5 that were two
cards read 0.97-1.0 in both halves; of the 34 single cards (most a stack whose
lower cards widen the outline), no half pair read better than 0.86 and 0.77."""


CARD_CHECK_BELOW = 0.97
"""A face-up Qwixx card read at least ``UNSURE`` but less surely than this, whose outline
is larger than a card (``CARD_CHECK_AREA``), is read again (``cards_checked_on_sheets``)
through a card-sized outline in each of its corners (a Qwixx card's size in the plane of
the nearest score sheet, whose box quads the sheet reader placed), each fitted to the
photo's edges; the mean of those four readings and the first decides. The located
outline of a played card is often turned or too large and takes in part of the next
card, read as its number fairly surely (dev scene 61302: y3 as y4 at 0.91; 61503: J3 as
J4 at 0.94). Of the 85 played cards read 0.80-0.97 over normal and hard scenes
61300-61339 and 61500-61539, read right at the readers' bar (0.5) 75 -> 80, wrong 10 ->
2, unknown 0 -> 3 (Tesseract not asked)."""


CARD_CHECK_AREA = (1.05, 2.5)
"""Only a card whose outline covers this many times a card's area in the sheet's plane is
checked (``CARD_CHECK_BELOW``): of the 85 played cards read 0.80-0.97 (normal and hard
scenes 61300-61339, 61500-61539) the ten read wrong all had outlines 1.07-1.67 cards
large; one right g5 at 1.04 was read again as g3, and an outline 12.9 cards large is
measured in another sheet's plane."""


CARD_CHECK_SMALL = 0.85
"""A card checked so (``CARD_CHECK_BELOW``) whose outline covers less than this share of
a card in the sheet's plane is read again through card-sized outlines round it
(``_card_sized_round``), the card's long side lying as its nearest card's
(``_turned_to_neighbours``): the locator outlines a played card's white panel alone, or
its part away from a touching card, and the number on the panel reads as another
(dev 61603: a g7 outlined on its panel, 0.71 cards, read g11 at 0.92, the reading
whole and wrong; 61103 and 61243: an r10 and an r11 read r12 at 0.94 and 0.92,
0.78 and 0.76 cards). Face-up cards on dev 61000-61399 normal: right ones measure
down to 0.49 (most of those read 0.98 or surer and are not checked), the three read
wrong at 0.9 or surer 0.69-0.78. Round an outline about square the card's way is its
neighbours' (read the other way round, a y8 outlined 0.75 cards read y10 at 0.999,
dev 61079)."""
CARD_CHECK_APART = 0.3
"""Nor is it when a card-sized outline round it, fitted, covers another card's outline at
this IoU or more: it is part of that card (dev 61706: a y9's yellow end outlined apart,
0.34 cards, read y11 at 0.86; outlines round it cover the y9's at 0.54 and 0.57, and
the reader lists it as a card's part, ``readers.qwixx.SMALL_CARD``). Round the other
small outlines looked at (dev 61079, 61081, 61103, 61222, 61231, 61243, 61289, 61322,
61361, 61366, 61603, normal; cards apart or touching): at most 0.03."""
CARD_SIZED = (0.85, 1.2)
"""A neighbour outlined at this many cards' area (in the sheet's plane) shows which way
the cards lie (``_turned_to_neighbours``): most face-up cards on dev 61000-61399 normal
measure 0.8-1.2 cards."""


def cards_checked_on_sheets(read: Detections, balanced: Image, markers: Sequence[Any],
                             models_dir: Path) -> Detections:
    """Face-up Qwixx cards read less than very surely (``CARD_CHECK_BELOW``) read again
    through outlines fitted at a card's size in the nearest sheet's plane: where the mean
    of the readings names another face (a 6 and a 9 are one), the card takes the mean's
    reading and the way up most of those readings saw it. A card read unsure (``UNSURE``)
    takes it only when every fitted outline names that face (dev 61314: a dark g6
    outlined too long read g5 at 0.23, its corner outlines all g6 at 0.60-0.85; 61001: a
    b6 read b5 at 0.46, its corners b5 or b8, left unsure). A card outlined smaller than a
    card (``CARD_CHECK_SMALL``) is read so through card-sized outlines round it."""
    kinds, quads, labels = read.kinds, read.quads, read.labels
    probabilities = read.data.get(PROBABILITIES, (None,) * len(read))
    check = [i for i in read if kinds[i] == "qwixx_card"
             and probabilities[i] is not None and not str(labels[i]).startswith("back")
             and float(probabilities[i].max()) < CARD_CHECK_BELOW]
    if not check or not available_model("qwixx_card", models_dir):
        return read
    planes = sheet_planes(read, markers)
    if not planes:
        return read
    model = load_model("qwixx_card", models_dir)
    smooth = np.asarray(cv2.GaussianBlur(balanced, (3, 3), 0), np.uint8)
    tries: list[tuple[int, list[npt.NDArray[np.float32]]]] = []
    for i in check:
        plane = nearest_plane(planes, quads[i])
        cards, corners = _card_sized_corners(quads[i], plane, "qwixx_card")
        if cards < CARD_CHECK_SMALL:
            corners = _card_sized_round(quads[i], plane, "qwixx_card",
                                        turned=_turned_to_neighbours(read, i, plane))
        elif not CARD_CHECK_AREA[0] <= cards <= CARD_CHECK_AREA[1]:
            continue
        outlines: list[npt.NDArray[np.float32]] = []
        for corner in corners:
            outlines += fit_card_outline(smooth, portrait_first(corner, model.size),
                                         aspect=PIECE_ASPECT["qwixx_card"])[:1]
        if cards < CARD_CHECK_SMALL and max(
                (quad_iou(o, quads[k]) for o in outlines for k in read
                 if k != i and kinds[k] == "qwixx_card"), default=0.0) >= CARD_CHECK_APART:
            continue  # part of a card another outline holds (readers.qwixx.SMALL_CARD)
        tries.append((i, [portrait_first(o, model.size) for o in outlines]))
    readings = iter(read_quads(model, balanced, [o for _, os in tries for o in os]))
    changes: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]] = {}
    for i, outlines in tries:
        again = [(o, next(readings)) for o in outlines]
        mean = np.mean([probabilities[i], *(r.probs for _, r in again)], axis=0)
        named = model.labels[int(np.argmax(mean))]
        if float(probabilities[i].max()) < UNSURE and not (again and all(
                same_face(model.labels[int(np.argmax(r.probs))], named) for _, r in again)):
            continue  # an unsure card takes the readings' face only if all name it
        if not same_face(named, str(labels[i])):
            # the outline stays, the way up the readings': a 6 or 9 is named by it
            down = down_vector(quads[i], False)
            downs = [float(down_vector(o, r.turned) @ down) for o, r in again]
            turned = sum(d < 0 for d in downs) > len(downs) / 2
            changes[i] = (rotate_quad(quads[i], 2) if turned else quads[i], mean)
    return with_readings(read, model, changes)


def sheet_planes(read: Detections, markers: Sequence[Any], *, sure: bool = False
                 ) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]]:
    """Each read Qwixx sheet's middle and the homography from millimetres in its plane
    (the table's) to the photo (``sheet.sheet_plane``): to measure outlines near it.
    ``sure``: only sheets read surely as a whole (``sheet.SHEET_SURE``), whose boxes lie
    where the sheet does (an unreadable sheet's fit can be far off: outlines of a card
    measured 13 to 6000 cards in such planes, dev 61348)."""
    from companion.vision.sheet import printed_sheet, read_surely, sheet_plane

    boxes = read.data.get("boxes", (None,) * len(read))
    return [(read.quads[s].mean(axis=0), h) for s in read if read.kinds[s] == "qwixx_sheet"
            and boxes[s] and (not sure or read_surely(boxes[s]))
            for h in [sheet_plane(boxes[s], printed=printed_sheet(markers, read.quads[s]))]
            if h is not None]


def nearest_plane(planes: Sequence[tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]],
                  quad: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """The homography of the ``sheet_planes`` entry whose sheet lies nearest ``quad``."""
    centre = quad.mean(axis=0)
    return min(planes, key=lambda p: float(np.linalg.norm(p[0] - centre)))[1]


SHEET_AS_CARD = 2.5
"""A Qwixx card outline covering this many cards or more on the table (in the nearest
read sheet's plane; a sheet covers 148×105 / 91×59 = 2.9 cards) is read as a score sheet
(``sheets_outlined_as_cards``) when its boxes read surely as a whole
(``sheet.SHEET_SURE``): the locator takes a small, far sheet for a card now and then (hard
dev scene 61628: a sheet read as a g9 at 0.89 and played, 3.05 cards, its boxes read at a
median 0.99)."""
CARD_AT_MOST = 2.2
"""A face-up Qwixx card outline covering this many cards or more on the table is read no
surer than ``JOINED_CONFIDENCE`` and marked ``JOINED``: it is not one card's outline but
two or three cards touching, or part of a sheet (dev 61147: a b4 and its neighbour read
b12 at 0.88, 2.41 cards; 61348: part of a sheet read b12 at 0.88, 2.78 cards). Face-up
cards read right on dev 61000-61349 normal and 61600-61639 hard measured up to 1.91 (a
sheet's plane a little off); a sheet's half read b5 at 0.90, 2.06 cards (61211), is left."""


def sheets_outlined_as_cards(read: Detections, balanced: Image, markers: Sequence[Any]
                             ) -> tuple[Detections, set[int]]:
    """``read`` with each Qwixx card outline the size of a sheet (``SHEET_AS_CARD``) whose
    boxes read surely taken as a score sheet (kind, boxes, no label), and each other
    face-up card outline of ``CARD_AT_MOST`` cards or more marked ``JOINED`` and capped
    at ``JOINED_CONFIDENCE``; and those outlines (for classify to keep them doubted)."""
    from companion.vision.sheet import read_sheet, read_surely

    cards = [i for i in read if read.kinds[i] == "qwixx_card"]
    planes = sheet_planes(read, markers, sure=True) if cards else []
    if not planes:
        return read, set()
    n = len(read)
    kinds, labels = list(read.kinds), list(read.labels)
    confidences = read.confidences.copy()
    boxes = list(read.data.get("boxes", (None,) * n))
    joined = list(read.data.get(JOINED, (False,) * n))
    doubted: set[int] = set()
    changed = False
    for i in cards:
        size, _ = _card_sized_corners(read.quads[i], nearest_plane(planes, read.quads[i]),
                                      "qwixx_card")
        if size >= SHEET_AS_CARD:
            sheet = read_sheet(balanced, read.quads[i], markers=markers, balanced=True)
            if read_surely(sheet):
                kinds[i], labels[i], boxes[i] = "qwixx_sheet", None, sheet
                changed = True
                continue
        if size >= CARD_AT_MOST and not str(labels[i]).startswith("back"):
            joined[i] = True
            confidences[i] = min(float(confidences[i]), JOINED_CONFIDENCE)
            doubted.add(i)
            changed = True
    if not changed:
        return read, doubted
    return read.with_fields(kinds=tuple(kinds), labels=tuple(labels), confidences=confidences,
                            data={**read.data, "boxes": tuple(boxes), JOINED: tuple(joined)}
                            ), doubted


def same_face(a: str, b: str) -> bool:
    """Whether two card labels name the same face up to a half turn (a 6 read upside
    down is a 9; which way a played card lies is settled against its player's sheet)."""
    turned = {"6": "9", "9": "6"}
    return a == b or (a[:-1] == b[:-1] and turned.get(a[-1:]) == b[-1:]
                      and a[-2:-1] != "1" and b[-2:-1] != "1")


def without_printed_boxes(read: Detections) -> Detections:
    """Without the cards whose middle lies among a score sheet's boxes as the sheet was
    read (its boxes placed by the fit to the printed layout): a box the locator took for
    a card where its outline of the sheet fell short (a blue box read as b7 at 0.88)."""
    hulls = [cv2.convexHull(np.concatenate([np.asarray(b["quad"], np.float32)
                                            for b in boxes if b.get("quad") is not None]))
             for boxes in read.data.get("boxes", ()) if boxes
             and any(b.get("quad") is not None for b in boxes)]
    if not hulls:
        return read
    inside = {i for i in read if read.kinds[i] in PIECE_ASPECT and any(
        cv2.pointPolygonTest(hull, tuple(float(v) for v in read.quads[i].mean(axis=0)),
                             False) > 0 for hull in hulls)}
    return read.select([i for i in read if i not in inside]) if inside else read


def _joined_count(sides: npt.NDArray[np.float64], area_ratio: float, aspect: float) -> int:
    """How many cards of ``aspect`` an outline of ``sides`` (two lengths) and
    ``area_ratio`` times its neighbours' area seems to hold side by side: 1 below
    ``PAIR_AREA``; 2 if squarer than a card; 3 if its area holds three (at least 2.5)
    and its thirds, cut across its long side, look more like a card than it does; else
    2 if it holds two (``PAIR_TWICE_AREA``)."""
    if area_ratio < PAIR_AREA:
        return 1
    long, short = float(sides.max()), max(float(sides.min()), 1e-6)
    if long < aspect * short:
        return 2
    third = long / 3
    third_misfit = abs(max(third, short) / max(min(third, short), 1e-6) - aspect)
    if area_ratio >= 2.5 and third_misfit < long / short - aspect:
        return 3
    return 2 if area_ratio >= PAIR_TWICE_AREA else 1


def split_card_pairs(balanced: Image, detections: Detections, models_dir: Path
                      ) -> Detections:
    """Outlines that are two or three cards side by side, each replaced by its parts (see
    ``PAIR_AREA``, ``PAIR_SURE``): the locator gives touching cards one outline now and
    then, read as one number (often surely) and lost as a stack or a play's card."""
    split: dict[int, list[npt.NDArray[np.float32]]] = {}
    joined: set[int] = set()  # left whole though far larger than a card (JOINED_AREA)
    for kind in SPLIT_KINDS:
        rows = [i for i in detections if detections.kinds[i] == kind]
        if len(rows) < 3 or not available_model(kind, models_dir):
            continue
        model = load_model(kind, models_dir)
        q = detections.quads[rows]
        sides = np.stack([np.linalg.norm(q[:, 1] - q[:, 0], axis=1),
                          np.linalg.norm(q[:, 2] - q[:, 1], axis=1)], axis=1)
        areas, centres = sides.prod(axis=1), q.mean(axis=1)
        candidates = []
        for k, i in enumerate(rows):
            others = np.linalg.norm(centres - centres[k], axis=1)
            others[k] = np.inf
            usual = float(np.median(areas[np.argsort(others)[:PAIR_NEIGHBOURS]]))
            count = _joined_count(sides[k], areas[k] / max(usual, 1e-6), PIECE_ASPECT[kind])
            if count > 1:
                twice = count == 2 and areas[k] >= PAIR_TWICE_AREA * usual
                cuts = [cut_across(detections.quads[i], count)]
                if count == 2 and sides[k].max() < SQUARE_CUT * sides[k].min():
                    q_i = detections.quads[i]  # across the other sides: q0 -> q1 the shorter
                    cuts.append(cut_along_first_edge(
                        q_i if sides[k][0] < sides[k][1] else rotate_quad(q_i, 1), count))
                candidates += [(i, [portrait_first(part, model.size) for part in cut],
                                1 if twice else max(2, count - 1)) for cut in cuts]
                if areas[k] >= JOINED_AREA * usual:
                    joined.add(i)
        whole_first = kind in WHOLE_SURE
        readings = iter(read_quads(model, balanced, [
            p for i, ps, _ in candidates
            for p in ([portrait_first(detections.quads[i], model.size)] if whole_first else [])
            + ps]))
        unsplit = []
        for i, parts, needed in candidates:
            whole = next(readings) if whole_first else None
            read = [next(readings) for _ in parts]
            if i in split or any(j == i for j, _ in unsplit):
                continue  # a squarish outline's other cut: its first was taken
            if needed < 2 and whole is not None and whole.probs.max() >= WHOLE_SURE[kind]:
                needed = 2  # one card read surely whole: one sure half is no second card
            if _parts_sure(parts, read, needed):
                split[i] = parts
            elif kind in FITTED_HALVES_KINDS and len(parts) == 2 and i in joined:
                unsplit.append((i, parts))
        split.update(_fitted_halves(balanced, unsplit, model, kind))
    marked = detections.with_fields(data={**detections.data, JOINED: tuple(
        i in joined and i not in split and detections.kinds[i] in JOINED_KINDS
        for i in detections)})
    if not split:
        return marked
    order = [i for i in detections for _ in split.get(i, [None])]
    quads = np.stack([q for i in detections for q in split.get(i, [detections.quads[i]])])
    return marked.select(order).with_fields(quads=quads)


def _parts_sure(parts: Sequence[npt.NDArray[np.float32]], read: Sequence[Any], needed: int
                ) -> bool:
    """At least ``needed`` of the ``parts`` read sure (``PAIR_SURE``), all facing one way."""
    downs = [down_vector(p, r.turned) for p, r in zip(parts, read, strict=True)
             if r.probs.max() >= PAIR_SURE]
    return len(downs) >= needed and all(downs[0] @ d > 0 for d in downs[1:])


WHOLE_SURE = {"nox_card": 0.99, "qwixx_card": 0.95}
"""Kinds whose outline of ``PAIR_TWICE_AREA`` times its neighbours' area, read as one
card at least this sure, is cut in two only when both halves read sure: a
two-digit card's half reads surely as a digit of its own (dev 61520: a 13 read 1.00
whole, its halves 6 at 0.91 and 0.57, cut into two cards; 61083: a 10, halves 6 at 0.98
and 8 at 0.60). Split candidates on located Nox cards, dev 61000-61149 normal and
61600-61679 hard (181): of the single cards, 5 had one half sure, and their whole read
1.00; the two pairs read both halves at 1.00 (a 15 and an 11 read 9 at 0.99 whole).
A Qwixx card seen large has a coloured band at each end, and a half of it reads surely
as a joker (dev 60346: a y7 read 0.99 whole, halves J4 at 0.99 and 0.88; 60313: a y2 at
0.98, J4 at 0.97 and 0.89; 60930: a b4 at 0.99, b7 at 0.90 and b4 at 0.63; 61910 hard: a
J3 at 0.96, b4 at 0.90). Qwixx candidates, dev 60000, 60600, 60900, 61000, 61200, 61400,
61600, 61800 (+60, normal), 60300+60 normal, 60500 and 61900 (+40, hard): single cards
cut on one sure half read 0.96-0.99 whole (and 0.52, 0.81), two or three cards at most
0.80 (0.32-0.80)."""


FITTED_HALVES_KINDS = ("nox_card",)
"""Kinds whose outline of two cards at ``JOINED_AREA`` times its neighbours' area or
more, its straight halves unsure, is cut again with each half read through its outlines
fitted to the photo (``_fitted_halves``): two cards of a kitty lying at different angles
leave each straight half across both (dev 61129: an 8 and a 2 read as one 13 at 0.99;
halves 0.87 and 0.76, fitted 1.00). From ``PAIR_TWICE_AREA`` (1.7) a single 15 at 1.73
was cut into a sure 1 and another card (dev 60030). Not Qwixx: its staggered plays'
fitted halves read surely wrong (dev 61124: r12 at 0.97 for an r8)."""


FITTED_HALF_SURE = 0.98
"""``_fitted_halves`` cuts an outline when one fitted half reads this sure and the other
at least ``MIN_CONFIDENCE``: a single 7 outlined 2.3 times its neighbours (dev 61221)
had a fitted half read 14 at 0.90, its other half 0.35; the 8 of 61129 read 1.00, the 2
beside it 0.76."""


def _fitted_halves(balanced: Image, unsplit: Sequence[tuple[int, list[npt.NDArray[np.float32]]]],
                   model: Model, kind: str) -> dict[int, list[npt.NDArray[np.float32]]]:
    """The outlines of ``unsplit`` (index, its two straight halves) whose halves, each
    read through itself and its ``EDGE_FITS`` fitted outlines (the surest kept), read
    as two cards (``FITTED_HALF_SURE``), facing one way: index -> the halves' outlines."""
    if not unsplit:
        return {}
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
    tries = [(i, k, outline) for i, parts in unsplit for k, part in enumerate(parts)
             for outline in [part, *fit_card_outline(smooth, part, aspect=PIECE_ASPECT[kind],
                                                     count=EDGE_FITS)]]
    best: dict[tuple[int, int], tuple[npt.NDArray[np.float32], Any]] = {}
    for (i, k, outline), r in zip(tries, read_quads(model, balanced, [t[2] for t in tries]),
                                  strict=True):
        if (i, k) not in best or r.probs.max() > best[(i, k)][1].probs.max():
            best[(i, k)] = (outline, r)
    out = {}
    for i, _ in unsplit:
        halves = [best[(i, 0)], best[(i, 1)]]
        sureness = sorted(float(r.probs.max()) for _, r in halves)
        if (sureness[1] >= FITTED_HALF_SURE and sureness[0] >= MIN_CONFIDENCE
                and _parts_sure([o for o, _ in halves], [r for _, r in halves], 1)):
            out[i] = [o for o, _ in halves]
    return out


TRIM_AREA = 1.3
TRIM_SURE = 0.95
"""A Cat in the Box card whose outline covers at least ``TRIM_AREA`` times a card's area
on the table (measured in the research board's plane, whose size is known) is read
again through card-sized outlines in each of its corners, each fitted to the card's
edges in the photo (``trimmed_to_card_size``); the surest is kept if it reads at least
``TRIM_SURE`` and surer than the whole outline. A card lying against the board gets an
outline running onto the board, read as another number (dev scene 61317: a 1 as a 5
at 0.84; its corner outline, fitted, covers the card at IoU 0.98 and reads 1 at 0.99)."""


def _card_sized_corners(quad: npt.NDArray[np.float32], to_image: npt.NDArray[np.float64],
                        kind: str) -> tuple[float, list[npt.NDArray[np.float32]]]:
    """``quad`` (image pixels) measured on the table, whose millimetres ``to_image`` maps
    to the photo: how many cards of ``kind`` (``PIECE_MM``) its area covers, and the
    card-sized outlines in each of its four corners, along its own sides (image pixels,
    unfitted). A card's outline that runs onto a neighbour or the board is larger than a
    card; the card lies in one of its corners."""
    card_long, card_short = max(PIECE_MM[kind]), min(PIECE_MM[kind])
    q = on_table(quad, to_image)
    along, down = side_directions(q)
    width, height = float(np.linalg.norm(along)), float(np.linalg.norm(down))
    wide = width >= height
    a = along / max(width, 1e-9) * min(card_long if wide else card_short, width)
    b = down / max(height, 1e-9) * min(card_short if wide else card_long, height)
    corners = [cv2.perspectiveTransform(np.array([[p, p + a, p + a + b, p + b]]),
                                        to_image)[0].astype(np.float32)
               for p in (q[0], q[1] - a, q[2] - a - b, q[3] - b)]
    return width * height / (card_long * card_short), corners


def on_table(quad: npt.NDArray[np.float32], to_image: npt.NDArray[np.float64]
              ) -> npt.NDArray[np.float64]:
    """``quad`` (image pixels) in millimetres on the table, whose millimetres
    ``to_image`` maps to the photo, (4, 2)."""
    return np.asarray(cv2.perspectiveTransform(quad.reshape(1, 4, 2).astype(np.float64),
                                               np.linalg.inv(to_image))[0])


def side_directions(q: npt.NDArray[np.float64]
                     ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """A quad's two side directions: the mean of its top and bottom sides, and of its
    left and right."""
    return (q[1] - q[0] + q[2] - q[3]) / 2, (q[3] - q[0] + q[2] - q[1]) / 2


def _table_axes(quad: npt.NDArray[np.float32], to_image: npt.NDArray[np.float64]
                ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``quad``'s two side directions on the table (millimetres, ``to_image`` maps them
    to the photo)."""
    return side_directions(on_table(quad, to_image))


def _turned_to_neighbours(read: Detections, i: int, to_image: npt.NDArray[np.float64]
                          ) -> bool:
    """Whether Qwixx card ``i``'s long side runs across its outline's longer one: when the
    long side of the nearest card outlined at a card's size (``CARD_SIZED``) does. A
    printed panel outlined alone is about square and says nothing of the card's way."""
    along, down = _table_axes(read.quads[i], to_image)
    long_i = along if np.linalg.norm(along) >= np.linalg.norm(down) else down
    card = float(np.prod(PIECE_MM["qwixx_card"]))
    best, best_d = None, np.inf
    for k in read:
        if k == i or read.kinds[k] != "qwixx_card":
            continue
        a, d = _table_axes(read.quads[k], to_image)
        size = float(np.linalg.norm(a) * np.linalg.norm(d)) / card
        if not CARD_SIZED[0] <= size <= CARD_SIZED[1]:
            continue
        dist = float(np.linalg.norm(read.quads[k].mean(axis=0) - read.quads[i].mean(axis=0)))
        if dist < best_d:
            best, best_d = (a if np.linalg.norm(a) >= np.linalg.norm(d) else d), dist
    if best is None:
        return False
    cos = abs(float(long_i @ best)) / max(float(np.linalg.norm(long_i) * np.linalg.norm(best)),
                                          1e-9)
    return cos < ACROSS_COS


def _card_sized_round(quad: npt.NDArray[np.float32], to_image: npt.NDArray[np.float64],
                      kind: str, *, turned: bool = False) -> list[npt.NDArray[np.float32]]:
    """Card-sized outlines (image pixels, unfitted) round ``quad``, an outline smaller
    than a card of ``kind`` on the table (``to_image`` maps its millimetres to the
    photo), along its own sides: one about its middle and one from each of its corners,
    the card's long side along the outline's longer one (across it when ``turned``). An
    outline smaller than a card lies within it: on its printed panel, or on one end."""
    card_long, card_short = max(PIECE_MM[kind]), min(PIECE_MM[kind])
    q = on_table(quad, to_image)
    along, down = side_directions(q)
    width, height = float(np.linalg.norm(along)), float(np.linalg.norm(down))
    wide = (width >= height) != turned
    a = along / max(width, 1e-9) * (card_long if wide else card_short)
    b = down / max(height, 1e-9) * (card_short if wide else card_long)
    middle = q.mean(axis=0) - (a + b) / 2
    return [cv2.perspectiveTransform(np.array([[p, p + a, p + a + b, p + b]]),
                                     to_image)[0].astype(np.float32)
            for p in (middle, q[0], q[1] - a, q[2] - a - b, q[3] - b)]


def _board_plane(detections: Detections) -> npt.NDArray[np.float64] | None:
    """The homography from millimetres on the table to image pixels, from the first
    research board's (upright, fitted) outline and its known size; None without one."""
    boards = [i for i in detections if detections.kinds[i] == "catbox_board"]
    if not boards:
        return None
    board_w, board_h = PIECE_MM["catbox_board"]
    out: npt.NDArray[np.float64] = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [board_w, 0], [board_w, board_h], [0, board_h]]),
        detections.quads[boards[0]].astype(np.float32))
    return out


TINY_CARD = 0.4
"""An unsure Cat in the Box "card" covering less than this share of a card's area on the
table (in the board's plane) is no card: fingertips outlined as cards in hard scenes."""


FAR_CARD = 2.0
FAR_CARD_DOUBTFUL = 0.95
"""A Cat in the Box "card" read less sure than ``FAR_CARD_DOUBTFUL`` whose middle lies
``FAR_CARD`` card sizes (the square root of a card's area, in the board's plane) or
more outside the board is no card: the trick lies below the board and the revealed
cards beside it. Rendered cards at least half in view, dev seeds 60000-60099 normal
and 60100-60199 hard: 601 cards, at most 1.42 sizes out. On dev 60000, 60400, 60800,
61100, 61400, 61800 (+40 each, normal) it dropped a sleeve's cuff read 1 at 0.55
(60015) and 7 at 0.75 (61439) and a patch of table read 2 at 0.82 (60835), each a
trick card too many: exact 33 -> 34, 38 -> 39, 36 -> 37, the rest unchanged."""


def without_cards_on_nothing(read: Detections) -> Detections:
    """Without the Cat in the Box "cards" that are none: unsure ones far smaller than a
    card (``TINY_CARD``), and doubtful ones far from the board (``FAR_CARD``)."""
    to_image = _board_plane(read)
    if to_image is None:
        return read
    to_table = np.linalg.inv(to_image)
    board_w, board_h = PIECE_MM["catbox_board"]
    board = np.float32([[0, 0], [board_w, 0], [board_w, board_h], [0, board_h]])
    card = float(np.prod(PIECE_MM["catbox_card"]))
    dropped = set()
    for i in read:
        if read.kinds[i] != "catbox_card":
            continue
        q = cv2.perspectiveTransform(read.quads[i].reshape(1, 4, 2).astype(np.float64),
                                     to_table)[0].astype(np.float32)
        sure = float(read.confidences[i])
        middle = tuple(float(v) for v in q.mean(axis=0))
        out = -cv2.pointPolygonTest(board.reshape(-1, 1, 2), middle, True)
        if (sure < UNSURE and abs(cv2.contourArea(q)) < TINY_CARD * card) or (
                sure < FAR_CARD_DOUBTFUL and out >= FAR_CARD * math.sqrt(card)):
            dropped.add(i)
    return read.select([i for i in read if i not in dropped]) if dropped else read


HAND_OVER_CARD = 0.2
HAND_CROP = (40, 60)
"""A Cat in the Box card whose face (rectified to HAND_CROP, white balanced) shows a
hand's hue (Lab a* ``locate.SKIN_RED`` or more over neutral: the cards are printed in
black and white) on HAND_OVER_CARD more of it than the photo's cards at the median
(two cards or more) lies partly under a hand: its number is unsure, however surely it
is read. Dev 60000-60099 normal and 60100-60159 hard (475 cards): of the cards under no
hand at most 0.13 more (a reddish light tints them all alike), of those partly under a
hand and read right at most 0.14; the three read wrong under a hand 0.28 (60052: a 2
read 1 at 0.86), 0.38 (60152) and 0.47 (60140: a 7 read 4 at 0.91). Dev 60475 normal:
a 3 read 2 at 0.93 under a hand, 0.38 (and the 2 beside it, read right, 0.33); dev
60259 hard: a 4 half under a hand read right at 0.88, 0.46 (now unknown)."""


def _skin_share(balanced: Image, quad: npt.NDArray[np.float32]) -> float:
    """The share of the outline's pixels in a hand's colour (``locate.SKIN_RED``)."""
    from companion.vision.locate import SKIN_RED

    lab = cv2.cvtColor(rectify(balanced, quad, size=HAND_CROP), cv2.COLOR_BGR2LAB)
    return float((lab[..., 1].astype(np.int16) - 128 >= SKIN_RED).mean())


def cards_under_a_hand(read: Detections, balanced: Image) -> Detections:
    """The Cat in the Box cards partly under a hand (``HAND_OVER_CARD``) marked in
    ``data["under_hand"]``, for the reader to report their numbers unknown: the card
    model reads a number from the part it sees, often surely and wrong."""
    cards = [i for i in read if read.kinds[i] == "catbox_card"]
    if len(cards) < 2:
        return read
    shares = [_skin_share(balanced, read.quads[i]) for i in cards]
    usual = float(np.median(shares))
    covered = {i for i, share in zip(cards, shares, strict=True)
               if share - usual >= HAND_OVER_CARD}
    if not covered:
        return read
    return read.with_fields(data={**read.data, "under_hand": tuple(
        i in covered for i in range(len(read)))})


CARD_PART = 0.8
CARD_JOINED = (0.8, 1.3)
CARD_HALVES_SURE = 0.95
"""Two Cat in the Box card outlines each covering under CARD_PART of a card on the
table (the board's plane), whose rectangle round both covers CARD_JOINED of a card and
reads CARD_HALVES_SURE or surer, are the halves of one card: the locator cut it in two
(its dark face's print taken for a gap), and each half read as a card of its own, often
surely (dev 60459 normal: a 2 cut into halves of 0.40 and 0.75 of a card, read 7 at
0.88 and 2 at 0.81: a card too many in the trick). They become that one card. Located
cards of dev 60000-60099 normal and 60100-60159 hard: the halves of a card covered
0.38-0.75 of one; whole cards 0.45 or more (a board seen steeply measures them small),
side by side two of them cover more than CARD_JOINED. Dev exact +1 on normal 60400,
hard 60200, 60500 and 60100 (60459, 60208, 60543, 60102), no range lower. The rectangle
round both is also read fitted to the card's edges (``fit_card_outline``): dev 61921
hard, an 8 cut in two read 0.90 through the rectangle, 1.00 fitted. Halves that read
sure neither way are read no surer than ``JOINED_CONFIDENCE``: each is half a card,
and its number is not the card's (61921: the 8's halves read 3 and 8, a card too many
in a trick claimed whole)."""


def joined_card_halves(balanced: Image, read: Detections, models_dir: Path) -> Detections:
    """``read`` with each pair of Cat in the Box card halves (``CARD_PART``) made the one
    card they are, read through the rectangle round both or it fitted; halves not made
    one card are unsure."""
    to_image = _board_plane(read)
    if to_image is None or not available_model("catbox_card", models_dir):
        return read
    cards = [i for i in read if read.kinds[i] == "catbox_card"]
    parts = [i for i in cards
             if _card_sized_corners(read.quads[i], to_image, "catbox_card")[0] < CARD_PART]
    least, most = CARD_JOINED
    pairs: dict[int, tuple[int, npt.NDArray[np.float32]]] = {}
    for k, i in enumerate(parts):
        for j in parts[k + 1:]:
            both = np.asarray(cv2.boxPoints(cv2.minAreaRect(np.concatenate(
                [read.quads[i], read.quads[j]]))), np.float32)
            if least <= _card_sized_corners(both, to_image, "catbox_card")[0] <= most:
                pairs.setdefault(i, (j, both))
    if not pairs:
        return read
    model = load_model("catbox_card", models_dir)
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
    tries = []
    for i, (_, both) in pairs.items():  # the rectangle round both, and it fitted
        start = portrait_first(both, model.size)
        tries += [(i, start)] + [(i, fit) for fit in fit_card_outline(
            smooth, start, aspect=PIECE_ASPECT["catbox_card"], count=EDGE_FITS)]
    changes = {i: change for i, change in surer_readings(read, balanced, model, tries).items()
               if float(change[1].max()) >= CARD_HALVES_SURE}
    unjoined = {k for i, (j, _) in pairs.items() if i not in changes for k in (i, j)}
    joined = with_readings(_read_as_joined(read, unjoined), model, changes)
    other_halves = {pairs[i][0] for i in changes}
    return joined.select([i for i in joined if i not in other_halves])


CARDS_JOINED = 2.5
"""A Cat in the Box card outline covering this many cards or more on the table (the
board's plane), read less surely than ``CARD_HALVES_SURE``, holds two cards or more
read as one (dev 60121 hard: a 2 and a 4 in one outline of 3.14 cards read 1 at 0.85,
in a trick claimed whole): it is read no surer than ``JOINED_CONFIDENCE``. Final card
outlines of dev 61900+60, 60500+60, 60100+40, 61300+40 hard and 61800+60, 61000+100
normal (1104): one card's at most 1.95, but for a board whose plane was off (61067:
7.55 and 18.59, read right at 1.00, hence the bar on sureness)."""


def joined_cards_doubted(read: Detections) -> Detections:
    """``read`` with each Cat in the Box card outline of ``CARDS_JOINED`` cards or more,
    read under ``CARD_HALVES_SURE``, read no surer than ``JOINED_CONFIDENCE``."""
    to_image = _board_plane(read)
    if to_image is None:
        return read
    joined = [i for i in read if read.kinds[i] == "catbox_card"
              and float(read.confidences[i]) < CARD_HALVES_SURE
              and _card_sized_corners(read.quads[i], to_image, "catbox_card")[0]
              >= CARDS_JOINED]
    return _read_as_joined(read, joined) if joined else read


def _read_as_joined(read: Detections, pieces: Iterable[int]) -> Detections:
    """``read`` with the ``pieces`` (part of a card, or cards read as one) read no surer
    than ``JOINED_CONFIDENCE``, and not asked again: Tesseract would read one of the
    numbers."""
    confidences = read.confidences.copy()
    probabilities = list(read.data.get(PROBABILITIES, (None,) * len(read)))
    for i in pieces:
        confidences[i] = min(float(confidences[i]), JOINED_CONFIDENCE)
        probabilities[i] = None
    return read.with_fields(confidences=confidences, data={
        **read.data, PROBABILITIES: tuple(probabilities)})


def _parts_joined(read: Detections, balanced: Image, model: Model,
                  tries: list[tuple[int, npt.NDArray[np.float32]]], other: dict[int, int],
                  sure: float, *, readings: Sequence[Reading] | None = None,
                  doubted: Mapping[int, npt.NDArray[np.float64]] | None = None
                  ) -> Detections:
    """``read`` with each part ``i`` of ``tries`` whose outlines round it and its
    ``other[i]`` read ``sure`` or surer made that one card (the surest reading), and
    the other part dropped; the ``doubted`` ones so made take the probabilities given
    there, read as joined (``_read_as_joined``). ``readings``: the tries' readings, when
    already read."""
    doubted = doubted or {}
    changes = {i: (change[0], doubted.get(i, change[1])) for i, change in surer_readings(
        read, balanced, model, tries, readings=readings).items()
        if float(change[1].max()) >= sure}
    if not changes:
        return read
    joined = _read_as_joined(with_readings(read, model, changes),
                             [i for i in changes if i in doubted])
    other_halves = {other[i] for i in changes}
    return joined.select([i for i in joined if i not in other_halves])


def trimmed_to_card_size(balanced: Image, detections: Detections, models_dir: Path
                          ) -> Detections:
    """Cat in the Box card outlines larger than a card (``TRIM_AREA``) replaced by the
    card-sized, fitted outline in one of their corners that reads surest (``TRIM_SURE``)."""
    rows = [i for i in detections if detections.kinds[i] == "catbox_card"]
    to_image = _board_plane(detections)
    if to_image is None or not rows or not available_model("catbox_card", models_dir):
        return detections
    model = load_model("catbox_card", models_dir)
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
    tries: list[tuple[int, list[npt.NDArray[np.float32]]]] = []
    for i in rows:
        cards, corners = _card_sized_corners(detections.quads[i], to_image, "catbox_card")
        if cards < TRIM_AREA:
            continue
        outlines = [portrait_first(detections.quads[i], model.size)]
        for corner in corners:
            outlines += fit_card_outline(smooth, portrait_first(corner, model.size),
                                         aspect=PIECE_ASPECT["catbox_card"])
        tries.append((i, outlines))
    if not tries:
        return detections
    quads = detections.quads.copy()
    readings = iter(read_quads(model, balanced, [x for _, xs in tries for x in xs]))
    for i, outlines in tries:
        sure = [float(next(readings).probs.max()) for _ in outlines]
        best = int(np.argmax(sure[1:])) + 1
        if sure[best] >= TRIM_SURE and sure[best] > sure[0]:
            quads[i] = outlines[best]
    return detections.with_fields(quads=quads)


ROX_SCORING_SURE = 0.99
ROX_SCORING_APART = 2.5
ROX_SURE_CARDS = 3
ROX_HALVES_REACH = 1.3
ROX_HALVES_SURE = 0.97
"""A Rox "element card" read unknown (under ``MIN_CONFIDENCE``: a scoring card shows no
edge symbols) whose centre lies ``ROX_SCORING_APART`` element-card sides or more from
every sure element card's (``ROX_SURE_CARDS`` or more of them), and that the scoring-card
model reads ``ROX_SCORING_SURE`` or surer (``scoring_cards_by_number``), is a scoring
card. Unknown located element cards of dev seeds 60000-60199, 60400-60439, 61100-61139,
61400-61439, 61800-61839 normal and 61800-61839 hard (228): of the 13 on whole scoring
cards, 9 read that sure, at least 2.9 sides out; of the rest (element cards, most under
a hand or read unsure on their edges, and outlines on no piece) the model reads element
cards as a 6 up to 0.994, but none that sure lay 2.3 sides or more out. Two such
unknown cards whose centres lie within ``ROX_HALVES_REACH`` sides of each other, neither
read a scoring card alone, are read together through the rectangle round both, and are
one scoring card when read ``ROX_HALVES_SURE`` or surer: the halves of a scoring card
the locator outlined long and cut in two as two element cards (``segment.ROX_RUN_SLACK``;
dev 60000 normal, a 3 read 0.98 so)."""


def scoring_cards_by_number(balanced: Image, read: Detections, models_dir: Path
                            ) -> Detections:
    """``read`` with the Rox element cards that are scoring cards (``ROX_SCORING_*``) made
    scoring cards, read as such through their located outline (either side first) or
    fitted to a scoring card's shape: the locator judges the two kinds by their outline's
    shape alone, and a scoring card outlined a little wide, or lying among other scoring
    cards (which bias the camera's squeeze measured on the cards near it), looks square;
    read as an element card it is unknown, and apart from the rows dropped as a stray.
    Two unknown halves read together as one scoring card become that card."""
    cards = [i for i in read if read.kinds[i] == "rox_card"]
    sure = [i for i in cards if float(read.confidences[i]) >= MIN_CONFIDENCE]
    unknown = [i for i in cards if float(read.confidences[i]) < MIN_CONFIDENCE]
    if len(sure) < ROX_SURE_CARDS or not unknown or not available_model("rox_scoring",
                                                                         models_dir):
        return read
    centres = read.quads.mean(axis=1)
    side = float(np.median([side_lengths(read.quads[i]).mean() for i in sure]))
    apart = [i for i in unknown if min(float(np.linalg.norm(centres[i] - centres[j]))
                                       for j in sure) >= ROX_SCORING_APART * side]
    if not apart:
        return read
    model = load_model("rox_scoring", models_dir)
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)

    def sure_readings(outlines: dict[int, npt.NDArray[np.float32]], *, least: float
                      ) -> dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]]:
        """Each piece's surest reading, ``least`` or surer, through its outline (either
        side first, or fitted to a scoring card's shape)."""
        tries = []
        for i, quad in outlines.items():
            for start in (quad, np.roll(quad, -1, axis=0)):
                outline = portrait_first(start, model.size)
                tries += [(i, outline)] + [(i, fit) for fit in fit_card_outline(
                    smooth, outline, aspect=PIECE_ASPECT["rox_scoring"], count=EDGE_FITS)]
        return {i: change for i, change in surer_readings(read, balanced, model, tries).items()
                if float(change[1].max()) >= least}

    changes = sure_readings({i: read.quads[i] for i in apart}, least=ROX_SCORING_SURE)
    halves = {i: j for k, i in enumerate(apart) for j in apart[k + 1:]
              if i not in changes and j not in changes
              and float(np.linalg.norm(centres[i] - centres[j])) <= ROX_HALVES_REACH * side}
    joined = sure_readings({i: np.asarray(cv2.boxPoints(cv2.minAreaRect(np.concatenate(
        [read.quads[i], read.quads[j]]))), np.float32) for i, j in halves.items()},
        least=ROX_HALVES_SURE)
    changes |= joined
    if not changes:
        return read
    turned = with_readings(read, model, changes)
    kinds = tuple("rox_scoring" if i in changes else k for i, k in enumerate(read.kinds))
    oriented = tuple(model.oriented if i in changes else o
                     for i, o in enumerate(read.oriented))
    cleared = {key: tuple(None if i in changes else e for i, e in enumerate(
        read.data.get(key, (None,) * len(read)))) for key in ("edge", "edge_sure", "up")}
    turned = turned.with_fields(kinds=kinds, oriented=oriented,
                                data={**turned.data, **cleared})
    other_halves = {halves[i] for i in joined}
    return turned.select([i for i in turned if i not in other_halves]
                         ) if other_halves else turned


ROX_ENLARGED_SCALES = (1.15, 1.3)
ROX_ENLARGED_SURE = 0.9
"""A Rox scoring card the model reads unsure (under ``UNSURE``, before Tesseract is
asked) is read again through its outline scaled up by each of ``ROX_ENLARGED_SCALES``
about its centre, and takes their reading when every one reads the same label the same
way up at least ``ROX_ENLARGED_SURE`` (``scoring_cards_enlarged``): a dark card on a
dark table is often outlined round its printed number alone, a crop the model reads
unsure (dev 60002: a 3 outlined at 60 % of its size read 2 at 0.63, then 0.46 with
Tesseract; scaled up it reads 3 at 0.95-0.97). On the scoring-card readings of dev
60000-60119, 61000-61119 (normal) and 60500-60559 (hard), 527 pieces, the rule holds
for 8 read under 0.95, all whole scoring cards read right by it (7 already so); of the
pieces on element cards or on nothing, the surest scaled so read 0.94 at one scale and
0.74 at the other (60061). Scaled 1.45-1.6, 11 whole cards read a sure 10 (a
neighbour's digit in the crop)."""


def scoring_cards_enlarged(balanced: Image, read: Detections, models_dir: Path
                           ) -> tuple[Detections, set[int]]:
    """``read`` with each unsure Rox scoring card read through its outline scaled up
    (``ROX_ENLARGED_*``) when every such reading agrees surely: the mean of those
    readings, through the first enlarged outline; and the pieces so read."""
    unknown = [i for i in read if read.kinds[i] == "rox_scoring"
               and float(read.confidences[i]) < UNSURE]
    if not unknown or not available_model("rox_scoring", models_dir):
        return read, set()
    model = load_model("rox_scoring", models_dir)
    tries = [(i, portrait_first(nudged(read.quads[i], scale, 0.0, 0.0), model.size))
             for i in unknown for scale in ROX_ENLARGED_SCALES]
    readings = read_quads(model, balanced, [q for _, q in tries])
    changes: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]] = {}
    for i in unknown:
        mine = [(q, r) for (j, q), r in zip(tries, readings, strict=True) if j == i]
        tops = {(int(r.probs.argmax()), r.turned) for _, r in mine}
        if len(tops) == 1 and min(float(r.probs.max()) for _, r in mine) >= ROX_ENLARGED_SURE:
            outline, first = mine[0]
            changes[i] = (rotate_quad(outline, 2) if first.turned else outline,
                          np.mean([r.probs for _, r in mine], axis=0))
    return with_readings(read, model, changes), set(changes)


def across_neighbour(quads: Sequence[npt.NDArray[np.float32]], *, any_shape: bool = False
                     ) -> list[int]:
    """The cards (of one kind lying side by side in rows) whose outline looks square
    (``SQUARE_LOOK``) and whose nearest card (``NEIGHBOUR_REACH``) lies beyond its top or
    bottom edge rather than beside it, its axis across the card's or square-looking too
    (two squeezed cards side by side can both be outlined on their side): read a quarter
    turn round, the neighbour is beside it, as the cards of a row lie. The classifier
    alone reads a 3 on its side as a sure 8."""
    if len(quads) < 2:
        return []
    q = np.asarray(quads, np.float64)
    right = ((q[:, 1] - q[:, 0]) + (q[:, 2] - q[:, 3])) / 2
    down = ((q[:, 3] - q[:, 0]) + (q[:, 2] - q[:, 1])) / 2
    widths, heights = np.linalg.norm(right, axis=1), np.linalg.norm(down, axis=1)
    sizes = np.sqrt(np.abs(right[:, 0] * down[:, 1] - right[:, 1] * down[:, 0]))
    centres = q.mean(axis=1)
    square = np.maximum(widths, heights) < SQUARE_LOOK * np.minimum(widths, heights)
    out = []
    candidates = np.arange(len(q)) if any_shape else np.flatnonzero(square)
    for k in candidates:
        gaps = np.linalg.norm(centres - centres[k], axis=1)
        gaps[k] = np.inf
        j = int(np.argmin(gaps))
        if gaps[j] > NEIGHBOUR_REACH * sizes[k]:
            continue
        offset = centres[j] - centres[k]
        beyond = abs(offset @ down[k]) / heights[k] > abs(offset @ right[k]) / widths[k]
        # a square-looking neighbour shows no axis of its own: it may lie across too
        if beyond and (square[j] or any_shape
                       or abs(down[k] @ down[j]) < ACROSS_COS * heights[k] * heights[j]):
            out.append(int(k))
    return out


NOX_PART = 0.8
NOX_JOINED = (0.75, 1.3)
NOX_HALVES_REACH = 1.0
NOX_HALVES_SURE = 0.95
"""Two Nox card outlines each under ``NOX_PART`` of the median Nox card's area (image
pixels), whose middles lie within ``NOX_HALVES_REACH`` card sizes (square root of that
area) and whose rectangle round both covers ``NOX_JOINED`` of a card, are the two parts
of one card the locator cut apart, if that rectangle (or its outline fitted to the
card's edges) reads ``NOX_HALVES_SURE`` or surer: they become that one card. Split
parts otherwise read as two cards, one often sure, and end in the wrong kitty (dev
60007 normal: a 14 cut into parts read 14 at 0.83 facing sideways and 3 at 0.44)."""


def joined_nox_halves(balanced: Image, read: Detections, models_dir: Path) -> Detections:
    """``read`` with each pair of Nox card parts (``NOX_PART``) made the one card they
    are, read through the rectangle round both or its fitted outline."""
    cards = [i for i in read if read.kinds[i] == "nox_card"]
    if len(cards) < 3 or not available_model("nox_card", models_dir):
        return read
    areas = {i: abs(float(cv2.contourArea(read.quads[i]))) for i in cards}
    card = float(np.median(list(areas.values())))
    if card <= 0:
        return read
    parts = [i for i in cards if areas[i] < NOX_PART * card]
    least, most = NOX_JOINED
    model = load_model("nox_card", models_dir)
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
    tries: list[tuple[int, npt.NDArray[np.float32]]] = []
    other: dict[int, int] = {}
    square: set[int] = set()
    for k, i in enumerate(parts):
        for j in parts[k + 1:]:
            apart = float(np.linalg.norm(read.quads[i].mean(axis=0) - read.quads[j].mean(axis=0)))
            if apart > NOX_HALVES_REACH * math.sqrt(card) or i in other or j in other:
                continue
            both = np.asarray(cv2.boxPoints(cv2.minAreaRect(np.concatenate(
                [read.quads[i], read.quads[j]]))), np.float32)
            if not least <= abs(float(cv2.contourArea(both))) / card <= most:
                continue
            outline = portrait_first(both, model.size)
            turns = [outline]
            sides = side_lengths(both)
            if max(sides) < SQUARE_LOOK * min(sides):  # which side is its top?
                turns.append(rotate_quad(outline, 1))
                square.add(i)
            for turn in turns:
                tries += [(i, turn)] + [(i, fitted) for fitted in fit_card_outline(
                    smooth, turn, aspect=PIECE_ASPECT["nox_card"])]
            other[i] = j
    if not tries:
        return read
    readings = read_quads(model, balanced, [o for _, o in tries])
    doubted = _turned_joins_disputed([(i, r) for (i, _), r in zip(tries, readings, strict=True)
                                      if i in square])
    return _parts_joined(read, balanced, model, tries, other, NOX_HALVES_SURE,
                         readings=readings, doubted=doubted)


def _turned_joins_disputed(tried: list[tuple[int, Reading]]
                           ) -> dict[int, npt.NDArray[np.float64]]:
    """The parts of ``tried`` (part, a reading of an outline round it and its other part:
    square-looking, as given and a quarter turn round, and fitted) whose outlines read
    ``NOX_HALVES_SURE`` or surer of different numbers, each with the mean of the surest
    reading of each number: which side is the joined card's top its rectangle does not
    tell (dev 60714 hard: a 3 cut in two, joined square, read 8 at 0.999 on its side and
    3 upright, the kitty whole and wrong; now unsure). Photo -> state, no other change:
    Nox hard 61900, 60700, 60500 + 60, normal 61000, 61100 + 60."""
    sure: dict[int, dict[int, npt.NDArray[np.float64]]] = {}
    for i, reading in tried:
        label = int(reading.probs.argmax())
        best = sure.setdefault(i, {}).get(label)
        if float(reading.probs.max()) >= NOX_HALVES_SURE and (
                best is None or reading.probs.max() > best.max()):
            sure[i][label] = reading.probs
    return {i: np.mean(list(labels.values()), axis=0) for i, labels in sure.items()
            if len(labels) > 1}


NOX_RESIZE_SMALL = 0.8
NOX_RESIZE_LARGE = 1.2
NOX_RESIZE_NEAR = 4
NOX_RESIZE_SURE = 0.95
NOX_RESIZE_APART = 0.3
"""An unsure Nox card (under ``UNSURE``) outlined under ``NOX_RESIZE_SMALL`` or over
``NOX_RESIZE_LARGE`` times the area of its ``NOX_RESIZE_NEAR`` nearest cards (median
width and height) is read again through card-sized outlines along its own sides (then,
if none reads sure, along its nearest card's): round its middle and, for a larger
outline, in each of its corners, as is and fitted to the card's edges. The surest
reading at ``NOX_RESIZE_SURE`` or surer is kept, unless that outline shows a hand
(``HAND_OVER_CARD`` more skin than the usual card: dev 60402, fingers over a card read
10 at 0.999) or, for a larger outline, it names another number than the card's first
reading (trimmed outlines on hard 60500-60599 read a blurred 7 as 5 at 0.99 and a
sleeve as 6 at 0.98, their first readings 12 and 11). A card outlined a third short of
its edges reads no number surely (dev 60105: a 6 outlined 21×27 px of its 31×40 read
13 at 0.28), nor one outlined onto a hand beside it (dev 60134: a 4 read 0.40). Dev
60000-60199, 60600-60699 normal and 60500-60599 hard: 8 cards read again so, all
right. A card outlined small is read again so when read under ``NOX_RESIZE_SURE``
too (part of a face can read fairly sure: dev 61019, a 15 outlined on its number read
4 at 0.85), and its new outline is kept only when it covers no other card
(``NOX_RESIZE_APART``, IoU: dev 60023, the edge of a stack's lower card read 1 at the
top card's place). Nox exact, dev normal 61000-61059 53 -> 55 of 60, hard 60560-60589
14 -> 15 of 30; 60000, 61100, 61200 normal and 60500 hard unchanged."""


def nox_cards_at_card_size(balanced: Image, read: Detections, models_dir: Path
                           ) -> Detections:
    """``read`` with each unsure Nox card outlined far larger than a card, and each one
    outlined far smaller and read under ``NOX_RESIZE_SURE``, read again through
    card-sized outlines (``NOX_RESIZE_SMALL``), kept when sure (``NOX_RESIZE_SURE``).
    A card read as joined (``_read_as_joined``: no probabilities kept) stays unsure: its
    doubt is not its size (``_turned_joins_disputed``)."""
    cards = [i for i in read if read.kinds[i] == "nox_card"]
    probabilities = read.data.get(PROBABILITIES, (None,) * len(read))
    doubtful = [i for i in cards if float(read.confidences[i]) < NOX_RESIZE_SURE
                and probabilities[i] is not None]
    if len(cards) < 3 or not doubtful or not available_model("nox_card", models_dir):
        return read
    sides = {i: quad_axes(read.quads[i]) for i in cards}
    sized: dict[int, tuple[float, float, list[int]]] = {}
    small: set[int] = set()  # outlined smaller than a card (else larger)
    for i in doubtful:
        centre, right, down = sides[i]
        near = sorted((k for k in cards if k != i),
                      key=lambda k: float(np.linalg.norm(sides[k][0] - centre)))[:NOX_RESIZE_NEAR]
        widths = [min(np.linalg.norm(sides[k][1]), np.linalg.norm(sides[k][2])) for k in near]
        heights = [max(np.linalg.norm(sides[k][1]), np.linalg.norm(sides[k][2])) for k in near]
        w, h = float(np.median(widths)), float(np.median(heights))
        area = float(np.linalg.norm(right) * np.linalg.norm(down))
        if area < NOX_RESIZE_SMALL * w * h:  # surer than UNSURE too: part of a face
            sized[i] = (w, h, near)
            small.add(i)
        elif area > NOX_RESIZE_LARGE * w * h and float(read.confidences[i]) < UNSURE:
            sized[i] = (w, h, near)
    if not sized:  # most photos: no card outlined far off a card's size
        return read
    model = load_model("nox_card", models_dir)
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
    changes: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]] = {}
    for own in (True, False):  # along its own sides first: its axis places it in a kitty
        tries: list[tuple[int, npt.NDArray[np.float32]]] = []
        for i, (w, h, near) in sized.items():
            if i in changes:
                continue
            centre, right, down = sides[i]
            r, d = (right, down) if own else (sides[near[0]][1], sides[near[0]][2])
            across, along = (r, d) if np.linalg.norm(r) <= np.linalg.norm(d) else (d, r)
            u = across / max(float(np.linalg.norm(across)), 1e-9) * w / 2
            v = along / max(float(np.linalg.norm(along)), 1e-9) * h / 2
            spare_u = max(float(np.linalg.norm(across)) / w - 1, 0.0)
            spare_v = max(float(np.linalg.norm(along)) / h - 1, 0.0)
            middles = [centre] + [centre + a * spare_u * u + b * spare_v * v
                                  for a in (-1, 1) for b in (-1, 1) if spare_u or spare_v]
            for m in middles:  # an outline larger than a card: the card in a corner
                outline = portrait_first(np.float32([m - u - v, m + u - v, m + u + v,
                                                     m - u + v]), model.size)
                tries += [(i, outline)] + [(i, fitted) for fitted in fit_card_outline(
                    smooth, outline, aspect=PIECE_ASPECT["nox_card"])]
        if tries:
            changes.update({i: change for i, change in surer_readings(
                read, balanced, model, tries).items()
                if float(change[1].max()) >= NOX_RESIZE_SURE})
    if not changes:
        return read
    usual = float(np.median([_skin_share(balanced, read.quads[i]) for i in cards]))
    changes = {i: change for i, change in changes.items()
               if _skin_share(balanced, change[0]) - usual < HAND_OVER_CARD
               and (i in small or model.labels[int(np.argmax(change[1]))] == read.labels[i])
               and (float(read.confidences[i]) < UNSURE or max(
                   quad_iou(change[0], read.quads[k]) for k in cards if k != i)
                    < NOX_RESIZE_APART)}
    return with_readings(read, model, changes)
