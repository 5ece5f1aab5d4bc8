"""load_image: sound images decode upright; every bad input is one ImageError."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from companion.games.base import InputError
from companion.vision.images import ImageError, load_image


def _jpeg(image: np.ndarray, orientation: int | None = None) -> bytes:
    rgb = Image.fromarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
    buf = io.BytesIO()
    if orientation is None:
        rgb.save(buf, "JPEG", quality=95)
    else:
        exif = Image.Exif()
        exif[0x0112] = orientation
        rgb.save(buf, "JPEG", quality=95, exif=exif.tobytes())
    return buf.getvalue()


def _marked() -> np.ndarray:
    """60 wide, 40 high, a red block in the top-left corner."""
    image = np.full((40, 60, 3), 255, np.uint8)
    image[:10, :15] = (0, 0, 255)
    return image


def test_png_and_jpeg_round_trip(tmp_path: Path) -> None:
    image = _marked()
    ok, png = cv2.imencode(".png", image)
    assert ok
    assert np.array_equal(load_image(png.tobytes()), image)
    path = tmp_path / "a.jpg"
    path.write_bytes(_jpeg(image))
    out = load_image(path)
    assert out.shape == (40, 60, 3) and out.dtype == np.uint8
    assert out[2, 2, 2] > 200 and out[2, 2, 0] < 60  # still red at the top-left


@pytest.mark.parametrize(("orientation", "shape", "red_corner"), [
    (1, (40, 60), (0, 0)), (3, (40, 60), (39, 59)),
    (6, (60, 40), (0, 39)), (8, (60, 40), (59, 0)),
])
def test_exif_orientation_is_applied(orientation: int, shape: tuple[int, int],
                                     red_corner: tuple[int, int]) -> None:
    out = load_image(_jpeg(_marked(), orientation))
    assert out.shape[:2] == shape
    y, x = red_corner
    assert out[y, x, 2] > 200 and out[y, x, 0] < 60


def test_empty_and_missing(tmp_path: Path) -> None:
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(ImageError, match="0 bytes"):
        load_image(empty)
    with pytest.raises(ImageError, match="no such file"):
        load_image(tmp_path / "nope.jpg")
    with pytest.raises(ImageError, match="folder"):
        load_image(tmp_path)


def test_not_an_image() -> None:
    with pytest.raises(ImageError, match="not an image"):
        load_image(b'{"game": "nummix"}')
    assert issubclass(ImageError, InputError)


def test_truncated_jpeg_and_png() -> None:
    data = _jpeg(np.random.default_rng(1).integers(0, 255, (200, 300, 3), dtype=np.uint8))
    with pytest.raises(ImageError, match="truncated"):
        load_image(data[: len(data) // 2])
    ok, png = cv2.imencode(".png", _marked())
    with pytest.raises(ImageError, match="truncated|damaged"):
        load_image(png.tobytes()[:-30])


def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims width×height, with one tiny compressed chunk."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))


def test_huge_header_is_refused_before_decoding() -> None:
    with pytest.raises(ImageError, match="too large"):
        load_image(_png_header(50_000, 50_000))
    with pytest.raises(ImageError, match="too large"):
        load_image(_png_header(3000, 2000), max_pixels=1_000_000)
