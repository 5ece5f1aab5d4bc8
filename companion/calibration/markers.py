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


def detect_markers(image: npt.NDArray[np.uint8]) -> list[Marker]:
    """Every table, seat, grey-card and sheet marker in a BGR or grey image (ids we do
    not print are left out)."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    params.perspectiveRemovePixelPerCell = MARKER_PIXELS_PER_CELL
    detector = cv2.aruco.ArucoDetector(table_dictionary(), params)
    corners, ids, _ = detector.detectMarkers(grey)
    if ids is None:
        return []
    found = [Marker(int(i), np.asarray(c, np.float32).reshape(4, 2))
             for c, i in zip(corners, ids.ravel(), strict=True) if int(i) in OUR_IDS]
    return sorted(found, key=lambda m: m.id)


def marker_image(marker_id: int, side_px: int) -> npt.NDArray[np.uint8]:
    """A printable marker (white quiet zone not included)."""
    image: npt.NDArray[np.uint8] = cv2.aruco.generateImageMarker(
        table_dictionary(), marker_id, side_px)
    return image
