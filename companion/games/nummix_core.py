"""Nummix tiles, the grid notation and the rules checker (RULES.md section 4).

The table is a sparse grid ``{(row, col): tile}``. A *construct* is every maximal
horizontal or vertical line of two or more touching tiles; each is checked on its own
(``nummix.size``/``run``/``direction``/``group``) and all jokers of the table are then
solved together (``nummix.joker``), so a joker at a crossing takes one value for both
of its lines. A turn compares two grids and the rack (``nummix.kept``, ``nummix.rack``,
``nummix.first_play``, ``nummix.joker_pass``, ``nummix.tiles``).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.games.base import JSON, InputError, Violation, expect, violation

# --- decisions (RULES.md *(decision)* points and our own notation choices) -----------

COLOURS = "rkbo"
"""Red, black, blue and *(decision)* orange, in this order (RULES.md 4, Tiles)."""
COLOUR_NAMES = {"r": "red", "k": "black", "b": "blue", "o": "orange"}
HIGHEST = 17
"""Numbers run 1..17 and wrap 17 -> 1."""
COPIES = 2
"""Two tiles of each colour and number."""
MAX_RUN = 17
"""A run has at most 17 tiles (RULES.md 4, nummix.run)."""
GROUP_SIZES = (3, 4)
MIN_CONSTRUCT = 3
RAGGED_ROWS_PADDED = True
"""*(decision)* Rows of different lengths are padded with empty places on the right:
a short row simply ends early. (False would make them an InputError.)"""
MAX_GRID_SIDE = 300
"""A grid wider or taller than this is not a table (142 tiles at most): InputError."""

Cell = tuple[int, int]
Value = tuple[str, int]
"""What a tile stands for: (colour letter, number)."""

JOKERS: tuple[str, ...] = tuple("J" + a + b for a, b in itertools.combinations(COLOURS, 2))
NUMBER_TILES: tuple[str, ...] = tuple(f"{c}{n}" for c in COLOURS for n in range(1, HIGHEST + 1))
ALL_TILES: tuple[str, ...] = NUMBER_TILES * COPIES + JOKERS
"""The 142 tiles of a set: 136 number tiles and 6 jokers."""
SUPPLY: Counter[str] = Counter(ALL_TILES)


def is_joker(tile: str) -> bool:
    return tile[0] == "J"


def joker_colours(tile: str) -> str:
    """The two colour letters a joker shows."""
    return tile[1:]


def tile_value(tile: str) -> Value:
    """(colour, number) of a number tile."""
    return tile[0], int(tile[1:])


def value_tile(value: Value) -> str:
    return f"{value[0]}{value[1]}"


def nxt(n: int) -> int:
    """The number after ``n`` on the number circle (17 -> 1)."""
    return n % HIGHEST + 1


def prev(n: int) -> int:
    return (n - 2) % HIGHEST + 1


def step(n: int, k: int) -> int:
    """``n`` moved ``k`` places along the number circle."""
    return (n - 1 + k) % HIGHEST + 1


def describe_tile(tile: str) -> str:
    if is_joker(tile):
        pair = joker_colours(tile)
        return f"joker {tile} ({COLOUR_NAMES[pair[0]]}/{COLOUR_NAMES[pair[1]]})"
    c, n = tile_value(tile)
    return f"{COLOUR_NAMES[c]} {n}"


def describe_value(value: Value) -> str:
    return f"{COLOUR_NAMES[value[0]]} {value[1]}"


# --- notation -------------------------------------------------------------------------


def parse_tile(text: JSON, field_name: str) -> str:
    """A tile in notation (``r3``, ``Jrk`` or ``Jkr``) in canonical form; InputError
    naming the field for anything else."""
    if not isinstance(text, str):
        raise InputError(field_name, f"a tile is a string such as 'r3' or 'Jrk', got {text!r}")
    t = text.strip()
    if len(t) == 3 and t[0] in "Jj":
        a, b = t[1].lower(), t[2].lower()
        if a in COLOURS and b in COLOURS and a != b:
            pair = "".join(sorted((a, b), key=COLOURS.index))
            return "J" + pair
        raise InputError(field_name, f"unknown joker {text!r}: a joker is J and two different "
                         "colour letters of r, k, b, o (e.g. 'Jrk')")
    if len(t) >= 2 and t[0].lower() in COLOURS and t[1:].isdigit():
        n = int(t[1:])
        if 1 <= n <= HIGHEST and t[1] != "0":
            return f"{t[0].lower()}{n}"
        raise InputError(field_name, f"unknown tile {text!r}: numbers run 1 to {HIGHEST}")
    raise InputError(field_name, f"unknown tile {text!r}: a tile is a colour letter (r red, "
                     "k black, b blue, o orange) and a number 1-17, J and two colour "
                     "letters for a joker, or '.' for an empty place")


def parse_rack(value: JSON, field_name: str) -> list[str]:
    """A list of tiles (a rack, or passed jokers)."""
    items = expect(value, list, field_name)
    return [parse_tile(t, f"{field_name}[{i}]") for i, t in enumerate(items)]


@dataclass(frozen=True)
class Grid:
    """A table: tiles by cell, plus the size the notation gave (so output keeps it)."""

    cells: Mapping[Cell, str]
    rows: int = 0
    cols: int = 0

    @staticmethod
    def of(cells: Mapping[Cell, str]) -> Grid:
        return Grid(dict(cells), *_extent(cells))


def _extent(cells: Iterable[Cell]) -> tuple[int, int]:
    rows = cols = 0
    for r, c in cells:
        rows, cols = max(rows, r + 1), max(cols, c + 1)
    return rows, cols


def parse_grid(value: JSON, field_name: str) -> Grid:
    """A grid in notation: a list of rows, each a string of cells separated by spaces."""
    rows = expect(value, list, field_name)
    if len(rows) > MAX_GRID_SIDE:
        raise InputError(field_name, f"more than {MAX_GRID_SIDE} rows is not a table")
    cells: dict[Cell, str] = {}
    width = None
    n_cols = 0
    for r, row in enumerate(rows):
        text = expect(row, str, f"{field_name}[{r}]")
        parts = text.split()
        if len(parts) > MAX_GRID_SIDE:
            raise InputError(f"{field_name}[{r}]", f"more than {MAX_GRID_SIDE} cells in a row")
        if not RAGGED_ROWS_PADDED and width is not None and len(parts) != width:
            raise InputError(f"{field_name}[{r}]", f"has {len(parts)} cells, row 0 has {width}")
        width = len(parts) if width is None else width
        n_cols = max(n_cols, len(parts))
        for c, part in enumerate(parts):
            if part == ".":
                continue
            cells[(r, c)] = parse_tile(part, f"{field_name}[{r}][{c}]")
    return Grid(cells, len(rows), n_cols)


def format_grid(cells: Mapping[Cell, str], rows: int = 0, cols: int = 0,
                *, align: bool = False) -> list[str]:
    """Notation rows for ``cells`` (at least ``rows`` x ``cols``); cells must not be at
    negative coordinates (see ``normalise``)."""
    r_n, c_n = _extent(cells)
    rows, cols = max(rows, r_n), max(cols, c_n)
    width = max((len(t) for t in cells.values()), default=1) if align else 0
    out = []
    for r in range(rows):
        parts = [cells.get((r, c), ".").ljust(width) for c in range(cols)]
        out.append(" ".join(parts).rstrip() if align else " ".join(parts))
    return out


def normalise(cells: Mapping[Cell, str]) -> dict[Cell, str]:
    """The same table shifted so that no cell has a negative row or column."""
    if not cells:
        return {}
    dr = -min(0, min(r for r, _ in cells))
    dc = -min(0, min(c for _, c in cells))
    if dr == dc == 0:
        return dict(cells)
    return {(r + dr, c + dc): t for (r, c), t in cells.items()}


# --- constructs -----------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """A maximal line of two or more touching tiles, in reading order."""

    cells: tuple[Cell, ...]
    horizontal: bool


def find_lines(cells: Mapping[Cell, str]) -> tuple[list[Line], list[Cell]]:
    """Every construct (maximal line of >= 2 tiles) and every tile with no neighbour."""
    lines: list[Line] = []
    in_line: set[Cell] = set()
    order = sorted(cells)
    for horizontal in (True, False):
        dr, dc = (0, 1) if horizontal else (1, 0)
        for (r, c) in order:
            if (r - dr, c - dc) in cells or (r + dr, c + dc) not in cells:
                continue
            run = [(r, c)]
            while (run[-1][0] + dr, run[-1][1] + dc) in cells:
                run.append((run[-1][0] + dr, run[-1][1] + dc))
            lines.append(Line(tuple(run), horizontal))
            in_line.update(run)
    lone = [p for p in order if p not in in_line]
    return lines, lone


Option = tuple[str, tuple[Value, ...]]
"""One way a line is valid: its kind and the value of each joker in it, in order."""


def run_options(tiles: Sequence[str], *, any_colour: bool = False) -> list[Option]:
    """Every way ``tiles`` (in reading order) form a run (``nummix.run``); ``any_colour``
    lets jokers take every colour (used to tell a joker misfit from a broken run)."""
    size = len(tiles)
    if size < MIN_CONSTRUCT or size > MAX_RUN:
        return []
    fixed = [(i, tile_value(t)) for i, t in enumerate(tiles) if not is_joker(t)]
    jokers = [i for i, t in enumerate(tiles) if is_joker(t)]
    if fixed:
        colours = {v[0] for _, v in fixed}
        if len(colours) != 1:
            return []
        i0, (_, n0) = fixed[0]
        starts: Iterable[int] = (step(n0, -i0),)
    else:
        colours = set(COLOURS)
        starts = range(1, HIGHEST + 1)
    if not any_colour:
        for i in jokers:
            colours &= set(joker_colours(tiles[i]))
    out: list[Option] = []
    for start in starts:
        if any(v[1] != step(start, i) for i, v in fixed):
            continue
        for colour in sorted(colours, key=COLOURS.index):
            out.append(("run", tuple((colour, step(start, i)) for i in jokers)))
    return out


def group_options(tiles: Sequence[str], *, any_colour: bool = False) -> list[Option]:
    """Every way ``tiles`` form a group (``nummix.group``): 3-4 tiles, one number,
    different colours."""
    if len(tiles) not in GROUP_SIZES:
        return []
    fixed = [tile_value(t) for t in tiles if not is_joker(t)]
    jokers = [t for t in tiles if is_joker(t)]
    numbers = {v[1] for v in fixed}
    used = [v[0] for v in fixed]
    if len(numbers) > 1 or len(set(used)) != len(used):
        return []
    choices = [COLOURS if any_colour else joker_colours(j) for j in jokers]
    out: list[Option] = []
    colour_sets = [combo for combo in itertools.product(*choices)
                   if len(set(combo)) == len(combo) and not set(combo) & set(used)]
    for n in (numbers or range(1, HIGHEST + 1)):
        for combo in colour_sets:
            out.append(("group", tuple((c, n) for c in combo)))
    return out


def line_options(tiles: Sequence[str]) -> list[Option]:
    return run_options(tiles) + group_options(tiles)


def failure(tiles: Sequence[str]) -> tuple[str, str]:
    """The rule a line with no valid reading breaks, and why in words."""
    size = len(tiles)
    if size < MIN_CONSTRUCT:
        return "nummix.size", f"only {size} tiles in a line; a construct needs at least 3"
    if run_options(tiles, any_colour=True) or group_options(tiles, any_colour=True):
        return "nummix.joker", "a joker here would need a colour it does not show"
    if run_options(list(reversed(tiles))):
        return "nummix.direction", ("the numbers fall in reading direction; a run rises "
                                    "left to right or top to bottom")
    fixed = [tile_value(t) for t in tiles if not is_joker(t)]
    numbers = {v[1] for v in fixed}
    colours = [v[0] for v in fixed]
    if len(numbers) == 1 and size > 1:
        if size > max(GROUP_SIZES):
            return "nummix.group", f"a group has 3 or 4 tiles, this one has {size}"
        dup = sorted({COLOUR_NAMES[c] for c in colours if colours.count(c) > 1})
        return "nummix.group", f"a group needs different colours; {', '.join(dup)} twice"
    if size > MAX_RUN:
        return "nummix.run", f"a run has at most {MAX_RUN} tiles, this line has {size}"
    if len(set(colours)) > 1:
        return "nummix.run", ("neither a run (the colours differ) nor a group (the numbers "
                              "differ)")
    return "nummix.run", "the numbers do not rise by one (after 17 comes 1)"


# --- checking a whole table -----------------------------------------------------------


@dataclass(frozen=True)
class Construct:
    """One line of the table and its verdict."""

    cells: tuple[Cell, ...]
    tiles: tuple[str, ...]
    horizontal: bool
    kind: str
    valid: bool
    jokers: tuple[tuple[Cell, Value], ...] = ()

    def to_json(self) -> dict[str, JSON]:
        return {
            "cells": [list(p) for p in self.cells],
            "tiles": list(self.tiles),
            "direction": "horizontal" if self.horizontal else "vertical",
            "kind": self.kind,
            "valid": self.valid,
            "jokers": [{"cell": list(p), "stands_for": value_tile(v)} for p, v in self.jokers],
        }


@dataclass(frozen=True)
class TableVerdict:
    constructs: tuple[Construct, ...]
    violations: tuple[Violation, ...]
    assignment: Mapping[Cell, Value] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return not self.violations


def _cells_json(cells: Iterable[Cell]) -> list[list[int]]:
    return [list(p) for p in cells]


def _solve(lines: Sequence[tuple[int, list[dict[Cell, Value]]]]) -> dict[Cell, Value] | None:
    """One joker assignment fitting every line (each given as its index and options),
    or None. Lines with the fewest options are tried first."""
    order = sorted(lines, key=lambda x: len(x[1]))
    assignment: dict[Cell, Value] = {}

    def go(k: int) -> bool:
        if k == len(order):
            return True
        idx, options = order[k]
        for opt in options:
            if all(assignment.get(p, v) == v for p, v in opt.items()):
                added = [p for p in opt if p not in assignment]
                for p in added:
                    assignment[p] = opt[p]
                if go(k + 1):
                    return True
                for p in added:
                    del assignment[p]
        return False

    return assignment if go(0) else None


def check_table(cells: Mapping[Cell, str]) -> TableVerdict:
    """Every construct of the table and every rule it breaks (``nummix.size``, ``run``,
    ``direction``, ``group``, ``joker``); jokers are solved over the whole table."""
    lines, lone = find_lines(cells)
    violations: list[Violation] = []
    for p in lone:
        violations.append(violation(
            "nummix.size", f"{describe_tile(cells[p])} stands alone; every tile belongs to a "
            "line of at least 3", cells=[list(p)], tile=cells[p]))
    kinds: dict[int, str] = {}
    local: dict[int, list[Option]] = {}
    for i, line in enumerate(lines):
        tiles = [cells[p] for p in line.cells]
        opts = line_options(tiles)
        if not opts:
            rule, why = failure(tiles)
            violations.append(violation(
                rule, why, cells=_cells_json(line.cells), tiles=tiles,
                direction="horizontal" if line.horizontal else "vertical"))
            kinds[i] = "invalid"
        else:
            local[i] = opts
    # nummix.joker: one value per joker for all its lines; solve each joker-connected part
    with_jokers: dict[int, list[dict[Cell, Value]]] = {}
    for i, opts in local.items():
        jcells = [p for p in lines[i].cells if is_joker(cells[p])]
        if not jcells:
            kinds[i] = opts[0][0]
            continue
        seen: list[dict[Cell, Value]] = []
        for _, values in opts:
            d = dict(zip(jcells, values, strict=True))
            if d not in seen:
                seen.append(d)
        with_jokers[i] = seen
    parent: dict[int, int] = {i: i for i in with_jokers}

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    owner: dict[Cell, int] = {}
    for i in with_jokers:
        for p in lines[i].cells:
            if is_joker(cells[p]):
                if p in owner:
                    parent[root(i)] = root(owner[p])
                else:
                    owner[p] = i
    parts: dict[int, list[int]] = {}
    for i in with_jokers:
        parts.setdefault(root(i), []).append(i)
    assignment: dict[Cell, Value] = {}
    for members in parts.values():
        solved = _solve([(i, with_jokers[i]) for i in members])
        jcells = sorted({p for i in members for p in lines[i].cells if is_joker(cells[p])})
        if solved is None:
            for i in members:
                kinds[i] = "invalid"
            names = ", ".join(f"{cells[p]} at {list(p)}" for p in jcells)
            violations.append(violation(
                "nummix.joker", f"no single value fits every line of {names}: a joker at a "
                "crossing must stand for the same tile in both lines",
                cells=_cells_json(jcells), tiles=[cells[p] for p in jcells]))
            continue
        assignment.update(solved)
    constructs = []
    for i, line in enumerate(lines):
        line_tiles = tuple(cells[p] for p in line.cells)
        jokers = tuple((p, assignment[p]) for p in line.cells if p in assignment)
        kind = kinds.get(i)
        if kind is None:  # a joker line that was solved: read its kind from the values
            plain = [value_tile(assignment[p]) if is_joker(cells[p]) else cells[p]
                     for p in line.cells]
            kind = "run" if run_options(plain) else "group"
        constructs.append(Construct(line.cells, line_tiles, line.horizontal, kind,
                                    kind != "invalid", jokers))
    return TableVerdict(tuple(constructs), tuple(violations), assignment)


def supply_violations(counts: Counter[str], where: str,
                      cells: Mapping[Cell, str] | None = None) -> list[Violation]:
    """``nummix.tiles``: more copies of a tile than the set has (naming the table
    ``cells`` that hold it, when given)."""
    out = []
    for tile, n in sorted(counts.items()):
        if n > SUPPLY[tile]:
            out.append(violation(
                "nummix.tiles", f"{n} x {describe_tile(tile)} in {where}, but the set has "
                f"only {SUPPLY[tile]}", tile=tile, count=n,
                cells=tile_cells(cells, tile) if cells else None))
    return out


def tile_cells(cells: Mapping[Cell, str], tile: str) -> list[list[int]]:
    return [list(p) for p, t in sorted(cells.items()) if t == tile]


# --- checking a turn ------------------------------------------------------------------


@dataclass(frozen=True)
class TurnVerdict:
    table: TableVerdict
    violations: tuple[Violation, ...]
    laid: tuple[str, ...]
    rack_left: tuple[str, ...]

    @property
    def valid(self) -> bool:
        return not self.violations


def check_turn(before: Mapping[Cell, str], after: Mapping[Cell, str], rack: Sequence[str],
               *, pending: Sequence[str] = (), passed: Sequence[str] = (),
               first_play: bool | None = None) -> TurnVerdict:
    """The verdict on one turn: ``before`` and ``after`` the table, the player's
    ``rack`` before the turn, the jokers they drew last turn (``pending``) and those they
    hand on (``passed``). ``first_play`` defaults to "the table was empty"."""
    violations: list[Violation] = []
    b, a, r = Counter(before.values()), Counter(after.values()), Counter(rack)
    violations += supply_violations(b + r, "the table before the turn and the rack", before)
    violations += supply_violations(a, "the table after the turn", after)
    for tile, n in sorted((b - a).items()):
        violations.append(violation(
            "nummix.kept", f"{n} x {describe_tile(tile)} left the table; tiles on the table "
            "stay on the table (rearranging is allowed)", tile=tile, count=n,
            cells=tile_cells(before, tile)))
    added = a - b
    for tile, n in sorted((added - r).items()):
        violations.append(violation(
            "nummix.rack", f"{n} x {describe_tile(tile)} was laid but is not on the rack",
            tile=tile, count=n, cells=tile_cells(after, tile)))
    laid = added & r
    left = r - laid
    table = check_table(after)
    violations += table.violations
    if first_play is None:
        first_play = not before
    if first_play and after:
        shapes = table.constructs
        one_line = (len(shapes) == 1 and len(shapes[0].cells) == len(after)
                    and len(after) >= MIN_CONSTRUCT)
        if not one_line:
            violations.append(violation(
                "nummix.first_play", f"the first play is one run or group of at least 3 "
                f"tiles; here {len(after)} tiles form {len(shapes)} lines",
                cells=_cells_json(sorted(after))))
    pend = Counter(pending)
    pas = Counter(passed)
    for tile in sorted(pas - pend):
        violations.append(violation(
            "nummix.joker_pass", f"{describe_tile(tile)} is passed on, but only a joker drawn "
            "last turn may be passed on", tile=tile))
    for tile in sorted(pas - left):
        violations.append(violation(
            "nummix.rack", f"{describe_tile(tile)} is passed on but is not left on the rack",
            tile=tile))
    for tile in sorted(pend - laid - pas):
        violations.append(violation(
            "nummix.joker_pass", f"{describe_tile(tile)} was drawn last turn: lay it or pass "
            "it on this turn", tile=tile))
    left_after_pass = left - pas
    return TurnVerdict(table, tuple(violations), tuple(sorted(laid.elements(), key=tile_key)),
                       tuple(sorted(left_after_pass.elements(), key=tile_key)))


def tile_key(tile: str) -> tuple[int, int, str]:
    """Sort order for tiles: by colour, then number; jokers last."""
    if is_joker(tile):
        return (len(COLOURS), 0, tile)
    c, n = tile_value(tile)
    return (COLOURS.index(c), n, "")


def verdict_json(table: TableVerdict) -> dict[str, Any]:
    return {"constructs": [c.to_json() for c in table.constructs],
            "jokers": [{"cell": list(p), "stands_for": value_tile(v)}
                       for p, v in sorted(table.assignment.items())]}
