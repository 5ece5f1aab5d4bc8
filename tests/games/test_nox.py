"""Nox (RULES.md §1): the rulebook's examples, position and play checks, the JSON
contract, the CLI, and random full games that keep the invariants."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.cli import main
from companion.games import nox
from companion.games.base import IllegalPlay, InputError
from companion.games.nox import GAME, NoxPlay, NoxState
from companion.rules import RULES

PLAYERS = ["Marie", "Anna", "Claire"]
SCORING_EXAMPLE = {
    "game": "nox", "players": PLAYERS,
    "kitties": {"Marie": [[5, 14], [4], [6], [15]], "Anna": [[2], [3], [7]],
                "Claire": [[1], [12], [6], [3], [2], [4]]},
}
BEFORE_MERGE = {"Marie": [[5], [14], [4], [6], [15]], "Anna": [[2], [3], [7]],
                "Claire": [[1], [12], [6], [3], [2]]}


def rules_of(result: dict[str, object]) -> list[str]:
    return [v["rule"] for v in result["violations"]]  # type: ignore[attr-defined]


# --- the rulebook's examples -----------------------------------------------------------


def test_scoring_example_marie_39_anna_0_claire_28() -> None:
    result = GAME.check_document(SCORING_EXAMPLE)
    assert result["scores"] == {"Marie": 39, "Anna": 0, "Claire": 28}
    assert result["round_over"] is True
    assert result["valid"] is True and result["violations"] == []
    assert any("Anna" in line and "no blue" in line for line in result["summary"])


def test_thick_skinned_only_marie_records() -> None:
    raw = {"Marie": 39, "Anna": 0, "Claire": 28}
    assert nox.recorded_scores(raw, "standard") == raw
    assert nox.recorded_scores(raw, "thick_skinned") == {"Marie": 39, "Anna": 0, "Claire": 0}


def test_thick_skinned_tied_top_scorers_all_record(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = {"Marie": 30, "Anna": 30, "Claire": 12}
    assert nox.recorded_scores(raw, "thick_skinned") == {"Marie": 30, "Anna": 30, "Claire": 0}
    monkeypatch.setattr(nox, "THICK_SKINNED_TIED_TOP_SCORERS_RECORD", False)
    assert nox.recorded_scores(raw, "thick_skinned") == {"Marie": 0, "Anna": 0, "Claire": 0}


def test_merge_of_the_two_green_14s() -> None:
    """Anna lays the green 14 on Marie's green 5: two stacks show 14 and merge, and
    Marie's kitty shrinks to four open cards."""
    marie = ((5,), (14,), (4,), (6,), (15,))
    after = nox.place(marie, 14, 0)
    assert len(after) == 4
    assert nox.tops(after) == (14, 4, 6, 15)
    assert sorted(c for s in after for c in s) == [4, 5, 6, 14, 14, 15]
    # she could also have laid the green 7 on the green 5 or the green 14
    assert nox.placement_violations(marie, 7, 0, "Marie") == []
    assert nox.placement_violations(marie, 7, 1, "Marie") == []
    # but not the blue 9 on the green 5
    [v] = nox.placement_violations(marie, 9, 0, "Marie")
    assert v.rule == "nox.cover_colour" and v.locator("stack") == 1


def test_merge_through_the_engine() -> None:
    state = _state_with({"Marie": ((5,), (14,), (4,), (6,), (15,))}, turn="Anna",
                        hands={"Anna": (14, 7, 9)})
    play = NoxPlay("Anna", 14, "Marie", 0)
    assert GAME.check_play(state, play) == ()
    after = GAME.apply(state, play)
    assert nox.tops(after.kitty_of("Marie")) == (14, 4, 6, 15)
    assert after.players[after.turn] == "Claire"
    assert sorted(after.hands[1]) == sorted((7, 9, state.pile[0]))


def test_merge_play_document() -> None:
    doc = {"game": "nox", "players": PLAYERS, "kitties": BEFORE_MERGE,
           "play": {"player": "Anna", "card": 14, "kitty": "Marie", "stack": 1}}
    result = GAME.check_document(doc)
    assert result["play_legal"] is True and result["valid"] is True
    assert result["after"]["merged"] is True
    assert result["after"]["kitties"]["Marie"][0][-1] == 14
    assert len(result["after"]["kitties"]["Marie"]) == 4
    assert result["after"]["scores"]["Marie"] == 39


def test_a_new_stack_equal_to_a_top_merges_at_once() -> None:
    kitty = ((2,), (3,))
    assert nox.place(kitty, 3, None) == ((2,), (3, 3))


def test_sixth_stack_ends_the_round_and_scores() -> None:
    claire = ((1,), (12,), (6,), (3,), (2,))
    state = _state_with({"Claire": claire, "Marie": ((5, 14), (4,), (6,), (15,)),
                         "Anna": ((2,), (3,), (7,))}, turn="Marie", hands={"Marie": (4, 8, 8)})
    after = GAME.apply(state, NoxPlay("Marie", 4, "Claire", None))
    assert after.round_no == 1 and len(after.history) == 1
    assert after.history[0].scores == (39, 0, 28)
    assert GAME.scores(after) == {"Marie": 39, "Anna": 0, "Claire": 28}
    assert after.starter == 1 and after.players[after.turn] == "Anna"
    assert all(k == () for k in after.kitties)
    assert all(len(h) == nox.HAND_SIZE for h in after.hands)


def test_round_ends_when_every_card_is_out() -> None:
    state = _state_with({}, turn="Marie", hands={"Marie": (4,), "Anna": (), "Claire": ()},
                        pile=())
    after = GAME.apply(state, NoxPlay("Marie", 4, "Anna", None))
    assert len(after.history) == 1 and after.round_no == 1


def test_players_without_cards_are_skipped_once_the_pile_is_empty() -> None:
    state = _state_with({}, turn="Marie", hands={"Marie": (4, 5), "Anna": (), "Claire": (6,)},
                        pile=())
    after = GAME.apply(state, NoxPlay("Marie", 4, "Marie", None))
    assert after.players[after.turn] == "Claire"


# --- position checks -------------------------------------------------------------------


def test_merge_violation_names_player_and_stacks() -> None:
    kitties = {"Marie": [[5, 14], [14], [4], [6], [15]], "Anna": [[2]], "Claire": [[1]]}
    result = GAME.check_document({"players": PLAYERS, "kitties": kitties})
    [v] = result["violations"]
    assert v["rule"] == "nox.merge" and v["player"] == "Marie" and v["stacks"] == [1, 2]
    assert v["explanation"] == RULES["nox.merge"].text


def test_max_stacks_counts_merges_first() -> None:
    seven = [[1], [12], [6], [3], [2], [4], [10]]
    result = GAME.check_document({"players": PLAYERS, "kitties": {"Claire": seven}})
    assert rules_of(result) == ["nox.max_stacks"]
    # seven stacks, two showing 4: the merge is the fault; merged there are six
    seven_with_pair = [[1], [12], [6], [3], [2], [4], [9, 4]]
    result = GAME.check_document({"players": PLAYERS, "kitties": {"Claire": seven_with_pair}})
    assert rules_of(result) == ["nox.merge"] and result["round_over"] is True


def test_cover_colour_in_a_stack() -> None:
    result = GAME.check_document({"players": PLAYERS, "kitties": {"Anna": [[5, 7, 4]]}})
    [v] = result["violations"]
    assert v["rule"] == "nox.cover_colour"
    assert (v["player"], v["stack"], v["card"], v["position"]) == ("Anna", 1, 4, 3)


def test_seventh_copy_is_a_card_count_violation() -> None:
    kitties = {"Marie": [[6, 3], [6, 8]], "Anna": [[6, 10], [6, 13]],
               "Claire": [[6, 3], [6, 8], [6, 13]]}
    result = GAME.check_document({"players": PLAYERS, "kitties": kitties})
    [v] = result["violations"]
    assert (v["rule"], v["card"], v["count"]) == ("nox.card_count", 6, 7)


@pytest.mark.parametrize("bad", [0, 16, -3, "x", 2.5, True, None])
def test_a_card_that_cannot_exist_is_an_input_error(bad: object) -> None:
    doc = {"players": PLAYERS, "kitties": {"Marie": [[5], [4, bad]]}}
    with pytest.raises(InputError) as err:
        GAME.check_document(doc)
    assert err.value.field == "kitties.Marie[1][1]"


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"players": PLAYERS, "kitties": {"Zoe": [[1]]}}, "kitties.Zoe"),
        ({"players": PLAYERS, "kitties": {"Anna": [[]]}}, "kitties.Anna[0]"),
        ({"players": PLAYERS, "kitties": {"Anna": 3}}, "kitties.Anna"),
        ({"players": PLAYERS}, "kitties"),
        ({"players": PLAYERS, "kitties": {}, "rounds": []}, "kitties"),
        ({"players": PLAYERS, "rounds": []}, "rounds"),
        ({"players": PLAYERS, "rounds": [{"kitties": {"Anna": [[99]]}}]},
         "rounds[0].kitties.Anna[0][0]"),
        ({"players": PLAYERS, "variant": "thin", "kitties": {}}, "variant"),
        ({"players": ["Solo"], "kitties": {}}, "players"),
        ({"players": PLAYERS, "kitties": {}, "play": {"player": "Zoe", "card": 3,
                                                      "kitty": "Anna"}}, "play.player"),
        ({"players": PLAYERS, "kitties": {}, "play": {"player": "Anna", "card": 3,
                                                      "kitty": "Anna", "stack": 2}},
         "play.stack"),
    ],
)
def test_bad_documents_name_the_field(doc: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as err:
        GAME.check_document(doc)
    assert err.value.field == field


def test_play_on_a_finished_round_is_refused() -> None:
    doc = dict(SCORING_EXAMPLE, play={"player": "Anna", "card": 11, "kitty": "Anna"})
    result = GAME.check_document(doc)
    assert result["play_legal"] is False and "nox.round_end" in rules_of(result)


def test_play_of_a_seventh_copy_is_refused() -> None:
    kitties = {"Marie": [[6, 3], [6, 8]], "Anna": [[6, 10], [6, 13]], "Claire": [[6, 3], [6]]}
    doc = {"players": PLAYERS, "kitties": kitties,
           "play": {"player": "Anna", "card": 6, "kitty": "Anna"}}
    result = GAME.check_document(doc)
    assert result["play_legal"] is False and rules_of(result) == ["nox.card_count"]


# --- whole games in the contract -------------------------------------------------------


def _round(marie: int, anna: int, claire: int) -> dict[str, object]:
    """A finished round whose kitties score exactly these points (0: two colours)."""
    def kitty(points: int) -> list[list[int]]:
        if points == 0:
            return [[2], [3]]
        # 1 (blue) + 2 (green) + 3 (orange) + the rest as a blue or green top
        rest = points - 6
        assert rest in nox.COLOURS and rest not in (1, 2, 3)
        return [[1], [2], [3], [rest]]
    return {"kitties": {"Marie": kitty(marie), "Anna": kitty(anna), "Claire": kitty(claire)}}


def test_standard_game_totals_and_end() -> None:
    rounds = [_round(21, 0, 20)] * 7 + [_round(11, 10, 20)]
    result = GAME.check_document({"players": PLAYERS, "rounds": rounds})
    assert result["totals"] == {"Marie": 158, "Anna": 10, "Claire": 160}
    assert result["game_over"] is True and result["winners"] == ["Claire"]
    assert result["scores"] == {"Marie": 11, "Anna": 10, "Claire": 20}
    assert result["valid"] is True


def test_game_not_over_below_target_and_ties_share_the_win() -> None:
    result = GAME.check_document({"players": PLAYERS, "rounds": [_round(21, 21, 0)]})
    assert result["game_over"] is False and result["winners"] == []
    assert result["leaders"] == ["Marie", "Anna"]
    rounds = [_round(21, 21, 0)] * 8
    result = GAME.check_document({"players": PLAYERS, "rounds": rounds})
    assert result["game_over"] is True and result["winners"] == ["Marie", "Anna"]
    assert len(result["rounds"]) == 8


def test_thick_skinned_game_ends_at_100_and_flags_later_rounds() -> None:
    rounds = [_round(21, 20, 0)] * 5 + [_round(21, 20, 0)]
    result = GAME.check_document({"players": PLAYERS, "variant": "thick_skinned",
                                  "rounds": rounds})
    assert result["totals"] == {"Marie": 105, "Anna": 0, "Claire": 0}
    assert result["game_over"] is True and result["winners"] == ["Marie"]
    assert rules_of(result) == ["nox.game_end"]
    assert result["violations"][0]["round"] == 6
    assert result["rounds"][5]["counted"] is False


def test_round_violations_carry_the_round() -> None:
    bad = {"kitties": {"Anna": [[14], [14]]}}
    result = GAME.check_document({"players": PLAYERS, "rounds": [_round(21, 0, 0), bad]})
    [v] = result["violations"]
    assert v["rule"] == "nox.merge" and v["round"] == 2 and v["player"] == "Anna"


# --- the CLI ---------------------------------------------------------------------------


def _write(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "position.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_cli_json_on_the_rulebook_example(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "nox", _write(tmp_path, SCORING_EXAMPLE), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["scores"] == {"Marie": 39, "Anna": 0, "Claire": 28} and out["round_over"]


def test_cli_human_output_shows_rule_and_where(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    doc = {"players": PLAYERS, "kitties": {"Marie": [[5, 14], [14]]}}
    assert main(["check", "nox", _write(tmp_path, doc)]) == 0
    out = capsys.readouterr().out
    assert "nox.merge" in out and "player Marie" in out and "stacks [1, 2]" in out
    assert RULES["nox.merge"].text in out
    assert "scores: Marie 0" in out


@pytest.mark.parametrize(
    ("kitties", "needle"),
    [({"Zoe": [[1]]}, "kitties.Zoe: unknown player 'Zoe'"),
     ({"Anna": [[16]]}, "kitties.Anna[0][0]: there is no Nox card 16")],
)
def test_cli_bad_input_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kitties: object, needle: str
) -> None:
    code = main(["check", "nox", _write(tmp_path, {"players": PLAYERS, "kitties": kitties}),
                 "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert needle in captured.err and captured.err.count("\n") == 1


# --- random full games -----------------------------------------------------------------


def _state_with(kitties: dict[str, tuple[tuple[int, ...], ...]], *, turn: str,
                hands: dict[str, tuple[int, ...]], pile: tuple[int, ...] | None = None
                ) -> NoxState:
    """A hand-made mid-round position for the three rulebook players."""
    base = GAME.start(PLAYERS, random.Random(0))
    full_hands = tuple(hands.get(p, base.hands[i]) for i, p in enumerate(PLAYERS))
    return NoxState(
        players=tuple(PLAYERS), variant="standard", seed=base.seed, round_no=0, starter=0,
        turn=PLAYERS.index(turn), hands=full_hands,
        pile=base.pile if pile is None else pile,
        kitties=tuple(kitties.get(p, ()) for p in PLAYERS), totals=(0, 0, 0))


def _independent_score(kitty: tuple[tuple[int, ...], ...]) -> int:
    """The scoring rule written out again from the table in RULES.md."""
    blue, green, orange = {1, 4, 9, 11, 15}, {2, 5, 7, 12, 14}, {3, 6, 8, 10, 13}
    shown = [s[-1] for s in kitty]
    if all(any(t in colour for t in shown) for colour in (blue, green, orange)):
        return sum(shown)
    return 0


def _bad_plays(state: NoxState, rng: random.Random) -> list[NoxPlay]:
    """Plays that break a rule: the wrong player, a card not held, a wrong colour."""
    actor = state.players[state.turn]
    other = state.players[(state.turn + 1) % len(state.players)]
    hand = state.hands[state.turn]
    bad = [NoxPlay(other, hand[0], actor, None)]
    missing = [n for n in nox.NUMBERS if n not in hand]
    bad.append(NoxPlay(actor, rng.choice(missing), actor, None))
    for owner, kitty in zip(state.players, state.kitties, strict=True):
        for s, stack in enumerate(kitty):
            for card in hand:
                if nox.colour(card) != nox.colour(stack[-1]):
                    bad.append(NoxPlay(actor, card, owner, s))
    bad.append(NoxPlay(actor, hand[0], actor, len(state.kitty_of(actor)) + 1))
    bad.append(NoxPlay(actor, hand[0], "nobody", None))
    return bad


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), n_players=st.integers(2, 6),
       variant=st.sampled_from(sorted(nox.TARGETS)))
def test_random_full_games_keep_the_invariants(seed: int, n_players: int, variant: str) -> None:
    rng = random.Random(seed)
    players = [f"P{i}" for i in range(n_players)]
    state = GAME.start(players, random.Random(seed), variant=variant)
    deck = Counter(nox.full_deck())
    plays = 0
    while not GAME.is_over(state):
        # cards are conserved and the table is always a legal position
        on_table = [c for k in state.kitties for s in k for c in s]
        in_hands = [c for h in state.hands for c in h]
        assert Counter(on_table) + Counter(in_hands) + Counter(state.pile) == deck
        assert nox.position_violations(dict(zip(players, state.kitties, strict=True))) == []
        assert GAME.to_act(state) == (players[state.turn],) and state.hands[state.turn]
        legal = GAME.legal_plays(state)
        assert legal
        for play in legal:
            assert GAME.check_play(state, play) == ()
        for play in _bad_plays(state, rng):
            problems = GAME.check_play(state, play)
            assert problems and all(v.rule in RULES for v in problems)
            with pytest.raises(IllegalPlay):
                GAME.apply(state, play)
        state = GAME.apply(state, rng.choice(legal))
        plays += 1
        assert plays < 20_000
    totals = dict.fromkeys(players, 0)
    target = nox.TARGETS[variant]
    for i, record in enumerate(state.history):
        # a round ends with a six-stack kitty or with every card on the table
        cards_out = sum(len(s) for k in record.kitties for s in k)
        assert nox.is_round_over(record.kitties) or cards_out == sum(deck.values())
        raw = [_independent_score(k) for k in record.kitties]
        assert list(record.scores) == raw
        best = max(raw)
        expected = raw if variant == "standard" else [s if s == best else 0 for s in raw]
        assert list(record.recorded) == expected
        for p, s in zip(players, expected, strict=True):
            totals[p] += s
        assert (max(totals.values()) >= target) == (i == len(state.history) - 1)
    assert GAME.scores(state) == totals
    assert GAME.legal_plays(state) == [] and GAME.to_act(state) == ()
    best = max(totals.values())
    assert GAME.winners(state) == [p for p in players if totals[p] == best]
    assert GAME.check_play(state, NoxPlay(players[0], 1, players[0]))[0].rule == "nox.game_end"


def test_start_deals_and_the_youngest_starts() -> None:
    state = GAME.start(PLAYERS, random.Random(3), first=2)
    assert GAME.to_act(state) == ("Claire",)
    assert [len(h) for h in state.hands] == [3, 3, 3] and len(state.pile) == 90 - 9
    again = GAME.start(PLAYERS, random.Random(3), first=2)
    assert again == state  # the same seed deals the same cards
    with pytest.raises(InputError):
        GAME.start(PLAYERS, random.Random(3), variant="thin")
    with pytest.raises(InputError):
        GAME.start([f"P{i}" for i in range(7)], random.Random(3))
