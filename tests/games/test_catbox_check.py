"""The ``companion check catbox`` contract: scoring a board, replaying a round's plays
(trick winners, every violation, the paradox), input errors naming the field, the CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from companion.cli import main
from companion.commands.check import EXAMPLES_DIR
from companion.games.base import InputError
from companion.games.catbox import GAME

ISSUE_EXAMPLE: dict[str, Any] = {
    "game": "catbox", "players": ["A", "B", "C"],
    "board": {"red": [".", ".", ".", ".", ".", "."], "blue": ["A", "A", ".", "B", ".", "."],
              "yellow": [".", "A", ".", ".", "C", "."], "green": [".", ".", ".", ".", ".", "."]},
    "tricks": {"A": 1, "B": 0, "C": 0}, "predictions": {"A": 1, "B": 1, "C": 3},
    "paradox": None}


def example(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((EXAMPLES_DIR / name).read_text())
    return doc


def rules(result: dict[str, Any]) -> list[str]:
    return [v["rule"] for v in result["violations"]]


def round_doc(plays: list[tuple[str, int, str]], **extra: Any) -> dict[str, Any]:
    doc = {"game": "catbox", "players": ["A", "B", "C"], "start": "A",
           "plays": [{"player": p, "card": c, "colour": col} for p, c, col in plays]}
    doc.update(extra)
    return doc


# --- boards ---------------------------------------------------------------------------


def test_issue_example() -> None:
    result = GAME.check_document(ISSUE_EXAMPLE)
    assert result["valid"] is True and result["violations"] == []
    assert result["largest_groups"] == {"A": 3, "B": 1, "C": 1}
    assert result["scores"] == {"A": 4, "B": 0, "C": 0}
    assert result["bonus"] == {"A": True, "B": False, "C": False}
    assert any("bonus 3" in line for line in result["summary"])


def test_board_with_a_paradox() -> None:
    doc = copy.deepcopy(ISSUE_EXAMPLE)
    doc["paradox"] = "A"
    result = GAME.check_document(doc)
    assert result["scores"] == {"A": -1, "B": 0, "C": 0}
    assert result["paradox"] == "A" and result["complete"] is True
    doc["tricks"] = {"A": 1, "B": 1, "C": 0}
    doc["paradox"] = "C"
    assert GAME.check_document(doc)["scores"] == {"A": 4, "B": 2, "C": 0}


def test_prediction_the_player_count_does_not_allow() -> None:
    doc = copy.deepcopy(ISSUE_EXAMPLE)
    doc["predictions"]["B"] = 2  # 3 players predict 1, 3 or 4
    result = GAME.check_document(doc)
    assert rules(result) == ["catbox.prediction"] and result["valid"] is False
    assert result["violations"][0]["player"] == "B"


def test_rows_of_nine_cells_are_accepted_for_fewer_players() -> None:
    doc = copy.deepcopy(ISSUE_EXAMPLE)
    for row in doc["board"].values():
        row.extend([".", "#", "."])
    assert GAME.check_document(doc)["scores"] == {"A": 4, "B": 0, "C": 0}


def test_four_and_two_player_row_lengths() -> None:
    four = {"game": "catbox", "players": ["A", "B", "C", "D"],
            "board": {c: ["."] * 8 for c in ("red", "blue", "yellow", "green")},
            "tricks": {"A": 0, "B": 0, "C": 0, "D": 0},
            "predictions": {"A": 1, "B": 2, "C": 3, "D": 1}}
    four["board"]["blue"][7] = "D"
    assert GAME.check_document(four)["largest_groups"]["D"] == 1
    for row in four["board"].values():
        row.append("#")
    assert GAME.check_document(four)["largest_groups"]["D"] == 1
    four["board"]["blue"][8] = "D"
    with pytest.raises(InputError) as err:
        GAME.check_document(four)
    assert err.value.field == "board.blue[8]"
    two = {"game": "catbox", "players": ["A", "B"],
           "board": {"red": list("....."), "blue": list("....."),
                     "yellow": list("..#.."), "green": list("#.#..")},
           "tricks": {"A": 3, "B": 5}}
    result = GAME.check_document(two)
    assert result["scores"] == {"A": 3, "B": 5} and result["bonus"] == {"A": True, "B": False}


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d["board"]["red"].append("."), "board.red"),
    (lambda d: d["board"]["blue"].__setitem__(2, "Z"), "board.blue[2]"),
    (lambda d: d["board"]["blue"].__setitem__(2, "#"), "board.blue[2]"),
    (lambda d: d["board"].pop("green"), "board.green"),
    (lambda d: d["board"].__setitem__("purple", ["."] * 6), "board.purple"),
    (lambda d: d["board"]["blue"].__setitem__(2, 3), "board.blue[2]"),
    (lambda d: d["tricks"].pop("C"), "tricks.C"),
    (lambda d: d["tricks"].__setitem__("A", -1), "tricks.A"),
    (lambda d: d["tricks"].__setitem__("A", 9), "tricks"),
    (lambda d: d["predictions"].pop("B"), "predictions.B"),
    (lambda d: d["predictions"].__setitem__("B", "one"), "predictions.B"),
    (lambda d: d.__setitem__("paradox", "Zed"), "paradox"),
    (lambda d: d["board"].__setitem__("blue", ["A"] * 6) or d["board"].__setitem__(
        "red", ["A"] * 6), "board"),
])
def test_board_input_errors_name_the_field(change: Any, field: str) -> None:
    doc = copy.deepcopy(ISSUE_EXAMPLE)
    change(doc)
    with pytest.raises(InputError) as err:
        GAME.check_document(doc)
    assert err.value.field == field


def test_two_player_blocked_cells_and_predictions() -> None:
    base = {"game": "catbox", "players": ["A", "B"], "tricks": {"A": 1, "B": 1},
            "board": {"red": list("....."), "blue": list("....."),
                      "yellow": list("#...."), "green": list(".....")}}
    with pytest.raises(InputError) as err:  # yellow blocked without green
        GAME.check_document(base)
    assert err.value.field == "board.yellow[0]"
    base["board"]["green"] = list("####.")
    base["board"]["yellow"] = list(".....")
    with pytest.raises(InputError) as err:  # four blocked cells from three cards
        GAME.check_document(base)
    assert err.value.field == "board"
    base["board"]["green"] = list("###..")
    base["predictions"] = {"A": 1, "B": 1}
    with pytest.raises(InputError) as err:
        GAME.check_document(base)
    assert err.value.field == "predictions"


# --- rounds ---------------------------------------------------------------------------


def test_trick_won_by_trump_and_by_the_led_colour() -> None:
    result = GAME.check_document(round_doc([
        ("A", 6, "blue"), ("B", 2, "red"), ("C", 5, "blue"),      # B trumps
        ("B", 3, "yellow"), ("C", 6, "green"), ("A", 4, "yellow"),  # A: led colour
    ]))
    assert result["valid"] is True
    assert [d["winner"] for d in result["tricks_detail"]] == ["B", "A"]
    assert [d["led"] for d in result["tricks_detail"]] == ["blue", "yellow"]
    assert result["tricks"] == {"A": 1, "B": 1, "C": 0}
    assert result["complete"] is False and result["next"] == "A"
    assert result["current_trick"] is None
    assert result["barred"] == {"A": [], "B": ["blue"], "C": ["yellow"]}  # trumping too
    assert result["board"]["red"][1] == "B" and result["board"]["green"][5] == "C"


@pytest.mark.parametrize(("name", "rule", "where"), [
    ("catbox_violation_occupied.json", "catbox.occupied", {"player": "B", "play": 3}),
    ("catbox_violation_barred.json", "catbox.barred", {"player": "B", "play": 4}),
    ("catbox_violation_lead_red.json", "catbox.lead_red", {"player": "A", "play": 0}),
    ("catbox_violation_must_play.json", "catbox.must_play", {"player": "B"}),
    ("catbox_violation_card.json", "catbox.card", {"player": "C", "play": 1}),
])
def test_violation_examples(name: str, rule: str, where: dict[str, Any]) -> None:
    result = GAME.check_document(example(name))
    assert result["valid"] is False
    first = next(v for v in result["violations"] if v["rule"] == rule)
    assert {k: first[k] for k in where} == where
    assert first["explanation"] and first["message"]


def test_illegal_play_with_a_known_hand_also_breaks_must_play() -> None:
    doc = round_doc([("A", 4, "blue"), ("B", 6, "blue"), ("C", 2, "blue"),
                     ("B", 4, "blue")], hands={"B": [4, 6, 1, 1, 2, 2, 3, 3, 5]})
    result = GAME.check_document(doc)
    assert rules(result) == ["catbox.occupied", "catbox.must_play"]
    assert "1 as blue" in result["violations"][1]["message"]
    assert "red" not in result["violations"][1]["message"]  # B leads: red not broken


def test_lead_red_without_hands_is_only_faulted_when_surely_wrong() -> None:
    # every other 2 cell is taken: the leader may have had no other choice
    plays = [("A", 2, "blue"), ("B", 3, "blue"), ("C", 1, "blue"),
             ("B", 2, "yellow"), ("C", 4, "yellow"), ("A", 5, "yellow"),
             ("A", 2, "green"), ("B", 1, "green"), ("C", 4, "green"),
             ("C", 2, "red")]
    result = GAME.check_document(round_doc(plays))
    assert result["valid"] is True
    assert any("led red" in line for line in result["summary"])
    known = round_doc(plays, hands={"C": [1, 4, 4, 2, 6, 6, 5, 5, 3]})
    result = GAME.check_document(known)
    assert rules(result) == ["catbox.lead_red", "catbox.must_play"]


def test_paradox_round_example_is_scored() -> None:
    doc = example("catbox_round_paradox_valid.json")
    result = GAME.check_document(doc)
    assert result["valid"] is True and result["complete"] is True
    assert result["paradox"]["player"] == "Ben"
    assert result["tricks_detail"][-1]["winner"] is None
    tricks = result["tricks"]
    assert result["scores"]["Ben"] == -tricks["Ben"]
    assert sum(tricks.values()) == result["paradox"]["trick"] - 1


def test_paradox_detected_from_hands_and_plays_after_it() -> None:
    doc = example("catbox_round_paradox_valid.json")
    players = doc["players"]
    played = [p["card"] for p in doc["plays"] if p["player"] == "Ben"]
    left = list(doc["hands"]["Ben"])
    for card in played:
        left.remove(card)
    # Ben puts down a card anyway: that is the paradox, not a violation
    doc["plays"].append({"player": "Ben", "card": left[0], "colour": "blue"})
    result = GAME.check_document(doc)
    assert result["valid"] is True
    assert result["paradox"]["card"] == {"player": "Ben", "card": left[0], "colour": "blue"}
    # anyone playing after the paradox breaks catbox.paradox
    after = players[(players.index("Ben") + 1) % len(players)]
    doc["plays"].append({"player": after, "card": 1, "colour": "green"})
    result = GAME.check_document(doc)
    assert rules(result) == ["catbox.paradox"]
    assert result["scores"] == GAME.check_document(
        example("catbox_round_paradox_valid.json"))["scores"]


def test_paradox_claims_checked() -> None:
    doc = example("catbox_round_paradox_valid.json")
    wrong = dict(doc, paradox="Anna")
    assert "catbox.paradox" in rules(GAME.check_document(wrong))
    # without hands the table's call is taken: Ben caused it
    unseen = {k: v for k, v in doc.items() if k != "hands"}
    unseen["paradox"] = "Ben"
    result = GAME.check_document(unseen)
    assert result["valid"] is True and result["paradox"]["player"] == "Ben"
    assert result["scores"] == GAME.check_document(doc)["scores"]
    full = example("catbox_round_valid.json")
    ended = dict(full, paradox=full["start"])
    assert rules(GAME.check_document(ended)) == ["catbox.paradox"]


def test_two_player_round_uses_the_revealed_cards() -> None:
    doc = example("catbox_round_two_players_valid.json")
    result = GAME.check_document(doc)
    assert result["valid"] is True and result["complete"] is True
    blocked = sum(row.count("#") for row in result["board"].values())
    assert blocked == 3 + 4  # three from the revealed cards, plus the 6 column
    assert sum(result["tricks"].values()) == 8


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d["plays"][0].__setitem__("colour", "purple"), "plays[0].colour"),
    (lambda d: d["plays"][1].__setitem__("card", 7), "plays[1].card"),
    (lambda d: d["plays"][1].__setitem__("player", "Zed"), "plays[1].player"),
    (lambda d: d["plays"][1].pop("card"), "plays[1].card"),
    (lambda d: d["plays"].__setitem__(1, [1, 2]), "plays[1]"),
    (lambda d: d.__setitem__("start", "Zed"), "start"),
    (lambda d: d.__setitem__("hands", {"A": [1, 2, 3]}), "hands.A"),
    (lambda d: d.__setitem__("hands", {"A": [1] * 9, "B": [1] * 9}), "hands"),
    (lambda d: d.__setitem__("revealed", [1, 2, 3]), "revealed"),
    (lambda d: d.__setitem__("board", ISSUE_EXAMPLE["board"]), "board"),
    (lambda d: d["plays"].extend(d["plays"] * 9), "plays[24]"),
])
def test_round_input_errors_name_the_field(change: Any, field: str) -> None:
    doc = round_doc([("A", 4, "blue"), ("B", 6, "blue"), ("C", 2, "blue")])
    change(doc)
    with pytest.raises(InputError) as err:
        GAME.check_document(doc)
    assert err.value.field == field


# --- the CLI --------------------------------------------------------------------------


def test_cli_json_on_good_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "board.json"
    f.write_text(json.dumps(ISSUE_EXAMPLE))
    assert main(["check", "catbox", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "catbox" and out["largest_groups"]["A"] == 3
    assert out["scores"] == {"A": 4, "B": 0, "C": 0}


def test_cli_text_names_the_rule(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES_DIR / "catbox_violation_barred.json"
    assert main(["check", "catbox", str(path)]) == 0
    out = capsys.readouterr().out
    assert "catbox.barred" in out and "did not follow blue" in out
    result = GAME.check_document(example("catbox_violation_barred.json"))
    assert result["current_trick"] is None and result["next"] == "C"
    result = GAME.check_document(example("catbox_violation_occupied.json"))
    assert result["current_trick"]["leader"] == "B" and result["next"] == "C"
    assert result["current_trick"]["plays"] == [{"player": "B", "card": 4, "colour": "blue"}]
    assert "trick 1: A 3 blue, B 5 yellow, C 1 blue -> A wins" in out


def test_cli_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = copy.deepcopy(ISSUE_EXAMPLE)
    doc["board"]["yellow"][4] = "Q"
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    assert main(["check", "catbox", str(f), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: board.yellow[4]:") and "Traceback" not in captured.err
    f.write_text(json.dumps({"game": "catbox", "players": ["A"]}))
    assert main(["check", "catbox", str(f)]) == 2
    assert "players" in capsys.readouterr().err
