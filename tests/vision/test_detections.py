"""The Detections type keeps its rows aligned; the geometry helpers mean what they say."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.vision.detections import (
    Detections,
    distances,
    order_clockwise,
    quad_iou,
    reach_circles,
    rectify,
    rotate_quad,
    side_lengths,
    within_reach,
)
from companion.vision.strays import face_colours

SQUARE = [[0, 0], [10, 0], [10, 10], [0, 10]]


def test_select_and_concat_keep_rows_aligned() -> None:
    d = Detections(np.array([SQUARE, SQUARE], np.float32) + [[0, 0]], ("tile", "card"),
                   labels=("r7", "5"), confidences=np.array([0.9, 0.4], np.float32),
                   data={"alternatives": ((), ("6",))})
    low = d.select(d.confidences < 0.5)
    assert low.kinds == ("card",) and low.labels == ("5",) and low.data["alternatives"] == (("6",),)
    both = Detections.concat([low, d])
    assert len(both) == 3 and both.labels == ("5", "r7", "5")


def test_misaligned_rows_are_refused() -> None:
    with pytest.raises(ValueError, match="labels"):
        Detections(np.array([SQUARE], np.float32), ("tile",), labels=("r1", "r2"))


def test_order_clockwise_starts_top_left() -> None:
    shuffled = [[10, 10], [0, 0], [0, 10], [10, 0]]
    assert order_clockwise(shuffled).tolist() == SQUARE


def test_iou_and_rotation() -> None:
    assert quad_iou(SQUARE, SQUARE) == pytest.approx(1.0)
    half = [[5, 0], [15, 0], [15, 10], [5, 10]]
    assert quad_iou(SQUARE, half) == pytest.approx(1 / 3, abs=1e-3)
    assert rotate_quad(SQUARE, 1).tolist()[0] == [10, 0]


def test_rectify_puts_first_corner_top_left() -> None:
    image = np.zeros((40, 40, 3), np.uint8)
    image[0:20, 20:40] = 255  # white top-right quarter
    quad = [[20, 0], [40, 0], [40, 20], [20, 20]]
    crop = rectify(image, quad, size=(10, 10))
    assert crop.mean() > 250
    turned = rectify(image, rotate_quad([[0, 0], [40, 0], [40, 40], [0, 40]], 1), size=(20, 20))
    # reading the image a quarter turn clockwise puts its top-right quarter at the top-left
    assert turned[:10, :10].mean() > 250 and turned[10:, 10:].mean() < 5


def test_within_reach_keeps_every_quad_that_can_overlap() -> None:
    rng = np.random.default_rng(3)
    quads = [np.array(SQUARE, np.float32) * rng.uniform(0.5, 3) + rng.uniform(0, 60, 2)
             for _ in range(40)]
    centres, radii = reach_circles(quads)
    for q, reach in zip(quads[:10], within_reach(quads[:10], centres, radii), strict=True):
        near = set(reach.tolist())
        overlapping = {k for k, o in enumerate(quads) if quad_iou(q, o) > 0}
        assert overlapping <= near and len(near) < len(quads)


def test_face_colours_are_the_median_of_each_crops_lighter_half() -> None:
    rng = np.random.default_rng(4)
    image = rng.integers(0, 256, (80, 120, 3), dtype=np.uint8)
    quads = [np.array(SQUARE, np.float32) * 2 + rng.uniform(0, 90, 2) for _ in range(12)]
    together = face_colours(image, quads)
    assert together.shape == (12, 3)
    for q, face in zip(quads, together, strict=True):
        crop = rectify(image, q, size=(16, 22))
        lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float64)
        expected = np.median(lab[lab[:, 0] >= np.median(lab[:, 0])], axis=0)
        assert np.array_equal(face, expected)


def test_rotate_quad_and_side_lengths_match_rolling_the_corners() -> None:
    """Corners taken by index give what ``np.roll`` gives, for any number of turns."""
    rng = np.random.default_rng(8)
    for turns in range(-6, 7):
        quad = rng.uniform(0, 500, (4, 2))
        rolled = np.roll(quad.astype(np.float32), -turns, axis=0)
        assert rotate_quad(quad, turns).dtype == np.float32
        assert np.array_equal(rotate_quad(quad, turns), rolled)
        assert np.array_equal(side_lengths(quad),
                              np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1))


def test_distances_measure_every_point_against_every_other() -> None:
    """One row per point, one column per other point, in pixels; a single point too."""
    points = np.array([[0.0, 0.0], [3.0, 4.0]])
    others = np.array([[0.0, 0.0], [6.0, 8.0], [3.0, 0.0]])
    assert np.allclose(distances(points, others), [[0, 10, 3], [5, 5, 4]])
    assert distances(points, np.float32([3, 4])).shape == (2, 1)
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0, 900, (7, 2)), rng.uniform(0, 900, (5, 2))
    assert np.allclose(distances(a, b),
                       [[np.linalg.norm(p - q) for q in b] for p in a])
