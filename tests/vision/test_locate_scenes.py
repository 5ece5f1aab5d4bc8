"""The locator on fixed rendered scenes (companion.synth): recall at IoU >= 0.5 per
game, quad conventions, kinds, and invariance to turning the photo."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.synth import render_scene
from companion.vision.bench import match, score_scenes, visible_truth
from companion.vision.locate import KINDS, locate

# Recall and precision measured on seeds 900-902 (normal difficulty; Nox re-measured
# after its kitties were turned to face their players); the floors sit
# just under them (a little room for the renderer's own changes).
# The goal is 99.5 % (see docs/vision.md for what is still missing per game).
MEASURED = {"nummix": 0.89, "nox": 0.76, "qwixx": 0.77, "rox": 0.51, "catbox": 0.18}
PRECISION = {"nummix": 0.82, "nox": 0.72, "qwixx": 0.73, "rox": 0.32, "catbox": 0.57}


@pytest.mark.parametrize("game", sorted(MEASURED))
def test_recall_on_fixed_scenes(game: str) -> None:
    score = score_scenes(game, count=3, seed=900)
    assert score.truth > 10
    assert score.recall >= MEASURED[game] - 0.03, (score.found, score.truth)
    assert score.precision >= PRECISION[game] - 0.04, (score.found, score.reported)


@pytest.mark.parametrize("game", sorted(MEASURED))
def test_quads_are_clockwise_short_edge_first_with_known_kinds(game: str) -> None:
    scene = render_scene(game, seed=901)
    found = locate(scene.image, game=game)
    assert len(found) > 0
    assert set(found.kinds) <= set(KINDS)
    assert not any(found.oriented) and all(label is None for label in found.labels)
    for quad, kind in zip(found.quads, found.kinds, strict=True):
        x, y = quad[:, 0], quad[:, 1]
        assert 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) > 0  # clockwise
        edges = np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)
        if kind not in ("rox_card", "token"):  # square pieces have no short edge
            assert edges[0] + edges[2] <= edges[1] + edges[3] + 1e-3


def test_tiles_found_the_same_when_the_photo_is_turned() -> None:
    scene = render_scene("nummix", seed=902)
    truth = visible_truth(scene)
    upright = match(truth, locate(scene.image, game="nummix"))[0]
    turned_image = cv2.rotate(scene.image, cv2.ROTATE_90_CLOCKWISE)
    h = scene.image.shape[0]
    turned_truth = [np.stack([h - q[:, 1], q[:, 0]], axis=1) for q in truth]
    turned = match(turned_truth, locate(turned_image, game="nummix"))[0]
    assert upright >= 0.8 * len(truth)
    assert abs(turned - upright) <= 0.1 * len(truth)


def test_the_research_board_and_its_tokens() -> None:
    scene = render_scene("catbox", seed=50_001)
    found = locate(scene.image, game="catbox")
    boards = [p for p in scene.pieces if p.kind == "catbox_board"]
    tokens = [np.asarray(p.quad, np.float32) for p in scene.pieces if p.kind == "token"]
    found_boards = found.select([i for i in found if found.kinds[i] == "catbox_board"])
    found_tokens = found.select([i for i in found if found.kinds[i] == "token"])
    assert match([np.asarray(boards[0].quad, np.float32)], found_boards)[0] == 1
    assert match(tokens, found_tokens)[0] >= 0.8 * len(tokens)


def test_unknown_game_and_bad_image_are_input_errors() -> None:
    from companion.games.base import InputError

    with pytest.raises(InputError, match="game"):
        locate(np.zeros((10, 10, 3), np.uint8), game="chess")
    with pytest.raises(InputError, match="image"):
        locate(np.zeros((10, 10), np.uint8), game="nox")


@pytest.mark.parametrize("game", sorted(MEASURED))
def test_blank_and_tiny_images_hold_no_pieces(game: str) -> None:
    assert len(locate(np.zeros((480, 640, 3), np.uint8), game=game)) == 0
    assert len(locate(np.full((480, 640, 3), 255, np.uint8), game=game)) == 0
    tiny = np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    assert len(locate(tiny, game=game)) == 0


@pytest.mark.parametrize(("game", "seed"), [("nox", 50001), ("nummix", 50001)])
def test_markers_found_by_the_caller_are_erased_like_its_own(game: str, seed: int) -> None:
    # read_photo finds the markers once on the full photo and hands them down; the
    # pieces found must match those found when locate looks for the markers itself.
    from companion.calibration.markers import detect_markers

    scene = render_scene(game, seed=seed)
    markers = detect_markers(scene.image)
    assert len(markers) >= 3  # the scene shows (most of) its table markers
    own = locate(scene.image, game=game)
    given = locate(scene.image, game=game, markers=markers)
    assert len(own) > 5
    matched, unmatched = match(list(own.quads), given, threshold=0.9)
    assert matched >= len(own) - 1 and unmatched <= 1, (len(own), len(given), matched)
    # without erasing them, a marker's white margin can pass for a piece
    none = locate(scene.image, game=game, markers=[])
    assert len(none) >= len(given)
