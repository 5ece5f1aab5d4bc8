"""Benchmark section: photo → checked state on rendered scenes, the whole pipeline
(locate, classify, the game's reader, the rules) against the scene's truth."""

from __future__ import annotations

import statistics
import time

from companion.benchmarks import Section
from companion.readers import GAMES
from companion.readers.photo import read_photo, read_scale
from companion.readers.truth import compare, given_names, hidden
from companion.synth import render_scene

FIRST_SEED = 62_000
"""Fresh seeds, apart from the tests' and the other benchmarks'. (60000-61029 were
looked at while fixing the readers, so they are no longer a fair test.)"""


SCENES = 60
"""Scenes per game and difficulty: at 30 one scene moved a figure by 3.3 points, more
than most changes to a reader; at 60, 1.7."""


def bench_photo_to_state(*, quick: bool) -> Section:
    count = 5 if quick else SCENES
    rows = []
    for game in GAMES:
        for difficulty in ("normal", "hard"):
            exact = verdict = covered = covered_flagged = clear_exact = 0
            whole = whole_exact = 0  # read with nothing unknown: what it says it read fully
            times = []
            for k in range(count):
                scene = render_scene(game, seed=FIRST_SEED + k, difficulty=difficulty)
                players, caller = given_names(scene)
                t0 = time.perf_counter()  # as companion read: the same path
                photo = read_photo(scene.image, game=game, players=players, caller=caller)
                times.append((time.perf_counter() - t0) * 1000)
                result = compare(scene, photo.reading)
                exact += result.state
                verdict += result.verdict
                if not photo.reading.unread:
                    whole += 1
                    whole_exact += result.state
                if hidden(scene):  # a piece under a hand: it can only say so
                    covered += 1
                    covered_flagged += any(u.get("piece") is not None or "region" in u
                                           for u in photo.reading.unknown)
                else:
                    clear_exact += result.state
            clear = count - covered
            rows.append([game, difficulty, str(count), f"{100 * exact / count:.1f} %",
                         f"{100 * verdict / count:.1f} %", f"{statistics.median(times):.0f}",
                         f"{covered} ({covered_flagged} flagged)",
                         f"{100 * clear_exact / clear:.1f} % of {clear}" if clear else "–",
                         f"{100 * whole_exact / whole:.1f} % of {whole}" if whole else "–",
                         f"{_tenth_slowest(times):.0f} / {max(times):.0f}"])
    return Section(
        "Photo to checked state (rendered scenes, whole pipeline)",
        ["game", "difficulty", "scenes", "state exact", "verdict right",
         "photo → verdict ms (median)", "scenes with a piece hidden (flagged unread)",
         "exact, nothing hidden", "exact when nothing is reported unread",
         "photo → verdict ms, 90th percentile / slowest"],
        rows,
        [f"Scenes from companion.synth, seeds {FIRST_SEED}… at 1280×720; the photo goes "
         "as `companion read` takes it: ArUco markers found in it, then locate, classify, "
         "the game's reader and the rules; compared with the "
         "scene's truth as in 'Readers: state from perfect detections'. Goal: ≥ 98 % "
         "exact at normal difficulty, under 200 ms per photo.",
         "Names: seat markers where the scene has them, else the reader's P1… rule; "
         "hidden pieces (under a hand) count as not exact. A scene with a piece under a "
         "hand cannot be read exactly; 'flagged' counts those whose reading names a piece "
         "it could not read, or the part of the photo a hand covers, rather than passing "
         "as whole, and 'exact, nothing hidden' is the exact share of the other scenes.",
         "'Exact when nothing is reported unread': of the scenes whose reading lists no "
         "unknown about the photo (no piece, box, region or row direction it could not read; "
         "what is not on the table, such as tricks won, aside), the "
         "share read exactly: how far a reading that claims to be whole can be trusted.",
         "The 90th percentile and the slowest photo show the tail the median hides: a "
         "photo the reader is unsure of is read again through moved outlines (Rox edge "
         "search, Qwixx sheet shifts), which can take several times the median."])


def _tenth_slowest(times: list[float]) -> float:
    """The 90th percentile of ``times`` (within them: the inclusive method, so a handful
    of quick-mode photos give no figure beyond the slowest)."""
    return statistics.quantiles(times, n=10, method="inclusive")[-1]


PHONE_SIZE = (4032, 3024)
"""A phone's photo (12 MP), the largest COMPONENTS.md names."""
PHONE_SCENES = 10
"""Scenes per game of the phone-sized section: each is read twice (shrunk, and as it is,
about 1-2 s on this machine)."""


def bench_phone_photos(*, quick: bool) -> Section:
    """Photo -> state on phone-sized photos: read as ``companion read`` reads them (from a
    copy shrunk to ``READ_SIDE``) and as they are, the same scenes."""
    count = 2 if quick else PHONE_SCENES
    width, height = PHONE_SIZE
    rows = []
    for game in GAMES:
        exact = {False: 0, True: 0}
        whole_wrong = {False: 0, True: 0}
        times: dict[bool, list[float]] = {False: [], True: []}
        for k in range(count):
            scene = render_scene(game, seed=FIRST_SEED + k, difficulty="normal",
                                 width=width, height=height)
            players, caller = given_names(scene)
            for full_size in (False, True):
                t0 = time.perf_counter()
                photo = read_photo(scene.image, game=game, players=players, caller=caller,
                                   full_size=full_size)
                times[full_size].append((time.perf_counter() - t0) * 1000)
                right = compare(scene, photo.reading).state
                exact[full_size] += right
                whole_wrong[full_size] += not photo.reading.unread and not right
        side = round(max(width, height) * read_scale(scene.image.shape, game))
        rows.append([game, str(count), f"{side} px",
                     f"{100 * exact[False] / count:.0f} % / {100 * exact[True] / count:.0f} %",
                     f"{whole_wrong[False]} / {whole_wrong[True]}",
                     f"{statistics.median(times[False]):.0f} / "
                     f"{statistics.median(times[True]):.0f}"])
    return Section(
        "Photo to checked state: phone-sized photos",
        ["game", "scenes", "read at (long side)", "state exact: shrunk / as it is",
         "read whole and wrong: shrunk / as it is",
         "photo → verdict ms (median): shrunk / as it is"],
        rows,
        [f"Scenes from companion.synth at {width}×{height} (a phone's 12 MP photo), normal "
         f"difficulty, seeds {FIRST_SEED}…; each read by `companion read`'s path, which "
         "reads a photo longer than `readers.photo.READ_SIDE` from a copy shrunk to it "
         "(Rox: `READ_SIDE_BY_GAME`), and read again as it is (`full_size`), compared "
         "with the scene's truth as in 'Photo to checked state'.",
         "The readers were built on 1280×720 photos: the shrunk copy gives their pieces "
         "as many pixels as those photos do or more, and takes a fraction of the time."])
