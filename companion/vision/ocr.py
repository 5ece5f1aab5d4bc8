"""Tesseract as a second opinion on printed numbers (pytesseract over the real binary).

Used by ``classify`` when its CNN is unsure, or alone when the classifier is switched
off. The crop is binarised as "the number's colour versus the piece's background" so
the number's own colour (red, blue, orange, black...) does not matter to Tesseract.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]

# Page segmentation modes tried in order: one text line, raw line, one word, one char.
PSMS: tuple[int, ...] = (7, 13, 8, 10)
TEXT_HEIGHT_PX = 48  # glyph height Tesseract reads these bold digits best at (measured)
THIN_PX = 5  # bold strokes are thinned by this much: Tesseract is trained on book type
BATCH_PSM = 7
"""The batch is one text line of numbers; psm 7 read the same numbers as the per-crop
modes on 98 of 103 unsure rendered crops (measured), in one process instead of up to four
per crop."""
BATCH_GAP = 2 * TEXT_HEIGHT_PX
"""White pixels between two crops in a batch: wide enough that Tesseract never joins
two crops' digits into one word (at 60 px it did)."""
WHITELIST = "-c tessedit_char_whitelist=0123456789"
OMP_THREADS = "1"
"""Tesseract runs with this many OpenMP threads (unless the user set OMP_THREAD_LIMIT):
on the 2-core machine, under load, one thread started and read a batch in ~95 ms
against ~130-160 ms with its default thread pool (measured, same readings)."""


class OcrUnavailable(RuntimeError):
    """The Tesseract binary is not installed (``apt-get install tesseract-ocr``)."""


@lru_cache(maxsize=1)
def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


def binarise(crop: Image, *, region: tuple[float, float, float, float] | None = None) -> Image:
    """Black ink on white: pixels far (in Lab) from the piece's background colour.

    The background is the median colour of the crop's border; Otsu splits the distance
    map; blobs touching the border (edges, shadows) and specks are removed. ``region``
    (x0, y0, x1, y1 as fractions) limits the search to where the number is printed.
    """
    if crop.ndim == 2:
        crop = cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR)
    if region is not None:
        h, w = crop.shape[:2]
        x0, y0, x1, y1 = region
        crop = crop[int(y0 * h):max(int(y1 * h), int(y0 * h) + 1),
                    int(x0 * w):max(int(x1 * w), int(x0 * w) + 1)]
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32)
    h, w = lab.shape[:2]
    b = max(1, min(h, w) // 12)
    border = np.concatenate([lab[:b].reshape(-1, 3), lab[-b:].reshape(-1, 3),
                             lab[:, :b].reshape(-1, 3), lab[:, -b:].reshape(-1, 3)])
    background = np.median(border, axis=0)
    distance = np.linalg.norm((lab - background) * [1.0, 1.6, 1.6], axis=2)
    distance = cv2.GaussianBlur(distance, (3, 3), 0)
    scaled = np.clip(distance * (255.0 / max(float(distance.max()), 1e-6)), 0, 255)
    _, ink = cv2.threshold(scaled.astype(np.uint8), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if float(distance.max()) < 12.0:  # nothing stands out from the background: blank
        ink[:] = 0
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    keep = np.zeros(count, bool)
    min_area = max(4, h * w // 800)
    for i in range(1, count):
        x, y, bw, bh, area = stats[i]
        touches = x <= 0 or y <= 0 or x + bw >= w or y + bh >= h
        keep[i] = area >= min_area and not touches and bh >= h * 0.12
    mask = keep[labels]
    out = np.full((h, w), 255, np.uint8)
    out[mask] = 0
    return out


def _prepare(binary: Image) -> Image | None:
    """Crop to the ink, scale to Tesseract's favourite glyph height, add a white margin."""
    ys, xs = np.nonzero(binary == 0)
    if len(xs) == 0:
        return None
    tight = binary[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    scale = TEXT_HEIGHT_PX / tight.shape[0]
    resized = cv2.resize(tight, (max(1, round(tight.shape[1] * scale)), TEXT_HEIGHT_PX),
                         interpolation=cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA)
    _, resized = cv2.threshold(resized, 127, 255, cv2.THRESH_BINARY)
    resized = cv2.dilate(resized, np.ones((THIN_PX, THIN_PX), np.uint8))  # thin the ink
    resized = cv2.GaussianBlur(resized, (3, 3), 0)
    pad = TEXT_HEIGHT_PX // 2
    return cv2.copyMakeBorder(resized, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)


def read_number(crop: Image, *, max_value: int = 17,
                region: tuple[float, float, float, float] | None = None
                ) -> tuple[int | None, float]:
    """The printed number in ``crop`` (an upright BGR crop) and Tesseract's confidence
    in 0–1; ``(None, 0.0)`` if no number in 1..max_value is read."""
    if not tesseract_available():
        raise OcrUnavailable("the tesseract binary is not installed (apt-get install "
                             "tesseract-ocr tesseract-ocr-eng)")

    prepared = _prepare(binarise(crop, region=region))
    if prepared is None:
        return None, 0.0
    best: tuple[int | None, float] = (None, 0.0)
    for psm in PSMS:
        config = f"--psm {psm} --oem 1 {WHITELIST}"
        data = _tesseract_words(prepared, config)
        words = [(t.strip(), float(c)) for t, c in zip(data["text"], data["conf"], strict=True)
                 if t.strip() and float(c) >= 0]
        number = _number(words, max_value)
        if number[0] is not None:
            if number[1] > best[1]:
                best = number
            if number[1] >= 0.85:
                break
    return best


TESSERACT_TIMEOUT_S = 10.0
"""A second opinion that takes longer than this is given up."""
_NO_WORDS: dict[str, list[Any]] = {"text": [], "conf": [], "left": [], "width": []}


def _tesseract_words(image: Image, config: str) -> dict[str, list[Any]]:
    """Tesseract's words on ``image`` (pytesseract's data dict). A Tesseract that crashes
    or hangs on an odd image gives no words: the pieces stay unsure, the read goes on."""
    import pytesseract  # imported late: only needed when OCR runs

    try:
        with _few_threads():
            data: dict[str, list[Any]] = pytesseract.image_to_data(
                image, config=config, output_type=pytesseract.Output.DICT,
                timeout=TESSERACT_TIMEOUT_S)
    except (pytesseract.TesseractError, RuntimeError):
        return _NO_WORDS
    return data


def _number(words: Sequence[tuple[str, float]], max_value: int) -> tuple[int | None, float]:
    """The words Tesseract read on one crop (text, confidence 0–100, left to right) as a
    number in 1..max_value with the least sure word's confidence, else (None, 0.0)."""
    if not words:
        return None, 0.0
    text = "".join(t for t, _ in words)
    conf = min(c for _, c in words) / 100.0
    if text.isdigit() and 1 <= int(text) <= max_value and not text.startswith("0"):
        return int(text), conf
    return None, 0.0


def read_numbers(crops: Sequence[Image], *, max_values: Sequence[int],
                 regions: Sequence[tuple[float, float, float, float] | None]
                 ) -> list[tuple[int | None, float]]:
    """``read_number`` for many crops with one Tesseract process: each crop is prepared
    as for one, the prepared crops are laid side by side on one line with
    ``BATCH_GAP`` white between them, and each word Tesseract reports goes back to the
    crop under its centre. Starting Tesseract (~100 ms of CPU) dominates a single read,
    so this costs about as much as one crop."""
    if len(max_values) != len(crops) or len(regions) != len(crops):
        raise ValueError("read_numbers needs one max_value and one region per crop")
    results: list[tuple[int | None, float]] = [(None, 0.0)] * len(crops)
    prepared = [_prepare(binarise(crop, region=region)) for crop, region in zip(
        crops, regions, strict=True)]
    todo = [i for i, p in enumerate(prepared) if p is not None]
    if not todo:
        return results
    if not tesseract_available():
        raise OcrUnavailable("the tesseract binary is not installed (apt-get install "
                             "tesseract-ocr tesseract-ocr-eng)")

    height = max(_shape(prepared[i])[0] for i in todo)
    parts = [np.full((height, BATCH_GAP), 255, np.uint8)]
    spans = []
    x = BATCH_GAP
    for i in todo:
        p = prepared[i]
        assert p is not None
        column = np.full((height, p.shape[1]), 255, np.uint8)
        top = (height - p.shape[0]) // 2
        column[top:top + p.shape[0]] = p
        parts += [column, np.full((height, BATCH_GAP), 255, np.uint8)]
        spans.append((x - BATCH_GAP / 2, x + p.shape[1] + BATCH_GAP / 2))
        x += p.shape[1] + BATCH_GAP
    line = np.hstack(parts)
    data = _tesseract_words(line, f"--psm {BATCH_PSM} --oem 1 {WHITELIST}")
    words: dict[int, list[tuple[float, str, float]]] = {i: [] for i in todo}
    for text, conf, left, width in zip(data["text"], data["conf"], data["left"],
                                       data["width"], strict=True):
        if not text.strip() or float(conf) < 0:
            continue
        centre = float(left) + float(width) / 2
        for i, (x0, x1) in zip(todo, spans, strict=True):
            if x0 <= centre < x1:
                words[i].append((float(left), text.strip(), float(conf)))
                break
    for i in todo:
        ordered = [(t, c) for _, t, c in sorted(words[i])]
        results[i] = _number(ordered, max_values[i])
    return results


@contextmanager
def _few_threads() -> Iterator[None]:
    """Within the block, child processes (Tesseract) see OMP_THREAD_LIMIT=OMP_THREADS,
    unless the user set it; pytesseract passes this process's environment on."""
    if "OMP_THREAD_LIMIT" in os.environ:
        yield
        return
    os.environ["OMP_THREAD_LIMIT"] = OMP_THREADS
    try:
        yield
    finally:
        os.environ.pop("OMP_THREAD_LIMIT", None)


def _shape(image: Image | None) -> tuple[int, int]:
    return (0, 0) if image is None else (int(image.shape[0]), int(image.shape[1]))
