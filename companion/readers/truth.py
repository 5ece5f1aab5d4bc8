"""Perfect detections from a rendered scene, and the fair comparison of a read state
with the scene's truth: the readers' tests and benchmark use both.

``detections_from_scene`` gives what an ideal locator and classifier would report:
every piece at least half visible (a Nox stack only as its top card), its kind, label,
oriented quad, Rox edge counts (``data["edge"]``) and Qwixx sheet boxes
(``data["boxes"]``). ``compare`` judges a read state against ``scene.state`` up to the
seat naming rule the reader documents (docs/readers.md).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from companion.games.base import InputError
from companion.readers.common import ReadState
from companion.vision.detections import Detections

QWIXX_ROWS = ("red", "yellow", "green", "blue")


def qwixx_numbers(row: str) -> list[int]:
    return list(range(2, 13)) if row in ("red", "yellow") else list(range(12, 1, -1))


def sheet_boxes(sheet: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A sheet (check contract) as the box-level data a sheet classifier reports."""
    out: list[dict[str, Any]] = []
    for row in QWIXX_ROWS:
        crossed = set(sheet.get(row, []))
        for n in qwixx_numbers(row):
            out.append({"row": row, "value": n, "crossed": n in crossed, "confidence": 1.0})
        out.append({"row": row, "value": "lock", "crossed": row in sheet.get("locks", []),
                    "confidence": 1.0})
    for k in range(1, 5):
        out.append({"row": "foul", "value": k, "crossed": k <= int(sheet.get("fouls", 0)),
                    "confidence": 1.0})
    return out


def detections_from_scene(scene: Any, *, min_visible: float = 0.5) -> Detections:
    """What a perfect locator and classifier would report for ``scene``."""
    quads, kinds, labels, edges, boxes = [], [], [], [], []
    sheets = scene.state.get("sheets", {}) if scene.game == "qwixx" else {}
    for p in scene.pieces:
        if p.covered or p.visible_fraction < min_visible:
            continue
        if p.kind == "nox_card" and p.top is False:
            continue  # the locator reports a stack's top card only
        quads.append(p.quad)
        kinds.append(p.kind)
        label: str | None = p.label
        if p.kind in ("qwixx_sheet", "catbox_board"):
            label = None  # the sheet's name is handwriting; its content is box data
        labels.append(label)
        edges.append(dict(p.edge) if p.edge is not None else None)
        boxes.append(sheet_boxes(sheets[p.owner]) if p.kind == "qwixx_sheet" else None)
    n = len(kinds)
    data: dict[str, tuple[Any, ...]] = {"edge": tuple(edges), "boxes": tuple(boxes)}
    return Detections(np.asarray(quads, np.float32).reshape(n, 4, 2), tuple(kinds),
                      tuple(labels), np.ones(n, np.float32), (True,) * n, data)


def scene_markers(scene: Any) -> list[dict[str, Any]]:
    """The markers the scene shows (as ``detect_markers`` would find them)."""
    return list(scene.markers)


def check(game: str, state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The check verdict on a state, or None if the state is not valid input."""
    import importlib

    module = importlib.import_module(f"companion.games.{game}")
    try:
        out: dict[str, Any] = module.GAME.check_document(dict(state))
        return out
    except InputError:
        return None


@dataclass
class Comparison:
    """How a read state compares with the truth."""

    state: bool  # the state read exactly (up to the naming rule)
    verdict: bool  # the check verdict's validity and rule ids as the scene's (seeable part)
    why: str = ""
    names: dict[str, str] | None = None  # read name -> true name


def compare(scene: Any, read: ReadState) -> Comparison:
    return _COMPARE[scene.game](scene, read)


def _rules(verdict: Mapping[str, Any] | None) -> set[str]:
    if verdict is None:
        return {"<input error>"}
    return {v["rule"] for v in verdict["violations"]}


def _verdict_ok(game: str, state: Mapping[str, Any], expected: set[str]) -> bool:
    return _rules(check(game, state)) == expected


# --------------------------------------------------------------------------- Nox

def nox_tops(state: Mapping[str, Any]) -> dict[str, list[list[int]]]:
    """Each kitty as the photo shows it: one top card per stack."""
    return {p: [[s[-1]] for s in state["kitties"].get(p, [])] for p in state["players"]}


def _compare_nox(scene: Any, read: ReadState) -> Comparison:
    truth = nox_tops(scene.state)
    got = read.state.get("kitties", {})
    order = list(read.state.get("players", []))
    names: dict[str, str] | None = None
    same = set(order) == set(truth) and {p: got.get(p, []) for p in truth} == truth
    if same:
        names = {p: p for p in order}
    elif not any(m["id"] >= 10 for m in scene.markers):
        # no seat markers: names go clockwise from a guessed first seat, so the state is
        # right if it is right up to which seat comes first (kitties with cards only)
        tseq = [(p, truth[p]) for p in scene.state["players"] if truth[p]]
        rseq = [(p, got[p]) for p in order if got.get(p)]
        for r in range(max(1, len(tseq))):
            turned = tseq[r:] + tseq[:r]
            if [k for _, k in turned] == [k for _, k in rseq]:
                same = True
                names = {rp: tp for (rp, _), (tp, _) in zip(rseq, turned, strict=True)}
                break
    expected = set(scene.verdict["rules"]) - {"nox.cover_colour"}  # invisible from above
    return Comparison(same, _verdict_ok("nox", read.state, expected),
                      "" if same else f"read {got} vs {truth}", names)


# --------------------------------------------------------------------------- Nummix

def nummix_components(grid: Sequence[str]) -> Counter[frozenset[tuple[int, int, str]]]:
    """A grid's 4-connected groups of tiles, each moved to the origin: what decides
    every construct, whatever the blank space between groups."""
    cells = {(r, c): t for r, line in enumerate(grid) for c, t in enumerate(line.split())
             if t != "."}
    seen: set[tuple[int, int]] = set()
    out: Counter[frozenset[tuple[int, int, str]]] = Counter()
    for start in cells:
        if start in seen:
            continue
        todo, comp = [start], []
        seen.add(start)
        while todo:
            r, c = todo.pop()
            comp.append((r, c))
            for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if nb in cells and nb not in seen:
                    seen.add(nb)
                    todo.append(nb)
        r0 = min(r for r, _ in comp)
        c0 = min(c for _, c in comp)
        out[frozenset((r - r0, c - c0, cells[(r, c)]) for r, c in comp)] += 1
    return out


def _compare_nummix(scene: Any, read: ReadState) -> Comparison:
    truth = nummix_components(scene.state["grid"])
    got = nummix_components(read.state.get("grid", []))
    same = truth == got
    return Comparison(same, _verdict_ok("nummix", read.state, set(scene.verdict["rules"])),
                      "" if same else f"read {read.state.get('grid')} vs {scene.state['grid']}")


# --------------------------------------------------------------------------- Rox

def _rox_key(row: Sequence[Mapping[str, Any]]) -> tuple[Any, ...]:
    return tuple((c["centre"], tuple(sorted((e, n) for e, n in c["edge"].items() if n)))
                 for c in row)


def rox_names(scene: Any, read: ReadState) -> dict[str, str] | None:
    """Read name -> true name matching the rows (None if no matching exists)."""
    truth = {p: _rox_key(scene.state["rows"].get(p, [])) for p in scene.state["players"]}
    got = {p: _rox_key(r) for p, r in read.state.get("rows", {}).items()}
    if set(got) == set(truth) and got == truth:
        return {p: p for p in got}
    if len(got) != len(truth):
        return None
    for perm in itertools.permutations(list(truth)):
        mapping = dict(zip(got, perm, strict=True))
        if all(got[r] == truth[t] for r, t in mapping.items()):
            return mapping
    return None


def _compare_rox(scene: Any, read: ReadState) -> Comparison:
    names = rox_names(scene, read)
    same = names is not None and sorted(read.state.get("scoring_cards", [])) == sorted(
        scene.state["scoring_cards"])
    state = dict(read.state)
    if names is not None:
        back = {t: r for r, t in names.items()}
        state["caller"] = back[scene.state["caller"]]
        same = same and read.state.get("caller", state["caller"]) == state["caller"]
    return Comparison(same, _verdict_ok("rox", state, set(scene.verdict["rules"])),
                      "" if same else f"read {read.state} vs {scene.state}", names)


# --------------------------------------------------------------------------- Qwixx

def _sheet_key(sheet: Mapping[str, Any]) -> tuple[Any, ...]:
    return (tuple(tuple(sorted(sheet.get(r, []))) for r in QWIXX_ROWS),
            tuple(sorted(sheet.get("locks", []))), int(sheet.get("fouls", 0)))


def _compare_qwixx(scene: Any, read: ReadState) -> Comparison:
    truth = scene.state
    got = read.state
    tnames = list(truth["sheets"])
    rnames = list(got.get("sheets", {}))
    same = len(tnames) == len(rnames)
    names = dict(zip(rnames, tnames, strict=False)) if same else None
    if names is not None:
        same = all(_sheet_key(got["sheets"][r]) == _sheet_key(truth["sheets"][t])
                   for r, t in names.items())
        tp, rp = truth["play"], got.get("play")
        same = same and rp is not None and names.get(rp["player"]) == tp["player"] and (
            Counter(rp["cards"]) == Counter(tp["cards"])) and sorted(rp.get("cross", [])) == \
            sorted(tp["cross"])
        if any(c.startswith("J") for c in tp["cards"]):  # else the variant is not seen
            same = same and got.get("variant") == "jokers"
    return Comparison(same, _verdict_ok("qwixx", got, set(scene.verdict["rules"])),
                      "" if same else f"read {got} vs {truth}", names)


# --------------------------------------------------------------------------- Cat in the Box

def catbox_truth_board(scene: Any) -> dict[str, list[str]]:
    """The board the scene's plays built (first token on a cell), 9 columns, the unused
    columns blocked."""
    from companion.synth.states import CATBOX_NUMBERS, catbox_blocked, catbox_board

    numbers = CATBOX_NUMBERS[len(scene.state["players"])]
    board = {c: ["." if k < numbers else "#" for k in range(9)]
             for c in ("red", "blue", "yellow", "green")}
    for colour, number in catbox_blocked(scene.state.get("revealed", [])):
        board[colour][number - 1] = "#"
    for (colour, number), player in catbox_board(scene.state).items():
        board[colour][number - 1] = player
    return board


def _compare_catbox(scene: Any, read: ReadState) -> Comparison:
    """The board (names by token colour: the scene gives player i colour i) and the
    trick's cards. The scene's verdict judges its plays, which a board photo does not
    show, so the verdict compared is the board's own check with zero tricks."""
    from companion.synth.states import CATBOX_TOKENS

    players = scene.state["players"]
    rename = {p: p for p in players}
    rename.update({c: p for c, p in zip(CATBOX_TOKENS, players, strict=False)})
    got = {row: [rename.get(c, c) for c in cells]
           for row, cells in read.state.get("board", {}).items()}
    truth = catbox_truth_board(scene)
    trick = [int(p.label) for p in scene.pieces if p.kind == "catbox_card" and not p.covered
             and not p.extra.get("revealed")]
    revealed = [int(p.label) for p in scene.pieces if p.extra.get("revealed")
                and not p.covered]
    same = (got == truth and [rename.get(p, p) for p in read.state.get("players", [])]
            == players and read.extra.get("trick") == trick
            and sorted(read.extra.get("revealed", []), key=str) == sorted(revealed, key=str))
    doc = {**read.state, "tricks": dict.fromkeys(read.state.get("players", []), 0)}
    if len(players) != 2:
        doc["predictions"] = dict.fromkeys(read.state.get("players", []), 1)
    verdict = check("catbox", doc)
    return Comparison(same, verdict is not None and verdict["valid"],
                      "" if same else f"read {got} {read.extra.get('trick')} vs {truth} {trick}",
                      {r: rename.get(r, r) for r in read.state.get("players", [])})


_COMPARE = {"nox": _compare_nox, "nummix": _compare_nummix, "rox": _compare_rox,
            "qwixx": _compare_qwixx, "catbox": _compare_catbox}


def hidden(scene: Any) -> int:
    """Pieces the locator cannot report (under a hand or another piece; a Nox stack's
    lower cards aside): a scene with any cannot be read exactly."""
    return sum(1 for p in scene.pieces if (p.covered or p.visible_fraction < 0.5)
               and not (p.kind == "nox_card" and p.top is False))


def read_scene(scene: Any, detections: Detections | None = None, *, markers: bool = True,
               names: bool = True, seen: Sequence[Any] | None = None) -> ReadState:
    """Read a scene from perfect detections (or the given ones), with the scene's
    markers (or the markers ``seen`` in the photo, as ``companion read`` finds them).
    When ``names`` and the photo shows seat markers, the players' names in seat order
    and the Rox caller are given as a user would; without seat markers the reader's own
    names (P1…) stand (Cat in the Box: names go with token colours)."""
    from companion.readers import read_state

    dets = detections if detections is not None else detections_from_scene(scene)
    players, caller = given_names(scene, markers=markers) if names else (None, None)
    given = seen if seen is not None else scene.markers
    return read_state(scene.game, dets, image_shape=scene.image.shape,
                      markers=given if markers else (), players=players, caller=caller)


def given_names(scene: Any, *, markers: bool = True) -> tuple[list[str] | None, str | None]:
    """The players' names in seat order and the Rox caller, as a user would give them:
    only when the table has seat markers (Cat in the Box: always, names go with token
    colours); else ``(None, None)`` and the reader's own names (P1…) stand."""
    seated = markers and any(m["id"] >= 10 for m in scene.markers)
    if not (seated or scene.game == "catbox"):
        return None, None
    players = (list(scene.state["sheets"]) if scene.game == "qwixx"
               else scene.state.get("players"))
    return players, scene.state.get("caller") if players else None
