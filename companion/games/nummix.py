"""Nummix (RULES.md section 4): the whole game, the ``companion check`` contract and the
``companion hint`` move finder.

The rules checker lives in ``nummix_core`` (tiles, notation, constructs, jokers, turns)
and the move finder in ``nummix_finder``; this module is the game protocol on top.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from companion.games.base import (
    JSON,
    IllegalPlay,
    InputError,
    Violation,
    check_player,
    expect,
    optional,
    per_player,
    read_players,
    require,
    violation,
)
from companion.games.nummix_core import (
    ALL_TILES,
    Cell,
    Grid,
    TurnVerdict,
    check_table,
    check_turn,
    format_grid,
    is_joker,
    normalise,
    parse_grid,
    parse_rack,
    supply_violations,
    tile_key,
    verdict_json,
)
from companion.games.nummix_finder import KIND_ORDER, KINDS, FinderResult, find_play

# --- decisions ------------------------------------------------------------------------

HAND_SIZES = {2: 17, 3: 15, 4: 13}
"""Tiles dealt per player count (RULES.md 4, Setup)."""
DEALT_JOKERS_MUST_MOVE = False
"""*(decision)* Only a joker drawn after a turn must be laid or passed on next turn
(``nummix.joker_pass``); jokers dealt at the start are ordinary rack tiles."""
PASS_TO_NEXT_PLAYER = True
"""*(decision)* A joker passed on goes to the next player (to the left) who still has
tiles; it is not "drawn" for them, so they need not move it on."""
REMAINING_RANKED_BY_TILES = True
"""*(decision)* When the game ends with several players still holding tiles (empty bag,
nobody can lay), they take the remaining places by fewest tiles left; ties share."""
EXCHANGE_DUPLICATES = False
"""*(decision)* The optional exchange of duplicate tiles at the start is not played
by ``start`` (the table may agree to it; it changes nothing checked later)."""

Table = tuple[tuple[Cell, str], ...]


def as_table(cells: Mapping[Cell, str]) -> Table:
    return tuple(sorted(cells.items()))


# --- state and plays --------------------------------------------------------------------


@dataclass(frozen=True)
class NummixState:
    """A game: seats, the table, each rack, the bag (drawn from the front), whose turn,
    the jokers each player drew last turn, the finishing order and whether it is over."""

    players: tuple[str, ...]
    table: Table
    racks: tuple[tuple[str, ...], ...]
    bag: tuple[str, ...]
    turn: int
    pending: tuple[tuple[str, ...], ...]
    done: tuple[str, ...] = ()
    over: bool = False
    turns_played: int = 0

    def rack_of(self, player: str) -> tuple[str, ...]:
        return self.racks[self.players.index(player)]

    def cells(self) -> dict[Cell, str]:
        return dict(self.table)


@dataclass(frozen=True)
class NummixPlay:
    """A turn: the table after it (unchanged for a plain draw) and jokers passed on."""

    player: str
    table: Table
    passed: tuple[str, ...] = ()


def _sorted(tiles: Counter[str] | Sequence[str]) -> tuple[str, ...]:
    items = tiles.elements() if isinstance(tiles, Counter) else tiles
    return tuple(sorted(items, key=tile_key))


class NummixGame:
    name = "nummix"
    min_players = 2
    max_players = 4

    # --- the protocol ---------------------------------------------------------------

    def start(self, players: Sequence[str], rng: random.Random, **options: Any) -> NummixState:
        """Shuffle the 142 tiles and deal 17/15/13 each (RULES.md 4, Setup)."""
        if not self.min_players <= len(players) <= self.max_players:
            raise InputError("players", f"Nummix takes 2 to 4 players, got {len(players)}")
        bag = list(ALL_TILES)
        rng.shuffle(bag)
        size = HAND_SIZES[len(players)]
        racks = tuple(_sorted(bag[i * size:(i + 1) * size]) for i in range(len(players)))
        rest = tuple(bag[len(players) * size:])
        return NummixState(tuple(players), (), racks, rest, 0,
                           tuple(() for _ in players))

    def to_act(self, state: NummixState) -> tuple[str, ...]:
        return () if state.over else (state.players[state.turn],)

    def legal_plays(self, state: NummixState) -> list[NummixPlay]:
        """The move finder's play (if it finds one) and drawing without laying. The full
        set of legal rearrangements is far too large to list, so only the kinds the
        finder searches (``nummix_finder.KINDS``) appear here."""
        if state.over:
            return []
        player = state.players[state.turn]
        rack = state.rack_of(player)
        pending = state.pending[state.turn]
        plays = []
        result = find_play(state.cells(), rack)
        if result.found:
            laid = Counter(result.tiles_used)
            passed = _sorted(Counter(pending) - laid)
            plays.append(NummixPlay(player, as_table(result.after), passed))
        plays.append(NummixPlay(player, state.table, _sorted(pending)))
        return plays

    def check_play(self, state: NummixState, play: NummixPlay) -> tuple[Violation, ...]:
        return self._judge(state, play)[0]

    def _judge(self, state: NummixState, play: NummixPlay
               ) -> tuple[tuple[Violation, ...], TurnVerdict | None]:
        if state.over:
            return (violation("nummix.turn", "the game is over", player=play.player),), None
        current = state.players[state.turn]
        if play.player != current:
            return (violation("nummix.turn", f"it is {current}'s turn, not {play.player}'s",
                              player=play.player),), None
        verdict = check_turn(state.cells(), dict(play.table), state.rack_of(current),
                             pending=state.pending[state.turn], passed=play.passed,
                             first_play=not state.table)
        return verdict.violations, verdict

    def apply(self, state: NummixState, play: NummixPlay) -> NummixState:
        """Lay, pass jokers on, draw one tile unless done (RULES.md 4, Turn and End)."""
        problems, verdict = self._judge(state, play)
        if problems or verdict is None:
            raise IllegalPlay(problems)
        me = state.turn
        racks = [Counter(r) for r in state.racks]
        racks[me] = Counter(verdict.rack_left)
        pending = list(state.pending)
        pending[me] = ()
        done = list(state.done)
        if play.passed:
            target = self._next_active(state, me, done)
            racks[target] += Counter(play.passed)
        bag = list(state.bag)
        if +racks[me]:
            if bag:
                drawn = bag.pop(0)
                racks[me][drawn] += 1
                if is_joker(drawn):
                    pending[me] = (drawn,)
        elif state.players[me] not in done:
            done.append(state.players[me])
        new = replace(state, table=play.table, racks=tuple(_sorted(r) for r in racks),
                      bag=tuple(bag), pending=tuple(pending), done=tuple(done),
                      turns_played=state.turns_played + 1)
        return self._after_turn(new, me)

    def scores(self, state: NummixState) -> dict[str, int]:
        """Tiles left on each rack (fewer is better; 0 = done). Placings are in
        ``placings``."""
        return {p: len(r) for p, r in zip(state.players, state.racks, strict=True)}

    def is_over(self, state: NummixState) -> bool:
        return state.over

    def placings(self, state: NummixState) -> list[list[str]]:
        """Places so far: the players who are done in the order they finished, then (once
        the game is over) the others by fewest tiles left; tied players share a place."""
        places = [[p] for p in state.done]
        if state.over:
            rest = [p for p in state.players if p not in state.done]
            counts = self.scores(state)
            if REMAINING_RANKED_BY_TILES:
                for n in sorted({counts[p] for p in rest}):
                    places.append([p for p in rest if counts[p] == n])
            elif rest:
                places.append(rest)
        return places

    # --- turn order and the end --------------------------------------------------------

    def _next_active(self, state: NummixState, seat: int, done: Sequence[str]) -> int:
        n = len(state.players)
        for k in range(1, n + 1):
            i = (seat + k) % n
            if state.players[i] not in done:
                return i
        return seat

    def _after_turn(self, state: NummixState, seat: int) -> NummixState:
        """Move the turn on and test both game ends: one player left with tiles, or an
        empty bag and nobody who can lay (by the move finder)."""
        active = [i for i, p in enumerate(state.players) if p not in state.done]
        if len(active) <= 1:
            return replace(state, over=True)
        if not state.bag:
            cells = state.cells()
            if not any(find_play(cells, state.racks[i]).found for i in active):
                return replace(state, over=True)
        return replace(state, turn=self._next_active(state, seat, state.done))

    # --- the JSON contract ---------------------------------------------------------------

    def check_document(self, doc: Mapping[str, JSON]) -> dict[str, JSON]:
        """A table (``grid``, optionally with a ``rack``), a turn (``before``, ``after``,
        ``rack``, optionally ``pending``/``passed`` jokers and ``player``) or a game
        position (``players``, ``grid``, ``racks``, ``bag``, optionally ``done``)."""
        if "before" in doc or "after" in doc:
            return self._check_turn_doc(doc)
        if "racks" in doc:
            return self._check_position_doc(doc)
        if "grid" not in doc:
            raise InputError("grid", "missing: give a table as grid, or a turn as before, "
                             "after and rack")
        grid = parse_grid(doc["grid"], "grid")
        rack = parse_rack(doc["rack"], "rack") if doc.get("rack") is not None else []
        table = check_table(grid.cells)
        violations = list(supply_violations(Counter(grid.cells.values()) + Counter(rack),
                                            "the table and the rack"
                                            if rack else "the table", grid.cells))
        violations += table.violations
        out: dict[str, JSON] = {"game": "nummix", "valid": not violations,
                                "violations": [v.to_json() for v in violations]}
        out.update(verdict_json(table))
        out["tiles_on_table"] = len(grid.cells)
        out["scores"] = {}
        out["summary"] = _construct_lines(out)
        return out

    def _check_turn_doc(self, doc: Mapping[str, JSON]) -> dict[str, JSON]:
        for key in ("before", "after", "rack"):
            if key not in doc:
                raise InputError(key, "missing (a turn has before, after and rack)")
        before = parse_grid(doc["before"], "before")
        after = parse_grid(doc["after"], "after")
        rack = parse_rack(doc["rack"], "rack")
        pending = parse_rack(optional(doc, "pending", list, []), "pending")
        passed = parse_rack(optional(doc, "passed", list, []), "passed")
        for name, tiles in (("pending", pending), ("passed", passed)):
            for i, t in enumerate(tiles):
                if not is_joker(t):
                    raise InputError(f"{name}[{i}]", f"{t!r} is not a joker")
        player = optional(doc, "player", str, "player")
        first = optional(doc, "first_play", bool, None)
        verdict = check_turn(before.cells, after.cells, rack, pending=pending,
                             passed=passed, first_play=first)
        out: dict[str, JSON] = {"game": "nummix", "valid": verdict.valid,
                                "violations": [v.to_json() for v in verdict.violations]}
        out.update(verdict_json(verdict.table))
        out["tiles_laid"] = list(verdict.laid)
        out["rack_left"] = list(verdict.rack_left)
        out["done"] = verdict.valid and not verdict.rack_left
        out["scores"] = {player: len(verdict.rack_left)}
        summary = _construct_lines(out)
        summary.append(f"{player} lays {', '.join(verdict.laid) or 'nothing'}; "
                       f"{len(verdict.rack_left)} tiles left"
                       + (" (done)" if out["done"] else ""))
        out["summary"] = summary
        return out

    def _check_position_doc(self, doc: Mapping[str, JSON]) -> dict[str, JSON]:
        """Who is done, whether the game is over (RULES.md 4, End) and the placings."""
        players = read_players(doc, low=self.min_players, high=self.max_players)
        grid = parse_grid(require(doc, "grid", list), "grid")
        table = per_player(doc, "racks", players, complete=True)
        racks = {p: parse_rack(table[p], f"racks.{p}") for p in players}
        bag = require(doc, "bag", int)
        if bag < 0:
            raise InputError("bag", "the number of tiles in the bag cannot be negative")
        done = [check_player(p, players, f"done[{i}]")
                for i, p in enumerate(optional(doc, "done", list, []))]
        if len(set(done)) != len(done):
            raise InputError("done", "a player can finish only once")
        for p in done:
            if racks[p]:
                raise InputError(f"racks.{p}", f"{p} is listed as done but has tiles")
        done += [p for p in players if not racks[p] and p not in done]
        counts: Counter[str] = Counter(grid.cells.values())
        for p in players:
            counts += Counter(racks[p])
        violations = supply_violations(counts, "the table and the racks", grid.cells)
        verdict = check_table(grid.cells)
        violations += verdict.violations
        if sum(counts.values()) + bag > len(ALL_TILES):
            violations.append(violation(
                "nummix.tiles", f"{sum(counts.values())} tiles in play and {bag} in the bag: "
                f"the set has {len(ALL_TILES)}", count=sum(counts.values()) + bag))
        active = [p for p in players if p not in done]
        can = {p: find_play(grid.cells, racks[p]).found for p in active} if not bag else {}
        over = len(active) <= 1 or (bag == 0 and not any(can.values()))
        state = NummixState(players, as_table(grid.cells),
                            tuple(_sorted(racks[p]) for p in players), ("?",) * bag, 0,
                            tuple(() for _ in players), tuple(done), over)
        places = self.placings(state)
        out: dict[str, JSON] = {"game": "nummix", "valid": not violations,
                                "violations": [v.to_json() for v in violations]}
        out.update(verdict_json(verdict))
        out.update({"scores": self.scores(state), "done": done, "game_over": over,
                    "placings": places, "winners": places[0] if places else []})
        if can:
            out["can_lay"] = can
        summary = _construct_lines(out)
        summary.append("places: " + "; ".join(f"{i + 1}. {', '.join(pl)}"
                                              for i, pl in enumerate(places)))
        if not over:
            summary.append(f"game goes on: {len(active)} players hold tiles, bag {bag}")
        out["summary"] = summary
        return out

    # --- the move finder (companion hint) --------------------------------------------------

    def hint_document(self, doc: Mapping[str, JSON]) -> dict[str, JSON]:
        """The finder's play for ``grid`` and ``rack``, with its check verdict."""
        if "grid" not in doc:
            raise InputError("grid", "missing: a hint needs the table as grid")
        if "rack" not in doc:
            raise InputError("rack", "missing: a hint needs the player's rack")
        grid = parse_grid(doc["grid"], "grid")
        rack = parse_rack(doc["rack"], "rack")
        kinds = list(KIND_ORDER)
        if doc.get("kinds") is not None:
            wanted = expect(doc["kinds"], list, "kinds")
            for i, k in enumerate(wanted):
                if k not in KINDS:
                    raise InputError(f"kinds[{i}]", f"unknown kind {k!r} "
                                     f"(kinds: {', '.join(KIND_ORDER)})")
            kinds = [k for k in KIND_ORDER if k in wanted]
        out: dict[str, JSON] = {"game": "nummix", "kinds_searched": kinds,
                                "kinds_described": {k: KINDS[k] for k in kinds}}
        supply = supply_violations(Counter(grid.cells.values()) + Counter(rack),
                                   "the table and the rack")
        if supply:
            out.update({"found": False, "grid": doc["grid"], "tiles_used": [],
                        "reason": "more tiles than the set has",
                        "valid": False, "violations": [v.to_json() for v in supply],
                        "scores": {}})
            return out
        table = check_table(grid.cells)
        if not table.valid:
            out.update({"found": False, "grid": doc["grid"], "tiles_used": [], "steps": [],
                        "reason": "the table is not valid now; fix it before laying",
                        "valid": False, "violations": [v.to_json() for v in table.violations],
                        "scores": {}})
            return out
        result = find_play(grid.cells, rack, kinds)
        out.update(_hint_json(result, grid))
        if not rack:
            out["reason"] = "the rack is empty"
        return out

    def format_hint(self, result: Mapping[str, JSON]) -> str:
        """Human output of ``hint_document``."""
        lines: list[str] = []
        if result.get("found"):
            used = result.get("tiles_used", [])
            lines.append(f"play: lay {len(used)} tile(s): {' '.join(used)}")
            for s in result.get("steps", []):
                lines.append(f"  {s['kind']}: {' '.join(s['tiles'])}")
            lines.append("new table:")
            lines += ["  " + row for row in result.get("grid_aligned", result["grid"])]
            lines.append("check: " + ("valid" if result.get("valid") else "NOT valid"))
        else:
            lines.append(f"no play: {result.get('reason', '')}")
        for v in result.get("violations", []):
            lines.append(f"{v['rule']}: {v['message']}")
        lines.append("kinds searched: " + ", ".join(result.get("kinds_searched", [])))
        return "\n".join(lines)


def _hint_json(result: FinderResult, grid: Grid) -> dict[str, JSON]:
    if not result.found:
        return {"found": False, "grid": format_grid(grid.cells, grid.rows, grid.cols),
                "tiles_used": [], "steps": [], "reason": result.reason,
                "valid": False, "violations": [], "scores": {}}
    cells = dict(result.after)
    min_r = min([0] + [r for r, _ in cells])
    min_c = min([0] + [c for _, c in cells])
    shifted = normalise(cells)
    rows, cols = grid.rows - min_r, grid.cols - min_c
    verdict: TurnVerdict | None = result.verdict
    assert verdict is not None
    out: dict[str, JSON] = {
        "found": True,
        "grid": format_grid(shifted, rows, cols),
        "grid_aligned": format_grid(shifted, rows, cols, align=True),
        "tiles_used": list(result.tiles_used),
        "steps": [{"kind": s.kind, "tiles": list(s.used)} for s in result.steps],
        "shifted_by": [-min_r, -min_c],
        "valid": verdict.valid,
        "violations": [v.to_json() for v in verdict.violations],
        "scores": {},
    }
    out["check"] = {"valid": verdict.valid, **verdict_json(verdict.table)}
    return out


def _construct_lines(out: Mapping[str, Any]) -> list[str]:
    lines = []
    for c in out.get("constructs", []):
        jokers = "".join(f" ({j['cell']} = {j['stands_for']})" for j in c["jokers"])
        lines.append(f"{c['direction']} {c['kind']}: {' '.join(c['tiles'])}"
                     f"{'' if c['valid'] else '  INVALID'}{jokers}")
    return lines


GAME = NummixGame()
