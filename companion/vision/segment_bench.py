"""Measuring the learned locator (``segment.locate_learned``) beside the classical one
(``locate.locate``) on the same images: rendered scenes of every game at normal and hard
difficulty, and the real tile photos. Used by ``companion bench`` and by the tests."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from companion.benchmarks import Section, percent
from companion.vision.bench import (
    REAL_FULL,
    REAL_SUBSET,
    SceneScore,
    TileScore,
    read_yolo_quads,
    visible_truth,
)
from companion.vision.detections import Detections
from companion.vision.images import load_image
from companion.vision.locate import locate
from companion.vision.segment import locate_learned

Locator = Callable[..., Detections]


def _as_read(image: npt.NDArray[np.uint8], *, game: str) -> Detections:
    """The pieces ``read_image`` reports: the learned locator's, after the classifier
    has split, dropped and added what it reads (two cards in one outline, a stray, a
    token in a cell)."""
    from companion.vision.pipeline import read_image

    return read_image(image, game=game).detections


LOCATORS: dict[str, Locator] = {"learned": locate_learned, "classical": locate,
                                "read": _as_read}
SCENES = 60
"""Scenes per game and difficulty: at 30 (some 500 pieces a game) one piece missed moved
'found' by 0.2 points, as much as the goal's margin (99.5 %)."""
BENCH_SEED = 50_000
"""The same fresh seeds as the classical locator's benchmark (training uses 1 000 000…)."""


def _time(fn: Locator, image: npt.NDArray[np.uint8], game: str) -> tuple[Detections, float]:
    t0 = time.perf_counter()
    found = fn(image, game=game)
    return found, (time.perf_counter() - t0) * 1000


def compare_scenes(game: str, *, difficulty: str = "normal", count: int = 20,
                   seed: int = BENCH_SEED, which: tuple[str, ...] = ("learned", "classical")
                   ) -> dict[str, SceneScore]:
    """Recall and precision (quad IoU >= 0.5) of each locator on the same ``count``
    rendered 1280×720 scenes."""
    from companion.synth import render_scene

    scores = {name: SceneScore() for name in which}
    for i in range(count):
        scene = render_scene(game, seed=seed + i, difficulty=difficulty)
        truth = visible_truth(scene)
        for name in which:
            scores[name].add(truth, *_time(LOCATORS[name], scene.image, game))
    return scores


def compare_tiles(folder: Path, *, which: tuple[str, ...] = ("learned", "classical")
                  ) -> dict[str, TileScore]:
    """Share of labelled tiles each locator finds (IoU >= 0.5) in a folder of photos
    (``images/*.jpg`` with YOLO ``labels/*.txt``)."""
    scores = {name: TileScore() for name in which}
    for path in sorted((folder / "images").glob("*.jpg")):
        image = load_image(path)
        height, width = image.shape[:2]
        truth = read_yolo_quads(folder / "labels" / f"{path.stem}.txt", width, height)
        for name in which:
            scores[name].add(truth, *_time(LOCATORS[name], image, "nummix"))
    return scores


def _winner(learned: float, classical: float) -> str:
    if abs(learned - classical) < 0.005:
        return "tie"
    return "learned" if learned > classical else "classical"


def bench_locate_learned(*, quick: bool) -> Section:
    """Learned versus classical locator: recall, precision and time per game and
    difficulty on the same rendered scenes, and on the real tile photos."""
    from companion.synth import GAMES

    count = 5 if quick else SCENES
    rows: list[list[str]] = []
    for game in GAMES:
        for difficulty in ("normal", "hard"):
            sc = compare_scenes(game, difficulty=difficulty, count=count,
                                which=("learned", "classical", "read"))
            le, cl, rd = sc["learned"], sc["classical"], sc["read"]
            rows.append([game, difficulty, str(le.truth),
                         f"{percent(le.recall)} / {percent(le.precision)}",
                         f"{percent(rd.recall)} / {percent(rd.precision)}",
                         f"{percent(cl.recall)} / {percent(cl.precision)}",
                         f"{statistics.median(le.times_ms):.0f} / "
                         f"{statistics.median(cl.times_ms):.0f}",
                         _winner(le.recall, cl.recall)])
    folders = [("real tiles, fixed subset", REAL_SUBSET)]
    if REAL_FULL.exists() and not quick:
        folders.insert(0, ("real tiles, all photos", REAL_FULL))
    for name, folder in folders:
        tl = compare_tiles(folder)
        lt, ct = tl["learned"], tl["classical"]
        rows.append([name, "", str(lt.labelled),
                     f"{percent(lt.recall)} / {lt.false_found} unmatched", "–",
                     f"{percent(ct.recall)} / {ct.false_found} unmatched",
                     f"{lt.median_ms:.0f} / {ct.median_ms:.0f}",
                     _winner(lt.recall, ct.recall)])
    return Section(
        "Vision: learned locator versus classical locate",
        ["scenes", "difficulty", "pieces", "learned found / precision",
         "as read found / precision", "classical found / precision",
         "ms learned / classical (median)", "more found"], rows,
        [f"Rendered 1280×720 companion.synth scenes, seeds {BENCH_SEED}… (the learned "
         "model trains on seeds from 1 000 000), both locators on the same images; a "
         "piece counts as found when a quad overlaps it with IoU ≥ 0.5 (one-to-one); "
         "covered pieces and cards under a stack's top are not counted.",
         "Real tiles: the CC BY 4.0 photos (Roboflow Universe user rummikue); the learned "
         "model never trains on the fixed subset (every 6th photo). Of the full set, the "
         "other 149 photos are in its training data, so the full-set figure is optimistic "
         "for the learned model.",
         "'As read': the pieces `read_image` reports, after the classifier has split "
         "two cards outlined as one, dropped strays and found tokens in the board's "
         "cells (what `companion read` shows).",
         "Goal: ≥ 99.5 % found on rendered scenes (normal), ≥ 97 % of the real tiles.",
         "The learned locator is the default (`companion read`, deck enrolment); the "
         "classical one stays selectable (`--locator classical`). Learned times include "
         "its full-resolution steps (sheet and board edges, tile angles, board tokens)."])


def main() -> None:
    """Print both locators' figures (a quick look while training)."""
    import sys

    from companion.synth import GAMES

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    for game in GAMES:
        for difficulty in ("normal", "hard"):
            sc = compare_scenes(game, difficulty=difficulty, count=count)
            print(game, difficulty, {k: (v.truth, round(v.recall, 4), round(v.precision, 4),
                                         round(statistics.median(v.times_ms)))
                                     for k, v in sc.items()}, flush=True)
    for folder in (REAL_SUBSET, REAL_FULL):
        if folder.exists():
            tl = compare_tiles(folder)
            print(folder.name, {k: (v.labelled, round(v.recall, 4), v.false_found,
                                    round(v.median_ms)) for k, v in tl.items()}, flush=True)


if __name__ == "__main__":
    main()
