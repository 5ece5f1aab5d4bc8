"""Safe image loading: every bad input becomes one clear ``ImageError``, never a traceback.

The header's size is checked before any pixel is decoded (a 50000×50000 header would
otherwise allocate gigabytes), and a phone JPEG's EXIF orientation is applied so that
quads refer to the image as a person sees it.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image, UnidentifiedImageError

from companion.games.base import InputError

MAX_PIXELS = 50_000_000
"""Largest image accepted (about 8000×6000); a 4032×3024 phone photo is 12 MP."""


class ImageError(InputError):
    """An input that is not a usable image (missing, empty, truncated, too large)."""

    def __init__(self, message: str, field: str = "image") -> None:
        super().__init__(field, message)


def load_image(source: str | Path | bytes, *, max_pixels: int = MAX_PIXELS
               ) -> npt.NDArray[np.uint8]:
    """Decode ``source`` (a path or the file's bytes) to a BGR uint8 array, upright as
    its EXIF orientation says; ImageError for anything that is not a sound image."""
    if isinstance(source, bytes | bytearray):
        data = bytes(source)
        name = "image"
    else:
        path = Path(source)
        name = str(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ImageError(f"no such file: {name}") from None
        except IsADirectoryError:
            raise ImageError(f"is a folder, not an image: {name}") from None
        except OSError as exc:
            raise ImageError(f"cannot read {name}: {exc.strerror or exc}") from None
    if not data:
        raise ImageError(f"empty file (0 bytes): {name}")
    width, height, orientation = _header(data, name, max_pixels)
    if _truncated(data):
        raise ImageError(f"truncated image (the file ends early): {name}")
    array = np.frombuffer(data, np.uint8)
    image = cv2.imdecode(array, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    if image is None or image.shape[0] != height or image.shape[1] != width:
        image = _decode_with_pil(data, name)
    if orientation not in (None, 1):
        image = _apply_orientation(image, orientation)
    out: npt.NDArray[np.uint8] = np.ascontiguousarray(image, np.uint8)
    return out


def _header(data: bytes, name: str, max_pixels: int) -> tuple[int, int, int | None]:
    """Width, height and EXIF orientation from the header alone (nothing decoded yet)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as img:
                width, height = img.size
                try:
                    orientation = img.getexif().get(0x0112)
                except Exception:  # a broken EXIF block must not reject the photo
                    orientation = None
    except Image.DecompressionBombError:
        raise ImageError(f"image too large (over {max_pixels:,} pixels): {name}") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        raise ImageError(f"not an image (unknown or damaged format): {name}") from None
    if width <= 0 or height <= 0:
        raise ImageError(f"image has no pixels ({width}×{height}): {name}")
    if width * height > max_pixels:
        raise ImageError(f"image too large ({width}×{height} pixels, limit "
                         f"{max_pixels:,}): {name}")
    return width, height, orientation if isinstance(orientation, int) else None


def _truncated(data: bytes) -> bool:
    """A JPEG without its end marker or a PNG without its IEND chunk was cut short;
    OpenCV would silently fill the missing rows with grey."""
    if data[:3] == b"\xff\xd8\xff":
        return b"\xff\xd9" not in data[-64:]
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return b"IEND" not in data[-16:]
    return False


def _decode_with_pil(data: bytes, name: str) -> npt.NDArray[np.uint8]:
    """Decode formats OpenCV refuses; a truncated file is an error, not a grey half."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            rgb = np.asarray(img.convert("RGB"), np.uint8)
    except (OSError, ValueError, SyntaxError):
        raise ImageError(f"truncated or damaged image: {name}") from None
    out: npt.NDArray[np.uint8] = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
    return out


def _apply_orientation(image: npt.NDArray[np.uint8], orientation: int) -> npt.NDArray[np.uint8]:
    """Turn the decoded pixels upright per the EXIF orientation tag (values 2–8)."""
    turns = {3: cv2.ROTATE_180, 6: cv2.ROTATE_90_CLOCKWISE, 8: cv2.ROTATE_90_COUNTERCLOCKWISE}
    if orientation in turns:
        return np.ascontiguousarray(cv2.rotate(image, turns[orientation]))
    if orientation in (2, 4):  # mirrored left-right, top-bottom
        return np.ascontiguousarray(cv2.flip(image, 1 if orientation == 2 else 0))
    if orientation == 5:  # transpose
        return np.ascontiguousarray(image.transpose(1, 0, 2))
    if orientation == 7:  # transverse
        return np.ascontiguousarray(cv2.rotate(image, cv2.ROTATE_180).transpose(1, 0, 2))
    return image

