"""Qwixx: Das Kartenspiel played through in code: setup, the three turn steps, locks,
fouls, the end, the reshuffle decision and jokers; random full games keep the
invariants (RULES.md §2)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from itertools import combinations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import companion.games.qwixx as qwixx
from companion.games.base import IllegalPlay
from companion.games.qwixx import (
    GAME,
    ROWS,
    Card,
    PlayCards,
    QwixxState,
    Sheet,
    Take,
    TopCross,
    full_deck,
    position,
    sheet_violations,
)
from companion.rules import RULES

NAMES = ("Anna", "Ben", "Clara", "Dora", "Emil")


def formula_score(sheet: Sheet) -> int:
    """The rules' formula, computed independently of the engine's helpers."""
    total = 0
    for i, r in enumerate(ROWS):
        n = len(sheet.rows[i]) + (1 if r in sheet.locks else 0)
        total += sum(range(1, n + 1))
    return total - 5 * sheet.fouls


def card(text: str) -> Card:
    return Card(text[0], int(text[1:]))


# --- setup ------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [2, 3, 4, 5])
@pytest.mark.parametrize("jokers", [False, True])
def test_setup(count: int, jokers: bool) -> None:
    state = GAME.start(NAMES[:count], random.Random(count), jokers=jokers)
    total = 55 if jokers else 44
    assert all(len(h) == 4 for h in state.hands)
    assert len(state.display) == 4
    assert len(state.pile) == total - 4 * count - 4
    assert sorted(state.all_cards()) == sorted(full_deck(jokers))
    assert GAME.to_act(state) == (NAMES[0],)
    assert all(isinstance(p, Take) for p in GAME.legal_plays(state))
    assert GAME.scores(state) == dict.fromkeys(NAMES[:count], 0)


def test_setup_is_seeded() -> None:
    a = GAME.start(NAMES[:3], random.Random(7))
    b = GAME.start(NAMES[:3], random.Random(7))
    c = GAME.start(NAMES[:3], random.Random(8))
    assert a == b and a != c


@pytest.mark.parametrize("count", [1, 6])
def test_player_count(count: int) -> None:
    with pytest.raises(ValueError):
        GAME.start(NAMES[:1] * count, random.Random(0))


# --- a turn, step by step -----------------------------------------------------------------


def fixed_state(**changes: object) -> QwixxState:
    """Two players with known cards: Anna holds r2 r3 r6 g9, the display r4 y5 g6 b7,
    the pile starts y8 b9."""
    base = QwixxState(
        players=("Anna", "Ben"), jokers=False, seed=1,
        hands=(tuple(map(card, ["r2", "r3", "r6", "g9"])),
               tuple(map(card, ["y2", "y3", "b12", "b11"]))),
        display=tuple(map(card, ["r4", "y5", "g6", "b7"])),
        pile=tuple(map(card, ["y8", "b9", "g12", "r12"])), discard=(),
        sheets=(Sheet(), Sheet()))
    return replace(base, **changes)  # type: ignore[arg-type]


def test_take_refills_the_display_and_announces_the_new_top_card() -> None:
    state = GAME.apply(fixed_state(), Take("Anna", 0))
    assert card("r4") in state.hands[0] and len(state.hands[0]) == 5
    assert state.display == tuple(map(card, ["y8", "y5", "g6", "b7"]))
    assert state.announced == 9  # the back of b9, now on top of the pile
    assert state.phase == "top" and GAME.to_act(state) == ("Anna",)


def test_everyone_may_cross_the_announced_number_in_one_row() -> None:
    state = GAME.apply(fixed_state(), Take("Anna", 0))
    rows = {p.row for p in GAME.legal_plays(state) if isinstance(p, TopCross)}
    assert rows == {None, *ROWS}
    state = GAME.apply(state, TopCross("Anna", None))
    assert GAME.to_act(state) == ("Ben",)
    state = GAME.apply(state, TopCross("Ben", "green"))
    assert state.sheets[1].row("green") == (9,)
    assert state.phase == "play" and GAME.to_act(state) == ("Anna",)


def test_play_crosses_and_discards() -> None:
    state = GAME.apply(fixed_state(), Take("Anna", 0))
    state = GAME.apply(state, TopCross("Anna", None))
    state = GAME.apply(state, TopCross("Ben", None))
    play = PlayCards("Anna", tuple(map(card, ["r2", "r3", "r4"])), (2, 3, 4))
    assert play in GAME.legal_plays(state)
    state = GAME.apply(state, play)
    assert state.sheets[0].row("red") == (2, 3, 4) and state.sheets[0].fouls == 0
    assert state.discard == play.cards
    assert GAME.scores(state) == {"Anna": 6, "Ben": 0}
    assert GAME.to_act(state) == ("Ben",) and state.phase == "take"


def test_foul_when_the_active_player_crosses_nothing() -> None:
    state = GAME.apply(fixed_state(), Take("Anna", 0))
    state = GAME.apply(state, TopCross("Anna", None))
    state = GAME.apply(state, TopCross("Ben", "red"))  # Ben crossing does not help Anna
    state = GAME.apply(state, PlayCards("Anna", (card("g9"),)))
    assert state.sheets[0].fouls == 1 and GAME.scores(state)["Anna"] == -5


def test_no_foul_when_the_active_player_crossed_the_announced_number() -> None:
    state = GAME.apply(fixed_state(), Take("Anna", 0))
    assert GAME.fouls_if_nothing(state)
    state = GAME.apply(state, TopCross("Anna", "blue"))
    assert not GAME.fouls_if_nothing(state)
    state = GAME.apply(state, TopCross("Ben", None))
    state = GAME.apply(state, PlayCards("Anna", (card("g9"),)))
    assert state.sheets[0].fouls == 0 and state.sheets[0].row("blue") == (9,)


def test_out_of_turn_and_out_of_step_plays_are_rejected() -> None:
    state = fixed_state()
    assert [v.rule for v in GAME.check_play(state, Take("Ben", 0))] == ["qwixx.turn"]
    assert [v.rule for v in GAME.check_play(state, TopCross("Anna", "red"))] == ["qwixx.turn"]
    assert [v.rule for v in GAME.check_play(state, Take("Anna", 4))] == ["qwixx.turn"]
    with pytest.raises(IllegalPlay):
        GAME.apply(state, Take("Ben", 0))


def test_cards_not_held_are_rejected() -> None:
    state = GAME.apply(fixed_state(), Take("Anna", 0))
    state = GAME.apply(GAME.apply(state, TopCross("Anna", None)), TopCross("Ben", None))
    found = GAME.check_play(state, PlayCards("Anna", (card("r5"),), (5,)))
    assert [v.rule for v in found] == ["qwixx.card"]


# --- locks and the end ----------------------------------------------------------------------


def five(row: str) -> tuple[int, ...]:
    return (2, 3, 4, 5, 6) if row in ("red", "yellow") else (12, 11, 10, 9, 8)


def test_locking_a_second_row_ends_the_game_after_the_turn() -> None:
    ben = Sheet(rows=((), (), five("green"), ()))
    ben = ben.cross("blue", [12, 11, 10, 9, 8, 2])  # one lock already
    pile = tuple(map(card, ["y8", "g2", "g12", "r12"]))  # after the take, g2's back: 2
    state = fixed_state(sheets=(Sheet(), ben), pile=pile)
    state = GAME.apply(state, Take("Anna", 0))
    assert state.announced == 2
    state = GAME.apply(state, TopCross("Anna", None))
    assert TopCross("Ben", "green") in GAME.legal_plays(state)
    state = GAME.apply(state, TopCross("Ben", "green"))
    assert state.sheets[1].locks == {"green", "blue"}
    assert not GAME.is_over(state)  # the turn finishes first
    state = GAME.apply(state, PlayCards("Anna", (card("r2"),), (2,)))
    assert GAME.is_over(state) and GAME.to_act(state) == () and GAME.legal_plays(state) == []
    assert [v.rule for v in GAME.check_play(state, Take("Ben", 0))] == ["qwixx.end"]


def test_the_fourth_foul_ends_the_game() -> None:
    state = fixed_state(sheets=(Sheet(fouls=3), Sheet()))
    state = GAME.apply(state, Take("Anna", 0))
    state = GAME.apply(GAME.apply(state, TopCross("Anna", None)), TopCross("Ben", None))
    state = GAME.apply(state, PlayCards("Anna", (card("g9"),)))
    assert state.sheets[0].fouls == 4 and GAME.is_over(state)
    assert GAME.scores(state)["Anna"] == -20


def test_the_last_number_needs_five_crosses_in_the_top_card_step() -> None:
    pile = tuple(map(card, ["y8", "r12", "g12"]))
    four = Sheet(rows=((2, 3, 4, 5), (), (), ()))
    state = GAME.apply(fixed_state(sheets=(four, Sheet()), pile=pile), Take("Anna", 0))
    assert state.announced == 12
    assert TopCross("Anna", "red") not in GAME.legal_plays(state)
    assert [v.rule for v in GAME.check_play(state, TopCross("Anna", "red"))] == ["qwixx.lock"]


# --- the reshuffle decision -------------------------------------------------------------------


def test_discards_are_reshuffled_when_the_pile_runs_out() -> None:
    discard = tuple(map(card, ["r7", "r8", "r9", "y9", "g5"]))
    state = fixed_state(pile=(card("y8"),), discard=discard)
    after = GAME.apply(state, Take("Anna", 0))
    assert after.display[0] == card("y8")
    assert after.reshuffles == 1 and after.discard == ()
    assert sorted(after.pile) == sorted(discard)
    assert after.announced == after.pile[0].number
    assert sorted(after.all_cards()) == sorted(state.all_cards())
    assert GAME.apply(state, Take("Anna", 0)) == after  # chance is fixed by the seed


def test_without_reshuffling_the_game_ends_when_the_pile_runs_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(qwixx, "RESHUFFLE_DISCARDS", False)
    discard = tuple(map(card, ["r7", "r8"]))
    state = GAME.apply(fixed_state(pile=(card("y8"),), discard=discard), Take("Anna", 0))
    assert state.announced is None and state.phase == "play" and state.discard == discard
    state = GAME.apply(state, PlayCards("Anna", (card("r2"),), (2,)))
    assert GAME.is_over(state)


# --- jokers -------------------------------------------------------------------------------


def test_jokers_join_a_colour_or_are_declared() -> None:
    hand = tuple(map(card, ["J5", "J6", "r4", "g9"]))
    state = fixed_state(jokers=True, hands=(hand, fixed_state().hands[1]), phase="play",
                        announced=None)
    plays = set(GAME.legal_plays(state))
    assert PlayCards("Anna", (card("J5"), card("J6"), card("r4")), (4, 5, 6)) in plays
    assert PlayCards("Anna", (card("J5"), card("J6")), (5, 6), "blue") in plays
    assert PlayCards("Anna", (card("J5"), card("g9")), (5, 9)) not in plays  # green 9,5 gap 3
    found = GAME.check_play(state, PlayCards("Anna", (card("J5"), card("r4")), (4, 5), "green"))
    assert [v.rule for v in found] == ["qwixx.one_colour"]
    found = GAME.check_play(state, PlayCards("Anna", (card("J5"), card("J6")), (5, 6)))
    assert [v.rule for v in found] == ["qwixx.one_colour"]
    state = GAME.apply(state, PlayCards("Anna", (card("J5"), card("J6")), (5, 6), "blue"))
    assert state.sheets[0].row("blue") == (6, 5)


# --- random full games ------------------------------------------------------------------------


def random_play(rng: random.Random, state: QwixxState) -> object:
    """A play made up at random, often illegal: someone, some cards, some crosses."""
    player = rng.choice(state.players)
    kind = rng.randrange(3)
    if kind == 0:
        return Take(player, rng.randrange(-1, 6))
    if kind == 1:
        return TopCross(player, rng.choice([None, *ROWS]))
    deck = full_deck(state.jokers)
    cards = tuple(rng.sample(deck, rng.randrange(0, 5)))
    numbers = rng.sample(range(2, 13), rng.randrange(0, 4))
    return PlayCards(player, cards, tuple(numbers), rng.choice([None, *ROWS]))


def check_invariants(state: QwixxState, deck: list[Card]) -> None:
    assert sorted(state.all_cards()) == deck
    assert Counter(state.all_cards()).most_common(1)[0][1] == 1
    for player, sheet in zip(state.players, state.sheets, strict=True):
        assert not sheet_violations(player, sheet)
        assert 0 <= sheet.fouls <= 4
        assert GAME.scores(state)[player] == formula_score(sheet)
    if not GAME.is_over(state):
        assert len(state.display) == 4
        assert GAME.legal_plays(state)


def all_card_plays(state: QwixxState) -> set[PlayCards]:
    """Brute force: every play of 1-3 held cards, any declared colour, crossing any
    subset of their numbers, accepted by check_play."""
    player = state.players[state.active]
    out = set()
    hand = sorted(state.hands[state.active])
    for size in range(1, 4):
        for combo in combinations(hand, size):
            numbers = sorted({c.number for c in combo})
            for colour in (None, *ROWS):
                for k in range(0, len(numbers) + 1):
                    for cross in combinations(numbers, k):
                        play = PlayCards(player, combo, cross, colour)
                        if not GAME.check_play(state, play):
                            out.add(play)
    return out


def canonical(play: PlayCards) -> tuple[object, ...]:
    """What a play means: the cards (laid together: in any order), the set crossed, the
    row (only if something is crossed; a colour declared for coloured cards adds nothing
    unless it clashes)."""
    row, clash = qwixx.play_colour(play.cards, play.colour, play.player)
    cards = tuple(sorted(play.cards))
    if clash:
        return (play.player, cards, frozenset(play.cross), "clash")
    if not play.cross:
        row = None
    return (play.player, cards, frozenset(play.cross), row)


def careful_value(state: QwixxState, play: object) -> float:
    """How good a play looks to a careful player: crosses, less boxes skipped."""
    if isinstance(play, TopCross) and play.row is not None:
        assert state.announced is not None
        sheet = state.sheets[state.players.index(play.player)]
        skipped = position(play.row, state.announced) - sheet.rightmost(play.row) - 1
        return 1 - 0.6 * skipped
    if isinstance(play, PlayCards) and play.cross:
        row = qwixx.play_colour(play.cards, play.colour, play.player)[0]
        assert row is not None
        sheet = state.sheets[state.active]
        spots = sorted(position(row, n) for n in play.cross)
        return len(spots) - 0.6 * (spots[-1] - sheet.rightmost(row) - len(spots))
    return 0.0


def meaning(play: object) -> object:
    return canonical(play) if isinstance(play, PlayCards) else play


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), count=st.integers(2, 5), jokers=st.booleans(),
       careful=st.booleans())
@example(seed=16296, count=2, jokers=True, careful=False)  # cards made up out of order
def test_random_full_games_keep_the_invariants(
    seed: int, count: int, jokers: bool, careful: bool
) -> None:
    rng = random.Random(seed)
    state = GAME.start(NAMES[:count], rng, jokers=jokers)
    deck = sorted(full_deck(jokers))
    played: list[object] = []
    brute_checks = 0
    for _ in range(2000):
        check_invariants(state, deck)
        if GAME.is_over(state):
            break
        legal = GAME.legal_plays(state)
        assert len(set(legal)) == len(legal)
        for play in legal:
            assert not GAME.check_play(state, play), play
            assert play.player in GAME.to_act(state)
        if state.phase == "play" and brute_checks < 3:
            brute_checks += 1
            assert {canonical(p) for p in all_card_plays(state)} == {
                canonical(p) for p in legal if isinstance(p, PlayCards)}
        meanings = {meaning(p) for p in legal}
        for _ in range(3):
            wild = random_play(rng, state)
            problems = GAME.check_play(state, wild)  # type: ignore[arg-type]
            if problems:
                assert all(v.rule in RULES and v.rule.startswith("qwixx.") for v in problems)
                assert meaning(wild) not in meanings
                with pytest.raises(IllegalPlay):
                    GAME.apply(state, wild)  # type: ignore[arg-type]
            else:
                assert meaning(wild) in meanings, wild
        if careful:  # cross much and waste few boxes, so rows get locked
            best = max(careful_value(state, p) for p in legal)
            legal = [p for p in legal if careful_value(state, p) == best]
        play = rng.choice(legal)
        played.append(play)
        state = GAME.apply(state, play)
    assert GAME.is_over(state)
    assert state.last_turn or any(len(s.locks) >= 2 or s.fouls == 4 for s in state.sheets)
    # replaying the same seed and plays gives the same game (apply is deterministic)
    replay = GAME.start(NAMES[:count], random.Random(seed), jokers=jokers)
    for play in played:
        replay = GAME.apply(replay, play)  # type: ignore[arg-type]
    assert replay == state
