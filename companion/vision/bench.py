"""Measuring the locator and the whole read: recall on the real tile photos and on
rendered scenes, time per scene. Used by ``companion bench`` and by the tests."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from companion.benchmarks import Section, percent
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

    def add(self, truth: list[npt.NDArray[np.float32]], found: Detections, ms: float
            ) -> None:
        """Count one photo: its labelled tiles, what the locator found, how long it took."""
        matched, false = match(truth, found)
        self.times_ms.append(ms)
        self.images += 1
        self.labelled += len(truth)
        self.found += matched
        self.false_found += false


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
        score.add(truth, found, (time.perf_counter() - t0) * 1000)
    return score


# ---------------------------------------------------------------- rendered scenes

SCENE_SEED = 50_000
"""Rendered scenes for measuring start at this seed (training uses other seeds)."""


@dataclass
class SceneScore:
    """Locator results on rendered scenes of one game and difficulty."""

    scenes: int = 0
    truth: int = 0
    found: int = 0
    reported: int = 0
    pieces: list[int] = field(default_factory=list)
    times_ms: list[float] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.found / self.truth if self.truth else 0.0

    @property
    def precision(self) -> float:
        return self.found / self.reported if self.reported else 0.0

    def add(self, truth: list[npt.NDArray[np.float32]], found: Detections, ms: float
            ) -> None:
        """Count one scene: its visible pieces, what the locator found, how long it took."""
        matched, _ = match(truth, found)
        self.times_ms.append(ms)
        self.scenes += 1
        self.truth += len(truth)
        self.found += matched
        self.reported += len(found)
        self.pieces.append(len(truth))


def visible_truth(scene: object) -> list[npt.NDArray[np.float32]]:
    """The pieces a reader should find: not covered, at least half visible, and for
    stacks only the top card."""
    quads = []
    for piece in getattr(scene, "pieces", []):
        if piece.covered or piece.visible_fraction < 0.5 or piece.top is False:
            continue
        quads.append(np.asarray(piece.quad, np.float32))
    return quads


def score_scenes(game: str, *, difficulty: str = "normal", count: int = 20,
                 seed: int = SCENE_SEED) -> SceneScore:
    """Recall and precision (quad IoU >= 0.5) of ``locate`` on ``count`` rendered scenes."""
    from companion.synth import render_scene

    score = SceneScore()
    for i in range(count):
        scene = render_scene(game, seed=seed + i, difficulty=difficulty)
        truth = visible_truth(scene)
        t0 = time.perf_counter()
        found = locate(scene.image, game=game)
        score.add(truth, found, (time.perf_counter() - t0) * 1000)
    return score


# ---------------------------------------------------------------- report sections

def bench_locate_real(*, quick: bool) -> Section:
    """Share of labelled tiles found in the real photos (all 179 when present)."""

    rows: list[list[str]] = []
    folders = [("fixed subset (tests/data/real_tiles)", REAL_SUBSET)]
    if REAL_FULL.exists() and not quick:
        folders.insert(0, ("all photos (../shared/data/rummikub-photos)", REAL_FULL))
    for name, folder in folders:
        s = score_tiles(folder)
        rows.append([name, str(s.images), str(s.labelled), percent(s.recall),
                     str(s.false_found), f"{s.median_ms:.0f}"])
    return Section(
        "Vision: locating tiles in real photos",
        ["photos", "images", "labelled tiles", "found (IoU ≥ 0.5)", "unmatched quads",
         "locate ms (median)"], rows,
        ["Phone photos 1000×750 of Rummikub tiles (CC BY 4.0, Roboflow Universe user "
         "rummikue): flat on wood, cloth and stone, and standing on racks.",
         "A labelled tile counts as found when one located quad overlaps its polygon's "
         "enclosing rectangle with IoU ≥ 0.5 (one-to-one). Goal: 97 %.",
         "Unmatched quads include real tiles cut by the image border that carry no label.",
         "This section measures the classical locator (`locate.py`, `--locator classical`); "
         "the default, learned locator is measured beside it in 'Vision: learned locator "
         "versus classical locate'."])


def bench_locate_scenes(*, quick: bool) -> Section:
    """Locate recall and precision per game on rendered scenes, normal and hard."""
    from companion.synth import GAMES

    count = 5 if quick else 30
    rows = []
    for game in GAMES:
        for difficulty in ("normal", "hard"):
            s = score_scenes(game, difficulty=difficulty, count=count)
            rows.append([game, difficulty, str(s.scenes), str(s.truth), percent(s.recall),
                         percent(s.precision), f"{statistics.median(s.times_ms):.0f}"])
    return Section(
        "Vision: locating pieces in rendered scenes",
        ["game", "difficulty", "scenes", "visible pieces", "found (IoU ≥ 0.5)",
         "precision", "locate ms per 1280×720 (median)"], rows,
        [f"companion.synth scenes, seeds {SCENE_SEED}… (not used in training), "
         "1280×720; visible pieces exclude covered ones and cards under a stack's top.",
         "Goal: ≥ 99.5 % found at normal difficulty.",
         "This section measures the classical locator (`locate.py`, `--locator classical`); "
         "the default, learned locator is measured beside it in 'Vision: learned locator "
         "versus classical locate'."])


def bench_read(*, quick: bool) -> Section:
    """Whole read (locate + classify, model loaded) per 1280×720 rendered scene, and the
    time to load a model once."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image
    from companion.vision.reading import MODELS_DIR, load_model

    rows: list[list[str]] = []
    for model_path in sorted(MODELS_DIR.glob("*.onnx")):
        if not model_path.with_suffix(".labels.json").exists():
            continue  # not a piece classifier (the learned locator has its own section;
            # an 8-bit copy is timed as its model: load_model picks it)
        loads = []
        for _ in range(1 if quick else 5):
            load_model.cache_clear()
            t0 = time.perf_counter()
            load_model(model_path.stem)
            loads.append((time.perf_counter() - t0) * 1000)
        rows.append([f"load model {load_model(model_path.stem).file}", "", "", "",
                     f"{statistics.median(loads):.0f}", "", ""])
    count = 3 if quick else 20
    for game in ("nummix", "nox", "qwixx", "rox", "catbox"):
        totals, locates, classifies, cpus, pieces = [], [], [], [], []
        asked = found = photos_asked = 0
        for i in range(count):
            scene = render_scene(game, seed=SCENE_SEED + i)
            read_image(scene.image, game=game)  # warm: models loaded, caches filled
            c0 = time.process_time()
            result = read_image(scene.image, game=game)
            cpus.append((time.process_time() - c0) * 1000)
            totals.append(result.timing_ms["total"])
            locates.append(result.timing_ms["locate"])
            classifies.append(result.timing_ms["classify"])
            pieces.append(len(result.detections))
            second = result.detections.data.get("second_opinion", ())
            asked += sum(bool(x) for x in second)
            found += len(result.detections)
            photos_asked += any(second)
        rows.append([f"read {game}", f"{statistics.median(pieces):.0f}",
                     f"{statistics.median(locates):.0f}", f"{statistics.median(classifies):.0f}",
                     f"{statistics.median(totals):.0f}", f"{statistics.median(cpus):.0f}",
                     f"{percent(asked / found) if found else '–'} ({photos_asked}/{count} photos)"])
    return Section(
        "Vision: time to read a photo",
        ["what", "pieces found (median)", "locate ms", "classify ms", "total ms (median)",
         "CPU ms (this process)", "Tesseract asked (pieces; photos)"],
        rows,
        [f"Rendered 1280×720 scenes (seeds {SCENE_SEED}…), each read twice and the second "
         "timed (models loaded); medians. Goal: whole read under 100 ms for 40 pieces.",
         "Kinds without a trained model are located but not classified (classify ≈ 0 ms).",
         "Tesseract is the second opinion on printed numbers the CNN is unsure of (under "
         "0.80): all of a photo's unsure pieces go to one Tesseract process, whose start "
         "(~100 ms CPU, more wall time on a loaded machine) is most of classify's time on "
         "a photo that needs it. CPU ms counts this process only (not Tesseract's).",
         f"Machine load (1/5/15 min) when measured: {_load()}; the machine is shared, so "
         "wall times vary with it."])


def _load() -> str:
    """The 1, 5 and 15 minute load averages, as ``uptime`` shows them."""
    import os

    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"
