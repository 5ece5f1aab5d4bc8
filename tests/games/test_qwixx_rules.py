"""Qwixx: Das Kartenspiel rules against the rulebook's own examples (RULES.md §2)."""

from __future__ import annotations

from itertools import combinations

import pytest

from companion.games.base import InputError
from companion.games.qwixx import (
    GAME,
    ROWS,
    Card,
    Sheet,
    cross_violations,
    parse_card,
    play_violations,
    row_points,
    sheet_score,
    sheet_violations,
)


def sheet(**rows: list[int]) -> Sheet:
    """A sheet with the given rows crossed (the lock follows from the last number)."""
    s = Sheet()
    for r, numbers in rows.items():
        s = s.cross(r, numbers)
    return s


def rules(found: object) -> set[str]:
    return {v.rule for v in found}  # type: ignore[attr-defined]


def cards(*names: str) -> tuple[Card, ...]:
    return tuple(parse_card(n, "card") for n in names)


def legal_cross_sets(
    row: str, numbers: list[int], start: Sheet | None = None
) -> set[frozenset[int]]:
    """Every non-empty subset of ``numbers`` that may be crossed in one play."""
    out = set()
    for k in range(1, len(numbers) + 1):
        for combo in combinations(numbers, k):
            if not cross_violations(start or Sheet(), row, combo, "Anna", "play"):
                out.add(frozenset(combo))
    return out


# --- qwixx.gap: the rulebook's examples --------------------------------------------------


@pytest.mark.parametrize("row", ROWS)
def test_two_three_five_crosses_all_three(row: str) -> None:
    # Seed: "three green cards 2, 3 and 5: we may cross all of them" (green's 2 is its
    # last number, so green needs five crosses first; red/yellow take them at once).
    start = sheet(**{row: [12, 11, 10, 9, 8]}) if row in ("green", "blue") else Sheet()
    assert not cross_violations(start, row, [2, 3, 5], "Anna", "play")


def test_two_three_six_crosses_two_three_both_or_six() -> None:
    assert legal_cross_sets("red", [2, 3, 6]) == {
        frozenset({2}), frozenset({3}), frozenset({2, 3}), frozenset({6})}
    found = cross_violations(Sheet(), "red", [2, 3, 6], "Anna", "play")
    assert rules(found) == {"qwixx.gap"}
    assert "skips 4, 5" in found[0].message


@pytest.mark.parametrize("row", ["green", "blue"])
def test_twelve_eleven_nine_is_fine_on_green_and_blue(row: str) -> None:
    assert not cross_violations(Sheet(), row, [12, 11, 9], "Anna", "play")


def test_two_four_six_crosses_two_four_or_four_six() -> None:
    pairs = {s for s in legal_cross_sets("red", [2, 4, 6]) if len(s) > 1}
    assert pairs == {frozenset({2, 4}), frozenset({4, 6})}
    assert rules(cross_violations(Sheet(), "red", [2, 4, 6], "Anna", "play")) == {"qwixx.gap"}


def test_gap_counts_only_numbers_of_this_play() -> None:
    # Boxes skipped between earlier crosses and this play are lost, not a gap.
    assert not cross_violations(sheet(red=[2]), "red", [7, 8, 10], "Anna", "play")


# --- qwixx.order -------------------------------------------------------------------------


def test_cross_left_of_an_existing_cross_is_illegal() -> None:
    found = cross_violations(sheet(red=[2, 3, 5, 7, 8]), "red", [4, 6], "Anna", "play")
    assert rules(found) == {"qwixx.order"}
    assert len(found) == 2
    assert {v.locator("number") for v in found} == {4, 6}


def test_crossing_a_crossed_number_again_is_illegal() -> None:
    assert rules(cross_violations(sheet(green=[9]), "green", [9], "A", "top_card")) == {
        "qwixx.order"}
    assert not cross_violations(sheet(green=[9]), "green", [8], "A", "top_card")
    assert rules(cross_violations(sheet(green=[9]), "green", [10], "A", "top_card")) == {
        "qwixx.order"}


# --- qwixx.lock --------------------------------------------------------------------------


def test_lock_after_five_crosses() -> None:
    five = sheet(red=[2, 3, 4, 5, 6])
    assert not cross_violations(five, "red", [12], "Anna", "top_card")
    four = sheet(red=[2, 3, 4, 5])
    found = cross_violations(four, "red", [12], "Anna", "top_card")
    assert rules(found) == {"qwixx.lock"}
    locked = five.cross("red", [12])
    assert locked.locks == {"red"}
    assert locked.crosses("red") == 7  # five numbers, the 12 and the lock box
    assert sheet_score(locked) == 28


def test_lock_counts_crosses_made_earlier_in_the_same_play() -> None:
    four = sheet(blue=[12, 11, 10, 9])
    assert not cross_violations(four, "blue", [4, 3, 2], "Anna", "play")
    three = sheet(blue=[12, 11, 10])
    assert rules(cross_violations(three, "blue", [3, 2], "Anna", "play")) == {"qwixx.lock"}


def test_a_locked_row_takes_no_more_crosses_but_others_go_on() -> None:
    anna = sheet(yellow=[2, 3, 4, 5, 6, 12])
    assert rules(cross_violations(anna, "yellow", [7], "Anna", "top_card")) == {"qwixx.order"}
    ben = sheet(yellow=[2, 3])  # locks are personal
    assert not cross_violations(ben, "yellow", [7], "Ben", "top_card")


@pytest.mark.parametrize(
    ("given", "needle"),
    [
        (Sheet(rows=((2, 3), (), (), ()), locks=frozenset({"red"})), "lock box is crossed"),
        (Sheet(rows=((2, 3, 4, 5, 12), (), (), ()), locks=frozenset({"red"})),
         "only 4 other crosses"),
        (Sheet(rows=((), (), (), (12, 11, 10, 9, 8, 2))), "lock box is not"),
    ],
)
def test_sheets_that_cannot_be(given: Sheet, needle: str) -> None:
    found = sheet_violations("Anna", given)
    assert rules(found) == {"qwixx.lock"}
    assert any(needle in v.message for v in found), found


def test_a_lock_with_five_other_crosses_is_a_legal_sheet() -> None:
    assert not sheet_violations("Anna", sheet(green=[12, 10, 8, 6, 4, 2]))


# --- one colour, play size, cards ----------------------------------------------------------


def test_one_colour_per_play() -> None:
    row, found = play_violations(Sheet(), "Anna", cards("r2", "g3"), [2], None)
    assert row is None and rules(found) == {"qwixx.one_colour"}


def test_a_joker_takes_the_colour_of_its_companions() -> None:
    row, found = play_violations(Sheet(), "Anna", cards("J5", "r4"), [4, 5], None)
    assert row == "red" and not found
    row, found = play_violations(Sheet(), "Anna", cards("J5", "r4"), [4, 5], "blue")
    assert rules(found) == {"qwixx.one_colour"}


def test_jokers_alone_cross_in_the_declared_colour() -> None:
    row, found = play_violations(Sheet(), "Anna", cards("J5", "J6"), [5, 6], "yellow")
    assert row == "yellow" and not found


@pytest.mark.parametrize("names", [(), ("r2", "r3", "r4", "r5")])
def test_play_size(names: tuple[str, ...]) -> None:
    _, found = play_violations(Sheet(), "Anna", cards(*names), [], None)
    assert "qwixx.play_size" in rules(found)


def test_only_numbers_played_may_be_crossed() -> None:
    _, found = play_violations(Sheet(), "Anna", cards("r2", "r3"), [2, 4], None)
    assert rules(found) == {"qwixx.card"}


@pytest.mark.parametrize(
    ("text", "needle"),
    [("g13", "2 to 12"), ("x5", "r, y, g, b or J"), ("r1", "2 to 12"), ("g", "2 to 12"),
     (7, "like")],
)
def test_cards_that_cannot_exist(text: object, needle: str) -> None:
    with pytest.raises(InputError) as err:
        parse_card(text, "play.cards[0]")
    assert err.value.field == "play.cards[0]" and needle in err.value.message


def test_jokers_only_in_the_jokers_variant() -> None:
    assert parse_card("J5", "c") == Card("J", 5)
    with pytest.raises(InputError):
        parse_card("J5", "c", jokers=False)


# --- scoring -----------------------------------------------------------------------------


def test_row_points_one_to_seventy_eight() -> None:
    assert [row_points(n) for n in range(1, 13)] == [
        1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66, 78]


def test_a_full_row_with_lock_scores_78() -> None:
    full = sheet(red=list(range(2, 13)))
    assert full.crosses("red") == 12 and sheet_score(full) == 78


def test_fouls_cost_five_each() -> None:
    assert sheet_score(Sheet(fouls=1)) == -5
    assert sheet_score(Sheet(fouls=4)) == -20


def test_issue_example_scores_thirteen() -> None:
    doc = {"game": "qwixx", "sheets": {"Anna": {"red": [2, 3, 5, 7, 8], "yellow": [],
           "green": [12, 11], "blue": [], "locks": [], "fouls": 1}}}
    out = GAME.check_document(doc)
    assert out["scores"] == {"Anna": 13}
    assert out["valid"] is True
    rows = out["details"]["Anna"]["rows"]
    assert rows["red"]["points"] == 15 and rows["green"]["points"] == 3
    assert out["details"]["Anna"]["foul_points"] == -5
    assert any("total 13" in line for line in out["summary"])
