"""The piece renderer: every kind draws, with its own aspect, in several looks, and the
information (a colour) is where the reader will look for it."""

from __future__ import annotations

import numpy as np
import pytest

from companion.synth import KINDS, PIECE_MM, random_look, render_piece

EXAMPLES = {"nox_card": "9", "qwixx_card": "g7", "rox_card": "fire", "rox_scoring": "5",
            "nummix_tile": "r7", "catbox_card": "5", "token": "purple", "qwixx_sheet": "Anna",
            "catbox_board": ""}


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_renders_upright_with_its_aspect(kind: str) -> None:
    rng = np.random.default_rng(1)
    img = render_piece(kind, EXAMPLES[kind], rng=rng, height_px=120)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    w_mm, h_mm = PIECE_MM[kind]
    assert img.shape[0] == 120
    assert abs(img.shape[1] - 120 * w_mm / h_mm) <= 1
    assert img.std() > 10  # something is drawn, not a blank face


def test_labels_in_the_contract_notation_render() -> None:
    rng = np.random.default_rng(2)
    for label in ("g7", "back7", "J7", "r12", "y2", "b11"):
        render_piece("qwixx_card", label, rng=rng)
    for label in ("r7", "k17", "b1", "o13", "Jrk", "Jbo"):
        render_piece("nummix_tile", label, rng=rng)
    render_piece("rox_card", "magic", rng=rng,
                 edge={"fire": 6, "water": 4, "earth": 3, "air": 2, "magic": 1})


def test_bad_pieces_are_refused() -> None:
    rng = np.random.default_rng(3)
    with pytest.raises(ValueError, match="unknown piece kind"):
        render_piece("chess_pawn", "p", rng=rng)
    with pytest.raises(ValueError, match="16"):
        render_piece("rox_card", "fire", rng=rng, edge={"fire": 3})


def test_looks_vary_fonts_and_backgrounds() -> None:
    rng = np.random.default_rng(4)
    looks = [random_look("nox_card", rng) for _ in range(40)]
    assert len({lk.font for lk in looks}) >= 2
    assert {lk.dark for lk in looks} == {True, False}
    faces = {render_piece("nox_card", "7", rng=rng, look=lk, height_px=80).tobytes()
             for lk in looks[:6]}
    assert len(faces) == 6


def _ink_hue(img: np.ndarray) -> np.ndarray:
    """Mean BGR of the most saturated pixels (the printed number)."""
    f = img.astype(np.float32)
    sat = f.max(axis=2) - f.min(axis=2)
    return f[sat >= np.percentile(sat, 95)].mean(axis=0)


@pytest.mark.parametrize(("number", "channel"), [("4", 0), ("5", 1), ("13", 2)])
def test_nox_numbers_wear_their_colour(number: str, channel: int) -> None:
    # blue 4 (B strongest), green 5 (G), orange 13 (R)
    rng = np.random.default_rng(5)
    bgr = _ink_hue(render_piece("nox_card", number, rng=rng, height_px=160))
    assert int(np.argmax(bgr)) == channel


def test_nummix_tile_is_cream_with_a_red_number() -> None:
    img = render_piece("nummix_tile", "r7", rng=np.random.default_rng(6), height_px=160)
    b, g, r = np.median(img.reshape(-1, 3), axis=0)
    assert r > 200 and g > 195 and b > 170  # cream
    ink = _ink_hue(img)
    assert ink[2] > ink[0] + 60 and ink[2] > ink[1] + 60  # red number


def test_contact_sheet_caption_is_written_once_on_a_solid_strip() -> None:
    from companion.synth.contact import caption_strip

    strip = caption_strip("nox seed 0 easy - legal", 320)
    assert strip.shape == (26, 320, 3)
    grey = strip.max(axis=2)
    assert (grey == 32).mean() > 0.8  # solid background
    assert grey.max() == 255  # white text, no dark outline drawn over it
    assert (grey < 32).sum() == 0


def test_sheet_crosses_come_in_styles_and_pens_with_fouls() -> None:
    from companion.synth.pieces import render_piece_rgba

    rng = np.random.default_rng(8)
    sheet = {"red": [2, 3, 5], "yellow": [4], "green": [12, 11, 2], "blue": [],
             "locks": ["green"], "fouls": 2}
    styles, pens = set(), set()
    for _ in range(12):
        marks: list[dict] = []
        face, _ = render_piece_rgba("qwixx_sheet", "Anna", rng=rng,
                                    look=random_look("qwixx_sheet", rng), height_px=200,
                                    sheet=sheet, marks=marks)
        assert sorted(m["box"] for m in marks) == sorted(
            ["red 2", "red 3", "red 5", "yellow 4", "green 12", "green 11", "green 2",
             "green lock", "foul 1", "foul 2"])
        styles |= {m["style"] for m in marks}
        pens |= {tuple(m["pen"]) for m in marks}
    assert styles == {"x", "stroke", "fill"}
    assert len(pens) >= 3
