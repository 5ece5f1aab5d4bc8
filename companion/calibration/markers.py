"""The markers the companion prints and finds: which dictionary, which ids mean what.

One place for these numbers, shared by the printables, the renderer and the reader.
Table corners and seats use ArUco DICT_4X4_50; the ChArUco board for camera calibration
uses DICT_5X5_100 so its markers are never mistaken for table markers.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def detect_markers(image: npt.NDArray[np.uint8]) -> list[Marker]:
    """Every table, seat, grey-card and sheet marker in a BGR or grey image (ids we do
    not print are left out). When what is found is not a whole set (some table corners
    but not all four, seats with a gap, or nothing), the photo is sharpened and looked
    at again: a blurred marker's cells come apart (``SHARPEN_SIGMA``)."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    found = _markers_in(grey)
    if not _whole_set({m.id for m in found}):
        soft = cv2.GaussianBlur(grey, (0, 0), SHARPEN_SIGMA)
        seen = {m.id for m in found}
        found += [m for m in _markers_in(cv2.addWeighted(grey, 2.0, soft, -1.0, 0))
                  if m.id not in seen]
    return sorted(found, key=lambda m: m.id)


def _markers_in(grey: npt.NDArray[np.uint8]) -> list[Marker]:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    params.perspectiveRemovePixelPerCell = MARKER_PIXELS_PER_CELL
    detector = cv2.aruco.ArucoDetector(table_dictionary(), params)
    corners, ids, _ = detector.detectMarkers(grey)
    if ids is None:
        return []
    return [Marker(int(i), np.asarray(c, np.float32).reshape(4, 2))
            for c, i in zip(corners, ids.ravel(), strict=True) if int(i) in OUR_IDS]


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
