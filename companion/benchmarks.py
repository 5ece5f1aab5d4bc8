"""``companion bench``: measure every stage and write docs/BENCHMARKS.md.

Each area contributes a function ``bench_*(*, quick: bool) -> Section`` listed in
``SECTIONS``; the command runs them in order and writes one report with the date, the
machine and the command. Figures are medians over repeated runs; speed is never
asserted in unit tests, only measured here.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPORT = Path(__file__).resolve().parents[1] / "docs" / "BENCHMARKS.md"

# "module:function" for every section, in report order. Add yours here.
SECTIONS: list[str] = [
    "companion.games.nummix_finder:bench_nummix_finder",
    "companion.synth.bench:bench_synth",
    "companion.readers.bench:bench_readers",
    "companion.vision.bench:bench_locate_real",
    "companion.vision.bench:bench_locate_scenes",
    "companion.vision.bench:bench_read",
    "companion.vision.classify_bench:bench_classify_accuracy",
    "companion.vision.classify_bench:bench_classify_vs_tesseract",
    "companion.vision.segment_bench:bench_locate_learned",
    "companion.readers.photo_bench:bench_photo_to_state",
    "companion.readers.photo_bench:bench_phone_photos",
    "companion.vision.sheet_bench:bench_sheets",
]


@dataclass
class Section:
    """One part of the report: a table of figures and notes on how they were measured."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)

    def to_markdown(self) -> str:
        out = [f"## {self.title}", ""]
        out.append("| " + " | ".join(self.headers) + " |")
        out.append("|" + "---|" * len(self.headers))
        out.extend("| " + " | ".join(str(c) for c in row) + " |" for row in self.rows)
        if self.notes:
            out.append("")
            out.extend(f"- {n}" for n in self.notes)
        out.append("")
        return "\n".join(out)


def percent(share: float) -> str:
    """A share (0-1) as the report writes it: one decimal and a percent sign."""
    return f"{100 * share:.1f} %"


def median_ms(fn: Callable[[], Any], *, repeat: int, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` in milliseconds over ``repeat`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def machine_description() -> str:
    """CPU model, core count, memory and Python, for the report's header."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def run_sections(names: Sequence[str], *, quick: bool) -> list[Section]:
    sections = []
    for name in names:
        module_name, func_name = name.split(":")
        func = getattr(importlib.import_module(module_name), func_name)
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        sections.append(func(quick=quick))
    return sections


def write_report(sections: Sequence[Section], *, command: str, path: Path = REPORT) -> None:
    """Write the sections into the report, replacing those of the same title and keeping
    the others, so a partial run (``--only``) updates its own figures only."""
    stamp = f"Measured {_dt.date.today().isoformat()} on {machine_description()} by `{command}`."
    kept = _read_sections(path)
    for s in sections:
        kept[s.title] = s.to_markdown().replace("\n\n", f"\n\n{stamp}\n\n", 1)
    head = ["# Benchmarks", "",
            "Written by `companion bench`; do not edit by hand. Figures are medians; each "
            "section says when, on which machine and by which command it was measured.", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(head) + "\n" + "\n".join(kept.values()))


def _read_sections(path: Path) -> dict[str, str]:
    """The report's existing sections by title (empty if there is no report)."""
    if not path.exists():
        return {}
    parts: dict[str, str] = {}
    title = None
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("## "):
            title = line[3:].strip()
            parts[title] = ""
        if title is not None:
            parts[title] += line
    return {t: body.rstrip("\n") + "\n" for t, body in parts.items()}


def register(sub: Any) -> None:
    bench = sub.add_parser("bench", help="measure accuracy and speed; writes docs/BENCHMARKS.md")
    bench.add_argument("--quick", action="store_true", help="fewer samples (a smoke run)")
    bench.add_argument("--only", action="append", default=[],
                       help="run only sections whose name contains this (repeatable)")
    bench.add_argument("--out", default=str(REPORT), help="where to write the report")
    bench.set_defaults(func=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    names = [n for n in SECTIONS if not args.only or any(o in n for o in args.only)]
    if not names:
        print("no benchmark sections match", file=sys.stderr)
        return 2
    sections = run_sections(names, quick=args.quick)
    command = "companion bench" + (" --quick" if args.quick else "") + "".join(
        f" --only {o}" for o in args.only)
    write_report(sections, command=command, path=Path(args.out))
    for s in sections:
        print(s.to_markdown())
    print(f"wrote {args.out}")
    return 0
