"""Separate Nummix constructs are drawn apart: tiles that are not neighbours in the
stated grid never touch in the picture, or the photo would show another table."""

from __future__ import annotations

import numpy as np
import pytest

from companion.synth import render_scene


@pytest.mark.parametrize("seed", range(0, 50, 5))
def test_non_neighbour_tiles_do_not_touch(seed: int) -> None:
    scene = render_scene("nummix", seed=seed, difficulty="easy", width=640, height=360)
    tiles = [p for p in scene.pieces if p.kind == "nummix_tile" and p.owner != "rack"]
    assert len(tiles) >= 3
    for i, a in enumerate(tiles):
        qa = np.array(a.quad)
        width = float(np.linalg.norm(qa[1] - qa[0]))
        for b in tiles[i + 1:]:
            qb = np.array(b.quad)
            (ra, ca), (rb, cb) = a.cell, b.cell
            if abs(ra - rb) + abs(ca - cb) == 1 or (abs(ra - rb) == 1 and abs(ca - cb) == 1):
                continue  # neighbours (or diagonal neighbours) in the grid may touch
            gap = np.linalg.norm(qa.mean(axis=0) - qb.mean(axis=0))
            assert gap > 1.25 * width, (a.label, a.cell, b.label, b.cell)
