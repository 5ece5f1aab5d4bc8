"""The Detections type keeps its rows aligned; the geometry helpers mean what they say."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.detections import (
    Detections,
    order_clockwise,
    quad_iou,
    rectify,
    rotate_quad,
)

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
