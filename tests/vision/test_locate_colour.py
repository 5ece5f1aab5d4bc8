"""White balance from the pieces' own whites: a colour cast on white pieces is removed,
and a strongly coloured table is not turned grey."""

from __future__ import annotations

import numpy as np

from companion.vision.colour import MAX_GAIN, white_balance


def _scene(cast: tuple[float, float, float]) -> np.ndarray:
    """A brown table with three white tiles, all seen under a light of colour ``cast``."""
    image = np.zeros((120, 200, 3), np.float32)
    image[:] = (40, 70, 120)  # BGR brown wood
    for x in (20, 80, 140):
        image[30:90, x:x + 40] = (235, 235, 235)
        image[50:70, x + 15:x + 25] = (30, 30, 30)  # a black number
    return np.clip(image * np.array(cast, np.float32), 0, 255).astype(np.uint8)


def test_a_warm_cast_on_white_tiles_is_removed() -> None:
    image = _scene((0.8, 0.95, 1.1))  # warm light: less blue, more red
    balanced, gains = white_balance(image)
    tile = balanced[40:48, 25:35].reshape(-1, 3).astype(float).mean(axis=0)
    assert tile.max() - tile.min() < 8  # the white tile reads neutral again
    assert gains[0] > 1.0 > gains[2]  # blue boosted, red cut
    raw_tile = image[40:48, 25:35].reshape(-1, 3).astype(float).mean(axis=0)
    assert raw_tile.max() - raw_tile.min() > 40  # it was not neutral before


def test_neutral_light_changes_little_and_gains_are_bounded() -> None:
    balanced, gains = white_balance(_scene((1.0, 1.0, 1.0)))
    assert np.allclose(gains, 1.0, atol=0.03)
    red = np.zeros((50, 50, 3), np.uint8)
    red[:] = (20, 20, 220)  # a red cloth and nothing white
    _, gains = white_balance(red)
    assert np.all(gains <= MAX_GAIN + 1e-6) and np.all(gains >= 1 / MAX_GAIN - 1e-6)
    assert balanced.dtype == np.uint8


def test_gains_by_table_lookup_give_the_float_product_exactly() -> None:
    # apply_gains (one lookup per channel) must give the very pixels the float product
    # clipped and truncated gives, so the models see what they were trained on.
    from companion.vision.colour import apply_gains, white_gains

    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, (60, 80, 3), dtype=np.uint8)
    for gains in ([1.2, 0.9, 1.55], [0.7, 1.0, 1.6], [1.0, 1.0, 1.0]):
        g = np.array(gains, np.float32)
        expected = np.clip(image.astype(np.float32) * g, 0, 255).astype(np.uint8)
        assert np.array_equal(apply_gains(image, g), expected)
    scene = _scene((0.8, 0.95, 1.1))
    balanced, gains = white_balance(scene)
    assert np.array_equal(white_gains(scene), gains)
    assert np.array_equal(balanced, np.clip(scene.astype(np.float32) * gains, 0, 255
                                            ).astype(np.uint8))


def test_gains_equal_the_plain_formula_on_a_busy_image() -> None:
    # white_gains works channel by channel for speed; it must agree with the plain
    # reading of its rule: the brightest 20 % of near-neutral pixels made grey.
    from companion.vision.colour import white_gains

    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (90, 120, 3), dtype=np.uint8)
    image[20:60, 30:90] = (200, 215, 235)  # a warm white card
    pixels = image.reshape(-1, 3).astype(np.float32)
    value, low = pixels.max(axis=1), pixels.min(axis=1)
    candidate = (value - low < 0.35 * value + 1) & (value < 250)
    bright = value[candidate] >= np.percentile(value[candidate], 80)
    mean = pixels[candidate][bright].mean(axis=0) + 1e-3
    expected = (mean.mean() / mean).clip(1 / MAX_GAIN, MAX_GAIN).astype(np.float32)
    assert np.array_equal(white_gains(image), expected)
    assert white_gains(image)[0] > 1.0 > white_gains(image)[2]  # the warm cast is seen
