"""Read each located piece: its label in the check contract's notation, how sure the
reader is, and which way up it lies (``classify``, the reading stage of the pipeline).

Each kind of piece has a small CNN (``companion.vision.reading``). Colours are judged
after white balance. A piece read unsure is read again through other outlines (nudged,
then fitted to the photo), and keeps a low confidence and its top-3 alternatives if it
stays unsure; Tesseract is asked for a second opinion on printed numbers the CNN is
still unsure of once the photo is read (all of them in one Tesseract process: starting
it costs more than reading a crop). The steps of one game or kind of piece live in
their own modules: ``rox_edges`` (Rox edge symbols), ``cards`` (card outlines the
locator got wrong), ``board`` (the Cat in the Box research board), ``tiles`` (Nummix
tiles, standing or lying) and ``strays`` (outlines that are no piece).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.games.base import InputError
from companion.vision.align import fit_card_outline
from companion.vision.board import (
    UPRIGHT_VIEWS,
    boards_upright,
    largest_board_view,
    observed_by_colour,
    with_covered_cells,
    without_doubtful_tokens,
)
from companion.vision.cards import (
    FORESHORTENED_SURE,
    JOINED_CONFIDENCE,
    PAIR_KINDS,
    across_neighbour,
    cards_checked_on_sheets,
    cards_under_a_hand,
    joined_card_halves,
    joined_cards_doubted,
    joined_nox_halves,
    nearest_plane,
    nox_cards_at_card_size,
    on_table,
    scoring_cards_by_number,
    scoring_cards_enlarged,
    sheet_planes,
    sheets_outlined_as_cards,
    side_directions,
    split_card_pairs,
    trimmed_to_card_size,
    without_cards_on_nothing,
    without_printed_boxes,
)
from companion.vision.colour import apply_gains, white_gains
from companion.vision.deblur import sharpened_choices
from companion.vision.detections import (
    JOINED,
    MIN_CONFIDENCE,
    Detections,
    cut_across,
    rectify,
    rotate_quad,
)
from companion.vision.reading import (
    EDGE_FITS,
    MODELS_DIR,
    PIECE_ASPECT,
    PROBABILITIES,
    RETRY_KINDS,
    TOP_K,
    UNSURE,
    Image,
    Model,
    Reading,
    available_model,
    load_model,
    nudged,
    number_of,
    parses,
    portrait_first,
    read_quads,
    top_labels,
    with_readings,
)
from companion.vision.rox_edges import (
    STREAK_CHOICES,
    centre_certainty,
    counted_certainty,
    element_cards_by_edges,
    read_rox_edges,
)
from companion.vision.rox_faces import centre_colour_doubts, face_ups
from companion.vision.strays import without_doubles, without_scoring_strays, without_strays
from companion.vision.tiles import (
    facing_neighbours,
    feet_on_ledges,
    missed_beside_sure,
    nearest_sure_outline,
    split_joined_tiles,
    stepped_from_neighbours,
    tile_sized,
)

if TYPE_CHECKING:
    from companion.calibration.deck import DeckProfile


OCR_MODES = ("auto", "off")
OCR_WEIGHT = 5.0
"""How far Tesseract's reading moves an unsure piece (``_with_ocr``), fitted by the
least negative log-likelihood of the true labels on the unsure crops of located Nummix
tiles, Nox and Qwixx cards (development seeds 61100-61179 normal, 61100-61159 hard:
377 crops; Tesseract gave a number for 158, right for 95). The fold it replaces gave
the labels with the number Tesseract's confidence shared among them and the others the
rest, trusting it 70-330 times over; on those Nummix tiles it doubled the readings
sure (0.5) and wrong, 15 -> 30."""
OCR_DISAGREES_KINDS = ("qwixx_card",)
OCR_DISAGREES_CONFIDENCE = 0.45
"""A piece of these kinds whose label Tesseract's reading turns to another is read no
surer than this (under the readers' bar): the CNN and Tesseract disagree, and on a
blurred Qwixx card Tesseract is as often the one wrong (dev 61327: a b8 read b8 at 0.56
through card-sized outlines, turned to b4 at 0.58 by Tesseract's 4)."""
OCR_SCALE = 3
"""Crops for Tesseract are rectified this many times larger than the CNN's."""

GAMES = ("nox", "qwixx", "rox", "nummix", "catbox")

# The printed number's area in an upright crop (x0, y0, x1, y1 as fractions), per kind.
NUMBER_REGION: dict[str, tuple[float, float, float, float]] = {
    "nummix_tile": (0.0, 0.0, 1.0, 0.72),
    "nox_card": (0.12, 0.18, 0.88, 0.82),
    "qwixx_card": (0.12, 0.18, 0.88, 0.82),
    "catbox_card": (0.12, 0.18, 0.88, 0.82),
    "rox_scoring": (0.1, 0.1, 0.9, 0.9),
}
MAX_NUMBER = {"nummix_tile": 17, "nox_card": 15, "qwixx_card": 12, "catbox_card": 9,
              "rox_scoring": 10}


# Reference ink colours (BGR after white balance) for the OCR-only path.
INKS: dict[str, dict[str, tuple[int, int, int]]] = {
    "nummix_tile": {"r": (40, 40, 200), "k": (35, 35, 35), "b": (190, 100, 30),
                    "o": (40, 140, 240)},
    "qwixx_card": {"r": (40, 40, 200), "y": (30, 200, 230), "g": (60, 160, 40),
                   "b": (190, 100, 30)},
}


def _other_outlines(quad: npt.NDArray[np.float32], kind: str
                    ) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]:
    """(outline to read through, outline to report) to read an unsure piece again:
    nudged (``OUTLINE_NUDGES``: a located outline a few pixels off; the located outline is
    still the one reported), and for a Nummix tile a quarter turn round (a tile standing
    on a rack, seen from above, looks wider than tall, so its outline's short edge is not
    its top). A reading through one of them is kept only if it is sure (``UNSURE``) and
    surer than the first: the best of several readings is surer by chance alone (kept
    whenever surer, a quarter turn made an unsure, right real tile, b3, wrong at 0.57)."""
    out = [(nudged(quad, *nudge), quad) for nudge in OUTLINE_NUDGES]
    if kind == "nummix_tile":
        out.append((rotate_quad(quad, 1), rotate_quad(quad, 1)))
    return out


MAJORITY_KINDS = ("qwixx_card",)
"""A piece of these kinds read sure through one of its other outlines (``_read_again``)
keeps that reading only if more than half of them read its label (backs agree whatever
their number, ``_face``); else it takes the mean of all its readings' probabilities (the
first's too), unsure: the best of six outlines is sure by chance. Qwixx face-up cards so
read on dev 61100+100, 61400+100, 61800+60 normal and 61500+60 hard: half or fewer
agreeing, 6 of 11 wrong (61817: a g5 read g3 at 0.93 by one outline moved 3 %, the
others g3 0.70, 0.84, g5, g6, g6); more than half, 9 of 58."""


def _face(label: str) -> str:
    """A label as ``MAJORITY_KINDS`` compare them: any Qwixx back alike (the display's
    numbers are no part of the state; whether a card is a back or played is)."""
    return "back" if label.startswith("back") else label


def _read_again(model: Model, balanced: Image, starts: list[npt.NDArray[np.float32]],
                readings: list[Reading],
                tries: list[tuple[int, npt.NDArray[np.float32], npt.NDArray[np.float32]]]
                ) -> None:
    """Read pieces again: each try is (piece ``k``, outline to read through, outline to
    report); a reading takes the place of piece ``k``'s (in ``starts`` and ``readings``)
    only if it is sure (``UNSURE``) and surer than the one it replaces."""
    again = read_quads(model, balanced, [read for _, read, _ in tries])
    first = {k: readings[k] for k, _, _ in tries}
    for (k, _, report), reading in zip(tries, again, strict=True):
        if reading.probs.max() >= max(UNSURE, readings[k].probs.max()):
            starts[k], readings[k] = report, reading
    if model.name not in MAJORITY_KINDS:
        return
    for k, before in first.items():  # a sure reading most other outlines disagree with
        if readings[k] is before:
            continue
        own = [r for (j, _, _), r in zip(tries, again, strict=True) if j == k]
        face = _face(model.labels[int(readings[k].probs.argmax())])
        if 2 * sum(_face(model.labels[int(r.probs.argmax())]) == face for r in own) <= len(own):
            readings[k] = Reading(np.mean([before.probs, *(r.probs for r in own)], axis=0),
                                  readings[k].turned)


def _with_ocr(labels: tuple[str, ...], probs: npt.NDArray[np.float64],
              number: int | None, confidence: float) -> npt.NDArray[np.float64]:
    """Fold Tesseract's reading (``number`` with ``confidence``) into the label
    probabilities as a likelihood ratio: labels carrying that number weigh
    1 + ``OCR_WEIGHT`` × confidence against the others."""
    if number is None or confidence <= 0:
        return probs
    match = np.array([number_of(label) == number for label in labels])
    if not match.any():
        return probs
    combined = probs * np.where(match, 1.0 + OCR_WEIGHT * min(confidence, 1.0), 1.0)
    total = combined.sum()
    return combined / total if total > 0 else probs


def _ink_colour(kind: str, crop: Image) -> tuple[str, float]:
    """The number's ink, nearest reference colour (OCR-only path); (letter, closeness)."""
    from companion.vision.ocr import binarise

    region = NUMBER_REGION[kind]
    mask = binarise(crop, region=region) == 0
    h, w = crop.shape[:2]
    x0, y0, x1, y1 = region
    part = crop[int(y0 * h):max(int(y1 * h), int(y0 * h) + 1),
                int(x0 * w):max(int(x1 * w), int(x0 * w) + 1)]
    if not mask.any():
        return "", 0.0
    ink = part[mask].astype(np.float32).mean(axis=0)
    lab = cv2.cvtColor(ink.reshape(1, 1, 3).astype(np.uint8), cv2.COLOR_BGR2LAB)[0, 0]
    best, best_d, second_d = "", 1e9, 1e9
    for letter, ref in INKS[kind].items():
        ref_lab = cv2.cvtColor(np.array([[ref]], np.uint8), cv2.COLOR_BGR2LAB)[0, 0]
        d = float(np.linalg.norm(lab.astype(np.float32) - ref_lab.astype(np.float32)))
        if d < best_d:
            best, best_d, second_d = letter, d, best_d
        elif d < second_d:
            second_d = d
    return best, float(second_d / (best_d + second_d)) if second_d < 1e9 else 1.0


def _ocr_only(kind: str, balanced: Image, quad: npt.NDArray[np.float32],
              size: tuple[int, int]) -> tuple[str | None, float, bool,
                                              tuple[tuple[str, float], ...]]:
    """Tesseract alone (classifier off): the number (both ways up, the surer wins) and,
    where the colour matters, the nearest ink colour. (label, confidence, turned, alts)."""
    from companion.vision.ocr import read_number

    w, h = size
    big = rectify(balanced, quad, size=(w * OCR_SCALE, h * OCR_SCALE))
    readings = []
    for turned, crop in ((False, big), (True, np.ascontiguousarray(big[::-1, ::-1]))):
        number, conf = read_number(crop, max_value=MAX_NUMBER[kind], region=NUMBER_REGION[kind])
        if number is not None:
            readings.append((conf, turned, number, crop))
    if not readings:
        return None, 0.0, False, ()
    readings.sort(key=lambda r: -r[0])
    conf, turned, number, crop = readings[0]
    label = str(number)
    if kind in INKS:
        letter, closeness = _ink_colour(kind, crop)
        if not letter:
            return None, 0.0, False, ()
        label = f"{letter}{number}"
        conf *= closeness
    if not parses(kind, label):
        return None, 0.0, False, ()
    alternatives = tuple((str(n) if kind not in INKS else f"{label[0]}{n}", round(c, 4))
                         for c, _, n, _ in readings if n != number)[:TOP_K - 1]
    return label, float(conf), turned, ((label, round(float(conf), 4)), *alternatives)


OUTLINE_NUDGES = ((0.95, 0.0, 0.0), (1.05, 0.0, 0.0), (1.0, 0.03, 0.0), (1.0, -0.03, 0.0),
                  (1.0, 0.0, 0.03), (1.0, 0.0, -0.03))
"""An unsure piece's outline read again scaled by 5 % either way and moved by 3 % of its
side along each image axis (``_other_outlines``)."""


DOUBTED = "_doubted"
"""Internal ``data`` field while a photo is read: for each piece whose sure reading the
nudged outlines doubt (``_doubted_unless_nudges_agree``), the least probability any of
its readings gave each label (else None); Tesseract is asked about it, and unless it
reads the label's number its confidence is at most that. Not in the result."""


AGREE_KINDS = ("rox_scoring",)
AGREE_NUDGES = ((0.92, 0.0, 0.0), (1.08, 0.0, 0.0), (1.0, 0.06, 0.0), (1.0, -0.06, 0.0),
                (1.0, 0.0, 0.06), (1.0, 0.0, -0.06))
"""A piece of these kinds read sure is read again through its outline scaled by 8 % either
way and moved by 6 % of its side along each image axis; unless every one of them reads
the same label the same way up, its probabilities become the mean of all seven readings
(``_doubted_unless_nudges_agree``), Tesseract is asked, and unless it reads the label's
number the confidence is at most the least probability a reading gave it
(``DOUBTED``). Rox scoring cards lie far from the camera, their printed number a few
pixels high: on dev 60100-60159 (normal) the 3 read sure and wrong (5 for 3 at 0.90, 8
for 6 at 0.92, 10 for 5 at 0.86) each had nudged readings disagreeing, and of the 124
read right 1 (0.82)."""

CENTRE_DOUBTED_CONFIDENCE = 0.45
"""An element card whose centre symbol's colour clearly disagrees with its centre element
as read (``rox_faces.centre_colour_doubts``, ``data["centre_doubt"]``) is read no surer
than this, under the readers' bar (``MIN_CONFIDENCE``) as ``JOINED_CONFIDENCE`` is."""


def _doubted_unless_nudges_agree(model: Model, balanced: Image, kind: str,
                                 starts: list[npt.NDArray[np.float32]],
                                 readings: list[Reading]) -> dict[int, Any]:
    """Each sure reading (``UNSURE``) of ``readings`` kept only if every outline of
    ``AGREE_NUDGES`` about its start reads the same label the same way up. Else it is
    read through its outline fitted to the photo (``align.fit_card_outline``, the
    ``EDGE_FITS`` best fits): if most of them read one label the same way up, and the
    located outline's label, read by a fit too, does not tie it (``_fits_outvote``), the mean
    of those readings takes its place (and the first of those fits its start); else it
    takes the mean of the nudged readings' probabilities and its own: a label read sure
    by chance through one outline is doubted. Returns the doubted readings, each with the least
    probability any of its readings gave each label (``DOUBTED``)."""
    sure = [k for k, reading in enumerate(readings) if reading.probs.max() >= UNSURE]
    doubted: dict[int, Any] = {}
    tries = [(k, nudged(starts[k], *nudge)) for k in sure for nudge in AGREE_NUDGES]
    again = read_quads(model, balanced, [quad for _, quad in tries])
    for k in sure:
        mine = [r for (j, _), r in zip(tries, again, strict=True) if j == k]
        top = int(readings[k].probs.argmax())
        if any(int(r.probs.argmax()) != top or r.turned != readings[k].turned
               for r in mine):
            doubted[k] = [readings[k].probs, *(r.probs for r in mine)]
    if not doubted:
        return {}
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
    fits = [(k, fit) for k in doubted for fit in fit_card_outline(
        smooth, starts[k], aspect=PIECE_ASPECT[kind], count=EDGE_FITS)]
    fitted = read_quads(model, balanced, [fit for _, fit in fits])
    for k in list(doubted):
        mine = [(fit, r) for (j, fit), r in zip(fits, fitted, strict=True) if j == k]
        votes = Counter((int(r.probs.argmax()), r.turned) for _, r in mine)
        own = (int(readings[k].probs.argmax()), readings[k].turned)
        witnesses = sum((int(r.probs.argmax()), r.turned) == own and r.probs.max() >= UNSURE
                        for _, r in mine)
        if votes and _fits_outvote(votes, len(mine), own, witnesses):
            (top, turned), _ = votes.most_common(1)[0]
            agree = [(fit, r) for fit, r in mine if (int(r.probs.argmax()), r.turned)
                     == (top, turned)]
            starts[k] = agree[0][0]
            readings[k] = Reading(np.mean([r.probs for _, r in agree], axis=0), turned)
            del doubted[k]
            continue
        readings[k] = Reading(np.mean(doubted[k], axis=0), readings[k].turned)
        doubted[k] = np.min(doubted[k], axis=0)
    return doubted


def _fits_outvote(votes: Counter[tuple[int, bool]], fits: int, own: tuple[int, bool],
                  witnesses: int) -> bool:
    """Whether the readings of a doubted piece's ``fits`` fitted outlines (``votes``: label,
    turned -> how many) settle it: most of them read one label the same way up and, when
    that is not the located outline's reading ``own``, ``own`` with its ``witnesses`` (the
    fits that read it too, surely: ``UNSURE``), if any, does not tie it. Dev 61613 normal: a 6
    read 1.0 through its located outline and one fit, 5 at 0.56 and 0.59 through two fits
    askew, was read 5 (unsure); now doubted, it is read again sharpened (``_sharpened_readings``),
    surely 6. Dev 60623: a 5 read a sure 8 through its located outline, 5 at 0.95 and 0.99
    through two fits and 8 at 0.58 through the third (no witness), is read 5 as before."""
    (top, count), = votes.most_common(1)
    if 2 * count <= fits:
        return False
    return top == own or not witnesses or witnesses + 1 < count


SHARPENED_KINDS = ("rox_scoring",)
"""A piece of these kinds that would stay unsure (under ``UNSURE``, or doubted:
``DOUBTED``) once read is read again on the photo sharpened against the motion blur
measured round those pieces (``deblur.sharpened_choices``), through its outline and
``AGREE_NUDGES`` about it (``_sharpened_readings``). Rox scoring cards lie far from the
camera, and a phone's shake smears their printed number of a few pixels into a blob
the model reads unsure, as it does the element cards' edge symbols (``rox_edges``):
dev 61022 normal, a 6 streaked 6 px read 0.74 (9 second, its turn unsure), sharpened
0.97-1.0 through six of the seven outlines. Scoring cards that would stay unsure on dev
61000, 61400, 61600, 61800, 61200, 60600 (+40, normal), 61900 and 61500 (+40, hard),
the mean sharpened reading of the label read: right 0.86, 0.93 (normal 61022, 61407)
and 0.95 (hard 61906), so made sure; 0.78 (hard 61916) and under kept unsure; read
wrong, 0.70 (hard 61922, a 8 read 4) and under. Photo -> state: exact 32 -> 33 (61022)
and 31 -> 32 (61407) of 40; 61600, 61800, 61200, 60600 and hard 61900, 61500
unchanged; no reading newly wrong. Each of the ``rox_edges.STREAK_CHOICES`` deepest
streaks measured round the scoring cards is tried, the deepest first (dev 61819
normal: an 8 read 0.76; sharpened against the deepest dip, 4 px along the rows of
pixels and no streak, 0.64; against the 8 px slanting streak, 0.91); so tried, the
wrong readings above reached 0.70 at most (61922: 0.66 on the second)."""


def _sharpened_readings(read: Detections, balanced: Image, models_dir: Path) -> Detections:
    """``read`` with each piece of ``SHARPENED_KINDS`` that would stay unsure read again
    sharpened (``deblur.sharpened_choices``) through its outline and ``AGREE_NUDGES`` about
    it: when, on one of the sharpened photos (the deepest streak's first), the mean of
    those seven readings gives the label it was read as ``UNSURE`` or more, it takes
    that mean, the way up most of them read it (and is no longer doubted, nor asked of
    Tesseract). The same label read both blurred and
    sharpened, through outlines a little off, is not sure by chance; a label the
    sharpened photo alone reads is not taken (dev 61613 normal, through a fit askew before
    ``_fits_outvote``: a 6 read 5 at 0.57, 5
    at 0.93 sharpened through its outline but 0.45-0.88 or 6 through the nudged ones)."""
    doubted = read.data.get(DOUBTED, (None,) * len(read))
    pieces = [i for i in read if read.kinds[i] in SHARPENED_KINDS and read.labels[i] is not None
              and available_model(read.kinds[i], models_dir)
              and (float(read.confidences[i]) < UNSURE or doubted[i] is not None)]
    choices = sharpened_choices(balanced, read.quads[pieces], STREAK_CHOICES) if pieces else []
    kept = list(doubted)
    for kind in sorted({read.kinds[i] for i in pieces} if choices else ()):
        model = load_model(kind, models_dir)
        mine = [i for i in pieces if read.kinds[i] == kind]
        outlines = [[read.quads[i], *(nudged(read.quads[i], *nudge) for nudge in AGREE_NUDGES)]
                    for i in mine]
        changes: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]] = {}
        for sharp in choices:
            readings = iter(read_quads(model, sharp, [q for qs in outlines for q in qs]))
            for i, quads in zip(mine, outlines, strict=True):
                again = [next(readings) for _ in quads]
                mean = np.mean([r.probs for r in again], axis=0)
                label = model.labels.index(str(read.labels[i]))
                if i in changes or int(mean.argmax()) != label or float(mean[label]) < UNSURE:
                    continue
                turned = 2 * sum(r.turned for r in again) > len(again)
                changes[i] = (rotate_quad(read.quads[i], 2) if turned else read.quads[i], mean)
                kept[i] = None
        read = with_readings(read, model, changes)
    return read.with_fields(data={**read.data, DOUBTED: tuple(kept)})


def _sheet_upright(quad: npt.NDArray[np.float32], boxes: Sequence[Any]
                   ) -> tuple[npt.NDArray[np.float32], bool]:
    """The sheet's quad started at its upright top-left, the corner nearest its red 2
    box (the sheet reader has found which way up it lies), and whether that is known."""
    first = next((b for b in boxes if b.get("row") == "red" and b.get("value") == 2), None)
    if first is None or first.get("quad") is None:
        return quad, False
    centre = np.asarray(first["quad"], np.float32).reshape(4, 2).mean(axis=0)
    k = int(np.argmin(np.linalg.norm(np.asarray(quad, np.float32) - centre, axis=1)))
    return rotate_quad(quad, k), True


def _read_along_rows(model: Model, balanced: Image, starts: list[npt.NDArray[np.float32]],
                     readings: list[Reading]) -> set[int]:
    """Cards of a row (``cards.PAIR_KINDS``) read along it, in place: the square-looking
    ones first (``_turned_square``); then any card whose neighbour lies beyond its top
    or bottom is read a quarter turn round too and taken so when that is sure and the
    outline as given is not (``FORESHORTENED_SURE``), or left unsure when both are sure
    of different numbers; then the square-looking cards beside the cards turned so.
    Returns the cards left unsure so: which side is their top the photo does not tell,
    and they are not read again through nudged or fitted outlines, which keep the
    outline's turn and read one way surely again (dev 61600 hard, Cat in the Box: a 2
    squeezed square by the camera read 8 at 0.98 on its side and 2 a quarter turn round,
    then 8 at 0.99 through a nudged outline, the trick read whole and wrong; left
    unsure, Tesseract's second opinion reads it 2). Photo -> state, that scene exact,
    no other change: Cat in the Box hard 61600, 61900, 60500 + 60, normal 61700 + 60;
    Nox hard 61900, 60700 + 60, normal 61000 + 60."""
    turned = _turned_square(model, balanced, starts, readings, set())
    maybe = [k for k in across_neighbour(starts, any_shape=True) if k not in turned]
    disputed: set[int] = set()
    for k, reading in zip(maybe, read_quads(
            model, balanced, [rotate_quad(starts[k], 1) for k in maybe]), strict=True):
        if reading.probs.max() < FORESHORTENED_SURE:
            continue
        if readings[k].probs.max() < FORESHORTENED_SURE:
            starts[k], readings[k] = rotate_quad(starts[k], 1), reading
            turned.add(k)
        elif reading.probs.argmax() != readings[k].probs.argmax():  # sure both ways
            readings[k] = Reading((readings[k].probs + reading.probs) / 2, readings[k].turned)
            disputed.add(k)
    _turned_square(model, balanced, starts, readings, turned)
    return {k for k in disputed if k not in turned}


def _turned_square(model: Model, balanced: Image, starts: list[npt.NDArray[np.float32]],
                   readings: list[Reading], turned: set[int]) -> set[int]:
    """``turned`` and the square-looking cards not in it whose nearest card lies beyond
    their top or bottom (``across_neighbour``), those read a quarter turn round, in
    place: a row's cards lie side by side."""
    turn = [k for k in across_neighbour(starts) if k not in turned]
    for k, reading in zip(turn, read_quads(
            model, balanced, [rotate_quad(starts[k], 1) for k in turn]), strict=True):
        starts[k], readings[k] = rotate_quad(starts[k], 1), reading
    return turned | set(turn)


def classify(image: Image, detections: Detections, *, game: str,
             use_classifier: bool = True, ocr: str = "auto",
             models_dir: Path = MODELS_DIR, deck: DeckProfile | None = None,
             markers: Sequence[Any] = ()) -> Detections:
    """Label every piece in ``detections`` whose kind has a model; quads come back
    starting at the piece's upright top-left with ``oriented`` True, confidences, and
    ``data["alternatives"]`` (top-3 (label, probability) pairs), ``data["second_opinion"]``
    (whether Tesseract was asked, the CNN being unsure); Rox cards also get
    ``data["edge"]`` = {element: count} of their 16 edge symbols, and a confidence no
    higher than the chance that all 16 were read right (that chance alone:
    ``data["edge_sure"]``), and ``data["up"]``: their up in
    the photo as their centre symbol shows it (``rox_faces.face_ups``). Qwixx sheets get
    ``data["boxes"]``: every box crossed or not (``companion.vision.sheet.read_sheet``;
    ``markers`` are the photo's ArUco markers, for our printed sheet's 20–23). Nummix tiles get
    ``data["front"]``: the band at each tile's foot (``companion.vision.standing``);
    a Nummix outline may come back cut in two to four (``split_joined_tiles``), an
    unsure one at a tile's size (``tile_sized``), moved onto the tile it straddles
    (``stepped_from_neighbours``) or to its nearest sure neighbour's outline
    (``nearest_sure_outline``) or dropped as no tile (``without_strays``), and two
    or three Nox or Qwixx cards in one outline as that many (``split_card_pairs``), so
    rows need not match the detections given."""
    if game not in GAMES:
        raise InputError("game", f"unknown game {game!r}; one of: {', '.join(GAMES)}")
    if ocr not in OCR_MODES:
        raise InputError("ocr", f"expected one of {', '.join(OCR_MODES)}, not {ocr!r}")
    if not use_classifier and ocr == "off":
        raise InputError("ocr", "with the classifier off, Tesseract must be allowed")
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise InputError("image", "expected a BGR uint8 image (height, width, 3)")
    n = len(detections)
    if n == 0:
        return detections
    balanced = apply_gains(image, white_gains(image))  # once per photo, by table lookup
    if deck is not None:  # the user's enrolled deck, mapped to the look the models know
        balanced = deck.correct(balanced)
    if use_classifier:
        detections = split_card_pairs(balanced, detections, models_dir)
    if use_classifier and available_model("rox_edge", models_dir):
        detections = element_cards_by_edges(balanced, detections, models_dir)
    detections = boards_upright(balanced, detections)
    if use_classifier:
        detections = trimmed_to_card_size(balanced, detections, models_dir)
    n = len(detections)
    quads = detections.quads.copy()
    labels: list[str | None] = list(detections.labels)
    confidences = detections.confidences.astype(np.float32).copy()
    oriented = list(detections.oriented)
    alternatives: list[tuple[tuple[str, float], ...]] = list(
        detections.data.get("alternatives", ((),) * n))
    probabilities: list[Any] = [None] * n  # PROBABILITIES: for Tesseract, asked last
    doubted: list[Any] = [None] * n  # DOUBTED: sure readings that nudged outlines doubt
    joined = detections.data.get(JOINED, (False,) * n)
    for kind in sorted(set(detections.kinds)):
        rows = [i for i in range(n) if detections.kinds[i] == kind]
        if not available_model(kind, models_dir):
            continue
        model = load_model(kind, models_dir)
        size = model.size
        starts = [portrait_first(quads[i], size) for i in rows]
        if not use_classifier:
            if kind not in NUMBER_REGION:
                continue
            for i, q in zip(rows, starts, strict=True):
                label, conf, turned, alts = _ocr_only(kind, balanced, q, size)
                quads[i] = rotate_quad(q, 2) if turned else q
                labels[i], confidences[i], oriented[i], alternatives[i] = (
                    label, conf, label is not None, alts)
            continue
        readings = read_quads(model, balanced, starts)
        disputed = (_read_along_rows(model, balanced, starts, readings)  # sure both ways
                    if kind in PAIR_KINDS else set())
        retry = [k for k, r in enumerate(readings)
                 if r.probs.max() < UNSURE and k not in disputed]
        if retry and kind in RETRY_KINDS:  # unsure: read again through other outlines
            _read_again(model, balanced, starts, readings, [
                (k, read, report) for k in retry
                for read, report in _other_outlines(starts[k], kind)])
        still = [k for k in retry if readings[k].probs.max() < UNSURE]
        if still and kind in PIECE_ASPECT:  # still unsure: its outline fitted to the photo
            smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
            _read_again(model, balanced, starts, readings, [
                (k, fit, fit) for k in still for fit in fit_card_outline(
                    smooth, starts[k], aspect=PIECE_ASPECT[kind], count=EDGE_FITS)])
        if kind in AGREE_KINDS:  # sure only if outlines a little off read the same
            for k, least in _doubted_unless_nudges_agree(model, balanced, kind, starts,
                                                         readings).items():
                doubted[rows[k]] = least
        for i in rows:  # two or three cards in one outline: not one card's reading
            if joined[i]:
                cap = np.full(len(model.labels), JOINED_CONFIDENCE)
                doubted[i] = cap if doubted[i] is None else np.minimum(doubted[i], cap)
        for i, q, reading in zip(rows, starts, readings, strict=True):
            upright = rotate_quad(q, 2) if reading.turned else q
            quads[i] = upright
            oriented[i] = model.oriented
            labels[i], confidences[i], alternatives[i] = top_labels(model.labels, reading.probs)
            probabilities[i] = reading.probs
    data = dict(detections.data)
    data["alternatives"] = tuple(alternatives)
    data[PROBABILITIES] = tuple(probabilities)
    data[DOUBTED] = tuple(doubted)
    rox_rows = [i for i in range(n) if detections.kinds[i] == "rox_card"]
    if use_classifier and rox_rows and available_model("rox_edge", models_dir):
        edges: list[Any] = list(data.get("edge", (None,) * n))
        counted: list[Any] = list(data.get("edge_sure", (None,) * n))
        for i, (counts, certainty) in zip(
                rox_rows, read_rox_edges(balanced, quads[rox_rows], models_dir), strict=True):
            edges[i], counted[i] = counts, counted_certainty(certainty)
            confidences[i] = min(centre_certainty(float(confidences[i])), counted[i])
        data["edge"], data["edge_sure"] = tuple(edges), tuple(counted)
        ups: list[Any] = list(data.get("up", (None,) * n))
        for i, up in zip(rox_rows, face_ups(balanced, quads[rox_rows],
                                            [labels[i] for i in rox_rows]), strict=True):
            ups[i] = up
        data["up"] = tuple(ups)
        doubts: list[Any] = list(data.get("centre_doubt", (None,) * n))
        for i, doubt in zip(rox_rows, centre_colour_doubts(
                balanced, quads[rox_rows], [labels[i] for i in rox_rows]), strict=True):
            doubts[i] = doubt
            if doubt is not None:
                confidences[i] = min(float(confidences[i]), CENTRE_DOUBTED_CONFIDENCE)
        data["centre_doubt"] = tuple(doubts)
    others = data.get("other_outlines") or ((),) * n  # the locator's other outlines
    sheet_rows = [i for i in range(n) if detections.kinds[i] == "qwixx_sheet"]
    if sheet_rows:  # box by box: crossed or not (companion.vision.sheet)
        from companion.vision.sheet import read_sheet

        boxes: list[Any] = list(data.get("boxes", (None,) * n))
        for i in sheet_rows:
            boxes[i] = read_sheet(balanced, quads[i], markers=markers, balanced=True,
                                  starts=others[i])
            quads[i], oriented[i] = _sheet_upright(quads[i], boxes[i])
        data["boxes"] = tuple(boxes)
    read = detections.with_fields(quads=quads, labels=tuple(labels), confidences=confidences,
                                  oriented=tuple(oriented), data=data)
    if sheet_rows:
        read = _sheets_cut_in_two(read, balanced, markers)
        read = _without_sheets_of_no_paper(read, balanced, markers)
        read = _sheets_at_their_size(read, balanced, markers)
        if use_classifier:
            read = cards_checked_on_sheets(read, balanced, markers, models_dir)
            read = _with_sheets_outlined_as_cards(read, balanced, markers)
        read = without_printed_boxes(read)
    if game == "catbox":
        board = largest_board_view(read, balanced)  # one warp for both token steps
        read = without_doubtful_tokens(read, board)
        read = observed_by_colour(read, board)
        read = with_covered_cells(read, board)
        if use_classifier:
            read = joined_card_halves(balanced, read, models_dir)
        read = without_strays(read, balanced, "catbox_card")
        read = cards_under_a_hand(joined_cards_doubted(without_cards_on_nothing(read)),
                                  balanced)
    if game == "nox":
        if use_classifier:
            read = nox_cards_at_card_size(balanced, joined_nox_halves(
                balanced, read, models_dir), models_dir)
        read = without_doubles(without_strays(read, balanced, "nox_card"), "nox_card")
    if game == "rox":
        if use_classifier:
            read = scoring_cards_by_number(balanced, read, models_dir)
            read, enlarged = scoring_cards_enlarged(balanced, read, models_dir)
            if enlarged:  # read sure and agreeing through the larger outlines
                read = read.with_fields(data={**read.data, DOUBTED: tuple(
                    None if i in enlarged else d
                    for i, d in enumerate(read.data.get(DOUBTED, (None,) * len(read))))})
            read = _sharpened_readings(read, balanced, models_dir)
        read = without_scoring_strays(without_strays(read, balanced, "rox_card"))
    if game == "nummix":
        tile_model = (load_model("nummix_tile", models_dir) if use_classifier
                      and available_model("nummix_tile", models_dir) else None)
        if tile_model is not None:
            read = split_joined_tiles(read, balanced, tile_model)
            read = tile_sized(read, balanced, tile_model)
            read = stepped_from_neighbours(read, balanced, tile_model)
            read = missed_beside_sure(read, balanced, tile_model)
            read = without_strays(read, balanced, "nummix_tile")
        read = feet_on_ledges(read, balanced, models_dir if use_classifier else None)
        if tile_model is not None:  # after the feet: only tiles lying on the table
            read = nearest_sure_outline(facing_neighbours(read, balanced, tile_model), balanced,
                                        tile_model)
    return _second_opinion(read, balanced, models_dir, ask=ocr == "auto")


SHEETS_JOINED = 1.6
"""A sheet outline read unsure as a whole is tried as two sheets (``_sheets_cut_in_two``)
only when it covers this many sheets or more on the table, measured in the plane of the
nearest sheet read surely: the two joined outlines of dev 61047 and 61606 measured 1.88
and 2.14, blurred or partly hidden single sheets 0.44-1.26 (60005, 61334, 61348), and
the halves of a blurred single sheet can each read surely (60005)."""


def _sheets_cut_in_two(read: Detections, balanced: Image, markers: Sequence[Any]
                       ) -> Detections:
    """``read`` with each Qwixx sheet read unsure as a whole (``sheet.SHEET_SURE``) and
    ``SHEETS_JOINED`` sheets large taken as two sheets touching when both halves of its
    outline, cut across its longer sides, read surely: the locator outlines two sheets
    lying edge to edge as one (dev 61047 normal, 61606 hard; two pads side by side have
    one pad's aspect, A-paper's). The first half keeps the sheet's place, the second is
    added last."""
    from companion.synth.pieces import PIECE_MM
    from companion.vision.sheet import read_sheet, read_surely

    planes = sheet_planes(read, markers, sure=True)
    if not planes:
        return read
    boxes = list(read.data.get("boxes", (None,) * len(read)))
    quads, oriented = read.quads.copy(), list(read.oriented)
    added = []
    for i in read:
        if read.kinds[i] != "qwixx_sheet" or not boxes[i] or read_surely(boxes[i]):
            continue
        to_image = nearest_plane(planes, read.quads[i])
        outline = on_table(read.quads[i], to_image).astype(np.float32)
        if cv2.contourArea(outline) < SHEETS_JOINED * float(np.prod(PIECE_MM["qwixx_sheet"])):
            continue
        halves = cut_across(read.quads[i], 2)
        read_halves = [read_sheet(balanced, half, markers=markers, balanced=True)
                       for half in halves]
        if not all(read_surely(b) for b in read_halves):
            continue
        (first, second), (first_boxes, second_boxes) = halves, read_halves
        quads[i], oriented[i] = _sheet_upright(first, first_boxes)
        boxes[i] = first_boxes
        quad, up = _sheet_upright(second, second_boxes)
        extra = read.select([i])
        added.append(extra.with_fields(quads=quad[None], oriented=(up,), data={
            **extra.data, "boxes": (second_boxes,)}))
    if not added:
        return read
    read = read.with_fields(quads=quads, oriented=tuple(oriented),
                            data={**read.data, "boxes": tuple(boxes)})
    return Detections.concat([read, *added])


SIZED_SHEET_SMALL = 0.7
"""A pad read unsure as a whole is read again at a pad's size (``_sheets_at_their_size``)
only when its outline covers under this share of a pad on the table (in the nearest
sheet read surely's plane): dev 61404's covered 0.45. Of 23 unsure pads on dev normal
61113-61718 and hard 61003-61918 the others covered 0.33-0.62 (fingers outlined as a
sheet 0.33, 0.34: 61417, 61419, now dropped before, ``_without_sheets_of_no_paper``;
pads half under a hand 0.47, 0.56, 0.62) or 0.75-1.42.
Read again, a photo costs 0.8-0.9 s more (dev 61409, 61417, 61419); without this bar no
pad but 61404's read otherwise on dev 61000, 61400, 61600 + 0-39 normal and 61900 + 0-39
hard."""
SIZED_SHEET_INSIDE = 0.3
"""A pad read again from a start of a pad's size is taken only when at least this share
of its located outline lies within the pad so found: the found pad is the outlined one,
not a neighbour (dev 61404's outline lay all within its pad; an outline run from a pad on
to a hand, hard 61528, lies about half on it). Chosen, not tuned."""
SIZED_SHEET_OVERLAP = 0.2
"""... nor when the pad so found overlaps another located sheet's outline by more than
this (intersection over union): a search slid on to the next pad would read that pad
surely, a sheet twice. Chosen, not tuned: pads apart barely overlap, a pad found twice
nearly wholly."""


def _sheets_at_their_size(read: Detections, balanced: Image, markers: Sequence[Any]
                          ) -> Detections:
    """``read`` with each pad read unsure as a whole (``sheet.SHEET_SURE``) and outlined
    small (``SIZED_SHEET_SMALL``) read again from a start of a pad's size: its outline's
    middle and long side's direction in the plane of the nearest sheet read surely, the
    pad's millimetres there. The locator can outline half a pad (dev 61404, a washed-out
    pad), and the fit's own search looks only at sizes near the outline's. Taken when it
    reads surely, holds ``SIZED_SHEET_INSIDE`` of the outline and lies on no other sheet
    (``SIZED_SHEET_OVERLAP``); the sheet's outline is then the found pad's."""
    from companion.synth.pieces import PIECE_MM
    from companion.vision.detections import quad_iou
    from companion.vision.sheet import printed_sheet, read_sheet, read_surely, sheet_plane

    planes = sheet_planes(read, markers, sure=True)
    if not planes:
        return read
    boxes = list(read.data.get("boxes", (None,) * len(read)))
    quads, oriented = read.quads.copy(), list(read.oriented)
    sheets = [i for i in read if read.kinds[i] == "qwixx_sheet"]
    width, height = PIECE_MM["qwixx_sheet"]
    face = np.array([[[0, 0]], [[width, 0]], [[width, height]], [[0, height]]], np.float64)
    changed = False
    for i in sheets:
        if not boxes[i] or read_surely(boxes[i]) or printed_sheet(markers, read.quads[i]):
            continue
        to_image = nearest_plane(planes, read.quads[i])
        outline = on_table(read.quads[i], to_image)
        if abs(cv2.contourArea(outline.astype(np.float32))) >= SIZED_SHEET_SMALL * width * height:
            continue
        along, across = side_directions(outline)
        if np.linalg.norm(across) > np.linalg.norm(along):
            along = across
        u = along / (np.linalg.norm(along) + 1e-9)
        v = np.array([-u[1], u[0]])
        half_w, half_h = u * width / 2, v * height / 2
        rect = outline.mean(axis=0) + np.array(
            [-half_w - half_h, half_w - half_h, half_w + half_h, -half_w + half_h])
        start = cv2.perspectiveTransform(rect.reshape(-1, 1, 2), to_image).reshape(4, 2)
        again = read_sheet(balanced, start.astype(np.float32), markers=markers,
                           balanced=True, starts=[read.quads[i]])
        if not read_surely(again):
            continue
        h = sheet_plane(again, printed=False)
        if h is None:
            continue
        found = cv2.perspectiveTransform(face, h).reshape(4, 2).astype(np.float32)
        located = read.quads[i].astype(np.float32)
        inside, _ = cv2.intersectConvexConvex(located, found)
        if inside < SIZED_SHEET_INSIDE * abs(cv2.contourArea(located)) or any(
                quad_iou(found, read.quads[j]) > SIZED_SHEET_OVERLAP for j in sheets if j != i):
            continue
        quads[i], oriented[i] = _sheet_upright(found, again)
        boxes[i] = again
        changed = True
    if not changed:
        return read
    return read.with_fields(quads=quads, oriented=tuple(oriented),
                            data={**read.data, "boxes": tuple(boxes)})


SHEET_PAPER_CROP = (64, 48)
"""Crop size a sheet outline's paper share is measured on (``_paper_share``)."""
SHEET_PAPER_CHROMA = 8.0
SHEET_PAPER_DARKER = 60.0
"""A pixel is the pads' paper when within this far of the surely read pads' face colour
(``strays.face_colours``) in colour (a*b*), and at most this much darker: a pad in a
hand's shadow is still its paper. Chosen with ``SHEET_PAPER_LEAST`` from 8, 12, 16 and
30, 60, any: the widest gap between fingers and pads half hidden."""
SHEET_PAPER_LEAST = 0.02
"""A pad read unsure as a whole with under this share of its outline the paper of the
pads read surely in the photo is no pad (``_without_sheets_of_no_paper``). The 21 pads
read unsure beside a pad read surely on dev 61000, 61100, 61300, 61400, 61600, 61700 +
0-39 normal and 61000, 61500, 61900 + 0-39 hard: the 3 outlines of fingers on no piece
(61417, 61419 normal, 61536 hard) had under 0.005; the 18 true pads 0.04 (hard 61528
Sofia's, 0.90 seen, under a hand), 0.11 (61127 Lea's, 0.40 seen; hard 61520 Ben's, 0.68;
hard 61918 Claire's, 0.39) and 0.15-0.34."""


def _paper_share(balanced: Image, quad: npt.NDArray[np.float32], paper: npt.NDArray[np.float64]
                 ) -> float:
    """The share of ``quad``'s pixels the colour of the sheets' ``paper`` (CIELAB, 8-bit
    scale), within ``SHEET_PAPER_CHROMA`` in colour and ``SHEET_PAPER_DARKER`` darker."""
    crop = rectify(balanced, quad, size=SHEET_PAPER_CROP)
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float64)
    near = np.hypot(lab[:, 1] - paper[1], lab[:, 2] - paper[2]) < SHEET_PAPER_CHROMA
    return float((near & (lab[:, 0] > paper[0] - SHEET_PAPER_DARKER)).mean())


def _without_sheets_of_no_paper(read: Detections, balanced: Image, markers: Sequence[Any]
                                ) -> Detections:
    """``read`` without each pad read unsure as a whole (``sheet.SHEET_SURE``) of which
    under ``SHEET_PAPER_LEAST`` is the paper of the pads read surely in the photo: a
    hand's fingers outlined as a pad (dev 61417, 61419 normal, 61536 hard), which would
    stand in the state as an unread pad. A pad half under a hand still shows its paper.
    Run before ``_sheets_at_their_size``, which would read the fingers again at a pad's
    size for nothing (61417: 1.7 -> 1.1 s a photo; 61419: 1.8 -> 0.8 s)."""
    from companion.vision.sheet import printed_sheet, read_surely
    from companion.vision.strays import face_colours

    boxes = read.data.get("boxes", (None,) * len(read))
    sheets = [i for i in read if read.kinds[i] == "qwixx_sheet" and boxes[i]
              and not printed_sheet(markers, read.quads[i])]
    sure = [i for i in sheets if read_surely(boxes[i])]
    unsure = [i for i in sheets if i not in sure]
    if not sure or not unsure:  # the paper's colour is measured only when it is needed
        return read
    paper = np.median(face_colours(balanced, [read.quads[i] for i in sure]), axis=0)
    no_pads = {i for i in unsure
               if _paper_share(balanced, read.quads[i], paper) < SHEET_PAPER_LEAST}
    return read.select([i for i in read if i not in no_pads]) if no_pads else read


def _with_sheets_outlined_as_cards(read: Detections, balanced: Image, markers: Sequence[Any]
                                   ) -> Detections:
    """``cards.sheets_outlined_as_cards``, each new sheet's quad started at its upright
    top-left and each outline it doubts kept doubted (``DOUBTED``) as the joined ones are
    (Tesseract confirming its number lifts the cap)."""
    before = read.kinds
    read, joined = sheets_outlined_as_cards(read, balanced, markers)
    quads, oriented = read.quads.copy(), list(read.oriented)
    doubted = list(read.data.get(DOUBTED, (None,) * len(read)))
    probabilities = list(read.data.get(PROBABILITIES, (None,) * len(read)))
    for i in read:
        if read.kinds[i] != before[i]:  # a card outline read as a sheet
            quads[i], oriented[i] = _sheet_upright(quads[i], read.data["boxes"][i])
            probabilities[i], doubted[i] = None, None
    for i in joined:
        if probabilities[i] is not None:
            cap = np.full(len(probabilities[i]), JOINED_CONFIDENCE)
            doubted[i] = cap if doubted[i] is None else np.minimum(doubted[i], cap)
    return read.with_fields(quads=quads, oriented=tuple(oriented), data={
        **read.data, DOUBTED: tuple(doubted), PROBABILITIES: tuple(probabilities)})


def _second_opinion(read: Detections, balanced: Image, models_dir: Path, *, ask: bool
                    ) -> Detections:
    """Tesseract's reading folded into every numbered piece the CNN still reads unsure
    (``UNSURE``) once the photo is read (``_with_ocr``; all in one Tesseract process),
    and ``data["second_opinion"]``: whether it was asked. Asked last, it reads each
    piece through the outline and the way up the reader settled on, and not the pieces
    read sure again, cut in two or dropped as no piece (a Tesseract process costs ~100
    ms, more than the rest of a photo's reading)."""
    probabilities = read.data.get(PROBABILITIES, (None,) * len(read))
    doubted = read.data.get(DOUBTED, (None,) * len(read))
    unsure = [i for i in read if ask and probabilities[i] is not None
              and read.kinds[i] in NUMBER_REGION and (float(probabilities[i].max()) < UNSURE
                                                      or doubted[i] is not None)]
    data = {k: v for k, v in read.data.items() if k not in (PROBABILITIES, DOUBTED, UPRIGHT_VIEWS)}
    data["second_opinion"] = tuple(i in unsure for i in read)
    confirmed: set[int] = set()
    if unsure:
        read, confirmed = _with_tesseract(read, balanced, models_dir, unsure, probabilities,
                                          data)
    else:
        read = read.with_fields(data=data)
    return _doubts_kept(read, doubted, confirmed, models_dir)


def _doubts_kept(read: Detections, doubted: Sequence[Any], confirmed: set[int],
                 models_dir: Path) -> Detections:
    """``read`` with each doubted piece (``DOUBTED``) that Tesseract did not confirm
    (``confirmed``) no surer than the least probability a reading gave its label."""
    capped = [i for i in read if doubted[i] is not None and i not in confirmed
              and read.labels[i] is not None]
    if not capped:
        return read
    confidences = read.confidences.copy()
    for i in capped:
        labels = load_model(read.kinds[i], models_dir).labels
        least = float(doubted[i][labels.index(read.labels[i])])
        confidences[i] = min(float(confidences[i]), least)
    return read.with_fields(confidences=confidences)


def _with_tesseract(read: Detections, balanced: Image, models_dir: Path, unsure: list[int],
                    probabilities: Sequence[Any], data: dict[str, Any]
                    ) -> tuple[Detections, set[int]]:
    """``_second_opinion``'s Tesseract readings of the ``unsure`` pieces folded in, and the
    pieces whose number Tesseract read as their label's, surely (``MIN_CONFIDENCE``)."""
    from companion.vision.ocr import read_numbers

    models = {kind: load_model(kind, models_dir) for kind in {read.kinds[i] for i in unsure}}
    big = [rectify(balanced, read.quads[i], size=(
        models[read.kinds[i]].size[0] * OCR_SCALE, models[read.kinds[i]].size[1] * OCR_SCALE))
        for i in unsure]
    opinions = read_numbers(big, max_values=[MAX_NUMBER[read.kinds[i]] for i in unsure],
                            regions=[NUMBER_REGION[read.kinds[i]] for i in unsure])
    labels = list(read.labels)
    confidences = read.confidences.copy()
    alternatives = list(data.get("alternatives", ((),) * len(read)))
    confirmed = set()
    for i, (number, conf) in zip(unsure, opinions, strict=True):
        kind_labels = models[read.kinds[i]].labels
        probs = _with_ocr(kind_labels, probabilities[i], number, conf)
        labels[i], confidences[i], alternatives[i] = top_labels(kind_labels, probs)
        if read.kinds[i] in OCR_DISAGREES_KINDS and labels[i] != read.labels[i]:
            confidences[i] = min(float(confidences[i]), OCR_DISAGREES_CONFIDENCE)
        if number is not None and conf >= MIN_CONFIDENCE and number_of(labels[i]) == number:
            confirmed.add(i)
    data["alternatives"] = tuple(alternatives)
    return read.with_fields(labels=tuple(labels), confidences=confidences, data=data), confirmed


