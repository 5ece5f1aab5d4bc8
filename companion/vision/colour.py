"""White balance from the pieces' own whites: gray-world over the bright, low-chroma
pixels (cream tiles, white card faces), so colours are judged under neutral light."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

MAX_GAIN = 1.6
"""A channel is never boosted or cut by more than this (a red table is not "white")."""


def white_balance(image: npt.NDArray[np.uint8]
                  ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """The image with per-channel gains (B, G, R) that make its bright near-neutral
    pixels grey on average; returns (balanced image, gains)."""
    gains = white_gains(image)
    return apply_gains(image, gains), gains


def white_gains(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """The per-channel gains (B, G, R) ``white_balance`` applies, without applying them."""
    small = image if image.shape[0] * image.shape[1] <= 400_000 else cv2.resize(
        image, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    flat = small.reshape(-1, 3)  # channel by channel: 9x faster than max(axis=1), same values
    value = np.maximum(np.maximum(flat[:, 0], flat[:, 1]), flat[:, 2]).astype(np.float32)
    chroma = value - np.minimum(np.minimum(flat[:, 0], flat[:, 1]), flat[:, 2]).astype(np.float32)
    candidate = (chroma < 0.35 * value + 1) & (value < 250)  # near neutral, not clipped
    if candidate.sum() < 50:
        candidate = value < 250
    if candidate.sum() < 50:
        return np.ones(3, np.float32)
    bright = value[candidate] >= np.percentile(value[candidate], 80)
    # the chosen pixels' rows by index (a boolean mask over (N, 3) rows, twice, took
    # 3.4 ms on a 640×360 frame; these are the same rows in the same order, 0.3 ms)
    chosen = np.take(flat, np.flatnonzero(candidate)[bright], axis=0).astype(np.float32)
    mean = chosen.mean(axis=0) + 1e-3
    gains: npt.NDArray[np.float32] = (mean.mean() / mean).clip(
        1 / MAX_GAIN, MAX_GAIN).astype(np.float32)
    return gains


def apply_gains(image: npt.NDArray[np.uint8], gains: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """``image`` times per-channel ``gains``, clipped to 0–255 and truncated, through a
    256-entry table per channel (the same pixels as the float product, without a
    full-frame float image)."""
    levels = np.arange(256, dtype=np.float32)[:, None] * np.asarray(gains, np.float32)[None, :]
    table = np.clip(levels, 0, 255).astype(np.uint8).reshape(256, 1, 3)
    out: npt.NDArray[np.uint8] = np.asarray(cv2.LUT(np.ascontiguousarray(image), table), np.uint8)
    return out


def skin_hued(a: npt.ArrayLike, b: npt.ArrayLike, chroma: npt.ArrayLike,
              hues: tuple[float, float], min_chroma: float) -> npt.NDArray[np.bool_]:
    """Whether each colour (CIELAB a*, b* about grey, and its chroma) has a skin's hue: an
    a*b* angle within ``hues`` degrees at ``min_chroma`` or more. Skin of every tone lies
    in one band of hue; the hand finder (``vision.cover``) and the score sheet's covered
    boxes (``vision.sheet``) ask this one test, each with its own band."""
    hue = np.degrees(np.arctan2(b, a))
    out: npt.NDArray[np.bool_] = ((hue >= hues[0]) & (hue <= hues[1])
                                  & (np.asarray(chroma) >= min_chroma))
    return out
