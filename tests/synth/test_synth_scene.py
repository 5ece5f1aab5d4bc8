"""Scenes: the same seed gives the same scene, and the ground-truth quads lie on the
drawn pieces."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.synth import render_scene


def test_same_seed_same_scene_other_seed_other_scene() -> None:
    a = render_scene("rox", seed=11, width=320, height=240)
    b = render_scene("rox", seed=11, width=320, height=240)
    c = render_scene("rox", seed=12, width=320, height=240)
    assert np.array_equal(a.image, b.image)
    assert a.to_json() == b.to_json()
    assert not np.array_equal(a.image, c.image)


def test_scene_json_has_every_part() -> None:
    s = render_scene("nox", seed=3, width=320, height=240)
    doc = s.to_json()
    assert set(doc) >= {"state", "verdict", "pieces", "camera", "markers", "game"}
    assert doc["state"]["game"] == "nox"
    cards = [p for p in s.pieces if p.kind == "nox_card"]
    assert len(cards) == sum(len(st) for k in s.state["kitties"].values() for st in k)
    for p in cards:
        assert len(p.quad) == 4 and p.owner in s.state["players"]
        assert 0.0 <= p.visible_fraction <= 1.0
        stack = s.state["kitties"][p.owner][p.stack]
        assert p.label == str(stack[p.depth]) and p.top == (p.depth == len(stack) - 1)


def _shrunk_mask(quad: list[list[float]], shape: tuple[int, int], shrink: float) -> np.ndarray:
    q = np.array(quad, np.float64)
    c = q.mean(axis=0)
    q = c + (q - c) * shrink
    m = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(m, np.round(q).astype(np.int32), 1)
    return m.astype(bool)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tile_quads_cover_cream_tiles(seed: int) -> None:
    s = render_scene("nummix", seed=seed, difficulty="easy", width=640, height=360)
    hsv = cv2.cvtColor(s.image, cv2.COLOR_BGR2HSV)
    tiles = [p for p in s.pieces if p.kind == "nummix_tile" and not p.covered]
    assert tiles
    creamy = 0
    for p in tiles:
        m = _shrunk_mask(p.quad, s.image.shape[:2], 0.7)
        if m.sum() < 20:
            continue
        v = np.median(hsv[m][:, 2])
        sat = np.median(hsv[m][:, 1])
        if v > 150 and sat < 90:
            creamy += 1
    assert creamy >= 0.9 * len(tiles)


@pytest.mark.parametrize(("game", "kind"), [("nox", "nox_card"), ("rox", "rox_card"),
                                            ("catbox", "catbox_card")])
def test_quads_sit_on_their_pieces_not_beside_them(game: str, kind: str) -> None:
    """Pixels inside a visible piece's quad differ from the table next to it much less
    often than a quad moved off the piece would: compare inside vs. an outside ring."""
    hits = 0
    total = 0
    for seed in range(4):
        s = render_scene(game, seed=seed, difficulty="easy", width=640, height=360)
        img = s.image.astype(np.float32)
        for p in s.pieces:
            if p.kind != kind or p.visible_fraction < 0.95:
                continue
            inner = _shrunk_mask(p.quad, img.shape[:2], 0.8)
            outer = _shrunk_mask(p.quad, img.shape[:2], 1.6) & ~_shrunk_mask(p.quad, img.shape[:2],
                                                                              1.15)
            if inner.sum() < 30 or outer.sum() < 30:
                continue
            total += 1
            # the piece's inside is a face: its colour spread differs from the bare table's
            # and its mean differs from the ring around it
            diff = np.abs(img[inner].mean(axis=0) - img[outer].mean(axis=0)).max()
            hits += diff > 6.0 or abs(img[inner].std() - img[outer].std()) > 6.0
    assert total >= 4
    assert hits >= 0.8 * total


def test_quads_follow_the_camera_and_stay_in_frame_on_easy() -> None:
    s = render_scene("qwixx", seed=5, difficulty="easy", width=640, height=360)
    pts = np.array([p.quad for p in s.pieces]).reshape(-1, 2)
    assert pts[:, 0].min() > -5 and pts[:, 0].max() < 645
    assert pts[:, 1].min() > -5 and pts[:, 1].max() < 365
    for p in s.pieces:  # clockwise from top-left in image coordinates (y down): positive area
        q = np.array(p.quad)
        area = 0.5 * sum(q[i, 0] * q[(i + 1) % 4, 1] - q[(i + 1) % 4, 0] * q[i, 1]
                         for i in range(4))
        assert area > 0


def test_hand_marks_what_it_covers() -> None:
    found = False
    for seed in range(40):
        s = render_scene("nummix", seed=seed, difficulty="hard", width=320, height=180)
        if s.camera["hand"] and any(p.extra.get("under_hand") for p in s.pieces):
            found = True
            assert any(p.visible_fraction < 0.98 for p in s.pieces)
            break
    assert found


SIZED = ("nox_card", "qwixx_card", "rox_card", "rox_scoring", "nummix_tile", "catbox_card")


@pytest.mark.parametrize("game", ["nox", "qwixx", "rox", "nummix", "catbox"])
def test_pieces_are_big_enough_to_read_and_fill_the_frame(game: str) -> None:
    """At normal difficulty and 1280×720 every flat card/tile's shortest side is ≥ ~28 px
    (tiles ≥ ~40 px high), measured on the written quads, and pieces plus markers span
    60–90 % of the frame (lens distortion may move corners a little)."""
    for seed in range(3):
        s = render_scene(game, seed=seed, difficulty="normal", width=1280, height=720)
        quads = [np.array(p.quad) for p in s.pieces
                 if p.kind in SIZED and not p.extra.get("standing")]
        assert quads
        for q in quads:
            edges = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
            assert edges.min() >= 28 * 0.93, (seed, edges)
            if game == "nummix":
                assert (edges[1] + edges[3]) / 2 >= 40 * 0.93, (seed, edges)
        pts = np.vstack([np.array(p.quad) for p in s.pieces]
                        + [np.array(m["quad"]) for m in s.markers])
        fill = max(np.ptp(pts[:, 0]) / 1280, np.ptp(pts[:, 1]) / 720)
        assert 0.55 <= fill <= 0.97, (seed, fill)
        assert s.camera["piece_px"][0] >= 28 - 1e-6 and 0.6 <= s.camera["fill"] <= 0.9


def test_catbox_two_player_scenes_block_the_revealed_cards_cells() -> None:
    from companion.synth.states import catbox_blocked

    seen = 0
    for seed in range(30):
        s = render_scene("catbox", seed=seed, width=320, height=180)
        if len(s.state["players"]) != 2:
            continue
        seen += 1
        assert len(s.state["revealed"]) == 3
        blocked = {tuple(p.cell) for p in s.pieces  # type: ignore[arg-type]
                   if p.kind == "token" and p.extra.get("blocked") == "revealed"}
        assert blocked == set(catbox_blocked(s.state["revealed"]))
        assert all(colour != "red" for colour, _ in blocked)
        shown = sorted(int(p.label) for p in s.pieces if p.extra.get("revealed"))
        assert shown == sorted(s.state["revealed"])
    assert seen >= 2


def test_nummix_jokers_also_sit_at_crossings() -> None:
    from companion.synth.states import make_state

    at_crossing = 0
    for seed in range(60):
        grid = [r.split(" ") for r in make_state("nummix", np.random.default_rng(seed),
                                                 True).state["grid"]]

        def filled(r: int, c: int, grid: list[list[str]] = grid) -> bool:
            return 0 <= r < len(grid) and 0 <= c < len(grid[r]) and grid[r][c] != "."

        at_crossing += sum(
            1 for r, row in enumerate(grid) for c, t in enumerate(row) if t.startswith("J")
            and (filled(r, c - 1) or filled(r, c + 1)) and (filled(r - 1, c) or filled(r + 1, c)))
    assert at_crossing >= 5


def test_hand_tones_vary_and_its_edge_is_soft() -> None:
    from companion.synth.scene import _draw_hand

    means = []
    for seed in range(8):
        img = np.full((180, 320, 3), 128, np.uint8)
        mask = _draw_hand(img, np.random.default_rng(seed), 320, 180)
        assert 0 < mask.mean() < 0.6
        means.append(img[mask].mean())
        ring = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > mask
        inner = img[mask].mean(axis=0)
        # edge pixels blend between the hand and the table (no hard cut-out)
        assert np.abs(img[ring].astype(float) - 128).mean() > 1.0
        assert np.abs(img[ring].astype(float).mean(axis=0) - inner).max() > 1.0
    assert max(means) - min(means) > 40  # light and dark skin


def test_rox_cards_carry_their_sixteen_edge_symbols_in_order() -> None:
    """Each rendered Rox card's truth lists its edge symbols clockwise from the upright
    top-left corner (what the edge model is trained on), agreeing with its counts."""
    from collections import Counter

    scene = render_scene("rox", seed=31)
    cards = [p for p in scene.pieces if p.kind == "rox_card"]
    assert cards
    for card in cards:
        sequence = card.extra["edge_sequence"]
        assert len(sequence) == 16
        assert Counter(sequence) == Counter({e: n for e, n in card.edge.items() if n})
