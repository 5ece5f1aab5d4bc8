"""The table from one frame: its plane (corner markers), the seats, the colour balance.

Everything is optional: without corner markers there is no table plane, without seat
markers no seats, without the grey card the balance comes from the pieces' own white.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from companion.calibration.camera import (
    CameraProfile,
    _load_profile,
    save_profile,
    undistort,
)
from companion.calibration.markers import (
    GREY_CARD_ID,
    SEAT_IDS,
    TABLE_CORNER_IDS,
    Marker,
    detect_markers,
)
from companion.games.base import InputError

TABLE_MARKER_MM = 50.0
"""Side of a printed table corner marker (see printables.table_markers_page)."""
GREY_MARKER_MM = 40.0
# Patch centres on the grey card, in marker side lengths from the marker's top-left.
GREY_PATCH_AT = (2.0, 1.125)
WHITE_PATCH_AT = (3.3125, 1.125)
PATCH_RADIUS = 0.25


@dataclass(frozen=True)
class Seat:
    """A seat marker: its id, the player's name, where it is (pixels, and table mm)."""

    marker_id: int
    name: str
    image_xy: tuple[float, float]
    table_xy: tuple[float, float] | None


@dataclass(frozen=True)
class TableProfile:
    """What one frame of the empty (or set-up) table tells the reader."""

    image_size: tuple[int, int]
    table_size_mm: tuple[float, float] | None  # between the corner markers' centres
    image_to_table: tuple[tuple[float, ...], ...] | None  # 3x3 homography, pixels -> mm
    seats: tuple[Seat, ...]  # clockwise around the table
    white_gains: tuple[float, float, float]  # B, G, R multipliers
    white_source: str  # "grey card", "pieces' white" or "none"

    def save(self, path: Path) -> None:
        save_profile(path, "table", self)

    @classmethod
    def load(cls, path: Path) -> TableProfile:
        data = _load_profile(path, "table")
        try:
            seats = tuple(Seat(int(s["marker_id"]), str(s["name"]), tuple(s["image_xy"]),
                               tuple(s["table_xy"]) if s["table_xy"] else None)
                          for s in data["seats"])
            h = data["image_to_table"]
            return cls(tuple(data["image_size"]),
                       tuple(data["table_size_mm"]) if data["table_size_mm"] else None,
                       tuple(tuple(r) for r in h) if h else None,
                       seats, tuple(data["white_gains"]),
                       str(data["white_source"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(str(path), f"not a table profile ({exc})") from None

    def to_table(self, points: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Image pixels to table millimetres (needs the corner markers)."""
        if self.image_to_table is None:
            raise InputError("profile", "no table corner markers were found at calibration")
        pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
        out: npt.NDArray[np.float64] = cv2.perspectiveTransform(
            pts, np.array(self.image_to_table)).reshape(-1, 2)
        return out


def apply_white_gains(image: npt.NDArray[np.uint8], gains: tuple[float, float, float]
                      ) -> npt.NDArray[np.uint8]:
    """The image with per-channel gains applied (B, G, R), clipped to 0-255."""
    out = image.astype(np.float32) * np.array(gains, np.float32)
    return np.clip(out, 0, 255).astype(np.uint8)


def _metric_homography(markers: list[Marker], side_mm: float) -> npt.NDArray[np.float64]:
    """Image pixels -> table mm, from markers that are all squares of ``side_mm``.

    Least squares (Levenberg-Marquardt) over the homography and each marker's place and
    turn on the table, so every marker maps to a true square: the spread of the markers
    over the table pins down the perspective far better than one marker alone."""
    model = np.array([[0, 0], [side_mm, 0], [side_mm, side_mm], [0, side_mm]], np.float64)
    model -= model.mean(axis=0)
    image_pts = np.concatenate([m.corners for m in markers]).astype(np.float64)
    h0 = cv2.getPerspectiveTransform(markers[0].corners.astype(np.float32),
                                     (model + side_mm / 2).astype(np.float32))
    h0 = h0 / h0[2, 2]
    poses = []
    mapped = cv2.perspectiveTransform(image_pts.reshape(-1, 1, 2), h0).reshape(-1, 4, 2)
    for c in mapped:
        edge = c[1] - c[0]
        poses += [*c.mean(axis=0), np.arctan2(edge[1], edge[0])]
    params = np.concatenate([h0.ravel()[:8], poses])

    def residuals(p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        h = np.append(p[:8], 1.0).reshape(3, 3)
        pts = np.column_stack([image_pts, np.ones(len(image_pts))]) @ h.T
        pts = pts[:, :2] / pts[:, 2:3]
        out = []
        for k in range(len(markers)):
            tx, ty, th = p[8 + 3 * k: 11 + 3 * k]
            rot = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
            out.append(pts[4 * k: 4 * k + 4] - (model @ rot.T + [tx, ty]))
        return np.concatenate(out).ravel()

    scale = np.maximum(np.abs(params), 1e-6)
    damping = 1e-3
    current = residuals(params)
    for _ in range(100):
        jac = np.empty((len(current), len(params)))
        for j in range(len(params)):
            step = np.zeros_like(params)
            step[j] = 1e-6 * scale[j]
            jac[:, j] = (residuals(params + step) - current) / step[j]
        normal = jac.T @ jac
        gradient = jac.T @ current
        delta = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-12), -gradient)
        trial = residuals(params + delta)
        if trial @ trial < current @ current:
            params, current, damping = params + delta, trial, damping / 3
            if np.abs(delta).max() < 1e-10 * max(1.0, np.abs(params).max()):
                break
        else:
            damping *= 5
    return np.append(params[:8], 1.0).reshape(3, 3)


def _table_plane(corners: Mapping[int, Marker]
                 ) -> tuple[tuple[float, float], npt.NDArray[np.float64]] | None:
    """Size (mm) between the corner markers' centres and the homography image -> table
    mm, with marker 0's centre at the origin and marker 1's on the +x axis."""
    if not all(i in corners for i in TABLE_CORNER_IDS):
        return None
    markers = [corners[i] for i in TABLE_CORNER_IDS]
    h = _metric_homography(markers, TABLE_MARKER_MM)
    centres = cv2.perspectiveTransform(
        np.array([m.centre for m in markers], np.float64).reshape(-1, 1, 2), h).reshape(-1, 2)
    x_axis = centres[1] - centres[0]
    angle = np.arctan2(x_axis[1], x_axis[0])
    c, s = np.cos(-angle), np.sin(-angle)
    align = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ np.array(
        [[1, 0, -centres[0][0]], [0, 1, -centres[0][1]], [0, 0, 1]])
    homography = align @ h
    local = cv2.perspectiveTransform(centres.reshape(-1, 1, 2), align).reshape(-1, 2)
    width = float((np.linalg.norm(local[1] - local[0]) + np.linalg.norm(local[2] - local[3])) / 2)
    height = float((np.linalg.norm(local[3] - local[0]) + np.linalg.norm(local[2] - local[1])) / 2)
    return (width, height), homography


def _grey_card_gains(image: npt.NDArray[np.uint8], marker: Marker
                     ) -> tuple[float, float, float] | None:
    """Gains that make the card's bare-paper white patch neutral."""
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    to_image = cv2.getPerspectiveTransform(unit, marker.corners.astype(np.float32))
    cx, cy = WHITE_PATCH_AT
    r = PATCH_RADIUS
    patch = np.array([[[cx - r, cy - r]], [[cx + r, cy - r]], [[cx + r, cy + r]],
                      [[cx - r, cy + r]]], np.float32)
    poly = cv2.perspectiveTransform(patch, to_image).reshape(-1, 2).astype(np.int32)
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, poly, 255)
    if cv2.countNonZero(mask) < 20:
        return None
    mean = np.array(cv2.mean(image, mask=mask)[:3])
    if mean.min() < 10:
        return None
    target = mean.max()
    return (float(target / mean[0]), float(target / mean[1]), float(target / mean[2]))


def _clockwise(seats: list[Seat], centre: npt.NDArray[np.float64]) -> tuple[Seat, ...]:
    """Seats in clockwise order around the centre (image y points down), from seat 1."""
    def angle(s: Seat) -> float:
        return float(np.arctan2(s.image_xy[1] - centre[1], s.image_xy[0] - centre[0]))
    ordered = sorted(seats, key=angle)
    if not ordered:
        return ()
    first = min(range(len(ordered)), key=lambda i: ordered[i].marker_id)
    return tuple(ordered[first:] + ordered[:first])


def calibrate_table(image: npt.NDArray[np.uint8], *, seat_names: Mapping[int, str] | None = None,
                    camera: CameraProfile | None = None) -> TableProfile:
    """A table profile from one frame; ``seat_names`` maps seat marker ids to names
    (unnamed seats are called P1, P2… by their printed number)."""
    if camera is not None:
        image = undistort(image, camera)
    markers = detect_markers(image)
    by_id = {m.id: m for m in markers}
    plane = _table_plane(by_id)
    homography = plane[1] if plane else None
    names = dict(seat_names or {})
    seats = []
    for m in markers:
        if m.id not in SEAT_IDS:
            continue
        xy = m.centre.astype(np.float64)
        table_xy = None
        if homography is not None:
            t = cv2.perspectiveTransform(xy.reshape(1, 1, 2), homography).ravel()
            table_xy = (float(t[0]), float(t[1]))
        name = names.get(m.id, f"P{SEAT_IDS.index(m.id) + 1}")
        seats.append(Seat(m.id, name, (float(xy[0]), float(xy[1])), table_xy))
    if markers:
        centre = np.mean([m.centre for m in markers if m.id in TABLE_CORNER_IDS]
                         or [m.centre for m in markers], axis=0)
    else:
        centre = np.array([image.shape[1] / 2, image.shape[0] / 2])
    gains, source = (1.0, 1.0, 1.0), "none"
    if GREY_CARD_ID in by_id:
        found = _grey_card_gains(image, by_id[GREY_CARD_ID])
        if found is not None:
            gains, source = found, "grey card"
    return TableProfile(
        (image.shape[1], image.shape[0]),
        plane[0] if plane else None,
        tuple(tuple(float(v) for v in row) for row in homography) if homography is not None
        else None,
        _clockwise(seats, centre), gains, source)
