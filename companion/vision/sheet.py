"""Read every box of a Qwixx score sheet in a photo: crossed or not, and how sure.

Two geometries. Our printed sheet (``calibration/qwixx_sheet.py``) carries markers
20–23 in its corners: they fix a homography from sheet millimetres to the image and
every box's quad follows exactly. The original pad (drawn by ``companion.synth`` with
``qwixx_sheet_layout``, the one geometry table both use) has no markers: its located
quad is rectified upright (the turn chosen so the red row is on top, blue at the
bottom) and the boxes are placed from that layout. The foul row, below the coloured rows
the fit sees, is moved on its own when the box model is unsure of it where the fit put
it and sure of it a little above or below (``_foul_refit``). Before that, a pad with a
coloured box the model is unsure of is moved and stretched a little to where the model
is surest of its coloured rows (``_surest_shift``): on a blurred photo the fit can lie a
third of a box off (on a small pad, only what the move settles on evidence is read:
``_unsettled_by_move``).

Crossed or not is judged from pixel statistics after white balance: each row's empty
box colour and its print colour are measured on the sheet itself (the box interiors'
bright mode, the ring around the boxes), and a box's "foreign ink" is what lies off
the line between those two colours (a pen of another colour, or darker than the print:
a blue pen on the blue row) or anywhere in the box's corners, where no number is
printed but every X, stroke and filled box passes. A small logistic model over those
statistics, fitted on rendered sheets, gives the probability; the confidence is
``2·|p − ½|``, so a box near the boundary is reported unsure, never guessed. A pad's
box with skin round it where its row's print should be lies under a hand: it is
reported unsure and ``covered`` (``_under_skin``), whatever the model read there. A box
the model reads empty, not quite surely, where the ink statistics show a mark, is
reported unsure too (``_ink_disputes``): two readers that disagree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.synth.pieces import INK, PIECE_MM, qwixx_row_numbers, qwixx_sheet_layout
from companion.vision.align import LONG_SIDE, align_to_layout, fits_remembered, search_layout
from companion.vision.colour import skin_hued, white_balance
from companion.vision.detections import MIN_CONFIDENCE, same_corner_order

Image = npt.NDArray[np.uint8]
Quad = npt.NDArray[np.float32]

ROWS = ("red", "yellow", "green", "blue")
SHEET_IDS = (20, 21, 22, 23)
PAD_PX_PER_MM = 2.0
"""The pad's canonical face: this many pixels per millimetre (296×210)."""
CROP = (16, 20)
"""Box interiors are sampled at this (width, height) in pixels."""
INSET = 0.1
"""A box's interior starts this fraction of its side in from its edge."""
BOX_MARGIN = 0.1
"""The box model's crop reaches this share of the box's side beyond each edge."""
MIN_ORIENTATION = 0.15
"""Row colours must prefer the chosen turn by this margin, else every box is unsure."""
SHEET_FIT_GOOD = 0.85
"""A sheet's fit to the printed layout from the located quad correlating this well is
kept without trying the locator's other outlines: on scenes 61300-61339 they won by
more than 0.02 only over fits of 0.84 or less (the first fits' median 0.87)."""
SEARCH_GAIN = 0.3
"""A fit started where template matching finds the rows (``_searched_fit``) is read only
when it correlates this much better than the best fit from the locator's outlines: an
outline far off fits much worse than the found place (dev scenes 61011, 61014, 61454:
0.31-0.38 against 0.77-0.83), while on a sheet whose print is faint every fit is poor
and a found place a row or column away wins by little (60613, 60617, 60630: 0.12-0.22)."""
PRINT_AGREES = 0.15
"""A fit under ``SHEET_FIT_GOOD`` is taken as right when its boxes' printed numbers
agree with it by this much more than with the fit a column either way
(``printed_agreement``); else it is started again a column either way of itself and of
the located outline (``_column_refit``). Dev sheets (seeds 61200, 61300, 61500, 61600
+ 0-39, normal and hard): 316 of 444 right fits confirmed, and 22 of 975 fits a column
or more off (most of those the true quad moved by a column)."""
REFIT_FINE = 1
"""So many of the four starts a column away are fitted finely, the best by the coarse
fit. Fitting all four finely read dev sheets no better (wrong boxes normal 124 against
118 here, hard 165 against 167) and put 18 rather than 13 of 19 test sheets located a
column off back in place, at about twice the time on the photos that need it."""
SLIP_GAIN = 0.04
"""A fit started a column away replaces the first when it correlates this much better
(ECC's own measure; the box model is surer on a slipped fit as often as not)."""
FOUL_REACH = 0.4
"""The foul row, printed below the coloured rows the fit sees, is looked for up to this
share of a row's height above and below where the fit puts it (``_foul_refit``)."""
FOUL_STEP = 0.05
"""In steps of this share of a row's height."""
FOUL_SURE = 0.7
"""A moved foul row is kept when the box model's mean sureness over its four boxes is at
least this, at its place and a step either way."""
MOVE_MIN_ROW_PX = 11.0
"""The foul row is moved on its own (``_foul_refit``) only on sheets whose rows are this
many pixels high or more in the photo (foul boxes of 7 px or more): on smaller ones the
model was sure of wrong places as often (hard dev scene 61820: rows 10 px high, an
empty box read crossed 0.82 a fifth of a box away; 10 px turned its verdict wrong).
From 12 to 11 px: normal dev scene 60412 (rows 11.7 px, one box unsure) read exactly,
no other dev scene changed (normal 60000, 60400, 61000, 61100, 61800, hard 61000, 61800
+ 0-39). Below it a pad moved whole (``_surest_shift``) keeps only what the move settles
on evidence (``_unsettled_by_move``)."""
SHIFT_MIN_ROW_PX = 10.0
"""The whole pad is moved (``_surest_shift``) on sheets whose rows are this many pixels
high or more (11 before). Between this and ``MOVE_MIN_ROW_PX`` the move is judged by the
coloured rows alone and its readings are checked (``_unsettled_by_move``): the foul row,
moved along unjudged, is read there only where the fit read it surely the same way (dev
61003: Lea's pad, rows 10.6 px, fitted 1.4 px off, read green 12 and 11 unsure at the fit
and right moved, where fouls 3 and 4 read crossed; dev 61089: Ben's fouls read crossed
after the move, 0.69-0.80, where the fit read them unsure), and a coloured box the move
settles is read only where its ink statistics read it the same way (hard dev 61820:
Tom's red 12 read crossed 0.95 moved, 0.16 by its ink). Located sheets (dev 61000 + 0-99
normal, hard 61900 and 61800 + 0-39): boxes read right 10195 -> 10198, 3874 -> 3977 and
3719 -> 3726, unsure 45 -> 42, 128 -> 25 and 177 -> 170, read surely wrong 4, 2 and 4
unchanged (61820 Tom's green 11 right, green 5 wrong). Lower was not tried."""
SHIFT_STEPS = (0.2, 0.1)
"""A pad whose coloured rows hold a box the model is unsure of is moved along and across
its rows (``_surest_shift``) on a grid of this share of a column and of a row, then of
the second share around the surest place."""
SHIFT_REACH = 0.4
"""The coarse grid reaches this share of a column and of a row either way."""
SHIFT_STRETCHES = (0.92, 0.95, 0.98, 1.02, 1.05, 1.08)
"""Then its height is scaled by each of these about its coloured rows' middle (a fit
that spreads the rows puts the foul row below them further off)."""
SHIFT_GAIN = 0.02
"""The surest place is kept when the model's mean sureness over the coloured rows'
boxes there beats the fit's by this much,"""
SHIFT_SURE = 0.9
"""and is this much or more: a sheet under a hand reads unsure everywhere (hard dev
scenes 61801, 61819: 0.70 -> 0.78 and 0.62 -> 0.76; blurred sheets moved right:
0.95-0.98)."""
SHIFT_CORNER = 0.1
"""After the grid, each corner of the surest place is moved this share of a column along
and of a row across (``_surest_corners``), the surest of those 16 kept, then the same
again (half as far if no move was surer) for ``SHIFT_CORNER_ROUNDS`` rounds. Dev scenes
(61600, 61700, 61940 + 0-59 normal, 61900 + 0-59 hard; 39 of 467 sheets searched):
coloured boxes read surely wrong 104 -> 101, unsure 1072 -> 1060 (61638: red 2 and
green 9 read wrong at a fit 3 px off, right after), newly wrong 2 (61718: a sheet
fitted 42 px off, 11 boxes already wrong; red 9, green 10 unsure -> wrong at 0.7, 0.8).
A step of 0.2 or 4 rounds wandered further on sheets fitted far off (wrong 105, 103)."""
SHIFT_CORNER_ROUNDS = 2


@dataclass(frozen=True)
class Template:
    """Where a sheet's print lies inside a box (box-normalised u, v in 0..1): the number's
    zone (no mark evidence is needed there to be off-colour), and the ring sampled for
    the row's print colour (``ring`` = (inner, outer) offsets from the box edge)."""

    name: str
    glyph: tuple[float, float, float, float]  # u0, v0, u1, v1 of the printed number
    ring: tuple[float, float]


PAD = Template("pad", (0.12, 0.16, 0.88, 0.84), (0.04, 0.14))
PRINTED = Template("printed", (0.15, 0.18, 0.78, 0.8), (-0.05, 0.05))

SHEET_SURE = 0.96
SHEET_UNSURE_BOX = 0.49
"""A pad whose boxes read at a median confidence under SHEET_SURE is not read at all:
every box's confidence is capped at SHEET_UNSURE_BOX (unsure, so the reader reports it
rather than taking it as read). A sheet blurred by motion, a few pixels a box, or fitted
off reads its boxes unsure in bulk, and those it reads surely are wrong as often (dev
60005: 19 crosses all read surely empty, median 0.92). Located sheets, dev 60000-60099
normal (182 sheets) and 60500-60559 hard (111): the 7 and 6 under 0.96 all had boxes
read wrong (2-19 each, 48 at hard), no sheet read fully right was under 0.98; checked
on dev 60600-60679 normal (169 sheets): the 3 under 0.96 all wrong (4-20 boxes), the
lowest read fully right 0.987. Dev photo -> state: exact unchanged (normal 60000, 60600,
hard 60500), verdict right 39 -> 40 of 40 and 24 -> 26 of 30 (hard)."""


def read_surely(boxes: Sequence[Any] | None) -> bool:
    """Whether a sheet's ``boxes`` (``read_sheet``'s) read surely as a whole: their
    median confidence ``SHEET_SURE`` or more."""
    return bool(boxes) and float(np.median([b["confidence"] for b in boxes])) >= SHEET_SURE


# Logistic model over the box statistics (see ``features``); fitted on rendered sheets
# (``companion.vision.sheet_bench.fit_weights``: seeds 50000…, normal and hard).
WEIGHTS = np.array([-2.5945, 4.1276, 12.2206, 54.1081, -16.3390, 5.6661, -3.5854, -0.7215],
                   np.float64)
BIAS = -8.3032


def read_sheet(image: Image, quad: npt.ArrayLike | None, *, markers: Sequence[Any] = (),
               balanced: bool = False, starts: Sequence[npt.ArrayLike] = ()
               ) -> list[dict[str, Any]]:
    """Every box of the sheet in ``image`` at ``quad`` (four image corners; any start
    corner): ``{"row", "value", "crossed", "confidence", "quad"}`` (and ``"covered":
    True`` on a box seen under a hand), rows red…blue with numbers and ``"lock"``, then
    row ``"foul"`` 1–4. With markers 20–23 of our printed
    sheet (``detect_markers`` output, near the quad) the boxes come from them.
    ``balanced``: the image is already white-balanced. ``starts``: other outlines of the
    sheet (any start corner) that the fit to the printed layout also starts from; the
    fit that correlates best is read. A start fitted or searched twice is worked once
    (``fits_remembered``)."""
    if not balanced:
        image, _ = white_balance(image)
    # the sheet's fits and boxes: small images (_one_cv_thread)
    with _one_cv_thread(), fits_remembered():
        return _read_balanced(image, quad, markers, starts)


def _read_balanced(image: Image, quad: npt.ArrayLike | None, markers: Sequence[Any],
                   starts: Sequence[npt.ArrayLike]) -> list[dict[str, Any]]:
    """``read_sheet`` of a white-balanced ``image``."""
    placed = _printed_boxes(markers, quad)
    template = PRINTED
    certain = 1.0
    upright: Quad | None = None  # the pad's fitted quad, and its located one
    located: Quad | None = None
    fit = 1.0
    if placed == []:  # one marker of our sheet only: its boxes cannot be placed
        from companion.calibration import qwixx_sheet

        return [{"row": b.row, "value": b.value, "crossed": False, "confidence": 0.0,
                 "quad": None} for b in qwixx_sheet.boxes()]
    if placed is None:
        if quad is None:
            return []
        upright, fit, certain, located = _pad_fit(
            image, np.asarray(quad, np.float32).reshape(4, 2), starts=starts)
        placed = _placed(upright)
        template = PAD
    p = _crossed(image, placed, template)
    unsettled = np.zeros(len(placed), bool)  # boxes a move read surely on no evidence
    if upright is not None and located is not None and fit < SHEET_FIT_GOOD and not _print_confirms(
            image, upright, p):  # a weak fit its print does not confirm: a column off?
        moved = _column_refit(image, [upright, located], upright, fit)  # fit or outline
        if moved is None:  # no column away: the rows found about the fit, if they fit
            moved = _searched_refit(image, upright, fit)
        if moved is not None:
            upright = moved
            placed = _placed(moved)
            p = _crossed(image, placed, template)
    if upright is not None and template is PAD:  # a box unsure: the fit a little off?
        shifted = _surest_shift(image, upright, p)
        if shifted is not None:
            upright = shifted
            placed = _placed(shifted)
            before, p = p, _crossed(image, placed, template)
            if _row_px(shifted) < MOVE_MIN_ROW_PX:  # small: what did the move settle?
                unsettled = _unsettled_by_move(image, placed, before, p)
    if upright is not None:  # the foul row lies beyond the fitted rows: placed right?
        refit = _foul_refit(image, upright, p)
        if refit is not None:
            fouls, p_fouls = refit
            placed = placed[:-len(fouls)] + fouls
            p = np.concatenate([p[:-len(fouls)], p_fouls])
    confs = box_sureness(p) * certain
    confs = np.where(unsettled, np.minimum(confs, SHEET_UNSURE_BOX), confs)
    covered = np.zeros(len(placed), bool)
    if template is PAD and (float(np.median(confs)) < SHEET_SURE  # unreadable as a whole
                            or _crosses_without_ink(image, upright, placed, p, confs)):
        confs = np.minimum(confs, SHEET_UNSURE_BOX)
    elif upright is not None:  # a box with skin round it, not its print: under a hand
        covered = _under_skin(image, upright, placed)
        confs = np.where(covered, np.minimum(confs, SHEET_UNSURE_BOX), confs)
        confs = np.where(_ink_disputes(image, placed, p, confs),
                         np.minimum(confs, SHEET_UNSURE_BOX), confs)
    out = []
    for (row, value, q), prob, conf, hidden in zip(placed, p, confs, covered, strict=True):
        box = {"row": row, "value": value, "crossed": bool(prob >= 0.5),
               "confidence": round(float(conf), 4),
               "quad": [[round(float(x), 1), round(float(y), 1)] for x, y in q]}
        if hidden:
            box["covered"] = True
        out.append(box)
    return out


DISPUTE_BELOW = 0.9
"""A box the box model reads empty at under this confidence is checked against the ink
statistics (``_ink_disputes``): on small blurred sheets (boxes 6-10 px) a faint cross,
or one in a pen near its row's colour, reads empty at 0.56-0.84 (dev 61031: a purple X
on the red row's lock box and on foul 2, and the reading claimed to be whole). Located
sheets read surely, boxes read empty: dev 61000 + 0-99 normal, 6 of 6 read wrong were
under 0.9 and 57 of 7050 read right; 61400 + 0-99 normal 4 of 5 and 51 of 7642; hard
61500 + 0-59 14 of 28 and 61 of 3793."""
DISPUTE_INK = 0.15
"""Such a box is reported unsure when the logistic model over its ink statistics
(``box_features``, fitted apart from the box model) gives it this probability of being
crossed or more: above the 95th percentile of the empty number and lock boxes read right
(dev 61000 + 0-99: 0.1 and 0.03; 0.39 for the foul boxes, whose print is a dark outline), below dev
61031's two missed crosses (0.25, 0.27). Same sheets: read wrong and now unsure 6 of 6,
3 of 5 and 8 of 28; read right and now unsure 19, 17 and 11 (all truly empty boxes, so
no state read exactly is lost, only readings that were whole)."""
DISPUTE_INK_LOCK = 0.1
"""The same for a lock box: its print (an L, beside the row's edge) leaves less ink in
the statistics, its empty boxes read right under 0.09 in 99 % (dev 61000 + 0-99), and
crossed locks are missed far more often than numbers (read surely empty: 1.1 %, 1.1 %
and 5.4 % of the crossed locks on dev 61000, 61400 + 0-99 normal and 61500 + 0-59 hard,
against 0.1 %, 0.1 % and 1.6 % of the crossed numbers). Dev 61453 (Marie's green lock,
0.14 by its ink) and hard 61509 (Claire's green lock, 0.12) are unsure too, with no more
empty locks unsure on those five sets (2)."""


def _ink_disputes(image: Image, placed: Placed, crossed: npt.ArrayLike,
                  confs: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Per placed box of the pad, whether the box model's reading of it as empty, fairly
    sure (``DISPUTE_BELOW``), is disputed by the ink statistics (``DISPUTE_INK``): two
    readers that disagree make the box unsure rather than read. Only the rows holding
    such a box have their statistics worked (``_ink_probability``); nothing without the
    box model (the statistics decided already)."""
    from companion.vision.reading import available_model

    p, conf = np.asarray(crossed, np.float64), np.asarray(confs, np.float64)
    doubtful = (p < 0.5) & (conf >= MIN_CONFIDENCE) & (conf < DISPUTE_BELOW)
    out = np.zeros(len(placed), bool)
    if not doubtful.any() or not available_model("qwixx_box"):
        return out
    worked, ink = _ink_probability(image, placed, doubtful)
    locks = np.array([value == "lock" for _, value, _ in placed])[worked]
    out[worked] = doubtful[worked] & (ink >= np.where(locks, DISPUTE_INK_LOCK, DISPUTE_INK))
    return out


INK_CHECK_ROW_PX = 13.0
"""Pads whose rows are under this many pixels high have the box model's crosses checked
against their ink (``_crosses_without_ink``): a box a third of the model's 24 px crop or
less is upsampled threefold, and the paper's mottle and the blur read as crosses there.
Every pad read surely with crosses the ink did not see (dev 61409, 61628, hard 61820:
rows 9-12.2 px) was under it; 17 % of the located dev sheets are. The check costs about 30 ms on a
sheet whose ink it works: per photo median +0.2 ms, mean +4-9 ms (dev 61000, 61400, 61600
+ 0-39 normal, 61800 + 0-39 hard)."""
PHANTOM_CROSSES = 3
"""A small pad on which this many coloured boxes or more read surely crossed by the box
model have under ``DISPUTE_INK`` probability of ink (the same bar as a doubtful empty
box's) is read unsure as a whole: the model is seeing crosses in the paper, so none of
its readings there can be trusted (dev 61628: Tom's and Lea's pads, rows 9.5 px, 6 and 6
such boxes, 9 and 8 boxes read crossed at 0.53-0.98 where none was; 61409 Jonas 4 and 6;
hard 61820 Ben 4 and 2). Located dev sheets (61000, 61300, 61400, 61600 + 0-39 normal,
61800 + 0-39 hard): the pads read right had 2 such boxes at most (61404, 61638, 61816,
61339), and every pad flagged had boxes read surely wrong. Fouls are not counted: three
crosses in a foul row of four leave its ink statistics no empty box to compare with."""


PHANTOM_HESITANT_BELOW = 0.98
PHANTOM_HESITANT = 2
"""... and of those at least ``PHANTOM_HESITANT`` read crossed less sure than
``PHANTOM_HESITANT_BELOW``: crosses the model sees in the paper it reads hesitantly,
while a washed-out pad's faint pen, which the ink statistics miss, it reads clearly
crossed (dev 61404 Sofia: 10 true crosses read at 0.99-1.00, 0.01-0.11 by their ink, the
pad unread as a whole). Small pads' crosses read surely with under ``DISPUTE_INK`` by
their ink, dev 61000-61839 normal and 61000, 61300, 61500, 61800, 61900 + 0-39 hard
(each range + 0-39): 23 of the 26 where there was none under 0.98 (the others 0.98-0.99),
36 of the 105 true ones; the pads flagged with boxes read surely wrong kept 2 or more
such (61409, 61628, hard 61322, 61820), while 61404 Sofia and hard 61007 Lea, 61014 Tom
(no box wrong) had 0-1, and hard 61502 Sofia 1 (in the photo's full read: 4 unsure, none
wrong)."""


def _crosses_without_ink(image: Image, upright: Quad | None, placed: Placed,
                         crossed: npt.ArrayLike, confs: npt.ArrayLike) -> bool:
    """Whether a small pad (rows under ``INK_CHECK_ROW_PX``) has ``PHANTOM_CROSSES`` or
    more coloured boxes the box model reads surely crossed that the ink statistics read
    empty (under ``DISPUTE_INK``): the model seeing crosses in the paper. False without
    the box model (the statistics read the boxes already)."""
    from companion.vision.reading import available_model

    if upright is None or _row_px(upright) >= INK_CHECK_ROW_PX or not available_model(
            "qwixx_box"):
        return False
    p, conf = np.asarray(crossed, np.float64), np.asarray(confs, np.float64)
    rows = np.array([row for row, _, _ in placed])
    wanted = (rows != "foul") & (p >= 0.5) & (conf >= MIN_CONFIDENCE)
    if int(wanted.sum()) < PHANTOM_CROSSES:
        return False
    worked, ink = _ink_probability(image, placed, wanted)
    unseen = wanted[worked] & (ink < DISPUTE_INK)
    hesitant = unseen & (box_sureness(p[worked]) < PHANTOM_HESITANT_BELOW)
    return int(unseen.sum()) >= PHANTOM_CROSSES and int(hesitant.sum()) >= PHANTOM_HESITANT


def _ink_probability(image: Image, placed: Placed, wanted: npt.NDArray[np.bool_]
                     ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """The logistic model's probability of being crossed (``box_features``) for every
    box of the rows that hold a ``wanted`` box: (their indices in ``placed``, the
    probabilities). A row's empty and print colours come from all its boxes, so whole
    rows are worked, and only those."""
    rows = np.array([row for row, _, _ in placed])
    worked = np.flatnonzero(np.isin(rows, rows[wanted]))
    feats = box_features(image, [placed[k] for k in worked], PAD)
    ink: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-(feats @ WEIGHTS + BIAS)))
    return worked, ink


COVER_MIN_BOX_PX = 12.0
"""Boxes are checked for a hand over them (``_under_skin``) only where they are this many
pixels wide or more in the photo: on smaller sheets the ring round a box is a pixel or
less, and blur mixes in the neighbouring rows' colours and the pen's strokes (dev 61000,
61940 + 0-59 normal, 61500 + 0-59 hard, the boxes of the sheets read, rings sampled box
by box while tuning: at 12 px and over 1 of 5503 boxes not under a hand taken for one,
at 10 px and over 4 of 9156, for no more found under a hand)."""
SKIN_RING_HUE = (20.0, 75.0)
SKIN_RING_CHROMA = 12.0
"""A box is under a hand when the ring round it has a skin's hue (a*b* angle, degrees,
after white balance) at this chroma or more,"""
COVER_PRINT_SHARE = 0.3
"""and, on a coloured row, reaches less than this share of the row's own print colour
along the row's ink direction (the row's print colour: the 75th percentile of the chroma
of its boxes' rings that point the ink's way, cosine 0.8 or more; the red row's print
has a skin's hue too, but far more colour). Paper round the foul boxes is near grey. Same dev
boxes, 12 px and over: of 39 under a hand (by the renderer's hand mask, 30 % or more of
the box and its ring; on 61948 and 61961) 27 found (7 of the 8 read surely wrong among
them), of 5503 others none. The ring alone, without the
skin's hue (its row's print too faint there), took 4 others, 16 at 10 px and over, and
on hard dev 61900-61959 boxes washed out by glare and boxes whose ring a blurred pen
stroke crosses (61920, 61951)."""


def _under_skin(image: Image, upright: Quad, placed: Placed) -> npt.NDArray[np.bool_]:
    """Per placed box of the pad, whether the ring round it shows a skin, not its row's
    print (``SKIN_RING_HUE``, ``COVER_PRINT_SHARE``): a hand over it. Only boxes
    ``COVER_MIN_BOX_PX`` wide or more are judged."""
    wide = np.array([float(np.linalg.norm(q[1] - q[0])) >= COVER_MIN_BOX_PX
                     for _, _, q in placed])
    out = np.zeros(len(placed), bool)
    if not wide.any():
        return out
    ab = _ring_ab(image, upright, placed)
    chroma = np.linalg.norm(ab, axis=1)
    skin = skin_hued(ab[:, 0], ab[:, 1], chroma, SKIN_RING_HUE, SKIN_RING_CHROMA)
    rows = np.array([row for row, _, _ in placed])
    for row in ROWS:
        idx = np.flatnonzero(rows == row)
        ink, ink_chroma = _ink_direction(row)
        along = ab[idx] @ ink
        pointing = chroma[idx][along >= 0.8 * chroma[idx]]
        own = float(np.percentile(pointing, 75)) if len(pointing) >= 3 else 0.5 * ink_chroma
        skin[idx] &= along < COVER_PRINT_SHARE * own
    covered: npt.NDArray[np.bool_] = skin & wide
    return covered


@lru_cache(maxsize=4)
def _ink_direction(row: str) -> tuple[npt.NDArray[np.float64], float]:
    """The unit a*b* direction of a row's print colour, and its chroma."""
    ab = _ab(INK[row][::-1]).astype(np.float64)
    chroma = float(np.linalg.norm(ab))
    return ab / chroma, chroma


def _ring_ab(image: Image, upright: Quad, placed: Placed) -> npt.NDArray[np.float64]:
    """The median a*b* (CIELAB, 0 = grey) of the ring round each placed box, between
    ``PAD.ring`` of its side outside its edge, on the pad's face warped once at
    ``RING_PX_PER_MM``. The coloured rows' boxes lie where the layout puts them on the
    face; the foul boxes, which ``_foul_refit`` may have moved, are mapped back."""
    w_mm, h_mm = PIECE_MM["qwixx_sheet"]
    size = (round(w_mm * RING_PX_PER_MM), round(h_mm * RING_PX_PER_MM))
    face = np.asarray(cv2.cvtColor(_warp(image, upright, size), cv2.COLOR_BGR2LAB), np.uint8)
    scale = np.array(size * 2, np.float64)
    layout = pad_rects(1.0, 1.0)  # the coloured rows' boxes come first, in its order
    fouls = [k for k, (row, _, _) in enumerate(placed) if row == "foul"]
    rects = np.array([(0.0,) * 4 if k in fouls else layout[k] for k in range(len(placed))],
                     np.float64) * scale
    if fouls:
        to_face = np.linalg.inv(_face_to_image(upright))
        corners = cv2.perspectiveTransform(
            np.concatenate([placed[k][2] for k in fouls]).reshape(-1, 1, 2).astype(np.float64),
            to_face).reshape(len(fouls), 4, 2) * scale[:2]
        rects[fouls] = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
    out = np.zeros((len(placed), 2), np.float64)
    coloured = [k for k in range(len(placed)) if k not in fouls]
    for group in (coloured, fouls):
        if group:
            out[group] = _rings(face, rects[group])
    return out


def _rings(face: Image, rects: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The median a*b* (0 = grey) of the ring ``PAD.ring`` round each of ``rects`` (x0,
    y0, x1, y1 on the Lab ``face``), all sampled with the first rect's size and mask."""
    inner, outer = PAD.ring
    w, h = rects[0, 2] - rects[0, 0], rects[0, 3] - rects[0, 1]
    ww, hh = round(w * (1 + 2 * outer)), round(h * (1 + 2 * outer))
    ys, xs = np.mgrid[0:hh, 0:ww] + 0.5
    u, v = xs / ww * (1 + 2 * outer) - outer, ys / hh * (1 + 2 * outer) - outer
    ring = ~((u > -inner) & (u < 1 + inner) & (v > -inner) & (v < 1 + inner))
    x0 = np.clip(np.rint(rects[:, 0] - outer * w).astype(int), 0, face.shape[1] - ww)
    y0 = np.clip(np.rint(rects[:, 1] - outer * h).astype(int), 0, face.shape[0] - hh)
    ry, rx = np.nonzero(ring)
    pixels = face[y0[:, None] + ry[None, :], x0[:, None] + rx[None, :], 1:]
    out: npt.NDArray[np.float64] = np.median(pixels, axis=1) - 128.0
    return out


RING_PX_PER_MM = 2.0
"""The pad's face is warped at this many pixels per millimetre to sample the rings round
its boxes (``_ring_ab``): a box is 10 mm wide and its ring 1 mm, and the boxes judged are
12 px wide or more in the photo (at 3 px/mm the same boxes were found on dev 61961, at
2.5 ms a sheet rather than 1.5)."""


# ---------------------------------------------------------------------------- geometry

Placed = list[tuple[str, Any, Quad]]


def _pad_names() -> list[tuple[str, Any]]:
    names: list[tuple[str, Any]] = []
    for row in ROWS:
        names.extend((row, n) for n in qwixx_row_numbers(row))
        names.append((row, "lock"))
    names.extend(("foul", k + 1) for k in range(4))
    return names


def pad_face_size() -> tuple[int, int]:
    w, h = PIECE_MM["qwixx_sheet"]
    return round(w * PAD_PX_PER_MM), round(h * PAD_PX_PER_MM)


def pad_rects(W: float, H: float) -> list[tuple[float, float, float, float]]:
    """The pad's box rectangles on a W×H face, in ``_pad_names`` order."""
    layout = qwixx_sheet_layout(W, H)
    rects = [r for row in ROWS for r in layout[row]]
    return rects + list(layout["fouls"])


def _orientation(image: Image, quad: Quad) -> Quad:
    """The quad started at the sheet's upright top-left (red row on top), the turn its
    row colours prefer (how certain, at the fit: ``_turn_certainty``)."""
    best = int(np.argsort(_turn_scores(image, quad))[-1])
    return np.roll(quad, -best, axis=0).astype(np.float32)


def _turn_scores(image: Image, quad: Quad) -> list[float]:
    """How well the row bands of the sheet at ``quad`` match red, yellow, green, blue top
    to bottom, with the quad started at each of its four corners (-1..1 each)."""
    size, bands, expected = _turn_bands()
    scores = []
    for turn in range(4):
        q = np.roll(quad, -turn, axis=0)
        small = _warp(image, q, size)
        lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
        score = 0.0
        for (rows, cols), (ink, ink_norm) in zip(bands, expected, strict=True):
            mean = (lab[rows, cols, 1:] - 128.0).reshape(-1, 2).mean(axis=0)
            score += float(mean @ ink / (np.linalg.norm(mean) * ink_norm + 1e-6))
        scores.append(score / 4)
    return scores


@lru_cache(maxsize=1)
def _turn_bands() -> tuple[tuple[int, int], list[tuple[slice, slice]],
                           list[tuple[npt.NDArray[np.float32], float]]]:
    """What ``_turn_scores`` compares, made once: the small face's size, each row's band
    on it (red to blue), and each row's print colour (a*, b*) with its length."""
    W, H = 74, 52
    layout = qwixx_sheet_layout(W, H)
    bands = []
    for row in ROWS:
        x0, y0, _, y1 = layout[row][0]
        _, _, x1, _ = layout[row][11]
        bands.append((slice(int(y0), int(np.ceil(y1))), slice(int(x0), int(np.ceil(x1)))))
    expected = [_ab(INK[row][::-1]) for row in ROWS]
    return (W, H), bands, [(ink, float(np.linalg.norm(ink))) for ink in expected]


def _ab(bgr: Sequence[int]) -> npt.NDArray[np.float32]:
    lab = cv2.cvtColor(np.array([[bgr]], np.uint8), cv2.COLOR_BGR2LAB)[0, 0]
    return lab[1:].astype(np.float32) - 128.0


def _warp(image: Image, quad: Quad, size: tuple[int, int]) -> Image:
    w, h = size
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    return _warp_by(image, cv2.getPerspectiveTransform(quad.astype(np.float32), dst), size)


def _warp_by(image: Image, m: Any, size: tuple[int, int]) -> Image:
    """``image`` warped by the homography ``m`` to a ``size`` (w, h) crop (``_warp``)."""
    out: Image = cv2.warpPerspective(image, m, size, flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_REPLICATE)
    return out


def pad_boxes(image: Image, quad: Quad, *, starts: Sequence[npt.ArrayLike] = ()
              ) -> tuple[Placed, float]:
    """The pad's boxes placed by its fit to the printed layout (``_pad_fit``), and how
    certain its turn is (0..1): the boxes as the reader finds them, for the box model's
    training crops and the sheet benchmark."""
    upright, _, certain, _ = _pad_fit(image, quad, starts=starts)
    return _placed(upright), certain


def _pad_fit(image: Image, quad: Quad, *, starts: Sequence[npt.ArrayLike] = ()
             ) -> tuple[Quad, float, float, Quad]:
    """The pad's quad turned upright and aligned to its printed rows: (the quad, the
    fit's correlation, how certain the turn is 0..1, the located quad turned the same
    way). Each start is turned by its own row colours (an outline run on to a card
    beside the sheet can show no clear turn where another outline does); the fit read is
    the best correlating of those whose row colours do not prefer another turn where the
    fit put the sheet (the fit matches colourfulness alone, so it can slip by a row)."""
    fits = [_upright_fit(image, quad)]
    if fits[0][1] < SHEET_FIT_GOOD:  # a weak fit: the other outlines may start nearer
        fits += [_upright_fit(image, np.asarray(other, np.float32).reshape(4, 2))
                 for other in starts]
    outlined = max(fit[1] for fit in fits)
    # every outline too far off, or the print faint? (a fit correlates 1 at most, so
    # over 1 - SEARCH_GAIN no searched fit could be read and none is tried)
    short: list[tuple[Quad, float, Quad]] = []  # searched fits short of SEARCH_GAIN
    if outlined < SHEET_FIT_GOOD and outlined + SEARCH_GAIN <= 1.0:
        searched = [_searched_fit(image, start) for _, _, start in fits]
        fits += [fit for fit in searched if fit[1] >= outlined + SEARCH_GAIN]
        short = [fit for fit in searched if -1.0 < fit[1] < outlined + SEARCH_GAIN]
    rated = [(_turn_certainty(image, fitted), corr, fitted, upright)
             for fitted, corr, upright in fits]
    certain, corr, fitted, upright = max(rated, key=lambda fit: (fit[0] > 0.0, fit[1]))
    surer = _surer_searched_fit(image, fitted, short)
    if surer is not None:
        certain, corr, fitted, upright = surer
    return fitted, corr, certain, same_corner_order(quad, upright)


SEARCHED_SURE = 0.9
"""A searched fit that falls short of ``SEARCH_GAIN`` is read instead of the fit chosen
when the box model reads the coloured rows' boxes at least this sure there (mean, as
``SHIFT_SURE``) and not so sure at the chosen fit: correlation alone can be misled, the
box model's sureness says which fit puts the boxes on boxes. Dev 61100 (normal, a hand
over the sheet's corner): the outlines' best fit 0.59 read its boxes 0.77 sure, every
box unsure; the searched fit 0.86 (short by 0.03) 0.98, the truth's fit; dev 61925
(hard) the other way round: the outline's fit 0.34 read 0.99 sure (right), the searched
0.61 read 0.75."""


def _surer_searched_fit(image: Image, chosen: Quad, short: Sequence[tuple[Quad, float, Quad]]
                        ) -> tuple[float, float, Quad, Quad] | None:
    """(turn certainty, correlation, fitted quad, start) of the surest of the ``short``
    searched fits when it reads the boxes ``SEARCHED_SURE`` and the ``chosen`` fit does
    not, else None."""
    if not short:
        return None
    sureness = _sureness(image, [chosen, *(fitted for fitted, _, _ in short)])
    if sureness is None or sureness[0] >= SEARCHED_SURE:
        return None
    k = int(np.argmax(sureness[1:]))
    fitted, corr, upright = short[k]
    certain = _turn_certainty(image, fitted)
    if sureness[1 + k] < SEARCHED_SURE or certain <= 0.0:
        return None
    return certain, corr, fitted, upright


def _turn_certainty(image: Image, upright: Quad) -> float:
    """How certain (0..1) the row colours of the sheet at ``upright`` are that it is
    upright: their preference for this turn over the next best, over ``MIN_ORIENTATION``."""
    scores = _turn_scores(image, upright)
    return float(np.clip((scores[0] - max(scores[1:])) / MIN_ORIENTATION, 0.0, 1.0))


def _searched_fit(image: Image, upright: Quad) -> tuple[Quad, float, Quad]:
    """The pad's fit to its printed rows started from where they are found by template
    matching about an ``upright`` start (``search_layout``): (the fitted quad, the fit's
    correlation, the start). A found place the fit cannot improve on is no fit
    (correlation -1): on dev scenes those were a neighbouring sheet or a slipped row.
    The rows' colourfulness, all the search sees, looks alike half a turn round, so the
    fit is turned by its row colours (``_orientation``) and fitted again as they lie (dev
    61736: found at 0.72 a half turn round, its turn certainty 0, so another outline's
    fit 80 px off was read; turned, 0.76 and within a pixel)."""
    found, _ = search_layout(image, upright, "qwixx_sheet")
    fitted, corr = _fit_found(image, found)
    return fitted, corr, upright


def _fit_found(image: Image, found: Quad) -> tuple[Quad, float]:
    """The pad's fit from where its rows were ``found`` (``_searched_fit``), turned as
    its row colours prefer: (the fitted quad, its correlation, -1 for no fit)."""
    fitted, corr = align_to_layout(image, found, "qwixx_sheet")
    if np.array_equal(fitted, found):
        return fitted, -1.0
    turned = _orientation(image, fitted)
    if not np.array_equal(turned, fitted):  # its rows prefer another turn: fit that
        fitted, corr = align_to_layout(image, turned, "qwixx_sheet")
    return fitted, corr


def _upright_fit(image: Image, quad: Quad) -> tuple[Quad, float, Quad]:
    """The sheet at ``quad`` turned upright by its row colours and aligned to its printed
    rows: (the fitted quad, the fit's correlation, the start turned upright)."""
    upright = _orientation(image, quad)
    fitted, corr = align_to_layout(image, upright, "qwixx_sheet")
    return fitted, corr, upright


def _face_to_image(upright: Quad) -> npt.NDArray[np.float64]:
    """The homography from the pad's unit face (0..1 both ways) to the image."""
    src = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    return np.asarray(cv2.getPerspectiveTransform(src, upright), np.float64)


def _placed(upright: Quad) -> Placed:
    """Every box of the pad placed from its upright quad, in ``_pad_names`` order (each
    box's corners as ``_map_rect`` maps them, all in one call)."""
    names, corners = _unit_boxes()
    quads = cv2.perspectiveTransform(corners, _face_to_image(upright)).reshape(
        -1, 4, 2).astype(np.float32)
    return [(row, value, q.copy()) for (row, value), q in zip(names, quads, strict=True)]


@lru_cache(maxsize=1)
def _unit_boxes() -> tuple[list[tuple[str, Any]], npt.NDArray[np.float64]]:
    """The pad's box names (``_pad_names``) and their corners on its unit face (clockwise
    from the top-left, as ``_map_rect`` takes them), made once (read-only)."""
    corners = np.array([[[[x0, y0]], [[x1, y0]], [[x1, y1]], [[x0, y1]]]
                        for x0, y0, x1, y1 in pad_rects(1.0, 1.0)], np.float64).reshape(-1, 1, 2)
    corners.flags.writeable = False
    return _pad_names(), corners


@lru_cache(maxsize=1)
def _unit_layout() -> dict[str, list[tuple[float, float, float, float]]]:
    """``qwixx_sheet_layout`` of the unit face, made once (read-only by convention)."""
    return qwixx_sheet_layout(1.0, 1.0)


def _column() -> float:
    """The pad's column pitch, a share of its width (box to box along a row)."""
    red = _unit_layout()["red"]
    return float(red[1][0] - red[0][0])


def _row() -> float:
    """The pad's row pitch, a share of its height (a coloured row to the next)."""
    layout = _unit_layout()
    return float(layout["yellow"][0][1] - layout["red"][0][1])


def _column_refit(image: Image, quads: Sequence[Quad], fitted: Quad, fit: float
                  ) -> Quad | None:
    """The pad's fit started again a column to the left and to the right of each of
    ``quads`` (upright; its rows' boxes repeat, so a fit can lock on a column away); the
    one that correlates ``SLIP_GAIN`` better than ``fit`` (the ``fitted`` quad's), if
    any. The starts are compared by the coarse fit alone, and only the ``REFIT_FINE``
    best that beat ``fitted`` at that size are fitted finely."""
    coarse = LONG_SIDE[:1]
    _, here = align_to_layout(image, fitted, "qwixx_sheet", coarse)
    tried: list[tuple[float, Quad]] = []
    for quad in quads:
        h = _face_to_image(quad)
        for step in (-_column(), _column()):
            face = np.array([[[step, 0]], [[1 + step, 0]], [[1 + step, 1]], [[step, 1]]],
                            np.float64)
            start = cv2.perspectiveTransform(face, h).reshape(4, 2).astype(np.float32)
            moved, corr = align_to_layout(image, start, "qwixx_sheet", coarse)
            if corr > here:
                tried.append((corr, moved))
    tried.sort(key=lambda t: -t[0])
    best: tuple[Quad, float] | None = None
    for _, start in tried[:REFIT_FINE]:
        moved, corr = align_to_layout(image, start, "qwixx_sheet")
        if corr >= fit + SLIP_GAIN and (best is None or corr > best[1]):
            best = (moved, corr)
    return None if best is None else best[0]


def _searched_refit(image: Image, upright: Quad, fit: float) -> Quad | None:
    """The pad's fit started where template matching finds its rows about the weak
    ``upright`` fit (``_searched_fit``), when that correlates ``SLIP_GAIN`` better than
    ``fit`` and its boxes' print confirms it (``_print_confirms``): an outline short by
    a column or more (dev 61062: its lock column outlined as cards) fits off by more than
    a column refit reaches (20 px: 0.78, where the rows found fit at 0.88, within 2 px).
    The found place is fitted in full only when its coarse fit beats the weak fit's by
    ``SLIP_GAIN`` (as ``_column_refit`` compares its starts): most weak fits on hard dev
    photos are faint or blurred, and the found place fits no better."""
    found, _ = search_layout(image, upright, "qwixx_sheet")
    coarse = LONG_SIDE[:1]
    _, here = align_to_layout(image, upright, "qwixx_sheet", coarse)
    _, there = align_to_layout(image, found, "qwixx_sheet", coarse)
    if there < here + SLIP_GAIN:
        return None
    searched, corr = _fit_found(image, found)
    if corr < fit + SLIP_GAIN:
        return None
    if not _print_confirms(image, searched, _crossed(image, _placed(searched), PAD)):
        return None
    return searched


def _row_px(upright: Quad) -> float:
    """The height in the photo, in pixels, of a coloured row of the pad at ``upright``."""
    ends = cv2.perspectiveTransform(np.array([[[0.5, 0.5]], [[0.5, 0.5 + _row()]]]),
                                    _face_to_image(upright))
    return float(np.linalg.norm(ends[1] - ends[0]))


def _shifted(upright: Quad, along: float, across: float, *, stretch: float = 1.0) -> Quad:
    """The pad's upright quad moved ``along`` columns and ``across`` rows in its own face,
    and its height scaled by ``stretch`` about the middle of its coloured rows."""
    layout = _unit_layout()
    dx = along * _column()
    dy = across * _row()
    middle = float(layout["red"][0][1] + layout["blue"][0][3]) / 2
    y0, y1 = middle - middle * stretch + dy, middle + (1 - middle) * stretch + dy
    face = np.array([[[dx, y0]], [[1 + dx, y0]], [[1 + dx, y1]], [[dx, y1]]], np.float64)
    return cv2.perspectiveTransform(face, _face_to_image(upright)).reshape(4, 2).astype(
        np.float32)


def _surest_shift(image: Image, upright: Quad, crossed: npt.ArrayLike) -> Quad | None:
    """The pad's fit moved along and across its rows to where the box model is surest of
    the coloured rows' boxes, when it is unsure of one of them at the fit: on a blurred
    photo the fit to the rows' colours can lie a third of a box off, and boxes read there
    unsure or wrong (dev scenes 61804, 61815, 61817: boxes 8-10 px wide, fits 2-4 px off,
    read right at the surest place). A grid of ``SHIFT_STEPS[0]`` within
    ``SHIFT_REACH``, then one of ``SHIFT_STEPS[1]`` round its surest place, then that
    place's height scaled by each of ``SHIFT_STRETCHES``, then its corners moved one at a
    time (``_surest_corners``); None when no
    coloured box is unsure, on a sheet under ``SHIFT_MIN_ROW_PX``, without the box model,
    or when no place is ``SHIFT_GAIN`` surer than the fit and ``SHIFT_SURE``."""
    coloured = len(_pad_names()) - 4
    p = np.asarray(crossed, np.float64)[:coloured]
    if (box_sureness(p) >= MIN_CONFIDENCE).all() or _row_px(upright) < SHIFT_MIN_ROW_PX:
        return None
    here = float(box_sureness(p).mean())
    coarse, fine = SHIFT_STEPS
    reach = round(SHIFT_REACH / coarse)
    best: tuple[float, float, float, float] = (here, 0.0, 0.0, 1.0)
    for stage in ("coarse", "fine", "stretch"):
        _, x, y, _ = best
        if stage == "coarse":
            offsets = [(a * coarse, b * coarse, 1.0) for a in range(-reach, reach + 1)
                       for b in range(-reach, reach + 1) if (a, b) != (0, 0)]
        elif stage == "fine":  # round the surest coarse place
            offsets = [(x + a * fine, y + b * fine, 1.0) for a in (-1, 0, 1)
                       for b in (-1, 0, 1) if (a, b) != (0, 0)]
        else:
            offsets = [(x, y, f) for f in SHIFT_STRETCHES]
        sureness = _sureness(image, [_shifted(upright, along, across, stretch=stretch)
                                     for along, across, stretch in offsets])
        if sureness is None:
            return None
        k = int(np.argmax(sureness))
        if sureness[k] > best[0]:
            best = (float(sureness[k]), *offsets[k])
    surest, moved = _surest_corners(image, _shifted(upright, *best[1:3], stretch=best[3]),
                                    best[0])
    if surest < max(here + SHIFT_GAIN, SHIFT_SURE):
        return None
    return moved


def _unsettled_by_move(image: Image, placed: Placed, before: npt.ArrayLike,
                       after: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Per box of a small pad moved by ``_surest_shift`` (probabilities of being crossed
    ``before`` and ``after`` the move, ``placed`` after it), whether the move left it
    unsettled: a foul box unsure where the fit put it or read surely the other way after
    (the move is judged by the coloured rows alone, and no foul refit follows at this
    size), or a coloured box unsure before and sure after whose ink statistics
    (``box_features``) read it the other way."""
    a, b = np.asarray(before, np.float64), np.asarray(after, np.float64)
    sure_a = box_sureness(a) >= MIN_CONFIDENCE
    sure_b = box_sureness(b) >= MIN_CONFIDENCE
    rows = np.array([row for row, _, _ in placed])
    out = (rows == "foul") & (~sure_a | (sure_b & ((a >= 0.5) != (b >= 0.5))))
    settled = (rows != "foul") & ~sure_a & sure_b
    if settled.any():
        worked, ink = _ink_probability(image, placed, settled)
        out[worked] = settled[worked] & ((ink >= 0.5) != (b[worked] >= 0.5))
    result: npt.NDArray[np.bool_] = out
    return result


def _sureness(image: Image, quads: Sequence[Quad]) -> npt.NDArray[np.float64] | None:
    """The box model's mean sureness (0..1) of the pad's coloured rows' boxes placed from
    each of the upright ``quads`` (None without the model)."""
    coloured = len(_pad_names()) - 4
    probs = _box_model(image, [box for quad in quads for box in _placed(quad)[:coloured]])
    if probs is None:
        return None
    return box_sureness(probs).reshape(len(quads), coloured).mean(axis=1)


def _surest_corners(image: Image, upright: Quad, sure: float) -> tuple[float, Quad]:
    """The pad's quad with its corners moved one at a time (``SHIFT_CORNER``) while the box
    model grows surer of the coloured rows' boxes (``_sureness``; ``sure`` at ``upright``):
    a fit can be off in perspective too, which no move and stretch of the whole quad
    undoes. (the sureness, the quad)."""
    step = SHIFT_CORNER
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float64)
    for _ in range(SHIFT_CORNER_ROUNDS):
        h = _face_to_image(upright)
        tried = []
        for corner in range(4):
            for along, across in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                face = unit.copy()
                face[corner] += (along * step * _column(), across * step * _row())
                tried.append(cv2.perspectiveTransform(face.reshape(-1, 1, 2), h).reshape(
                    4, 2).astype(np.float32))
        sureness = _sureness(image, tried)
        k = int(np.argmax(sureness)) if sureness is not None else -1
        if sureness is not None and sureness[k] > sure:
            sure, upright = float(sureness[k]), tried[k]
        else:  # no corner move helps: try half as far
            step /= 2
    return sure, upright


def _foul_refit(image: Image, upright: Quad, crossed: npt.ArrayLike
                ) -> tuple[Placed, npt.NDArray[np.float64]] | None:
    """The pad's four foul boxes moved up or down, when the box model is unsure of one of
    them where the fit (``upright``) places them: the fit sees only the coloured rows
    above them, and on a blurred sheet it can be off there by a fifth of a row or more.
    The row is tried ``FOUL_STEP`` row heights at a time within ``FOUL_REACH`` either
    way; a place is a candidate when every foul box read surely at the fit's place reads
    the same there (so a move only settles unsure boxes: boxes moved onto the bare paper
    below read as surely empty), and the candidate whose worst neighbourhood (it and a
    step either way) is surest wins if that is ``FOUL_SURE`` or more. (placed fouls, their
    probabilities) or None: no box unsure, no box model, a sheet too small, or no clear
    place."""
    p = np.asarray(crossed, np.float64)[-4:]
    sure = box_sureness(p) >= MIN_CONFIDENCE
    if sure.all():
        return None
    h = _face_to_image(upright)
    if _row_px(upright) < MOVE_MIN_ROW_PX:
        return None
    layout = _unit_layout()
    row = _row()
    steps = np.arange(-round(FOUL_REACH / FOUL_STEP), round(FOUL_REACH / FOUL_STEP) + 1)
    moved: Placed = [("foul", k + 1, _map_rect(h, (x0, y0 + s * FOUL_STEP * row, x1,
                                                   y1 + s * FOUL_STEP * row)))
                     for s in steps for k, (x0, y0, x1, y1) in enumerate(layout["fouls"])]
    probs = _box_model(image, moved)
    if probs is None:
        return None
    probs = probs.reshape(len(steps), 4)
    sureness = box_sureness(probs).mean(axis=1)
    same = ((probs >= 0.5) == (p >= 0.5))[:, sure].all(axis=1)
    padded = np.pad(sureness, 1)
    worst = np.minimum.reduce([padded[:-2], padded[1:-1], padded[2:]])
    worst = np.where(same, worst, -1.0)
    best = int(np.argmax(worst))
    if steps[best] == 0 or worst[best] < FOUL_SURE:
        return None
    if _onto_the_blue_row(image, upright, moved[4 * best:4 * best + 4]):
        return None
    return moved[4 * best:4 * best + 4], probs[best]


FOUL_BLUE_SHARE = 0.35
"""A foul row moved (``_foul_refit``) whose boxes' rings come this share or more of the
way from the rings where the fit put them (paper) to the blue row's print colour is on
the blue row's edge, not the foul row (printed on bare paper), and is not moved. Of the
22 foul rows moved on dev 61000, 61700, 61940 + 0-59 normal and 61500, 61900 + 0-59
hard, one came 0.57 of the way (61977: a blurred sheet's fouls moved a third of a box
onto the blue row's crosses, read crossed at 0.91-0.97 where none is), the others 0.2
or less (61923: 0.17)."""
FOUL_BLUE_MIN = 10.0
"""Only where the blue row's print and the paper round the fit's foul boxes differ by
this much (a*b*): on a washed-out sheet they are alike (dev 61525: 4) and the share
means nothing."""


def _onto_the_blue_row(image: Image, upright: Quad, fouls: Placed) -> bool:
    """Whether the foul boxes moved to ``fouls`` show the blue row's print round them
    rather than the paper round the fit's foul boxes (``FOUL_BLUE_SHARE``)."""
    placed = _placed(upright)
    ab = _ring_ab(image, upright, placed + fouls)
    paper = ab[len(placed) - len(fouls):len(placed)].mean(axis=0)
    blue = np.median([ab[k] for k, (row, _, _) in enumerate(placed) if row == "blue"],
                     axis=0) - paper
    reach = float(blue @ blue)
    if reach < FOUL_BLUE_MIN ** 2:
        return False
    return float((ab[len(placed):].mean(axis=0) - paper) @ blue) / reach >= FOUL_BLUE_SHARE


def _print_confirms(image: Image, upright: Quad, crossed: npt.ArrayLike) -> bool:
    """Whether the boxes' print agrees with the fit (``printed_agreement``) by at least
    ``PRINT_AGREES`` more than with the fit a column either way."""
    left, here, right = printed_agreement(image, upright, crossed, (-1, 0, 1))
    return here >= max(left, right) + PRINT_AGREES


PRINT_CROP = (16, 20)
"""The middle of each box compared for its printed number: this (width, height) in
pixels of the pad's canonical face (``PAD_PX_PER_MM``; a box is about 20×25)."""


def printed_agreement(image: Image, upright: Quad, crossed: npt.ArrayLike,
                      slips: Sequence[int] = (0,)) -> list[float]:
    """How well the pad's boxes, placed from its ``upright`` quad, agree with its print,
    for a fit slipped by each of ``slips`` columns: red box k and green box 10 − k print
    the same number, as do yellow and blue (red and yellow run 2→12, green and blue
    12→2), so where the boxes are placed ``s`` columns short, red box k shows what green
    box 10 − k − 2s does. Per slip, the mean correlation (−1..1) over such pairs where
    neither box is crossed (``crossed``: each box's probability, ``_pad_names`` order)
    of the boxes' print: each box's departure from its empty colour, less what all boxes
    share (frame, shading); −1 with fewer than four such pairs. Only the pad's structure
    is assumed, not its typeface."""
    p = np.asarray(crossed, np.float64)
    names = _pad_names()
    W, H = pad_face_size()
    face = cv2.cvtColor(_warp(image, upright, (W, H)), cv2.COLOR_BGR2LAB).astype(np.float32)
    numbered = [k for k, (row, value) in enumerate(names) if row in ROWS and value != "lock"]
    rects = np.array(pad_rects(W, H), np.float64)[numbered]
    w, h = PRINT_CROP  # each box's middle, cut straight from the face (no resampling)
    x0 = np.rint((rects[:, 0] + rects[:, 2] - w) / 2).astype(int)
    y0 = np.rint((rects[:, 1] + rects[:, 3] - h) / 2).astype(int)
    ys = y0[:, None, None] + np.arange(h)[None, :, None]
    xs = x0[:, None, None] + np.arange(w)[None, None, :]
    crops = face[ys, xs]
    lab = crops.reshape(len(numbered), -1, 3)
    light = lab[..., 0]
    bright = light >= np.percentile(light, 80, axis=1, keepdims=True)
    empty = (lab * bright[..., None]).sum(axis=1) / bright.sum(axis=1)[:, None]
    ink = np.zeros((len(names), PRINT_CROP[1], PRINT_CROP[0]), np.float32)
    ink[numbered] = np.linalg.norm(lab - empty[:, None, :], axis=2).reshape(
        len(numbered), PRINT_CROP[1], PRINT_CROP[0])
    clean = [k for k in numbered if p[k] < 0.5]
    if len(clean) < 8:
        return [-1.0] * len(slips)

    def unit(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        out: npt.NDArray[np.float32] = x / (
            np.linalg.norm(x.reshape(len(x), -1), axis=1)[:, None, None] + 1e-6)
        return out

    ink = unit(ink - ink.mean(axis=(1, 2), keepdims=True))
    ink = unit(ink - ink[clean].mean(axis=0))  # less what every box shows (frame, shade)
    index = {name: k for k, name in enumerate(names)}
    out = []
    for slip in slips:
        scores = []
        for a, b in (("red", "green"), ("yellow", "blue")):
            for k in range(11):  # red box k against green box 10 - k - 2 slip
                j = 10 - k - 2 * slip
                if not 0 <= j <= 10:
                    continue
                i, m = index[(a, qwixx_row_numbers(a)[k])], index[(b, qwixx_row_numbers(b)[j])]
                if p[i] < 0.5 and p[m] < 0.5:
                    scores.append(float((ink[i] * ink[m]).sum()))
        out.append(float(np.mean(scores)) if len(scores) >= 4 else -1.0)
    return out


def sheet_plane(boxes: Sequence[dict[str, Any]], *, printed: bool
                ) -> npt.NDArray[np.float64] | None:
    """The homography from millimetres in the sheet's plane (the table's) to image pixels,
    from the box quads ``read_sheet`` placed (``printed``: our printed sheet, boxes
    placed by its markers; else the pad, by the fit to its layout); None without four
    placed boxes."""
    if printed:
        from companion.calibration import qwixx_sheet

        rects: dict[tuple[Any, Any], tuple[float, float, float, float]] = {
            (b.row, b.value): (b.x, b.y, b.x + b.w, b.y + b.h) for b in qwixx_sheet.boxes()}
    else:
        rects = dict(zip(_pad_names(), pad_rects(*PIECE_MM["qwixx_sheet"]), strict=True))
    src, dst = [], []
    for box in boxes:
        rect = rects.get((box.get("row"), box.get("value")))
        if rect is None or box.get("quad") is None:
            continue
        x0, y0, x1, y1 = rect
        src.extend([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        dst.extend(np.asarray(box["quad"], np.float64).reshape(4, 2).tolist())
    if len(src) < 16:
        return None
    h, _ = cv2.findHomography(np.array(src, np.float64), np.array(dst, np.float64), 0)
    return None if h is None else np.asarray(h, np.float64)


def printed_sheet(markers: Sequence[Any], quad: npt.ArrayLike | None) -> bool:
    """Whether the sheet at ``quad`` is our printed one (its markers 20–23 are seen)."""
    return _printed_boxes(markers, quad) is not None


def _map_rect(h: npt.NDArray[np.float64], rect: tuple[float, float, float, float]) -> Quad:
    x0, y0, x1, y1 = rect
    pts = np.array([[[x0, y0]], [[x1, y0]], [[x1, y1]], [[x0, y1]]], np.float64)
    return cv2.perspectiveTransform(pts, h).reshape(4, 2).astype(np.float32)


def _printed_boxes(markers: Sequence[Any], quad: npt.ArrayLike | None) -> Placed | None:
    """Our printed sheet's boxes from its markers 20–23 (per id, the one nearest the quad
    when a photo holds several sheets): a homography from every corner of the markers
    found, at least two of them. None when no sheet marker is seen; boxes without quads
    (read as unsure) when only one is."""
    from companion.calibration import qwixx_sheet
    from companion.readers.common import marker_list

    found = [m for m in marker_list(markers) if m.id in SHEET_IDS]
    if not found:
        return None
    centre = (np.asarray(quad, np.float32).reshape(4, 2).mean(axis=0) if quad is not None
              else None)
    if centre is not None:  # a sheet's markers lie within about its diagonal of its centre
        reach = 1.5 * float(np.linalg.norm(np.ptp(np.asarray(quad, np.float32).reshape(4, 2),
                                                  axis=0)))
        found = [m for m in found
                 if np.linalg.norm(m.corners.mean(axis=0) - centre) < reach]
        if not found:
            return None
    places = qwixx_sheet.marker_corners_mm()
    side = qwixx_sheet.MARKER_MM
    src, dst = [], []
    for mid in SHEET_IDS:
        same = [m for m in found if m.id == mid]
        if not same:
            continue
        if centre is not None:
            same.sort(key=lambda m: float(np.linalg.norm(m.corners.mean(axis=0) - centre)))
        x, y = places[mid]
        src.extend([[x, y], [x + side, y], [x + side, y + side], [x, y + side]])
        dst.extend(np.asarray(same[0].corners, np.float64).reshape(4, 2).tolist())
    if len(src) < 8:
        return []
    h, _ = cv2.findHomography(np.array(src, np.float64), np.array(dst, np.float64), 0)
    return [(b.row, b.value, _map_rect(h, (b.x, b.y, b.x + b.w, b.y + b.h)))
            for b in qwixx_sheet.boxes()]


# ---------------------------------------------------------------------------- statistics

def _zones(template: Template) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Masks over the interior crop: the corners (outside the printed number) and the
    whole interior."""
    w, h = CROP
    u = INSET + (np.arange(w) + 0.5) / w * (1 - 2 * INSET)
    v = INSET + (np.arange(h) + 0.5) / h * (1 - 2 * INSET)
    uu, vv = np.meshgrid(u, v)
    u0, v0, u1, v1 = template.glyph
    glyph = (uu > u0) & (uu < u1) & (vv > v0) & (vv < v1)
    return ~glyph, np.ones_like(glyph)


def _diagonals() -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Bands along the crop's two diagonals, where a stroke or an X runs."""
    w, h = CROP
    uu, vv = np.meshgrid((np.arange(w) + 0.5) / w, (np.arange(h) + 0.5) / h)
    return np.abs(vv - uu) < 0.13, np.abs(vv - (1 - uu)) < 0.13


def _inset(q: Quad, a: float) -> Quad:
    """The quad shrunk (a > 0) or grown (a < 0) by ``a`` of its sides, bilinearly."""
    def at(u: float, v: float) -> npt.NDArray[np.float32]:
        top = q[0] + (q[1] - q[0]) * u
        bottom = q[3] + (q[2] - q[3]) * u
        out: npt.NDArray[np.float32] = top + (bottom - top) * v
        return out
    return np.array([at(a, a), at(1 - a, a), at(1 - a, 1 - a), at(a, 1 - a)], np.float32)


def _ring(image: Image, q: Quad, template: Template) -> npt.NDArray[np.float32]:
    """The median colour of the ring around (or on the outline of) a box: pixels whose
    offset outside the box edge, in box sides, lies within ``template.ring``."""
    a, b = template.ring
    size = 24
    big = _warp(image, _inset(q, -b), (size, size)).astype(np.float32)
    s = -b + (np.arange(size) + 0.5) / size * (1 + 2 * b)
    su, sv = np.meshgrid(s, s)
    offset = np.maximum.reduce([-su, su - 1, -sv, sv - 1])
    mask = (offset >= a) & (offset <= b)
    out: npt.NDArray[np.float32] = np.median(big[mask], axis=0).astype(np.float32)
    return out


def box_sureness(p: npt.ArrayLike) -> npt.NDArray[np.floating[Any]]:
    """How sure a box's reading is (0..1) from its probability of being crossed: 2·|p − ½|,
    the confidence a box is reported with (unsure under ``MIN_CONFIDENCE``)."""
    out: npt.NDArray[np.floating[Any]] = np.abs(2.0 * np.asarray(p) - 1.0)
    return out


def _crossed(image: Image, placed: Placed, template: Template) -> npt.NDArray[np.float64]:
    """Each placed box's probability of being crossed: by the box model on the pad when
    it is installed, else by the logistic model over the box's ink statistics."""
    p = _box_model(image, placed) if template is PAD else None
    if p is None:
        feats = box_features(image, placed, template)
        p = 1.0 / (1.0 + np.exp(-(feats @ WEIGHTS + BIAS)))
    return p


def _box_model(image: Image, placed: Placed) -> npt.NDArray[np.float64] | None:
    """Each box's probability of being crossed by the box model (``models/qwixx_box``),
    or None when the model is not installed."""
    from companion.vision.reading import available_model, load_model, read_crops

    if not placed or not available_model("qwixx_box"):
        return None
    model = load_model("qwixx_box")
    crossed = model.labels.index("crossed")
    readings = read_crops(model, np.stack(box_crops(image, placed, model.size)))
    return np.array([r.probs[crossed] for r in readings], np.float64)


def box_crops(image: Image, placed: Placed, size: tuple[int, int]) -> list[Image]:
    """Each placed box cut out upright at ``size`` with a margin of ``BOX_MARGIN`` (a
    cross runs over the box's edge): what the box model reads, and is trained on. The
    grown outlines are worked for all boxes at once (the same steps on each box's
    corners as one by one: the same bits), then warped one by one (``_warp``)."""
    if not placed:
        return []
    quads = np.stack([np.asarray(q) for _, _, q in placed])
    centres = quads.mean(axis=1, keepdims=True)
    grown = (centres + (quads - centres) * (1 + 2 * BOX_MARGIN)).astype(np.float32)
    w, h = size
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    with _one_cv_thread():
        out = [_warp_by(image, cv2.getPerspectiveTransform(q, dst), size) for q in grown]
    return out


@contextmanager
def _one_cv_thread() -> Iterator[None]:
    """OpenCV on one thread for a loop of many tiny warps (the boxes): handing a box's
    few hundred pixels to the thread pool cost more than warping them (72 -> 40 µs CPU a
    32x32 crop on the 2-core machine); each pixel is warped alike on any thread, so the
    crops are the same. The thread count is put back after. A whole sheet is read so
    (``read_sheet``): its ECC fits warp a 240×170 template each iteration, and on the 176
    dev sheets of 61700+60 normal and 61760+30 hard (replayed, interleaved) one thread
    took 10 % less CPU (33.4 -> 29.9 s) in the same wall time (30.8 -> 30.6 s), the
    boxes the same to the bit. Already on one thread (the box crops within a sheet's
    reading), nothing is set: OpenCV remakes its thread pool on every setNumThreads,
    even to the count it has, and the 7 such calls a Qwixx photo made cost 12 ms of
    wall time (0.2 ms CPU; dev 61940+20 normal)."""
    threads = cv2.getNumThreads()
    if threads == 1:
        yield
        return
    cv2.setNumThreads(1)
    try:
        yield
    finally:
        cv2.setNumThreads(threads)


def box_features(image: Image, placed: Placed, template: Template) -> npt.NDArray[np.float64]:
    """Per box: statistics of ink not explained by the box's empty colour and its print
    (rows of ``WEIGHTS``' length)."""
    corners, _ = _zones(template)
    diagonals = [d.ravel() for d in _diagonals()]
    with _one_cv_thread():
        crops = np.stack([_warp(image, _inset(q, INSET), CROP) for _, _, q in placed]
                         ).astype(np.float32)
    rows = [r for r, _, _ in placed]
    lum = crops.mean(axis=3)
    bright = np.array([c.reshape(-1, 3)[lm.ravel() >= np.percentile(lm, 85)].mean(axis=0)
                       for c, lm in zip(crops, lum, strict=True)])
    rings = np.array([_ring(image, q, template) for _, _, q in placed])
    feats = np.zeros((len(placed), len(WEIGHTS)), np.float64)
    for row in dict.fromkeys(rows):
        idx = [k for k, r in enumerate(rows) if r == row]
        bg = np.median(bright[idx], axis=0)
        ink = np.median(rings[idx], axis=0)
        seg = ink - bg
        seg_len2 = float(seg @ seg) + 1e-6
        for k in idx:
            px = crops[k].reshape(-1, 3) - bg
            t = np.clip(px @ seg / seg_len2, 0.0, 1.0)
            d_seg = np.linalg.norm(px - t[:, None] * seg, axis=1)
            d_bg = np.linalg.norm(px, axis=1)
            dark = np.clip((bg.mean() - crops[k].reshape(-1, 3).mean(axis=1))
                           / (bg.mean() + 1e-6), 0, 1)
            c = corners.ravel()
            inked = d_bg > 45
            along = [float(np.mean(inked[d & c])) for d in diagonals]
            along_all = [float(np.mean(inked[d])) for d in diagonals]
            off = d_seg > 30
            feats[k] = (
                float(np.mean(d_seg > 40)),
                float(np.mean(d_bg[c] > 45)),
                float(np.percentile(d_seg, 90)) / 100.0,
                float(np.mean(dark)),
                float(np.mean(np.clip(d_bg[c] / 120.0, 0, 1))),
                max(along),
                max(along_all) * min(along_all),
                float(np.mean(off[c])),
            )
    return feats
