"""Cat in the Box: Deluxe Edition (RULES.md section 5): the rules engine.

A trick-taking game where a card's colour is declared when it is played and marked by a
token on the shared research board. This module holds the pure rules (declaring, trick
winners, the paradox, scoring with the largest connected group), a playable game state
following ``base.Game``, and ``check_document`` for the ``companion check`` contract:
scoring a board, or replaying a round's plays and naming every broken rule.
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
    winners,
)

# --- the rule set's numbers and decisions --------------------------------------------

COLOURS: tuple[str, ...] = ("red", "blue", "yellow", "green")
"""The research board's rows, top to bottom. (decision) RULES.md lists them in this
order; it fixes which rows touch for the largest group (red-blue, blue-yellow,
yellow-green)."""
RED = "red"
COPIES = 5
"""Five cards of each number."""
MAX_ROW = 9
"""The longest board row (numbers 1-9)."""


@dataclass(frozen=True)
class Setup:
    """Deck, hand, tricks, predictions and board width for one player count."""

    players: int
    numbers: int  # cards 1..numbers are used
    hand: int  # cards dealt to each player
    tricks: int  # tricks per round: until each hand has one card left
    predictions: tuple[int, ...]  # allowed predictions; () = none (two players)
    columns: int  # board columns; those above ``numbers`` are blocked


SETUPS: dict[int, Setup] = {
    5: Setup(5, 9, 9, 7, (1, 2, 3), 9),
    4: Setup(4, 8, 10, 8, (1, 2, 3), 9),  # the 9 column blocked
    3: Setup(3, 6, 10, 8, (1, 3, 4), 6),
    2: Setup(2, 5, 10, 8, (), 6),  # the 6 column blocked
}
"""(decision) The board has 9 columns for 4-5 players and 6 for 2-3 players: RULES.md
blocks "the 9 column" for 4 players and "the 6 column" for 2, and the issue's 3-player
example has rows of 6."""

TWO_PLAYER_REVEALED = 3
"""Two players: of the 5 cards left after dealing, this many are revealed."""
TWO_PLAYER_BLOCK_ORDER: tuple[str, ...] = ("green", "yellow", "blue")
"""Two players: a number revealed once blocks green, twice green+yellow, three times
green+yellow+blue."""
TWO_PLAYER_BONUS_MAX = 4
"""Two players: no predictions; a player with at most this many tricks gets the bonus."""
TIE_FIRST_PLAYED_WINS = True
"""(decision) Two equal winning cards (same colour and number) can only meet after an
illegal play onto a taken cell; the one played first then wins the trick."""

EMPTY = -1
BLOCKED = -2
Board = tuple[tuple[int, ...], ...]
"""Four rows (COLOURS order) of cells: a seat index, EMPTY or BLOCKED."""
TrickPlay = tuple[int, int, str]
"""(seat, card, colour) of one played card."""


def setup_for(n_players: int) -> Setup:
    """The set-up for this many players; InputError outside 2-5."""
    if n_players not in SETUPS:
        raise InputError("players", f"Cat in the Box takes 2 to 5 players, got {n_players}")
    return SETUPS[n_players]


def full_deck(setup: Setup) -> list[int]:
    """The cards used: five of each number 1..numbers."""
    return [n for n in range(1, setup.numbers + 1) for _ in range(COPIES)]


# --- the board ------------------------------------------------------------------------


def blocked_by_revealed(revealed: Sequence[int]) -> set[tuple[str, int]]:
    """Two players: the cells the revealed cards block (green, then yellow, then blue)."""
    out: set[tuple[str, int]] = set()
    for number, times in Counter(revealed).items():
        for colour in TWO_PLAYER_BLOCK_ORDER[:times]:
            out.add((colour, number))
    return out


def new_board(setup: Setup, revealed: Sequence[int] = ()) -> Board:
    """An empty research board: unused columns blocked, and the two-player blocked cells."""
    cells = blocked_by_revealed(revealed)
    return tuple(
        tuple(
            BLOCKED if n > setup.numbers or (colour, n) in cells else EMPTY
            for n in range(1, setup.columns + 1)
        )
        for colour in COLOURS
    )


def cell(board: Board, colour: str, number: int) -> int:
    """The cell's content; a number off the board reads as BLOCKED."""
    row = board[COLOURS.index(colour)]
    return row[number - 1] if 1 <= number <= len(row) else BLOCKED


def place(board: Board, colour: str, number: int, seat: int) -> Board:
    """The board with ``seat``'s token on (colour, number)."""
    r = COLOURS.index(colour)
    row = board[r][: number - 1] + (seat,) + board[r][number:]
    return board[:r] + (row,) + board[r + 1 :]


def red_broken(board: Board) -> bool:
    """True once a token lies in the red row (the leader may then declare red)."""
    return any(c >= 0 for c in board[0])


def can_declare(board: Board, barred: frozenset[str], card: int, colour: str) -> bool:
    """Rules 1 and 2: the cell is empty (``catbox.occupied``) and the colour is not
    barred for this player (``catbox.barred``)."""
    return colour not in barred and cell(board, colour, card) == EMPTY


def declarable(board: Board, barred: frozenset[str], hand: Sequence[int]) -> list[TrickPlay]:
    """Every (card, colour) in ``hand`` meeting rules 1 and 2 (seat left as -1).
    Empty means the player to play causes a paradox (``catbox.paradox``)."""
    return [(-1, card, colour) for card in sorted(set(hand)) for colour in COLOURS
            if can_declare(board, barred, card, colour)]


def legal_declarations(
    board: Board, barred: frozenset[str], hand: Sequence[int], *, leading: bool
) -> list[tuple[int, str]]:
    """The (card, colour) pairs a player may play now. A leader declares red only once
    red is broken or when no card can be declared in another colour (``catbox.lead_red``)."""
    options = [(card, colour) for _, card, colour in declarable(board, barred, hand)]
    if leading and not red_broken(board):
        others = [o for o in options if o[1] != RED]
        if others:
            return others
    return options


def trick_winner(trick: Sequence[TrickPlay]) -> int:
    """Index in ``trick`` of the winning card: the highest red, else the highest of the
    led colour (the first card's colour)."""
    led = trick[0][2]
    trump = [i for i, (_, _, colour) in enumerate(trick) if colour == RED]
    pool = trump or [i for i, (_, _, colour) in enumerate(trick) if colour == led]
    best = max(trick[i][1] for i in pool)
    tied = [i for i in pool if trick[i][1] == best]
    return tied[0] if TIE_FIRST_PLAYED_WINS else tied[-1]


def largest_group(board: Board, seat: int) -> int:
    """Tokens in ``seat``'s largest orthogonally connected group on the board."""
    seen: set[tuple[int, int]] = set()
    best = 0
    for r, row in enumerate(board):
        for c, value in enumerate(row):
            if value != seat or (r, c) in seen:
                continue
            size, todo = 0, [(r, c)]
            seen.add((r, c))
            while todo:
                y, x = todo.pop()
                size += 1
                for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                    if (0 <= ny < len(board) and 0 <= nx < len(board[ny])
                            and board[ny][nx] == seat and (ny, nx) not in seen):
                        seen.add((ny, nx))
                        todo.append((ny, nx))
            best = max(best, size)
    return best


def bonus_earned(setup: Setup, tricks: int, prediction: int | None) -> bool:
    """Prediction met (two players: at most TWO_PLAYER_BONUS_MAX tricks)."""
    if not setup.predictions:
        return tricks <= TWO_PLAYER_BONUS_MAX
    return prediction is not None and tricks == prediction


def round_scores(
    setup: Setup,
    tricks: Sequence[int],
    predictions: Sequence[int | None],
    groups: Sequence[int],
    paradox: int | None,
) -> tuple[int, ...]:
    """+1 per trick, plus the largest group if the prediction was met; the paradox's
    causer scores -1 per trick and no bonus."""
    out = []
    for seat, won in enumerate(tricks):
        if seat == paradox:
            out.append(-won)
        else:
            bonus = groups[seat] if bonus_earned(setup, won, predictions[seat]) else 0
            out.append(won + bonus)
    return tuple(out)


def declaration_faults(
    board: Board,
    barred: frozenset[str],
    card: int,
    colour: str,
    *,
    leading: bool,
    hand: Sequence[int] | None,
    names: Sequence[str],
    player: str,
    **where: JSON,
) -> list[Violation]:
    """Why declaring ``card`` as ``colour`` breaks rule 1, rule 2 or the red lead.

    With ``hand`` unknown, a red lead is only faulted when the played card itself could
    have been declared in another colour (then the exception surely does not apply)."""
    out: list[Violation] = []
    content = cell(board, colour, card)
    if content != EMPTY:
        whose = "is blocked" if content == BLOCKED else f"holds {names[content]}'s token"
        out.append(violation("catbox.occupied", f"{player} declared {card} as {colour}, but "
                             f"the {colour} {card} cell {whose}", player=player, card=card,
                             colour=colour, **where))
    if colour in barred:
        out.append(violation("catbox.barred", f"{player} declared {card} as {colour}, but "
                             f"{player} did not follow {colour} earlier this round",
                             player=player, card=card, colour=colour, **where))
    if leading and colour == RED and not red_broken(board):
        pool = hand if hand is not None else [card]
        other = next(((c, col) for c in sorted(set(pool)) for col in COLOURS[1:]
                      if can_declare(board, barred, c, col)), None)
        if other is not None:
            out.append(violation("catbox.lead_red", f"{player} led red before any token lay "
                                 f"in the red row, but could declare {other[0]} as "
                                 f"{other[1]}", player=player, card=card, colour=colour,
                                 **where))
    return out


# --- the playable game ------------------------------------------------------------------


@dataclass(frozen=True)
class FaceDown:
    """Put one card from hand face down, out of play for the round."""

    player: str
    card: int


@dataclass(frozen=True)
class Predict:
    """Predict the number of tricks (not in the two-player game)."""

    player: str
    tricks: int


@dataclass(frozen=True)
class Declare:
    """Play a card and declare its colour."""

    player: str
    card: int
    colour: str


CatboxPlay = FaceDown | Predict | Declare


@dataclass(frozen=True)
class RoundRecord:
    """A finished round: enough to replay it (``round_document``) and to score it."""

    number: int
    start: int
    hands: tuple[tuple[int, ...], ...]  # at the first trick, after the face-down card
    facedown: tuple[int, ...]
    revealed: tuple[int, ...]
    predictions: tuple[int | None, ...]
    plays: tuple[TrickPlay, ...]
    trick_winners: tuple[int, ...]
    tricks: tuple[int, ...]
    paradox: int | None
    board: Board
    groups: tuple[int, ...]
    scores: tuple[int, ...]


@dataclass(frozen=True)
class CatboxState:
    """Everything about a game in progress. ``deals`` holds one shuffled deck per round,
    fixed at start, so ``apply`` is deterministic."""

    players: tuple[str, ...]
    deals: tuple[tuple[int, ...], ...]
    round: int
    phase: str  # "facedown", "predict", "play" or "over"
    start: int
    hands: tuple[tuple[int, ...], ...]
    facedown: tuple[int | None, ...]
    revealed: tuple[int, ...]
    leftover: tuple[int, ...]  # cards not dealt (two players), revealed ones included
    predictions: tuple[int | None, ...]
    board: Board
    barred: tuple[frozenset[str], ...]
    leader: int
    trick: tuple[TrickPlay, ...]
    plays: tuple[TrickPlay, ...]  # this round's cards, in order
    trick_winners: tuple[int, ...]
    tricks: tuple[int, ...]
    hands_at_play: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    history: tuple[RoundRecord, ...]

    @property
    def setup(self) -> Setup:
        return SETUPS[len(self.players)]


def _remove(hand: tuple[int, ...], card: int) -> tuple[int, ...]:
    i = hand.index(card)
    return hand[:i] + hand[i + 1 :]


def _deal(players: tuple[str, ...], deals: tuple[tuple[int, ...], ...], round_no: int,
          totals: tuple[int, ...], history: tuple[RoundRecord, ...]) -> CatboxState:
    """The state at the start of round ``round_no``: hands dealt, nothing chosen yet."""
    setup = SETUPS[len(players)]
    deck = deals[round_no]
    n = len(players)
    hands = tuple(tuple(sorted(deck[i * setup.hand:(i + 1) * setup.hand])) for i in range(n))
    leftover = deck[n * setup.hand:]
    revealed = tuple(leftover[:TWO_PLAYER_REVEALED]) if n == 2 else ()
    start = round_no % n
    return CatboxState(
        players=players, deals=deals, round=round_no, phase="facedown", start=start,
        hands=hands, facedown=(None,) * n, revealed=revealed, leftover=tuple(leftover),
        predictions=(None,) * n, board=new_board(setup, revealed),
        barred=(frozenset(),) * n, leader=start, trick=(), plays=(), trick_winners=(),
        tricks=(0,) * n, hands_at_play=(), totals=totals, history=history)


class CatInTheBox:
    """Cat in the Box as a ``base.Game``: plays are FaceDown, Predict and Declare."""

    name = "catbox"
    min_players = 2
    max_players = 5

    # --- playing ----------------------------------------------------------------------

    def start(self, players: Sequence[str], rng: random.Random, **options: Any) -> CatboxState:
        """A new game: one shuffled deck per round (as many rounds as players); the
        first player in the list starts, then the start passes left."""
        names = tuple(players)
        if len(set(names)) != len(names) or not all(names):
            raise InputError("players", "players need distinct non-empty names")
        setup = setup_for(len(names))
        deals = []
        for _ in names:
            deck = full_deck(setup)
            rng.shuffle(deck)
            deals.append(tuple(deck))
        return _deal(names, tuple(deals), 0, (0,) * len(names), ())

    def to_act(self, state: CatboxState) -> tuple[str, ...]:
        if state.phase == "facedown":
            return tuple(p for p, f in zip(state.players, state.facedown, strict=True)
                         if f is None)
        if state.phase == "predict":
            return (state.players[self._predictor(state)],)
        if state.phase == "play":
            return (state.players[self._next_to_play(state)],)
        return ()

    def legal_plays(self, state: CatboxState) -> list[CatboxPlay]:
        plays: list[CatboxPlay] = []
        if state.phase == "facedown":
            for seat, name in enumerate(state.players):
                if state.facedown[seat] is None:
                    plays.extend(FaceDown(name, c) for c in sorted(set(state.hands[seat])))
        elif state.phase == "predict":
            seat = self._predictor(state)
            plays.extend(Predict(state.players[seat], v) for v in state.setup.predictions)
        elif state.phase == "play":
            seat = self._next_to_play(state)
            plays.extend(Declare(state.players[seat], card, colour)
                         for card, colour in legal_declarations(
                             state.board, state.barred[seat], state.hands[seat],
                             leading=not state.trick))
        return plays

    def check_play(self, state: CatboxState, play: CatboxPlay) -> tuple[Violation, ...]:
        if state.phase == "over":
            return (violation("catbox.card", "the game is over"),)
        if not isinstance(play, FaceDown | Predict | Declare):
            return (violation("catbox.card", f"not a Cat in the Box play: {play!r}"),)
        if play.player not in state.players:
            return (violation("catbox.card", f"{play.player!r} is not playing",
                              player=str(play.player)),)
        seat = state.players.index(play.player)
        wanted = {"facedown": FaceDown, "predict": Predict, "play": Declare}[state.phase]
        if not isinstance(play, wanted):
            doing = {"facedown": "putting a card face down", "predict": "predicting",
                     "play": "playing cards"}[state.phase]
            return (violation("catbox.card", f"the table is {doing} now",
                              player=play.player),)
        if play.player not in self.to_act(state):
            whose = ", ".join(self.to_act(state))
            return (violation("catbox.card", f"it is not {play.player}'s turn ({whose} to "
                              "act)", player=play.player),)
        if isinstance(play, Predict):
            allowed = state.setup.predictions
            if play.tricks not in allowed:
                return (violation("catbox.prediction", f"{play.player} predicted "
                                  f"{play.tricks}; with {len(state.players)} players the "
                                  f"choices are {', '.join(map(str, allowed))}",
                                  player=play.player),)
            return ()
        hand = state.hands[seat]
        if play.card not in hand:
            return (violation("catbox.card", f"{play.player} holds no {play.card}",
                              player=play.player, card=play.card),)
        if isinstance(play, FaceDown):
            return ()
        if play.colour not in COLOURS:
            return (violation("catbox.declare", f"{play.colour!r} is not a colour "
                              f"({', '.join(COLOURS)})", player=play.player),)
        leading = not state.trick
        faults = declaration_faults(state.board, state.barred[seat], play.card, play.colour,
                                    leading=leading, hand=hand, names=state.players,
                                    player=play.player)
        if faults:
            faults.extend(_must_play(state.board, state.barred[seat], hand, leading,
                                     play.player))
        return tuple(faults)

    def apply(self, state: CatboxState, play: CatboxPlay) -> CatboxState:
        faults = self.check_play(state, play)
        if faults:
            raise IllegalPlay(faults)
        seat = state.players.index(play.player)
        if isinstance(play, FaceDown):
            hands = _set(state.hands, seat, _remove(state.hands[seat], play.card))
            facedown = _set(state.facedown, seat, play.card)
            state = replace(state, hands=hands, facedown=facedown)
            if any(f is None for f in facedown):
                return state
            state = replace(state, hands_at_play=hands,
                            phase="predict" if state.setup.predictions else "play")
            return self._paradox_check(state) if state.phase == "play" else state
        if isinstance(play, Predict):
            state = replace(state, predictions=_set(state.predictions, seat, play.tricks))
            if all(p is not None for p in state.predictions):
                return self._paradox_check(replace(state, phase="play"))
            return state
        assert isinstance(play, Declare)
        trick = state.trick + ((seat, play.card, play.colour),)
        barred = state.barred
        if len(trick) > 1 and play.colour != trick[0][2]:
            barred = _set(barred, seat, barred[seat] | {trick[0][2]})
        state = replace(state, hands=_set(state.hands, seat, _remove(state.hands[seat],
                                                                       play.card)),
                        board=place(state.board, play.colour, play.card, seat),
                        barred=barred, trick=trick, plays=state.plays + trick[-1:])
        if len(trick) < len(state.players):
            return self._paradox_check(state)
        winner = trick[trick_winner(trick)][0]
        state = replace(state, trick=(), leader=winner,
                        trick_winners=state.trick_winners + (winner,),
                        tricks=_set(state.tricks, winner, state.tricks[winner] + 1))
        if len(state.trick_winners) == state.setup.tricks:
            return self._end_round(state, None)
        return self._paradox_check(state)

    def scores(self, state: CatboxState) -> dict[str, int]:
        return dict(zip(state.players, state.totals, strict=True))

    def is_over(self, state: CatboxState) -> bool:
        return state.phase == "over"

    def winners(self, state: CatboxState) -> list[str]:
        """Highest total; among those tied, the higher score in the final round; a tie
        that remains is a shared win."""
        tied = winners(self.scores(state))
        if not state.history or len(tied) < 2:
            return tied
        last = dict(zip(state.players, state.history[-1].scores, strict=True))
        return winners({p: last[p] for p in tied})

    def check_document(self, doc: Mapping[str, JSON]) -> dict[str, JSON]:
        """The ``companion check`` verdict (see the module function)."""
        return check_document(doc)

    # --- internals --------------------------------------------------------------------

    def _predictor(self, state: CatboxState) -> int:
        made = sum(p is not None for p in state.predictions)
        return (state.start + made) % len(state.players)

    def _next_to_play(self, state: CatboxState) -> int:
        return (state.leader + len(state.trick)) % len(state.players)

    def _paradox_check(self, state: CatboxState) -> CatboxState:
        """End the round at once if the player to play cannot declare any card."""
        seat = self._next_to_play(state)
        if declarable(state.board, state.barred[seat], state.hands[seat]):
            return state
        return self._end_round(state, seat)

    def _end_round(self, state: CatboxState, paradox: int | None) -> CatboxState:
        setup = state.setup
        groups = tuple(largest_group(state.board, s) for s in range(len(state.players)))
        scores = round_scores(setup, state.tricks, state.predictions, groups, paradox)
        facedown = tuple(f for f in state.facedown if f is not None)
        record = RoundRecord(
            number=state.round + 1, start=state.start, hands=state.hands_at_play,
            facedown=facedown, revealed=state.revealed, predictions=state.predictions,
            plays=state.plays, trick_winners=state.trick_winners, tricks=state.tricks,
            paradox=paradox, board=state.board, groups=groups, scores=scores)
        totals = tuple(t + s for t, s in zip(state.totals, scores, strict=True))
        history = state.history + (record,)
        if state.round + 1 == len(state.players):
            return replace(state, phase="over", trick=(), totals=totals, history=history)
        return _deal(state.players, state.deals, state.round + 1, totals, history)


def _set(values: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return values[:i] + (value,) + values[i + 1 :]


def _must_play(board: Board, barred: frozenset[str], hand: Sequence[int], leading: bool,
               player: str, **where: JSON) -> list[Violation]:
    """``catbox.must_play`` if the player had a legal declaration (so no paradox)."""
    options = legal_declarations(board, barred, hand, leading=leading)
    if not options:
        return []
    shown = ", ".join(f"{c} as {col}" for c, col in options[:3])
    more = f" and {len(options) - 3} more" if len(options) > 3 else ""
    return [violation("catbox.must_play", f"{player} could play legally ({shown}{more})",
                      player=player, **where)]


def round_document(players: Sequence[str], record: RoundRecord) -> dict[str, JSON]:
    """A finished round as a ``companion check`` round document (hands, predictions,
    face-down cards and plays), e.g. to check a game played in code."""
    doc: dict[str, JSON] = {
        "game": "catbox", "players": list(players), "start": players[record.start],
        "hands": {p: list(h) for p, h in zip(players, record.hands, strict=True)},
        "plays": [{"player": players[s], "card": c, "colour": col}
                  for s, c, col in record.plays],
    }
    if SETUPS[len(players)].predictions:
        doc["predictions"] = {p: v for p, v in zip(players, record.predictions, strict=True)}
    if record.revealed:
        doc["revealed"] = list(record.revealed)
    if record.paradox is not None:
        doc["paradox"] = players[record.paradox]
    return doc


# --- the companion check contract ---------------------------------------------------------


def _row_lengths(setup: Setup) -> list[int]:
    """(decision) Row lengths accepted in a document: one cell per number used, the
    board's columns, or the full 9; cells above the numbers used hold no token."""
    return sorted({setup.numbers, setup.columns, MAX_ROW})


def read_board(value: JSON, players: Sequence[str], setup: Setup, field: str = "board"
               ) -> Board:
    """A board object (four rows of player names, "." and "#") as a Board of
    ``setup.columns`` columns; InputError naming the cell for anything impossible."""
    rows = expect(value, dict, field)
    for key in rows:
        if key not in COLOURS:
            raise InputError(f"{field}.{key}", f"not a row (rows: {', '.join(COLOURS)})")
    allowed = _row_lengths(setup)
    length: int | None = None
    out: list[tuple[int, ...]] = []
    blocked: dict[int, set[str]] = {}
    for colour in COLOURS:
        row = require(rows, colour, list, field)
        where = f"{field}.{colour}"
        if len(row) not in allowed:
            raise InputError(where, f"a row has one cell per number: "
                             f"{' or '.join(map(str, allowed))} cells with {setup.players} "
                             f"players, got {len(row)}")
        if length is not None and len(row) != length:
            raise InputError(where, f"rows must have the same length ({length}), got {len(row)}")
        length = len(row)
        cells: list[int] = []
        for i, raw in enumerate(row):
            name = f"{where}[{i}]"
            number = i + 1
            text = expect(raw, str, name)
            if text == ".":
                value_ = EMPTY
            elif text == "#":
                value_ = BLOCKED
            elif text in players:
                value_ = players.index(text)
            else:
                raise InputError(name, f"a cell is a player's name, '.' (empty) or '#' "
                                 f"(blocked), got {text!r}")
            if number > setup.numbers:
                if value_ >= 0:
                    raise InputError(name, f"no card {number} is used with {setup.players} "
                                     "players, so this cell holds no token")
                continue
            if value_ == BLOCKED:
                if setup.players != 2 or colour == RED:
                    raise InputError(name, f"only the two-player game blocks cells (green, "
                                     f"yellow, blue) inside the columns 1-{setup.numbers}")
                blocked.setdefault(number, set()).add(colour)
            cells.append(value_)
        out.append(tuple(cells) + (BLOCKED,) * (setup.columns - len(cells)))
    for number, colours in blocked.items():
        expected = set(TWO_PLAYER_BLOCK_ORDER[:len(colours)])
        if colours != expected:
            raise InputError(f"{field}.{sorted(colours - expected)[0]}[{number - 1}]",
                             "revealed cards block green first, then yellow, then blue")
    if sum(len(c) for c in blocked.values()) > TWO_PLAYER_REVEALED:
        raise InputError(field, f"{TWO_PLAYER_REVEALED} revealed cards block at most "
                         f"{TWO_PLAYER_REVEALED} cells")
    board = tuple(out)
    for seat, name in enumerate(players):
        count = sum(row.count(seat) for row in board)
        if count > setup.tricks:
            raise InputError(field, f"{name} has {count} tokens; a player places at most "
                             f"{setup.tricks} in a round")
    return board


def board_json(board: Board, players: Sequence[str]) -> dict[str, list[str]]:
    """A Board in the contract's notation."""
    show = {EMPTY: ".", BLOCKED: "#"}
    return {colour: [show.get(c) or players[c] for c in row]
            for colour, row in zip(COLOURS, board, strict=True)}


def _read_card(value: JSON, setup: Setup, field: str) -> int:
    card = expect(value, int, field)
    if not 1 <= card <= setup.numbers:
        raise InputError(field, f"the cards are 1-{setup.numbers} with {setup.players} "
                         f"players, got {card}")
    return int(card)


def _read_predictions(doc: Mapping[str, JSON], players: Sequence[str], setup: Setup,
                      *, needed: bool) -> tuple[tuple[int | None, ...], list[Violation]]:
    """Predictions per seat and ``catbox.prediction`` for values the count disallows."""
    if not setup.predictions:
        if doc.get("predictions"):
            raise InputError("predictions", "the two-player game has no predictions (the "
                             f"bonus goes to a player with at most {TWO_PLAYER_BONUS_MAX} "
                             "tricks)")
        return (None,) * len(players), []
    if not needed and doc.get("predictions") is None:
        return (None,) * len(players), []
    table = per_player(doc, "predictions", players, complete=True)
    out: list[int | None] = []
    faults: list[Violation] = []
    for name in players:
        value = expect(table[name], int, f"predictions.{name}")
        if not 0 <= value <= setup.tricks:
            raise InputError(f"predictions.{name}", f"a prediction is 0-{setup.tricks} "
                             f"tricks, got {value}")
        if value not in setup.predictions:
            faults.append(violation("catbox.prediction", f"{name} predicted {value}; with "
                                    f"{setup.players} players the choices are "
                                    f"{', '.join(map(str, setup.predictions))}", player=name))
        out.append(int(value))
    return tuple(out), faults


def _read_tricks(doc: Mapping[str, JSON], players: Sequence[str], setup: Setup
                 ) -> tuple[int, ...]:
    table = per_player(doc, "tricks", players, complete=True)
    out = []
    for name in players:
        value = expect(table[name], int, f"tricks.{name}")
        if value < 0:
            raise InputError(f"tricks.{name}", f"tricks won cannot be negative, got {value}")
        out.append(int(value))
    if sum(out) > setup.tricks:
        raise InputError("tricks", f"a round has {setup.tricks} tricks, the counts add up to "
                         f"{sum(out)}")
    return tuple(out)


def _score_lines(players: Sequence[str], setup: Setup, tricks: Sequence[int],
                 predictions: Sequence[int | None], groups: Sequence[int],
                 paradox: int | None, scores: Sequence[int], bonus_known: bool) -> list[str]:
    lines = []
    for seat, name in enumerate(players):
        won = tricks[seat]
        head = f"{name}: {won} trick{'' if won == 1 else 's'}"
        if seat == paradox:
            lines.append(f"{head}, caused the paradox: -1 per trick, no bonus = "
                         f"{scores[seat]}")
            continue
        if not setup.predictions:
            met = won <= TWO_PLAYER_BONUS_MAX
            why = f"at most {TWO_PLAYER_BONUS_MAX} tricks" if met else \
                f"more than {TWO_PLAYER_BONUS_MAX} tricks"
        elif not bonus_known:
            lines.append(f"{head} = {scores[seat]} (no predictions given: bonus not scored)")
            continue
        else:
            met = won == predictions[seat]
            why = f"predicted {predictions[seat]}, {'met' if met else 'missed'}"
        bonus = f" + bonus {groups[seat]} (largest group)" if met else ", no bonus"
        lines.append(f"{head} ({why}){bonus} = {scores[seat]}")
    return lines


def _check_board(doc: Mapping[str, JSON], players: tuple[str, ...], setup: Setup
                 ) -> dict[str, JSON]:
    """Score a round from its board, tricks, predictions and paradox."""
    board = read_board(require(doc, "board", dict), players, setup)
    tricks = _read_tricks(doc, players, setup)
    predictions, faults = _read_predictions(doc, players, setup, needed=True)
    raw = optional(doc, "paradox", str, None)
    paradox = None if raw is None else players.index(check_player(raw, players, "paradox"))
    groups = tuple(largest_group(board, s) for s in range(len(players)))
    scores = round_scores(setup, tricks, predictions, groups, paradox)
    complete = paradox is not None or sum(tricks) == setup.tricks
    summary = _score_lines(players, setup, tricks, predictions, groups, paradox, scores, True)
    if paradox is not None:
        summary.insert(0, f"paradox caused by {players[paradox]}")
    if not complete:
        summary.append(f"note: {sum(tricks)} of {setup.tricks} tricks counted and no "
                       "paradox: the round may not be over")
    return {
        "game": "catbox", "valid": not faults, "violations": [v.to_json() for v in faults],
        "scores": dict(zip(players, scores, strict=True)),
        "largest_groups": dict(zip(players, groups, strict=True)),
        "bonus": {p: s != paradox and bonus_earned(setup, tricks[s], predictions[s])
                  for s, p in enumerate(players)},
        "tricks": dict(zip(players, tricks, strict=True)),
        "paradox": None if paradox is None else players[paradox],
        "complete": complete, "summary": summary,
    }


@dataclass(frozen=True)
class _DocPlay:
    seat: int
    card: int
    colour: str


def _read_plays(doc: Mapping[str, JSON], players: Sequence[str], setup: Setup
                ) -> list[_DocPlay]:
    raw = require(doc, "plays", list)
    out = []
    for k, item in enumerate(raw):
        where = f"plays[{k}]"
        expect(item, dict, where)
        name = check_player(require(item, "player", str, where), players, f"{where}.player")
        card = _read_card(require(item, "card", int, where), setup, f"{where}.card")
        colour = require(item, "colour", str, where)
        if colour not in COLOURS:
            raise InputError(f"{where}.colour", f"a colour is one of {', '.join(COLOURS)}, "
                             f"got {colour!r}")
        out.append(_DocPlay(players.index(name), card, colour))
    return out


def _read_hands(doc: Mapping[str, JSON], players: Sequence[str], setup: Setup
                ) -> tuple[dict[int, list[int]], dict[int, int], tuple[int, ...]]:
    """Known hands at the first trick, face-down cards and revealed cards; checks that
    together they use no more copies of a number than the deck has."""
    facedown: dict[int, int] = {}
    if doc.get("facedown") is not None:
        for name, value in per_player(doc, "facedown", players).items():
            facedown[players.index(name)] = _read_card(value, setup, f"facedown.{name}")
    hands: dict[int, list[int]] = {}
    if doc.get("hands") is not None:
        for name, value in per_player(doc, "hands", players).items():
            seat = players.index(name)
            cards = [_read_card(c, setup, f"hands.{name}[{i}]")
                     for i, c in enumerate(expect(value, list, f"hands.{name}"))]
            if len(cards) == setup.hand and seat in facedown:
                if facedown[seat] not in cards:
                    raise InputError(f"facedown.{name}", f"{name}'s hand has no "
                                     f"{facedown[seat]} to put face down")
                cards.remove(facedown[seat])
            elif len(cards) != setup.hand - 1:
                raise InputError(f"hands.{name}", f"a hand at the first trick has "
                                 f"{setup.hand - 1} cards (or {setup.hand} with the "
                                 f"face-down card named in facedown.{name}), got {len(cards)}")
            hands[seat] = cards
    revealed: tuple[int, ...] = ()
    if doc.get("revealed") is not None:
        if setup.players != 2:
            raise InputError("revealed", "only the two-player game reveals cards")
        values = expect(doc["revealed"], list, "revealed")
        if len(values) != TWO_PLAYER_REVEALED:
            raise InputError("revealed", f"{TWO_PLAYER_REVEALED} cards are revealed, got "
                             f"{len(values)}")
        revealed = tuple(_read_card(c, setup, f"revealed[{i}]") for i, c in enumerate(values))
    used = Counter(revealed) + Counter(facedown.values())
    for cards in hands.values():
        used.update(cards)
    for number, count in sorted(used.items()):
        if count > COPIES:
            raise InputError("hands", f"{count} cards of {number} among hands, face-down and "
                             f"revealed cards; the deck has {COPIES}")
    return hands, facedown, revealed


def _check_round(doc: Mapping[str, JSON], players: tuple[str, ...], setup: Setup
                 ) -> dict[str, JSON]:
    """Replay a round's plays: turn order, cards in hand, the declaring rules, trick
    winners, the paradox, and the round's scores."""
    n = len(players)
    start = players.index(check_player(require(doc, "start", str), players, "start"))
    plays = _read_plays(doc, players, setup)
    hands, _facedown, revealed = _read_hands(doc, players, setup)
    predictions, faults = _read_predictions(doc, players, setup, needed=False)
    raw_claim = optional(doc, "paradox", str, None)
    claim = None if raw_claim is None else players.index(
        check_player(raw_claim, players, "paradox"))
    board = new_board(setup, revealed)
    barred: list[frozenset[str]] = [frozenset()] * n
    tricks = [0] * n
    leader, trick_no = start, 0
    trick: list[tuple[int, int, str, int]] = []  # seat, card, colour, play index
    details: list[dict[str, JSON]] = []
    summary: list[str] = []
    paradox: int | None = None
    paradox_card: dict[str, JSON] | None = None
    claimed_only = False  # a paradox the table called, unseen in the hands

    def trick_json(winner: int | None) -> dict[str, JSON]:
        return {"trick": trick_no + 1, "leader": players[leader],
                "led": trick[0][2] if trick else None,
                "plays": [{"player": players[s], "card": c, "colour": col}
                          for s, c, col, _ in trick],
                "winner": None if winner is None else players[winner]}

    for k, play in enumerate(plays):
        name = players[play.seat]
        if paradox is not None:
            faults.append(violation("catbox.paradox", f"{name} played after the round ended "
                                    f"in a paradox caused by {players[paradox]}",
                                    player=name, play=k))
            continue
        if trick_no == setup.tricks:
            raise InputError(f"plays[{k}]", f"a round has {setup.tricks} tricks of {n} "
                             "cards; this play is one too many")
        expected = (leader + len(trick)) % n
        leading = not trick
        if expected in hands and not declarable(board, barred[expected], hands[expected]):
            paradox = expected
            if play.seat == expected:
                paradox_card = {"player": name, "card": play.card, "colour": play.colour}
            else:
                faults.append(violation("catbox.paradox", f"{name} played after the round "
                                        f"ended in a paradox caused by {players[expected]}",
                                        player=name, play=k))
            continue
        if play.seat != expected:
            faults.append(violation("catbox.card", f"it was {players[expected]}'s turn, not "
                                    f"{name}'s (trick {trick_no + 1}, led by "
                                    f"{players[leader]})", player=name, play=k))
        hand = hands.get(play.seat)
        in_hand = hand is None or play.card in hand
        if not in_hand:
            assert hand is not None
            faults.append(violation("catbox.card", f"{name} holds no {play.card} (left: "
                                    f"{', '.join(map(str, sorted(hand)))})", player=name,
                                    card=play.card, play=k))
        bad = declaration_faults(board, barred[play.seat], play.card, play.colour,
                                 leading=leading, hand=hand, names=players, player=name,
                                 trick=trick_no + 1, play=k)
        if (bad and hand is None and claim == play.seat and k == len(plays) - 1
                and any(v.rule in ("catbox.occupied", "catbox.barred") for v in bad)):
            paradox, paradox_card = play.seat, {"player": name, "card": play.card,
                                                "colour": play.colour}
            continue
        faults.extend(bad)
        if bad and hand is not None and in_hand:
            faults.extend(_must_play(board, barred[play.seat], hand, leading, name,
                                     trick=trick_no + 1, play=k))
        if (hand is None and leading and play.colour == RED and not red_broken(board)
                and not bad):
            summary.append(f"note: {name} led red in trick {trick_no + 1} before red was "
                           f"broken; allowed only if no card in {name}'s hand could be "
                           "declared in another colour (hands not given)")
        if hand is not None and in_hand:
            hand.remove(play.card)
        if cell(board, play.colour, play.card) == EMPTY:
            board = place(board, play.colour, play.card, play.seat)
        if not leading and play.colour != trick[0][2]:
            barred[play.seat] = barred[play.seat] | {trick[0][2]}
        trick.append((play.seat, play.card, play.colour, k))
        if len(trick) == n:
            winner = trick[trick_winner([(s, c, col) for s, c, col, _ in trick])][0]
            tricks[winner] += 1
            details.append(trick_json(winner))
            leader, trick, trick_no = winner, [], trick_no + 1

    next_seat: int | None = None
    if paradox is None and trick_no < setup.tricks:
        expected = (leader + len(trick)) % n
        if expected in hands and not declarable(board, barred[expected], hands[expected]):
            paradox = expected
        elif claim is not None and claim != expected:
            faults.append(violation("catbox.paradox", f"{players[claim]} claims a paradox, "
                                    f"but it is {players[expected]}'s turn to play",
                                    player=players[claim]))
            next_seat = expected
        elif claim is not None:
            paradox, claimed_only = claim, True
            hand = hands.get(claim)
            if hand is not None:
                faults.extend(_must_play(board, barred[claim], hand, not trick,
                                         players[claim], trick=trick_no + 1))
        else:
            next_seat = expected
    elif paradox is None and claim is not None:
        faults.append(violation("catbox.paradox", f"{players[claim]} claims a paradox, but "
                                "the round was played to the end", player=players[claim]))
    if paradox is not None and claim is not None and claim != paradox:
        faults.append(violation("catbox.paradox", f"the paradox was {players[paradox]}'s "
                                f"(no card in hand can be declared), not {players[claim]}'s",
                                player=players[claim]))
    if paradox is not None:
        details.append(dict(trick_json(None), paradox=players[paradox]))

    current = trick_json(None) if trick and paradox is None else None
    complete = paradox is not None or trick_no == setup.tricks
    groups = tuple(largest_group(board, s) for s in range(n))
    bonus_known = not setup.predictions or predictions[0] is not None
    if complete:
        scores = round_scores(setup, tricks, predictions, groups, paradox)
    else:
        scores = tuple(tricks)
    lines = [f"trick {d['trick']}: " + (", ".join(
        f"{p['player']} {p['card']} {p['colour']}" for p in d["plays"]) or "no card")
        + (f" -> {d['winner']} wins" if d["winner"] else " -> paradox, nobody wins")
        for d in details]
    if current is not None:
        lines.append(f"trick {trick_no + 1} (in progress): " + ", ".join(
            f"{players[s]} {c} {col}" for s, c, col, _ in trick))
    if paradox is not None:
        what = "" if paradox_card is None else (
            f" (played {paradox_card['card']} as {paradox_card['colour']})")
        if claimed_only:
            lines.append(f"paradox: called by {players[paradox]}; the round ends")
        else:
            lines.append(f"paradox: {players[paradox]} cannot declare any card in hand{what}; "
                         "the round ends")
    if complete:
        lines += _score_lines(players, setup, tricks, predictions, groups, paradox, scores,
                              bonus_known)
    else:
        lines.append(f"round not finished: {trick_no} of {setup.tricks} tricks played, "
                     f"{players[next_seat] if next_seat is not None else '?'} to play; "
                     "scores are the tricks so far")
    faults.sort(key=lambda v: (v.locator("play") is None, v.locator("play") or 0))
    return {
        "game": "catbox", "valid": not faults, "violations": [v.to_json() for v in faults],
        "scores": dict(zip(players, scores, strict=True)),
        "tricks": dict(zip(players, tricks, strict=True)),
        "tricks_detail": details,
        "current_trick": current,
        "paradox": None if paradox is None else {
            "player": players[paradox], "trick": trick_no + 1, "card": paradox_card},
        "complete": complete,
        "next": None if next_seat is None else players[next_seat],
        "board": board_json(board, players),
        "largest_groups": dict(zip(players, groups, strict=True)),
        "barred": {p: sorted(b) for p, b in zip(players, barred, strict=True)},
        "summary": lines + summary,
    }


def check_document(doc: Mapping[str, JSON]) -> dict[str, JSON]:
    """The verdict on a board (``board``, ``tricks``, ``predictions``, ``paradox``) or on
    a round's plays (``start``, ``plays``, optional ``hands``); see docs/games/catbox.md."""
    players = read_players(doc, low=CatInTheBox.min_players, high=CatInTheBox.max_players)
    setup = setup_for(len(players))
    if "plays" in doc:
        if "board" in doc:
            raise InputError("board", "give a board to score or a round's plays, not both "
                             "(the plays build the board)")
        return _check_round(doc, players, setup)
    return _check_board(doc, players, setup)


GAME = CatInTheBox()
