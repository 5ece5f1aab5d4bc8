"""Geometry of the companion's own Qwixx score sheet, in millimetres on the sheet.

The printable, the renderer and the sheet reader all use these numbers, so a printed
sheet is read exactly: the four corner markers fix the sheet's plane, and every box's
place follows from here. Origin at the sheet's top-left, x right, y down.
"""

from __future__ import annotations

from dataclasses import dataclass

SHEET_MM: tuple[float, float] = (200.0, 130.0)  # width, height
MARKER_MM = 14.0
MARKER_MARGIN_MM = 4.0
ROW_COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue")
ROW_NUMBERS: dict[str, tuple[int, ...]] = {
    "red": tuple(range(2, 13)),
    "yellow": tuple(range(2, 13)),
    "green": tuple(range(12, 1, -1)),
    "blue": tuple(range(12, 1, -1)),
}
BOX_MM = 12.0
BOX_GAP_MM = 1.5
FIRST_BOX_X_MM = 22.0
FIRST_ROW_Y_MM = 22.0
ROW_PITCH_MM = 17.0
FOUL_Y_MM = FIRST_ROW_Y_MM + 4 * ROW_PITCH_MM + 4.0


@dataclass(frozen=True)
class Box:
    """One box to cross: which row and number (or "lock"/"foul"), and its rectangle."""

    row: str  # a colour, or "foul"
    value: int | str  # the number, "lock", or the foul's index 1-4
    x: float
    y: float
    w: float = BOX_MM
    h: float = BOX_MM


def boxes() -> tuple[Box, ...]:
    """Every box on the sheet: 4 rows of 11 numbers and a lock, then 4 fouls."""
    out = []
    for r, colour in enumerate(ROW_COLOURS):
        y = FIRST_ROW_Y_MM + r * ROW_PITCH_MM
        for i, number in enumerate(ROW_NUMBERS[colour]):
            out.append(Box(colour, number, FIRST_BOX_X_MM + i * (BOX_MM + BOX_GAP_MM), y))
        out.append(Box(colour, "lock", FIRST_BOX_X_MM + 11 * (BOX_MM + BOX_GAP_MM) + 3.0, y))
    for k in range(4):
        out.append(Box("foul", k + 1, FIRST_BOX_X_MM + 7 * (BOX_MM + BOX_GAP_MM)
                       + k * (BOX_MM + BOX_GAP_MM), FOUL_Y_MM))
    return tuple(out)


def marker_corners_mm() -> dict[int, tuple[float, float]]:
    """Top-left corner of each corner marker (ids 20-23: TL, TR, BR, BL)."""
    from companion.calibration.markers import QWIXX_SHEET_IDS

    w, h = SHEET_MM
    m, s = MARKER_MARGIN_MM, MARKER_MM
    places = [(m, m), (w - m - s, m), (w - m - s, h - m - s), (m, h - m - s)]
    return dict(zip(QWIXX_SHEET_IDS, places, strict=True))
