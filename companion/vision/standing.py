"""What lies in front of a tile: the band of a rack's ledge, or the table.

A tile standing on a rack shows its face to the player with the rack's ledge along its
foot: a band of one flat colour, unlike the table, darker than the tile. A tile lying
on the table has table (or its own soft shadow, lighter the further out) at its foot.
``front_bands`` measures that band for each tile; the Nummix reader judges whole rows
with it (companion/readers/nummix.py), since the reader sees no pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.detections import Detections, rotate_quad

BAND_DEPTHS = (0.06, 0.12, 0.18, 0.24)
"""Where the band is sampled, in tile heights out from the tile's foot: a rack's ledge
(8 mm in front of the tiles, 14 mm high, seen at an angle) covers at least this much."""
TABLE_DEPTH = (0.8, 1.1)
"""Where the table around a tile is sampled, in tile heights out from each side."""
ALONG = 8
"""Samples across the tile's width, per depth."""
GAP_PX = 2.0
"""Pixels skipped past the located outline (its antialiased edge)."""
LEDGE_CONTRAST = 25.0
LEDGE_DARKNESS = 0.30
LEDGE_RISE = 0.01
"""A rack's ledge: a band at least ``LEDGE_CONTRAST`` from the table around the tiles
(CIELAB), at most ``LEDGE_DARKNESS`` as light as their faces, lightening outward by at
most ``LEDGE_RISE`` of the face: not the table, nor a lying tile's soft shadow (which
lightens outward), nor its side. Measured on the located tiles of 120 rendered scenes
(seeds 60000–60119), as medians over each row of tiles: 521 of 574 rack tiles, and 11
of 2755 lying tiles (two rows on dark tables); a rack's band is 0.16–0.23 as light as
the faces and never lightens by more than 0.01, contrast from 22 (a near-black table)
up."""


@dataclass(frozen=True)
class FrontBand:
    """The band at one tile's foot (all in CIELAB, 8-bit OpenCV scale).

    ``contrast``: colour distance of the band from the table around the tile;
    ``darkness``: the band's lightness over the tile face's;
    ``rise``: lightness gained from the band's inner half to its outer half, over the
    face's (a soft shadow lightens outward, a ledge does not);
    ``covered``: share of the band's samples that fell on another located piece."""

    contrast: float
    darkness: float
    rise: float
    covered: float


def front_bands(image: npt.NDArray[np.uint8], detections: Detections, *,
                kinds: tuple[str, ...] = ("nummix_tile",)) -> tuple[FrontBand | None, ...]:
    """For each piece of ``kinds`` (quads oriented: clockwise from the upright
    top-left, image pixels), the band at its foot; None for other pieces and for
    pieces whose band lies outside the image."""
    n = len(detections)
    rows = [i for i in range(n) if detections.kinds[i] in kinds]
    if not rows:
        return (None,) * n
    pieces = _piece_map(image, detections)
    out: list[FrontBand | None] = [None] * n
    for i in rows:
        out[i] = _band(image, pieces, np.asarray(detections.quads[i], np.float64), i + 1)
    return tuple(out)


def is_ledge(bands: Sequence[FrontBand | None]) -> bool:
    """Whether the bands at the feet of a row of tiles (or one tile; medians, the
    unmeasured left out) show a rack's ledge (``LEDGE_*``)."""
    known = [b for b in bands if b is not None]
    if not known:
        return False
    return (float(np.median([b.contrast for b in known])) >= LEDGE_CONTRAST
            and float(np.median([b.darkness for b in known])) <= LEDGE_DARKNESS
            and float(np.median([b.rise for b in known])) <= LEDGE_RISE)


def ledge_sides(image: npt.NDArray[np.uint8], detections: Detections,
                bands: Sequence[FrontBand | None]) -> dict[int, int]:
    """Tiles with no ledge at their foot but one along a side: index -> the quarter
    turns (1 or 3, ``rotate_quad``) that make that side the foot. A tile standing on
    a rack, seen steeply from above, looks nearly square, and its outline may start at
    a side; its foot is where the ledge is."""
    rows = [i for i, band in enumerate(bands)
            if detections.kinds[i] == "nummix_tile" and not is_ledge([band])]
    if not rows:
        return {}
    pieces = _piece_map(image, detections)
    out = {}
    for i in rows:
        for turns in (1, 3):
            quad = np.asarray(rotate_quad(detections.quads[i], turns), np.float64)
            band = _band(image, pieces, quad, i + 1)
            if band is not None and is_ledge([band]):
                out[i] = turns
                break
    return out


def _piece_map(image: npt.NDArray[np.uint8], detections: Detections) -> npt.NDArray[np.int32]:
    """Every located piece drawn by its index + 1 (0: nothing located there)."""
    pieces = np.zeros(image.shape[:2], np.int32)
    for i in range(len(detections)):
        cv2.fillConvexPoly(pieces, np.round(detections.quads[i]).astype(np.int32), i + 1)
    return pieces


def _band(image: npt.NDArray[np.uint8], pieces: npt.NDArray[np.int32],
          quad: npt.NDArray[np.float64], own: int) -> FrontBand | None:
    top_left, top_right, bottom_right, bottom_left = quad
    down = ((bottom_left - top_left) + (bottom_right - top_right)) / 2
    right = ((top_right - top_left) + (bottom_right - bottom_left)) / 2
    tall = float(np.linalg.norm(down))
    wide = float(np.linalg.norm(right))
    if tall < 4 or wide < 4:
        return None
    unit_down, unit_right = down / tall, right / wide
    along = np.linspace(0.1, 0.9, ALONG)
    foot = bottom_left[None, :] + along[:, None] * (bottom_right - bottom_left)[None, :]
    band = [foot + unit_down * (depth * tall + GAP_PX) for depth in BAND_DEPTHS]
    centre = quad.mean(axis=0)
    ring = []
    for depth in np.linspace(*TABLE_DEPTH, 3):  # all four sides, beyond the tile
        for axis, half in ((unit_down, tall / 2), (unit_right, wide / 2)):
            for sign in (1.0, -1.0):
                reach = half + depth * tall
                across = unit_right if axis is unit_down else unit_down
                span = (wide if axis is unit_down else tall) / 2
                ring.append(centre + sign * axis * reach
                            + np.linspace(-span, span, 5)[:, None] * across)
    inner = centre + (np.linspace(-0.3, 0.3, 5)[:, None, None] * right
                      + np.linspace(-0.3, 0.3, 5)[None, :, None] * down).reshape(-1, 2)
    free = [_sample(image, pieces, pts, own) for pts in band]
    table_px = _sample(image, pieces, np.vstack(ring), own)
    face_px = _sample(image, pieces, inner, own, skip_pieces=False)
    covered = 1.0 - sum(len(px) for px in free) / (ALONG * len(BAND_DEPTHS))
    if min(len(px) for px in free) < ALONG // 2 or len(table_px) < 5 or len(face_px) < 5:
        return None
    face_light = max(float(np.percentile(face_px[:, 0], 75)), 1.0)
    colour = np.median(np.vstack(free).astype(np.float64), axis=0)
    table = np.median(table_px.astype(np.float64), axis=0)
    half = len(free) // 2
    inner_light = float(np.median(np.concatenate([px[:, 0] for px in free[:half]])))
    outer_light = float(np.median(np.concatenate([px[:, 0] for px in free[half:]])))
    return FrontBand(contrast=float(np.linalg.norm(colour - table)),
                     darkness=float(colour[0]) / face_light,
                     rise=(outer_light - inner_light) / face_light,
                     covered=covered)


def _sample(image: npt.NDArray[np.uint8], pieces: npt.NDArray[np.int32],
            points: npt.NDArray[np.float64], own: int, *, skip_pieces: bool = True
            ) -> npt.NDArray[np.uint8]:
    """CIELAB colours of the pixels at ``points`` (nearest pixel) inside the image and,
    with ``skip_pieces``, on no located piece, else on piece ``own`` only."""
    height, width = image.shape[:2]
    xy = np.round(points).astype(np.int64)
    inside = (xy[:, 0] >= 0) & (xy[:, 0] < width) & (xy[:, 1] >= 0) & (xy[:, 1] < height)
    xy = xy[inside]
    if skip_pieces:
        xy = xy[pieces[xy[:, 1], xy[:, 0]] == 0]
    else:
        xy = xy[pieces[xy[:, 1], xy[:, 0]] == own]
    bgr = np.ascontiguousarray(image[xy[:, 1], xy[:, 0]]).reshape(-1, 1, 3)
    if len(bgr) == 0:
        return np.zeros((0, 3), np.uint8)
    lab: npt.NDArray[np.uint8] = cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB).reshape(-1, 3)
    return lab
