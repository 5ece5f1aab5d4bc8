"""Qwixx: Das Kartenspiel (RULES.md section 2): the whole game, sheet and play checks,
and scoring.

A card is a colour letter (r, y, g, b, or J for a joker) and a number 2-12, written
``g7`` or ``J5``. A sheet has four rows: red and yellow run 2->12, green and blue
12->2; each row ends in a lock box; there are 4 foul boxes. A turn has three steps,
each its own kind of play so a game can be played through in code: the active player
takes a display card (``Take``), then every player in seat order from the active one
crosses the announced number in one row or passes (``TopCross``), then the active
player plays 1-3 cards of one colour (``PlayCards``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

from companion.games.base import (
    JSON,
    IllegalPlay,
    InputError,
    Violation,
    check_player,
    expect,
    json_type,
    optional,
    read_players,
    require,
    violation,
    winners,
)

# --- cards and sheets (RULES.md §2 "Cards", "Score sheet") ----------------------------

ROWS: tuple[str, ...] = ("red", "yellow", "green", "blue")
LETTERS: dict[str, str] = {"r": "red", "y": "yellow", "g": "green", "b": "blue"}
ROW_LETTER: dict[str, str] = {row: letter for letter, row in LETTERS.items()}
JOKER = "J"
NUMBERS: tuple[int, ...] = tuple(range(2, 13))
ASCENDING: dict[str, bool] = {"red": True, "yellow": True, "green": False, "blue": False}
HAND_SIZE = 4
DISPLAY_SIZE = 4
MAX_PLAY = 3
MAX_FOULS = 4
FOUL_POINTS = -5
LOCKS_TO_END = 2
CROSSES_BEFORE_LOCK = 5
MIN_PLAYERS, MAX_PLAYERS = 2, 5
VARIANTS: tuple[str, ...] = ("standard", "jokers")

RESHUFFLE_DISCARDS = True
"""*(decision, RULES.md §2 "End")* When the pile cannot refill the display or show a
top card, the played cards are shuffled into a new pile. False: the game instead ends
after the turn in which the pile ran out (``qwixx.end``)."""


def last_number(row: str) -> int:
    """The number before the row's lock box: 12 on red/yellow, 2 on green/blue."""
    return 12 if ASCENDING[row] else 2


def position(row: str, number: int) -> int:
    """Where a number sits in its row, 0 (leftmost) to 10 (the last number)."""
    return number - 2 if ASCENDING[row] else 12 - number


def number_at(row: str, pos: int) -> int:
    """The number printed at a position of a row."""
    return pos + 2 if ASCENDING[row] else 12 - pos


def in_row_order(row: str, numbers: Iterable[int]) -> tuple[int, ...]:
    """Numbers sorted left to right as they stand in the row."""
    return tuple(sorted(numbers, key=lambda n: position(row, n)))


def row_points(crosses: int) -> int:
    """Points for a row with ``crosses`` crosses, the lock box included: n(n+1)/2."""
    return crosses * (crosses + 1) // 2


@dataclass(frozen=True, order=True)
class Card:
    """One card: ``colour`` is r, y, g, b or J (joker), ``number`` 2-12."""

    colour: str
    number: int

    def __str__(self) -> str:
        return f"{self.colour}{self.number}"

    @property
    def is_joker(self) -> bool:
        return self.colour == JOKER

    @property
    def row(self) -> str | None:
        """The row this card's colour crosses in; None for a joker."""
        return LETTERS.get(self.colour)


def full_deck(jokers: bool = False) -> list[Card]:
    """The 44 coloured cards, plus the 11 jokers 2-12 in the jokers variant."""
    deck = [Card(c, n) for c in LETTERS for n in NUMBERS]
    if jokers:
        deck.extend(Card(JOKER, n) for n in NUMBERS)
    return deck


def parse_card(text: JSON, field_name: str, *, jokers: bool = True) -> Card:
    """A card from its notation (``g7``, ``J5``); InputError for a card that cannot exist."""
    if not isinstance(text, str):
        raise InputError(field_name, f"a card is written like \"g7\" or \"J5\", got "
                         f"{json_type(text)}")
    raw = text.strip()
    letter = raw[:1].lower() if raw[:1].lower() in LETTERS else raw[:1].upper()
    if letter not in LETTERS and letter != JOKER:
        raise InputError(field_name, f"no card {text!r}: a card starts with r, y, g, b or J")
    digits = raw[1:]
    if not digits.isdigit() or int(digits) not in NUMBERS:
        raise InputError(field_name, f"no card {text!r}: numbers run 2 to 12")
    if letter == JOKER and not jokers:
        raise InputError(field_name, f"no card {text!r}: jokers exist only in the jokers "
                         "variant (\"variant\": \"jokers\")")
    return Card(letter, int(digits))


@dataclass(frozen=True)
class Sheet:
    """One player's score sheet: numbers crossed per row (in row order), the crossed
    lock boxes, the crossed foul boxes."""

    rows: tuple[tuple[int, ...], ...] = ((), (), (), ())
    locks: frozenset[str] = frozenset()
    fouls: int = 0

    def row(self, name: str) -> tuple[int, ...]:
        return self.rows[ROWS.index(name)]

    def crosses(self, name: str) -> int:
        """Crosses in a row, its lock box counted as one more (RULES.md §2 "Scoring")."""
        return len(self.row(name)) + (1 if name in self.locks else 0)

    def rightmost(self, name: str) -> int:
        """Position of the rightmost cross in a row, -1 for an empty row."""
        return max((position(name, n) for n in self.row(name)), default=-1)

    def cross(self, name: str, numbers: Iterable[int]) -> Sheet:
        """This sheet with numbers crossed in a row; the last number also crosses the
        lock box (``qwixx.lock``)."""
        new = in_row_order(name, {*self.row(name), *numbers})
        rows = tuple(new if r == name else self.rows[i] for i, r in enumerate(ROWS))
        locks = self.locks | ({name} if last_number(name) in new else set())
        return replace(self, rows=rows, locks=frozenset(locks))

    def with_foul(self) -> Sheet:
        return replace(self, fouls=self.fouls + 1)

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {r: list(self.row(r)) for r in ROWS}
        out["locks"] = [r for r in ROWS if r in self.locks]
        out["fouls"] = self.fouls
        return out


def sheet_score(sheet: Sheet) -> int:
    """Sum of n(n+1)/2 over the rows, minus 5 per foul."""
    return sum(row_points(sheet.crosses(r)) for r in ROWS) + FOUL_POINTS * sheet.fouls


def sheet_details(sheet: Sheet) -> dict[str, JSON]:
    """Per-row crosses and points, fouls and total, for the verdict."""
    rows: dict[str, JSON] = {
        r: {"crosses": sheet.crosses(r), "numbers": list(sheet.row(r)),
            "locked": r in sheet.locks, "points": row_points(sheet.crosses(r))}
        for r in ROWS
    }
    return {"rows": rows, "fouls": sheet.fouls, "foul_points": FOUL_POINTS * sheet.fouls,
            "total": sheet_score(sheet)}


def sheet_line(player: str, sheet: Sheet) -> str:
    """One human line: each row's crosses and points, fouls, the total."""
    parts = []
    for r in ROWS:
        lock = " incl. lock" if r in sheet.locks else ""
        parts.append(f"{r} {sheet.crosses(r)}{lock} = {row_points(sheet.crosses(r))}")
    parts.append(f"fouls {sheet.fouls} = {FOUL_POINTS * sheet.fouls}")
    return f"{player}: " + ", ".join(parts) + f"; total {sheet_score(sheet)}"


def game_ended(sheets: Iterable[Sheet]) -> bool:
    """``qwixx.end``: someone has locked two rows or crossed a fourth foul."""
    return any(len(s.locks) >= LOCKS_TO_END or s.fouls >= MAX_FOULS for s in sheets)


# --- checks that every kind of play shares ----------------------------------------------


def sheet_violations(player: str, sheet: Sheet) -> list[Violation]:
    """What a sheet cannot show (``qwixx.lock``): a lock box without the row's last
    number, or the last number with fewer than 5 other crosses or without its lock box.
    Any set of crosses is reachable left to right, so ``qwixx.order`` and ``qwixx.gap``
    cannot be seen on a sheet."""
    found = []
    for r in ROWS:
        last = last_number(r)
        numbers = sheet.row(r)
        if r in sheet.locks and last not in numbers:
            found.append(violation("qwixx.lock", f"the {r} lock box is crossed but {last}, the "
                                   f"last number of the row, is not", player=player, row=r))
        if last in numbers:
            others = len(numbers) - 1
            if others < CROSSES_BEFORE_LOCK:
                found.append(violation(
                    "qwixx.lock", f"{last} is crossed in {r} with only {others} other "
                    f"cross{'es' if others != 1 else ''}: the last number needs "
                    f"{CROSSES_BEFORE_LOCK} first", player=player, row=r, number=last))
            if r not in sheet.locks:
                found.append(violation(
                    "qwixx.lock", f"{last} is crossed in {r} but its lock box is not: "
                    "crossing the last number also crosses the lock box",
                    player=player, row=r, number=last))
    return found


def cross_violations(
    sheet: Sheet, row: str, numbers: Sequence[int], player: str, step: str
) -> list[Violation]:
    """``qwixx.order``, ``qwixx.gap`` and ``qwixx.lock`` for numbers crossed in one row
    in one step (the announced number, or the numbers of one play)."""
    found: list[Violation] = []
    rightmost = sheet.rightmost(row)
    seen: set[int] = set()
    for n in sorted(numbers, key=lambda n: position(row, n)):
        if n in seen:
            found.append(violation("qwixx.order", f"{n} is crossed twice in {row}",
                                   player=player, row=row, number=n, step=step))
            continue
        seen.add(n)
        if n in sheet.row(row):
            found.append(violation("qwixx.order", f"{n} is already crossed in {row}",
                                   player=player, row=row, number=n, step=step))
        elif position(row, n) < rightmost:
            right = number_at(row, rightmost)
            found.append(violation(
                "qwixx.order", f"{n} lies left of {right}, already crossed in {row}: "
                "numbers are crossed left to right", player=player, row=row, number=n,
                step=step))
    ordered = sorted(seen, key=lambda n: position(row, n))
    if len(ordered) >= 2:
        first, last = position(row, ordered[0]), position(row, ordered[-1])
        skipped = [number_at(row, p) for p in range(first, last + 1)
                   if number_at(row, p) not in seen]
        if len(skipped) > 1:
            shown = ", ".join(str(n) for n in ordered)
            found.append(violation(
                "qwixx.gap", f"crossing {shown} in one play skips "
                f"{', '.join(str(n) for n in skipped)}: at most one number may be skipped",
                player=player, row=row, cross=ordered, step=step))
    end = last_number(row)
    if end in seen:
        before = len(set(sheet.row(row)) | (seen - {end}))
        if before < CROSSES_BEFORE_LOCK:
            found.append(violation(
                "qwixx.lock", f"{end} locks {row} and needs {CROSSES_BEFORE_LOCK} crosses "
                f"in the row first; {player} has {before}", player=player, row=row,
                number=end, step=step))
    return found


def play_colour(
    cards: Sequence[Card], declared: str | None, player: str
) -> tuple[str | None, list[Violation]]:
    """The row a play crosses in and any ``qwixx.one_colour`` violation. Jokers take
    the colour of the coloured cards they come with, else the declared one."""
    colours = sorted({c.row for c in cards if c.row is not None}, key=ROWS.index)
    if len(colours) > 1:
        return None, [violation(
            "qwixx.one_colour", f"the cards played show {', '.join(colours)}: all cards of "
            "a play have one colour", player=player, cards=[str(c) for c in cards])]
    if colours:
        if declared is not None and declared != colours[0]:
            return None, [violation(
                "qwixx.one_colour", f"jokers played with {colours[0]} cards are {colours[0]}, "
                f"not {declared}", player=player, cards=[str(c) for c in cards])]
        return colours[0], []
    return declared, []


def play_violations(
    sheet: Sheet, player: str, cards: Sequence[Card], cross: Sequence[int],
    declared: str | None,
) -> tuple[str | None, list[Violation]]:
    """Step 3 checked against the sheet (after the announced number): play size, one
    colour, crossed numbers among the cards, order, gap, lock. Also the row crossed."""
    found: list[Violation] = []
    if not 1 <= len(cards) <= MAX_PLAY:
        found.append(violation("qwixx.play_size", f"{len(cards)} cards played: a play is "
                               f"1 to {MAX_PLAY} cards", player=player,
                               cards=[str(c) for c in cards]))
    row, problems = play_colour(cards, declared, player)
    found.extend(problems)
    played = {c.number for c in cards}
    for n in dict.fromkeys(cross):
        if n not in played:
            found.append(violation("qwixx.card", f"{n} is crossed but no card {n} was played",
                                   player=player, number=n, step="play"))
    if row is not None and cross:
        found.extend(cross_violations(sheet, row, cross, player, "play"))
    elif row is None and cross and not problems:
        found.append(violation("qwixx.one_colour", "only jokers are played and no colour is "
                               "declared: say which row they cross", player=player,
                               cards=[str(c) for c in cards]))
    return row, found


# --- the game (RULES.md §2 "Setup", "Turn", "End") -------------------------------------


@dataclass(frozen=True)
class Take:
    """Step 1: the active player takes display card ``index`` (0-3) into their hand."""

    player: str
    index: int


@dataclass(frozen=True)
class TopCross:
    """Step 2: a player crosses the announced number in ``row``, or passes (None)."""

    player: str
    row: str | None


@dataclass(frozen=True)
class PlayCards:
    """Step 3: the active player plays 1-3 cards of one colour and crosses ``cross``
    in that colour's row; ``colour`` names the row when only jokers are played."""

    player: str
    cards: tuple[Card, ...]
    cross: tuple[int, ...] = ()
    colour: str | None = None


QwixxPlay = Take | TopCross | PlayCards


@dataclass(frozen=True)
class QwixxState:
    """The whole table. ``pile[0]`` is the top card; ``phase`` is take, top, play or
    over; during ``top`` the player at ``deciding`` chooses for ``announced``."""

    players: tuple[str, ...]
    jokers: bool
    seed: int
    hands: tuple[tuple[Card, ...], ...]
    display: tuple[Card, ...]
    pile: tuple[Card, ...]
    discard: tuple[Card, ...]
    sheets: tuple[Sheet, ...]
    active: int = 0
    phase: str = "take"
    announced: int | None = None
    deciding: int = 0
    active_crossed: bool = False
    reshuffles: int = 0
    turn: int = 1
    last_turn: bool = False

    def all_cards(self) -> tuple[Card, ...]:
        """Every card on the table, wherever it lies (for conservation checks)."""
        return (*(c for h in self.hands for c in h), *self.display, *self.pile,
                *self.discard)


def _refill(pile: list[Card], discard: list[Card], state: QwixxState) -> int:
    """Make the pile non-empty by shuffling the discards in (``RESHUFFLE_DISCARDS``);
    returns the number of reshuffles done (0 or 1). Chance comes from the state's seed,
    so replaying a game replays its reshuffles."""
    if pile or not discard or not RESHUFFLE_DISCARDS:
        return 0
    rng = random.Random(f"{state.seed}:{state.reshuffles}")
    rng.shuffle(discard)
    pile.extend(discard)
    discard.clear()
    return 1


class QwixxGame:
    """Qwixx: Das Kartenspiel, following ``companion.games.base.Game``."""

    name = "qwixx"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS

    def start(self, players: Sequence[str], rng: random.Random, **options: Any) -> QwixxState:
        """Shuffle, deal 4 cards each, lay a display of 4 (back up), the rest is the pile.
        Option ``jokers=True`` (or ``variant="jokers"``) adds the 11 jokers."""
        if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS or len(set(players)) != len(players):
            raise InputError("players", f"{MIN_PLAYERS} to {MAX_PLAYERS} distinct players")
        jokers = bool(options.get("jokers", False)) or options.get("variant") == "jokers"
        deck = full_deck(jokers)
        rng.shuffle(deck)
        n = len(players)
        hands = tuple(tuple(deck[i * HAND_SIZE:(i + 1) * HAND_SIZE]) for i in range(n))
        rest = deck[n * HAND_SIZE:]
        return QwixxState(
            players=tuple(players), jokers=jokers, seed=rng.getrandbits(32), hands=hands,
            display=tuple(rest[:DISPLAY_SIZE]), pile=tuple(rest[DISPLAY_SIZE:]), discard=(),
            sheets=tuple(Sheet() for _ in players))

    def to_act(self, state: QwixxState) -> tuple[str, ...]:
        if state.phase == "over":
            return ()
        if state.phase == "top":
            return (state.players[state.deciding],)
        return (state.players[state.active],)

    def legal_plays(self, state: QwixxState) -> list[QwixxPlay]:
        if state.phase == "over":
            return []
        player = self.to_act(state)[0]
        if state.phase == "take":
            return [Take(player, i) for i in range(len(state.display))]
        sheet = state.sheets[state.players.index(player)]
        if state.phase == "top":
            assert state.announced is not None
            n = state.announced
            plays: list[QwixxPlay] = [TopCross(player, None)]
            plays.extend(TopCross(player, r) for r in ROWS
                         if not cross_violations(sheet, r, [n], player, "top_card"))
            return plays
        return list(_card_plays(sheet, player, state.hands[state.active]))

    def check_play(self, state: QwixxState, play: QwixxPlay) -> tuple[Violation, ...]:
        if state.phase == "over":
            return (violation("qwixx.end", "the game is over", player=play.player),)
        acting = self.to_act(state)[0]
        if play.player != acting:
            return (violation("qwixx.turn", f"it is {acting}'s move, not {play.player}'s",
                              player=play.player),)
        wanted = {"take": Take, "top": TopCross, "play": PlayCards}[state.phase]
        if not isinstance(play, wanted):
            steps = {"take": "take a display card", "top": "cross the announced number "
                     "or pass", "play": "play cards"}
            return (violation("qwixx.turn", f"{acting} must now {steps[state.phase]}",
                              player=play.player),)
        sheet = state.sheets[state.players.index(play.player)]
        if isinstance(play, Take):
            if not 0 <= play.index < len(state.display):
                return (violation("qwixx.turn", f"there is no display card {play.index}",
                                  player=play.player),)
            return ()
        if isinstance(play, TopCross):
            if play.row is None:
                return ()
            if play.row not in ROWS:
                return (violation("qwixx.turn", f"there is no row {play.row!r}",
                                  player=play.player),)
            assert state.announced is not None
            return tuple(cross_violations(sheet, play.row, [state.announced], play.player,
                                          "top_card"))
        assert isinstance(play, PlayCards)
        found: list[Violation] = []
        hand = list(state.hands[state.active])
        for c in play.cards:
            if c in hand:
                hand.remove(c)
            else:
                found.append(violation("qwixx.card", f"{play.player} does not hold {c}",
                                       player=play.player, card=str(c)))
        if play.colour is not None and play.colour not in ROWS:
            found.append(violation("qwixx.one_colour", f"there is no colour {play.colour!r}",
                                   player=play.player))
            return tuple(found)
        found.extend(play_violations(sheet, play.player, play.cards, play.cross,
                                     play.colour)[1])
        return tuple(found)

    def apply(self, state: QwixxState, play: QwixxPlay) -> QwixxState:
        problems = self.check_play(state, play)
        if problems:
            raise IllegalPlay(problems)
        if isinstance(play, Take):
            return self._take(state, play.index)
        if isinstance(play, TopCross):
            return self._top_cross(state, play.row)
        assert isinstance(play, PlayCards)
        return self._play(state, play)

    def _take(self, state: QwixxState, index: int) -> QwixxState:
        """Step 1, then refill the display and announce the new top card (step 2)."""
        pile, discard = list(state.pile), list(state.discard)
        reshuffles = state.reshuffles
        hands = list(state.hands)
        display = list(state.display)
        hands[state.active] = (*hands[state.active], display.pop(index))
        reshuffles += _refill(pile, discard, state)
        if pile:
            display.insert(index, pile.pop(0))
        probe = replace(state, reshuffles=reshuffles)
        reshuffles += _refill(pile, discard, probe)
        announced = pile[0].number if pile else None
        new = replace(state, hands=tuple(hands), display=tuple(display), pile=tuple(pile),
                      discard=tuple(discard), reshuffles=reshuffles, announced=announced,
                      active_crossed=False, deciding=state.active)
        if announced is None:
            # Only without RESHUFFLE_DISCARDS: nothing to announce, the game ends after
            # this turn (qwixx.end).
            return replace(new, phase="play", last_turn=True)
        return replace(new, phase="top")

    def _top_cross(self, state: QwixxState, row: str | None) -> QwixxState:
        """Step 2 for one player; after everyone has chosen, step 3 begins."""
        sheets = list(state.sheets)
        crossed = state.active_crossed
        if row is not None:
            assert state.announced is not None
            sheets[state.deciding] = sheets[state.deciding].cross(row, [state.announced])
            crossed = crossed or state.deciding == state.active
        deciding = (state.deciding + 1) % len(state.players)
        phase = "play" if deciding == state.active else "top"
        return replace(state, sheets=tuple(sheets), deciding=deciding, phase=phase,
                       active_crossed=crossed)

    def _play(self, state: QwixxState, play: PlayCards) -> QwixxState:
        """Step 3: cards to the discards, numbers crossed, a foul if nothing was crossed
        (``qwixx.foul``); then the end check (``qwixx.end``) or the next player."""
        hand = list(state.hands[state.active])
        for c in play.cards:
            hand.remove(c)
        hands = list(state.hands)
        hands[state.active] = tuple(hand)
        sheets = list(state.sheets)
        sheet = sheets[state.active]
        if play.cross:
            row = play_colour(play.cards, play.colour, play.player)[0]
            assert row is not None
            sheet = sheet.cross(row, play.cross)
        elif not state.active_crossed:
            sheet = sheet.with_foul()
        sheets[state.active] = sheet
        new = replace(state, hands=tuple(hands), sheets=tuple(sheets),
                      discard=(*state.discard, *play.cards), announced=None)
        if state.last_turn or game_ended(sheets):
            return replace(new, phase="over")
        return replace(new, phase="take", active=(state.active + 1) % len(state.players),
                       turn=state.turn + 1)

    def scores(self, state: QwixxState) -> dict[str, int]:
        return {p: sheet_score(s) for p, s in zip(state.players, state.sheets, strict=True)}

    def is_over(self, state: QwixxState) -> bool:
        return state.phase == "over"

    def fouls_if_nothing(self, state: QwixxState) -> bool:
        """Whether the active player takes a foul if their play crosses nothing."""
        return state.phase in ("top", "play") and not state.active_crossed

    # --- the ``companion check`` contract (docs/games/qwixx.md) -----------------------

    def check_document(self, doc: Mapping[str, JSON]) -> dict[str, JSON]:
        """Check sheets, and optionally a turn (``top_card`` and/or ``play``) on them."""
        variant = optional(doc, "variant", str, "standard")
        if variant not in VARIANTS:
            raise InputError("variant", f"unknown variant {variant!r} (one of "
                             f"{', '.join(VARIANTS)})")
        jokers = variant == "jokers"
        raw_sheets = require(doc, "sheets", dict)
        if "players" in doc:
            players = read_players(doc, low=MIN_PLAYERS, high=MAX_PLAYERS)
            for name in raw_sheets:
                check_player(name, players, f"sheets.{name}")
            for name in players:
                if name not in raw_sheets:
                    raise InputError(f"sheets.{name}", "missing")
        else:
            players = tuple(raw_sheets)
            if not players:
                raise InputError("sheets", "no sheet given")
            if any(not name.strip() for name in players):
                raise InputError("sheets", "a player is a non-empty name")
            if len(players) > MAX_PLAYERS:
                raise InputError("sheets", f"at most {MAX_PLAYERS} players, got {len(players)}")
        sheets = {p: read_sheet(raw_sheets[p], f"sheets.{p}") for p in players}

        found: list[Violation] = []
        for p in players:
            found.extend(sheet_violations(p, sheets[p]))
        out: dict[str, JSON] = {"game": self.name, "players": list(players),
                                "variant": variant}
        summary = [sheet_line(p, sheets[p]) for p in players]
        over = game_ended(sheets.values())

        turn_found: list[Violation] = []
        after: dict[str, Sheet] | None = None
        if "top_card" in doc or "play" in doc or "active" in doc:
            active = optional(doc, "active", str, None)
            if active is not None:
                check_player(active, players, "active")
            play_doc = optional(doc, "play", dict, None)
            if play_doc is not None:
                by = check_player(require(play_doc, "player", str, "play"), players,
                                  "play.player")
                if active is not None and by != active:
                    raise InputError("play.player", f"the play is by {by} but the active "
                                     f"player is {active}")
                active = by
            if over:
                turn_found.append(violation(
                    "qwixx.end", "the game is already over: a sheet has two locks or four "
                    "fouls", player=active))
            after = dict(sheets)
            active_crossed = False
            top_doc = optional(doc, "top_card", dict, None)
            if top_doc is not None:
                number, choices = read_top_card(top_doc, players)
                lines = []
                for p, row in choices.items():
                    problems = cross_violations(after[p], row, [number], p, "top_card")
                    turn_found.extend(problems)
                    lines.append(f"{p} crosses {number} in {row}"
                                 + (": illegal" if problems else ""))
                    if not problems:
                        after[p] = after[p].cross(row, [number])
                        active_crossed = active_crossed or p == active
                summary.append(f"top card {number}: " + ("; ".join(lines) or "nobody crosses"))
            foul: bool | None = None
            if play_doc is not None and active is not None:
                cards, cross, declared, claimed = read_play(play_doc, jokers)
                play_row, problems = play_violations(after[active], active, cards, cross,
                                                     declared)
                foul = not cross and not active_crossed
                if claimed is not None and claimed != foul:
                    problems.append(violation(
                        "qwixx.foul", f"{active} " + (
                            "crossed a number this turn, so takes no foul" if claimed else
                            "crossed nothing this turn and must cross a foul box"),
                        player=active))
                turn_found.extend(problems)
                shown = ", ".join(str(c) for c in cards)
                where = f"in {play_row}" if play_row else "(no single colour)"
                crosses = (f"crosses {', '.join(str(n) for n in cross)} {where}"
                           if cross else "crosses nothing")
                illegal = bool(problems) or over
                summary.append(f"play: {active} plays {shown} and {crosses}: "
                               + ("illegal" if illegal else "legal")
                               + ("; foul (qwixx.foul, -5)" if foul else ""))
                if not problems:
                    if cross and play_row is not None:
                        after[active] = after[active].cross(play_row, cross)
                    elif foul:
                        after[active] = after[active].with_foul()
                out["play_legal"] = not illegal
            out["active"] = active
            out["foul"] = foul
        found.extend(turn_found)
        scores = {p: sheet_score(sheets[p]) for p in players}
        out.update({"valid": not found, "violations": [v.to_json() for v in found],
                    "scores": scores,
                    "details": {p: sheet_details(sheets[p]) for p in players},
                    "game_over": over, "summary": summary})
        out["winners"] = winners(scores) if over else []
        out["leaders"] = winners(scores)
        if after is not None and not turn_found:
            after_scores = {p: sheet_score(after[p]) for p in players}
            ends = game_ended(after.values())
            summary.append("after the turn: " + ", ".join(
                f"{p} {after_scores[p]}" for p in players)
                + ("; the game ends (qwixx.end)" if ends else ""))
            out["after"] = {"sheets": {p: after[p].to_json() for p in players},
                            "scores": after_scores, "game_over": ends}
            if ends:
                out["after"]["winners"] = winners(after_scores)
        return out


def _card_plays(sheet: Sheet, player: str, hand: Sequence[Card]) -> Iterable[PlayCards]:
    """Every legal step-3 play from a hand: 1-3 cards of one colour (jokers join any
    colour, or are declared as one when played alone), each with every legal set of
    crosses, crossing nothing included."""
    for size in range(1, MAX_PLAY + 1):
        for combo in dict.fromkeys(combinations(sorted(hand), size)):
            colours = {c.row for c in combo if c.row is not None}
            if len(colours) > 1:
                continue
            yield PlayCards(player, combo)
            numbers = sorted({c.number for c in combo})
            rows = sorted(colours) if colours else list(ROWS)
            for row in rows:
                declared = None if colours else row
                for k in range(1, len(numbers) + 1):
                    for cross in combinations(numbers, k):
                        if not cross_violations(sheet, row, cross, player, "play"):
                            yield PlayCards(player, combo, cross, declared)


# --- reading the JSON contract ----------------------------------------------------------

SHEET_KEYS = (*ROWS, "locks", "fouls")


def read_sheet(raw: JSON, path: str) -> Sheet:
    """One sheet: numbers crossed per row (any order), lock boxes, fouls 0-4."""
    expect(raw, dict, path)
    for key in raw:
        if key not in SHEET_KEYS:
            raise InputError(f"{path}.{key}", f"unknown field (a sheet has "
                             f"{', '.join(SHEET_KEYS)})")
    rows = []
    for r in ROWS:
        numbers = optional(raw, r, list, [], path)
        seen: set[int] = set()
        for i, n in enumerate(numbers):
            expect(n, int, f"{path}.{r}[{i}]")
            if n not in NUMBERS:
                raise InputError(f"{path}.{r}[{i}]", f"no number {n} on a row (2 to 12)")
            if n in seen:
                raise InputError(f"{path}.{r}[{i}]", f"{n} is listed twice: a box is "
                                 "crossed once")
            seen.add(n)
        rows.append(in_row_order(r, numbers))
    locks = [read_row(lock, f"{path}.locks[{i}]")
             for i, lock in enumerate(optional(raw, "locks", list, [], path))]
    if len(set(locks)) != len(locks):
        raise InputError(f"{path}.locks", "a lock box is listed twice")
    fouls = optional(raw, "fouls", int, 0, path)
    if not 0 <= fouls <= MAX_FOULS:
        raise InputError(f"{path}.fouls", f"a sheet has {MAX_FOULS} foul boxes, got {fouls}")
    return Sheet(rows=tuple(rows), locks=frozenset(locks), fouls=fouls)


def read_row(value: JSON, field_name: str) -> str:
    """A row name (red, yellow, green, blue; the letters r, y, g, b also do)."""
    if isinstance(value, str) and value.lower() in LETTERS:
        return LETTERS[value.lower()]
    if not isinstance(value, str) or value.lower() not in ROWS:
        raise InputError(field_name, f"expected a row (red, yellow, green, blue), got "
                         f"{json_type(value)}")
    return value.lower()


def read_top_card(raw: Mapping[str, JSON], players: Sequence[str]) -> tuple[int, dict[str, str]]:
    """The announced number and each player's chosen row (null or absent: a pass)."""
    number = require(raw, "number", int, "top_card")
    if number not in NUMBERS:
        raise InputError("top_card.number", f"no card back shows {number} (2 to 12)")
    crosses = optional(raw, "crosses", dict, {}, "top_card")
    choices: dict[str, str] = {}
    for name, row in crosses.items():
        check_player(name, players, f"top_card.crosses.{name}")
        if row is not None:
            choices[name] = read_row(row, f"top_card.crosses.{name}")
    return number, choices


def read_play(
    raw: Mapping[str, JSON], jokers: bool
) -> tuple[tuple[Card, ...], tuple[int, ...], str | None, bool | None]:
    """Cards played, numbers crossed, the declared colour and the claimed foul."""
    cards_raw = require(raw, "cards", list, "play")
    cards = tuple(parse_card(c, f"play.cards[{i}]", jokers=jokers)
                  for i, c in enumerate(cards_raw))
    for i, c in enumerate(cards):
        if c in cards[:i]:
            raise InputError(f"play.cards[{i}]", f"there is only one {c}")
    cross_raw = optional(raw, "cross", list, [], "play")
    cross = []
    for i, n in enumerate(cross_raw):
        expect(n, int, f"play.cross[{i}]")
        if n not in NUMBERS:
            raise InputError(f"play.cross[{i}]", f"no number {n} on a row (2 to 12)")
        cross.append(n)
    declared = raw.get("colour")
    colour = None if declared is None else read_row(declared, "play.colour")
    if cross and colour is None and cards and all(c.is_joker for c in cards):
        raise InputError("play.colour", "only jokers are played: say which colour they "
                         "are played as (red, yellow, green, blue)")
    claimed = optional(raw, "foul", bool, None, "play")
    return cards, tuple(cross), colour, claimed


GAME = QwixxGame()
