"""``companion check qwixx``: the JSON contract of issue 2 and the CLI on good and bad
input (exit 0 with a verdict, or exit 2 with one line naming the field)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from companion.cli import main
from companion.commands.check import EXAMPLES_DIR
from companion.games.base import InputError
from companion.games.qwixx import GAME

ISSUE_SHEET = {"red": [2, 3, 5, 7, 8], "yellow": [], "green": [12, 11], "blue": [],
               "locks": [], "fouls": 1}


def check(doc: dict[str, Any]) -> dict[str, Any]:
    return GAME.check_document(doc)


def rules(out: dict[str, Any]) -> list[str]:
    return [v["rule"] for v in out["violations"]]


def two(anna: dict[str, Any] | None = None, ben: dict[str, Any] | None = None,
        **more: Any) -> dict[str, Any]:
    return {"game": "qwixx", "sheets": {"Anna": anna or {}, "Ben": ben or {}}, **more}


# --- the contract --------------------------------------------------------------------------


def test_issue_sheet() -> None:
    out = check({"game": "qwixx", "sheets": {"Anna": ISSUE_SHEET}})
    assert out["game"] == "qwixx" and out["valid"] is True and out["violations"] == []
    assert out["scores"] == {"Anna": 13}
    assert out["details"]["Anna"]["rows"]["red"] == {
        "crosses": 5, "numbers": [2, 3, 5, 7, 8], "locked": False, "points": 15}
    assert out["game_over"] is False and out["winners"] == [] and out["leaders"] == ["Anna"]


def test_issue_turn_gap_and_lock() -> None:
    doc = json.loads((EXAMPLES_DIR / "qwixx_turn_issue.json").read_text())
    out = check(doc)
    assert rules(out) == ["qwixx.gap", "qwixx.lock"]
    gap = out["violations"][0]
    assert gap["player"] == "Anna" and gap["row"] == "green" and gap["step"] == "play"
    assert gap["explanation"]
    assert out["play_legal"] is False and out["active"] == "Anna" and "after" not in out


def test_gap_rulebook_example_through_the_document() -> None:
    base = {"green": [12, 11, 10, 9, 8]}
    ok = check(two(base, play={"player": "Anna", "cards": ["g2", "g3", "g5"],
                               "cross": [2, 3, 5]}))
    assert ok["valid"] and ok["after"]["sheets"]["Anna"]["locks"] == ["green"]
    assert ok["after"]["scores"]["Anna"] == 45  # 5 + 3 numbers + the lock box = 9
    for cross, legal in (([2], True), ([3], True), ([2, 3], True), ([6], True),
                         ([3, 6], False), ([2, 6], False), ([2, 3, 6], False)):
        out = check(two(base, play={"player": "Anna", "cards": ["g2", "g3", "g6"],
                                    "cross": cross}))
        assert out["valid"] is legal, (cross, out["violations"])
        assert legal or rules(out) == ["qwixx.gap"]


def test_top_card_step() -> None:
    out = check(two({"red": [2, 3, 5]}, {"red": [8]},
                    top_card={"number": 7, "crosses": {"Ben": "red", "Anna": "red"}}))
    assert rules(out) == ["qwixx.order"]
    assert out["violations"][0]["player"] == "Ben"
    assert out["violations"][0]["step"] == "top_card"
    assert out["foul"] is None  # no play: nothing to say about a foul


def test_valid_turn_with_a_lock_gives_the_scores_after() -> None:
    out = check(json.loads((EXAMPLES_DIR / "qwixx_turn_valid.json").read_text()))
    assert out["valid"] and out["foul"] is False
    anna = out["after"]["sheets"]["Anna"]
    assert anna["red"] == [2, 3, 5, 7, 8, 9, 10, 11, 12] and anna["locks"] == ["red"]
    assert out["after"]["scores"] == {"Anna": 55 - 5 + 3, "Ben": 10 + 1}


def test_foul_decision() -> None:
    play = {"player": "Anna", "cards": ["y4"], "cross": []}
    out = check(two(play=play))
    assert out["valid"] and out["foul"] is True
    assert out["after"]["sheets"]["Anna"]["fouls"] == 1
    out = check(two(play=play, top_card={"number": 4, "crosses": {"Anna": "blue"}}))
    assert out["valid"] and out["foul"] is False
    out = check(two(play={**play, "foul": False}))
    assert rules(out) == ["qwixx.foul"]
    out = check(two(play={**play, "cross": [4], "foul": True}))
    assert rules(out) == ["qwixx.foul"]


def test_fourth_foul_ends_the_game_after_the_turn() -> None:
    out = check(two({"fouls": 3}, {"red": [2, 3]},
                    play={"player": "Anna", "cards": ["y4"]}))
    assert out["valid"] and out["after"]["game_over"] is True
    assert out["after"]["winners"] == ["Ben"]


def test_rows_may_be_named_by_letter() -> None:
    out = check(two({"red": [2, 3, 4, 5, 6, 12], "locks": ["r"]},
                    top_card={"number": 5, "crosses": {"Ben": "B"}}))
    assert out["valid"], out["violations"]
    assert out["details"]["Anna"]["rows"]["red"]["locked"] is True
    assert out["after"]["sheets"]["Ben"]["blue"] == [5]
    with pytest.raises(InputError) as err:
        check(two({"locks": ["red", "r"]}))
    assert err.value.field == "sheets.Anna.locks"


def test_game_over_sheets_have_winners() -> None:
    out = check(json.loads((EXAMPLES_DIR / "qwixx_game_over_valid.json").read_text()))
    assert out["game_over"] is True and out["winners"] == ["Ben"]
    assert out["scores"] == {"Anna": 46, "Ben": 58, "Clara": -16}


def test_jokers() -> None:
    out = check(two(variant="jokers", play={"player": "Anna", "cards": ["J5", "r4"],
                                            "cross": [4, 5]}))
    assert out["valid"] and out["after"]["sheets"]["Anna"]["red"] == [4, 5]
    out = check(two(variant="jokers", play={"player": "Anna", "cards": ["J5", "r4"],
                                            "colour": "green", "cross": [4, 5]}))
    assert rules(out) == ["qwixx.one_colour"]


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"sheets": {"Anna": {}}, "play": {"player": "Anna", "cards": ["g13"]}},
         "play.cards[0]"),
        ({"sheets": {"Anna": {}}, "play": {"player": "Anna", "cards": ["r2", "x5"]}},
         "play.cards[1]"),
        ({"sheets": {"Anna": {}}, "play": {"player": "Anna", "cards": ["J5"]}},
         "play.cards[0]"),
        ({"sheets": {"Anna": {}}, "variant": "jokers",
          "play": {"player": "Anna", "cards": ["J5"], "cross": [5]}}, "play.colour"),
        ({"sheets": {"Anna": {}}, "play": {"player": "Zoe", "cards": ["r2"]}}, "play.player"),
        ({"sheets": {"Anna": {}}, "top_card": {"number": 13}}, "top_card.number"),
        ({"sheets": {"Anna": {}}, "top_card": {"number": 7, "crosses": {"Ben": "red"}}},
         "top_card.crosses.Ben"),
        ({"sheets": {"Anna": {}}, "top_card": {"number": 7, "crosses": {"Anna": "pink"}}},
         "top_card.crosses.Anna"),
        ({"sheets": {"Anna": {"fouls": 5}}}, "sheets.Anna.fouls"),
        ({"sheets": {"Anna": {"red": [2, 13]}}}, "sheets.Anna.red[1]"),
        ({"sheets": {"Anna": {"red": [2, 2]}}}, "sheets.Anna.red[1]"),
        ({"sheets": {"Anna": {"gren": [2]}}}, "sheets.Anna.gren"),
        ({"sheets": {"Anna": {"locks": ["purple"]}}}, "sheets.Anna.locks[0]"),
        ({"sheets": {}}, "sheets"),
        ({"sheets": {" ": {}}}, "sheets"),
        ({"sheets": {n: {} for n in "ABCDEF"}}, "sheets"),
        ({}, "sheets"),
        ({"players": ["Anna", "Ben"], "sheets": {"Anna": {}}}, "sheets.Ben"),
        ({"sheets": {"Anna": {}}, "variant": "dice"}, "variant"),
    ],
)
def test_bad_input_names_the_field(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as err:
        check(doc)
    assert err.value.field == field


# --- the CLI -------------------------------------------------------------------------------


def run(tmp_path: Path, doc: object, capsys: pytest.CaptureFixture[str],
        *flags: str) -> tuple[int, str, str]:
    path = tmp_path / "position.json"
    path.write_text(json.dumps(doc))
    code = main(["check", "qwixx", str(path), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_on_a_good_position(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, {"game": "qwixx", "sheets": {"Anna": ISSUE_SHEET}},
                         capsys, "--json")
    assert code == 0 and err == ""
    result = json.loads(out)
    assert result["scores"] == {"Anna": 13} and result["valid"] is True


def test_cli_json_on_a_violation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((EXAMPLES_DIR / "qwixx_violation_order.json").read_text())
    code, out, _ = run(tmp_path, doc, capsys, "--json")
    result = json.loads(out)
    assert code == 0 and result["valid"] is False
    assert {v["rule"] for v in result["violations"]} == {"qwixx.order"}


def test_cli_human_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((EXAMPLES_DIR / "qwixx_violation_gap.json").read_text())
    code, out, _ = run(tmp_path, doc, capsys)
    assert code == 0
    assert "qwixx.gap:" in out and "at most one number is skipped" in out
    assert "player Anna" in out and "scores: Anna 15, Ben 0" in out


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"game": "qwixx", "sheets": {"Anna": {}},
          "play": {"player": "Anna", "cards": ["g13"]}}, "play.cards[0]: no card 'g13'"),
        ({"game": "qwixx", "sheets": {"Anna": {}},
          "play": {"player": "Anna", "cards": ["x5"]}}, "play.cards[0]: no card 'x5'"),
        ({"game": "qwixx", "sheets": {"Anna": {}},
          "top_card": {"number": 7, "crosses": {"Ben": "red"}}},
         "top_card.crosses.Ben: unknown player 'Ben'"),
        ({"game": "qwixx", "sheets": {"Anna": {"fouls": "one"}}}, "sheets.Anna.fouls"),
    ],
)
def test_cli_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                       doc: object, needle: str) -> None:
    code, out, err = run(tmp_path, doc, capsys, "--json")
    assert code == 2 and out == ""
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err
