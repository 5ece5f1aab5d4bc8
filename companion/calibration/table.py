"""The table from one frame: its plane (corner markers), the seats, the colour balance.

Everything is optional: without corner markers there is no table plane, without seat
markers no seats, without the grey card the balance comes from the pieces' own white.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
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
MAX_PLANE_STEPS = 50
"""Levenberg-Marquardt steps at most in the table-plane fit (it converges in about 10)."""
PLANE_MAX_DAMPING = 1e12
"""Damping at which a step too short to lower the cost means the fit is at its minimum."""
PLANE_COST_TOLERANCE = 1e-12
"""The plane fit stops when a step lowers the cost by less than this fraction: near
double precision, the fit can get no better."""
PLANE_STEP_TOLERANCE = 1e-9
"""... or when no parameter moves by more than this (mm, radians, or homography entries
over image points normalised to ~1): with exact corners the cost keeps halving long after
the homography has stopped changing."""


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

    def scaled(self, factor: float) -> TableProfile:
        """The profile for the same camera's frames resized by ``factor`` (a large photo
        read from a shrunk copy): image sizes and positions times ``factor``."""
        to_table = None
        if self.image_to_table is not None:
            back = np.diag([1 / factor, 1 / factor, 1.0])
            to_table = tuple(tuple(float(v) for v in row)
                             for row in np.asarray(self.image_to_table, np.float64) @ back)
        seats = tuple(replace(s, image_xy=(s.image_xy[0] * factor, s.image_xy[1] * factor))
                      for s in self.seats)
        size = (round(self.image_size[0] * factor), round(self.image_size[1] * factor))
        return replace(self, image_size=size, image_to_table=to_table, seats=seats)

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


def _square_rectification(quads: npt.NDArray[np.float64], side_mm: float
                          ) -> npt.NDArray[np.float64]:
    """A closed-form homography image -> table mm (up to a turn and shift) from the image
    quads of squares of ``side_mm``, all of them at once: a start for the plane fit.

    The horizon (the image line the homography sends to infinity) is the line through the
    vanishing points of every square's two pairs of opposite edges, fitted to all of them
    in least squares; once the horizon is sent to infinity each square is a parallelogram
    ``B @ turn @ square``, and the B shared by all of them is what turns them back."""
    homog = np.concatenate([quads, np.ones((*quads.shape[:2], 1))], axis=2)
    lines = np.cross(homog, np.roll(homog, -1, axis=1))  # edge k runs from corner k to k+1
    lines /= np.linalg.norm(lines[..., :2], axis=2, keepdims=True)
    vanishing = np.cross(lines[:, :2], lines[:, 2:]).reshape(-1, 3)
    vanishing /= np.linalg.norm(vanishing, axis=1, keepdims=True)
    horizon = np.linalg.svd(vanishing)[2][-1]
    if abs(horizon[2]) < 1e-9:  # horizon through the markers' centroid: no plane to see
        horizon = np.array([0.0, 0.0, 1.0])
    to_affine = np.array([[1, 0, 0], [0, 1, 0], horizon / horizon[2]])
    homog = homog @ to_affine.T
    flat = homog[..., :2] / homog[..., 2:]
    model = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float64) * side_mm / 2
    # each parallelogram's linear part M (flat = M @ model + centre) has M @ M.T = B @ B.T
    centred = flat - flat.mean(axis=1, keepdims=True)
    linear = np.einsum("kji,jl->kil", centred, model) / (side_mm**2)
    shape = np.einsum("kij,klj->il", linear, linear) / len(quads)
    values, vectors = np.linalg.eigh(shape)
    unshape = vectors @ np.diag(1 / np.sqrt(np.maximum(values, 1e-300))) @ vectors.T
    out: npt.NDArray[np.float64] = np.block([[unshape, np.zeros((2, 1))],
                                             [np.zeros((1, 2)), np.ones((1, 1))]]) @ to_affine
    out /= out[2, 2]
    return out


def _metric_homography(markers: list[Marker], side_mm: float) -> npt.NDArray[np.float64]:
    """Image pixels -> table mm, from markers that are all squares of ``side_mm``.

    Least squares (Levenberg-Marquardt, analytic Jacobian) over the homography and each
    marker's place and turn on the table, so every marker maps to a true square: the
    spread of the markers over the table pins down the perspective far better than one
    marker alone. It starts from a closed form fitted to all markers at once (a start from
    one marker's own homography stuck, in about one photo in eight, at squares 25-150 mm
    off). The image points are normalised (centroid at 0, mean distance 1) so the
    homography's entries are of one size, and the first marker's place and turn stay
    fixed: moving the whole table by a turn and shift fits equally well, so without that
    the problem has no single answer and the steps wander along it."""
    model = np.array([[0, 0], [side_mm, 0], [side_mm, side_mm], [0, side_mm]], np.float64)
    model -= model.mean(axis=0)
    count = len(markers)
    image_pts = np.concatenate([m.corners for m in markers]).astype(np.float64)
    centroid = image_pts.mean(axis=0)
    spread = 1.0 / max(float(np.linalg.norm(image_pts - centroid, axis=1).mean()), 1e-9)
    normalise = np.array([[spread, 0, -spread * centroid[0]],
                          [0, spread, -spread * centroid[1]], [0, 0, 1]])
    pts = (image_pts - centroid) * spread
    px, py = pts[:, 0], pts[:, 1]
    corner_model = np.tile(model, (count, 1))  # (4 * count, 2): each point's model corner
    mx, my = corner_model[:, 0], corner_model[:, 1]
    owner = np.repeat(np.arange(count), 4)  # the marker each point belongs to

    def project(h: npt.NDArray[np.float64]
                ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64],
                           npt.NDArray[np.float64]]:
        w = h[6] * px + h[7] * py + 1.0
        return (h[0] * px + h[1] * py + h[2]) / w, (h[3] * px + h[4] * py + h[5]) / w, w

    def best_poses(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]
                   ) -> npt.NDArray[np.float64]:
        """Each marker's (x, y, turn) that best lays the model square on mapped points."""
        cx = x.reshape(count, 4).mean(axis=1)
        cy = y.reshape(count, 4).mean(axis=1)
        dx, dy = (x.reshape(count, 4) - cx[:, None]), (y.reshape(count, 4) - cy[:, None])
        sin = (model[:, 0] * dy - model[:, 1] * dx).sum(axis=1)
        cos = (model[:, 0] * dx + model[:, 1] * dy).sum(axis=1)
        return np.column_stack([cx, cy, np.arctan2(sin, cos)])

    def residuals(h: npt.NDArray[np.float64], poses: npt.NDArray[np.float64]
                  ) -> npt.NDArray[np.float64]:
        x, y, _ = project(h)
        c, s = np.cos(poses[owner, 2]), np.sin(poses[owner, 2])
        rx = x - (c * mx - s * my + poses[owner, 0])
        ry = y - (s * mx + c * my + poses[owner, 1])
        return np.column_stack([rx, ry]).ravel()

    h = _square_rectification(pts.reshape(count, 4, 2), side_mm).ravel()[:8]
    poses = best_poses(*project(h)[:2])
    # columns: 8 homography entries, then (x, y, turn) of every marker but the first
    free = 8 + 3 * (count - 1)
    rows = 8 * count
    jac = np.zeros((rows, free))
    ix, iy = np.arange(0, rows, 2), np.arange(1, rows, 2)
    posed = owner > 0  # points whose marker's pose is free
    turn_col = 8 + 3 * (owner[posed] - 1) + 2
    jac[ix[posed], turn_col - 2] = -1.0
    jac[iy[posed], turn_col - 1] = -1.0
    current = residuals(h, poses)
    cost = float(current @ current)
    damping = 1e-3
    for _ in range(MAX_PLANE_STEPS):
        x, y, w = project(h)
        jac[ix, 0], jac[ix, 1], jac[ix, 2] = px / w, py / w, 1 / w
        jac[iy, 3], jac[iy, 4], jac[iy, 5] = px / w, py / w, 1 / w
        jac[ix, 6], jac[ix, 7] = -x * px / w, -x * py / w
        jac[iy, 6], jac[iy, 7] = -y * px / w, -y * py / w
        c, s = np.cos(poses[owner, 2]), np.sin(poses[owner, 2])
        jac[ix[posed], turn_col] = (s * mx + c * my)[posed]
        jac[iy[posed], turn_col] = -(c * mx - s * my)[posed]
        normal = jac.T @ jac
        gradient = jac.T @ current
        diag = np.diag(normal) + 1e-12
        improved = False
        while damping < PLANE_MAX_DAMPING:
            delta = np.linalg.solve(normal + damping * np.diag(diag), -gradient)
            trial_h = h + delta[:8]
            trial_poses = poses.copy()
            trial_poses[1:] += delta[8:].reshape(-1, 3)
            trial = residuals(trial_h, trial_poses)
            trial_cost = float(trial @ trial)
            if trial_cost < cost:
                improved = True
                break
            damping *= 5
        if not improved:
            break
        gain = cost - trial_cost
        h, poses, current, cost = trial_h, trial_poses, trial, trial_cost
        damping = max(damping / 3, 1e-12)
        if gain <= PLANE_COST_TOLERANCE * cost or np.abs(delta).max() <= PLANE_STEP_TOLERANCE:
            break
    fitted: npt.NDArray[np.float64] = np.append(h, 1.0).reshape(3, 3) @ normalise
    return fitted


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
