"""Motion blur measured from a photo's cepstrum and sharpened away (vision/deblur.py), on
a synthetic print blurred along a known streak."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from companion.synth.camera import motion_kernel
from companion.vision.deblur import (
    STREAK_DEPTH_FROM,
    motion_streak,
    without_motion_blur,
)


def _print(seed: int = 3) -> np.ndarray:
    """A 400×300 BGR 'table of cards': small dark symbols of many sizes scattered on
    light paper."""
    rng = np.random.default_rng(seed)
    image = np.full((300, 400, 3), 225, np.uint8)
    for _ in range(260):
        x, y = (int(v) for v in rng.integers((6, 6), (394, 294)))
        colour = tuple(int(c) for c in rng.integers(0, 140, 3))
        left, top, right, bottom = (int(v) for v in rng.integers(2, 7, 4))
        if rng.random() < 0.5:
            cv2.circle(image, (x, y), left, colour, -1)
        else:
            cv2.rectangle(image, (x - left, y - top), (x + right, y + bottom), colour, -1)
    return image


def _angle_apart(a: float, b: float) -> float:
    """Degrees between two streak directions (a streak and its reverse are one)."""
    apart = math.degrees(a - b) % 180
    return min(apart, 180 - apart)


def _sharpness(image: np.ndarray) -> float:
    """The variance of the Laplacian: how much fine detail a photo shows."""
    return float(cv2.Laplacian(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.CV_64F).var())


@pytest.mark.parametrize(("length", "degrees"), [
    *((length, degrees) for length in (3, 4, 5, 6, 7, 8) for degrees in (0, 90)),
    *((6, degrees) for degrees in range(15, 180, 15) if degrees != 90)])
def test_a_streak_of_known_length_and_direction_is_measured(length: int, degrees: float
                                                             ) -> None:
    """Blurred as the renderer blurs (its own streak kernel): the streak is measured
    within a pixel and 15° (a streak of 7-8 px slanting can be read at half its
    length, one of 3-5 px at 45° a pixel long; see ``motion_streak``)."""
    sharp = _print()
    blurred = cv2.filter2D(sharp, -1, motion_kernel(length, math.radians(degrees)))
    found = motion_streak(blurred)
    assert abs(found.length - length) <= 1.0, found
    assert _angle_apart(found.angle, math.radians(degrees)) <= 15, found
    assert found.depth >= STREAK_DEPTH_FROM, found


def test_a_streak_measures_deeper_than_a_photo_without_one() -> None:
    for seed in range(3, 8):
        sharp = _print(seed)
        blurred = cv2.filter2D(sharp, -1, motion_kernel(6, math.radians(30)))
        assert motion_streak(blurred).depth >= motion_streak(sharp).depth + 1


def test_a_photo_blurred_by_motion_is_sharpened_towards_the_original() -> None:
    sharp = _print()
    blurred = cv2.filter2D(sharp, -1, motion_kernel(6, math.radians(30)))
    restored = without_motion_blur(blurred, motion_streak(blurred))
    assert restored.shape == blurred.shape and restored.dtype == np.uint8

    def likeness(image: np.ndarray) -> float:
        return float(np.corrcoef(image.ravel().astype(float), sharp.ravel().astype(float))[0, 1])

    assert _sharpness(restored) >= 2 * _sharpness(blurred)
    assert likeness(restored) >= likeness(blurred) + 0.01, (likeness(restored), likeness(blurred))


def test_the_streaks_are_the_deepest_distinct_dips_deepest_first() -> None:
    """``motion_streaks``: the first is ``motion_streak``'s, the rest lie apart from it
    (not at it, nor at its mirror image through the origin) and no deeper."""
    from companion.vision.deblur import motion_streaks

    rng = np.random.default_rng(3)
    print_ = (rng.random((240, 320, 3)) * 255).astype(np.uint8)
    blurred = cv2.filter2D(print_, -1, motion_kernel(8, math.radians(160)))
    streaks = motion_streaks(blurred, 3)
    first = motion_streak(blurred)
    assert (streaks[0].length, streaks[0].angle) == (first.length, first.angle)
    assert len(streaks) == 3
    assert streaks[0].depth >= streaks[1].depth >= streaks[2].depth
    for a in streaks:
        for b in streaks:
            if a is b:
                continue
            ax, ay = a.length * math.cos(a.angle), a.length * math.sin(a.angle)
            bx, by = b.length * math.cos(b.angle), b.length * math.sin(b.angle)
            assert math.hypot(ax - bx, ay - by) > 1.5 and math.hypot(ax + bx, ay + by) > 1.5
