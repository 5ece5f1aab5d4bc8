"""``companion bench`` section: scenes per second at 1280×720 for each game."""

from __future__ import annotations

import os
import statistics
import time

import cv2

from companion.benchmarks import Section
from companion.synth.scene import render_scene
from companion.synth.states import GAMES


def bench_synth(*, quick: bool) -> Section:
    """Median scenes/second over several runs per game (render + JPEG encode), after a
    warm-up that fills the face caches as a long training run would."""
    runs, per_run = (3, 4) if quick else (5, 10)
    rows = []
    load_before = os.getloadavg()
    for game in GAMES:
        for s in range(6):  # warm-up: fonts, faces, noise banks, distortion maps
            render_scene(game, seed=10_000 + s)
        rates = []
        cpu_rates = []
        seed = 0
        for _ in range(runs):
            c0 = time.process_time()
            t0 = time.perf_counter()
            for _ in range(per_run):
                scene = render_scene(game, seed=seed)
                cv2.imencode(".jpg", scene.image,
                             [cv2.IMWRITE_JPEG_QUALITY, int(scene.camera["jpeg_quality"])])
                seed += 1
            rates.append(per_run / (time.perf_counter() - t0))
            cpu_rates.append(per_run / max(time.process_time() - c0, 1e-9))
        rate = statistics.median(rates)
        rows.append([game, f"{rate:.1f}", f"{1000 / rate:.0f}", f"{min(rates):.1f}",
                     f"{max(rates):.1f}", f"{statistics.median(cpu_rates):.1f}"])
    load_after = os.getloadavg()
    return Section(
        title="Synthetic scenes (companion.synth)",
        headers=["game", "scenes/s (1280×720, normal), median", "ms/scene", "slowest run",
                 "fastest run", "scenes per CPU-second"],
        rows=rows,
        notes=[f"median of {runs} runs of {per_run} scenes each, render + JPEG encode, one "
               "process; goal ≥ 10 scenes/s", "faces are cached per look: the first scenes of "
               "a process are slower (warm-up of 6 scenes per game not counted)",
               f"machine load (1-min load average, {os.cpu_count()} cores) "
               f"{load_before[0]:.1f} before, {load_after[0]:.1f} after: other work ran "
               "alongside, so the wall-clock figures are lower bounds; scenes per "
               "CPU-second (all threads of the process) depend less on the load"],
    )
