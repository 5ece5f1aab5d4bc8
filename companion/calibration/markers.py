"""The markers the companion prints and finds: which dictionary, which ids mean what.

One place for these numbers, shared by the printables, the renderer and the reader.
Table corners and seats use ArUco DICT_4X4_50; the ChArUco board for camera calibration
uses DICT_5X5_100 so its markers are never mistaken for table markers.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

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


def detect_markers(image: npt.NDArray[np.uint8]) -> list[Marker]:
    """Every table, seat, grey-card and sheet marker in a BGR or grey image (ids we do
    not print are left out). When what is found is not a whole set (some table corners
    but not all four, seats with a gap, or nothing), the photo is sharpened and looked
    at again: a blurred marker's cells come apart (``SHARPEN_SIGMA``); when some are
    found but still not a whole set, the squares rejected in both looks are matched
    against the seat markers' patterns (``SEAT_MATCH``)."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    found, rejected = _markers_in(grey)
    if not _whole_set({m.id for m in found}):
        soft = cv2.GaussianBlur(grey, (0, 0), SHARPEN_SIGMA)
        seen = {m.id for m in found}
        sharper, more = _markers_in(cv2.addWeighted(grey, 2.0, soft, -1.0, 0))
        found += [m for m in sharper if m.id not in seen]
        if found and not _whole_set({m.id for m in found}):  # a set, with a gap
            found += _blurred_seats(grey, rejected + more, found)
        if not any(m.id in SEAT_IDS for m in found):
            found += _small_seats(grey)
    return sorted(found, key=lambda m: m.id)


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
                   found: list[Marker]) -> list[Marker]:
    """Seat markers among the rejected ``squares`` by their cells' pattern (SEAT_MATCH),
    one per seat id not ``found``, the best-matching square each."""
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
    darker = min(float(np.sort(inner)[-4:].mean() - border.max()),
                 float(np.percentile(around, 25) - border.mean())) / spread
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


SMALL_SEAT_SIDES = (10.0, 45.0)
SMALL_SEAT_QUIET = 40.0
SMALL_SEAT_MATCH = 0.88
SMALL_SEAT_MARGIN = 0.08
SMALL_SEAT_ALONE = (0.9, 0.1)
SMALL_SEAT_BLUR = (0.25, 0.4, 0.55, 0.7)
"""The fourth look, when no seat marker is found at all: a whole table seen from afar
shows its seat markers a dozen pixels across and blurred, their cells run together
and no square is read or even offered to the third look. Dark squares in a lighter
surround (``SMALL_SEAT_SIDES`` pixels; adaptive thresholds, every contour; the darkest
tenth of a ring round it ``SMALL_SEAT_QUIET`` lighter than its mean) are matched
to every marker we print blurred as a lens blurs it (Gaussian, ``SMALL_SEAT_BLUR``
cells), over the inner cells and half the border, the square scaled and shifted a
little; a seat id matching at least ``SMALL_SEAT_MATCH`` and ``SMALL_SEAT_MARGIN`` more
than any other id is a seat marker, kept when two seats or more are found so, a seat
found alone only if it matches ``SMALL_SEAT_ALONE`` (correlation, margin). Candidate
squares of dev scenes 60400-60439, 60800-60839, 61100-61139, 61400-61439 normal and
60400-60439 hard (Nox), 60400-60439 normal Rox, Qwixx, Cat in the Box and Nummix,
every look as if no seat were found: of the photos given seats so, none wrong (one
seat found alone at 0.90 with a margin of 0.08 would have been)."""


def _small_seats(grey: npt.NDArray[np.uint8]) -> list[Marker]:
    """Seat markers too small and blurred for the other looks (``SMALL_SEAT_MATCH``):
    the surest match for each seat id, one id to a place (squares found round one
    marker by several thresholds may match different ids: the surest holds), when two
    seats or more match, or one surely (``SMALL_SEAT_ALONE``)."""
    matches = sorted((m for q in _dark_squares(grey) if (m := _blurred_match(grey, q))),
                     key=lambda m: -m[1])
    kept: dict[int, npt.NDArray[np.float32]] = {}
    for marker_id, _, _, corners in matches:
        side = float(np.linalg.norm(corners[1] - corners[0]))
        if marker_id in kept or any(np.linalg.norm(c.mean(axis=0) - corners.mean(axis=0))
                                    < side for c in kept.values()):
            continue
        kept[marker_id] = corners
    if len(kept) == 1:  # the surest match, found alone
        _, score, margin, _ = matches[0]
        if score < SMALL_SEAT_ALONE[0] or margin < SMALL_SEAT_ALONE[1]:
            return []
    return [Marker(i, corners) for i, corners in kept.items()]


def _dark_squares(grey: npt.NDArray[np.uint8]) -> list[npt.NDArray[np.float32]]:
    """Dark squares (``SMALL_SEAT_SIDES``) darker than their surround by a few adaptive
    thresholds, each as four corners clockwise on screen, one per place."""
    low, high = SMALL_SEAT_SIDES
    out: list[npt.NDArray[np.float32]] = []
    for block, offset in ((15, 5), (31, 8), (31, 15), (51, 10)):
        dark = cv2.adaptiveThreshold(grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C,
                                     cv2.THRESH_BINARY_INV, block, offset)
        contours, _ = cv2.findContours(dark, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for contour in contours:  # every contour: a marker lies in a hole of the table's
            (x, y), (w, h), turn = cv2.minAreaRect(contour)
            if not (low <= min(w, h) and max(w, h) <= high and max(w, h) < 1.4 * min(w, h)
                    and cv2.contourArea(contour) >= 0.6 * w * h):
                continue
            side = float(np.sqrt(w * h))
            if any(np.linalg.norm(o.mean(axis=0) - (x, y)) < 0.3 * side
                   and abs(np.log(float(np.linalg.norm(o[1] - o[0])) / side)) < 0.2
                   for o in out):  # the same square: a white card's outline is another
                continue
            box = cv2.boxPoints(((x, y), (w, h), turn)).astype(np.float32)
            box = box[np.argsort(np.arctan2(box[:, 1] - y, box[:, 0] - x))]
            box = np.roll(box, -int(np.argmin(box.sum(axis=1))), axis=0)
            if _in_white(grey, box):
                out.append(box)
    return out


def _in_white(grey: npt.NDArray[np.uint8], square: npt.NDArray[np.float32]) -> bool:
    """Whether ``square`` lies in a white surround (``SMALL_SEAT_QUIET``): the darkest
    tenth of the ring 1.3-1.5 times its size out is lighter than the square's mean."""
    view = cv2.warpPerspective(grey, cv2.getPerspectiveTransform(
        _posed(square, 1.5, 0.0, 0.0, 0.0), np.float32([[0, 0], [30, 0], [30, 30], [0, 30]])),
        (30, 30)).astype(np.float32)
    ring = np.concatenate([view[:3].ravel(), view[-3:].ravel(), view[3:-3, :3].ravel(),
                           view[3:-3, -3:].ravel()])
    return float(np.percentile(ring, 10) - view[5:25, 5:25].mean()) >= SMALL_SEAT_QUIET


_VIEW_CELLS = 8
_INNER = slice(int(1.5 * MARKER_PIXELS_PER_CELL), int(6.5 * MARKER_PIXELS_PER_CELL))


def _standard(values: npt.NDArray[np.float32]) -> npt.NDArray[np.float32] | None:
    """``values`` less their mean over their spread; None when flat."""
    spread = float(values.std())
    return None if spread < 1e-3 else (values - values.mean()) / spread


@lru_cache(maxsize=1)
def _blurred_patterns() -> tuple[npt.NDArray[np.float32], tuple[int, ...], tuple[int, ...]]:
    """Every marker we print, blurred (``SMALL_SEAT_BLUR``) and turned, as standardised
    inner views (rows), with each row's id and quarter turns."""
    c = MARKER_PIXELS_PER_CELL
    rows, ids, turns = [], [], []
    for marker_id in sorted(OUR_IDS):
        image = cv2.copyMakeBorder(marker_image(marker_id, 6 * c).astype(np.float32),
                                   c, c, c, c, cv2.BORDER_CONSTANT, value=255)
        for sigma in SMALL_SEAT_BLUR:
            blurred = cv2.GaussianBlur(image, (0, 0), sigma * c)
            for turn in range(4):
                row = _standard(np.rot90(blurred, -turn)[_INNER, _INNER].ravel())
                assert row is not None
                rows.append(row)
                ids.append(marker_id)
                turns.append(turn)
    return np.stack(rows), tuple(ids), tuple(turns)


def _blurred_match(grey: npt.NDArray[np.uint8], square: npt.NDArray[np.float32]
                   ) -> tuple[int, float, float, npt.NDArray[np.float32]] | None:
    """(seat id, correlation, margin over any other id, corners) when ``square``,
    scaled, shifted and turned a little, matches a blurred seat marker
    (``SMALL_SEAT_MATCH``, ``SMALL_SEAT_MARGIN``), else None. A coarse search over
    scales (the threshold runs wide of a blurred square, or round its white card) and
    shifts, then the two best ids' poses refined a step at a time."""
    best: dict[int, float] = {}
    poses: dict[int, tuple[float, tuple[float, float, float, float]]] = {}

    def look(pose: tuple[float, float, float, float]) -> None:
        scores = _id_scores(grey, _posed(square, *pose))
        for marker_id, score in scores.items():
            if score > best.get(marker_id, -1.0):
                best[marker_id] = score
                poses[marker_id] = (score, pose)

    for scale in (0.6, 0.7, 0.8, 0.9, 1.0, 1.1):
        for dx, dy in itertools.product((-0.3, 0.0, 0.3), repeat=2):
            look((scale, dx, dy, 0.0))
    ranked = sorted(best, key=best.__getitem__, reverse=True)
    if len(ranked) < 2 or best[ranked[0]] < SMALL_SEAT_MATCH - 0.1:
        return None
    for marker_id in ranked[:2]:
        for step in (0.5, 0.25):
            for axis, size in enumerate((0.08, 0.25, 0.25, 8.0)):  # scale, cells, degrees
                for sign in (-1, 1):
                    pose = list(poses[marker_id][1])
                    pose[axis] += sign * size * step
                    look((pose[0], pose[1], pose[2], pose[3]))
    ranked = sorted(best, key=best.__getitem__, reverse=True)
    marker_id, other = ranked[0], ranked[1]
    if (marker_id not in SEAT_IDS or best[marker_id] < SMALL_SEAT_MATCH
            or best[marker_id] - best[other] < SMALL_SEAT_MARGIN):
        return None
    return (marker_id, best[marker_id], best[marker_id] - best[other],
            _posed(square, *poses[marker_id][1]))


def _posed(square: npt.NDArray[np.float32], scale: float, dx: float, dy: float,
           degrees: float) -> npt.NDArray[np.float32]:
    """``square`` scaled and turned about its middle, and shifted (in marker cells)."""
    middle, side = square.mean(axis=0), float(np.linalg.norm(square[1] - square[0]))
    turn = np.deg2rad(degrees)
    rotation = np.float32([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    moved = middle + ((square - middle) * scale) @ rotation.T + np.float32([dx, dy]) * side / 6
    return moved.astype(np.float32)


def _id_scores(grey: npt.NDArray[np.uint8], square: npt.NDArray[np.float32]
               ) -> dict[int, float]:
    """Each id's best correlation (over blurs and turns) with the inner view of
    ``square`` (the marker's black outline)."""
    c = MARKER_PIXELS_PER_CELL
    patterns, ids, _ = _blurred_patterns()
    view = np.float32([[c, c], [7 * c, c], [7 * c, 7 * c], [c, 7 * c]])
    seen = cv2.warpPerspective(grey, cv2.getPerspectiveTransform(square, view),
                               (_VIEW_CELLS * c, _VIEW_CELLS * c))
    values = _standard(seen.astype(np.float32)[_INNER, _INNER].ravel())
    if values is None:
        return {}
    scores = (patterns @ values / values.size).reshape(len(OUR_IDS), -1).max(axis=1)
    return {int(i): float(v) for i, v in zip(ids[::len(ids) // len(OUR_IDS)], scores,
                                             strict=True)}


def _whole_set(ids: set[int]) -> bool:
    """Whether ``ids`` look complete: all four table corners or none, seats 10, 11, …
    without a gap, and at least one marker."""
    corners = ids & set(TABLE_CORNER_IDS)
    seat_numbers = sorted(i - SEAT_IDS[0] for i in ids & set(SEAT_IDS))
    return (bool(ids) and len(corners) in (0, len(TABLE_CORNER_IDS))
            and seat_numbers == list(range(len(seat_numbers))))


def marker_image(marker_id: int, side_px: int) -> npt.NDArray[np.uint8]:
    """A printable marker (white quiet zone not included)."""
    image: npt.NDArray[np.uint8] = cv2.aruco.generateImageMarker(
        table_dictionary(), marker_id, side_px)
    return image
