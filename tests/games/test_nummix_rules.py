"""Nummix rules checker: the rulebook's construct pictures, jokers, notation and turns."""

from __future__ import annotations

import pytest

from companion.games.base import InputError
from companion.games.nummix import GAME
from companion.games.nummix_core import (
    ALL_TILES,
    check_table,
    check_turn,
    parse_grid,
    parse_tile,
)


def table(*rows: str) -> dict[tuple[int, int], str]:
    return dict(parse_grid(list(rows), "grid").cells)


def rules(*rows: str) -> list[str]:
    return [v.rule for v in check_table(table(*rows)).violations]


def kinds(*rows: str) -> list[str]:
    return sorted(c.kind for c in check_table(table(*rows)).constructs)


# --- the rulebook's pictures ------------------------------------------------------------


def test_tile_set_has_142_tiles() -> None:
    assert len(ALL_TILES) == 142
    assert sum(t.startswith("J") for t in ALL_TILES) == 6
    assert len(set(ALL_TILES)) == 68 + 6


def test_picture_run() -> None:
    assert rules("r3 r4 r5") == []
    assert kinds("r3 r4 r5") == ["run"]


def test_picture_group() -> None:
    assert rules("r7 k7 b7") == []
    assert kinds("r7 k7 b7") == ["group"]
    assert rules("o7 r7 k7 b7") == []  # four colours, any order


def test_picture_joker_as_blue_14() -> None:
    verdict = check_table(table("b12 b13 Jkb b15"))
    assert verdict.valid
    assert verdict.assignment == {(0, 2): ("b", 14)}
    assert verdict.constructs[0].to_json()["jokers"] == [{"cell": [0, 2], "stands_for": "b14"}]


def test_picture_corner() -> None:
    assert rules("r3 r4 r5", ".  .  r6", ".  .  r7") == []
    assert rules("r3 r4 r5", ".  .  k5", ".  .  b5") == []
    assert kinds("r3 r4 r5", ".  .  k5", ".  .  b5") == ["group", "run"]


def test_picture_bridge() -> None:
    grid = ("r1 r2 r3 .  .", ".  .  k3 .  .", ".  .  b3 b4 b5")
    assert rules(*grid) == []
    assert kinds(*grid) == ["group", "run", "run"]


def test_picture_cross() -> None:
    grid = (".  r7 .", "k6 k7 k8", ".  b7 .")
    assert rules(*grid) == []
    assert kinds(*grid) == ["group", "run"]


def test_picture_three_by_three_block() -> None:
    grid = ("r1 r2 r3", "k1 k2 k3", "b1 b2 b3")
    verdict = check_table(table(*grid))
    assert verdict.valid
    assert len(verdict.constructs) == 6
    assert kinds(*grid) == ["group"] * 3 + ["run"] * 3
    # runs down the columns work as well: a block of three runs and three groups
    assert rules("r1 k1 b1", "r2 k2 b2", "r3 k3 b3") == []


def test_picture_mishmash() -> None:
    grid = ("r1 r2 r3  r4 .   .  .",
            ".  .  k3  .  .   .  .",
            ".  .  Jbo b4 b5  b6 .",
            ".  .  .   .  .   b7 .",
            ".  .  .   .  Jrk b8 o8")
    verdict = check_table(table(*grid))
    assert verdict.valid, verdict.violations
    assert verdict.assignment[(2, 2)] == ("b", 3)
    assert verdict.assignment[(4, 4)] in {("r", 8), ("k", 8)}


def test_picture_five_four_three_refused() -> None:
    assert rules("r5 r4 r3") == ["nummix.direction"]
    assert rules("k5", "k4", "k3") == ["nummix.direction"]
    assert rules("r3", "r4", "r5") == []  # top to bottom is reading direction


def test_picture_wrap_16_17_1_2_accepted() -> None:
    assert rules("o16 o17 o1 o2") == []
    assert rules("o2 o1 o17 o16") == ["nummix.direction"]


# --- each rule ----------------------------------------------------------------------------


def test_size_two_tiles_and_a_lone_tile() -> None:
    verdict = check_table(table("r3 r4 . k9"))
    by_rule = [(v.rule, v.locator("cells")) for v in verdict.violations]
    assert ("nummix.size", [[0, 3]]) in by_rule
    assert ("nummix.size", [[0, 0], [0, 1]]) in by_rule
    assert len(by_rule) == 2


def test_run_rules() -> None:
    assert rules("r3 r4 r6") == ["nummix.run"]
    assert rules("r3 k4 r5") == ["nummix.run"]
    long_run = " ".join(f"b{n}" for n in range(1, 18))
    assert rules(long_run) == []
    assert rules(long_run + " b1") == ["nummix.run"]  # 18 tiles: longer than 17


def test_group_rules() -> None:
    assert rules("r7 k7 r7") == ["nummix.group"]
    assert rules("r7 k7 b7 o7 r7") == ["nummix.group"]
    assert rules("r7 k7 b8") == ["nummix.run"]  # neither a group nor a run


def test_joker_colour_must_fit() -> None:
    assert rules("r5 Jkb r7") == ["nummix.joker"]
    assert rules("r5 Jrb r7") == []


def test_several_jokers_in_one_construct() -> None:
    verdict = check_table(table("r3 Jrk Jro r6"))
    assert verdict.valid
    assert verdict.assignment == {(0, 1): ("r", 4), (0, 2): ("r", 5)}
    assert rules("Jrk Jkb Jko") == []  # three jokers: a black run or a group


def test_joker_at_crossing_must_satisfy_both_lines() -> None:
    good = ("b12 b13 Jrb b15", ".   .   k14 .", ".   .   o14 .")
    verdict = check_table(table(*good))
    assert verdict.valid and verdict.assignment == {(0, 2): ("b", 14)}
    bad = ("b12 b13 Jrb b15", ".   .   k13 .", ".   .   o13 .")
    verdict = check_table(table(*bad))
    assert [v.rule for v in verdict.violations] == ["nummix.joker"]
    assert verdict.violations[0].locator("cells") == [[0, 2]]
    assert all(not c.valid for c in verdict.constructs)


def test_two_crossing_jokers_solved_together() -> None:
    # The corner joker belongs to a row and a column; both must read it the same way.
    # Row r3 r4 J and column J r6 r7 both need red 5.
    grid = ("r3 r4 Jrk", ".  .  r6", ".  .  r7")
    verdict = check_table(table(*grid))
    assert verdict.valid and verdict.assignment[(0, 2)] == ("r", 5)
    # two jokers in the column, one of them also in the row: solved together
    grid2 = ("k3 k4 Jrk", ".  .  Jko", ".  .  k7")
    verdict2 = check_table(table(*grid2))
    assert verdict2.valid
    assert verdict2.assignment == {(0, 2): ("k", 5), (1, 2): ("k", 6)}
    # the column alone could be the group r7/k7/o7, the row needs black 5: no fit
    grid3 = ("k3 k4 Jrk", ".  .  Jko", ".  .  r7")
    assert rules(*grid3) == ["nummix.joker"]


def test_joker_letters_in_either_order_are_one_joker() -> None:
    assert parse_tile("Jkr", "x") == "Jrk" == parse_tile("Jrk", "x")
    result = GAME.check_document({"grid": ["r5 Jrk r7", ". . .", "k1 k2 Jkr"]})
    assert "nummix.tiles" in [v["rule"] for v in result["violations"]]


# --- notation -------------------------------------------------------------------------------


@pytest.mark.parametrize(("grid", "field"), [
    (["r3 r4 r5", ". . x9"], "grid[1][2]"),
    (["r18 r4"], "grid[0][0]"),
    (["r0 r1 r2"], "grid[0][0]"),
    (["r3 Jrr r5"], "grid[0][1]"),
    (["r3", 7], "grid[1]"),
    ("r3 r4 r5", "grid"),
])
def test_unknown_cells_name_the_cell(grid: object, field: str) -> None:
    with pytest.raises(InputError) as err:
        GAME.check_document({"game": "nummix", "grid": grid})
    assert err.value.field == field


def test_ragged_rows_are_padded() -> None:
    result = GAME.check_document({"grid": ["r3 r4 r5 k9", ". . k5", ". . b5"]})
    rules_seen = [v["rule"] for v in result["violations"]]
    assert rules_seen == ["nummix.run"]  # the row r3 r4 r5 k9; the short rows are fine
    assert result["scores"] == {}


def test_issue_example_contract() -> None:
    result = GAME.check_document({"game": "nummix",
                                  "grid": ["r3 r4 r5 .", ". . k5 .", ". . b5 ."]})
    assert result["valid"] is True and result["violations"] == []
    shapes = {(c["kind"], tuple(map(tuple, c["cells"]))) for c in result["constructs"]}
    assert shapes == {("run", ((0, 0), (0, 1), (0, 2))), ("group", ((0, 2), (1, 2), (2, 2)))}
    assert result["scores"] == {}


def test_missing_grid_is_an_input_error() -> None:
    with pytest.raises(InputError) as err:
        GAME.check_document({"game": "nummix"})
    assert err.value.field == "grid"
    with pytest.raises(InputError) as err:
        GAME.check_document({"before": ["r3 r4 r5"], "after": ["r3 r4 r5"]})
    assert err.value.field == "rack"


# --- turns -----------------------------------------------------------------------------------


def turn(before: list[str], after: list[str], rack: list[str], **kw: object) -> list[str]:
    doc = {"game": "nummix", "before": before, "after": after, "rack": rack, **kw}
    return [v["rule"] for v in GAME.check_document(doc)["violations"]]


def test_turn_adding_tiles() -> None:
    assert turn(["r3 r4 r5"], ["r3 r4 r5 r6", ". . . .", "k7 b7 o7 ."],
                ["r6", "k7", "b7", "o7", "b2"]) == []


def test_turn_rearranging_legally() -> None:
    # split a run to insert a duplicate red 5
    assert turn(["r3 r4 r5 r6 r7 r8"], ["r3 r4 r5", ". . .", "r5 r6 r7 r8"], ["r5"]) == []
    # take the end of a 4-run and make a group with two rack tiles, moving things about
    assert turn(["r2 r3 r4 r5"], ["k5 . r2 r3 r4", "r5", "b5"], ["k5", "b5"]) == []
    # only moving tiles (nothing laid) is a legal turn too
    assert turn(["r2 r3 r4"], [". .", ". r2", ". r3", ". r4"], ["k1"]) == []


def test_turn_taking_a_tile_back() -> None:
    doc = {"before": ["r3 r4 r5 r6"], "after": ["r3 r4 r5 ."], "rack": ["k1"]}
    result = GAME.check_document(doc)
    kept = [v for v in result["violations"] if v["rule"] == "nummix.kept"]
    assert len(kept) == 1 and kept[0]["tile"] == "r6" and kept[0]["cells"] == [[0, 3]]
    # swapping a table tile for a rack tile is taking one back as well
    assert "nummix.kept" in turn(["r3 r4 r5", ". . .", "k6 b6 o6"],
                                 ["r3 r4 r5", ". . .", "k6 b6 r6"], ["r6"])


def test_turn_tiles_must_come_from_rack() -> None:
    assert turn(["r3 r4 r5"], ["r3 r4 r5 r6"], ["k6"]) == ["nummix.rack"]
    assert turn(["r3 r4 r5"], ["r3 r4 r5 r6 r7"], ["r6"]) == ["nummix.rack"]


def test_turn_leaves_an_invalid_table() -> None:
    assert turn(["r3 r4 r5"], ["r3 r4 r5 . r7"], ["r7"]) == ["nummix.size"]


def test_first_play() -> None:
    assert turn([], ["r3 r4 r5"], ["r3", "r4", "r5"]) == []
    assert turn([], ["k7 b7 o7 r7"], ["r7", "k7", "b7", "o7"]) == []
    assert turn([], ["r3 r4 r5", ". . .", "k7 b7 o7"],
                ["r3", "r4", "r5", "k7", "b7", "o7"]) == ["nummix.first_play"]
    assert "nummix.first_play" in turn([], ["r3 r4"], ["r3", "r4"])
    assert turn([], ["r3 r4 r5", ". . k5", ". . b5"],
                ["r3", "r4", "r5", "k5", "b5"]) == ["nummix.first_play"]
    assert turn([], [], ["r3"]) == []  # drawing instead of opening is allowed


def test_joker_pass() -> None:
    base = {"before": ["r3 r4 r5"], "rack": ["r6", "Jrk"], "pending": ["Jrk"]}
    assert turn(after=["r3 r4 r5 r6"], **base) == ["nummix.joker_pass"]  # type: ignore[arg-type]
    assert turn(after=["r3 r4 r5 r6 Jrk"], **base) == []  # type: ignore[arg-type]
    assert turn(after=["r3 r4 r5 r6"], passed=["Jrk"], **base) == []  # type: ignore[arg-type]
    # a joker not drawn last turn cannot be passed on
    assert turn(["r3 r4 r5"], ["r3 r4 r5"], ["Jrk"], passed=["Jrk"]) == ["nummix.joker_pass"]


def test_turn_verdict_counts() -> None:
    verdict = check_turn(table("r3 r4 r5"), table("r3 r4 r5 r6"), ["r6", "b1"])
    assert verdict.valid and verdict.laid == ("r6",) and verdict.rack_left == ("b1",)


def test_supply_checked_for_turns() -> None:
    assert "nummix.tiles" in turn(["r3 r4 r5", ". . .", "r3 r4 r5"], ["r3 r4 r5", ". . .",
                                  "r3 r4 r5"], ["r3"])
