"""Benchmark section: how often the readers get a scene's state exactly right from
perfect detections (an upper bound for the full photo → state pipeline)."""

from __future__ import annotations

import statistics
import time

from companion.benchmarks import Section
from companion.readers import GAMES
from companion.readers.truth import compare, detections_from_scene, hidden, read_scene
from companion.synth import render_scene

FIRST_SEED = 50_000
"""Fresh seeds, apart from the ones the tests use."""


def bench_readers(*, quick: bool) -> Section:
    count = 12 if quick else 100
    rows = []
    for game in GAMES:
        for difficulty in ("normal", "hard"):
            exact = verdict = clear = clear_exact = 0
            times = []
            for k in range(count):
                scene = render_scene(game, seed=FIRST_SEED + k, difficulty=difficulty)
                dets = detections_from_scene(scene)
                t0 = time.perf_counter()
                read = read_scene(scene, dets)
                times.append((time.perf_counter() - t0) * 1000)
                result = compare(scene, read)
                exact += result.state
                verdict += result.verdict
                if not hidden(scene):
                    clear += 1
                    clear_exact += result.state
            rows.append([game, difficulty, str(count), f"{100 * exact / count:.1f} %",
                         f"{100 * verdict / count:.1f} %",
                         f"{100 * clear_exact / clear:.1f} % of {clear}" if clear else "-",
                         f"{statistics.median(times):.1f}"])
    return Section(
        "Readers: state from perfect detections",
        ["game", "difficulty", "scenes", "state exact", "verdict right",
         "exact, nothing hidden", "read ms (median)"],
        rows,
        [f"Scenes rendered by companion.synth from seeds {FIRST_SEED}… (fresh, not the "
         "tests'); detections are the scene's ground truth (every piece at least half "
         "visible, a Nox stack as its top card) — an upper bound for photo → state.",
         "State exact: the read state equals the scene's up to the seat naming rule "
         "(docs/readers.md); Nox compares top cards only, Nummix compares the grid's "
         "touching groups, Cat in the Box the board, the trick and the revealed cards.",
         "Verdict right: the check verdict on the read state has the scene's rule ids "
         "(Nox: nox.cover_colour aside, it cannot be seen from above; Cat in the Box: the "
         "board's own check, since a board photo does not show the plays).",
         "Nothing hidden: scenes where no piece is under a hand or another piece; a "
         "hidden piece cannot be read by any reader.",
         "The full photo → state figure is added once the vision stages land."])
