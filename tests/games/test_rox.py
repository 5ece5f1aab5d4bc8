"""Rox (RULES.md §3): row verification, ranking with ties, the JSON contract, the CLI,
and random full games that keep the invariants."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.cli import main
from companion.games import rox
from companion.games.base import IllegalPlay, InputError
from companion.games.rox import DECK, GAME, ElementCard, RoxPlay, RoxState
from companion.rules import RULES

ELEMENTS = ("fire", "water", "earth", "air", "magic")
ISSUE_EXAMPLE = {
    "game": "rox", "players": ["A", "B", "C"], "caller": "B", "scoring_cards": [7, 3],
    "rows": {"A": [{"centre": "fire", "edge": {"water": 6, "earth": 4, "air": 3, "magic": 2,
                                               "fire": 1}},
                   {"centre": "water", "edge": {"air": 7, "fire": 5, "earth": 2, "magic": 1,
                                                "water": 1}}],
             "B": [], "C": []},
}


def card(centre: str, lead: str, tie: str | None = None) -> dict[str, object]:
    """A card (JSON) whose edge shows ``lead`` most often (with ``tie`` as often)."""
    edge = {lead: 5}
    if tie:
        edge[tie] = 5
    rest = [e for e in ELEMENTS if e not in edge]
    left = 16 - sum(edge.values())
    for i, e in enumerate(rest):
        edge[e] = left // len(rest) + (1 if i < left % len(rest) else 0)
    assert max(edge[e] for e in rest) < 5
    return {"centre": centre, "edge": edge}


def chain(*centres: str, last: str = "fire") -> list[dict[str, object]]:
    """A correctly linked row with these centres."""
    if not centres:
        return []
    leads = [*centres[1:], last]
    return [card(c, lead) for c, lead in zip(centres, leads, strict=True)]


def parsed(row: list[dict[str, object]]) -> list[ElementCard]:
    return [rox.read_card(c, f"row[{i}]") for i, c in enumerate(row)]


# --- verification ----------------------------------------------------------------------


def test_issue_example() -> None:
    result = GAME.check_document(ISSUE_EXAMPLE)
    assert result["valid_lengths"] == {"A": 2, "B": 0, "C": 0}
    assert result["awards"] == {"A": 7}
    assert result["scores"] == {"A": 7, "B": 0, "C": 0}
    assert result["valid"] is True
    assert {n["player"] for n in result["notes"]} == {"B", "C"}
    assert all(n["rule"] == "rox.short" for n in result["notes"])


def test_a_break_in_the_middle_of_a_row() -> None:
    """Card 3 asks for magic, card 4 shows earth: cards 4-6 go back, valid length 3."""
    row = chain("fire", "water", "air", "magic", "earth", "fire")
    row[3] = card("earth", "earth")
    check = rox.check_row("A", parsed(row))
    assert check.valid_length == 3
    [v] = check.problems
    assert (v.rule, v.locator("player"), v.locator("position")) == ("rox.link", "A", 4)
    assert v.locator("expected") == "magic" and v.locator("found") == "earth"


def test_only_the_first_break_counts() -> None:
    row = chain("fire", "water", "air", "magic", "earth", "fire")
    row[1] = card("earth", "air")
    row[4] = card("water", "fire")
    check = rox.check_row("A", parsed(row))
    assert check.valid_length == 1 and [v.locator("position") for v in check.problems] == [2]


def test_a_whole_valid_row() -> None:
    check = rox.check_row("A", parsed(chain("fire", "water", "air", "magic", "earth", "fire")))
    assert check.valid_length == 6 and check.problems == ()


def test_tie_on_an_edge_is_flagged_for_a_ruling(monkeypatch: pytest.MonkeyPatch) -> None:
    row = chain("fire", "water", "air", "magic")
    row[1] = card("water", "air", tie="fire")   # air and fire 5 each; next centre air
    check = rox.check_row("A", parsed(row))
    [v] = check.problems
    assert v.rule == "rox.tie" and v.locator("position") == 2 and check.needs_ruling
    assert check.valid_length == 4          # TIED_EDGE_LINK_HOLDS: stands until ruled
    monkeypatch.setattr(rox, "TIED_EDGE_LINK_HOLDS", False)
    assert rox.check_row("A", parsed(row)).valid_length == 2


def test_tie_with_a_centre_that_is_neither_element_is_a_plain_break() -> None:
    row = chain("fire", "water", "air", "magic")
    row[1] = card("water", "earth", tie="fire")  # next centre air: wrong whatever wins
    check = rox.check_row("A", parsed(row))
    assert [v.rule for v in check.problems] == ["rox.link"]
    assert check.valid_length == 2 and not check.needs_ruling


def test_edge_total_other_than_16_is_flagged() -> None:
    row = chain("fire", "water", "air")
    row[1]["edge"]["magic"] += 1  # type: ignore[index]
    result = GAME.check_document({"players": ["A", "B"], "caller": "A", "scoring_cards": [4],
                                  "rows": {"A": row}})
    [v] = result["violations"]
    assert (v["rule"], v["player"], v["position"]) == ("rox.edge", "A", 2)
    assert result["valid_lengths"]["A"] == 3


# --- ranking ---------------------------------------------------------------------------


def test_tie_in_length_with_the_caller_among_them() -> None:
    players = ["A", "B", "C"]
    lengths = {"A": 3, "B": 3, "C": 2}
    assert rox.ranking(players, "B", lengths) == ["B", "A", "C"]
    assert rox.awards(players, "B", lengths, [3, 7]) == {"B": 7, "A": 3}


def test_tie_in_length_without_the_caller_goes_by_seat_from_the_callers_left() -> None:
    players = ["A", "B", "C", "D"]
    lengths = {"A": 4, "B": 5, "C": 2, "D": 4}
    # caller B: to B's left sit C, then D, then A -> D before A
    assert rox.ranking(players, "B", lengths) == ["B", "D", "A", "C"]
    # caller D: to D's left sit A, B, C -> A before C
    assert rox.ranking(players, "D", {"A": 3, "B": 6, "C": 3, "D": 1}) == ["B", "A", "C"]
    assert rox.ranking(players, "A", {"A": 1, "B": 3, "C": 6, "D": 3}) == ["C", "B", "D"]
    assert rox.ranking(players, "C", {"A": 3, "B": 3, "C": 6, "D": 3}) == ["C", "D", "A", "B"]


def test_short_rows_take_nothing_and_leftovers_go_back() -> None:
    players = ["A", "B", "C", "D"]
    lengths = {"A": 1, "B": 6, "C": 0, "D": 2}
    assert rox.awards(players, "B", lengths, [2, 9, 5]) == {"B": 9, "D": 5}
    assert rox.round_scores(players, "B", lengths, [2, 9, 5]) == {"A": 0, "B": 9, "C": 0,
                                                                  "D": 5}


@settings(max_examples=150, deadline=None)
@given(data=st.data(), n=st.integers(2, 4))
def test_ranking_property(data: st.DataObject, n: int) -> None:
    players = [f"P{i}" for i in range(n)]
    lengths = {p: data.draw(st.integers(0, 6)) for p in players}
    caller = data.draw(st.sampled_from(players))
    order = rox.ranking(players, caller, lengths)
    assert set(order) == {p for p in players if lengths[p] >= 2}
    c = players.index(caller)
    for a, b in zip(order, order[1:], strict=False):
        if lengths[a] == lengths[b]:
            assert (players.index(a) - c) % n < (players.index(b) - c) % n
        else:
            assert lengths[a] > lengths[b]


# --- the contract ----------------------------------------------------------------------


def test_document_with_ties_and_caller() -> None:
    rows = {"A": chain("fire", "water", "air"), "B": chain("earth", "fire", "air"),
            "C": chain("water", "magic")}
    result = GAME.check_document({"players": ["A", "B", "C"], "caller": "B",
                                  "scoring_cards": [4, 8], "rows": rows})
    assert result["ranking"] == ["B", "A", "C"] and result["awards"] == {"B": 8, "A": 4}
    assert result["scores"] == {"A": 4, "B": 8, "C": 0}
    assert any("ranked 3, no scoring card left" in line for line in result["summary"])


def test_play_check_on_a_row() -> None:
    base = {"players": ["A", "B"], "caller": "A", "scoring_cards": [4],
            "rows": {"A": chain("fire", "water", last="air")}}
    good = GAME.check_document({**base, "play": {"player": "A", "card": card("air", "fire")}})
    assert good["play_legal"] is True and good["valid"] is True
    bad = GAME.check_document({**base, "play": {"player": "A", "card": card("earth", "fire")}})
    assert bad["play_legal"] is False
    [v] = bad["violations"]
    assert (v["rule"], v["position"]) == ("rox.link", 3)
    first = GAME.check_document({**base, "play": {"player": "B", "card": card("earth", "air")}})
    assert first["play_legal"] is True


def test_whole_game_totals_and_several_winners() -> None:
    def rnd(caller: str, cards: list[int], a: int, b: int) -> dict[str, object]:
        centres = ("fire", "water", "air", "magic", "earth", "fire")
        return {"caller": caller, "scoring_cards": cards,
                "rows": {"A": chain(*centres[:a]), "B": chain(*centres[:b])}}
    rounds = [rnd("A", [5], 6, 3), rnd("B", [4], 2, 6), rnd("A", [3], 6, 6),
              rnd("B", [2], 1, 6), rnd("A", [6], 6, 2)]
    result = GAME.check_document({"players": ["A", "B"], "rounds": rounds})
    assert result["totals"] == {"A": 14, "B": 6}
    assert result["game_over"] is True and result["winners"] == ["A"]
    result = GAME.check_document({"players": ["A", "B"], "rounds": rounds[:4]})
    assert result["totals"] == {"A": 8, "B": 6} and result["game_over"] is False
    assert result["winners"] == []
    level = [rnd("A", [5], 6, 1), rnd("B", [5], 1, 6), rnd("A", [2], 6, 0),
             rnd("B", [2], 0, 6), rnd("A", [1], 0, 0)]
    result = GAME.check_document({"players": ["A", "B"], "rounds": level})
    assert result["winners"] == ["A", "B"]


def test_violations_in_rounds_carry_the_round() -> None:
    row = chain("fire", "water", "air")
    row[2] = card("earth", "fire")
    rounds = [{"caller": "A", "scoring_cards": [3], "rows": {"A": chain("fire", "water")}},
              {"caller": "A", "scoring_cards": [3], "rows": {"A": row}}]
    result = GAME.check_document({"players": ["A", "B"], "rounds": rounds})
    [v] = result["violations"]
    assert (v["rule"], v["round"], v["position"]) == ("rox.link", 2, 3)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"caller": "Z"}, "caller"),
        ({"scoring_cards": [7]}, "scoring_cards"),
        ({"scoring_cards": [7, 11]}, "scoring_cards[1]"),
        ({"scoring_cards": [7, "3"]}, "scoring_cards[1]"),
        ({"rows": {"Z": []}}, "rows.Z"),
        ({"rows": {"A": [{"centre": "ice", "edge": {"fire": 16}}]}}, "rows.A[0].centre"),
        ({"rows": {"A": [{"centre": "fire", "edge": {"ice": 16}}]}}, "rows.A[0].edge.ice"),
        ({"rows": {"A": [{"centre": "fire", "edge": {"fire": -1}}]}}, "rows.A[0].edge.fire"),
        ({"rows": {"A": [{"centre": "fire"}]}}, "rows.A[0].edge"),
        ({"players": ["A"]}, "players"),
        ({"rounds": []}, "rows"),
    ],
)
def test_bad_documents_name_the_field(change: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as err:
        GAME.check_document({**ISSUE_EXAMPLE, **change})
    assert err.value.field == field


def test_more_than_five_rounds_is_an_input_error() -> None:
    one = {"caller": "A", "scoring_cards": [3], "rows": {}}
    with pytest.raises(InputError) as err:
        GAME.check_document({"players": ["A", "B"], "rounds": [one] * 6})
    assert err.value.field == "rounds"


# --- the CLI ---------------------------------------------------------------------------


def _write(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "rox.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "rox", _write(tmp_path, ISSUE_EXAMPLE), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["awards"] == {"A": 7} and out["valid_lengths"]["A"] == 2


def test_cli_human_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = chain("fire", "water", "air", "magic")
    row[2] = card("earth", "magic")
    doc = {**ISSUE_EXAMPLE, "rows": {"A": row}}
    assert main(["check", "rox", _write(tmp_path, doc)]) == 0
    out = capsys.readouterr().out
    assert "rox.link" in out and "player A" in out and "position 3" in out
    assert "A: valid length 2 of 4 → ranked 1, takes 7" in out


@pytest.mark.parametrize(
    ("change", "needle"),
    [({"caller": "Zed"}, "caller: unknown player 'Zed'"),
     ({"rows": {"A": [{"centre": "lava", "edge": {}}]}}, "rows.A[0].centre: unknown element")],
)
def test_cli_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               change: dict[str, object], needle: str) -> None:
    code = main(["check", "rox", _write(tmp_path, {**ISSUE_EXAMPLE, **change})])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and needle in captured.err


# --- the model game --------------------------------------------------------------------


def test_model_deck() -> None:
    assert len(DECK) == 60
    assert Counter(c.centre for c in DECK) == dict.fromkeys(ELEMENTS, 12)
    assert Counter(c.most_frequent() for c in DECK) == {(e,): 12 for e in ELEMENTS}
    assert all(sum(c.edge) == 16 for c in DECK)
    assert len(rox.SCORING_CARD_VALUES) == 15
    assert all(1 <= v <= 10 for v in rox.SCORING_CARD_VALUES)


def _independent_length(row: tuple[int, ...]) -> int:
    """The valid length, written out again: the first card whose centre is not the
    previous card's most frequent edge element cuts the row."""
    for j in range(1, len(row)):
        prev = DECK[row[j - 1]]
        counts = dict(zip(ELEMENTS, prev.edge, strict=True))
        if DECK[row[j]].centre != max(counts, key=lambda e: counts[e]):
            return j
    return len(row)


def _pick(state: RoxState, legal: list[RoxPlay], rng: random.Random) -> RoxPlay:
    """A player at random; mostly a card that links, sometimes anything."""
    player = rng.choice(state.players)
    mine = [p for p in legal if p.player == player]
    row = state.rows[state.players.index(player)]
    if row and rng.random() < 0.75:
        want = DECK[row[-1]].most_frequent()[0]
        linking = [p for p in mine if p.card is not None and DECK[p.card].centre == want]
        if linking:
            return rng.choice(linking)
    if rng.random() < 0.1 and row:
        return RoxPlay(player, None)
    return rng.choice([p for p in mine if p.card is not None])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), n_players=st.integers(2, 4))
def test_random_full_games_keep_the_invariants(seed: int, n_players: int) -> None:
    rng = random.Random(seed)
    players = [f"P{i}" for i in range(n_players)]
    state = GAME.start(players, random.Random(seed))
    dealt = Counter(state.display) + Counter(state.scoring_pile)
    assert dealt == Counter(rox.SCORING_CARD_VALUES)
    steps = 0
    while not GAME.is_over(state):
        in_rows = [c for r in state.rows for c in r]
        assert len(set(in_rows)) == len(in_rows)
        assert sorted(in_rows + state.pool()) == list(range(len(DECK)))
        assert all(len(r) < rox.ROW_CARDS for r in state.rows)
        assert len(state.display) == n_players - 1
        assert GAME.to_act(state) == tuple(players)
        legal = GAME.legal_plays(state)
        for play in rng.sample(legal, min(len(legal), 40)):
            assert GAME.check_play(state, play) == ()
        bad = [RoxPlay("nobody", state.pool()[0]), RoxPlay(players[0], len(DECK))]
        bad += [RoxPlay(p, None) for p, r in zip(players, state.rows, strict=True) if not r]
        bad += [RoxPlay(players[-1], c) for c in in_rows[:3]]
        for play in bad:
            problems = GAME.check_play(state, play)
            assert problems and all(v.rule in RULES for v in problems)
            with pytest.raises(IllegalPlay):
                GAME.apply(state, play)
        state = GAME.apply(state, _pick(state, legal, rng))
        steps += 1
        assert steps < 10_000
    assert len(state.history) == rox.ROUNDS
    totals = dict.fromkeys(players, 0)
    used: list[int] = []
    for record in state.history:
        full = [p for p, r in zip(players, record.rows, strict=True) if len(r) == rox.ROW_CARDS]
        assert full == [record.caller]
        lengths = [_independent_length(r) for r in record.rows]
        assert list(record.valid_lengths) == lengths
        c = players.index(record.caller)
        order = sorted((i for i in range(n_players) if lengths[i] >= 2),
                       key=lambda i: (-lengths[i], (i - c) % n_players))
        cards = sorted(record.scoring_cards, reverse=True)
        expected = [0] * n_players
        for i, value in zip(order, cards, strict=False):
            expected[i] = value
        assert list(record.scores) == expected
        for p, s in zip(players, expected, strict=True):
            totals[p] += s
        used += record.scoring_cards
    assert not Counter(used) - Counter(rox.SCORING_CARD_VALUES)
    assert GAME.scores(state) == totals
    best = max(totals.values())
    assert GAME.winners(state) == [p for p in players if totals[p] == best]
    assert GAME.legal_plays(state) == []
    assert GAME.check_play(state, RoxPlay(players[0], 0))[0].rule == "rox.card"
