"""Random full games of Cat in the Box played to the end, with invariants checked after
every play: cards conserved, one token per cell, scores equal the formula, every legal
play accepted, every rejected play citing a rule, and each round re-checked by the
``companion check`` round replay."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games.catbox import (
    COLOURS,
    GAME,
    SETUPS,
    Board,
    CatboxPlay,
    CatboxState,
    Declare,
    FaceDown,
    Predict,
    RoundRecord,
    declarable,
    round_document,
)
from companion.rules import RULES


def independent_largest_group(board: Board, seat: int) -> int:
    """Union-find over the board, written apart from the module's search."""
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def find(a: tuple[int, int]) -> tuple[int, int]:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    cells = [(r, c) for r, row in enumerate(board) for c, v in enumerate(row) if v == seat]
    for a in cells:
        parent[a] = a
    for r, c in cells:
        for other in ((r + 1, c), (r, c + 1)):
            if other in parent:
                parent[find(other)] = find((r, c))
    sizes = Counter(find(a) for a in cells)
    return max(sizes.values(), default=0)


def check_invariants(state: CatboxState) -> None:
    setup = state.setup
    # cards conserved: hands + face-down + played + undealt = the deck
    cards = Counter(c for h in state.hands for c in h)
    cards.update(f for f in state.facedown if f is not None)
    cards.update(c for _, c, _ in state.plays)
    cards.update(state.leftover)
    assert cards == Counter({n: 5 for n in range(1, setup.numbers + 1)})
    # one token per cell: every card played put its own token on its own cell
    tokens = [(r, c) for r, row in enumerate(state.board) for c, v in enumerate(row) if v >= 0]
    assert len(tokens) == len(state.plays)
    assert len({(card, colour) for _, card, colour in state.plays}) == len(state.plays)
    for seat, card, colour in state.plays:
        assert state.board[COLOURS.index(colour)][card - 1] == seat
    assert sum(state.tricks) == len(state.trick_winners) <= setup.tricks
    if state.phase == "play":
        seat = (state.leader + len(state.trick)) % len(state.players)
        assert declarable(state.board, state.barred[seat], state.hands[seat])  # no paradox


def check_plays(state: CatboxState, rng: random.Random) -> list[CatboxPlay]:
    legal = GAME.legal_plays(state)
    assert legal
    for play in legal:
        assert GAME.check_play(state, play) == (), play
    names = list(state.players) + ["Nobody"]
    candidates: list[CatboxPlay] = []
    for _ in range(12):
        who = rng.choice(names)
        card = rng.randint(0, 10)
        kind = rng.randrange(3)
        if kind == 0:
            candidates.append(Declare(who, card, rng.choice([*COLOURS, "purple"])))
        elif kind == 1:
            candidates.append(Predict(who, rng.randint(0, 5)))
        else:
            candidates.append(FaceDown(who, card))
    for play in candidates:
        faults = GAME.check_play(state, play)
        if play in legal:
            assert faults == ()
        else:
            assert faults, play
            for v in faults:
                assert v.rule.startswith("catbox.") and v.rule in RULES and v.message
    return legal


def careful_choice(state: CatboxState, legal: list[CatboxPlay], rng: random.Random
                   ) -> CatboxPlay:
    """A play that keeps everyone able to declare, so rounds often reach the end."""
    if not isinstance(legal[0], Declare):
        return rng.choice(legal)

    def room(play: CatboxPlay) -> float:
        after = GAME.apply(state, play)
        if after.round != state.round or GAME.is_over(after):
            return -1.0
        return min(len(declarable(after.board, after.barred[i], after.hands[i]))
                   for i in range(len(after.players))) + rng.random()

    return max(legal, key=room)


def check_round(players: tuple[str, ...], record: RoundRecord) -> None:
    setup = SETUPS[len(players)]
    groups = tuple(independent_largest_group(record.board, s) for s in range(len(players)))
    assert record.groups == groups
    for seat, won in enumerate(record.tricks):
        if seat == record.paradox:
            expected = -won
        elif setup.predictions:
            expected = won + (groups[seat] if won == record.predictions[seat] else 0)
        else:
            expected = won + (groups[seat] if won <= 4 else 0)
        assert record.scores[seat] == expected
    if record.paradox is None:
        assert len(record.trick_winners) == setup.tricks
        assert len(record.plays) == setup.tricks * len(players)
    # the round replayed through the check contract gives the same verdict
    verdict = GAME.check_document(round_document(players, record))
    assert verdict["valid"], verdict["violations"]
    assert list(verdict["scores"].values()) == list(record.scores)
    assert list(verdict["tricks"].values()) == list(record.tricks)
    winners = [d["winner"] for d in verdict["tricks_detail"] if d["winner"] is not None]
    assert winners == [players[w] for w in record.trick_winners]
    if record.paradox is None:
        assert verdict["paradox"] is None and verdict["complete"]
    else:
        assert verdict["paradox"]["player"] == players[record.paradox]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 5), seed=st.integers(0, 2**32 - 1), careful=st.booleans())
def test_random_full_games(n: int, seed: int, careful: bool) -> None:
    rng = random.Random(seed)
    players = tuple(f"P{i}" for i in range(n))
    state = GAME.start(players, rng)
    rounds_seen = 0
    while not GAME.is_over(state):
        check_invariants(state)
        legal = check_plays(state, rng)
        play = careful_choice(state, legal, rng) if careful else rng.choice(legal)
        state = GAME.apply(state, play)
        if len(state.history) > rounds_seen:
            check_round(players, state.history[-1])
            rounds_seen = len(state.history)
    assert len(state.history) == n
    assert [r.start for r in state.history] == list(range(n))  # the start passes left
    totals = [sum(r.scores[s] for r in state.history) for s in range(n)]
    assert list(GAME.scores(state).values()) == totals
    best = max(totals)
    tied = [s for s in range(n) if totals[s] == best]
    final = max(state.history[-1].scores[s] for s in tied)
    assert GAME.winners(state) == [players[s] for s in tied
                                   if state.history[-1].scores[s] == final]
