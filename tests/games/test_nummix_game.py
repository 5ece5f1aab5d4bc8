"""Nummix as a whole game (seeded deals played to the end with invariants) and the
``companion check``/``hint`` command line on good and bad input."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.cli import main
from companion.games.base import IllegalPlay, InputError
from companion.games.nummix import GAME, NummixPlay, NummixState, as_table
from companion.games.nummix_core import ALL_TILES, check_table


def all_tiles(state: NummixState) -> Counter[str]:
    total = Counter(t for _, t in state.table) + Counter(state.bag)
    for rack in state.racks:
        total += Counter(rack)
    return total


def play_out(seed: int, players: int, lay_chance: float = 1.0) -> NummixState:
    """Play a seeded game to the end, checking the invariants after every turn."""
    rng = random.Random(seed)
    state = GAME.start([f"P{i}" for i in range(players)], rng)
    sizes = {2: 17, 3: 15, 4: 13}[players]
    assert all(len(r) == sizes for r in state.racks)
    assert len(state.bag) == 142 - players * sizes
    for _ in range(400):
        if GAME.is_over(state):
            break
        plays = GAME.legal_plays(state)
        assert plays and all(p.player == GAME.to_act(state)[0] for p in plays)
        for p in plays:
            assert GAME.check_play(state, p) == ()
        lay = [p for p in plays if p.table != state.table]
        play = lay[0] if lay and (rng.random() < lay_chance or not state.bag) else plays[-1]
        bag_before, me = len(state.bag), state.turn
        rack_before = len(state.racks[me])
        state = GAME.apply(state, play)
        assert all_tiles(state) == Counter(ALL_TILES)  # 142 tiles conserved
        assert check_table(dict(state.table)).valid
        assert Counter(t for _, t in state.table) >= Counter(t for _, t in play.table)
        drew = bag_before - len(state.bag)
        assert drew in (0, 1)
        if drew == 0 and bag_before:
            assert state.players[me] in state.done  # only a done player skips the draw
        assert len(state.racks[me]) <= rack_before + 1
    assert GAME.is_over(state)
    assert GAME.to_act(state) == () and GAME.legal_plays(state) == []
    return state


@pytest.mark.parametrize(("seed", "players"), [(1, 2), (2, 3), (3, 4)])
def test_full_game_to_the_end(seed: int, players: int) -> None:
    state = play_out(seed, players)
    places = GAME.placings(state)
    assert sorted(p for place in places for p in place) == sorted(state.players)
    scores = GAME.scores(state)
    assert set(scores) == set(state.players)
    for p in state.done:
        assert scores[p] == 0
    active = [p for p in state.players if p not in state.done]
    # the two ends: one player left with tiles, or empty bag and nobody can lay
    assert len(active) <= 1 or not state.bag


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10**6), players=st.integers(2, 4),
       lay=st.sampled_from([0.3, 0.7, 1.0]))
def test_random_games_keep_the_invariants(seed: int, players: int, lay: float) -> None:
    play_out(seed, players, lay)


def test_illegal_plays_are_refused() -> None:
    state = GAME.start(["A", "B"], random.Random(5))
    with pytest.raises(IllegalPlay) as err:
        GAME.apply(state, NummixPlay("B", state.table))
    assert err.value.violations[0].rule == "nummix.turn"
    rack = state.racks[0]
    two = as_table({(0, 0): rack[0], (0, 1): rack[1]})
    assert "nummix.first_play" in {v.rule for v in GAME.check_play(state, NummixPlay("A", two))}
    stolen = as_table({(0, 0): "r1", (0, 1): "r2", (0, 2): "r3"})
    if not Counter(["r1", "r2", "r3"]) <= Counter(rack):
        assert "nummix.rack" in {v.rule for v in GAME.check_play(state, NummixPlay("A",
                                                                                   stolen))}


def test_drawn_joker_must_be_laid_or_passed_next_turn() -> None:
    # find a deal where the first player's first draw is a joker
    for seed in range(500):
        state = GAME.start(["A", "B"], random.Random(seed))
        if state.bag[0].startswith("J"):
            break
    else:
        pytest.fail("no seed draws a joker first")
    joker = state.bag[0]
    state = GAME.apply(state, NummixPlay("A", state.table))  # A draws the joker
    assert state.pending[0] == (joker,)
    state = GAME.apply(state, NummixPlay("B", state.table))
    keep = NummixPlay("A", state.table)
    assert "nummix.joker_pass" in {v.rule for v in GAME.check_play(state, keep)}
    handed = NummixPlay("A", state.table, (joker,))
    assert GAME.check_play(state, handed) == ()
    b_before = Counter(state.racks[1])
    state = GAME.apply(state, handed)
    assert Counter(state.racks[1]) - b_before == Counter([joker])
    assert state.pending[1] == ()  # a joker passed on is not drawn


def test_game_end_by_only_one_player_left() -> None:
    state = NummixState(("A", "B"), as_table({(0, 0): "r1", (0, 1): "r2", (0, 2): "r3"}),
                        (("r4",), ("k9", "b2")), ("o5",), 0, ((), ()))
    after = as_table({(0, 0): "r1", (0, 1): "r2", (0, 2): "r3", (0, 3): "r4"})
    state = GAME.apply(state, NummixPlay("A", after))
    assert GAME.is_over(state) and state.done == ("A",)
    assert GAME.placings(state) == [["A"], ["B"]]
    assert state.bag == ("o5",)  # a done player does not draw


def test_game_end_by_empty_bag_and_nobody_can_lay() -> None:
    table = as_table({(0, 0): "r1", (0, 1): "r2", (0, 2): "r3"})
    state = NummixState(("A", "B", "C"), table, (("k9",), ("b2", "o11"), ("k13",)), (), 0,
                        ((), (), ()))
    state = GAME.apply(state, NummixPlay("A", table))
    assert GAME.is_over(state)
    assert GAME.placings(state) == [["A", "C"], ["B"]]  # by fewest tiles; ties share
    # but if someone can still lay, play goes on
    state2 = NummixState(("A", "B"), table, (("k9",), ("r4",)), (), 0, ((), ()))
    state2 = GAME.apply(state2, NummixPlay("A", table))
    assert not GAME.is_over(state2) and GAME.to_act(state2) == ("B",)


# --- the command line ---------------------------------------------------------------------


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, doc: object) -> str:
    f = tmp_path / "doc.json"
    f.write_text(json.dumps(doc))
    return str(f)


def test_cli_check_good_and_bad(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, {"game": "nummix", "grid": ["r3 r4 r5 .", ". . k5 .", ". . b5 ."]})
    code, out, _ = run(["check", "nummix", good, "--json"], capsys)
    assert code == 0 and json.loads(out)["valid"] is True
    bad_rule = write(tmp_path, {"game": "nummix", "grid": ["r5 r4 r3"]})
    code, out, _ = run(["check", "nummix", bad_rule], capsys)
    assert code == 0 and "nummix.direction" in out
    bad_cell = write(tmp_path, {"game": "nummix", "grid": ["r3 r4 r5", ". . x9"]})
    code, _, err = run(["check", "nummix", bad_cell], capsys)
    assert code == 2 and "grid[1][2]" in err and err.count("\n") == 1


def test_cli_hint_good_and_bad(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, {"game": "nummix", "grid": ["o15 o16 o17"], "rack": ["o1", "k3"]})
    code, out, _ = run(["hint", "nummix", good, "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["found"] is True and result["tiles_used"] == ["o1"]
    assert result["grid"] == ["o15 o16 o17 o1"] and result["valid"] is True
    code, out, _ = run(["hint", "nummix", good], capsys)
    assert code == 0 and "o15 o16 o17 o1" in out
    none = write(tmp_path, {"game": "nummix", "grid": ["o15 o16 o17"], "rack": ["k3"]})
    code, out, _ = run(["hint", "nummix", none], capsys)
    assert code == 0 and "no play" in out and "kinds searched" in out
    bad = write(tmp_path, {"game": "nummix", "grid": ["o15 o16 o17"], "rack": ["r18"]})
    code, _, err = run(["hint", "nummix", bad], capsys)
    assert code == 2 and "rack[0]" in err


def test_hint_input_error_names_field() -> None:
    with pytest.raises(InputError) as err:
        GAME.hint_document({"grid": ["r3 r4 r5"], "rack": "r6"})
    assert err.value.field == "rack"


def test_position_document_game_end_and_placings() -> None:
    base = {"game": "nummix", "players": ["A", "B", "C"], "grid": ["r3 r4 r5"],
            "racks": {"A": [], "B": ["k1", "o12"], "C": ["b15"]}, "done": ["A"]}
    over = GAME.check_document({**base, "bag": 0})
    assert over["game_over"] is True and over["placings"] == [["A"], ["C"], ["B"]]
    assert over["scores"] == {"A": 0, "B": 2, "C": 1} and over["winners"] == ["A"]
    # C could still lay r6 (or r2): the game goes on
    going = GAME.check_document({**base, "bag": 0,
                                 "racks": {"A": [], "B": ["k1"], "C": ["r6"]}})
    assert going["game_over"] is False and going["can_lay"] == {"B": False, "C": True}
    # tiles in the bag: not over while two players hold tiles
    assert GAME.check_document({**base, "bag": 5})["game_over"] is False
    # only one player with tiles: over, whatever the bag holds
    last = GAME.check_document({**base, "bag": 5, "done": ["A", "C"],
                                "racks": {"A": [], "B": ["k1"], "C": []}})
    assert last["game_over"] is True and last["placings"] == [["A"], ["C"], ["B"]]
    with pytest.raises(InputError) as err:
        GAME.check_document({**base, "bag": 0, "racks": {"A": [], "B": []}})
    assert err.value.field == "racks.C"
    with pytest.raises(InputError) as err:
        GAME.check_document({**base, "bag": 0, "done": ["B"]})
    assert err.value.field == "racks.B"
