"""Game states for scenes, in the exact JSON shapes ``companion check GAME`` takes.

Each generator plays the game's rules forward from a seeded rng (placing cards, crossing
numbers, laying tiles as a legal game could) and, for an illegal scene, then breaks one
named rule on purpose. It returns the state, the verdict it was made for (valid flag and
rule ids) and what else lies on the table (display cards, the current trick, racks).
Tests run every state through the real rules engines to confirm the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from companion.synth.pieces import ELEMENTS, NOX_COLOUR, qwixx_row_numbers

NAMES = ("Anna", "Ben", "Marie", "Claire", "Jonas", "Lea", "Tom", "Sofia")
GAMES: tuple[str, ...] = ("nox", "qwixx", "rox", "nummix", "catbox")


@dataclass
class GameSetup:
    """A state in the check contract's shape plus what the scene also shows."""

    game: str
    state: dict[str, Any]
    verdict: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


def make_state(game: str, rng: np.random.Generator, legal: bool | None = None) -> GameSetup:
    """A random position of ``game``; legal or breaking one rule (random when None)."""
    if legal is None:
        legal = bool(rng.random() < 0.6)
    return _MAKERS[game](rng, legal)


def _pick(rng: np.random.Generator, seq: Any) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _players(rng: np.random.Generator, low: int, high: int) -> list[str]:
    n = int(rng.integers(low, high + 1))
    return [NAMES[int(i)] for i in rng.permutation(len(NAMES))[:n]]


def _verdict(valid: bool, rules: list[str]) -> dict[str, Any]:
    return {"valid": valid, "rules": sorted(set(rules))}


# --------------------------------------------------------------------------- Nox

def _nox(rng: np.random.Generator, legal: bool) -> GameSetup:
    players = _players(rng, 2, 6)
    deck = [n for n in range(1, 16) for _ in range(6)]
    deck = [deck[int(i)] for i in rng.permutation(len(deck))]
    kitties: dict[str, list[list[int]]] = {p: [] for p in players}
    steps = int(rng.integers(2 * len(players), 6 * len(players) + 1))
    for _ in range(steps):
        p = _pick(rng, players)
        stacks = kitties[p]
        card = deck.pop()
        same = [i for i, s in enumerate(stacks) if NOX_COLOUR[s[-1]] == NOX_COLOUR[card]]
        if same and (len(stacks) >= 5 or rng.random() < 0.45):
            stacks[_pick(rng, same)].append(card)  # nox.place: on a stack of its colour
        elif len(stacks) < 5:
            stacks.append([card])
        else:
            deck.insert(0, card)
            continue
        _merge(stacks)  # nox.merge
    rules: list[str] = []
    if not legal:
        kind = _pick(rng, ("merge", "max_stacks", "cover_colour"))
        p = _pick(rng, players)
        stacks = kitties[p]
        if kind == "merge" and stacks and len(stacks) < 6:
            top = stacks[int(rng.integers(len(stacks)))][-1]
            if top in deck:
                deck.remove(top)
                stacks.insert(int(rng.integers(len(stacks) + 1)), [top])
                rules.append("nox.merge")
        elif kind == "max_stacks":
            tops = {s[-1] for s in stacks}
            while len(stacks) < 7:
                choices = [n for n in deck if n not in tops]
                card = _pick(rng, choices)
                deck.remove(card)
                tops.add(card)
                stacks.append([card])
            rules.append("nox.max_stacks")
        if not rules:  # cover_colour (and the fallback): a card on another colour
            if not stacks:
                card = deck.pop()
                stacks.append([card])
            i = int(rng.integers(len(stacks)))
            tops = {s[-1] for k, s in enumerate(stacks) if k != i}
            choices = [n for n in deck if NOX_COLOUR[n] != NOX_COLOUR[stacks[i][-1]]
                       and n not in tops]
            card = _pick(rng, choices)
            deck.remove(card)
            stacks[i].append(card)
            rules.append("nox.cover_colour")
    state = {"game": "nox", "players": players, "kitties": kitties}
    return GameSetup("nox", state, _verdict(not rules, rules))


def _merge(stacks: list[list[int]]) -> None:
    """nox.merge: two stacks showing the same number become one at once."""
    for i in range(len(stacks)):
        for j in range(i + 1, len(stacks)):
            if stacks[i][-1] == stacks[j][-1]:
                stacks[i] = stacks[i] + stacks.pop(j)
                return


# --------------------------------------------------------------------------- Qwixx

QWIXX_LETTER = {"red": "r", "yellow": "y", "green": "g", "blue": "b"}


def _qwixx(rng: np.random.Generator, legal: bool) -> GameSetup:
    players = _players(rng, 1, 3)
    sheets: dict[str, dict[str, Any]] = {}
    for p in players:
        sheet: dict[str, Any] = {"locks": []}
        for row in ("red", "yellow", "green", "blue"):
            numbers = qwixx_row_numbers(row)
            k = int(rng.integers(0, 8))
            chosen = sorted(int(i) for i in rng.choice(10, size=k, replace=False))
            crossed = [numbers[i] for i in chosen]
            if len(crossed) >= 5 and not sheet["locks"] and rng.random() < 0.3:  # qwixx.lock
                crossed.append(numbers[10])
                sheet["locks"].append(row)
            sheet[row] = crossed
        sheet["fouls"] = int(rng.integers(0, 4))
        sheets[p] = sheet
    state: dict[str, Any] = {"game": "qwixx", "sheets": sheets}
    # the active player's play, checked against their sheet
    player = _pick(rng, players)
    sheet = sheets[player]
    rules: list[str] = []
    row = _pick(rng, ("red", "yellow", "green", "blue"))
    numbers = qwixx_row_numbers(row)
    right = max((numbers.index(n) for n in sheet[row]), default=-1)
    free = [numbers[i] for i in range(right + 1, 10)]
    for _ in range(8):
        if len(free) >= 3:
            break
        row = _pick(rng, ("red", "yellow", "green", "blue"))
        numbers = qwixx_row_numbers(row)
        right = max((numbers.index(n) for n in sheet[row]), default=-1)
        free = [numbers[i] for i in range(right + 1, 10)]
    if not free:  # a fresh row for the play
        sheet[row] = []
        if row in sheet["locks"]:
            sheet["locks"].remove(row)
        free = numbers[:10]
    start = int(rng.integers(len(free)))
    size = int(rng.integers(1, 4))
    picks = [free[start]]
    pos = start
    skipped = 0
    while len(picks) < size:
        step = 1 if skipped or rng.random() < 0.7 else 2
        if pos + step >= len(free):
            break
        skipped += step - 1
        pos += step
        picks.append(free[pos])
    letter = QWIXX_LETTER[row]
    cards = [f"{letter}{n}" for n in picks]
    if len(cards) >= 2 and rng.random() < 0.15:
        cards[-1] = f"J{picks[-1]}"  # a joker played with coloured cards takes their colour
        state["variant"] = "jokers"
    cross = list(picks)
    if not legal:
        kind = _pick(rng, ("one_colour", "gap", "lock"))
        if kind == "one_colour" and len(cards) >= 2:
            other = _pick(rng, [c for c in "rygb" if c != letter])
            cards[-1] = f"{other}{picks[-1]}"
            rules.append("qwixx.one_colour")
        elif kind == "gap" and len(free) >= start + 4:
            picks = [free[start], free[start + 3]]
            cards = [f"{letter}{n}" for n in picks]
            cross = list(picks)
            rules.append("qwixx.gap")
        else:  # a lock box crossed without the row's last number
            for r in sheet["locks"]:  # one lock at most: two would end the game (qwixx.end)
                sheet[r] = sheet[r][:-1]
            lock_row = _pick(rng, [r for r in ("red", "yellow", "green", "blue") if r != row])
            sheet["locks"] = [lock_row]
            if qwixx_row_numbers(lock_row)[10] in sheet[lock_row]:
                sheet[lock_row].remove(qwixx_row_numbers(lock_row)[10])
            rules.append("qwixx.lock")
    state["play"] = {"player": player, "cards": cards, "cross": cross}
    # the display: four cards back (number) up in the middle
    display = [f"back{int(rng.integers(2, 13))}" for _ in range(4)]
    return GameSetup("qwixx", state, _verdict(not rules, rules),
                     {"display": display, "player": player})


# --------------------------------------------------------------------------- Rox

def _rox_card(rng: np.random.Generator, centre: str, top: str) -> dict[str, Any]:
    """An element card with ``top`` the single most frequent edge element (16 symbols)."""
    while True:
        counts = rng.multinomial(16, [0.2] * 5)
        order = list(ELEMENTS)
        best = int(rng.integers(6, 9))
        rest = 16 - best
        others = rng.multinomial(rest, [0.25] * 4)
        if others.max() >= best:
            continue
        edge = {top: best}
        for e, c in zip([e for e in order if e != top], others, strict=True):
            edge[e] = int(c)
        del counts
        return {"centre": centre, "edge": edge}


def _rox(rng: np.random.Generator, legal: bool) -> GameSetup:
    players = _players(rng, 2, 4)
    caller = _pick(rng, players)
    values = [1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 8, 9, 10]
    scoring = [values[int(i)] for i in rng.choice(len(values), size=len(players) - 1,
                                                  replace=False)]
    rows: dict[str, list[dict[str, Any]]] = {}
    for p in players:
        n = 6 if p == caller else int(rng.integers(2, 7))
        row = []
        centre = _pick(rng, ELEMENTS)
        for _ in range(n):
            top = _pick(rng, ELEMENTS)
            row.append(_rox_card(rng, centre, top))
            centre = top  # rox.link: the next card's centre is this card's top edge element
        rows[p] = row
    rules: list[str] = []
    if not legal:
        p = _pick(rng, players)
        row = rows[p]
        j = int(rng.integers(1, len(row)))
        top = max(row[j - 1]["edge"], key=lambda e: row[j - 1]["edge"][e])
        row[j]["centre"] = _pick(rng, [e for e in ELEMENTS if e != top])
        rules.append("rox.link")
    state = {"game": "rox", "players": players, "caller": caller, "scoring_cards": scoring,
             "rows": rows}
    return GameSetup("rox", state, _verdict(not rules, rules))


# --------------------------------------------------------------------------- Nummix

NUMMIX_COLOURS = "rkbo"


def _nummix(rng: np.random.Generator, legal: bool) -> GameSetup:
    """Blocks of constructs: each block is a few rows of horizontal runs and groups, some
    with a vertical construct hanging from one of their tiles (a corner); blocks are
    separated by empty rows and may be drawn as separate grids on the table."""
    pool: dict[str, int] = {f"{c}{n}": 2 for c in NUMMIX_COLOURS for n in range(1, 18)}
    jokers = [f"J{a}{b}" for i, a in enumerate(NUMMIX_COLOURS) for b in NUMMIX_COLOURS[i + 1:]]
    width = 12
    grid: list[list[str]] = []
    n_rows = int(rng.integers(2, 5))
    for _ in range(n_rows):
        line = ["."] * width
        col = int(rng.integers(0, 2))
        while col < width - 2:
            cons = _construct(rng, pool, min(width - col, 6))
            if cons is None:
                break
            for k, t in enumerate(cons):
                line[col + k] = t
            col += len(cons) + 1 + int(rng.integers(0, 2))
            if rng.random() < 0.3:
                break
        if all(c == "." for c in line):
            cons = _construct(rng, pool, 4)
            if cons is not None:
                line[: len(cons)] = cons
        grid.append(line)
        if rng.random() < 0.35:  # a vertical group hanging below a tile: a corner
            cols = [c for c, t in enumerate(line) if t != "."]
            c = _pick(rng, cols)
            number = int(line[c][1:])
            colours = [x for x in NUMMIX_COLOURS if x != line[c][0] and pool[f"{x}{number}"]]
            if len(colours) >= 2:
                below = [f"{x}{number}" for x in colours[:2]]
                for t in below:
                    pool[t] -= 1
                for t in below:
                    row = ["."] * width
                    row[c] = t
                    grid.append(row)
        grid.append(["."] * width)
    rules: list[str] = []
    tiles = [(r, c) for r, row in enumerate(grid) for c, t in enumerate(row) if t != "."]
    # jokers stand for a tile of their colour pair (nummix.joker)
    for r, c in tiles:
        t = grid[r][c]
        if rng.random() < (0.3 if _at_crossing(grid, r, c) else 0.06):
            options = [j for j in jokers if t[0] in j[1:]]
            if options and _joker_fits(grid, r, c, t):
                j = _pick(rng, options)
                jokers.remove(j)
                grid[r][c] = j
    if not legal:
        kind = _pick(rng, ("size", "run", "group"))
        if kind == "size":
            t1, t2 = _free_tiles(pool, rng, 2)
            grid.append([t1, t2] + ["."] * (width - 2))
            rules.append("nummix.size")
        else:
            for _ in range(200):  # tiles the set still has (nummix.tiles)
                n = int(rng.integers(1, 15))
                if kind == "run":
                    c = _pick(rng, NUMMIX_COLOURS)
                    seq = [f"{c}{n}", f"{c}{n + 1}", f"{c}{n + 3}"]
                else:
                    c1, c2 = rng.choice(list(NUMMIX_COLOURS), size=2, replace=False)
                    seq = [f"{c1}{n}", f"{c2}{n}", f"{c1}{n}"]
                need: dict[str, int] = {}
                for t in seq:
                    need[t] = need.get(t, 0) + 1
                if all(pool[t] >= k for t, k in need.items()):
                    break
            for t in seq:
                pool[t] -= 1
            grid.append(seq + ["."] * (width - 3))
            rules.append(f"nummix.{kind}")
        grid.append(["."] * width)
    while grid and all(t == "." for t in grid[-1]):
        grid.pop()
    used = max(c for row in grid for c, t in enumerate(row) if t != ".") + 1
    text = [" ".join(row[:used]) for row in grid]
    state = {"game": "nummix", "grid": text}
    rack = [t for t in _free_tiles(pool, rng, int(rng.integers(5, 12))) if t]
    return GameSetup("nummix", state, _verdict(not rules, rules), {"rack": rack})


def _joker_fits(grid: list[list[str]], r: int, c: int, tile: str) -> bool:
    """A joker may stand in for any number tile (nummix.joker), also at a crossing of a
    horizontal and a vertical construct, where it takes the one tile that fits both; at
    most one joker per construct, so what each stands for stays unambiguous."""
    if tile.startswith("J"):
        return False

    def line(dr: int, dc: int) -> list[str]:
        out = []
        for sign in (-1, 1):
            rr, cc = r + sign * dr, c + sign * dc
            while 0 <= rr < len(grid) and 0 <= cc < len(grid[rr]) and grid[rr][cc] != ".":
                out.append(grid[rr][cc])
                rr, cc = rr + sign * dr, cc + sign * dc
        return out

    return all(not t.startswith("J") for t in line(0, 1) + line(1, 0))


def _at_crossing(grid: list[list[str]], r: int, c: int) -> bool:
    """The tile has neighbours both beside it and above/below it."""
    def filled(rr: int, cc: int) -> bool:
        return 0 <= rr < len(grid) and 0 <= cc < len(grid[rr]) and grid[rr][cc] != "."

    return (filled(r, c - 1) or filled(r, c + 1)) and (filled(r - 1, c) or filled(r + 1, c))


def _free_tiles(pool: dict[str, int], rng: np.random.Generator, k: int) -> list[str]:
    names = [t for t, n in pool.items() if n > 0]
    out = []
    for _ in range(k):
        t = _pick(rng, names)
        pool[t] -= 1
        if pool[t] == 0:
            names.remove(t)
        out.append(t)
    return out


def _construct(rng: np.random.Generator, pool: dict[str, int], room: int) -> list[str] | None:
    """A valid run (one colour, rising by one, may wrap 17→1) or group (3–4 colours)."""
    for _ in range(20):
        if rng.random() < 0.6:
            c = _pick(rng, NUMMIX_COLOURS)
            length = int(rng.integers(3, max(4, room + 1)))
            length = min(length, room)
            n = int(rng.integers(1, 18))
            tiles = [f"{c}{(n - 1 + k) % 17 + 1}" for k in range(length)]
        else:
            n = int(rng.integers(1, 18))
            size = min(int(rng.integers(3, 5)), room)
            tiles = [f"{x}{n}" for x in rng.choice(list(NUMMIX_COLOURS), size=size,
                                                   replace=False)]
        if len(tiles) >= 3 and all(pool[t] > 0 for t in tiles):
            for t in tiles:
                pool[t] -= 1
            return tiles
    return None


# --------------------------------------------------------------------------- Cat in the Box

CATBOX_COLOURS = ("red", "blue", "yellow", "green")
CATBOX_NUMBERS = {2: 5, 3: 6, 4: 8, 5: 9}
CATBOX_BLOCK_ORDER = ("green", "yellow", "blue")
BLOCKED_SEAT = -1  # a board cell blocked by a revealed card (two players)


def catbox_blocked(revealed: list[int]) -> list[tuple[str, int]]:
    """Two players: the cells the revealed cards block: green for a number shown once,
    green and yellow for twice, green, yellow and blue for three times."""
    out = []
    for k in sorted(set(revealed)):
        out.extend((colour, k) for colour in CATBOX_BLOCK_ORDER[:revealed.count(k)])
    return out
CATBOX_TOKENS = ("red", "blue", "yellow", "green", "purple")


def _catbox(rng: np.random.Generator, legal: bool) -> GameSetup:
    """A round's plays replayed from an empty board (the board is built by the plays);
    the last trick lies on the table. Illegal: the last play breaks a declaring rule."""
    players = _players(rng, 2, 2) if rng.random() < 0.25 else _players(rng, 3, 5)
    n = len(players)
    numbers = CATBOX_NUMBERS[n]
    copies = {k: 5 for k in range(1, numbers + 1)}
    board: dict[tuple[str, int], int] = {}
    revealed: list[int] = []
    if n == 2:  # 3 of the 5 cards left after dealing are shown and block cells
        leftover = [int(x) for x in rng.choice([k for k in copies for _ in range(5)], size=5,
                                               replace=False)]
        revealed = leftover[:3]
        for k in revealed:
            copies[k] -= 1
        for colour, k in catbox_blocked(revealed):
            board[(colour, k)] = BLOCKED_SEAT
    barred: list[set[str]] = [set() for _ in players]
    plays: list[dict[str, Any]] = []
    start = int(rng.integers(n))
    leader = start
    tricks = int(rng.integers(1, 5))
    last_trick: list[int] = []
    rules: list[str] = []
    for t in range(tricks):
        trick: list[tuple[int, int, str]] = []
        partial = t == tricks - 1 and rng.random() < 0.5
        count = int(rng.integers(1, n + 1)) if partial else n
        for k in range(count):
            seat = (leader + k) % n
            leading = k == 0
            red_open = any(col == "red" for col, _ in board)
            options = [(num, col) for num in copies if copies[num] > 0 for col in CATBOX_COLOURS
                       if (col, num) not in board and col not in barred[seat]
                       and not (leading and col == "red" and not red_open)]
            if not options:
                break
            num, col = options[int(rng.integers(len(options)))]
            copies[num] -= 1
            board[(col, num)] = seat
            if not leading and col != trick[0][2]:
                barred[seat].add(trick[0][2])  # not following uncovers the led colour's X
            trick.append((seat, num, col))
            plays.append({"player": players[seat], "card": num, "colour": col})
        last_trick = list(range(len(plays) - len(trick), len(plays)))
        if len(trick) == n:
            leader = _trick_winner(trick)
            if t < tricks - 1:
                last_trick = []
    if not legal:
        # the next play after the plays so far breaks a declaring rule
        if len(last_trick) in (0, n):
            last_trick = []
            seat, leading = leader, True
        else:
            seat, leading = (leader + len(last_trick)) % n, False
        filled = [(col, num) for (col, num), who in board.items()
                  if copies.get(num, 0) > 0 and who != BLOCKED_SEAT]
        red_open = any(col == "red" for col, _ in board)
        if leading and not red_open and rng.random() < 0.5:
            num = _pick(rng, [k for k in copies if copies[k] > 0 and ("red", k) not in board
                              and any((c, k) not in board and c not in barred[seat]
                                      for c in CATBOX_COLOURS[1:])] or [0])
            if num == 0:
                return _catbox(rng, legal)
            col = "red"
            rules.append("catbox.lead_red")
        elif filled:
            col, num = _pick(rng, filled)
            rules.append("catbox.occupied")
            if col in barred[seat]:
                rules.append("catbox.barred")
            if leading and col == "red" and not red_open:
                rules.append("catbox.lead_red")
        else:
            num = _pick(rng, [k for k in copies if copies[k] > 0])
            col = "red"
            if not leading or red_open:
                return _catbox(rng, legal)
            rules.append("catbox.lead_red")
        copies[num] -= 1
        plays.append({"player": players[seat], "card": num, "colour": col})
        last_trick.append(len(plays) - 1)
    tokens = {p: CATBOX_TOKENS[i] for i, p in enumerate(players)}
    state: dict[str, Any] = {"game": "catbox", "players": players, "start": players[start],
                             "plays": plays}
    if revealed:
        state["revealed"] = revealed
    return GameSetup("catbox", state, _verdict(not rules, rules),
                     {"trick": last_trick, "tokens": tokens, "numbers": numbers})


def _trick_winner(trick: list[tuple[int, int, str]]) -> int:
    """Red beats the led colour, which beats the rest; the higher number wins a colour."""
    led = trick[0][2]

    def rank(p: tuple[int, int, str]) -> tuple[int, int]:
        return (2 if p[2] == "red" else 1 if p[2] == led else 0, p[1])

    return max(trick, key=rank)[0]


def catbox_board(state: dict[str, Any]) -> dict[tuple[str, int], str]:
    """The tokens the plays put on the board: (colour, number) → player."""
    out: dict[tuple[str, int], str] = {}
    for p in state["plays"]:
        out.setdefault((p["colour"], int(p["card"])), p["player"])
    return out


_MAKERS = {"nox": _nox, "qwixx": _qwixx, "rox": _rox, "nummix": _nummix, "catbox": _catbox}
