"""Cat in the Box rules (RULES.md section 5): set-up per player count, declaring,
trick winners, the paradox, the largest group and round and game scoring."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import pytest

from companion.games.base import IllegalPlay, Violation
from companion.games.catbox import (
    BLOCKED,
    COLOURS,
    EMPTY,
    GAME,
    SETUPS,
    Board,
    CatboxPlay,
    CatboxState,
    Declare,
    FaceDown,
    Predict,
    blocked_by_revealed,
    cell,
    largest_group,
    new_board,
    place,
    round_scores,
    trick_winner,
)


def rules(violations: Sequence[Violation]) -> set[str]:
    return {v.rule for v in violations}


def colours(plays: Sequence[CatboxPlay]) -> set[str]:
    return {p.colour for p in plays if isinstance(p, Declare)}


def make_board(players: Sequence[str], **rows: str) -> Board:
    """A board from rows written as one character per cell (player initial, '.', '#')."""
    setup = SETUPS[len(players)]
    board = new_board(setup)
    for colour, text in rows.items():
        for i, ch in enumerate(text):
            if ch in players:
                board = place(board, colour, i + 1, players.index(ch))
    return board


def play_state(hands: Sequence[Sequence[int]], *, board: Board | None = None,
               barred: Sequence[frozenset[str]] | None = None, leader: int = 0,
               tricks: Sequence[int] | None = None, predictions: Sequence[int] | None = None,
               players: Sequence[str] = ("A", "B", "C")) -> CatboxState:
    """A state in the middle of a round's tricks, with chosen hands and board."""
    n = len(players)
    state = GAME.start(list(players), random.Random(7))
    return replace(
        state, phase="play", hands=tuple(tuple(sorted(h)) for h in hands),
        hands_at_play=tuple(tuple(sorted(h)) for h in hands), facedown=(1,) * n,
        predictions=tuple(predictions or (1,) * n),
        board=board if board is not None else new_board(SETUPS[n]),
        barred=tuple(barred or (frozenset(),) * n), leader=leader, trick=(),
        tricks=tuple(tricks or (0,) * n))


# --- set-up ---------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "numbers", "hand", "tricks", "columns", "blocked_column"), [
    (5, 9, 9, 7, 9, None), (4, 8, 10, 8, 9, 9), (3, 6, 10, 8, 6, None), (2, 5, 10, 8, 6, 6)])
def test_deck_and_board_per_player_count(n: int, numbers: int, hand: int, tricks: int,
                                         columns: int, blocked_column: int | None) -> None:
    names = [f"P{i}" for i in range(n)]
    state = GAME.start(names, random.Random(n))
    setup = SETUPS[n]
    assert (setup.numbers, setup.hand, setup.tricks, setup.columns) == (
        numbers, hand, tricks, columns)
    assert all(len(h) == hand for h in state.hands)
    deck = sorted(c for h in state.hands for c in h) + sorted(state.leftover)
    assert sorted(deck) == sorted(list(range(1, numbers + 1)) * 5)
    assert len(state.deals) == n  # as many rounds as players
    for row in state.board:
        assert len(row) == columns
        if blocked_column is not None:
            assert row[blocked_column - 1] == BLOCKED
    if n != 2:
        assert all(c == EMPTY for row in state.board for c in row[:numbers])


def test_two_player_set_up_blocks_cells_from_the_revealed_cards() -> None:
    assert blocked_by_revealed((1, 3, 3)) == {("green", 1), ("green", 3), ("yellow", 3)}
    assert blocked_by_revealed((2, 2, 2)) == {("green", 2), ("yellow", 2), ("blue", 2)}
    assert blocked_by_revealed((1, 4, 5)) == {("green", 1), ("green", 4), ("green", 5)}
    for seed in range(20):
        state = GAME.start(["A", "B"], random.Random(seed))
        assert len(state.leftover) == 5 and state.revealed == state.leftover[:3]
        blocked = {(colour, n) for colour in COLOURS for n in range(1, 6)
                   if cell(state.board, colour, n) == BLOCKED}
        assert blocked == blocked_by_revealed(state.revealed)
        assert len(blocked) == 3 and all(colour != "red" for colour, _ in blocked)


def test_two_players_make_no_predictions_and_get_the_bonus_with_four_tricks_or_fewer() -> None:
    state = GAME.start(["A", "B"], random.Random(3))
    for name, hand in zip(state.players, state.hands, strict=True):
        state = GAME.apply(state, FaceDown(name, hand[0]))
    assert state.phase == "play"
    setup = SETUPS[2]
    assert round_scores(setup, (4, 4), (None, None), (5, 2), None) == (9, 6)
    assert round_scores(setup, (5, 3), (None, None), (5, 2), None) == (5, 5)


def test_predictions_in_turn_with_the_allowed_values() -> None:
    state = GAME.start(["A", "B", "C"], random.Random(1))
    assert set(GAME.to_act(state)) == {"A", "B", "C"}  # face-down cards: all at once
    assert rules(GAME.check_play(state, Predict("A", 1))) == {"catbox.card"}
    assert rules(GAME.check_play(state, FaceDown("A", 99))) == {"catbox.card"}
    for name, hand in zip(state.players, state.hands, strict=True):
        state = GAME.apply(state, FaceDown(name, hand[-1]))
    assert all(len(h) == 9 for h in state.hands)
    assert state.phase == "predict" and GAME.to_act(state) == ("A",)
    assert {p.tricks for p in GAME.legal_plays(state) if isinstance(p, Predict)} == {1, 3, 4}
    assert rules(GAME.check_play(state, Predict("A", 2))) == {"catbox.prediction"}
    assert rules(GAME.check_play(state, Predict("B", 1))) == {"catbox.card"}
    with pytest.raises(IllegalPlay):
        GAME.apply(state, Predict("A", 2))
    state = GAME.apply(state, Predict("A", 4))
    assert GAME.to_act(state) == ("B",)
    state = GAME.apply(GAME.apply(state, Predict("B", 1)), Predict("C", 3))
    assert state.phase == "play" and GAME.to_act(state) == ("A",)
    assert state.predictions == (4, 1, 3)


# --- declaring ------------------------------------------------------------------------


def test_rule_1_occupied_cell() -> None:
    board = make_board("ABC", blue="...A..")
    state = play_state([[1, 2], [4, 5], [3, 6]], board=board, leader=1)
    assert rules(GAME.check_play(state, Declare("B", 4, "blue"))) == {
        "catbox.occupied", "catbox.must_play"}
    assert GAME.check_play(state, Declare("B", 4, "yellow")) == ()
    assert Declare("B", 4, "blue") not in GAME.legal_plays(state)


def test_a_blocked_two_player_cell_is_taken() -> None:
    state = play_state([[3, 4], [1, 2]], players=("A", "B"))
    state = replace(state, board=new_board(SETUPS[2], (3, 3, 5)))
    faults = GAME.check_play(state, Declare("A", 3, "green"))
    assert "catbox.occupied" in rules(faults)
    assert "blocked" in faults[0].message
    assert "catbox.occupied" in rules(GAME.check_play(state, Declare("A", 3, "yellow")))
    assert GAME.check_play(state, Declare("A", 3, "blue")) == ()


def test_rule_2_barred_colour() -> None:
    state = play_state([[1, 2], [4, 5], [3, 6]], leader=1,
                       barred=[frozenset(), frozenset({"blue"}), frozenset()])
    assert rules(GAME.check_play(state, Declare("B", 5, "blue"))) == {
        "catbox.barred", "catbox.must_play"}
    assert GAME.check_play(state, Declare("B", 5, "yellow")) == ()


def test_not_following_bars_the_led_colour_and_following_is_not_compulsory() -> None:
    state = play_state([[2, 3], [5, 6], [3, 4]], leader=0)
    state = GAME.apply(state, Declare("A", 2, "blue"))
    # a follower may declare any colour meeting rules 1 and 2, red included
    assert colours(GAME.legal_plays(state)) == set(COLOURS)
    state = GAME.apply(state, Declare("B", 5, "yellow"))
    assert state.barred[1] == frozenset({"blue"})
    state = GAME.apply(state, Declare("C", 3, "blue"))
    assert state.barred[2] == frozenset()
    assert rules(GAME.check_play(replace(state, leader=1), Declare("B", 6, "blue"))) >= {
        "catbox.barred"}


def test_leader_may_not_declare_red_before_red_is_broken() -> None:
    state = play_state([[1, 2], [4, 5], [3, 6]])
    assert rules(GAME.check_play(state, Declare("A", 2, "red"))) == {
        "catbox.lead_red", "catbox.must_play"}
    assert "red" not in colours(GAME.legal_plays(state))


def test_leader_may_declare_red_once_a_token_lies_in_the_red_row() -> None:
    state = play_state([[1, 2], [4, 5], [3, 6]], board=make_board("ABC", red="....C."))
    assert GAME.check_play(state, Declare("A", 2, "red")) == ()


def test_leader_may_declare_red_when_no_card_fits_another_colour() -> None:
    board = make_board("ABC", blue=".B.C", yellow=".C", green=".B")
    state = play_state([[2, 2], [4, 5], [3, 6]], board=board)
    assert GAME.legal_plays(state) == [Declare("A", 2, "red")]
    barred = frozenset({"blue", "yellow", "green"})
    state = play_state([[1, 2], [4, 5], [3, 6]], barred=[barred, frozenset(), frozenset()])
    assert colours(GAME.legal_plays(state)) == {"red"}


# --- tricks -----------------------------------------------------------------------------


def test_trick_won_by_trump() -> None:
    assert trick_winner([(0, 6, "blue"), (1, 1, "red"), (2, 5, "blue")]) == 1
    assert trick_winner([(0, 6, "blue"), (1, 1, "red"), (2, 2, "red")]) == 2
    state = play_state([[6, 2], [1, 4], [5, 3]], board=make_board("ABC"))
    for play in (Declare("A", 6, "blue"), Declare("B", 1, "red"), Declare("C", 5, "blue")):
        state = GAME.apply(state, play)
    assert state.tricks == (0, 1, 0) and state.leader == 1 and state.trick == ()


def test_trick_won_by_the_led_colour_over_higher_other_colours() -> None:
    assert trick_winner([(0, 3, "yellow"), (1, 6, "green"), (2, 5, "yellow")]) == 2
    assert trick_winner([(0, 3, "yellow"), (1, 6, "green"), (2, 2, "blue")]) == 0
    state = play_state([[3, 2], [6, 4], [5, 1]], leader=0)
    for play in (Declare("A", 3, "yellow"), Declare("B", 6, "green"),
                 Declare("C", 5, "yellow")):
        state = GAME.apply(state, play)
    assert state.tricks == (0, 0, 1) and state.leader == 2
    assert GAME.to_act(state) == ("C",)


# --- paradox and scoring ------------------------------------------------------------------


def test_paradox_ends_the_round_and_is_scored() -> None:
    # B holds only 4s; red, yellow and green 4 are taken, so once A takes blue 4,
    # B cannot declare anything: B causes a paradox at once.
    board = make_board("ABC", red="...C", yellow="...C", green="...C", blue="CC")
    state = play_state([[4, 6], [4, 4], [5, 6]], board=board, tricks=(1, 2, 0),
                       predictions=(1, 2, 3))
    totals_before = state.totals
    after = GAME.apply(state, Declare("A", 4, "blue"))
    record = after.history[-1]
    assert record.paradox == 1
    assert record.tricks == (1, 2, 0) and record.trick_winners == state.trick_winners
    assert cell(record.board, "blue", 4) == 0  # tokens stay
    assert record.groups == (1, 0, 2)  # C: yellow-green 4 and blue 1-2; red 4 cut off
    # A met 1: 1 + group 1; B caused it: -2 and no bonus despite meeting 2; C missed 3
    assert record.scores == (2, -2, 0)
    assert after.totals == tuple(t + s for t, s in zip(totals_before, (2, -2, 0), strict=True))
    assert after.round == 1 and after.phase == "facedown" and after.start == 1  # passes left


def test_round_scores_formula() -> None:
    setup = SETUPS[4]
    assert round_scores(setup, (3, 2, 0, 3), (3, 1, 1, 2), (5, 4, 2, 6), None) == (8, 2, 0, 3)
    assert round_scores(setup, (3, 2, 0, 3), (3, 1, 1, 2), (5, 4, 2, 6), 0) == (-3, 2, 0, 3)


def test_largest_orthogonally_connected_group() -> None:
    players = "ABC"
    issue = make_board(players, blue="AA.B..", yellow=".A..C.")
    assert [largest_group(issue, s) for s in range(3)] == [3, 1, 1]
    diagonal = make_board(players, red="A.A", blue=".A.", yellow="A.A")
    assert largest_group(diagonal, 0) == 1
    snake = make_board(players, red="AAA...", blue="..A.AA", yellow="..AAA.",
                       green="A.....")
    assert largest_group(snake, 0) == 9
    assert largest_group(snake, 1) == 0
    split = make_board(players, red="BB.BBB", green="B.....")
    assert largest_group(split, 1) == 3


def test_game_ties_go_to_the_higher_final_round_score_else_shared() -> None:
    rng = random.Random(5)
    state = GAME.start(["A", "B", "C"], rng)
    while not GAME.is_over(state):
        state = GAME.apply(state, rng.choice(GAME.legal_plays(state)))
    last = state.history[-1]
    tied = replace(state, totals=(10, 10, 4),
                   history=state.history[:-1] + (replace(last, scores=(1, 3, 9)),))
    assert GAME.winners(tied) == ["B"]
    shared = replace(tied, history=state.history[:-1] + (replace(last, scores=(3, 3, 9)),))
    assert GAME.winners(shared) == ["A", "B"]
    clear = replace(tied, totals=(11, 10, 4))
    assert GAME.winners(clear) == ["A"]
    assert GAME.to_act(state) == () and GAME.legal_plays(state) == []
    assert rules(GAME.check_play(state, Declare("A", 1, "blue"))) == {"catbox.card"}
