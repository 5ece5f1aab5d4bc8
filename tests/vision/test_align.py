"""Fits of a piece's outline and a sheet's layout (companion.vision.align): worked once
per start within a read, and many line choices met at once, with the same results."""

from __future__ import annotations

import numpy as np

from companion.synth import render_scene
from companion.vision import align


def test_a_start_fitted_twice_in_a_read_is_worked_once_with_the_same_fit(monkeypatch) -> None:
    """Within ``fits_remembered`` the same image, start and template are fitted (and
    searched) once; what is handed out again is the same fit, and a copy: a caller that
    changes its quad does not change the next one's."""
    scene = render_scene("qwixx", seed=61003)
    sheet = next(p for p in scene.pieces if p.kind == "qwixx_sheet")
    start = np.asarray(sheet.quad, np.float32) + np.float32([[4, -3], [2, 2], [-3, 4], [1, -2]])
    plain = align.align_to_layout(scene.image, start, "qwixx_sheet")
    found = align.search_layout(scene.image, start, "qwixx_sheet")
    worked = {"fit": 0, "search": 0}
    fit_once, search_once = align._fit_once, align._search_once

    def counted_fit(*args):  # type: ignore[no-untyped-def]
        worked["fit"] += 1
        return fit_once(*args)

    def counted_search(*args):  # type: ignore[no-untyped-def]
        worked["search"] += 1
        return search_once(*args)

    monkeypatch.setattr(align, "_fit_once", counted_fit)
    monkeypatch.setattr(align, "_search_once", counted_search)
    with align.fits_remembered():
        first = align.align_to_layout(scene.image, start, "qwixx_sheet")
        first[0][:] = 0.0  # a caller changing what it got
        again = align.align_to_layout(scene.image, start, "qwixx_sheet")
        coarse = align.align_to_layout(scene.image, start, "qwixx_sheet", align.LONG_SIDE[:1])
        searched = [align.search_layout(scene.image, start, "qwixx_sheet") for _ in range(2)]
        fits, searches = worked["fit"], worked["search"]
    assert (fits, searches) == (2, 1)  # coarse and fine once; the coarse look reused
    assert np.array_equal(again[0], plain[0]) and again[1] == plain[1]
    assert all(np.array_equal(s[0], found[0]) and s[1] == found[1] for s in searched)
    assert coarse[1] != plain[1]  # the coarse look's own fit, not the full one's
    align.align_to_layout(scene.image, start, "qwixx_sheet")  # off again: worked anew
    assert worked["fit"] == fits + 2


def test_many_outlines_lines_meet_where_each_quads_lines_meet() -> None:
    """``_meeting_corners_each`` gives every quad's corners as ``meeting_corners`` gives
    them one quad at a time, to the bit, and marks the quads with parallel lines."""
    rng = np.random.default_rng(5)
    points = rng.normal(0.0, 200.0, (300, 4, 2))
    ways = rng.normal(0.0, 50.0, (300, 4, 2))
    ways[7, 2] = 3.0 * ways[7, 1]  # two lines of a quad parallel: they never meet
    corners, met = align._meeting_corners_each(points, ways)
    for n in range(len(points)):
        one = align.meeting_corners([(points[n, k], ways[n, k]) for k in range(4)])
        assert (one is not None) == met[n]
        if one is not None:
            assert one.dtype == corners.dtype and np.array_equal(one, corners[n])
    assert not met[7] and met.sum() == len(points) - 1


def test_a_cards_outline_fits_are_found_among_its_side_lines() -> None:
    """On a dev Rox scene (61000, normal) a card's located outline pushed a few pixels off
    is fitted back onto its edges: the best fit lies within 3 px of the true corners, and
    the fits asked for are distinct."""
    scene = render_scene("rox", seed=61000)
    card = next(p for p in scene.pieces if p.kind == "rox_card" and p.visible_fraction >= 0.99)
    truth = np.asarray(card.quad, np.float32)
    off = truth + np.float32([[3, 2], [-2, 3], [-3, -2], [2, -3]])
    fits = align.fit_card_outline(scene.image, off, aspect=align.piece_aspect("rox_card"),
                                  count=3)
    assert len(fits) == 3 and all(f.dtype == np.float32 for f in fits)
    assert np.abs(fits[0] - truth).max() < 3.0
    assert all(np.abs(a - b).max() >= 1.0 for i, a in enumerate(fits) for b in fits[:i])
