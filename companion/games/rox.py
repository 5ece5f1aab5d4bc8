"""Rox (RULES.md section 3): the whole game, row verification, ranking and scoring.

Play is simultaneous. The model: every element card lies face up in a shared pool;
any player still building may at any moment lay a pool card at the end of their own
row or take their last card back. A wrong link is a mistake, not a forbidden move:
it is found when the round is verified (``rox.link``) and cuts the row there. The
first player to lay a 6th card calls Rox and the round ends at once. In the JSON
contract a card's position in a row counts from 1 (the first card laid is 1).
"""

from __future__ import annotations

import random
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
    read_players,
    require,
    violation,
    winners,
)

ELEMENTS: tuple[str, ...] = ("fire", "water", "earth", "air", "magic")
"""The five elements (fire red, water blue, earth green, air yellow, magic white)."""

ELEMENT_COLOURS: dict[str, str] = {"fire": "red", "water": "blue", "earth": "green",
                                   "air": "yellow", "magic": "white"}
EDGE_SYMBOLS = 16
DECK_SIZE = 60
ROW_CARDS = 6
"""Laying the 6th card calls Rox."""
MIN_VALID_LENGTH = 2
"""``rox.short``: a row needs this many valid cards to take a scoring card."""
ROUNDS = 5
MIN_PLAYERS, MAX_PLAYERS = 2, 4

SCORING_CARD_VALUES: tuple[int, ...] = (1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 8, 9, 10)
"""*(decision)* The 15 scoring cards' values: not published, so whole numbers 1-10
are assumed; the companion reads the value printed on each card."""

MIN_SCORING_VALUE, MAX_SCORING_VALUE = 1, 10

TIED_EDGE_LINK_HOLDS = True
"""*(decision)* ``rox.tie``: a card whose edge has several most frequent elements is
flagged for a ruling; until the table rules, a next card whose centre is one of those
elements counts as linked (False: the row is cut there). A centre that is none of
them is a plain ``rox.link`` break either way."""


@dataclass(frozen=True)
class ElementCard:
    """One element card: the element at the centre and the edge symbols counted per
    element, in ``ELEMENTS`` order."""

    centre: str
    edge: tuple[int, ...]

    def edge_counts(self) -> dict[str, int]:
        return dict(zip(ELEMENTS, self.edge, strict=True))

    def most_frequent(self) -> tuple[str, ...]:
        """The element(s) most frequent on the edge: one, unless there is a tie."""
        best = max(self.edge)
        return tuple(e for e, c in zip(ELEMENTS, self.edge, strict=True) if c == best)

    def to_json(self) -> dict[str, JSON]:
        return {"centre": self.centre,
                "edge": {e: c for e, c in self.edge_counts().items() if c}}


def _model_deck() -> tuple[ElementCard, ...]:
    """A 60-card deck in the shape of the real one (whose faces are not published):
    12 cards per centre element, 16 edge symbols, one element clearly most frequent,
    each element the most frequent on 12 cards. Built from a fixed seed, so it never
    changes."""
    rng = random.Random("rox-model-deck-v1")
    cards = []
    for i, centre in enumerate(ELEMENTS):
        for k in range(DECK_SIZE // len(ELEMENTS)):
            lead = (i + k) % len(ELEMENTS)
            top = 5 + k % 4
            while True:
                rest = [0] * (len(ELEMENTS) - 1)
                for _ in range(EDGE_SYMBOLS - top):
                    rest[rng.randrange(len(rest))] += 1
                if max(rest) < top:
                    break
            edge = rest[:lead] + [top] + rest[lead:]
            cards.append(ElementCard(centre, tuple(edge)))
    return tuple(cards)


DECK: tuple[ElementCard, ...] = _model_deck()


# --- verification and ranking ---------------------------------------------------------


@dataclass(frozen=True)
class RowCheck:
    """A verified row: how many cards stay (the valid length) and what was found."""

    valid_length: int
    problems: tuple[Violation, ...]

    @property
    def needs_ruling(self) -> bool:
        return any(v.rule == "rox.tie" for v in self.problems)


def check_row(owner: str, row: Sequence[ElementCard]) -> RowCheck:
    """Verify a row from its first card as the magic eye would (``rox.link``,
    ``rox.tie``), plus cards with other than 16 edge symbols (``rox.edge``) and rows
    longer than six (``rox.row_length``). Positions count from 1."""
    found: list[Violation] = []
    for j, card in enumerate(row):
        total = sum(card.edge)
        if total != EDGE_SYMBOLS:
            found.append(violation(
                "rox.edge", f"{owner}'s card {j + 1} shows {total} edge symbols, not "
                f"{EDGE_SYMBOLS}: a misread?", player=owner, position=j + 1))
    if len(row) > ROW_CARDS:
        found.append(violation(
            "rox.row_length", f"{owner}'s row has {len(row)} cards; Rox is called on the "
            f"{ROW_CARDS}th", player=owner, count=len(row)))
    length = len(row)
    for j in range(len(row) - 1):
        problem = link_problem(owner, row[j], row[j + 1], j + 2)
        if problem is None:
            continue
        if problem.rule == "rox.tie":
            problem = replace(problem, message=problem.message + f"; cards {j + 2}-"
                              f"{len(row)} stand only if the table accepts it")
        else:
            problem = replace(problem, message=problem.message + f"; cards {j + 2}-"
                              f"{len(row)} go back")
        found.append(problem)
        if problem.rule == "rox.tie" and TIED_EDGE_LINK_HOLDS:
            continue
        length = j + 1
        break
    return RowCheck(length, tuple(found))


def link_problem(owner: str, card: ElementCard, nxt: ElementCard,
                 position: int) -> Violation | None:
    """Why ``nxt`` (at ``position``, from 1) may not follow ``card``: ``rox.link``, or
    ``rox.tie`` when the edge has no single most frequent element and ``nxt``'s centre
    is one of the tied ones; None when the link holds."""
    leaders = card.most_frequent()
    if nxt.centre in leaders and len(leaders) == 1:
        return None
    if nxt.centre in leaders:
        return violation(
            "rox.tie", f"{owner}'s card {position - 1} has {' and '.join(leaders)} equally "
            f"most frequent on its edge, so the link to card {position} ({nxt.centre}) "
            "needs a ruling", player=owner, position=position - 1, elements=list(leaders),
            needs_ruling=True)
    wanted = " or ".join(leaders)
    return violation(
        "rox.link", f"{owner}'s card {position} shows {nxt.centre} at its centre, but "
        f"card {position - 1} asks for {wanted}", player=owner, position=position,
        expected=wanted, found=nxt.centre)


def ranking(players: Sequence[str], caller: str, lengths: Mapping[str, int]) -> list[str]:
    """``rox.rank``: rows of valid length >= 2, longest first; on equal length the
    caller first, then seat order from the caller's left."""
    seat = players.index(caller)
    n = len(players)
    ranked = [p for p in players if lengths.get(p, 0) >= MIN_VALID_LENGTH]
    return sorted(ranked, key=lambda p: (-lengths[p], (players.index(p) - seat) % n))


def awards(players: Sequence[str], caller: str, lengths: Mapping[str, int],
           scoring_cards: Sequence[int]) -> dict[str, int]:
    """Who takes which scoring card: the highest to the first ranked, and so on;
    leftover cards go back to the box."""
    cards = sorted(scoring_cards, reverse=True)
    return dict(zip(ranking(players, caller, lengths), cards, strict=False))


def round_scores(players: Sequence[str], caller: str, lengths: Mapping[str, int],
                 scoring_cards: Sequence[int]) -> dict[str, int]:
    """Points this round: the value of the scoring card taken, else 0."""
    won = awards(players, caller, lengths, scoring_cards)
    return {p: won.get(p, 0) for p in players}


# --- the game -------------------------------------------------------------------------


@dataclass(frozen=True)
class RoxPlay:
    """``player`` lays deck card ``card`` (an index into ``DECK``) at the end of their
    row, or, when ``card`` is None, takes their last card back to the pool."""

    player: str
    card: int | None


@dataclass(frozen=True)
class RoxRound:
    """A finished round: the rows (deck indices), who called, the scoring cards out,
    the valid lengths and the points each player took."""

    rows: tuple[tuple[int, ...], ...]
    caller: str
    scoring_cards: tuple[int, ...]
    valid_lengths: tuple[int, ...]
    scores: tuple[int, ...]


@dataclass(frozen=True)
class RoxState:
    """The table: every row (deck indices, first laid first), the face-up scoring
    cards and the rest of the shuffled scoring pile (next first)."""

    players: tuple[str, ...]
    round_no: int
    rows: tuple[tuple[int, ...], ...]
    display: tuple[int, ...]
    scoring_pile: tuple[int, ...]
    totals: tuple[int, ...]
    history: tuple[RoxRound, ...] = ()
    over: bool = False

    def pool(self) -> list[int]:
        """The element cards in the middle of the table."""
        used = {c for row in self.rows for c in row}
        return [c for c in range(len(DECK)) if c not in used]


class Rox:
    """The Rox rules as a ``companion.games.base.Game``."""

    name = "rox"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS

    def start(self, players: Sequence[str], rng: random.Random, **options: Any) -> RoxState:
        """A new game: the scoring cards shuffled, (players - 1) of them face up."""
        names = tuple(players)
        if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS or len(set(names)) != len(names):
            raise InputError("players", f"Rox takes {MIN_PLAYERS}-{MAX_PLAYERS} distinct "
                             f"players, got {list(names)}")
        pile = list(SCORING_CARD_VALUES)
        rng.shuffle(pile)
        out = len(names) - 1
        return RoxState(players=names, round_no=0, rows=tuple(() for _ in names),
                        display=tuple(pile[:out]), scoring_pile=tuple(pile[out:]),
                        totals=tuple(0 for _ in names))

    def to_act(self, state: RoxState) -> tuple[str, ...]:
        """Everyone builds at once."""
        return () if state.over else state.players

    def legal_plays(self, state: RoxState) -> list[RoxPlay]:
        if state.over:
            return []
        pool = state.pool()
        plays: list[RoxPlay] = []
        for p, row in zip(state.players, state.rows, strict=True):
            plays.extend(RoxPlay(p, c) for c in pool)
            if row:
                plays.append(RoxPlay(p, None))
        return plays

    def check_play(self, state: RoxState, play: RoxPlay) -> tuple[Violation, ...]:
        if state.over:
            return (violation("rox.card", f"the game is over after {ROUNDS} rounds",
                              player=play.player),)
        if play.player not in state.players:
            return (violation("rox.card", f"{play.player!r} is not playing",
                              player=play.player),)
        row = state.rows[state.players.index(play.player)]
        if play.card is None:
            if not row:
                return (violation("rox.card", f"{play.player} has no card to take back",
                                  player=play.player),)
            return ()
        if not 0 <= play.card < len(DECK):
            return (violation("rox.card", f"there is no element card {play.card}",
                              player=play.player, card=play.card),)
        if any(play.card in r for r in state.rows):
            return (violation("rox.card", f"card {play.card} already lies in a row",
                              player=play.player, card=play.card),)
        if len(row) >= ROW_CARDS:
            return (violation("rox.row_length", f"{play.player}'s row is full",
                              player=play.player),)
        return ()

    def apply(self, state: RoxState, play: RoxPlay) -> RoxState:
        """Lay or take back a card; a 6th card calls Rox and the round is verified and
        scored at once."""
        problems = self.check_play(state, play)
        if problems:
            raise IllegalPlay(problems)
        seat = state.players.index(play.player)
        rows = list(state.rows)
        rows[seat] = rows[seat][:-1] if play.card is None else (*rows[seat], play.card)
        state = replace(state, rows=tuple(rows))
        if len(rows[seat]) == ROW_CARDS:
            return self._end_round(state, play.player)
        return state

    def _end_round(self, state: RoxState, caller: str) -> RoxState:
        lengths = {p: check_row(p, [DECK[c] for c in row]).valid_length
                   for p, row in zip(state.players, state.rows, strict=True)}
        scores = round_scores(state.players, caller, lengths, state.display)
        record = RoxRound(state.rows, caller, state.display, tuple(lengths.values()),
                          tuple(scores.values()))
        totals = tuple(t + scores[p] for p, t in zip(state.players, state.totals,
                                                       strict=True))
        state = replace(state, totals=totals, history=(*state.history, record),
                        round_no=state.round_no + 1)
        if state.round_no >= ROUNDS:
            return replace(state, over=True)
        out = len(state.players) - 1
        return replace(state, rows=tuple(() for _ in state.players),
                       display=state.scoring_pile[:out],
                       scoring_pile=state.scoring_pile[out:])

    def scores(self, state: RoxState) -> dict[str, int]:
        return dict(zip(state.players, state.totals, strict=True))

    def is_over(self, state: RoxState) -> bool:
        return state.over

    def winners(self, state: RoxState) -> list[str]:
        """Highest total after five rounds; there can be several winners."""
        return winners(self.scores(state)) if state.over else []

    # the JSON contract -------------------------------------------------------------------

    def check_document(self, doc: Mapping[str, JSON]) -> dict[str, JSON]:
        """Verify one round (``caller``, ``scoring_cards``, ``rows``) or a game
        (``rounds``); see docs/games/rox.md for the shapes."""
        players = read_players(doc, low=MIN_PLAYERS, high=MAX_PLAYERS)
        if ("rows" in doc) == ("rounds" in doc):
            raise InputError("rows", "give either \"rows\" (one round) or \"rounds\"")
        if "rows" in doc:
            verdict = check_round(doc, players, "")
            if "play" in doc:
                _check_play(doc["play"], players, read_rows(doc["rows"], players, "rows"),
                            verdict)
            verdict.pop("problems")
            return {"game": self.name, **verdict}
        if "play" in doc:
            raise InputError("play", "a play is checked against \"rows\", not \"rounds\"")
        rounds = require(doc, "rounds", list)
        if not 1 <= len(rounds) <= ROUNDS:
            raise InputError("rounds", f"a game has 1 to {ROUNDS} rounds, got {len(rounds)}")
        totals = dict.fromkeys(players, 0)
        found: list[JSON] = []
        notes: list[JSON] = []
        per_round: list[JSON] = []
        summary: list[str] = []
        last: dict[str, int] = {}
        for i, entry in enumerate(rounds):
            path = f"rounds[{i}]"
            expect(entry, dict, path)
            verdict = check_round(entry, players, path)
            if "play" in entry:
                raise InputError(f"{path}.play", "a play is checked against \"rows\"")
            for key, bucket in (("violations", found), ("notes", notes)):
                for v in verdict[key]:
                    bucket.append({**v, "round": i + 1})
            last = verdict["scores"]
            for p in players:
                totals[p] += last[p]
            per_round.append({"round": i + 1, "caller": verdict["caller"],
                              "valid_lengths": verdict["valid_lengths"],
                              "awards": verdict["awards"], "scores": last})
            summary.append(f"round {i + 1}: " + ", ".join(f"{p} {last[p]}" for p in players))
        game_over = len(rounds) == ROUNDS
        summary.append(f"after {len(rounds)} of {ROUNDS} rounds: "
                       + ("game over" if game_over else "game goes on"))
        return {"game": self.name, "valid": not found, "violations": found,
                "scores": last, "notes": notes,
                "needs_ruling": any(v["rule"] == "rox.tie" for v in found),
                "rounds": per_round, "totals": totals, "game_over": game_over,
                "winners": winners(totals) if game_over else [],
                "leaders": winners(totals), "summary": summary}


# --- reading the JSON contract --------------------------------------------------------


def read_card(value: JSON, field: str) -> ElementCard:
    """``{"centre": element, "edge": {element: count}}``; an unknown element or a
    negative count is a card that cannot exist (InputError)."""
    card = expect(value, dict, field)
    centre = require(card, "centre", str, field)
    if centre not in ELEMENTS:
        raise InputError(f"{field}.centre", f"unknown element {centre!r} (one of "
                         f"{', '.join(ELEMENTS)})")
    edge = require(card, "edge", dict, field)
    for element, count in edge.items():
        if element not in ELEMENTS:
            raise InputError(f"{field}.edge.{element}", f"unknown element {element!r}")
        expect(count, int, f"{field}.edge.{element}")
        if not 0 <= count <= EDGE_SYMBOLS:
            raise InputError(f"{field}.edge.{element}", f"a count is 0-{EDGE_SYMBOLS}, "
                             f"not {count}")
    return ElementCard(centre, tuple(int(edge.get(e, 0)) for e in ELEMENTS))


def read_rows(value: JSON, players: Sequence[str], field: str) -> dict[str, list[ElementCard]]:
    """Every player's row, first card laid first (a missing player has no cards)."""
    table = expect(value, dict, field)
    for name in table:
        check_player(name, players, f"{field}.{name}")
    rows = {}
    for p in players:
        cards = expect(table.get(p, []), list, f"{field}.{p}")
        rows[p] = [read_card(c, f"{field}.{p}[{j}]") for j, c in enumerate(cards)]
    return rows


def read_scoring_cards(value: JSON, players: Sequence[str], field: str) -> list[int]:
    """The face-up scoring cards: (players - 1) whole numbers 1-10."""
    cards = expect(value, list, field)
    if len(cards) != len(players) - 1:
        raise InputError(field, f"{len(players)} players play for {len(players) - 1} "
                         f"scoring cards, got {len(cards)}")
    for j, c in enumerate(cards):
        expect(c, int, f"{field}[{j}]")
        if not MIN_SCORING_VALUE <= c <= MAX_SCORING_VALUE:
            raise InputError(f"{field}[{j}]", f"a scoring card shows {MIN_SCORING_VALUE}-"
                             f"{MAX_SCORING_VALUE}, not {c}")
    return [int(c) for c in cards]


def check_round(doc: Mapping[str, JSON], players: Sequence[str], path: str) -> dict[str, JSON]:
    """Verify every row of one round, rank them and award the scoring cards."""
    pre = f"{path}." if path else ""
    caller = check_player(require(doc, "caller", str, path), players, f"{pre}caller")
    cards = read_scoring_cards(require(doc, "scoring_cards", list, path), players,
                               f"{pre}scoring_cards")
    rows = read_rows(require(doc, "rows", dict, path), players, f"{pre}rows")
    checks = {p: check_row(p, row) for p, row in rows.items()}
    found = [v for c in checks.values() for v in c.problems]
    lengths = {p: c.valid_length for p, c in checks.items()}
    won = awards(players, caller, lengths, cards)
    notes = [violation("rox.short", f"{p}'s row has {lengths[p]} valid card"
                       f"{'' if lengths[p] == 1 else 's'}; it takes no scoring card",
                       player=p, valid_length=lengths[p])
             for p in players if lengths[p] < MIN_VALID_LENGTH]
    summary = []
    order = ranking(players, caller, lengths)
    for p in players:
        extra = " (caller)" if p == caller else ""
        cut = f" of {len(rows[p])}" if lengths[p] != len(rows[p]) else ""
        if p in won:
            prize = f"ranked {order.index(p) + 1}, takes {won[p]}"
        elif p in order:
            prize = f"ranked {order.index(p) + 1}, no scoring card left"
        else:
            prize = "too short to score"
        summary.append(f"{p}{extra}: valid length {lengths[p]}{cut} → {prize}")
    left = sorted(cards, reverse=True)[len(won):]
    if left:
        summary.append(f"back to the box: {', '.join(map(str, left))}")
    return {"valid": not found, "violations": [v.to_json() for v in found],
            "scores": {p: won.get(p, 0) for p in players}, "caller": caller,
            "valid_lengths": lengths, "awards": won,
            "ranking": order,
            "notes": [v.to_json() for v in notes],
            "needs_ruling": any(c.needs_ruling for c in checks.values()),
            "summary": summary, "problems": found}


def _check_play(value: JSON, players: Sequence[str], rows: Mapping[str, list[ElementCard]],
                verdict: dict[str, JSON]) -> None:
    """``"play": {"player", "card"}``: may this card go at the end of that player's
    row? Adds ``play_legal`` and the play's violations to ``verdict``."""
    play = expect(value, dict, "play")
    player = check_player(require(play, "player", str, "play"), players, "play.player")
    card = read_card(require(play, "card", dict, "play"), "play.card")
    row = rows[player]
    position = len(row) + 1
    problems: list[Violation] = []
    if sum(card.edge) != EDGE_SYMBOLS:
        problems.append(violation(
            "rox.edge", f"the card shows {sum(card.edge)} edge symbols, not {EDGE_SYMBOLS}",
            player=player, position=position))
    if len(row) >= ROW_CARDS:
        problems.append(violation("rox.row_length", f"{player}'s row already has "
                                  f"{len(row)} cards", player=player, count=len(row)))
    elif row:
        problem = link_problem(player, row[-1], card, position)
        if problem is not None:
            problems.append(problem)
    legal = not any(v.rule != "rox.tie" for v in problems)
    verdict["play_legal"] = legal
    if any(v.rule == "rox.tie" for v in problems):
        verdict["needs_ruling"] = True
    verdict["violations"] = [*verdict["violations"], *(v.to_json() for v in problems)]
    verdict["valid"] = not verdict["violations"]
    verdict["summary"] = [f"play: {player} lays a card with {card.centre} at its centre as card "
                          f"{position}: "
                          + ("links" if not problems else "legal pending a ruling"
                             if legal else "does not link"), *verdict["summary"]]


GAME = Rox()
