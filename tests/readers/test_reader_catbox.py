"""Cat in the Box reader on rendered scenes: the board by token colour, the trick."""

from __future__ import annotations

import pytest

from companion.readers import read_state
from companion.readers.truth import (
    catbox_truth_board,
    check,
    compare,
    detections_from_scene,
    hidden,
    read_scene,
)
from companion.synth import render_scene


def scenes(difficulty: str) -> list:
    return [s for s in (render_scene("catbox", seed=k, difficulty=difficulty)
                        for k in range(12)) if not hidden(s)]


@pytest.mark.parametrize("difficulty", ["easy", "normal"])
def test_board_and_trick_read_exactly(difficulty: str) -> None:
    found = scenes(difficulty)
    assert len(found) >= 8
    for scene in found:
        read = read_scene(scene)
        result = compare(scene, read)
        assert result.state and result.verdict, (scene.seed, result.why)
        assert read.state["board"] == catbox_truth_board(scene)


def test_tricks_and_predictions_are_asked_for_then_scored() -> None:
    scene = next(s for s in scenes("easy") if len(s.state["players"]) >= 3)
    read = read_scene(scene)
    assert {u["what"] for u in read.unknown} == {"tricks", "predictions"}
    players = scene.state["players"]
    extra = {"tricks": dict.fromkeys(players, 0), "predictions": dict.fromkeys(players, 1)}
    full = read_state("catbox", detections_from_scene(scene), image_shape=scene.image.shape,
                      players=players, extra=extra)
    assert full.complete
    verdict = check("catbox", full.state)
    assert verdict is not None and set(verdict["largest_groups"]) == set(players)


def test_without_names_players_are_token_colours() -> None:
    scene = scenes("easy")[0]
    read = read_scene(scene, names=False)
    assert set(read.state["players"]) <= {"red", "blue", "yellow", "green", "purple"}
    assert len(read.state["players"]) == len(scene.state["players"])
    assert compare(scene, read).state
