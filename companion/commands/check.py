"""``companion check``, ``companion hint`` and ``companion demo``: verdicts on positions."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from companion.games import GAME_NAMES, get_game
from companion.games.base import InputError
from companion.jsonio import load_document

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "docs" / "examples"


def register(sub: Any) -> None:
    check = sub.add_parser("check", help="check a position or a play given as JSON")
    check.add_argument("game", help=f"one of: {', '.join(GAME_NAMES)}")
    check.add_argument("file", nargs="?", default="-", help="JSON file, or - for stdin")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(func=run_check)

    hint = sub.add_parser("hint", help="find a play for a rack (nummix)")
    hint.add_argument("game")
    hint.add_argument("file", nargs="?", default="-")
    hint.add_argument("--json", action="store_true")
    hint.set_defaults(func=run_hint)

    demo = sub.add_parser("demo", help="check every bundled example position")
    demo.add_argument("--examples", default=str(EXAMPLES_DIR), help="folder of examples")
    demo.set_defaults(func=run_demo)


def check_document(game_name: str, doc: Mapping[str, Any]) -> dict[str, Any]:
    """The verdict for ``doc`` under ``game_name``; InputError if it is for another game."""
    named = doc.get("game", game_name)
    if named != game_name:
        raise InputError("game", f"the document is for {named!r}, not {game_name!r}")
    game = get_game(game_name)
    result: dict[str, Any] = game.check_document(doc)
    return result


def run_check(args: argparse.Namespace) -> int:
    doc = load_document(args.file)
    result = check_document(args.game, doc)
    print(json.dumps(result, ensure_ascii=False) if args.json else format_verdict(result))
    return 0


def run_hint(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    if not hasattr(game, "hint_document"):
        raise InputError("game", f"no move finder for {args.game!r} (only nummix has one)")
    doc = load_document(args.file)
    named = doc.get("game", args.game)
    if named != args.game:
        raise InputError("game", f"the document is for {named!r}, not {args.game!r}")
    result = game.hint_document(doc)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(game.format_hint(result))
    return 0


def run_demo(args: argparse.Namespace) -> int:
    folder = Path(args.examples)
    files = sorted(folder.glob("*.json"))
    if not files:
        raise InputError("examples", f"no example positions in {folder}")
    for path in files:
        doc = load_document(str(path))
        print(f"== {path.name}")
        try:
            print(format_verdict(check_document(str(doc.get("game", "")), doc)))
        except InputError as exc:
            print(f"error: {exc}")
    return 0


_TEXT_KEYS = ("rule", "message", "explanation")


def format_verdict(result: Mapping[str, Any]) -> str:
    """Human output: one line per violation (rule id, rule in words, where), then scores."""
    lines: list[str] = []
    violations = result.get("violations", [])
    if not violations:
        lines.append(f"{result.get('game')}: valid, no rule broken")
    for v in violations:
        where = ", ".join(f"{k} {_show(val)}" for k, val in v.items() if k not in _TEXT_KEYS)
        lines.append(f"{v['rule']}: {v['message']}" + (f"  [{where}]" if where else ""))
        lines.append(f"    rule: {v.get('explanation', '')}")
    for line in result.get("summary", []):
        lines.append(str(line))
    if result.get("scores"):
        lines.append("scores: " + ", ".join(f"{p} {s}" for p, s in result["scores"].items()))
    if result.get("totals"):
        lines.append("totals: " + ", ".join(f"{p} {s}" for p, s in result["totals"].items()))
    if result.get("game_over"):
        lines.append("game over; winner(s): " + ", ".join(result.get("winners", [])))
    return "\n".join(lines)


def _show(value: Any) -> str:
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
