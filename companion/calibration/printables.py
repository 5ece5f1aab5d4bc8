"""The printable aids, drawn by code as A4 pages (PNG and PDF).

Pages: table corner markers, seat markers with room for a name, a neutral grey card,
a ChArUco board for camera calibration, and the companion's own Qwixx score sheet.
Everything is drawn at a known scale (``DPI``), so millimetres on paper are exact when
printed at 100 %.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image

from companion.calibration import qwixx_sheet
from companion.calibration.markers import (
    GREY_CARD_ID,
    SEAT_IDS,
    TABLE_CORNER_IDS,
    charuco_board,
    marker_image,
)

DPI = 150
A4_MM = (210.0, 297.0)
Page = npt.NDArray[np.uint8]

GREY_CARD_GREY = 128
"""The grey patch's printed value (sRGB); the white patch is bare paper."""
ROW_BGR = {"red": (40, 40, 210), "yellow": (0, 190, 230), "green": (60, 150, 40),
           "blue": (170, 90, 30)}


def mm(value: float) -> int:
    """Millimetres on paper to pixels on the page."""
    return int(round(value * DPI / 25.4))


def blank_page() -> Page:
    return np.full((mm(A4_MM[1]), mm(A4_MM[0]), 3), 255, np.uint8)


def _text(page: Page, text: str, x_mm: float, y_mm: float, *, size: float = 1.0,
          colour: tuple[int, int, int] = (0, 0, 0)) -> None:
    cv2.putText(page, text, (mm(x_mm), mm(y_mm)), cv2.FONT_HERSHEY_SIMPLEX,
                size * DPI / 150, colour, max(1, int(2 * size * DPI / 150)), cv2.LINE_AA)


def _paste_marker(page: Page, marker_id: int, x_mm: float, y_mm: float, side_mm: float) -> None:
    side = mm(side_mm)
    marker = cv2.cvtColor(marker_image(marker_id, side), cv2.COLOR_GRAY2BGR)
    x, y = mm(x_mm), mm(y_mm)
    page[y:y + side, x:x + side] = marker


def _cut_line(page: Page, x0: float, y0: float, x1: float, y1: float) -> None:
    cv2.rectangle(page, (mm(x0), mm(y0)), (mm(x1), mm(y1)), (180, 180, 180), 1)


def table_markers_page() -> Page:
    """Four 50 mm corner markers to cut out and lay at the play area's corners."""
    page = blank_page()
    _text(page, "Table Companion - table corner markers", 15, 15, size=0.9)
    names = ("top-left", "top-right", "bottom-right", "bottom-left")
    for k, (marker_id, name) in enumerate(zip(TABLE_CORNER_IDS, names, strict=True)):
        x0, y0 = 20 + (k % 2) * 95, 40 + (k // 2) * 120
        _cut_line(page, x0 - 8, y0 - 8, x0 + 58, y0 + 75)
        _paste_marker(page, marker_id, x0, y0, 50)
        _text(page, f"{name} (id {marker_id})", x0, y0 + 62, size=0.6)
    _text(page, "Print at 100 %. Lay each at its corner, this side up.", 15, 285, size=0.6)
    return page


def seat_markers_page() -> Page:
    """One seat marker per player (up to six) with a line to write the name on."""
    page = blank_page()
    _text(page, "Table Companion - seat markers", 15, 15, size=0.9)
    for k, marker_id in enumerate(SEAT_IDS):
        x0, y0 = 15 + (k % 2) * 95, 30 + (k // 2) * 85
        _cut_line(page, x0 - 5, y0 - 5, x0 + 85, y0 + 75)
        _paste_marker(page, marker_id, x0 + 5, y0 + 5, 40)
        _text(page, f"Seat {k + 1}", x0 + 50, y0 + 15, size=0.8)
        _text(page, f"id {marker_id}", x0 + 50, y0 + 25, size=0.5)
        _text(page, "name:", x0 + 5, y0 + 62, size=0.6)
        cv2.line(page, (mm(x0 + 22), mm(y0 + 63)), (mm(x0 + 80), mm(y0 + 63)), (0, 0, 0), 1)
    return page


def grey_card_page() -> Page:
    """A neutral grey patch and a bare-paper white patch beside a marker."""
    page = blank_page()
    _text(page, "Table Companion - neutral grey card", 15, 15, size=0.9)
    _cut_line(page, 25, 30, 185, 130)
    _paste_marker(page, GREY_CARD_ID, 30, 35, 40)
    page[mm(35):mm(125), mm(80):mm(140)] = GREY_CARD_GREY
    _text(page, "grey", 85, 140, size=0.6)
    _text(page, "white (paper)", 145, 140, size=0.6)
    cv2.rectangle(page, (mm(145), mm(35)), (mm(180), mm(125)), (0, 0, 0), 1)
    _text(page, "Lay it flat where the camera sees it; it sets the colour balance.", 15, 160,
          size=0.6)
    return page


def charuco_page() -> Page:
    """The ChArUco board for ``companion calibrate camera``; print at 100 % on stiff card."""
    page = blank_page()
    board = charuco_board()
    cols, rows = board.getChessboardSize()
    square = board.getSquareLength()
    w_mm, h_mm = cols * square, rows * square
    image = board.generateImage((mm(w_mm), mm(h_mm)), marginSize=0)
    x0, y0 = (A4_MM[0] - w_mm) / 2, 40.0
    page[mm(y0):mm(y0) + image.shape[0], mm(x0):mm(x0) + image.shape[1]] = image[..., None]
    _text(page, "Table Companion - camera calibration board", 15, 15, size=0.9)
    _text(page, f"{cols}x{rows} squares of {square:g} mm; print at 100 %, keep flat.", 15, 25,
          size=0.6)
    return page


def qwixx_sheet_page() -> Page:
    """Our own Qwixx score sheet with corner markers, so every box's place is known."""
    page = blank_page()
    ox, oy = (A4_MM[0] - qwixx_sheet.SHEET_MM[0]) / 2, 20.0
    w, h = qwixx_sheet.SHEET_MM
    _cut_line(page, ox, oy, ox + w, oy + h)
    for marker_id, (mx, my) in qwixx_sheet.marker_corners_mm().items():
        _paste_marker(page, marker_id, ox + mx, oy + my, qwixx_sheet.MARKER_MM)
    for box in qwixx_sheet.boxes():
        colour = ROW_BGR.get(box.row, (0, 0, 0))
        x, y = ox + box.x, oy + box.y
        if box.row != "foul":
            light = tuple(int(255 - (255 - c) * 0.25) for c in colour)
            cv2.rectangle(page, (mm(x), mm(y)), (mm(x + box.w), mm(y + box.h)), light, -1)
        cv2.rectangle(page, (mm(x), mm(y)), (mm(x + box.w), mm(y + box.h)), colour, 2)
        label = "L" if box.value == "lock" else ("" if box.row == "foul" else str(box.value))
        _text(page, label, x + 2.5, y + 8.5, size=0.55, colour=colour)
    _text(page, "fouls (-5)", ox + 75, oy + qwixx_sheet.FOUL_Y_MM + 8, size=0.55)
    _text(page, "Qwixx score sheet (Table Companion)", ox + 22, oy + 14, size=0.6)
    return page


PAGES: dict[str, Callable[[], Page]] = {
    "table_markers": table_markers_page,
    "seat_markers": seat_markers_page,
    "grey_card": grey_card_page,
    "charuco_board": charuco_page,
    "qwixx_sheet": qwixx_sheet_page,
}


def write_printables(out_dir: Path) -> list[Path]:
    """Write every page as PNG and PDF (A4 at ``DPI``); returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in PAGES.items():
        page = draw()
        rgb = Image.fromarray(cv2.cvtColor(page, cv2.COLOR_BGR2RGB))
        png, pdf = out_dir / f"{name}.png", out_dir / f"{name}.pdf"
        rgb.save(png, optimize=True)
        rgb.save(pdf, resolution=DPI)
        written += [png, pdf]
    return written
