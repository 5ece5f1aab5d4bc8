"""The markers the companion prints and finds: which dictionary, which ids mean what.

One place for these numbers, shared by the printables, the renderer and the reader.
Table corners and seats use ArUco DICT_4X4_50; the ChArUco board for camera calibration
uses DICT_5X5_100 so its markers are never mistaken for table markers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.detections import distances

TABLE_DICTIONARY = cv2.aruco.DICT_4X4_50
TABLE_CORNER_IDS: tuple[int, int, int, int] = (0, 1, 2, 3)
"""Top-left, top-right, bottom-right, bottom-left of the play area, as seen from above."""
GREY_CARD_ID = 5
"""Printed on the neutral grey card, beside its grey and white patches."""
SEAT_IDS: tuple[int, ...] = tuple(range(10, 16))
"""Seat markers for up to six players, in the order they are printed."""
QWIXX_SHEET_IDS: tuple[int, int, int, int] = (20, 21, 22, 23)
"""The companion's own Qwixx score sheet: one marker in each corner."""

OUR_IDS: frozenset[int] = frozenset(
    (*TABLE_CORNER_IDS, GREY_CARD_ID, *SEAT_IDS, *QWIXX_SHEET_IDS))
"""The markers we print; any other id found is a pattern on a piece (a card's art
passes for a 4×4 marker now and then), not a marker."""

CHARUCO_DICTIONARY = cv2.aruco.DICT_5X5_100
CHARUCO_SQUARES: tuple[int, int] = (7, 5)  # columns, rows
CHARUCO_SQUARE_MM = 25.0
CHARUCO_MARKER_MM = 18.0


@dataclass(frozen=True)
class Marker:
    """One found marker: its id and four corners (image pixels, clockwise from the
    marker's own top-left)."""

    id: int
    corners: npt.NDArray[np.float32]  # (4, 2)

    @property
    def centre(self) -> npt.NDArray[np.float32]:
        centre: npt.NDArray[np.float32] = self.corners.mean(axis=0)
        return centre


def table_dictionary() -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(TABLE_DICTIONARY)


def charuco_board() -> cv2.aruco.CharucoBoard:
    """The ChArUco board printed on calibration/charuco_board.pdf (millimetres)."""
    return cv2.aruco.CharucoBoard(
        CHARUCO_SQUARES, CHARUCO_SQUARE_MM, CHARUCO_MARKER_MM,
        cv2.aruco.getPredefinedDictionary(CHARUCO_DICTIONARY))


MARKER_PIXELS_PER_CELL = 8
"""Pixels per marker cell when a candidate is read bit by bit (OpenCV's default 4): a
small or blurred marker's cells are read from more pixels. Rendered scenes of every
game (seeds 61000–61011 and 60000–60011, normal): 249 -> 261 of 324 markers found, no
false marker more."""


SHARPEN_SIGMA = 2.0
"""The second look at a photo whose markers are not a whole set: the grey image plus
its difference from a Gaussian blur of this sigma (unsharp masking). Rendered scenes of
every game (seeds 61000–61011): markers found 151 -> 164 of 192 at normal difficulty,
75 -> 90 at hard, no false one; about 11 ms a photo when it is needed."""


SEAT_MATCH = 0.8
SEAT_MARGIN = 0.2
SEAT_DARKNESS = 0.15
"""The third look, for seat markers too blurred for their bits to be read: a square the
detector found but rejected is a seat marker when its 4×4 inner cells correlate at
least SEAT_MATCH with that seat's pattern (in one of four turns), SEAT_MARGIN more than
with any other of our markers, and its black border is darker than its bright cells
and than the white around it, by SEAT_DARKNESS of the inner cells' range. Rendered
scenes (seeds 61400-61429 and 61500-61529, five games): at normal difficulty 23 + 10
more markers of any id found this way with no false one of a seat's id (two false of
other ids, a table corner and the grey card, which are therefore not looked for so);
at hard, 36 more, none false."""


LONE_TABLE_SEATS = 2
"""With no marker read at all, the third look still runs (a table whose markers are all
too blurred to read), but its seats are taken only when at least this many different
seats match (a table has two seats at least): one lone match is what a Qwixx sheet's
boxes sometimes pass for. Rendered scenes (seeds 60400-60599, five games, normal and
hard: 1000 scenes, 5950 markers): 10 more markers found, none false (a lone match would
have added two false seats to marker-less Qwixx scenes); the 179 real photos, which have
no markers: none."""


def detect_markers(image: npt.NDArray[np.uint8], *, seats: int | None = None) -> list[Marker]:
    """Every table, seat, grey-card and sheet marker in a BGR or grey image (ids we do
    not print are left out). ``seats``: the number of players, when the user gave it
    (a set with some seat markers but fewer than that is not whole). When what is found
    is not a whole set (some table corners but not all four, seats with a gap or too
    few, or nothing), the photo is sharpened and looked
    at again: a blurred marker's cells come apart (``SHARPEN_SIGMA``); when some are
    found but still not a whole set, or none at all, the squares rejected in both looks
    are matched against the seat markers' patterns (``SEAT_MATCH``, ``LONE_TABLE_SEATS``),
    and, if the set is still not whole (or has seats but no table corner, as when the
    first look reads seats alone), read as any of our markers seen through a blur
    (``BLUR_SCORE``). A marker of a later look on one already found is dropped."""
    grey: npt.NDArray[np.uint8] = (np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), np.uint8)
                                   if image.ndim == 3 else image)
    found, squares = _markers_in(grey)
    if not _whole_set({m.id for m in found}, seats):
        soft = cv2.GaussianBlur(grey, (0, 0), SHARPEN_SIGMA)
        seen = {m.id for m in found}
        sharper, more = _markers_in(cv2.addWeighted(grey, 2.0, soft, -1.0, 0))
        found += [m for m in sharper if m.id not in seen and not _on_one(m, found)]
        squares = squares + more  # the squares rejected in either look
        if not _whole_set({m.id for m in found}, seats):  # a gap, too few, or nothing
            found += _blurred_seats(grey, squares, found,
                                    min_seats=1 if found else LONE_TABLE_SEATS)
    ids = {m.id for m in found}
    if not _whole_set(ids, seats) or _seats_alone(ids):
        found += _blurred_markers(grey, squares, found,
                                  min_found=1 if found else LONE_TABLE_SEATS)
    return sorted(found, key=lambda m: m.id)


def _seats_alone(ids: set[int]) -> bool:
    """Whether ``ids`` has seats but no table corner: a whole set, but one whose corners
    may all be too blurred to read, so the fourth look (BLUR_SCORE) runs on the squares
    the first look rejected (dev 61600-61699 normal and 61600-61649 hard, at the first
    thresholds: Nox 2 and Rox 1 more corners found, none false)."""
    return bool(ids & set(SEAT_IDS)) and not ids & set(TABLE_CORNER_IDS)


def _markers_in(grey: npt.NDArray[np.uint8]
                ) -> tuple[list[Marker], list[npt.NDArray[np.float32]]]:
    """The markers of ours the detector reads in ``grey``, and the squares it rejected."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    params.perspectiveRemovePixelPerCell = MARKER_PIXELS_PER_CELL
    detector = cv2.aruco.ArucoDetector(table_dictionary(), params)
    corners, ids, rejected = detector.detectMarkers(grey)
    squares = [np.asarray(r, np.float32).reshape(4, 2) for r in rejected]
    if ids is None:
        return [], squares
    return [Marker(int(i), np.asarray(c, np.float32).reshape(4, 2))
            for c, i in zip(corners, ids.ravel(), strict=True) if int(i) in OUR_IDS], squares


@lru_cache(maxsize=1)
def _patterns() -> dict[tuple[int, int], npt.NDArray[np.float32]]:
    """(id, quarter turns) → the marker's 16 inner cells as ±1, for every id we print."""
    out = {}
    for marker_id in sorted(OUR_IDS):
        cells = marker_image(marker_id, 6 * MARKER_PIXELS_PER_CELL).astype(np.float32).reshape(
            6, MARKER_PIXELS_PER_CELL, 6, MARKER_PIXELS_PER_CELL).mean(axis=(1, 3))[1:5, 1:5]
        for turn in range(4):
            out[(marker_id, turn)] = np.where(np.rot90(cells, -turn) > 127, 1.0, -1.0
                                              ).astype(np.float32).ravel()
    return out


def _blurred_seats(grey: npt.NDArray[np.uint8], squares: list[npt.NDArray[np.float32]],
                   found: list[Marker], *, min_seats: int = 1) -> list[Marker]:
    """Seat markers among the rejected ``squares`` by their cells' pattern (SEAT_MATCH),
    one per seat id not ``found``, the best-matching square each; none unless
    ``min_seats`` different seats match (LONE_TABLE_SEATS)."""
    best: dict[int, tuple[float, npt.NDArray[np.float32]]] = {}
    taken = {m.id for m in found}
    for square in squares:
        side = float(np.linalg.norm(square[1] - square[0]))
        if any(np.linalg.norm(m.centre - square.mean(axis=0)) < 0.5 * side for m in found):
            continue
        match = _seat_match(grey, square)
        if match is None or match[0] in taken:
            continue
        marker_id, turn, score = match
        if score > best.get(marker_id, (-1.0, square))[0]:
            best[marker_id] = (score, np.roll(square, -turn, axis=0))
    if len(best) < min_seats:
        return []
    return [Marker(i, corners) for i, (_, corners) in best.items()]


def _seat_match(grey: npt.NDArray[np.uint8], square: npt.NDArray[np.float32]
                ) -> tuple[int, int, float] | None:
    """(seat id, quarter turns, correlation) when ``square`` looks like a seat marker
    (see SEAT_MATCH), else None."""
    c = MARKER_PIXELS_PER_CELL
    to_view = cv2.getPerspectiveTransform(square.astype(np.float32), np.float32(
        [[c, c], [7 * c, c], [7 * c, 7 * c], [c, 7 * c]]))
    view = cv2.warpPerspective(grey, to_view, (8 * c, 8 * c)).astype(np.float32)
    cells = view.reshape(8, c, 8, c)[:, 2:-2, :, 2:-2].mean(axis=(1, 3))  # cells' middles
    around = np.concatenate([cells[0], cells[7], cells[1:7, 0], cells[1:7, 7]])
    border = np.concatenate([cells[1, 1:7], cells[6, 1:7], cells[2:6, 1], cells[2:6, 6]])
    inner = cells[2:6, 2:6].ravel()
    spread = float(inner.max() - inner.min())
    if spread < 1.0:
        return None
    # the border darker than the bright cells, then than the white around it; the
    # second (a percentile: slow to take) only for a square that passes the first
    than_cells = float(np.sort(inner)[-4:].mean() - border.max())
    if than_cells / spread < SEAT_DARKNESS:
        return None
    darker = min(than_cells, float(np.percentile(around, 25) - border.mean())) / spread
    if darker < SEAT_DARKNESS:
        return None
    bits = (inner - inner.mean()) / inner.std()
    scores = sorted(((float(bits @ p) / 16, i, t) for (i, t), p in _patterns().items()),
                    reverse=True)
    score, marker_id, turn = scores[0]
    other = next(s for s, i, _ in scores if i != marker_id)
    if marker_id not in SEAT_IDS or score < SEAT_MATCH or score - other < SEAT_MARGIN:
        return None
    return marker_id, turn, score


def _on_one(marker: Marker, found: list[Marker]) -> bool:
    """Whether ``marker``'s centre lies on one already ``found`` (within half its side): the
    sharpened look once read a found marker's white card as another id (dev seed 61648,
    Nummix, hard: seat 10 over table corner 0)."""
    return any(np.linalg.norm(marker.centre - m.centre)
               < 0.5 * max(float(np.linalg.norm(m.corners[1] - m.corners[0])),
                           float(np.linalg.norm(marker.corners[1] - marker.corners[0])))
               for m in found)


def _whole_set(ids: set[int], seats: int | None = None) -> bool:
    """Whether ``ids`` look complete: all four table corners or none, seats 10, 11, …
    without a gap (and, when the number of players ``seats`` is known and any seat is
    seen, that many), and at least one marker."""
    corners = ids & set(TABLE_CORNER_IDS)
    seat_numbers = sorted(i - SEAT_IDS[0] for i in ids & set(SEAT_IDS))
    return (bool(ids) and len(corners) in (0, len(TABLE_CORNER_IDS))
            and seat_numbers == list(range(len(seat_numbers)))
            and (seats is None or not seat_numbers or len(seat_numbers) >= seats))


def marker_image(marker_id: int, side_px: int) -> npt.NDArray[np.uint8]:
    """A printable marker (white quiet zone not included)."""
    image: npt.NDArray[np.uint8] = cv2.aruco.generateImageMarker(
        table_dictionary(), marker_id, side_px)
    return image


# --- the fourth look: markers too blurred for their cells to be read one by one ---

BLUR_CELL_PX = 4
"""Pixels per marker cell in the view a blurred candidate is compared in."""
_VIEW_CELLS = 10  # the marker's 6 cells, its quiet zone and some table around
BLUR_SCALES: tuple[float, ...] = tuple(float(v) for v in np.geomspace(0.5, 1.25, 14))
"""Sizes tried for the marker inside a rejected square, as a fraction of the square
(centred on it): a blurred marker's square comes out as its black square shrunk by the
blur (about 0.9 of it), or as its white card grown by it (about 1.6 of it)."""


def _motion_kernel(length: int, angle: float) -> npt.NDArray[np.float32]:
    side = length + 3 | 1
    h = side // 2
    kernel = np.zeros((side, side), np.float32)
    dx, dy = np.cos(angle) * length / 2, np.sin(angle) * length / 2
    cv2.line(kernel, (round((h - dx) * 16), round((h - dy) * 16)),
             (round((h + dx) * 16), round((h + dy) * 16)), 1.0, 1, cv2.LINE_AA, 4)
    out: npt.NDArray[np.float32] = kernel / kernel.sum()
    return out


@lru_cache(maxsize=1)
def _blur_bank() -> tuple[list[tuple[float, npt.NDArray[np.float32] | None]],
                          npt.NDArray[np.bool_], npt.NDArray[np.bool_],
                          npt.NDArray[np.float32], npt.NDArray[np.float32],
                          npt.NDArray[np.float32], list[tuple[int, int]]]:
    """The blurs a marker is compared under (a Gaussian, then a motion streak), the view's
    masks (ring: border and quiet zone; inner: the cells and half the border), each blur
    of an all-black marker and of a dark disc as wide over the ring (unit vectors), and
    each blur of every (id, turn) over the inner part (unit vectors, [blur, id-turn,
    pixel]), with the (id, turn) keys."""
    c, n = BLUR_CELL_PX, _VIEW_CELLS
    blurs: list[tuple[float, npt.NDArray[np.float32] | None]] = [
        (s, None) for s in (0.5, 1.0, 1.6, 2.4)]
    blurs += [(s, _motion_kernel(length, a * np.pi / 12))
              for length in (2, 3, 4, 5, 6, 8, 10) for a in range(12) for s in (0.5, 1.2)]
    yy, xx = np.mgrid[0:n * c, 0:n * c] + 0.5
    r = np.maximum(np.abs(xx - n * c / 2), np.abs(yy - n * c / 2)) / c
    ring, inner = (r >= 2.0) & (r <= 4.0), r <= 2.5
    pad = (n - 6) // 2 * c

    def view_of(marker: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return np.asarray(cv2.copyMakeBorder(
            marker, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=1.0), np.float32)

    def blurred(img: npt.NDArray[np.float32], blur: tuple[float, npt.NDArray[np.float32] | None]
                ) -> npt.NDArray[np.float32]:
        out = np.asarray(cv2.GaussianBlur(img, (0, 0), blur[0]), np.float32)
        if blur[1] is not None:
            out = np.asarray(cv2.filter2D(out, -1, blur[1], borderType=cv2.BORDER_REPLICATE),
                             np.float32)
        return out

    def unit_rows(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Each row of ``v`` less its mean, as a unit vector."""
        v = v - v.mean(axis=1, keepdims=True)
        out: npt.NDArray[np.float32] = v / np.maximum(
            np.linalg.norm(v, axis=1, keepdims=True), 1e-6)
        return out

    black = view_of(np.zeros((6 * c, 6 * c), np.float32))
    rings = unit_rows(np.array([blurred(black, b)[ring] for b in blurs], np.float32))
    disc = np.ones((n * c, n * c), np.float32)  # a dark disc as wide as the marker
    cv2.circle(disc, (n * c * 4, n * c * 4), 3 * c * 8, 0.0, -1, cv2.LINE_AA, 3)
    discs = unit_rows(np.array([blurred(disc, b)[ring] for b in blurs], np.float32))
    # A marker's view is the all-black marker's plus its white inner cells, and a blur
    # is linear: each blur is worked on the black view and the 16 cells alone, and every
    # (id, turn) made from those (one blur of 17 images, not of 60).
    cells = np.zeros((n * c, n * c, 16), np.float32)
    for k in range(16):
        row, col = divmod(k, 4)
        top, left = pad + (row + 1) * c, pad + (col + 1) * c
        cells[top:top + c, left:left + c, k] = 1.0
    keys, bits = [], []
    for marker_id in sorted(OUR_IDS):
        m = marker_image(marker_id, 6 * c).astype(np.float32) / 255
        for turn in range(4):
            keys.append((marker_id, turn))
            turned = np.rot90(m, -turn)
            bits.append(turned[c + c // 2:5 * c:c, c + c // 2:5 * c:c].ravel())
    white = np.array(bits, np.float32)  # (id-turn, cell): 1 where the cell is white
    inners = np.array([unit_rows(blurred(black, b)[inner][None]
                                 + white @ blurred(cells, b)[inner].T) for b in blurs],
                      np.float32)
    return blurs, ring, inner, rings, discs, inners, keys


def _blur_match(grey: npt.NDArray[np.uint8], square: npt.NDArray[np.float32]
                ) -> tuple[int, int, float, float, float, npt.NDArray[np.float32]] | None:
    """(id, quarter turns, score, margin over the next id, ring fit over a disc's, marker
    corners) of the best reading of ``square`` as one of our markers seen through a blur
    (see BLUR_SCORE), or None when no size fits its ring at least BLUR_FIT."""
    _, ring, inner, rings, discs, inners, keys = _blur_bank()
    c, n = BLUR_CELL_PX, _VIEW_CELLS
    lo, hi = (n - 6) // 2 * c, (n + 6) // 2 * c
    dst = np.array([[lo, lo], [hi, lo], [hi, hi], [lo, hi]], np.float32)
    centre = square.mean(axis=0)

    def views(scales: list[float]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32],
                                             npt.NDArray[np.float32]]:
        """The quads, views and unit ring vectors at these sizes."""
        sizes = np.array(scales, np.float32)[:, None, None]
        quads = (centre + (square - centre) * sizes).astype(np.float32)
        out = np.array([cv2.warpPerspective(grey, cv2.getPerspectiveTransform(q, dst),
                                            (n * c, n * c)) for q in quads], np.float32)
        v = out[:, ring]
        v -= v.mean(axis=1, keepdims=True)
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-3)
        return quads, out, v

    # every other size under every fourth blur first, then the best and its neighbours
    _, _, v = views(list(BLUR_SCALES[::2]))
    coarse = (rings[::4] @ v.T).max(axis=0)
    if float(coarse.max()) < BLUR_FIT - BLUR_COARSE_SLACK:
        return None
    at = 2 * int(coarse.argmax())
    near = list(range(max(at - 1, 0), min(at + 2, len(BLUR_SCALES))))
    quads, looks, v = views([BLUR_SCALES[i] for i in near])
    fits_all = rings @ v.T
    j = int(fits_all.max(axis=0).argmax())
    quad, view, fits = quads[j], looks[j], fits_all[:, j]
    best_fit, round_fit = float(fits.max()), float((discs @ v[j]).max())
    v = view[inner] - view[inner].mean()
    v /= max(float(np.linalg.norm(v)), 1e-6)
    top = np.argsort(-fits)[:BLUR_TRIES]
    scores = (inners[top] @ v).max(axis=0)  # per (id, turn), over the likeliest blurs
    per_id: dict[int, tuple[float, int]] = {}
    for (marker_id, turn), s in zip(keys, scores, strict=True):
        if s > per_id.get(marker_id, (-2.0, 0))[0]:
            per_id[marker_id] = (float(s), turn)
    ranked = sorted(((s, i, t) for i, (s, t) in per_id.items()), reverse=True)
    (score, marker_id, turn), second = ranked[0], ranked[1][0]
    return (marker_id, turn, score, score - second, best_fit - round_fit,
            np.roll(quad, -turn, axis=0)) if best_fit >= BLUR_FIT else None


BLUR_COARSE_SLACK = 0.1
"""How far below BLUR_FIT the coarse size search (every other size, every fourth blur)
may fit and the square still be looked at closely; a speed cut, none lost on dev seeds
61600-61699 normal."""
BLUR_MIN_SIDE = 7.0
"""Rejected squares smaller than this (pixels a side) are not looked at in the fourth
look: a marker's cells there are about a pixel. The smallest square it read right on dev
seeds 61600-61699 normal and 61600-61649 hard was 8 px; a quarter of the squares the real
photos give are smaller (about 2 ms a real photo)."""
BLUR_TRIES = 3
"""The blurs (those best fitting the marker's border) a blurred candidate's cells are
compared under."""


BLUR_SCORE = 0.8
BLUR_MARGIN = 0.1
BLUR_FIT = 0.85
BLUR_SQUARER = 0.03
"""The fourth look, for markers of any of our ids too blurred (a motion streak or defocus
of one to three cells) for even their cells' means to tell them apart: a rejected
square is read by analysis by synthesis (``_blur_match``). Its size is the one (of
BLUR_SCALES) whose ring of black border and white quiet zone correlates best with a
blurred all-black marker on white, under the blur (a Gaussian, then a motion streak of
2-10 view pixels in 12 directions) that fits best; that fit must be at least BLUR_FIT,
and BLUR_SQUARER more than a dark disc's as wide (a round token in a square frame, as on
Cat in the Box's grid, fits a blurred square's ring well). Then its cells and half its
border are correlated with every (id, turn) of ours blurred by the BLUR_TRIES
best-fitting blurs: the best id must correlate at least BLUR_SCORE and BLUR_MARGIN more
than any other id. Dev seeds 61600-61699 normal and 61600-61649 hard (five games, every
rejected square that passes the coarse search): these values read 392 squares as the
marker they lie on and none falsely; without the disc 399 and 20 false (Cat in the Box
tokens as seats 12 and 15), and BLUR_FIT 0.9 instead needed no disc but read only 312;
BLUR_MARGIN 0.05 would read 37 more and 5 false. Markers found (with ``_seats_alone``),
Nox / Rox / Qwixx / Cat in the Box / Nummix: dev 61600-61699 normal 306/332/250/182/146
-> 340/346/256/187/146 (of 370/361/276/200/148), 61600-61649 hard 103/160/121/76/65 ->
125/170/130/82/70 (of 194/210/158/96/80); no false marker there nor on the 179 real
photos; about 3-7 ms more CPU a photo at the median."""


def _near_seen(seen: npt.NDArray[np.float64], centre: npt.NDArray[np.float32], side: float
               ) -> list[int]:
    """The squares already looked at (rows: centre x, y and side) whose centres may lie
    within 0.15 of the larger side of ``centre``: the only ones ``_blurred_markers``'
    exact test can find near, screened for all at once (1 % and a hair looser than that
    test, whose float32 distances may differ from these in their last bits)."""
    if not len(seen):
        return []
    apart = distances(seen[:, :2], centre)[:, 0]
    reach = 0.15 * np.maximum(side, seen[:, 2]) * 1.01 + 1e-6
    return np.flatnonzero(apart < reach).tolist()


def _blurred_markers(grey: npt.NDArray[np.uint8], squares: list[npt.NDArray[np.float32]],
                     found: list[Marker], *, min_found: int = 1) -> list[Marker]:
    """Our markers among the rejected ``squares`` read through a blur (BLUR_SCORE), one per
    id not ``found``, the best-matching square each; none unless ``min_found`` different
    ids match (LONE_TABLE_SEATS). Squares on a found marker, or on one already looked at
    (the plain and the sharpened looks reject much the same squares), are skipped."""
    best: dict[int, tuple[float, npt.NDArray[np.float32]]] = {}
    taken = {m.id for m in found}
    seen: list[tuple[npt.NDArray[np.float32], float]] = []
    seen_at = np.zeros((len(squares), 3))  # the seen squares' centres and sides, for
    for square in squares:  # a screen of all of them at once (``_near_seen``)
        side = float(np.linalg.norm(square[1] - square[0]))
        centre = square.mean(axis=0)
        if side < BLUR_MIN_SIDE or any(np.linalg.norm(m.centre - centre) < 0.5 * side
                                       for m in found):
            continue
        if any(np.linalg.norm(seen[k][0] - centre) < 0.15 * max(side, seen[k][1])
               for k in _near_seen(seen_at[:len(seen)], centre, side)):
            continue
        seen_at[len(seen)] = (*centre, side)
        seen.append((centre, side))
        match = _blur_match(grey, square)
        if match is None:
            continue
        marker_id, _, score, margin, squarer, corners = match
        if (marker_id in taken or score < BLUR_SCORE or margin < BLUR_MARGIN
                or squarer < BLUR_SQUARER):
            continue
        if score > best.get(marker_id, (-1.0, corners))[0]:
            best[marker_id] = (score, corners)
    kept: list[Marker] = []  # the better of two reads on one place
    for _, marker_id, corners in sorted(((v[0], i, v[1]) for i, v in best.items()),
                                        key=lambda t: -t[0]):
        if not _on_one(Marker(marker_id, corners), kept):
            kept.append(Marker(marker_id, corners))
    return kept if len(kept) >= min_found else []
