"""Find the pieces on the table as quadrilaterals, with OpenCV and no markers.

Pieces are separated from the table by colour against the table's own statistics
(cream tiles and white cards are brighter than a dark table, and warmer than a grey or
white one), the mask is cleaned, and each connected blob is explained as a lattice of
pieces of the known aspect (a Nummix tile is 27:37 mm), so touching tiles in a row or a
grid come apart one quad per tile. Quads come out clockwise from a short (top) edge with
``oriented=False``; the classifier decides 0° versus 180°.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

import cv2
import numpy as np
import numpy.typing as npt

from companion.calibration.markers import Marker
from companion.games.base import InputError
from companion.vision.detections import Detections, rectify

KINDS: tuple[str, ...] = (
    "nummix_tile", "nox_card", "qwixx_card", "qwixx_sheet", "rox_card", "rox_scoring",
    "catbox_card", "catbox_board", "token")
"""Kinds of piece, the same names the renderer (companion.synth) uses."""

GAMES: tuple[str, ...] = ("nox", "qwixx", "rox", "nummix", "catbox")

TILE_ASPECT = 27.0 / 37.0
"""Width over height of a Nummix tile (27×37 mm), as COMPONENTS.md gives it."""

MIN_SIDE = 32
"""An image smaller than this (pixels) on a side cannot show a readable piece."""

WORK_SIDE = 1000
"""Images are located at most this many pixels on their long side (then scaled back)."""

REFINE_GROW = 1.5
"""Pixels added on each side of a refined piece (the groove-cut mask is eroded)."""

NECK = 0.38
"""Erosion radius, as a share of a piece's width, that parts pieces touching at a
corner or at an angle."""

RAGGED = 0.8
"""A blob filling less of its rectangle than this is not one row or grid: it is cut
into rows of pieces of the usual size, each row into runs."""

WHOLE_FILL = 0.9
"""A blob that fills this much of its rectangle is split as one lattice (a neat row or
grid); a ragged one is first cut along its grooves."""

LIFT = 15
"""How much lighter than the table around it (Lab lightness) a piece on a light table is."""

SKIN_RED = 12
"""Lab a* (red) above 128 + this is skin or a red print, never a tile's cream face."""

TINTED = 15
"""|a|+|b| of the table's median colour above which it is a tinted cloth, not neutral
stone or laminate."""

TEXTURED = 12.0
"""Median local spread of lightness (7×7) above which a table counts as textured."""

MAX_SIZE_RATIO = float(np.log(2.0))
"""A piece more than twice as large or as small as the typical one is not a piece (a
streak of light on the wood)."""
GROOVE_WEIGHT = 8.0
"""How much groove depth (Lab lightness) one unit of log-length mismatch is worth when
counting the pieces in a run."""
SNAP_DEPTH = 6.0
"""A groove this much deeper than the row's median (mean over the row's height) is
where two touching pieces meet."""
MIN_SHARE = 0.12
"""A piece under this share of the largest piece's area is table texture."""
MIN_COVER = 0.35
"""Share of a cell's pixels that must look like piece pixels for the cell to count."""

LYING_ROW_PENALTY = 0.15
"""Pieces touching end to end in a single file are rarer than side by side in a row:
a blob both explain equally (4 upright tiles or 2 lying ones) is read as the row."""

PEER_PENALTY = 0.3
"""Prior against the rarer peer kind (few scoring cards, many Rox cards)."""
MIN_PRINT = 5.0
MIN_PRINT_TILE = 3.0
"""Spread of grey levels in a piece's centre (a card's, a tile's) below which it
is a patch of glare: every piece shows a number or symbols there."""

SHADOW = 8
SHADOW_CHROMA = 14.0
DEEP = 100
"""A shadow on the table: darker than the table around it by SHADOW to DEEP (Lab
lightness) with its colour kept (chroma distance under SHADOW_CHROMA); not a piece.
Darker still (a black card) is a piece."""

BOARD_VIEW = (600, 300)
"""The research board is looked at rectified to this size (pixels) to find tokens."""
TOKEN_RADIUS = BOARD_VIEW[0] * 8.0 / 300.0
"""A token's radius in that view: 16 mm across on a 300 mm board."""
BOARD_GRID = (0.03, 0.18, 0.94, 0.79, 0.06)
"""The research board's face as the renderer prints it (companion.synth's
catbox_cell_rect): the 9×4 cells lie within these left, top, width and height margins
(shares of the board's width and height, the board upright: numbers along the top, red
row first), each cell inset by the last share of its own size."""
BOARD_COLUMNS, BOARD_ROWS = 9, 4


def cell_middle(row: int, column: int) -> tuple[float, float]:
    """The middle of the research board's cell (``row`` 0–3 red first, ``column`` 0–8) as
    shares (u, v) of the upright board's width and height (``BOARD_GRID``)."""
    left, top, grid_w, grid_h, _ = BOARD_GRID
    return (left + (column + 0.5) * grid_w / BOARD_COLUMNS,
            top + (row + 0.5) * grid_h / BOARD_ROWS)


def board_cell(u: float, v: float) -> tuple[float, float]:
    """A point on the upright board, as shares (u, v) of its width and height, in cells
    (column, row) from the grid's top-left, fractional: ``cell_middle``'s inverse, the
    middles at .5."""
    left, top, grid_w, grid_h, _ = BOARD_GRID
    return (u - left) / (grid_w / BOARD_COLUMNS), (v - top) / (grid_h / BOARD_ROWS)


BOARD_FIT_VIEW = (240, 120, 12)
"""The board is fitted to its cells in a view of this width and height (pixels) with
this margin of table around it."""
BOARD_FIT_CC = 0.48
"""A fit of the board to its cells is taken when its correlation with the board's
layout reaches this. On rendered scenes 61000-61029 (normal) every fit that landed
within 0.1 cells of the true corners reached 0.62 or more; the three that went astray
(a hand over the board, a board seen steeply with cards against it) ended at 0.41 to
0.45. Seen steeply on a pale table (hard), fits on the cells correlate less: 0.50
(dev 61319, 61333 hard), and under 0.55 the located quad, a column or two off, stood."""
BOARD_FIT_GOOD = 0.65
"""A fit from the located quad correlating this well is kept without trying the other
starts: on scenes 61300-61359 the side lines' start won only where the first fit had
failed or reached 0.64 (the first fits' median 0.72)."""
BOARD_FIT_DETAIL = 1.5
"""The photo around a board is shrunk, for its fit to the cells, until the board spans
at most this many times the layout's width (BOARD_FIT_VIEW)."""
FIT_ITERATIONS = 60
SCREEN_ITERATIONS = 20
"""ECC iterations of a board's fit to its cells; the other starts of a weak fit are
screened with fewer, at half size only (``_fit_to_cells(fine=False)``: the full-size
step only polishes a fit the half-size one has placed), and only the best of them is
fitted in full. Screening at half size only, dev Cat in the Box photo -> state: readings
identical on 61940-61999, 61700-61759, 61600-61659 normal; on 60500-60549 and
61900-61949 hard 3 of 100 differ, wrong either way (a board a column off, differently);
CPU a photo median -27 to -42 ms (200 -> 173 ms at normal)."""
COLUMN_STEPS = ((1, 0), (0, 1), (-1, 0), (0, -1))
COLUMN_STEP_BELOW = 0.75
COLUMN_STEP_ROUNDS = 3
"""A fit correlating under COLUMN_STEP_BELOW is tried again from its quad a column
longer or shorter at either end (a card against the board's end cuts its outline short
by a column, and the fit, whose reach is half a cell, lands a column off): the better
correlating fit is kept, and stepped from again while it stays weak, up to
COLUMN_STEP_ROUNDS times. Dev scenes 61212 and 61827: fitted 1.2 cells off at 0.58
and 0.59; from the quad a column longer at its start, 0.06 cells off at 0.67; 61619:
0.70 a column off after one step, 0.82 on the cells after two. Outlines of scenes
61000-61005 cut a column short: fitted a column off at 0.55-0.66; dev 61139: 0.703 a
column off, 0.78 on the cells (under 0.75: no other board of 280 dev scenes moved)."""
COLUMN_LEAPS = ((2, 0), (0, 2), (-2, 0), (0, -2))
"""When no fit converges, not even a column longer or shorter, the outline is tried
two columns longer or shorter at either end: a hand over the board's end lengthens it
by two or three (dev 61825: fitted from two columns shorter at its start, 0.61 on the
cells). Tried whenever a fit is weak, these steps moved three boards of dev 61100 hard
from their cells to two or three columns off."""
TOKEN_VOTES = 18
"""Hough accumulator threshold for a token's circle in the board view."""
TOKEN_CONTRAST = 22.0
"""A token differs from the cell around it: the Lab distance (OpenCV's 8-bit scale) of
the circle's middle from the ring just outside it. On 30 rendered scenes every token
was over 27; most circles on empty cells (their rounded outlines) under 27."""
CELL_TOKEN_CONTRAST = 30.0
"""A cell's middle holds a token the circle search missed when it differs from the cell
around it by this much (``tokens_in_cells``). On rendered scenes 61600-61639 (normal,
boards fitted) empty cells' middles differed by 0.8 at the median and 17.9 at the 99th
percentile (over 30: four cells, three under a hand); found tokens by 30.4 or more at
the first percentile; 17 of 43 tokens the circles missed by over 30."""

FAINT_TOKEN_CONTRAST = 20.0
"""A cell with no token found whose middle differs from the cell around it by this much
or more, yet less than CELL_TOKEN_CONTRAST, may hold a token of the cell's own colour
(``faint_cells``): a yellow token on a yellow cell differed by 23.0 (dev 61932 hard, read
empty in a reading claimed whole); empty cells' middles 17.9 at the 99th percentile
(61600-61639 normal). Such a cell is reported unknown, not empty."""

CONTRAST = 18.0
"""Lab distance (lightness weighted, see below) from the table around it that makes a
pixel part of a piece in the "contrast" mask."""
LIGHTNESS_WEIGHT = 0.4
"""Weight of squared lightness in that distance: shadows on the table change lightness
far more than colour."""

GROOVE = 9
"""Width in work pixels of the widest dark line read as a groove between pieces."""
GROOVE_DEPTH = 14
"""How much darker than its surroundings (Lab lightness) a groove must be."""

Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Other:
    """A second kind of piece in a game, told from the main one by its aspect and its
    area relative to the main piece's (a score sheet is several cards large)."""

    kind: str
    aspect: float
    min_area: float
    max_area: float
    largest: bool = False  # there is one, the largest thing on the table (a board)


@dataclass(frozen=True)
class Profile:
    """What a game's pieces look like to the locator: the main kind and its aspect
    (short/long side), how pieces differ from the table ("light": cream tiles by
    colour; "contrast": anything unlike the table around it), other kinds, and the
    smallest piece as a share of the image area."""

    kind: str
    aspect: float
    mask: str = "light"
    others: tuple[Other, ...] = ()
    min_area: float = 2.5e-4


CARD = 59.0 / 91.0
PROFILES: dict[str, Profile] = {
    "nummix": Profile("nummix_tile", TILE_ASPECT),
    "nox": Profile("nox_card", CARD, "contrast"),
    "qwixx": Profile("qwixx_card", CARD, "contrast",
                     (Other("qwixx_sheet", 105 / 148, 2.5, 12.0),)),
    "rox": Profile("rox_card", 1.0, "contrast", (Other("rox_scoring", 44 / 68, 0.45, 0.85),)),
    "catbox": Profile("catbox_card", CARD, "contrast",
                      (Other("catbox_board", 150 / 300, 6.0, 40.0, largest=True),
                       Other("token", 1.0, 0.02, 0.12))),
}
"""Sizes from COMPONENTS.md and the renderer (millimetres): cards 59×91, Rox cards
68×68 and scoring cards 44×68, the Qwixx sheet about A6 (105×148), the Cat in the Box
board 150×300, tokens 16×16."""


def locate(image: Image, *, game: str, profile: Profile | None = None,
           markers: Sequence[Marker] | None = None) -> Detections:
    """Every piece of ``game`` found in the BGR ``image``, as quads in image pixels
    (clockwise, first edge a short edge, ``oriented=False``). ``markers`` are the
    photo's ArUco markers when the caller has found them already (image pixels; they
    are erased from the piece mask), else they are found here."""
    if game not in GAMES:
        raise InputError("game", f"unknown game {game!r}; one of: {', '.join(GAMES)}")
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise InputError("image", "expected a BGR uint8 image (height, width, 3)")
    profile = profile or PROFILES.get(game) or PROFILES["nummix"]
    if min(image.shape[:2]) < MIN_SIDE:
        return Detections.empty()
    scale = min(1.0, WORK_SIDE / max(image.shape[:2]))
    work = image if scale == 1.0 else cv2.resize(
        image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    work_markers = None if markers is None else [
        Marker(m.id, np.asarray(m.corners, np.float32) * np.float32(scale)) for m in markers]
    found = _locate_lattice(work, profile, work_markers)
    if not found:
        return Detections.empty()
    out = np.asarray([q for q, _ in found], np.float32) / scale
    h, w = image.shape[:2]  # a piece cut by the border is reported by its visible part
    out[..., 0] = out[..., 0].clip(0, w)
    out[..., 1] = out[..., 1].clip(0, h)
    return Detections(out, tuple(k for _, k in found))


# ---------------------------------------------------------------- the piece mask

class Masks(NamedTuple):
    """Piece pixels (255) found by colour: ``raw`` per pixel, ``whole`` with holes (glyphs)
    filled, ``cut`` with thin dark grooves removed so touching pieces part; ``grooves``
    says how much darker than its surroundings each pixel is (a groove's depth)."""

    raw: npt.NDArray[np.uint8]
    whole: npt.NDArray[np.uint8]
    cut: npt.NDArray[np.uint8]
    grooves: npt.NDArray[np.uint8]


def piece_mask(image: Image, markers: Sequence[Marker] | None = None) -> Masks:
    """Masks of light piece pixels: much brighter than the table, clearly warmer (cream)
    than a light neutral table, or smooth and lighter than a light table around them
    (``markers``: the image's ArUco markers, found here when not given)."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    light, a_ch, b_ch = (lab[..., i].astype(np.int16) for i in range(3))
    sample = lab[::4, ::4].reshape(-1, 3)
    l_bg, a_bg, b_bg = (int(v) for v in np.median(sample, axis=0))
    chroma = np.abs(a_ch - 128) + np.abs(b_ch - 128)
    brighter = (light - l_bg > 60) & (light > 140) & (chroma < 45)
    warmer = ((b_ch - b_bg > 7) & (light > 100) & (a_ch - 128 < b_ch - 128 + 2)
              & (light > l_bg - 80))
    # on a light, textured table (a woven cloth) a piece is the smooth brighter part
    level = light.astype(np.float32)
    mean = cv2.blur(level, (7, 7))
    spread = np.sqrt(np.maximum(cv2.blur(level * level, (7, 7)) - mean * mean, 0))
    textured = l_bg > 130 and float(np.median(spread[::4, ::4])) > TEXTURED
    smooth = ((light - l_bg > 25) & (spread < 7) & (chroma < 40) if textured
              else np.zeros(light.shape, bool))
    lifted = np.zeros_like(smooth)
    if l_bg > 130:  # a light table lit unevenly: brighter than the table around it
        small = cv2.resize(lab[..., 0], None, fx=1 / 8, fy=1 / 8, interpolation=cv2.INTER_AREA)
        local = cv2.resize(cv2.medianBlur(small, 15), (light.shape[1], light.shape[0]),
                           interpolation=cv2.INTER_LINEAR).astype(np.int16)
        coloured = abs(a_bg - 128) + abs(b_bg - 128) > TINTED  # a coloured cloth, not stone
        lifted = (light - local > LIFT) & (chroma < 40) & ((spread < 7) | coloured)
    # unlike the table around it in colour, lighter, and near neutral (cream on green)
    table_distance, table_light = _table_distance(lab)
    distinct = (table_distance > CONTRAST) & (light - table_light > 8)
    if l_bg > 130 and abs(a_bg - 128) + abs(b_bg - 128) > TINTED:  # a light cloth
        whole_table = np.sqrt(LIGHTNESS_WEIGHT * (light - l_bg).astype(np.float32) ** 2
                              + (a_ch - a_bg).astype(np.float32) ** 2
                              + (b_ch - b_bg).astype(np.float32) ** 2)  # a crowded table
        distinct |= (whole_table > CONTRAST) & (light - l_bg > 8)
    distinct &= chroma < 35
    not_skin = a_ch - 128 < SKIN_RED  # a hand is redder than any cream tile
    raw = (((brighter | warmer | smooth | lifted | distinct) & not_skin).astype(np.uint8)) * 255
    raw = cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    _erase_markers(image, raw, markers)
    whole = _fill(cv2.morphologyEx(raw, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8)))
    # thin dark lines (the grooves between touching pieces) cut the mask apart
    grooves = cv2.morphologyEx(lab[..., 0], cv2.MORPH_BLACKHAT, np.ones((GROOVE, GROOVE), np.uint8))
    cut = raw.copy()
    cut[grooves > GROOVE_DEPTH] = 0
    cut = cv2.erode(cut, np.ones((3, 3), np.uint8))
    return Masks(raw, whole, _fill(cut), grooves)


def contrast_mask(image: Image, markers: Sequence[Marker] | None = None) -> Masks:
    """Masks of piece pixels for pieces of any colour (dark Nox cards, grey Rox cards):
    pixels unlike the table around them (Lab distance from a coarse median of the
    image), with the table's ArUco markers (found here when not given) removed."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    distance, table_light = _table_distance(lab)
    darker = lab[..., 0].astype(np.int16) - table_light < -SHADOW
    hue_kept = distance ** 2 - LIGHTNESS_WEIGHT * (
        lab[..., 0].astype(np.float32) - table_light) ** 2 < SHADOW_CHROMA ** 2
    shadow = darker & hue_kept & (lab[..., 0].astype(np.int16) - table_light > -DEEP)
    raw = (((distance > CONTRAST) & ~shadow) * 255).astype(np.uint8)
    raw = cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    _erase_markers(image, raw, markers)
    whole = _fill(cv2.morphologyEx(raw, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8)))
    grooves = cv2.morphologyEx(lab[..., 0], cv2.MORPH_BLACKHAT, np.ones((GROOVE, GROOVE), np.uint8))
    # cards carry strong printed lines, so only the table showing between them parts them
    cut = cv2.erode(raw, np.ones((3, 3), np.uint8))
    return Masks(raw, whole, _fill(cut), grooves)


def _table_distance(lab: npt.NDArray[np.uint8]
                    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int16]]:
    """How unlike the table around it each pixel is (Lab distance, lightness weighted
    by LIGHTNESS_WEIGHT, from a coarse median of the image) and the table's lightness."""
    h, w = lab.shape[:2]
    small = cv2.resize(lab, (max(8, w // 16), max(8, h // 16)), interpolation=cv2.INTER_AREA)
    table = cv2.resize(cv2.medianBlur(small, 9), (w, h), interpolation=cv2.INTER_LINEAR)
    diff = lab.astype(np.float32) - table.astype(np.float32)
    distance = np.sqrt(LIGHTNESS_WEIGHT * diff[..., 0] ** 2 + diff[..., 1] ** 2
                       + diff[..., 2] ** 2)
    return distance, table[..., 0].astype(np.int16)


def _erase_markers(image: Image, mask: npt.NDArray[np.uint8],
                   markers: Sequence[Marker] | None = None) -> None:
    """Clear the table's ArUco markers (and their white margin) from ``mask``; they are
    found in ``image`` unless given."""
    from companion.calibration.markers import detect_markers

    for marker in detect_markers(image) if markers is None else markers:
        centre = marker.corners.mean(axis=0)
        grown = centre + (marker.corners - centre) * 1.7
        cv2.fillConvexPoly(mask, np.round(grown).astype(np.int32), 0)


def _fill(mask: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The mask with every hole (a glyph, a logo) filled and specks removed."""
    filled = np.zeros_like(mask)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(filled, contours, -1, 255, cv2.FILLED)
    out: npt.NDArray[np.uint8] = cv2.morphologyEx(filled, cv2.MORPH_OPEN,
                                                  np.ones((3, 3), np.uint8))
    return out


# ---------------------------------------------------------------- blobs to lattices

@dataclass(frozen=True)
class _Blob:
    """A connected patch of piece pixels and the quadrilateral around it: corners
    0→1 run along its long side, 1→2 along its short side."""

    rect: tuple[tuple[float, float], tuple[float, float], float]
    fill: float  # share of the rectangle the blob covers
    pixels: float  # the blob's area
    corners: npt.NDArray[np.float32]
    contour: npt.NDArray[np.int32]

    @property
    def short(self) -> float:
        c = self.corners
        return float(np.linalg.norm(c[2] - c[1]) + np.linalg.norm(c[3] - c[0])) / 2

    @property
    def long(self) -> float:
        c = self.corners
        return float(np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 2


def _locate_lattice(image: Image, profile: Profile, markers: Sequence[Marker] | None = None
                    ) -> list[tuple[npt.NDArray[np.float32], str]]:
    """(quad, kind) of the pieces: a blob of the whole mask that is one clean piece of
    another kind (a sheet, a board, a token) is taken as it is; a neat blob is split as
    a lattice of the main piece; a ragged one is first cut along its grooves."""
    masks = (piece_mask(image, markers) if profile.mask == "light"
             else contrast_mask(image, markers))
    raw, whole, cut, grooves = masks
    min_area = profile.min_area * image.shape[0] * image.shape[1]
    groups: list[tuple[_Blob | None, list[_Blob]]] = []
    contours, _ = cv2.findContours(whole, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    for contour in contours:
        if cv2.contourArea(contour) < min_area:
            continue
        blob = _blob(contour, min_area)
        x, y, w, h = cv2.boundingRect(contour)
        region = np.zeros((h, w), np.uint8)
        cv2.drawContours(region, [contour - np.array([x, y])], -1, 255, cv2.FILLED)
        region &= cut[y:y + h, x:x + w]
        parts, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE,
                                    offset=(x, y))
        pieces = [b for b in (_blob(p, min_area) for p in parts) if b is not None]
        groups.append((blob, pieces))
    everything = [g[0] for g in groups if g[0] and g[0].fill > WHOLE_FILL]
    everything += [p for g in groups if not (g[0] and g[0].fill > WHOLE_FILL) for p in g[1]]
    size = _size_model(everything, profile.aspect)
    quads: list[tuple[npt.NDArray[np.float32], str]] = []
    others: list[tuple[npt.NDArray[np.float32], str]] = []
    biggest = max((g[0] for g in groups if g[0] is not None), key=lambda b: b.pixels,
                  default=None)
    if biggest is not None and size is not None and any(o.largest for o in profile.others):
        # cards laid against the board: part them from it where they meet
        index = next(i for i, g in enumerate(groups) if g[0] is biggest)
        split = _separate(biggest, size(biggest), profile.aspect, min_area, most=60)
        if len(split) > 1:
            split.sort(key=lambda b: -b.pixels)
            biggest = split[0]
            groups[index] = (biggest, [biggest])
            groups += [(part, [part]) for part in split[1:]]
    for blob, parts in groups:
        other = _other_kind(blob, size, profile, biggest=blob is biggest)
        if other is not None and blob is not None:
            others.append((short_edge_first(blob.corners), other))
            continue
        pieces = [p for p in parts if _usable(p, size and size(p), profile.aspect)]
        covered = sum(p.pixels for p in pieces)
        if blob is not None and (blob.fill > WHOLE_FILL or covered < 0.6 * blob.pixels):
            # a neat blob, or one the grooves only shredded: split it as a whole
            pieces = [blob] if _usable(blob, size and size(blob), profile.aspect) else []
        for piece in (p for whole_part in pieces for p in _separate(
                whole_part, size and size(whole_part), profile.aspect, min_area, most=30)):
            unit = size and size(piece)
            kind, aspect = _best_kind(piece, unit, profile)
            quads.extend((_refine(q, cut, aspect), kind)
                         for q in _split(raw, grooves, piece, unit, aspect))
    if quads and size is None:  # no typical size: specks far smaller than the largest
        areas = np.array([cv2.contourArea(q) for q, _ in quads])
        quads = [qk for qk, a in zip(quads, areas, strict=True) if a >= MIN_SHARE * areas.max()]
    # every piece shows a number or symbols; a glare spot does not
    least = MIN_PRINT if profile.mask == "contrast" else MIN_PRINT_TILE
    quads = [(q, k) for q, k in quads if _has_print(image, q, least)]
    tokens = [(q, "token") for board, kind in others if kind == "catbox_board"
              for q in tokens_on_board(image, board)]
    return quads + others + tokens


def tokens_on_board(image: Image, board: npt.NDArray[np.float32]) -> list[npt.NDArray[np.float32]]:
    """Round tokens lying on the research board: circles of the token's size (16 mm on
    a 300 mm board) in the board's rectified view, as square quads in the image. Circles
    are looked for in the grey view and in Lab's a* and b*: a yellow token on a pale
    yellow cell or a red one on a pink cell hardly differs in grey, but does in colour.
    A circle whose middle looks like the ring around it is an empty cell's outline."""
    corners = np.asarray(board, np.float32)
    if np.linalg.norm(corners[1] - corners[0]) < np.linalg.norm(corners[2] - corners[1]):
        corners = np.roll(corners, -1, axis=0)  # long edge first
    view = board_view(image, corners)
    lab = view.lab
    channels = [cv2.cvtColor(view.bgr, cv2.COLOR_BGR2GRAY)]
    channels += [cv2.normalize(lab[..., k], None, 0, 255, cv2.NORM_MINMAX) for k in (1, 2)]
    radius = TOKEN_RADIUS
    found: list[tuple[float, float, float]] = []
    for channel in channels:
        circles = cv2.HoughCircles(cv2.GaussianBlur(channel, (5, 5), 1.2), cv2.HOUGH_GRADIENT,
                                   dp=1, minDist=1.5 * radius, param1=80,
                                   param2=TOKEN_VOTES, minRadius=round(0.7 * radius),
                                   maxRadius=round(1.3 * radius))
        for x, y, r in (circles[0] if circles is not None else []):
            if any(np.hypot(x - a, y - b) < 1.5 * radius for a, b, _ in found):
                continue
            if _token_contrast(lab, x, y, r) >= TOKEN_CONTRAST:
                found.append((float(x), float(y), float(r)))
    back = np.linalg.inv(view.to_view)
    return [_token_square(x, y, r, back) for x, y, r in found]


@cache
def _board_layout() -> npt.NDArray[np.float32]:
    """The board's face as the fit sees it, in the BOARD_FIT_VIEW: 1 where a pixel
    unlike the board's paper is expected (the cells, the table around the board), 0 on
    the paper (its margins, the number row, the gaps between cells). Drawn once and
    shared by every fit (read-only)."""
    width, height, margin = BOARD_FIT_VIEW
    _, _, grid_w, grid_h, inset = BOARD_GRID
    layout = np.ones((height + 2 * margin, width + 2 * margin), np.float32)
    layout[margin:margin + height, margin:margin + width] = 0
    cw, ch = width * grid_w / BOARD_COLUMNS, height * grid_h / BOARD_ROWS
    half_w, half_h = cw * (0.5 - inset), ch * (0.5 - inset)
    for row in range(BOARD_ROWS):
        for col in range(BOARD_COLUMNS):
            u, v = cell_middle(row, col)
            x, y = margin + u * width, margin + v * height
            cv2.rectangle(layout, (round(x - half_w), round(y - half_h)),
                          (round(x + half_w), round(y + half_h)), 1.0, cv2.FILLED)
    layout.flags.writeable = False
    return layout


@cache
def _half_board_layout() -> npt.NDArray[np.float32]:
    """``_board_layout`` at half size, the coarse stage's template
    (``_ecc_coarse_to_fine``); made once (read-only)."""
    small = np.asarray(cv2.resize(_board_layout(), None, fx=0.5, fy=0.5,
                                  interpolation=cv2.INTER_AREA), np.float32)
    small.flags.writeable = False
    return small


def fit_board_to_cells(image: Image, quad: npt.NDArray[np.float32], *,
                       starts: Sequence[npt.NDArray[np.float32]] = ()
                       ) -> npt.NDArray[np.float32]:
    """The upright board ``quad`` fitted to its printed cells (``_fit_to_cells``), from
    it and, while the fit is weak (BOARD_FIT_GOOD), from each other start (the same
    corners' order), then from the best a column longer or shorter (COLUMN_STEPS), and
    if none converges from two columns (COLUMN_LEAPS): the fit that correlates best.
    When none converges above BOARD_FIT_CC, the outline (``quad`` or a start) that
    correlates best with the cells as it stands (``_start_correlation``): a corner of the
    located outline can run on along a faint edge (dev 60411 normal, a white board on a
    pale table: 0.22 as located, 0.35 along the side lines). A trapezoid's minimum-area
    rectangle puts a corner one to two cells out, beyond the fit's reach, where lines
    along the outline's sides do not (segment._corners_of_side_lines). The other starts
    are screened on the photo around ``quad`` (``_fit_crop``, cut once), and only the
    best of each batch is fitted again on the photo around it (``_better_start``). When
    none of those converges, each outline with one corner mended from the other three
    (``_corner_mended``): a hand over a corner of the board pulls it out. Dev Cat in the
    Box photo -> state: exact 92 -> 93 of 100 (61000, normal: 61080), 37 of 40 (61700,
    normal) the same, 34 -> 36 of 50 (61900, hard); no scene newly wrong; CPU median the
    same within its noise (239 -> 236, 325 -> 334 ms)."""
    around = _fit_crop(image, quad)  # the photo around the board, shared by the screens
    first = _fit_to_cells(image, quad, around=around)
    # a weak fit: other starts, each fitted briefly (SCREEN_ITERATIONS), the best of
    # them then fitted in full and kept if it correlates better than the first
    best = first
    if first[0] < BOARD_FIT_GOOD:
        best = _better_start(image, around, starts, best, iterations=SCREEN_ITERATIONS)
    if best[0] < 0:  # none converged: a corner pulled onto a hand or a card?
        best = _better_start(image, around, [m for start in (quad, *starts)
                                             for m in _corner_mended(start)], best,
                             iterations=SCREEN_ITERATIONS)
    for _ in range(COLUMN_STEP_ROUNDS):  # still weak: a column short or long at an end?
        if best[0] >= COLUMN_STEP_BELOW:
            break
        base = best
        best = _better_start(image, around, [_lengthened(base[1], before, after)
                                             for before, after in COLUMN_STEPS], best,
                             iterations=SCREEN_ITERATIONS, mend=False)
        if best is base:
            break
    if best[0] < 0:  # nothing converged: an outline two columns long or short?
        best = _better_start(image, around, [_lengthened(quad, before, after)
                                             for before, after in COLUMN_LEAPS], best,
                             iterations=SCREEN_ITERATIONS)
    if best[0] < 0:  # no fit: the outline that lies best on the cells as it stands
        return max((quad, *starts), key=lambda start: _start_correlation(image, start))
    if best is first:
        return first[1]
    full = _fit_to_cells(image, best[1])
    return full[1] if full[0] > first[0] else first[1]


def _better_start(image: Image, around: _FitCrop, starts: Sequence[npt.NDArray[np.float32]],
                  best: tuple[float, npt.NDArray[np.float32]], *, iterations: int,
                  mend: bool = True) -> tuple[float, npt.NDArray[np.float32]]:
    """The fit (correlation, quad) of the first of ``starts`` that correlates best, when
    that beats ``best``; else ``best``. Each start is screened on the photo ``around``
    the located board, cut, shrunk and converted once (cutting them anew for each start
    cost as much as the fits); the best of them is fitted again on the photo around it
    (``_fit_crop``), as every fit once was: the crop's reach and detail move a fit by a
    hundredth of a cell, which flipped a cell's 'covered' test (dev 61604 hard) when it
    was kept."""
    if not len(starts):
        return best
    screened = [_fit_to_cells(image, start, around=around, iterations=iterations, mend=mend,
                              fine=False) for start in starts]
    k = max(range(len(starts)), key=lambda i: screened[i][0])  # the first of the best
    if screened[k][0] < 0:  # none converged on the shared crop
        return best
    tried = _fit_to_cells(image, starts[k], iterations=iterations, mend=mend)
    return tried if tried[0] > best[0] else best


def _corner_mended(quad: npt.NDArray[np.float32]) -> list[npt.NDArray[np.float32]]:
    """``quad`` with each corner in turn put where the other three make it a
    parallelogram: a hand or a card over one corner of the board pulls the located
    outline's corner onto it (dev 61080 normal: 45 px, beyond the fit's reach), and the
    other three still place the cells."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    out = []
    for k in range(4):
        mended = q.copy()
        mended[k] = q[(k + 1) % 4] + q[(k + 3) % 4] - q[(k + 2) % 4]
        out.append(mended)
    return out


def _lengthened(quad: npt.NDArray[np.float32], before: int, after: int
                ) -> npt.NDArray[np.float32]:
    """The upright board ``quad`` with ``before`` columns of cells more before its first
    and ``after`` more after its last (negative: fewer), in its own perspective."""
    unit = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])
    to_image = cv2.getPerspectiveTransform(unit, np.asarray(quad, np.float32).reshape(4, 2))
    column = BOARD_GRID[2] / BOARD_COLUMNS
    ends = np.float32([[-before * column, 0], [1 + after * column, 0],
                       [1 + after * column, 1], [-before * column, 1]])
    out: npt.NDArray[np.float32] = cv2.perspectiveTransform(
        ends.reshape(-1, 1, 2), to_image).reshape(4, 2).astype(np.float32)
    return out


@dataclass(frozen=True)
class _FitCrop:
    """The photo around a board as its fits work on it (``_fit_crop``): the board and
    the table around it, cropped and shrunk by ``scale`` from ``origin``, in BGR and
    CIELAB."""

    crop: Image
    lab: Image
    scale: float
    origin: npt.NDArray[np.float32]


@dataclass(frozen=True)
class _FitInputs:
    """What the fit of a board to its cells works on: the photo around it (``_FitCrop``),
    how unlike the board's paper each of its pixels is, the homography from the layout's
    view to it, and the face's corners in that view."""

    around: _FitCrop
    unlike: npt.NDArray[np.float32]
    to_image: npt.NDArray[np.float64]
    face: npt.NDArray[np.float32]


def _layout_face() -> npt.NDArray[np.float32]:
    """The board's corners in the layout's view (BOARD_FIT_VIEW)."""
    width, height, margin = BOARD_FIT_VIEW
    return np.float32([[margin, margin], [margin + width, margin],
                       [margin + width, margin + height], [margin, margin + height]])


def _fit_crop(image: Image, quad: npt.NDArray[np.float32]) -> _FitCrop:
    """The ``_FitCrop`` of the upright board ``quad`` in the BGR ``image``: only the board
    and the table around it (the layout's view grown by half each way: room for the
    other starts of its fit, a column or two longer or shorter), shrunk so the board
    spans at most BOARD_FIT_DETAIL times the layout's width (ECC takes the gradients of
    the whole image it is given). Made once for the located quad and shared by every fit
    of the board from it (``fit_board_to_cells``): cutting, shrinking and converting the
    photo anew for each start cost more than some of the fits."""
    width, height, margin = BOARD_FIT_VIEW
    layout_h, layout_w = height + 2 * margin, width + 2 * margin
    to_image = cv2.getPerspectiveTransform(_layout_face(),
                                           np.asarray(quad, np.float32).reshape(4, 2))
    seen = cv2.perspectiveTransform(np.float32([[[0, 0], [layout_w, 0],
                                                 [layout_w, layout_h],
                                                 [0, layout_h]]]), to_image)[0]
    grow = 0.5 * (seen.max(axis=0) - seen.min(axis=0))
    x0, y0 = np.maximum(np.floor(seen.min(axis=0) - grow), 0).astype(int)
    x1, y1 = np.ceil(seen.max(axis=0) + grow).astype(int)
    corners = np.asarray(quad, np.float32).reshape(4, 2)
    across = float(max(np.linalg.norm(corners[1] - corners[0]),
                       np.linalg.norm(corners[2] - corners[3])))
    scale = min(1.0, BOARD_FIT_DETAIL * width / max(across, 1.0))
    crop = image[y0:y1, x0:x1]
    if scale < 1.0:
        crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return _FitCrop(crop, cv2.cvtColor(crop, cv2.COLOR_BGR2LAB), scale, np.float32([x0, y0]))


def _fit_inputs(around: _FitCrop, quad: npt.NDArray[np.float32]) -> _FitInputs:
    """The ``_FitInputs`` of the upright board ``quad`` (image pixels) in the photo
    ``around`` it: the paper's colour is the median of the number row's band as ``quad``
    places it."""
    width, height, margin = BOARD_FIT_VIEW
    layout_h, layout_w = height + 2 * margin, width + 2 * margin
    face = _layout_face()
    (x0, y0), scale = around.origin.astype(np.float64), around.scale
    shift = np.array([[scale, 0, -x0 * scale], [0, scale, -y0 * scale], [0, 0, 1]],
                     np.float64)
    to_image = (shift @ cv2.getPerspectiveTransform(
        face, np.asarray(quad, np.float32).reshape(4, 2))).astype(np.float64)
    view = cv2.warpPerspective(around.lab.astype(np.float32), to_image, (layout_w, layout_h),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    band = view[margin + int(0.04 * height):margin + int(0.14 * height),
                margin + int(0.05 * width):margin + int(0.95 * width)].reshape(-1, 3)
    return _FitInputs(around, _unlike_paper(around.lab, np.median(band, axis=0)), to_image,
                      face)


def _unlike_paper(lab: Image, paper: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """How unlike the ``paper`` colour each pixel of the CIELAB ``lab`` is: the distance
    with lightness at half weight, sqrt(0.5 dL² + da² + db²), in float32. Worked channel
    by channel in place (the same float32 steps in the same order as on the (h, w, 3)
    difference: the same bits, some twice as fast)."""
    lightness, a, b = (channel.astype(np.float32) for channel in cv2.split(lab))
    for channel, value in zip((lightness, a, b), paper, strict=True):
        channel -= value
        channel *= channel
    lightness *= np.float32(0.5)
    lightness += a
    lightness += b
    out: npt.NDArray[np.float32] = np.sqrt(lightness, out=lightness)
    return out


def _start_correlation(image: Image, quad: npt.NDArray[np.float32]) -> float:
    """How well the upright board ``quad``, as it stands, lies on the board's printed
    cells: the correlation ``_fit_to_cells`` starts from (ECC's, unfitted)."""
    inputs = _fit_inputs(_fit_crop(image, quad), quad)
    layout = _board_layout()
    view = cv2.warpPerspective(inputs.unlike, inputs.to_image, layout.shape[::-1],
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    return float(cv2.computeECC(layout, view))


def _fit_to_cells(image: Image, quad: npt.NDArray[np.float32], *,
                  around: _FitCrop | None = None, iterations: int = FIT_ITERATIONS,
                  mend: bool = True, fine: bool = True) -> tuple[float, npt.NDArray[np.float32]]:
    """The upright board ``quad`` (top-left first, the number row along its first edge)
    moved onto the board's printed cells in the BGR ``image``: the homography that best
    correlates (OpenCV's ECC) how unlike the board's paper each pixel is with the
    board's layout (``_board_layout``), started from ``quad``. The outline the locator
    gives can be off by a cell where a card or a hand touches the board or its edge is
    faint; the cells, all over the board, are not. Returns the correlation and the
    fitted quad; -1 and ``quad`` when the fit does not converge, correlates less than
    BOARD_FIT_CC, or leaves the board's print running past an end of its grid
    (``PRINT_PAST_END``: a hand over the far columns lets a grid a few columns short
    correlate best) and, with ``mend``, fitted again from a column longer at that end,
    still does (dev 60641 normal: the side lines' fit, a column short, 0.78 mended). The
    fit works on the photo ``around`` the board when given (``_fit_crop``), else on the
    photo around ``quad``. ``fine``: the fit's full-size step too (else the half-size
    fit's correlation and quad: what a screen of starts needs, ``SCREEN_ITERATIONS``)."""
    shared = around
    if around is None:
        around = _fit_crop(image, quad)
    inputs = _fit_inputs(around, quad)
    try:
        cc, fitted = _ecc_coarse_to_fine(inputs.unlike, inputs.to_image, iterations,
                                         fine=fine)
    except cv2.error:
        return -1.0, np.asarray(quad, np.float32)
    if not cc >= BOARD_FIT_CC:
        return -1.0, np.asarray(quad, np.float32)
    seen = cv2.perspectiveTransform(inputs.face.reshape(1, 4, 2), fitted).reshape(4, 2)
    out: npt.NDArray[np.float32] = (seen / around.scale + around.origin).astype(np.float32)
    before, after = (count >= PRINT_PAST_END for count in print_past_ends(around.crop, seen))
    if not (before or after):
        return float(cc), out
    if not mend:  # the board runs on past the grid: a column or more off
        return -1.0, np.asarray(quad, np.float32)
    return _fit_to_cells(image, _lengthened(out, int(before), int(after)),
                         around=shared, iterations=iterations, mend=False, fine=fine)


FINE_ITERATIONS = 10
"""A board's fit runs its iterations on the layout and the photo at half size, then
this many at full size from there: an iteration's cost goes with the pixels, and the
half-size fit lands within the full-size fit's reach. Dev catbox e2e (60 scenes each,
normal 60400 and 60600, hard 60500 and 60100): the same scenes exact, the same
verdicts; the boards of dev 60600-60629 refitted with 12-22 % less CPU (ECC converges
in fewer than FIT_ITERATIONS mostly). Fitting at a smaller view instead
(BOARD_FIT_VIEW 160 wide) was cheaper but left fits 0.26 cells off (dev 60429)."""


def _ecc_coarse_to_fine(unlike: npt.NDArray[np.float32], to_image: npt.NDArray[np.float64],
                        iterations: int, *, fine: bool = True
                        ) -> tuple[float, npt.NDArray[np.float32]]:
    """OpenCV's ECC homography from the board's layout (``_board_layout``) to ``unlike``
    (its correlation and the warp, layout to image pixels), ``iterations`` at half size
    then, with ``fine``, FINE_ITERATIONS at full size."""
    half = np.diag([0.5, 0.5, 1.0])
    layout, small = _board_layout(), _half_board_layout()
    seen = cv2.resize(unlike, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    coarse_cc, coarse = cv2.findTransformECC(
        small, seen, (half @ to_image @ np.linalg.inv(half)).astype(np.float32),
        cv2.MOTION_HOMOGRAPHY,
        (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, iterations, 1e-4), None, 3)
    start = np.linalg.inv(half) @ coarse.astype(np.float64) @ half
    if not fine:
        return float(coarse_cc), start.astype(np.float32)
    cc, fitted = cv2.findTransformECC(
        layout, unlike, start.astype(np.float32), cv2.MOTION_HOMOGRAPHY,
        (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, FINE_ITERATIONS, 1e-4), None, 5)
    return float(cc), fitted


def tokens_in_cells(view: BoardView, tokens: Sequence[npt.NDArray[np.float32]]
                    ) -> list[npt.NDArray[np.float32]]:
    """Tokens the circle search missed (a blurred token's rim gives too few votes) on the
    upright, fitted board seen in ``view`` (``board_view``: top-left first, the number
    row along its first edge): the middle of every cell with none of ``tokens`` in it
    holds one when it differs from the cell around it by CELL_TOKEN_CONTRAST (an empty
    cell's middle is its own colour). Square quads in image pixels, as
    ``tokens_on_board``."""
    back = np.linalg.inv(view.to_view)
    return [_token_square(x, y, TOKEN_RADIUS, back)
            for _, _, x, y, contrast in _cells_without_tokens(
                view, view.seen([q.mean(axis=0) for q in tokens]))
            if contrast >= CELL_TOKEN_CONTRAST]


def faint_cells(view: BoardView, tokens: npt.NDArray[np.float32]) -> list[tuple[int, int]]:
    """The (row, column) cells, 0-based, of the upright, fitted board's ``view`` with none
    of the ``tokens`` (their centres, image pixels) in them whose middle differs from
    the cell around it by ``FAINT_TOKEN_CONTRAST`` but less than ``CELL_TOKEN_CONTRAST``:
    a token of the cell's own colour, or none, cannot be told there."""
    return [(row, col) for row, col, _, _, contrast in _cells_without_tokens(
                view, view.seen(tokens))
            if FAINT_TOKEN_CONTRAST <= contrast < CELL_TOKEN_CONTRAST]


def _cells_without_tokens(view: BoardView, seen: npt.NDArray[np.float32]
                          ) -> Iterator[tuple[int, int, float, float, float]]:
    """(row, column, x, y in the board's view, contrast) of each cell of ``view`` with
    none of the ``seen`` token centres (view pixels) in it: how much its middle differs
    from the cell around it (``_token_contrast``), the sign of a token there."""
    width, height = BOARD_VIEW
    for row in range(BOARD_ROWS):
        for col in range(BOARD_COLUMNS):
            u, v = cell_middle(row, col)
            x, y = u * width, v * height
            if len(seen) and np.linalg.norm(seen - (x, y), axis=1).min() < 1.5 * TOKEN_RADIUS:
                continue
            yield row, col, x, y, view.cell_contrast(row, col)


def token_squares(board: npt.NDArray[np.float32], points: npt.NDArray[np.float32]
                  ) -> list[npt.NDArray[np.float32]]:
    """Quads of a token's size (``TOKEN_RADIUS`` in the board's view: 16 mm on a 300 mm
    board) about ``points`` (image pixels) on the upright, fitted ``board``: a token's
    outline from the board's known scale, not from the circle search's radius."""
    to_view = _to_board_view(board)
    back = np.linalg.inv(to_view)
    return [_token_square(float(x), float(y), TOKEN_RADIUS, back)
            for x, y in _in_view(points, to_view)]


def _token_square(x: float, y: float, r: float, back: npt.NDArray[np.float64]
                  ) -> npt.NDArray[np.float32]:
    """The square of half side ``r`` about (x, y) in a board's view, in image pixels
    (``back``: the view-to-image homography), short edge first."""
    square = np.float32([[[x - r, y - r], [x + r, y - r], [x + r, y + r], [x - r, y + r]]])
    return short_edge_first(cv2.perspectiveTransform(square, back).reshape(4, 2))


def token_contrasts(view: BoardView, points: npt.NDArray[np.float32]) -> list[float]:
    """How much the board's ``view`` at each of ``points`` (image pixels) differs from
    the ring around it, a token's size (``_token_contrast``); 0 for a point off the
    board."""
    width, height = BOARD_VIEW
    return [_token_contrast(view.lab, float(x), float(y), TOKEN_RADIUS)
            if 0 <= x < width and 0 <= y < height else 0.0 for x, y in view.seen(points)]


def token_colours(view: BoardView, points: npt.NDArray[np.float32]
                  ) -> list[npt.NDArray[np.float64] | None]:
    """The colour (Lab, OpenCV's 8-bit scale: the median within 0.6 of a token's radius)
    of the board's ``view`` at each of ``points`` (image pixels); None for a point off
    the board. Looked at in a window round each point, not the whole view: the same
    pixels at a fraction of the cost."""
    width, height = BOARD_VIEW
    reach = 0.6 * TOKEN_RADIUS
    out: list[npt.NDArray[np.float64] | None] = []
    for x, y in view.seen(points):
        x0, x1 = max(0, int(np.floor(x - reach))), min(width, int(np.ceil(x + reach)) + 1)
        y0, y1 = max(0, int(np.floor(y - reach))), min(height, int(np.ceil(y + reach)) + 1)
        if x1 <= x0 or y1 <= y0:
            out.append(None)
            continue
        rows, cols = np.ogrid[y0:y1, x0:x1]
        middle = np.hypot(cols - x, rows - y) < reach
        window = view.lab[y0:y1, x0:x1]
        out.append(np.median(window[middle], axis=0).astype(np.float64) if middle.any()
                   else None)
    return out


def cells_under(view: BoardView, points: npt.NDArray[np.float32]
                ) -> list[tuple[float, float, float] | None]:
    """For each of ``points`` (image pixels) on the upright, fitted board's ``view``: how
    far (cells) it lies from the middle of the cell under it along the columns and the
    rows, and how much that cell's middle differs from the ring around it, a token's
    size (``_token_contrast``: an empty cell's middle is its own colour); None off the
    cells."""
    width, height = BOARD_VIEW
    out: list[tuple[float, float, float] | None] = []
    for x, y in view.seen(points):
        column, row = board_cell(float(x) / width, float(y) / height)
        if not (0 <= column < BOARD_COLUMNS and 0 <= row < BOARD_ROWS):
            out.append(None)
            continue
        out.append((column % 1 - 0.5, row % 1 - 0.5, view.cell_contrast(int(row), int(column))))
    return out


CELL_RING = (1.3, 0.38)
"""A cell's own print is looked at in its ring: farther than this many token radii from
its middle (a token there hides nothing) and within this share of the cell's width and
height of it (inside the cell's rounded outline)."""
PRINT_HUE = 25.0
"""A ring pixel shows its row's print when its hue (Lab a*, b*) lies within this many
degrees of the row's (red, blue, yellow, green: 60-70 degrees apart; a hand's skin lies
between red and yellow, about 40 from either)."""
GREY_CHROMA = 6.0
"""A pixel whose chroma (Lab) is under this has no hue to compare."""
CHROMA_KEPT = 0.7
"""A ring pixel of its row's hue shows the print when its chroma is at least this share
of the print's, less as far as it is darker (a shadow or light falling off darkens and
pales a colour together); a pale hand over a yellow cell keeps the hue, darker, and
loses half the chroma (dev 60325)."""
WASHED = 0.6
WASHED_HUE = 45.0
WHITE_CHROMA = 12.0
"""A ring pixel at least as light as its row's print and under WASHED of its chroma,
within WASHED_HUE degrees of its hue or all but white (chroma under WHITE_CHROMA), is
the print washed out by glare, not something over it: white balance tints a glare
spot (dev 60010, 60002: green cells washed to 10-20 chroma turned 20-45 degrees toward
blue). A pale hand, lighter than a blue or green cell, lies farther in hue."""
COVERED_SHARE = 0.5
"""A cell whose ring shows its row's print on less than this share is covered (a hand,
a card or an object over it, or off the photo): its token cannot be seen. Dev
60000-60059 normal (boards fitted, an earlier form of the test): of 1797 cells seen
whole 99 % showed their print on over 0.22 of the ring; of the 30 cells of tokens
under a hand, on a board fitted right, nearly all on under a half. Dev 60000-60059 and
60300-60359 normal: scenes with a piece under a hand flagged 1 -> 8 of 11; one scene
without a hand had a cell reported covered (60002: a cell washed pale at the board's
edge)."""


def covered_cells(view: BoardView) -> list[tuple[int, int]]:
    """The (row, column) cells, 0-based, of the upright, fitted board's ``view`` whose
    own print does not show round their middle (``COVERED_SHARE``): a hand or another
    object lies over them, so whether a token is there cannot be seen. The print is its
    row's hue at a chroma kept in step with its lightness (``CHROMA_KEPT``), so light
    falling off over the board and glare (lighter, paler) do not count as cover."""
    width, height = BOARD_VIEW
    cell_w, cell_h = (width * BOARD_GRID[2] / BOARD_COLUMNS,
                      height * BOARD_GRID[3] / BOARD_ROWS)
    near, within = CELL_RING
    half_w, half_h = int(cell_w * within), int(cell_h * within)
    rows, cols = np.ogrid[-half_h:half_h + 1, -half_w:half_w + 1]
    ring = np.hypot(cols, rows) > near * TOKEN_RADIUS
    windows = []
    for row in range(BOARD_ROWS):
        for column in range(BOARD_COLUMNS):
            u, v = cell_middle(row, column)
            x, y = round(u * width), round(v * height)
            windows.append(view.lab[y - half_h:y + half_h + 1, x - half_w:x + half_w + 1])
    lab = np.stack(windows)[:, ring].astype(np.float32).reshape(
        BOARD_ROWS, BOARD_COLUMNS, -1, 3)  # each cell's ring pixels
    lightness, a, b = lab[..., 0], lab[..., 1] - 128.0, lab[..., 2] - 128.0
    chroma, hue = np.hypot(a, b), np.arctan2(b, a)
    # each cell's hue (its pixels' mean a*, b*); the row's is the cell hue nearest the
    # others (a hand over a few cells does not move it), the cells weighted by their
    # chroma (a cell washed pale has little hue to go by)
    means = a.mean(axis=2) + 1j * b.mean(axis=2)
    weights, hues = np.abs(means), np.angle(means)
    spread = np.abs(np.angle(np.exp(1j * (hues[:, :, None] - hues[:, None, :]))))
    medoid = np.argmin(np.einsum("rcd,rd->rc", spread, weights), axis=1)
    covered = []
    for row in range(BOARD_ROWS):
        if weights[row].max() < GREY_CHROMA:  # no cell of the row shows a colour
            continue
        off_hue = np.abs(np.angle(np.exp(1j * (hue[row] - hues[row, medoid[row]]))))
        in_hue = (chroma[row] >= GREY_CHROMA) & (off_hue < np.radians(PRINT_HUE))
        row_light = float(np.median(lightness[row][in_hue])) if in_hue.any() else 255.0
        row_chroma = float(np.median(chroma[row][in_hue])) if in_hue.any() else GREY_CHROMA
        kept = chroma[row] >= CHROMA_KEPT * row_chroma * np.minimum(
            1.0, lightness[row] / row_light)
        washed = (lightness[row] >= row_light) & (chroma[row] < WASHED * row_chroma) & (
            (off_hue < np.radians(WASHED_HUE)) | (chroma[row] < WHITE_CHROMA))
        seen = ((in_hue & kept) | washed).mean(axis=1)
        covered += [(row, int(column)) for column in np.flatnonzero(seen < COVERED_SHARE)]
    return covered


PRINT_PAST_END = 3
"""A board's grid is short at an end (the fit, or the outline, lies a column or more
off) when the column of cells just past that end shows its rows' print
(``print_past_ends``) on this many of the four rows: a table or a hand has one hue,
not the four rows' in their order. Dev 60400-60459 normal and 60200-60259 hard: of 115
boards fitted to within 0.8 columns, none showed it on more than 2 past an end (a
table of the green row's hue, a pale board's margin); the two fitted 2.5 and 4.8
columns short (dev 60223 hard, 60429 normal: a hand over the far end, where the
shorter fits correlated better) on 3 and 4. A hand over the column past the end hides
it (dev 60230 hard: four columns short, 2)."""
PRINT_WINDOW = 0.35
"""A cell's print is looked at within this share of the cell's width and height of its
middle (a token over the middle leaves most of it)."""
PAST_END_VIEW = 300
"""The width (pixels) of the board's grid in the view where the print past its ends is
looked at: cells some 30 pixels wide, enough for their hue."""


def print_past_ends(image: Image, quad: npt.NDArray[np.float32]) -> tuple[int, int]:
    """How many of the four rows show their print in the column of cells just before
    the upright board ``quad``'s first column and just after its last, in its own
    perspective: a cell shows it when on COVERED_SHARE of its middle (``PRINT_WINDOW``)
    the hue lies within PRINT_HUE of its row's (the median of the grid's own cells) at
    GREY_CHROMA or more. The board's print does not run past its grid: where it does,
    the grid lies short of the board, its columns shifted (``PRINT_PAST_END``)."""
    column = BOARD_GRID[2] / BOARD_COLUMNS
    width, height = PAST_END_VIEW, PAST_END_VIEW // 2
    total = round(width * (1 + 2 * column))
    target = np.float32([[0, 0], [total, 0], [total, height], [0, height]])
    to_view = cv2.getPerspectiveTransform(_lengthened(quad, 1, 1), target)
    lab = cv2.cvtColor(cv2.warpPerspective(image, to_view, (total, height)),
                       cv2.COLOR_BGR2LAB).astype(np.float32)
    half_w = int(width * column * PRINT_WINDOW)
    half_h = int(height * BOARD_GRID[3] / BOARD_ROWS * PRINT_WINDOW)
    windows = []
    for row in range(BOARD_ROWS):
        for col in range(-1, BOARD_COLUMNS + 1):
            u, v = cell_middle(row, col)
            x, y = round((u + column) * width), round(v * height)
            windows.append(lab[y - half_h:y + half_h + 1, x - half_w:x + half_w + 1])
    cells = np.stack(windows).reshape(BOARD_ROWS, BOARD_COLUMNS + 2, -1, 3)
    a, b = cells[..., 1] - 128.0, cells[..., 2] - 128.0
    means = a.mean(axis=2) + 1j * b.mean(axis=2)  # each cell's hue
    own = means[:, 1:-1]
    row_hues = np.angle(np.median(own.real, axis=1) + 1j * np.median(own.imag, axis=1))
    a, b = a[:, [0, -1]], b[:, [0, -1]]  # the pixels' hues only past the two ends
    off_hue = np.abs(np.angle(np.exp(1j * (np.arctan2(b, a) - row_hues[:, None, None]))))
    shows = ((np.hypot(a, b) >= GREY_CHROMA) & (off_hue < np.radians(PRINT_HUE))).mean(
        axis=2) >= COVERED_SHARE
    return int(shows[:, 0].sum()), int(shows[:, -1].sum())


@dataclass(frozen=True)
class BoardView:
    """A research board's content rectified to BOARD_VIEW (its first corner at the
    view's top-left): BGR and CIELAB, and the homography from the image to it. Made
    once a step, asked about many points."""

    bgr: Image
    lab: Image
    to_view: npt.NDArray[np.float64]
    middles: dict[tuple[int, int], float] = field(default_factory=dict, repr=False,
                                                  compare=False)
    """Each cell's ``cell_contrast`` once asked (the steps that ask share the view)."""

    def seen(self, points: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """``points`` (image pixels) in the view's pixels, (n, 2)."""
        return _in_view(points, self.to_view)

    def cell_contrast(self, row: int, column: int) -> float:
        """How much the middle of the cell (``row``, ``column``), 0-based, differs from
        the ring around it, a token's size (``_token_contrast``); worked once a view:
        the token steps (``tokens_in_cells``, ``faint_cells``, ``cells_under``) ask
        about the same cells."""
        if (row, column) not in self.middles:
            width, height = BOARD_VIEW
            u, v = cell_middle(row, column)
            self.middles[row, column] = _token_contrast(self.lab, u * width, v * height,
                                                        TOKEN_RADIUS)
        return self.middles[row, column]


def board_view(image: Image, board: npt.NDArray[np.float32]) -> BoardView:
    """The ``board`` quad's ``BoardView`` in ``image``."""
    to_view = _to_board_view(board)
    bgr: Image = cv2.warpPerspective(image, to_view, BOARD_VIEW)
    return BoardView(bgr, cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB), to_view)


def same_board_view(view: BoardView, board: npt.NDArray[np.float32]) -> bool:
    """Whether ``view`` is the ``board`` quad's (``board_view``): the same homography to
    it, bit for bit, so the same pixels."""
    return bool(np.array_equal(view.to_view, _to_board_view(board)))


def _in_view(points: npt.ArrayLike, to_view: npt.NDArray[np.float64]
             ) -> npt.NDArray[np.float32]:
    """``points`` (image pixels) mapped by the homography ``to_view``, (n, 2)."""
    pts = np.asarray(points, np.float32).reshape(-1, 1, 2)
    if not len(pts):
        return np.zeros((0, 2), np.float32)
    out: npt.NDArray[np.float32] = cv2.perspectiveTransform(pts, to_view).reshape(-1, 2)
    return out


def _to_board_view(board: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """The homography from the image to the ``board`` quad's BOARD_VIEW (its first
    corner at the view's top-left)."""
    width, height = BOARD_VIEW
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    out: npt.NDArray[np.float64] = cv2.getPerspectiveTransform(
        np.asarray(board, np.float32).reshape(4, 2), target)
    return out


def _token_contrast(lab: Image, x: float, y: float, r: float) -> float:
    """Lab distance of a circle's middle (within 0.6 r) from the ring just outside it
    (1.15 r to 1.45 r), in a window around the circle."""
    reach = int(np.ceil(1.45 * r)) + 1
    x0, y0 = max(0, int(x) - reach), max(0, int(y) - reach)
    window = lab[y0:int(y) + reach + 1, x0:int(x) + reach + 1].astype(np.float32)
    rows, cols = np.ogrid[0:window.shape[0], 0:window.shape[1]]  # (broadcast: no full grids)
    distance = np.hypot(cols + x0 - x, rows + y0 - y)
    middle, ring = distance < 0.6 * r, (distance > 1.15 * r) & (distance < 1.45 * r)
    if not middle.any() or not ring.any():
        return 0.0
    return float(np.linalg.norm(window[middle].mean(axis=0) - window[ring].mean(axis=0)))


def _best_kind(blob: _Blob, unit: float | None, profile: Profile) -> tuple[str, float]:
    """The kind (and its aspect) whose lattice explains the blob best: the main piece
    or a peer of the same long side (a Rox scoring card beside the Rox cards)."""
    options = [(profile.kind, profile.aspect)]
    options += [(o.kind, o.aspect) for o in profile.others if o.max_area <= 1.0]
    if len(options) == 1:
        return options[0]
    return min(options, key=lambda option: _lattice_fit(blob, unit, option[1])[0]
               + (0.0 if option[0] == profile.kind else PEER_PENALTY))


def _other_kind(blob: _Blob | None, size: Callable[[_Blob], float] | None,
                profile: Profile, *, biggest: bool = False) -> str | None:
    """The kind of a clean single blob that is not the main piece (by area relative to
    the main piece and by aspect; a board is the biggest blob of its shape), or None."""
    if blob is None or not profile.others:
        return None
    for other in profile.others:
        if (other.largest and biggest and blob.fill >= 0.6
                and abs(np.log(blob.short / blob.long / other.aspect)) < 0.35):
            return other.kind
    if size is None or blob.fill < 0.8:
        return None
    unit = size(blob)
    relative = blob.pixels / (unit * unit * profile.aspect)
    for other in profile.others:
        if (other.min_area <= relative <= other.max_area
                and abs(np.log(blob.short / blob.long / other.aspect)) < 0.2):
            return other.kind
    return None


def _has_print(image: Image, quad: npt.NDArray[np.float32], least: float) -> bool:
    """Whether the quad's central half shows print (grey levels spread at least
    ``least``), not a bare patch of glare."""
    crop = rectify(image, quad, size=(24, 36))
    centre = cv2.cvtColor(crop[9:27, 6:18], cv2.COLOR_BGR2GRAY)
    return float(centre.std()) >= least


def _refine(quad: npt.NDArray[np.float32], cut: npt.NDArray[np.uint8], aspect: float
            ) -> npt.NDArray[np.float32]:
    """The cell moved onto the piece the mask shows there: the rectangle around the
    largest patch of groove-cut mask within the (slightly grown) cell, when it has about
    the cell's size and the piece's aspect; else the cell as it was."""
    centre = quad.mean(axis=0)
    grown = centre + (quad - centre) * 1.15
    x, y, w, h = cv2.boundingRect(np.round(grown).astype(np.int32))
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, cut.shape[1]), min(y + h, cut.shape[0])
    if x1 - x0 < 4 or y1 - y0 < 4:
        return quad
    window = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(window, np.round(grown - [x0, y0]).astype(np.int32), 255)
    window &= cut[y0:y1, x0:x1]
    count, labels, stats, _ = cv2.connectedComponentsWithStats(window)
    if count < 2:
        return quad
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    points = np.column_stack(np.nonzero(labels == k)[::-1]).astype(np.float32)
    (cx, cy), (rw, rh), angle = cv2.minAreaRect(points)
    rw, rh = rw + 2 * REFINE_GROW, rh + 2 * REFINE_GROW  # the cut mask was eroded
    area = cv2.contourArea(quad)
    if not (0.7 * area < rw * rh < 1.3 * area
            and abs(np.log(min(rw, rh) / max(rw, rh) / aspect)) < 0.25):
        return quad
    box = cv2.boxPoints(((cx + x0, cy + y0), (rw, rh), angle))
    return short_edge_first(box)


def _separate(blob: _Blob, unit: float | None, aspect: float, min_area: float,
              *, most: float = 8) -> list[_Blob]:
    """A ragged blob of a few pieces touching at an angle (scattered tiles) split at
    its narrow necks: eroded until it falls apart, each part grown back within it."""
    if unit is None or blob.fill >= RAGGED:
        return [blob]
    piece_area = unit * unit * aspect
    if not 1.4 * piece_area < blob.pixels < most * piece_area:
        return [blob]
    x, y, w, h = cv2.boundingRect(blob.contour)
    pad = 2
    mask = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    cv2.drawContours(mask, [blob.contour - np.array([x - pad, y - pad])], -1, 255, cv2.FILLED)
    radius = max(1, round(NECK * unit * aspect))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    count, labels = cv2.connectedComponents(cv2.erode(mask, disc))
    if count <= 2:
        return [blob]
    parts = []
    for k in range(1, count):
        grown = cv2.dilate((labels == k).astype(np.uint8) * 255, disc) & mask
        contours, _ = cv2.findContours(grown, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE,
                                       offset=(x - pad, y - pad))
        parts += [b for b in (_blob(c, min_area) for c in contours) if b is not None]
    return parts or [blob]


def _usable(blob: _Blob, unit: float | None, aspect: float) -> bool:
    """Neat enough to split: fills half its rectangle, or is a ragged cluster of
    several pieces (an L of tiles)."""
    return blob.fill >= 0.5 or _ragged_cluster(blob, unit, aspect)


def _ragged_cluster(blob: _Blob, unit: float | None, aspect: float) -> bool:
    return (blob.fill < RAGGED and unit is not None
            and 1.8 * unit * unit * aspect < blob.pixels < 40 * unit * unit * aspect)


def _blob(contour: npt.NDArray[np.int32], min_area: float) -> _Blob | None:
    area = cv2.contourArea(contour)
    if area < min_area:
        return None
    rect = cv2.minAreaRect(contour)
    (w, h) = rect[1]
    if w < 4 or h < 4 or area < 0.3 * w * h:
        return None
    corners = cv2.boxPoints(rect).astype(np.float32)
    if area >= RAGGED * w * h and max(w, h) > 1.9 * min(w, h):  # a neat row: its outline
        hull = cv2.convexHull(contour)
        perimeter = cv2.arcLength(hull, True)
        for eps in (0.02, 0.04, 0.06, 0.08):
            approx = cv2.approxPolyDP(hull, eps * perimeter, True).reshape(-1, 2)
            if len(approx) <= 4:
                break
        if len(approx) == 4 and cv2.contourArea(approx.astype(np.float32)) >= 0.85 * w * h:
            corners = approx.astype(np.float32)
    sides = [float(np.linalg.norm(corners[(i + 1) % 4] - corners[i])) for i in range(4)]
    if sides[0] + sides[2] < sides[1] + sides[3]:
        corners = np.roll(corners, -1, axis=0)
    return _Blob(rect, area / (w * h), area, corners, contour)


def _size_model(blobs: Sequence[_Blob], aspect: float) -> Callable[[_Blob], float] | None:
    """The typical long side of one piece in pixels, as it varies across the image
    (a tilted camera sees far pieces smaller). Clean blobs vote (a lone piece its long
    side, a row its short side, less likely a file its short side over the aspect);
    the size most votes agree with is refined by a plane fit over the image; None if
    no blob is clean."""
    if not blobs:
        return None
    largest = max(b.pixels for b in blobs)  # specks of a textured table do not vote
    neat = [b for b in blobs
            if b.fill > 0.8 and b.long / b.short < 14 and b.pixels > 0.05 * largest]
    votes = [(b.long, 1.0, b) for b in neat if 0.85 / aspect < b.long / b.short < 1.15 / aspect]
    for b in neat:
        if b.long / b.short > 2.6 * aspect:  # a row of upright pieces, or a file of lying ones
            votes += [(b.short, 1.0, b), (b.short / aspect, 1.0 - LYING_ROW_PENALTY * 3, b)]
    if not votes:
        return None
    values = np.array([v[0] for v in votes])
    weights = np.array([v[1] for v in votes]) * np.sqrt(values)
    support = [weights[np.abs(np.log(values / v)) < 0.2].sum() for v in values]
    centre = values[int(np.argmax(support))]
    near = np.abs(np.log(values / centre)) < 0.2
    typical = float(np.median(values[near]))
    member = np.abs(np.log(values / typical)) < 0.35
    if member.sum() < 6:
        return lambda _blob: typical
    xy = np.array([v[2].rect[0] for v, keep in zip(votes, member, strict=True) if keep])
    design = np.column_stack([np.ones(len(xy)), xy])
    target = np.log(values[member])
    coef = np.linalg.lstsq(design, target, rcond=None)[0]
    inlier = np.abs(design @ coef - target) < 0.2
    if inlier.sum() >= 6:
        coef = np.linalg.lstsq(design[inlier], target[inlier], rcond=None)[0]

    def size_at(blob: _Blob) -> float:
        x, y = blob.rect[0]
        estimate = float(np.exp(coef[0] + coef[1] * x + coef[2] * y))
        return min(max(estimate, 0.7 * typical), 1.4 * typical)

    return size_at


def _lattice_fit(blob: _Blob, unit: float | None, aspect: float) -> tuple[float, int, bool]:
    """(error, rows across the short axis, pieces standing across the row) that best
    explain the blob as a lattice of pieces of ``aspect`` and size ``unit``."""
    s, l_ = blob.short, blob.long
    best: tuple[float, int, bool] | None = None
    for standing in (True, False):  # pieces' long side across the row (tiles in a row)
        for m in range(1, 6):
            row_h = s / m
            piece_h = row_h if standing else row_h / aspect
            along = piece_h * aspect if standing else piece_h
            count = l_ / along
            n = max(1, round(count))
            err = abs(np.log(count / n)) + 0.25 * (m - 1) + 0.1 * np.log(n * m)
            if not standing and n > 1:
                err += LYING_ROW_PENALTY
            if unit is not None:
                err += 0.6 * max(0.0, abs(np.log(piece_h / unit)) - 0.1)
            if best is None or err < best[0]:
                best = (float(err), m, standing)
    assert best is not None
    return best


def _split(raw: npt.NDArray[np.uint8], grooves: npt.NDArray[np.uint8], blob: _Blob,
           unit: float | None, aspect: float) -> list[npt.NDArray[np.float32]]:
    """Cut a blob into pieces: choose how many rows of pieces lie across its short axis
    and which way they stand, then cut each row's runs of piece pixels into cells of the
    piece's aspect (so rows offset against each other, as on a rack, still come apart)."""
    s, l_ = blob.short, blob.long
    if unit is not None and _ragged_cluster(blob, unit, aspect):
        # a ragged cluster (an L of tiles): rows of upright pieces of the usual size
        m, standing = max(1, round(s / unit)), True
    else:
        _, m, standing = _lattice_fit(blob, unit, aspect)
    # the masks in the blob's frame: x along its long side, y along its short side
    cw, ch = max(1, round(l_)), max(1, round(s))
    box = np.array([[0, 0], [l_, 0], [l_, s], [0, s]], np.float32)
    to_frame = cv2.getPerspectiveTransform(blob.corners, box)
    from_frame = np.linalg.inv(to_frame)
    frame = cv2.warpPerspective(raw, to_frame, (cw, ch), flags=cv2.INTER_NEAREST)
    depth = cv2.warpPerspective(grooves, to_frame, (cw, ch), flags=cv2.INTER_LINEAR)
    row_h = s / m
    along = row_h * aspect if standing else row_h / aspect
    frame = _fill_small_holes(frame, 0.6 * row_h * along)
    cells = []
    for j in range(m):
        strip = frame[round(j * row_h):max(round((j + 1) * row_h), round(j * row_h) + 1)]
        inner = strip[strip.shape[0] // 6: max(strip.shape[0] * 5 // 6, 1)]
        coverage = (inner > 0).mean(axis=0) if inner.size else np.zeros(cw)
        for start, stop in _runs(coverage > 0.3, min_len=0.5 * along):
            length = stop - start
            band = depth[round(j * row_h):max(round((j + 1) * row_h), round(j * row_h) + 1)]
            profile = np.percentile(band, 25, axis=0)
            n = _count_pieces(profile, start, stop, length / along)
            cuts = _snap_cuts(profile, start, stop, n)
            for i in range(n):
                x0, x1 = cuts[i], cuts[i + 1]
                piece_long = row_h if standing else x1 - x0
                if unit is not None and abs(np.log(piece_long / unit)) > MAX_SIZE_RATIO:
                    continue
                block = frame[round(j * row_h):round((j + 1) * row_h), round(x0):round(x1)]
                if block.size == 0 or (block > 0).mean() < MIN_COVER:
                    continue
                corners = [(x0, j * row_h), (x1, j * row_h),
                           (x1, (j + 1) * row_h), (x0, (j + 1) * row_h)]
                quad = cv2.perspectiveTransform(
                    np.array([corners], np.float32), from_frame).reshape(4, 2)
                cells.append(short_edge_first(quad))
    return cells


def _fill_small_holes(mask: npt.NDArray[np.uint8], max_area: float) -> npt.NDArray[np.uint8]:
    """The mask with enclosed holes smaller than ``max_area`` filled (a tile's printed
    disc or number), larger ones (a rack's gap between tiles) kept."""
    holes = (mask == 0).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(holes, connectivity=4)
    h, w = mask.shape
    out = mask.copy()
    for k in range(1, count):
        x, y, bw, bh, area = stats[k]
        if area < max_area and x > 0 and y > 0 and x + bw < w and y + bh < h:
            out[labels == k] = 255
    return out


def _count_pieces(profile: npt.NDArray[np.float64], start: int, stop: int, count: float
                  ) -> int:
    """How many touching pieces a run holds: the count its length suggests, or one
    more or fewer where the grooves between pieces say so (a tilted view shortens
    pieces along the row)."""
    guess = max(1, round(count))
    floor = float(np.median(profile[start:stop]))
    best, best_score = guess, -np.inf
    for n in range(max(1, guess - 1), guess + 2):
        step = (stop - start) / n
        reach = max(1, int(step * 0.06))
        depths = [float(profile[max(start, int(start + step * i) - reach):
                                int(start + step * i) + reach + 1].max()) - floor
                  for i in range(1, n)]
        score = (float(np.mean(depths)) if depths else 0.0) - GROOVE_WEIGHT * abs(
            np.log(count / n))
        if score > best_score:
            best, best_score = n, score
    return best


def _snap_cuts(profile: npt.NDArray[np.float64], start: int, stop: int, n: int
               ) -> list[float]:
    """Where to cut a run of ``n`` touching pieces: at equal steps, each inner cut moved
    to the deepest groove within a third of a piece of it (pieces are not all equal)."""
    step = (stop - start) / n
    cuts = [start + step * i for i in range(n + 1)]
    if n < 2:
        return cuts
    floor = float(np.median(profile[start:stop]))
    reach = max(1, int(step / 3))
    for i in range(1, n):
        lo, hi = max(start + 1, int(cuts[i]) - reach), min(stop - 1, int(cuts[i]) + reach + 1)
        if hi <= lo:
            continue
        k = lo + int(np.argmax(profile[lo:hi]))
        if profile[k] > floor + SNAP_DEPTH:
            cuts[i] = float(k)
    return cuts


def _runs(flags: npt.NDArray[np.bool_], *, min_len: float) -> list[tuple[int, int]]:
    """[start, stop) of each run of True at least ``min_len`` long."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)
            if b - a >= min_len]


def short_edge_first(quad: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """The quad clockwise (image y down) with its first edge a short one; of the two
    short edges, the upper one in the image starts (a neutral choice before orientation)."""
    pts = np.asarray(quad, np.float32).reshape(4, 2)
    centre = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0]))]
    edges = [float(np.linalg.norm(pts[(i + 1) % 4] - pts[i])) for i in range(4)]
    start = 0 if edges[0] + edges[2] <= edges[1] + edges[3] else 1
    if pts[start:start + 2, 1].mean() > pts[[(start + 2) % 4, (start + 3) % 4], 1].mean():
        start += 2
    return np.roll(pts, -(start % 4), axis=0).astype(np.float32)
