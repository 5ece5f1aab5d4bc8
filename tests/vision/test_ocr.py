"""Tesseract (the real binary) reads clear printed numbers on a plain piece, in any ink
colour, and says "nothing" for a blank piece."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.vision.ocr import binarise, read_number

CREAM = (200, 232, 240)  # BGR
INKS = {"red": (40, 40, 200), "black": (30, 30, 30), "blue": (190, 90, 20),
        "orange": (30, 140, 245)}


def printed(number: int, ink: tuple[int, int, int], *, width: int = 72,
            height: int = 96) -> np.ndarray:
    """A cream tile with ``number`` printed bold and centred in ``ink``."""
    tile = np.full((height, width, 3), CREAM, np.uint8)
    text = str(number)
    scale = 1.4 if len(text) == 1 else 1.1
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 4)
    org = ((width - tw) // 2, (height + th) // 2 - 8)
    cv2.putText(tile, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, ink, 4, cv2.LINE_AA)
    return tile


@pytest.mark.parametrize("colour", sorted(INKS))
def test_clear_numbers_are_read_in_every_ink(colour: str) -> None:
    numbers = range(1, 18)
    read = {n: read_number(printed(n, INKS[colour]))[0] for n in numbers}
    right = [n for n in numbers if read[n] == n]
    assert len(right) >= 15, f"{colour}: read {read}"


def test_confidence_is_a_probability_and_high_when_right() -> None:
    number, confidence = read_number(printed(8, INKS["black"]))
    assert number == 8
    assert 0.5 <= confidence <= 1.0


def test_blank_piece_reads_nothing() -> None:
    blank = np.full((96, 72, 3), CREAM, np.uint8)
    assert read_number(blank) == (None, 0.0)


def test_out_of_range_numbers_are_refused() -> None:
    # 42 is printed clearly, but no piece carries it: not a reading.
    number, _ = read_number(printed(42, INKS["black"]), max_value=17)
    assert number is None


def test_binarise_turns_coloured_ink_black_on_white() -> None:
    binary = binarise(printed(7, INKS["orange"]))
    ink = binary == 0
    assert binary.dtype == np.uint8 and set(np.unique(binary)) <= {0, 255}
    assert 0.03 < ink.mean() < 0.4  # the glyph, not the whole tile or nothing
    assert not ink[:, :3].any() and not ink[:3].any()  # borders stay white


def test_one_batch_reads_each_crop_as_its_own() -> None:
    # One Tesseract process for many crops: each number goes back to its own crop,
    # a blank crop stays unread, and an out-of-range number is refused per crop.
    from companion.vision.ocr import read_numbers

    numbers = [3, 12, 8, 17, 5]
    crops = [printed(n, INKS[ink]) for n, ink in zip(numbers, ["red", "blue", "black",
                                                             "orange", "black"], strict=True)]
    crops.insert(2, np.full((96, 72, 3), CREAM, np.uint8))
    max_values = [17] * len(crops)
    max_values[-1] = 4  # the 5 cannot be read on a piece whose numbers stop at 4
    read = read_numbers(crops, max_values=max_values, regions=[None] * len(crops))
    assert [n for n, _ in read] == [3, 12, None, 8, 17, None]
    assert all(0.5 <= c <= 1.0 for n, c in read if n is not None)
    assert read[2] == (None, 0.0)


def test_batch_of_nothing_to_read_starts_no_tesseract() -> None:
    from companion.vision.ocr import read_numbers

    blank = np.full((96, 72, 3), CREAM, np.uint8)
    assert read_numbers([blank, blank], max_values=[17, 17], regions=[None, None]) == [
        (None, 0.0), (None, 0.0)]
    assert read_numbers([], max_values=[], regions=[]) == []


def test_a_crashing_tesseract_leaves_the_piece_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tesseract dies on some odd images (seen: exit -8); the read must go on."""
    import pytesseract

    from companion.vision import ocr

    def crash(*_: object, **__: object) -> None:
        raise pytesseract.TesseractError(-8, "")

    monkeypatch.setattr(pytesseract, "image_to_data", crash)
    crop = np.full((80, 60, 3), 235, np.uint8)
    cv2.putText(crop, "7", (15, 60), cv2.FONT_HERSHEY_SIMPLEX, 2, (0, 0, 200), 5)
    assert ocr.read_numbers([crop], max_values=[17], regions=[None]) == [(None, 0.0)]
    assert ocr.read_number(crop) == (None, 0.0)
