"""The Nummix move finder: hand-made positions with known answers, and by property test
that every play it returns passes the checker."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games.base import InputError
from companion.games.nummix import GAME
from companion.games.nummix_core import (
    ALL_TILES,
    check_table,
    check_turn,
    format_grid,
    normalise,
    parse_grid,
)
from companion.games.nummix_finder import KIND_ORDER, find_play, random_table


def table(*rows: str) -> dict[tuple[int, int], str]:
    return dict(parse_grid(list(rows), "grid").cells)


def rows_of(cells: dict[tuple[int, int], str]) -> list[str]:
    return format_grid(normalise(cells))


def test_empty_table_opens_with_the_longest_single_construct() -> None:
    result = find_play({}, ["r3", "r4", "r5", "r6", "k9", "b9"])
    assert result.found
    assert result.tiles_used == ("r3", "r4", "r5", "r6")
    assert rows_of(dict(result.after)) == ["r3 r4 r5 r6"]
    assert result.verdict is not None and result.verdict.valid


def test_extend_across_the_wrap() -> None:
    result = find_play(table("o15 o16 o17"), ["o1", "o2", "k4"])
    assert result.tiles_used == ("o1", "o2")
    assert rows_of(dict(result.after)) == ["o15 o16 o17 o1 o2"]


def test_extend_at_the_front_grows_the_grid() -> None:
    result = find_play(table("k5 k6 k7"), ["k4"])
    assert rows_of(dict(result.after)) == ["k4 k5 k6 k7"]
    hint = GAME.hint_document({"grid": ["k5 k6 k7"], "rack": ["k4"]})
    assert hint["found"] is True and hint["grid"] == ["k4 k5 k6 k7"]
    assert hint["valid"] is True


def test_complete_a_group() -> None:
    result = find_play(table("r9 k9 b9"), ["o9", "o1"])
    assert result.tiles_used == ("o9",)
    assert sorted(dict(result.after).values()) == ["b9", "k9", "o9", "r9"]


def test_new_construct_crossing_a_table_tile_without_moving_it() -> None:
    before = table("k6 k7 k8")
    result = find_play(before, ["r7", "b7"])
    assert result.found and sorted(result.tiles_used) == ["b7", "r7"]
    assert [s.kind for s in result.steps] == ["cross"]
    after = dict(result.after)
    assert all(after[p] == t for p, t in before.items())  # nothing on the table moved


def test_split_a_run_to_insert_a_tile() -> None:
    result = find_play(table("r3 r4 r5 r6 r7 r8"), ["r5"])
    assert result.found and result.tiles_used == ("r5",)
    assert [s.kind for s in result.steps] == ["split"]
    assert check_table(dict(result.after)).valid


def test_take_two_table_tiles_for_a_group() -> None:
    result = find_play(table("r5 r6 r7 r8", ". . . .", "b5 b6 b7 b8"), ["k5"])
    assert result.found and result.tiles_used == ("k5",)
    assert check_table(dict(result.after)).valid
    assert Counter(dict(result.after).values())["k5"] == 1


def test_rack_joker_extends_a_run() -> None:
    result = find_play(table("b11 b12 b13"), ["Jrb"])
    assert result.found and result.tiles_used == ("Jrb",)


def test_no_play_says_which_kinds_were_searched() -> None:
    result = find_play(table("r3 r4 r5"), ["k9", "b1"])
    assert not result.found
    for kind in KIND_ORDER:
        assert kind in result.reason
    hint = GAME.hint_document({"grid": ["r3 r4 r5"], "rack": ["k9", "b1"]})
    assert hint["found"] is False and hint["kinds_searched"] == list(KIND_ORDER)
    assert hint["tiles_used"] == [] and "reason" in hint
    assert "no play" in GAME.format_hint(hint)


def test_invalid_table_gives_no_play_with_reason() -> None:
    result = find_play(table("r3 r4"), ["r5"])
    assert not result.found and "not valid" in result.reason
    hint = GAME.hint_document({"grid": ["r3 r4"], "rack": ["r5"]})
    assert hint["found"] is False and "not valid" in hint["reason"]
    assert [v["rule"] for v in hint["violations"]] == ["nummix.size"]


def test_lays_everything_it_can_across_several_steps() -> None:
    grid = ["r3 r4 r5 . k9 k10 k11", ". . . . . . .", "o7 b7 k7 . . . ."]
    rack = ["r6", "r7", "r2", "k12", "b9", "o9", "Jbo", "r11"]
    hint = GAME.hint_document({"grid": grid, "rack": rack})
    assert hint["found"] is True
    assert sorted(hint["tiles_used"]) == sorted(rack)
    assert hint["check"]["valid"] is True
    after = parse_grid(hint["grid"], "grid").cells
    before = parse_grid(grid, "grid").cells
    assert check_turn(before, after, rack).valid


def test_hint_rejects_unknown_kind_and_missing_rack() -> None:
    with pytest.raises(InputError) as err:
        GAME.hint_document({"grid": ["r3 r4 r5"]})
    assert err.value.field == "rack"
    with pytest.raises(InputError) as err:
        GAME.hint_document({"grid": ["r3 r4 r5"], "rack": [], "kinds": ["magic"]})
    assert err.value.field == "kinds[0]"


def test_kinds_can_be_restricted() -> None:
    # with only "new", a lone r6 cannot be laid; with "extend" it can
    assert not find_play(table("r3 r4 r5"), ["r6"], ["new"]).found
    assert find_play(table("r3 r4 r5"), ["r6"], ["extend"]).found


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(0, 60), rack_size=st.integers(1, 17))
def test_every_play_found_passes_the_checker(seed: int, size: int, rack_size: int) -> None:
    rng = random.Random(seed)
    before, rest = random_table(rng, size) if size else ({}, _shuffled(rng))
    rack = rest[:rack_size]
    result = find_play(before, rack)
    if result.found:
        verdict = check_turn(before, dict(result.after), rack)
        assert verdict.valid, verdict.violations
        assert sorted(verdict.laid) == sorted(result.tiles_used)
        assert len(result.tiles_used) >= 1
    else:
        assert dict(result.after) == before and result.tiles_used == ()


def _shuffled(rng: random.Random) -> list[str]:
    tiles = list(ALL_TILES)
    rng.shuffle(tiles)
    return tiles
