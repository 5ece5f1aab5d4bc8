"""The Nummix move finder: a legal play for a table and a rack that lays many tiles.

Greedy: it repeatedly takes the single step that lays the most rack tiles, of the kinds
in ``KINDS``, until no step is left. Every step is checked by the rules checker
(``nummix_core.check_table``), and the whole play by ``check_turn``, so a play it
returns is always legal; "no play" means no play *of these kinds* exists. It also
answers the game's end question "can anyone still lay?" (RULES.md 4, End).
"""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from companion.benchmarks import Section
from companion.games.nummix_core import (
    ALL_TILES,
    COLOURS,
    GROUP_SIZES,
    HIGHEST,
    JOKERS,
    MAX_RUN,
    MIN_CONSTRUCT,
    Cell,
    TableVerdict,
    TurnVerdict,
    Value,
    check_table,
    check_turn,
    is_joker,
    joker_colours,
    line_options,
    step,
    tile_key,
    tile_value,
)

KINDS: dict[str, str] = {
    "new": "a run or group made from rack tiles alone, laid in free space",
    "extend": "rack tiles added to either end of a run (also across 17 -> 1) or to a "
              "group of 3, without moving table tiles",
    "cross": "a new run or group through or against one table tile, at a right angle to "
             "its line (corners and crosses), without moving table tiles",
    "split": "a run of 5 or more split in two to make room for a rack tile of the same "
             "colour and a number already in it; one half moves",
    "take": "one or two tiles taken from the ends of long runs or 4-groups (or from the "
            "middle of a long run) to form a new run or group with rack tiles",
}
"""The kinds of play the finder searches, by name (``kinds_searched`` in its output)."""

KIND_ORDER = tuple(KINDS)
"""On equally many tiles laid, the earlier kind wins (it moves fewer table tiles)."""


@dataclass(frozen=True)
class Step:
    """One step of a play: its kind, the rack tiles it lays, the cells it changes."""

    kind: str
    used: tuple[str, ...]
    changes: tuple[tuple[Cell, str | None], ...]


@dataclass(frozen=True)
class FinderResult:
    found: bool
    before: Mapping[Cell, str]
    after: Mapping[Cell, str]
    steps: tuple[Step, ...]
    tiles_used: tuple[str, ...]
    reason: str
    verdict: TurnVerdict | None


# --- small helpers over a sparse table -------------------------------------------------


def _segment(cells: Mapping[Cell, str], p: Cell, horizontal: bool) -> tuple[Cell, ...]:
    dr, dc = (0, 1) if horizontal else (1, 0)
    r, c = p
    while (r - dr, c - dc) in cells:
        r, c = r - dr, c - dc
    out = [(r, c)]
    while (out[-1][0] + dr, out[-1][1] + dc) in cells:
        out.append((out[-1][0] + dr, out[-1][1] + dc))
    return tuple(out)


def _plain_valid(tiles: Sequence[str]) -> bool:
    """A line without jokers is a run or a group."""
    if len(tiles) < MIN_CONSTRUCT:
        return False
    values = [tile_value(t) for t in tiles]
    colours = {v[0] for v in values}
    if len(colours) == 1:
        if len(values) > MAX_RUN:
            return False
        return all(values[i + 1][1] == step(values[i][1], 1) for i in range(len(values) - 1))
    numbers = {v[1] for v in values}
    return len(numbers) == 1 and len(values) in GROUP_SIZES and len(colours) == len(values)


def _locally_valid(cells: Mapping[Cell, str], changed: Iterable[Cell]) -> bool:
    """The table (valid before the change) is still valid after changing ``changed``:
    only lines through changed cells and their neighbours are looked at, unless a joker
    is in one of them (then the whole table is solved)."""
    around: set[Cell] = set()
    for r, c in changed:
        for q in ((r, c), (r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if q in cells:
                around.add(q)
    seen: set[tuple[Cell, ...]] = set()
    full = False
    for q in around:
        h, v = _segment(cells, q, True), _segment(cells, q, False)
        if len(h) == 1 and len(v) == 1:
            return False
        for seg in (h, v):
            if len(seg) < 2 or seg in seen:
                continue
            seen.add(seg)
            tiles = [cells[x] for x in seg]
            if any(is_joker(t) for t in tiles):
                if not line_options(tiles):
                    return False
                full = True
            elif not _plain_valid(tiles):
                return False
    return check_table(cells).valid if full else True


def _free_origin(cells: Mapping[Cell, str]) -> Cell:
    """A place for a new line that touches nothing: two rows below the table."""
    if not cells:
        return (0, 0)
    return (max(r for r, _ in cells) + 2, max(0, min(c for _, c in cells)))


def _lay(origin: Cell, tiles: Sequence[str]) -> list[tuple[Cell, str | None]]:
    r, c = origin
    return [((r, c + i), t) for i, t in enumerate(tiles)]


def _take(rack: Counter[str], value: Value, *, jokers: bool = True) -> str | None:
    """A rack tile that can stand for ``value`` (the tile itself, else a joker of that
    colour), removed from ``rack``; None if there is none."""
    tile = f"{value[0]}{value[1]}"
    if rack[tile] > 0:
        rack[tile] -= 1
        return tile
    if jokers:
        for j in JOKERS:
            if rack[j] > 0 and value[0] in joker_colours(j):
                rack[j] -= 1
                return j
    return None


def _chain(rack: Counter[str], colour: str, n: int, direction: int, limit: int) -> list[str]:
    """Rack tiles for the numbers after (direction 1) or before (-1) ``n`` in ``colour``,
    as many in a row as there are (at most ``limit``); taken out of ``rack``."""
    out: list[str] = []
    k = n
    while len(out) < limit:
        k = step(k, direction)
        t = _take(rack, (colour, k))
        if t is None:
            break
        out.append(t)
    return out


# --- what can be built from the rack ---------------------------------------------------


def rack_runs(rack: Counter[str]) -> Iterator[list[str]]:
    """The longest run from each colour and start number, with and without jokers."""
    for colour in COLOURS:
        for start in range(1, HIGHEST + 1):
            for jokers in (True, False):
                pool = Counter(rack)
                run: list[str] = []
                for k in range(MAX_RUN):
                    t = _take(pool, (colour, step(start, k)), jokers=jokers)
                    if t is None:
                        break
                    run.append(t)
                if len(run) >= MIN_CONSTRUCT:
                    yield run


def rack_groups(rack: Counter[str], number: int | None = None,
                exclude: str = "") -> Iterator[list[str]]:
    """The largest groups of one number from the rack (real tiles first, then jokers),
    leaving out colours in ``exclude``; several sizes so a caller can fit one."""
    for n in ([number] if number else range(1, HIGHEST + 1)):
        real = [f"{c}{n}" for c in COLOURS if c not in exclude and rack[f"{c}{n}"] > 0]
        missing = [c for c in COLOURS if c not in exclude and rack[f"{c}{n}"] == 0]
        group = list(real)
        pool = Counter(rack)
        for c in missing:
            for j in JOKERS:
                if pool[j] > 0 and c in joker_colours(j):
                    pool[j] -= 1
                    group.append(j)
                    break
        need = MIN_CONSTRUCT - len(exclude)
        top = max(GROUP_SIZES) - len(exclude)
        for size in range(min(len(group), top), need - 1, -1):
            yield group[:size]


# --- the steps ---------------------------------------------------------------------------


def _values(cells: Mapping[Cell, str], verdict: TableVerdict) -> dict[Cell, Value]:
    """What every table tile stands for (jokers as solved by the checker)."""
    assignment = verdict.assignment
    return {p: assignment[p] if is_joker(t) else tile_value(t)
            for p, t in cells.items() if not is_joker(t) or p in assignment}


Lines = list[tuple[tuple[Cell, ...], bool, str]]


def _lines(verdict: TableVerdict) -> Lines:
    """Every construct with its direction and kind (run or group)."""
    return [(c.cells, c.horizontal, c.kind) for c in verdict.constructs if c.valid]


def _extend_steps(cells: Mapping[Cell, str], vals: Mapping[Cell, Value], lines: Lines,
                  rack: Counter[str]) -> Iterator[Step]:
    for line, horizontal, kind in lines:
        dr, dc = (0, 1) if horizontal else (1, 0)
        first, last = line[0], line[-1]
        if kind == "run":
            colour = vals[first][0]
            room = MAX_RUN - len(line)
            for direction, end in ((1, last), (-1, first)):
                pool = Counter(rack)
                tiles = _chain(pool, colour, vals[end][1], direction, room)
                for k in range(len(tiles), 0, -1):
                    changes = [((end[0] + direction * dr * (i + 1),
                                 end[1] + direction * dc * (i + 1)), tiles[i]) for i in range(k)]
                    yield Step("extend", tuple(tiles[:k]), tuple(changes))
        elif len(line) < max(GROUP_SIZES):
            number = vals[first][1]
            have = "".join(vals[p][0] for p in line)
            for tiles in rack_groups(rack, number, have):
                if len(tiles) != 1:
                    continue
                for end, sign in ((last, 1), (first, -1)):
                    q = (end[0] + sign * dr, end[1] + sign * dc)
                    yield Step("extend", (tiles[0],), ((q, tiles[0]),))


def _new_steps(cells: Mapping[Cell, str], rack: Counter[str]) -> Iterator[Step]:
    origin = _free_origin(cells)
    best: dict[tuple[str, ...], None] = {}
    for found in list(rack_runs(rack)) + list(rack_groups(rack)):
        best[tuple(found)] = None
    for tiles in best:
        yield Step("new", tiles, tuple(_lay(origin, tiles)))


Through = dict[Value, list[tuple[list[str], list[str]]]]


def _through(value: Value, rack: Counter[str], cache: Through
             ) -> list[tuple[list[str], list[str]]]:
    """Rack tiles to lay before and after a tile of ``value`` so that the three make a
    run or a group with at least ``minimum`` rack tiles; largest first."""
    if value in cache:
        return cache[value]
    colour, n = value
    pool = Counter(rack)
    before = _chain(pool, colour, n, -1, MAX_RUN - 1)
    after = _chain(pool, colour, n, 1, MAX_RUN - 1 - len(before))
    options: list[tuple[list[str], list[str]]] = []
    for u in range(len(before) + 1):
        for d in range(len(after) + 1):
            if u + d >= MIN_CONSTRUCT - 1:
                options.append((before[:u][::-1], after[:d]))
    for group in rack_groups(rack, n, colour):
        for u in range(len(group) + 1):
            options.append((group[:u], group[u:]))
    options.sort(key=lambda o: -(len(o[0]) + len(o[1])))
    cache[value] = options
    return options


def _cross_steps(cells: Mapping[Cell, str], vals: Mapping[Cell, Value],
                 rack: Counter[str], cache: Through) -> Iterator[Step]:
    for p, value in vals.items():
        for horizontal in (False, True):
            if len(_segment(cells, p, horizontal)) > 1:
                continue
            dr, dc = (0, 1) if horizontal else (1, 0)
            for before, after in _through(value, rack, cache):
                changes = [((p[0] - dr * (len(before) - i), p[1] - dc * (len(before) - i)), t)
                           for i, t in enumerate(before)]
                changes += [((p[0] + dr * (i + 1), p[1] + dc * (i + 1)), t)
                            for i, t in enumerate(after)]
                yield Step("cross", tuple(before + after), tuple(changes))


def _split_steps(cells: Mapping[Cell, str], vals: Mapping[Cell, Value], lines: Lines,
                 rack: Counter[str]) -> Iterator[Step]:
    origin = _free_origin(cells)
    for line, horizontal, kind in lines:
        if kind != "run" or len(line) < 2 * MIN_CONSTRUCT - 1:
            continue
        dr, dc = (0, 1) if horizontal else (1, 0)
        for k in range(MIN_CONSTRUCT - 1, len(line) - MIN_CONSTRUCT + 1):
            pool = Counter(rack)
            tile = _take(pool, vals[line[k]], jokers=False)
            if tile is None:
                continue
            moved = line[k + 1:]
            piece = [tile] + [cells[q] for q in moved]
            # the right half with the rack tile in front: shifted along, or moved away
            shifted: list[tuple[Cell, str | None]] = [(q, None) for q in moved]
            shifted += [((line[k][0] + dr * (i + 2), line[k][1] + dc * (i + 2)), t)
                        for i, t in enumerate(piece)]
            yield Step("split", (tile,), tuple(shifted))
            away: list[tuple[Cell, str | None]] = [(q, None) for q in moved]
            away += _lay(origin, piece)
            yield Step("split", (tile,), tuple(away))


def _removable(lines: Lines) -> list[Cell]:
    """Table tiles that may come off without breaking their line (checked again later):
    ends of runs and groups of 4 or more, and middles of runs of 7 or more."""
    out = []
    for line, _, kind in lines:
        if len(line) > MIN_CONSTRUCT:
            out += [line[0], line[-1]]
        if kind == "run":
            out += list(line[MIN_CONSTRUCT:len(line) - MIN_CONSTRUCT])
    return sorted(set(out))


def _take_steps(cells: Mapping[Cell, str], vals: Mapping[Cell, Value], lines: Lines,
                rack: Counter[str], cache: Through) -> Iterator[Step]:
    origin = _free_origin(cells)
    spare = _removable(lines)
    by_value: dict[Value, list[Cell]] = {}
    for p in spare:
        by_value.setdefault(vals[p], []).append(p)
    for p in spare:  # one table tile and two or more rack tiles
        for before, after in _through(vals[p], rack, cache):
            tiles = before + [cells[p]] + after
            yield Step("take", tuple(before + after), ((p, None), *_lay(origin, tiles)))
    for tile in sorted(+rack, key=tile_key):  # two table tiles and one rack tile
        if is_joker(tile):
            continue
        colour, n = tile_value(tile)
        pairs: list[tuple[Value, Value, int]] = [
            ((colour, step(n, -2)), (colour, step(n, -1)), 2),
            ((colour, step(n, -1)), (colour, step(n, 1)), 1),
            ((colour, step(n, 1)), (colour, step(n, 2)), 0)]
        others = [c for c in COLOURS if c != colour]
        for i, a in enumerate(others):
            for b in others[i + 1:]:
                pairs.append(((a, n), (b, n), 2))
        for va, vb, at in pairs:
            for pa in by_value.get(va, []):
                for pb in by_value.get(vb, []):
                    if pa == pb:
                        continue
                    trio = [cells[pa], cells[pb]]
                    trio.insert(at, tile)
                    yield Step("take", (tile,), ((pa, None), (pb, None), *_lay(origin, trio)))


def _candidates(cells: Mapping[Cell, str], verdict: TableVerdict, rack: Counter[str],
                kinds: Sequence[str]) -> list[Step]:
    vals = _values(cells, verdict)
    lines = _lines(verdict)
    cache: Through = {}
    steps: list[Step] = []
    if "extend" in kinds:
        steps += _extend_steps(cells, vals, lines, rack)
    if "new" in kinds:
        steps += _new_steps(cells, rack)
    if "cross" in kinds:
        steps += _cross_steps(cells, vals, rack, cache)
    if "split" in kinds:
        steps += _split_steps(cells, vals, lines, rack)
    if "take" in kinds:
        steps += _take_steps(cells, vals, lines, rack, cache)
    steps.sort(key=lambda s: (-len(s.used), KIND_ORDER.index(s.kind)))
    return steps


def _apply(cells: Mapping[Cell, str], s: Step) -> dict[Cell, str] | None:
    """The table after a step; None if the step would lay a tile on an occupied cell."""
    vacated = {p for p, t in s.changes if t is None}
    if any(t is not None and p in cells and p not in vacated for p, t in s.changes):
        return None
    out = dict(cells)
    for p, _ in s.changes:
        out.pop(p, None)
    for p, t in s.changes:
        if t is not None:
            out[p] = t
    return out


def find_play(before: Mapping[Cell, str], rack: Sequence[str],
              kinds: Sequence[str] = KIND_ORDER) -> FinderResult:
    """A legal play laying as many rack tiles as the greedy search can, or the reason
    there is none. On an empty table the play is one run or group (nummix.first_play)."""
    start = check_table(before)
    if not start.valid:
        return FinderResult(False, before, before, (), (), "the table is not valid now: "
                            + "; ".join(f"{v.rule}: {v.message}" for v in start.violations),
                            None)
    pool = Counter(rack)
    cells = dict(before)
    verdict = start
    steps: list[Step] = []
    while +pool:
        first = not cells
        options = _candidates(cells, verdict, pool, ("new",) if first else kinds)
        chosen = None
        for s in options:
            if Counter(s.used) - pool:
                continue
            after = _apply(cells, s)
            if after is None or not _locally_valid(after, [p for p, _ in s.changes]):
                continue
            checked = check_table(after)
            if not checked.valid:
                continue
            chosen, cells, verdict = s, after, checked
            break
        if chosen is None:
            break
        pool -= Counter(chosen.used)
        steps.append(chosen)
        if first:
            break  # the first play on an empty table is a single construct
    if not steps:
        return FinderResult(False, before, before, (), (), "no play of the kinds searched: "
                            + ", ".join(kinds), None)
    used = tuple(sorted((Counter(rack) - pool).elements(), key=tile_key))
    final = check_turn(before, cells, rack)
    if not final.valid:  # never expected: every step was checked
        return FinderResult(False, before, before, (), (), "internal: the play found "
                            "did not pass the checker", final)
    return FinderResult(True, before, cells, tuple(steps), used, "", final)


def can_lay(table: Mapping[Cell, str], rack: Sequence[str]) -> bool:
    """Whether the finder finds any play (the game's end test)."""
    return find_play(table, rack).found


# --- random positions and the benchmark --------------------------------------------------


def random_table(rng: random.Random, target: int = 100) -> tuple[dict[Cell, str], list[str]]:
    """A valid table of about ``target`` tiles (rows of runs and groups, no jokers)
    and the other tiles of the set, shuffled."""
    bag = list(ALL_TILES)
    rng.shuffle(bag)
    pool = Counter(t for t in bag if not is_joker(t))
    cells: dict[Cell, str] = {}
    row = 0
    while len(cells) < target:
        col = 0
        while col < 40 and len(cells) < target:
            if rng.random() < 0.6:
                colour = rng.choice(COLOURS)
                start, size = rng.randint(1, HIGHEST), rng.randint(3, 7)
                tiles = [f"{colour}{step(start, i)}" for i in range(size)]
            else:
                n = rng.randint(1, HIGHEST)
                tiles = [f"{c}{n}" for c in rng.sample(COLOURS, rng.choice(GROUP_SIZES))]
            need = Counter(tiles)
            if need - pool:
                col += 1
                continue
            pool -= need
            for i, t in enumerate(tiles):
                cells[(row, col + i)] = t
            col += len(tiles) + 1
        row += 2
    rest = list((Counter(bag) - Counter(cells.values())).elements())
    rng.shuffle(rest)
    return cells, rest


def played_table(seed: int, target: int = 100) -> tuple[dict[Cell, str], list[str]]:
    """A table of about ``target`` tiles grown by playing a seeded game with the finder
    (so it has crossings and jokers), and the tiles not on it, shuffled."""
    from companion.games.nummix import GAME  # the game module imports this one

    rng = random.Random(seed)
    state = GAME.start(["A", "B", "C", "D"], rng)
    while not GAME.is_over(state) and len(state.table) < target:
        state = GAME.apply(state, GAME.legal_plays(state)[0])
    cells = dict(state.table)
    rest = list((Counter(ALL_TILES) - Counter(cells.values())).elements())
    rng.shuffle(rest)
    return cells, rest


def bench_nummix_finder(*, quick: bool) -> Section:
    """Time the finder on tables of about 100 tiles with racks of 17 (median over
    seeded positions; the goal is under 1 s)."""
    positions = 5 if quick else 21
    rows = []
    makers: list[tuple[str, Callable[[int], tuple[dict[Cell, str], list[str]]]]] = [
        ("rows of runs and groups", lambda seed: random_table(random.Random(seed), 100)),
        ("grown by a played game", lambda seed: played_table(seed, 100))]
    for label, make in makers:
        times, laid, sizes = [], [], []
        for seed in range(positions):
            table, rest = make(seed)
            rack = rest[:17]
            t0 = time.perf_counter()
            result = find_play(table, rack)
            times.append((time.perf_counter() - t0) * 1000.0)
            laid.append(len(result.tiles_used))
            sizes.append(len(table))
        rows.append([label, str(positions), f"{statistics.median(sizes):.0f}", "17",
                     f"{statistics.median(times):.1f}", f"{max(times):.1f}",
                     f"{statistics.median(laid):.0f}"])
    return Section(
        "Nummix move finder",
        ["tables", "positions", "median table tiles", "rack", "median ms", "max ms",
         "median tiles laid"],
        rows,
        ["Seeded positions: tables of about 100 tiles, either laid out in rows or grown by "
         "a 4-player game played with the finder (crossings, jokers); a rack of 17 from the "
         "tiles not on the table. Goal: under 1000 ms per position.",
         "Kinds searched: " + ", ".join(KIND_ORDER) + "."])
