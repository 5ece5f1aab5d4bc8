"""Measuring the locator and the whole read: recall on the real tile photos and on
rendered scenes, time per scene. Used by ``companion bench`` and by the tests."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from companion.vision.detections import Detections, quad_iou
from companion.vision.images import load_image
from companion.vision.locate import locate

ROOT = Path(__file__).resolve().parents[2]
REAL_FULL = ROOT.parent / "shared" / "data" / "rummikub-photos"
"""All 179 real photos (outside the product; measured when present)."""
REAL_SUBSET = ROOT / "tests" / "data" / "real_tiles"
"""The fixed subset kept with the tests (every 6th photo)."""
MATCH_IOU = 0.5


def read_yolo_quads(path: Path, width: int, height: int) -> list[npt.NDArray[np.float32]]:
    """The labelled tiles of one photo as quads: each YOLO polygon (normalised
    coordinates) reduced to its smallest enclosing rectangle in image pixels."""
    import cv2

    quads = []
    for line in path.read_text().splitlines():
        values = line.split()
        if len(values) < 7:
            continue
        points = np.array(values[1:], np.float32).reshape(-1, 2) * [width, height]
        quads.append(cv2.boxPoints(cv2.minAreaRect(points.astype(np.float32))))
    return quads


def match(truth: list[npt.NDArray[np.float32]], found: Detections,
          *, threshold: float = MATCH_IOU) -> tuple[int, int]:
    """(truths matched, found quads matching nothing): greedy one-to-one by best IoU."""
    pairs = sorted(((quad_iou(t, q), i, j) for i, t in enumerate(truth)
                    for j, q in enumerate(found.quads)), reverse=True)
    used_t: set[int] = set()
    used_f: set[int] = set()
    for iou, i, j in pairs:
        if iou < threshold:
            break
        if i not in used_t and j not in used_f:
            used_t.add(i)
            used_f.add(j)
    return len(used_t), len(found) - len(used_f)


@dataclass
class TileScore:
    """Locator results on a folder of labelled photos."""

    images: int = 0
    labelled: int = 0
    found: int = 0
    false_found: int = 0
    times_ms: list[float] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.found / self.labelled if self.labelled else 0.0

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms) if self.times_ms else 0.0


def score_tiles(folder: Path) -> TileScore:
    """Share of labelled tiles the locator finds (quad IoU >= 0.5) in ``folder``
    (``images/*.jpg`` with ``labels/*.txt``)."""
    score = TileScore()
    for path in sorted((folder / "images").glob("*.jpg")):
        image = load_image(path)
        height, width = image.shape[:2]
        truth = read_yolo_quads(folder / "labels" / f"{path.stem}.txt", width, height)
        t0 = time.perf_counter()
        found = locate(image, game="nummix")
        score.times_ms.append((time.perf_counter() - t0) * 1000)
        matched, false = match(truth, found)
        score.images += 1
        score.labelled += len(truth)
        score.found += matched
        score.false_found += false
    return score
