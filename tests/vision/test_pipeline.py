"""read_image's last step: pieces cut off by the photo's edge outlined whole."""

from __future__ import annotations

import numpy as np

from companion.synth import render_scene
from companion.vision.detections import Detections, quad_iou
from companion.vision.pipeline import read_image, whole_beyond_the_photo


def _rect(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)


def test_a_tile_cut_by_the_photos_edge_is_outlined_at_a_tiles_size() -> None:
    """Three whole tiles 40×60 give the usual size; a tile whose lower half is out of
    the 400×300 photo (its outline's bottom side on the edge, 40 wide) grows down to
    60 tall; a wider piece at the edge (neither side a tile's), a tile lying sideways
    cut on its long side (grows to 40), whole pieces and a sheet are left alone."""
    whole = [_rect(10, 10, 50, 70), _rect(100, 10, 140, 70), _rect(200, 10, 240, 70)]
    cut = _rect(10, 270, 50, 299)  # 40 wide at the bottom edge, 29 of 60 seen
    odd = _rect(100, 270, 180, 300)  # 80 wide: two tiles, no tile's side on the edge
    sideways = _rect(385, 100, 400, 160)  # 60 long on the right edge, 15 of 40 seen
    sheet = _rect(200, 200, 400, 300)
    found = Detections(np.stack(whole + [cut, odd, sideways, sheet]),
                       ("nummix_tile",) * 6 + ("qwixx_sheet",))
    out = whole_beyond_the_photo(found, (300, 400))
    assert np.allclose(out.quads[:3], found.quads[:3])
    assert np.allclose(out.quads[3], _rect(10, 270, 50, 330))
    assert np.allclose(out.quads[4], odd) and np.allclose(out.quads[6], sheet)
    assert np.allclose(out.quads[5], _rect(385, 100, 425, 160))


def test_tiles_half_out_of_the_photo_are_found() -> None:
    """Dev scene 61242 (normal): five rack tiles at the photo's lower edge, half of each
    out of the photo, were outlined on their visible halves and matched none of them
    (IoU 0.39-0.46)."""
    scene = render_scene("nummix", seed=61242, difficulty="normal")
    found = read_image(scene.image, game="nummix").detections
    height = scene.image.shape[0]
    cut = [p for p in scene.pieces if not p.covered and p.visible_fraction >= 0.5
           and np.asarray(p.quad)[:, 1].max() > height]
    hit = sum(max(quad_iou(p.quad, q) for q in found.quads) >= 0.5 for p in cut)
    assert len(cut) >= 5 and hit == len(cut), (len(cut), hit)
