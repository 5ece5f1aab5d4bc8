"""Nox (RULES.md section 1): the whole game, position and play checks, and scoring.

Cards are numbers 1-15; the number fixes the colour. A kitty is a tuple of stacks,
each stack listed bottom to top. In the JSON contract stacks are numbered from 1 in
the order given (``stack 1`` is the first list), as players count them.
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
    read_players,
    require,
    violation,
    winners,
)

# --- the cards (RULES.md §1 "Cards") --------------------------------------------------

COLOURS: dict[int, str] = {
    **{n: "blue" for n in (1, 4, 9, 11, 15)},
    **{n: "green" for n in (2, 5, 7, 12, 14)},
    **{n: "orange" for n in (3, 6, 8, 10, 13)},
}
ALL_COLOURS = frozenset(COLOURS.values())
NUMBERS = tuple(range(1, 16))
COPIES = 6
HAND_SIZE = 3
MAX_STACKS = 6
MIN_PLAYERS, MAX_PLAYERS = 2, 6

TARGETS: dict[str, int] = {"standard": 150, "thick_skinned": 100}
"""The total that ends the game, per variant (RULES.md §1 "Scoring")."""

THICK_SKINNED_TIED_TOP_SCORERS_RECORD = True
"""*(decision)* In "thick skinned", all tied top scorers of a round record their points
(False: on a tie nobody records)."""

Stack = tuple[int, ...]
Kitty = tuple[Stack, ...]


def colour(number: int) -> str:
    """The colour a number is printed in."""
    return COLOURS[number]


def full_deck() -> list[int]:
    """All 90 cards: six copies of every number 1-15."""
    return [n for n in NUMBERS for _ in range(COPIES)]


def tops(kitty: Kitty) -> tuple[int, ...]:
    """The open (top) card of every stack."""
    return tuple(stack[-1] for stack in kitty)


def stack_count(kitty: Kitty) -> int:
    """Stacks once pending merges are made (``nox.max_stacks``: merges counted first)."""
    return len(set(tops(kitty)))


def kitty_score(kitty: Kitty) -> int:
    """``nox.colours``: the sum of the tops if they show all three colours, else 0."""
    shown = tops(kitty)
    if {colour(t) for t in shown} != ALL_COLOURS:
        return 0
    return sum(shown)


def round_scores(kitties: Mapping[str, Kitty]) -> dict[str, int]:
    """What every kitty scores at the end of a round (before the variant's filter)."""
    return {p: kitty_score(k) for p, k in kitties.items()}


def recorded_scores(raw: Mapping[str, int], variant: str) -> dict[str, int]:
    """The points players write down: everyone in the standard game; in "thick skinned"
    only the round's top scorer(s) (``THICK_SKINNED_TIED_TOP_SCORERS_RECORD``)."""
    if variant == "standard" or not raw:
        return dict(raw)
    best = max(raw.values())
    top = [p for p, s in raw.items() if s == best]
    if len(top) > 1 and not THICK_SKINNED_TIED_TOP_SCORERS_RECORD:
        top = []
    return {p: (s if p in top else 0) for p, s in raw.items()}


def is_round_over(kitties: Sequence[Kitty] | Mapping[str, Kitty]) -> bool:
    """``nox.max_stacks``: some kitty has six stacks (or more, which is illegal)."""
    values = kitties.values() if isinstance(kitties, Mapping) else kitties
    return any(stack_count(k) >= MAX_STACKS for k in values)


def place(kitty: Kitty, card: int, stack: int | None) -> Kitty:
    """The kitty after ``card`` starts a new stack (``stack`` None) or covers stack
    ``stack`` (0-based), with the merge ``nox.merge`` demands: the changed stack is
    put on top of the stack already showing that number, which keeps its place."""
    stacks = list(kitty)
    if stack is None:
        stacks.append((card,))
        changed = len(stacks) - 1
    else:
        stacks[stack] = (*stacks[stack], card)
        changed = stack
    for i, other in enumerate(stacks):
        if i != changed and other[-1] == card:
            stacks[i] = other + stacks[changed]
            del stacks[changed]
            break
    return tuple(stacks)


# --- checks ---------------------------------------------------------------------------


def placement_violations(
    kitty: Kitty, card: int, stack: int | None, owner: str
) -> list[Violation]:
    """Why ``card`` may not go there (``nox.card_count``, ``nox.place``,
    ``nox.cover_colour``); ``stack`` is 0-based, None for a new stack."""
    if card not in COLOURS:
        return [violation("nox.card_count", f"there is no card {card} (cards are 1-15)",
                          card=card)]
    if stack is None:
        return []
    if not 0 <= stack < len(kitty):
        return [violation("nox.place", f"{owner}'s kitty has no stack {stack + 1} "
                          f"(it has {len(kitty)})", player=owner, stack=stack + 1)]
    top = kitty[stack][-1]
    if colour(top) != colour(card):
        return [violation(
            "nox.cover_colour",
            f"the {colour(card)} {card} cannot cover the {colour(top)} {top} on "
            f"{owner}'s stack {stack + 1}", player=owner, stack=stack + 1, card=card)]
    return []


def kitty_violations(owner: str, kitty: Kitty) -> list[Violation]:
    """Every rule one kitty breaks on its own: a stack of mixed colours
    (``nox.cover_colour``), equal tops not merged (``nox.merge``), more than six stacks
    (``nox.max_stacks``)."""
    found: list[Violation] = []
    for s, stack in enumerate(kitty):
        for pos in range(1, len(stack)):
            below, card = stack[pos - 1], stack[pos]
            if colour(below) != colour(card):
                found.append(violation(
                    "nox.cover_colour",
                    f"{owner}'s stack {s + 1}: the {colour(card)} {card} lies on the "
                    f"{colour(below)} {below}", player=owner, stack=s + 1, card=card,
                    position=pos + 1))
    by_top: dict[int, list[int]] = {}
    for s, stack in enumerate(kitty):
        by_top.setdefault(stack[-1], []).append(s + 1)
    for number, stacks in by_top.items():
        if len(stacks) > 1:
            names = ", ".join(str(s) for s in stacks)
            found.append(violation(
                "nox.merge", f"{owner}'s stacks {names} all show {number} and must be "
                f"one stack", player=owner, stacks=stacks, card=number))
    if stack_count(kitty) > MAX_STACKS:
        found.append(violation(
            "nox.max_stacks", f"{owner}'s kitty has {stack_count(kitty)} stacks; the "
            f"round ends at {MAX_STACKS}", player=owner, count=stack_count(kitty)))
    return found


def position_violations(
    kitties: Mapping[str, Kitty], extra_cards: Sequence[int] = ()
) -> list[Violation]:
    """Every rule the cards on the table break, kitty by kitty, then the deck
    (``nox.card_count``: no number more than six times, ``extra_cards`` counted too)."""
    found: list[Violation] = []
    for owner, kitty in kitties.items():
        found.extend(kitty_violations(owner, kitty))
    counts = Counter(c for k in kitties.values() for stack in k for c in stack)
    counts.update(extra_cards)
    for number in sorted(counts):
        if counts[number] > COPIES:
            found.append(violation(
                "nox.card_count", f"{counts[number]} cards show {number}; the deck has "
                f"only {COPIES}", card=number, count=counts[number]))
    return found


# --- the game -------------------------------------------------------------------------


@dataclass(frozen=True)
class NoxPlay:
    """``player`` lays ``card`` in ``kitty``'s kitty (its owner's name): on stack
    ``stack`` (0-based) or, when ``stack`` is None, as a new stack."""

    player: str
    card: int
    kitty: str
    stack: int | None = None


@dataclass(frozen=True)
class NoxRound:
    """A finished round: the kitties, what they scored and what was recorded."""

    kitties: tuple[Kitty, ...]
    scores: tuple[int, ...]
    recorded: tuple[int, ...]


@dataclass(frozen=True)
class NoxState:
    """Everything on and around the table. ``pile`` is the draw pile, next card first;
    each round is dealt from a generator seeded by ``seed`` and the round number."""

    players: tuple[str, ...]
    variant: str
    seed: int
    round_no: int
    starter: int
    turn: int
    hands: tuple[tuple[int, ...], ...]
    pile: tuple[int, ...]
    kitties: tuple[Kitty, ...]
    totals: tuple[int, ...]
    history: tuple[NoxRound, ...] = ()
    over: bool = False

    def kitty_of(self, player: str) -> Kitty:
        return self.kitties[self.players.index(player)]


def _deal(players: tuple[str, ...], seed: int, round_no: int) -> tuple[
        tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Shuffle all 90 cards for a round: three cards a hand, the rest the pile."""
    deck = full_deck()
    random.Random(f"nox/{seed}/{round_no}").shuffle(deck)
    n = len(players)
    hands = tuple(tuple(deck[i * HAND_SIZE:(i + 1) * HAND_SIZE]) for i in range(n))
    return hands, tuple(deck[n * HAND_SIZE:])


class Nox:
    """The Nox rules as a ``companion.games.base.Game``."""

    name = "nox"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS

    # protocol ---------------------------------------------------------------------------

    def start(self, players: Sequence[str], rng: random.Random, **options: Any) -> NoxState:
        """A new game. Options: ``variant`` ("standard" or "thick_skinned") and
        ``first`` (seat of the youngest player, who starts; default 0)."""
        names = tuple(players)
        if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS or len(set(names)) != len(names):
            raise InputError("players", f"Nox takes {MIN_PLAYERS}-{MAX_PLAYERS} distinct "
                             f"players, got {list(names)}")
        variant = str(options.get("variant", "standard"))
        if variant not in TARGETS:
            raise InputError("variant", f"unknown variant {variant!r} (one of "
                             f"{', '.join(TARGETS)})")
        first = int(options.get("first", 0)) % len(names)
        seed = rng.getrandbits(63)
        hands, pile = _deal(names, seed, 0)
        return NoxState(players=names, variant=variant, seed=seed, round_no=0,
                        starter=first, turn=first, hands=hands, pile=pile,
                        kitties=tuple(() for _ in names), totals=tuple(0 for _ in names))

    def to_act(self, state: NoxState) -> tuple[str, ...]:
        return () if state.over else (state.players[state.turn],)

    def legal_plays(self, state: NoxState) -> list[NoxPlay]:
        """Every distinct card in hand, into every kitty, as a new stack or on every
        stack of its colour (``nox.place``)."""
        if state.over:
            return []
        player = state.players[state.turn]
        plays: list[NoxPlay] = []
        for card in sorted(set(state.hands[state.turn])):
            for owner, kitty in zip(state.players, state.kitties, strict=True):
                plays.append(NoxPlay(player, card, owner, None))
                plays.extend(NoxPlay(player, card, owner, s) for s, stack in enumerate(kitty)
                             if colour(stack[-1]) == colour(card))
        return plays

    def check_play(self, state: NoxState, play: NoxPlay) -> tuple[Violation, ...]:
        if state.over:
            return (violation("nox.game_end", "the game is over", player=play.player),)
        actor = state.players[state.turn]
        if play.player != actor:
            return (violation("nox.turn", f"it is {actor}'s turn, not {play.player}'s",
                              player=play.player),)
        if play.card not in state.hands[state.turn]:
            return (violation("nox.turn", f"{actor} holds no {play.card}", player=actor,
                              card=play.card),)
        if play.kitty not in state.players:
            return (violation("nox.place", f"there is no kitty of {play.kitty!r}",
                              player=play.kitty),)
        return tuple(placement_violations(state.kitty_of(play.kitty), play.card, play.stack,
                                          play.kitty))

    def apply(self, state: NoxState, play: NoxPlay) -> NoxState:
        """Lay the card (merging as ``nox.merge`` demands), draw, and end the round
        when a kitty has six stacks or every card is out (``nox.round_end``, checked
        after every play)."""
        problems = self.check_play(state, play)
        if problems:
            raise IllegalPlay(problems)
        seat = state.turn
        hand = list(state.hands[seat])
        hand.remove(play.card)
        target = state.players.index(play.kitty)
        kitties = list(state.kitties)
        kitties[target] = place(kitties[target], play.card, play.stack)
        pile = state.pile
        if stack_count(kitties[target]) < MAX_STACKS and pile:
            hand.append(pile[0])
            pile = pile[1:]
        hands = list(state.hands)
        hands[seat] = tuple(hand)
        state = replace(state, hands=tuple(hands), pile=pile, kitties=tuple(kitties))
        if is_round_over(state.kitties) or (not pile and not any(hands)):
            return self._end_round(state)
        n = len(state.players)
        nxt = next(s % n for s in range(seat + 1, seat + n + 1) if hands[s % n])
        return replace(state, turn=nxt)

    def _end_round(self, state: NoxState) -> NoxState:
        """Score the round (``nox.colours``), record per the variant, then end the game
        (``nox.game_end``) or deal the next round, the start passing left."""
        raw = round_scores(dict(zip(state.players, state.kitties, strict=True)))
        rec = recorded_scores(raw, state.variant)
        totals = tuple(t + rec[p] for p, t in zip(state.players, state.totals, strict=True))
        record = NoxRound(state.kitties, tuple(raw.values()), tuple(rec.values()))
        state = replace(state, totals=totals, history=(*state.history, record))
        if max(totals) >= TARGETS[state.variant]:
            return replace(state, over=True)
        round_no = state.round_no + 1
        starter = (state.starter + 1) % len(state.players)
        hands, pile = _deal(state.players, state.seed, round_no)
        return replace(state, round_no=round_no, starter=starter, turn=starter, hands=hands,
                       pile=pile, kitties=tuple(() for _ in state.players))

    def scores(self, state: NoxState) -> dict[str, int]:
        return dict(zip(state.players, state.totals, strict=True))

    def is_over(self, state: NoxState) -> bool:
        return state.over

    def winners(self, state: NoxState) -> list[str]:
        """Highest total; ties share the win (empty until the game is over)."""
        return winners(self.scores(state)) if state.over else []

    # the JSON contract -------------------------------------------------------------------

    def check_document(self, doc: Mapping[str, JSON]) -> dict[str, JSON]:
        """Check a snapshot (``kitties``) or a whole game (``rounds``); see
        docs/games/nox.md for the shapes."""
        players = read_players(doc, low=MIN_PLAYERS, high=MAX_PLAYERS)
        variant = optional(doc, "variant", str, "standard")
        if variant not in TARGETS:
            raise InputError("variant", f"unknown variant {variant!r} (one of "
                             f"{', '.join(TARGETS)})")
        if ("kitties" in doc) == ("rounds" in doc):
            raise InputError("kitties", "give either \"kitties\" (one round) or \"rounds\"")
        if "kitties" in doc:
            return self._check_round_document(doc, players)
        if "play" in doc:
            raise InputError("play", "a play is checked against \"kitties\", not \"rounds\"")
        return self._check_game_document(doc, players, variant)

    def _check_round_document(
        self, doc: Mapping[str, JSON], players: tuple[str, ...]
    ) -> dict[str, JSON]:
        kitties = read_kitties(doc["kitties"], players, "kitties")
        found = position_violations(kitties)
        scores = round_scores(kitties)
        out: dict[str, JSON] = {"game": self.name}
        summary = _summary(kitties)
        after: dict[str, JSON] | None = None
        if "play" in doc:
            play = read_play(doc["play"], players, kitties)
            problems = placement_violations(kitties[play.kitty], play.card, play.stack,
                                            play.kitty)
            if is_round_over(kitties):
                problems.insert(0, violation(
                    "nox.round_end", "the round is already over: a kitty has six stacks",
                    player=play.player))
            counted = [*(c for k in kitties.values() for s in k for c in s), play.card]
            if Counter(counted)[play.card] > COPIES:
                problems.append(violation(
                    "nox.card_count", f"a {COPIES + 1}th {play.card} cannot exist",
                    card=play.card))
            found.extend(problems)
            where = "a new stack" if play.stack is None else f"stack {play.stack + 1}"
            verdict = "legal" if not problems else "illegal"
            summary.insert(0, f"play: {play.player} lays {play.card} on {where} of "
                           f"{play.kitty}'s kitty: {verdict}")
            if not problems:
                new = dict(kitties)
                new[play.kitty] = place(kitties[play.kitty], play.card, play.stack)
                merged = len(new[play.kitty]) < len(kitties[play.kitty]) + (
                    1 if play.stack is None else 0)
                after = {"kitties": {p: [list(s) for s in k] for p, k in new.items()},
                         "merged": merged, "scores": round_scores(new),
                         "round_over": is_round_over(new)}
                if merged:
                    summary.insert(1, f"  the two stacks showing {play.card} in "
                                   f"{play.kitty}'s kitty merge (nox.merge)")
            out["play_legal"] = not problems
        out.update({"valid": not found, "violations": [v.to_json() for v in found],
                    "scores": scores, "round_over": is_round_over(kitties),
                    "summary": summary})
        if after is not None:
            out["after"] = after
        return out

    def _check_game_document(
        self, doc: Mapping[str, JSON], players: tuple[str, ...], variant: str
    ) -> dict[str, JSON]:
        rounds = require(doc, "rounds", list)
        if not rounds:
            raise InputError("rounds", "give at least one round")
        target = TARGETS[variant]
        totals = dict.fromkeys(players, 0)
        found: list[Violation] = []
        per_round: list[JSON] = []
        summary: list[str] = []
        ended_after: int | None = None
        last: dict[str, int] = dict.fromkeys(players, 0)
        for i, entry in enumerate(rounds):
            path = f"rounds[{i}]"
            expect(entry, dict, path)
            kitties = read_kitties(require(entry, "kitties", dict, path), players,
                                   f"{path}.kitties")
            for v in position_violations(kitties):
                found.append(replace(v, where=(*v.where, ("round", i + 1))))
            raw = round_scores(kitties)
            rec = recorded_scores(raw, variant)
            if ended_after is not None:
                found.append(violation(
                    "nox.game_end", f"round {i + 1} was played after the game ended in "
                    f"round {ended_after}; it is not counted", round=i + 1))
                counted = False
            else:
                for p in players:
                    totals[p] += rec[p]
                last = rec
                counted = True
                if max(totals.values()) >= target:
                    ended_after = i + 1
            per_round.append({"round": i + 1, "scores": raw, "recorded": rec,
                              "counted": counted, "round_over": is_round_over(kitties)})
            summary.append(f"round {i + 1}: " + ", ".join(
                f"{p} {raw[p]}" + ("" if rec[p] == raw[p] else f" (records {rec[p]})")
                for p in players) + ("" if counted else " — not counted"))
        game_over = ended_after is not None
        summary.append(f"target {target} ({variant}); "
                       + ("game over" if game_over else "game goes on"))
        return {"game": self.name, "valid": not found,
                "violations": [v.to_json() for v in found], "scores": last,
                "rounds": per_round, "totals": totals, "variant": variant,
                "target": target, "game_over": game_over,
                "winners": winners(totals) if game_over else [],
                "leaders": winners(totals), "summary": summary}


# --- reading the JSON contract --------------------------------------------------------


def read_card(value: JSON, field: str) -> int:
    """A card number; a number outside 1-15 is a card that cannot exist (InputError)."""
    number = expect(value, int, field)
    if number not in COLOURS:
        raise InputError(field, f"there is no Nox card {number} (cards are 1-15)")
    return int(number)


def read_kitties(value: JSON, players: Sequence[str], field: str) -> dict[str, Kitty]:
    """Every player's kitty (a missing player has an empty one), stacks bottom to top."""
    table = expect(value, dict, field)
    for name in table:
        check_player(name, players, f"{field}.{name}")
    kitties: dict[str, Kitty] = {}
    for p in players:
        stacks = expect(table.get(p, []), list, f"{field}.{p}")
        kitty: list[Stack] = []
        for s, stack in enumerate(stacks):
            expect(stack, list, f"{field}.{p}[{s}]")
            if not stack:
                raise InputError(f"{field}.{p}[{s}]", "a stack holds at least one card")
            kitty.append(tuple(read_card(c, f"{field}.{p}[{s}][{j}]")
                               for j, c in enumerate(stack)))
        kitties[p] = tuple(kitty)
    return kitties


def read_play(value: JSON, players: Sequence[str], kitties: Mapping[str, Kitty]) -> NoxPlay:
    """``{"player", "card", "kitty", "stack"}``: ``stack`` counts from 1; null or
    absent starts a new stack."""
    play = expect(value, dict, "play")
    player = check_player(require(play, "player", str, "play"), players, "play.player")
    card = read_card(require(play, "card", int, "play"), "play.card")
    owner = check_player(require(play, "kitty", str, "play"), players, "play.kitty")
    stack = optional(play, "stack", int, None, "play")
    if stack is not None and not 1 <= stack <= len(kitties[owner]):
        raise InputError("play.stack", f"{owner}'s kitty has stacks 1-{len(kitties[owner])}"
                         f", not {stack}")
    return NoxPlay(player, card, owner, None if stack is None else stack - 1)


def _summary(kitties: Mapping[str, Kitty]) -> list[str]:
    """One human line per kitty: its tops, the colours missing, the score."""
    lines = []
    for p, kitty in kitties.items():
        shown = tops(kitty)
        missing = sorted(ALL_COLOURS - {colour(t) for t in shown})
        why = f"no {' or '.join(missing)}" if missing else "all three colours"
        lines.append(f"{p}: tops {', '.join(map(str, shown)) or '(none)'} — {why} "
                     f"→ {kitty_score(kitty)}")
    if is_round_over(kitties):
        lines.append("round over: a kitty has six stacks")
    return lines


GAME = Nox()
