"""The simulated table and camera: textures, pose, light, lens, blur, noise, JPEG.

Everything is vectorised OpenCV/numpy so a 1280×720 scene takes tens of milliseconds.
Parameters are drawn from an rng by difficulty (easy, normal, hard) and recorded in the
scene's JSON.
"""

from __future__ import annotations

import functools
import math
import zlib
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

DIFFICULTIES: tuple[str, ...] = ("easy", "normal", "hard")
TEXTURES: tuple[str, ...] = ("wood", "cloth", "stone", "plain")


@dataclass(frozen=True)
class Effects:
    """The ranges each difficulty draws from."""

    tilt: tuple[float, float]
    distortion: float
    light_spread: float
    gradient: float
    glare: int
    hand: float
    defocus: float
    motion: float
    noise: tuple[float, float]
    jpeg: tuple[int, int]
    shadow: float
    fill: tuple[float, float]  # share of the frame the pieces' bounding box spans
    min_px: float  # shortest card/tile side at 1280×720 (tile height: min_px × 40/28)


EFFECTS: dict[str, Effects] = {
    "easy": Effects(tilt=(0.0, 15.0), distortion=0.0, light_spread=0.04, gradient=0.05,
                    glare=0, hand=0.0, defocus=0.4, motion=0.0, noise=(0.5, 2.0),
                    jpeg=(90, 96), shadow=0.25, fill=(0.7, 0.9), min_px=28.0),
    "normal": Effects(tilt=(0.0, 35.0), distortion=0.06, light_spread=0.12, gradient=0.2,
                      glare=1, hand=0.25, defocus=1.1, motion=0.2, noise=(1.5, 5.0),
                      jpeg=(72, 93), shadow=0.4, fill=(0.65, 0.9), min_px=28.0),
    "hard": Effects(tilt=(15.0, 50.0), distortion=0.12, light_spread=0.22, gradient=0.35,
                    glare=3, hand=0.5, defocus=2.2, motion=0.4, noise=(3.0, 9.0),
                    jpeg=(55, 85), shadow=0.55, fill=(0.6, 0.9), min_px=20.0),
}


def effects(difficulty: str) -> Effects:
    if difficulty not in EFFECTS:
        raise ValueError(f"unknown difficulty {difficulty!r} (one of {', '.join(DIFFICULTIES)})")
    return EFFECTS[difficulty]


# --------------------------------------------------------------------------- textures

def table_texture(kind: str, rng: np.random.Generator, size: int = 384) -> np.ndarray:
    """A generated table top (BGR uint8, ``size``²): wood grain, woven cloth, stone, plain."""
    def noise(scale: int) -> np.ndarray:
        small = rng.standard_normal((max(2, size // scale), max(2, size // scale)))
        return cv2.resize(small.astype(np.float32), (size, size),
                          interpolation=cv2.INTER_CUBIC)

    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size
    if kind == "wood":
        base = np.array(_pick(rng, [(40, 80, 130), (60, 105, 160), (30, 55, 95), (85, 140, 190)]),
                        np.float32)
        freq = rng.uniform(18, 45)
        warp = noise(96) * 0.02 + noise(24) * 0.004 + xx * rng.uniform(-0.1, 0.1)
        grain = np.sin((yy + warp) * freq * math.pi) * 0.6 + 0.4 * noise(6)
        fine = noise(3) * 0.25
        shade = 1.0 + 0.12 * grain + 0.06 * fine
        img = base[None, None, :] * shade[:, :, None]
    elif kind == "cloth":
        base = np.array(_pick(rng, [(60, 110, 50), (110, 60, 40), (70, 70, 150), (150, 150, 150),
                                    (50, 50, 55)]), np.float32)
        period = rng.uniform(3.0, 6.0)
        weave = (np.sin(xx * size / period * math.pi) * np.sin(yy * size / period * math.pi))
        shade = 1.0 + 0.10 * weave + 0.08 * noise(24)
        img = base[None, None, :] * shade[:, :, None]
    elif kind == "stone":
        base = np.array(_pick(rng, [(225, 225, 222), (180, 182, 185), (90, 92, 95),
                                    (200, 205, 210)]), np.float32)
        veins = np.abs(noise(40) + 0.5 * noise(16))
        shade = 1.0 - 0.12 * np.exp(-veins * 25.0) + 0.03 * noise(4) + 0.04 * noise(48)
        img = base[None, None, :] * shade[:, :, None]
    else:
        base = np.array(_pick(rng, [(200, 200, 200), (120, 130, 140), (170, 190, 200),
                                    (70, 80, 70), (210, 215, 225)]), np.float32)
        img = base[None, None, :] * (1.0 + 0.03 * noise(64))[:, :, None]
    return np.clip(img, 0, 255).astype(np.uint8)


TEXTURE_BANK = 16


@functools.lru_cache(maxsize=4 * TEXTURE_BANK)
def _banked_texture(kind: str, index: int) -> np.ndarray:
    seed = zlib.crc32(f"{kind}|{index}".encode())
    tex = table_texture(kind, np.random.default_rng(seed))
    tex.setflags(write=False)
    return tex


def table_texture_from_bank(kind: str, rng: np.random.Generator) -> np.ndarray:
    """One of ``TEXTURE_BANK`` generated textures of ``kind`` (made once per process),
    turned or mirrored and tinted at random: as varied as fresh ones, far cheaper."""
    tex = _banked_texture(kind, int(rng.integers(TEXTURE_BANK)))
    flip = int(rng.integers(8))
    if flip & 1:
        tex = tex[:, ::-1]
    if flip & 2:
        tex = tex[::-1]
    if flip & 4:
        tex = tex.transpose(1, 0, 2)
    tint = rng.uniform(0.88, 1.12, 3) * 128
    out: np.ndarray = cv2.multiply(np.ascontiguousarray(tex), np.full(tex.shape, tint.round(),
                                                                      np.uint8), scale=1 / 128)
    return out


def _pick(rng: np.random.Generator, seq: Any) -> Any:
    return seq[int(rng.integers(len(seq)))]


# --------------------------------------------------------------------------- pose

@dataclass
class Pose:
    """A pinhole camera over the table plane (z = 0, millimetres; z < 0 is up)."""

    P: np.ndarray  # 3×4 projection
    tilt: float
    yaw: float
    roll: float

    @property
    def H(self) -> np.ndarray:
        """The homography of the table plane z = 0."""
        return self.P[:, [0, 1, 3]]

    def project(self, pts: np.ndarray) -> np.ndarray:
        """Project N×3 (or N×2 on the table) millimetre points to N×2 pixels."""
        pts = np.asarray(pts, np.float64)
        if pts.shape[1] == 2:
            pts = np.hstack([pts, np.zeros((len(pts), 1))])
        hom = np.hstack([pts, np.ones((len(pts), 1))]) @ self.P.T
        return hom[:, :2] / hom[:, 2:3]


def make_pose(rng: np.random.Generator, fx: Effects, bounds: np.ndarray, width: int,
              height: int) -> Pose:
    """A camera tilted and turned at random, zoomed so ``bounds`` (N×2 mm, the pieces)
    spans a random share ``fx.fill`` of the frame, as a user framing the play area would."""
    tilt = rng.uniform(*fx.tilt)
    yaw = rng.uniform(0.0, 360.0)
    roll = rng.normal(0.0, 2.0)
    fill = rng.uniform(*fx.fill)
    shift = rng.uniform(-1, 1, size=2)
    return pose_for(bounds, width, height, tilt=tilt, yaw=yaw, roll=roll, fill=fill,
                    shift=shift)


def pose_for(bounds: np.ndarray, width: int, height: int, *, tilt: float, yaw: float,
             roll: float, fill: float, shift: np.ndarray) -> Pose:
    """The camera with these angles (degrees) whose image of ``bounds`` spans ``fill`` of
    the frame in its tighter direction, moved by ``shift`` (−1…1) within the free space."""
    t_, y_, r_ = math.radians(tilt), math.radians(yaw), math.radians(roll)
    cz, sz = math.cos(y_), math.sin(y_)
    Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    ct, st = math.cos(t_), math.sin(t_)
    Rx = np.array([[1, 0, 0], [0, ct, -st], [0, st, ct]])
    cr, sr = math.cos(r_), math.sin(r_)
    Rr = np.array([[cr, -sr, 0], [sr, cr, 0], [0, 0, 1]])
    R = Rr @ Rx @ Rz
    centre = bounds.mean(axis=0)
    span = float(np.ptp(bounds, axis=0).max()) + 1.0
    dist = span * 1.35
    # camera centre above the table centre, pulled back along the tilted optical axis
    t = -R @ np.array([centre[0], centre[1], 0.0]) + np.array([0.0, 0.0, dist])
    P = np.hstack([R, t[:, None]])
    pose = Pose(P, tilt, yaw, roll)
    # zoom and shift so the pieces fill the frame (a focal length and principal point)
    img = pose.project(bounds)
    lo, hi = img.min(axis=0), img.max(axis=0)
    ext = np.maximum(hi - lo, 1e-6)
    scale = fill * min(width / ext[0], height / ext[1])
    free = np.array([width, height]) - scale * ext
    mid = (lo + hi) / 2
    off = np.asarray(shift, np.float64) * np.maximum(free, 0.0) * 0.3
    S = np.array([[scale, 0, width / 2 - scale * mid[0] + off[0]],
                  [0, scale, height / 2 - scale * mid[1] + off[1]], [0, 0, 1]])
    return Pose(S @ P, tilt, yaw, roll)


# --------------------------------------------------------------------------- lens

@functools.lru_cache(maxsize=32)
def _distortion_maps(k1_milli: int, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    k1 = k1_milli / 1000.0
    cx, cy = (width - 1) / 2, (height - 1) / 2
    norm = math.hypot(cx, cy)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    dx, dy = (xx - cx) / norm, (yy - cy) / norm
    factor = 1.0 + k1 * (dx * dx + dy * dy)
    mx = (cx + dx * factor * norm).astype(np.float32)
    my = (cy + dy * factor * norm).astype(np.float32)
    m1, m2 = cv2.convertMaps(mx, my, cv2.CV_16SC2)
    return m1, m2


def distort(image: np.ndarray, k1: float) -> np.ndarray:
    """Radial lens distortion (barrel for k1 < 0, pincushion for k1 > 0)."""
    h, w = image.shape[:2]
    mx, my = _distortion_maps(round(k1 * 100) * 10, w, h)
    return cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def distort_points(pts: np.ndarray, k1: float, width: int, height: int) -> np.ndarray:
    """Where undistorted pixel positions land in the distorted image (inverts the remap's
    sampling function by fixed-point iteration)."""
    k1 = round(k1 * 100) / 100.0
    if k1 == 0:
        return pts
    cx, cy = (width - 1) / 2, (height - 1) / 2
    norm = math.hypot(cx, cy)
    src = (pts - np.array([cx, cy])) / norm
    x = src.copy()
    for _ in range(30):
        r2 = (x ** 2).sum(axis=1, keepdims=True)
        x = src / (1.0 + k1 * r2)
    return x * norm + np.array([cx, cy])


# --------------------------------------------------------------------------- light & sensor

def light_field(rng: np.random.Generator, fx: Effects, width: int, height: int
                ) -> tuple[np.ndarray, dict[str, Any]]:
    """A low-resolution multiplicative light field (colour cast, gradient, vignette),
    upsampled to the frame as uint8 (128 = ×1, for ``cv2.multiply(..., scale=1/128)``);
    returns it with its parameters."""
    warm = rng.uniform(-1, 1)
    colour = np.array([1.0 - 0.5 * fx.light_spread * warm, 1.0,
                       1.0 + 0.5 * fx.light_spread * warm])
    strength = 1.0 + rng.uniform(-1, 1) * fx.light_spread
    angle = rng.uniform(0, 2 * math.pi)
    grad = rng.uniform(0, fx.gradient)
    sw, sh = 64, 36
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    u, v = xx / sw - 0.5, yy / sh - 0.5
    g = 1.0 + grad * (u * math.cos(angle) + v * math.sin(angle))
    vignette = 1.0 - rng.uniform(0, 0.25 + fx.gradient) * (u * u + v * v)
    field = (g * vignette * strength)[:, :, None] * colour[None, None, :]
    small = np.clip(np.rint(field * 128), 0, 255).astype(np.uint8)  # 128 = unchanged
    big = cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    params = {"light_colour": [round(float(c), 3) for c in colour],
              "light_strength": round(float(strength), 3), "gradient": round(float(grad), 3)}
    return big, params


def glare(rng: np.random.Generator, count: int, width: int, height: int) -> np.ndarray | None:
    """Additive soft bright spots (a lamp on glossy cards) as uint8, or None."""
    if count <= 0:
        return None
    sw, sh = 128, 72
    acc = np.zeros((sh, sw), np.float32)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    for _ in range(count):
        x, y = rng.uniform(0, sw), rng.uniform(0, sh)
        r = rng.uniform(3, 12)
        acc += rng.uniform(40, 140) * np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * r * r))
    small = np.clip(np.rint(acc), 0, 255).astype(np.uint8)
    return cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)


NOISE_LEVELS: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.5, 8.0, 10.0)


@functools.lru_cache(maxsize=2)
def _unit_noise(height: int, width: int) -> np.ndarray:
    """Standard normal noise a little larger than the frame (fixed seed), made once."""
    out = np.random.default_rng(7).standard_normal((height + 32, width + 32, 3),
                                                   dtype=np.float32)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=12)
def _noise_bank(height: int, width: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian sensor noise of σ = ``level`` as saturating uint8 (plus, minus) parts, made
    once per frame size and level by scaling one unit bank; scenes crop it at random
    offsets."""
    bank = np.rint(_unit_noise(height, width) * np.float32(level))
    return (np.clip(bank, 0, 255).astype(np.uint8), np.clip(-bank, 0, 255).astype(np.uint8))


def add_noise(image: np.ndarray, rng: np.random.Generator, sigma: float) -> tuple[np.ndarray,
                                                                                  float]:
    """Add sensor noise (σ rounded to a level of ``NOISE_LEVELS``); returns image and σ."""
    level = min(NOISE_LEVELS, key=lambda v: abs(v - sigma))
    h, w = image.shape[:2]
    plus, minus = _noise_bank(h, w, level)
    oy, ox = int(rng.integers(32)), int(rng.integers(32))
    out = cv2.add(image, plus[oy:oy + h, ox:ox + w])
    return cv2.subtract(out, minus[oy:oy + h, ox:ox + w]), level


def motion_kernel(length: int, angle: float) -> np.ndarray:
    k = np.zeros((length, length), np.float32)
    c = (length - 1) / 2
    dx, dy = math.cos(angle) * c, math.sin(angle) * c
    cv2.line(k, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1,
             cv2.LINE_AA)
    return k / max(float(k.sum()), 1e-6)
