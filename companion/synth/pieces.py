"""Artwork for every piece of the five games, in several random looks.

A piece's face is drawn upright with Pillow at a requested height and returned as a BGR
``uint8`` image (plus, internally, an alpha mask for rounded corners and round tokens).
Faces are cached per (kind, label, look, size), so scenes reuse them. The real artwork
of most games is not known: each look varies font, light/dark background, line width,
glyph size and print offset, so a reader trained on them learns the information (a
number, a colour, an element), not one drawing.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from companion.synth import fonts

RGB = tuple[int, int, int]

# Physical sizes (width, height) in millimetres, upright.
PIECE_MM: dict[str, tuple[float, float]] = {
    "nox_card": (59.0, 91.0),
    "qwixx_card": (59.0, 91.0),
    "rox_card": (68.0, 68.0),
    "rox_scoring": (44.0, 68.0),
    "nummix_tile": (27.0, 37.0),
    "catbox_card": (59.0, 91.0),
    "token": (16.0, 16.0),
    "qwixx_sheet": (148.0, 105.0),
    "catbox_board": (300.0, 150.0),
}
KINDS: tuple[str, ...] = tuple(PIECE_MM)

NOX_COLOUR: dict[int, str] = {n: "blue" for n in (1, 4, 9, 11, 15)}
NOX_COLOUR.update({n: "green" for n in (2, 5, 7, 12, 14)})
NOX_COLOUR.update({n: "orange" for n in (3, 6, 8, 10, 13)})

INK: dict[str, RGB] = {
    "blue": (28, 84, 196), "green": (36, 146, 62), "orange": (242, 128, 20),
    "red": (212, 34, 40), "yellow": (244, 198, 18), "black": (28, 28, 32),
    "white": (246, 246, 240), "purple": (128, 52, 168), "grey": (120, 120, 120),
}
QWIXX_LETTER = {"r": "red", "y": "yellow", "g": "green", "b": "blue"}
NUMMIX_LETTER = {"r": "red", "k": "black", "b": "blue", "o": "orange"}
NUMMIX_INK: dict[str, RGB] = {
    "red": (206, 30, 38), "black": (24, 24, 28), "blue": (22, 72, 178), "orange": (236, 118, 18),
}
ELEMENTS: tuple[str, ...] = ("fire", "water", "earth", "air", "magic")
ELEMENT_INK: dict[str, RGB] = {
    "fire": (220, 40, 30), "water": (30, 96, 210), "earth": (40, 150, 50),
    "air": (246, 210, 30), "magic": (250, 250, 250),
}
TOKEN_LABELS: tuple[str, ...] = ("red", "blue", "yellow", "green", "purple", "observed")
QWIXX_ROWS: tuple[str, ...] = ("red", "yellow", "green", "blue")
CATBOX_ROWS: tuple[str, ...] = ("red", "blue", "yellow", "green")


@dataclass(frozen=True)
class Look:
    """One random artwork look: the same information drawn differently."""

    font: str
    dark: bool
    background: RGB
    line: float  # line-width scale
    glyph: float  # glyph-size scale
    offset: tuple[float, float]  # print offset as a fraction of the face size
    variant: int  # picks decoration and arrangement


def random_look(kind: str, rng: np.random.Generator) -> Look:
    """A random look for ``kind`` (fonts from installed packages, light or dark, ...)."""
    _check_kind(kind)
    paths = fonts.font_paths()
    if kind == "nummix_tile":  # real tiles carry bold sans-serif numbers
        paths = tuple(p for p in paths if _sans(p)) or paths
    font = paths[int(rng.integers(len(paths)))]
    dark = bool(rng.random() < 0.35) and kind in ("nox_card", "qwixx_card", "rox_card",
                                                  "catbox_card", "rox_scoring")
    if kind == "nummix_tile":  # ivory, brighter or dimmer, barely tinted (as in photos)
        b = float(rng.uniform(0.95, 1.0))
        background: RGB = _jitter((int(246 * b), int(242 * b), int(230 * b)), rng, 3)
    elif dark:
        background = _jitter(((34, 38, 52), (48, 30, 40), (30, 44, 38), (40, 40, 40))[
            int(rng.integers(4))], rng, 10)
    else:
        background = _jitter(((248, 246, 238), (236, 232, 220), (250, 250, 250),
                              (230, 236, 240))[int(rng.integers(4))], rng, 6)
    return Look(
        font=font, dark=dark, background=background,
        line=float(rng.uniform(0.6, 1.6)), glyph=float(rng.uniform(0.85, 1.12)),
        offset=(float(rng.uniform(-0.03, 0.03)), float(rng.uniform(-0.03, 0.03))),
        variant=int(rng.integers(8)),
    )


def _sans(path: str) -> bool:
    """A sans-serif, proportional face (for Nummix numbers)."""
    name = path.rsplit("/", 1)[-1]
    return path == fonts.DEFAULT or name == "cmss10.ttf" or ("Sans" in name
                                                             and "Mono" not in name)


LOOK_POOL = 24


@functools.lru_cache(maxsize=256)
def pooled_look(kind: str, index: int) -> Look:
    """Look number ``index`` of a fixed pool per kind: scenes draw from these so faces are
    rendered once and reused (random_look draws fresh ones for training crops)."""
    seed = zlib.crc32(f"{kind}|{index % LOOK_POOL}".encode())
    return random_look(kind, np.random.default_rng(seed))


def render_piece(kind: str, label: str, *, rng: np.random.Generator, look: Look | None = None,
                 height_px: int = 160, edge: Mapping[str, int] | None = None,
                 sheet: Mapping[str, Any] | None = None) -> np.ndarray:
    """The piece's upright face as a BGR ``uint8`` image with the piece's own aspect.

    ``edge`` (rox cards) counts the 16 edge symbols by element; ``sheet`` (qwixx sheets)
    is the sheet in the check contract's shape, whose crosses are drawn by hand.
    """
    look = look if look is not None else random_look(kind, rng)
    bgr, _ = render_piece_rgba(kind, label, rng=rng, look=look, height_px=height_px,
                               edge=edge, sheet=sheet)
    return bgr


def render_piece_rgba(kind: str, label: str, *, rng: np.random.Generator, look: Look,
                      height_px: int = 160, edge: Mapping[str, int] | None = None,
                      sheet: Mapping[str, Any] | None = None,
                      marks: list[dict[str, Any]] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Face (BGR) and alpha (uint8) of a piece; cached except for hand-drawn sheets (whose
    crosses are appended to ``marks`` when given)."""
    _check_kind(kind)
    edge_key = tuple(sorted(edge.items())) if edge else ()
    bgr, alpha = _cached_face(kind, label, edge_key, look, int(height_px))
    if kind == "qwixx_sheet" and sheet is not None:
        bgr = draw_sheet_marks(bgr, sheet, rng=rng, look=look, marks=marks)
    return bgr, alpha


def face_size(kind: str, height_px: int) -> tuple[int, int]:
    """(width, height) in pixels of a face ``height_px`` high."""
    w_mm, h_mm = PIECE_MM[kind]
    return max(4, round(height_px * w_mm / h_mm)), int(height_px)


def _check_kind(kind: str) -> None:
    if kind not in PIECE_MM:
        raise ValueError(f"unknown piece kind {kind!r} (kinds: {', '.join(KINDS)})")


def _jitter(c: RGB, rng: np.random.Generator, amount: int) -> RGB:
    j = rng.integers(-amount, amount + 1, size=3)
    return (int(np.clip(c[0] + j[0], 0, 255)), int(np.clip(c[1] + j[1], 0, 255)),
            int(np.clip(c[2] + j[2], 0, 255)))


@functools.lru_cache(maxsize=1536)
def _cached_face(kind: str, label: str, edge_key: tuple[tuple[str, int], ...], look: Look,
                 height_px: int) -> tuple[np.ndarray, np.ndarray]:
    w, h = face_size(kind, height_px)
    scale = 3 if height_px < 90 else 2  # draw big, shrink: smooth edges
    W, H = w * scale, h * scale
    if kind == "rox_card":
        return _rox_face(label, edge_key, look, W, H, scale)
    if kind == "nummix_tile":  # the blank tile (recess, logo) is shared by all labels
        img = _nummix_blank(look, W, H).copy()
    else:
        img = Image.new("RGB", (W, H), look.background)
    d = ImageDraw.Draw(img)
    painter = _PAINTERS[kind]
    painter(d, img, W, H, label, look, dict(edge_key))
    small = img.reduce(scale)
    rgb = np.asarray(small, dtype=np.uint8)
    bgr = np.ascontiguousarray(rgb[:, :, ::-1])
    alpha = _face_alpha(kind, W, H, scale)
    bgr.setflags(write=False)
    alpha.setflags(write=False)
    return bgr, alpha


@functools.lru_cache(maxsize=64)
def _face_alpha(kind: str, W: int, H: int, scale: int) -> np.ndarray:
    """The face's outline (rounded corners, round tokens) as uint8 alpha, drawn big and
    reduced; shared by every label and look of a kind and size."""
    mask = Image.new("L", (W, H), 0)
    md = ImageDraw.Draw(mask)
    radius = {"nummix_tile": 0.12, "token": 0.5, "qwixx_sheet": 0.0, "catbox_board": 0.03}.get(
        kind, 0.07) * min(W, H)
    if kind == "token":
        md.ellipse((1, 1, W - 2, H - 2), fill=255)
    else:
        md.rounded_rectangle((0, 0, W - 1, H - 1), radius=radius, fill=255)
    alpha = np.asarray(mask.reduce(scale), dtype=np.uint8).copy()
    alpha.setflags(write=False)
    return alpha


@functools.lru_cache(maxsize=256)
def _nummix_blank(look: Look, W: int, H: int) -> Image.Image:
    """A Nummix tile without its number: cream, the round recess, the embossed logo and
    the ring near the bottom that tells up from down."""
    img = Image.new("RGB", (W, H), look.background)
    d = ImageDraw.Draw(img)
    bg = look.background
    ox, oy = _offset(look, W, H)
    cx, cy = W / 2 + ox * 0.5, H * 0.40 + oy * 0.5
    # the recess is an upright oval with a lighter rim, as on the real tiles
    rx, ry = W * 0.36, H * 0.29
    d.ellipse((cx - rx - W * 0.02, cy - ry - W * 0.02, cx + rx + W * 0.02, cy + ry + W * 0.02),
              fill=_mix(bg, (255, 255, 255), 0.5))
    d.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=_mix(bg, (150, 140, 120), 0.09))
    # the embossed logo near the bottom, faint and warm, wide across the tile
    logo = _mix(bg, (200, 150, 95), 0.30)
    _text(d, (W / 2, H * 0.83), "Nummix" if look.variant % 3 else "NUMMIX", H * 0.1, logo,
          look)
    d.ellipse((W / 2 - W * 0.04, H * 0.9, W / 2 + W * 0.04, H * 0.9 + W * 0.08), outline=logo,
              width=max(1, int(W / 50)))
    return img


# --------------------------------------------------------------------------- helpers

def _text(d: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: float, fill: RGB,
          look: Look, *, stroke: int = 0, stroke_fill: RGB | None = None) -> None:
    font = fonts.load(look.font, int(size * look.glyph))
    d.text(xy, text, font=font, fill=fill, anchor="mm", stroke_width=stroke,
           stroke_fill=stroke_fill if stroke_fill is not None else fill)


def _text_rotated(img: Image.Image, xy: tuple[float, float], text: str, size: float, fill: RGB,
                  look: Look, angle: float) -> None:
    """Text drawn on a transparent patch, rotated and pasted (for 180° corner indices)."""
    s = int(size * 2.2)
    patch = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    _text(ImageDraw.Draw(patch), (s / 2, s / 2), text, size, fill, look)
    patch = patch.rotate(angle, resample=Image.Resampling.BICUBIC)
    img.paste(patch, (int(xy[0] - s / 2), int(xy[1] - s / 2)), patch)


def _ink_on(bg: RGB) -> RGB:
    return (20, 20, 24) if sum(bg) > 380 else (240, 240, 236)


def _lw(look: Look, base: float) -> int:
    return max(1, round(base * look.line))


def _offset(look: Look, W: int, H: int) -> tuple[float, float]:
    return look.offset[0] * W, look.offset[1] * H


def _number_text(n: str) -> str:
    """6 and 9 are underlined on real cards; we add a dot-free underline separately."""
    return n


def _underline(d: ImageDraw.ImageDraw, cx: float, cy: float, size: float, fill: RGB,
               text: str, look: Look) -> None:
    if text in ("6", "9"):
        y = cy + size * 0.42 * look.glyph
        d.line((cx - size * 0.22, y, cx + size * 0.22, y), fill=fill, width=max(2, int(size / 14)))


def _card_corners(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, text: str,
                  colour: RGB, look: Look) -> None:
    size = H * 0.11
    ox, oy = _offset(look, W, H)
    _text(d, (W * 0.15 + ox, H * 0.09 + oy), text, size, colour, look)
    _text_rotated(img, (W * 0.85 + ox, H * 0.91 + oy), text, size, colour, look, 180)


def _frame(d: ImageDraw.ImageDraw, W: int, H: int, colour: RGB, look: Look) -> None:
    m = W * 0.05
    d.rounded_rectangle((m, m, W - m, H - m), radius=W * 0.05, outline=colour,
                        width=_lw(look, W / 60))


# --------------------------------------------------------------------------- painters

def _paint_nox(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, label: str,
               look: Look, edge: dict[str, int]) -> None:
    n = int(label)
    colour = INK[NOX_COLOUR[n]]
    _frame(d, W, H, colour, look)
    # decoration: a few faint moons/stars in the card colour (the art is not known)
    faint = tuple(int(0.8 * b + 0.2 * c) for b, c in zip(look.background, colour, strict=True))
    for k in range(look.variant % 4 + 2):
        x = W * (0.2 + 0.6 * ((k * 37 + look.variant * 11) % 10) / 10)
        y = H * (0.22 + 0.56 * ((k * 53 + look.variant * 7) % 10) / 10)
        r = W * 0.06
        d.ellipse((x - r, y - r, x + r, y + r), outline=faint, width=_lw(look, W / 80))
    ox, oy = _offset(look, W, H)
    size = H * 0.36
    stroke = _lw(look, W / 120) - 1
    _text(d, (W / 2 + ox, H / 2 + oy), label, size, colour, look, stroke=max(0, stroke))
    _underline(d, W / 2 + ox, H / 2 + oy, size, colour, label, look)
    _card_corners(d, img, W, H, label, colour, look)


def _paint_qwixx(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, label: str,
                 look: Look, edge: dict[str, int]) -> None:
    ox, oy = _offset(look, W, H)
    if label.startswith("back"):
        number = label[4:]
        neutral: RGB = (64, 64, 70) if not look.dark else (214, 214, 206)
        for k in range(0, W + H, max(6, W // 12)):  # neutral hatching
            d.line((k, 0, k - H, H), fill=_mix(look.background, neutral, 0.12), width=2)
        _frame(d, W, H, neutral, look)
        _text(d, (W / 2 + ox, H / 2 + oy), number, H * 0.34, neutral, look)
        _underline(d, W / 2 + ox, H / 2 + oy, H * 0.34, neutral, number, look)
        _card_corners(d, img, W, H, number, neutral, look)
        return
    if label.startswith("J"):
        number = label[1:]
        band = H / 4
        for i, c in enumerate(QWIXX_ROWS):
            d.rectangle((0, i * band, W, (i + 1) * band), fill=INK[c])
        ink = (255, 255, 255)
        _text(d, (W / 2 + ox, H / 2 + oy), number, H * 0.34, ink, look, stroke=max(2, W // 60),
              stroke_fill=(20, 20, 20))
        _card_corners(d, img, W, H, number, (20, 20, 20), look)
        return
    colour = INK[QWIXX_LETTER[label[0]]]
    number = label[1:]
    if look.variant % 2:
        d.rectangle((0, 0, W, H * 0.2), fill=colour)
        d.rectangle((0, H * 0.8, W, H), fill=colour)
    _frame(d, W, H, colour, look)
    _text(d, (W / 2 + ox, H / 2 + oy), number, H * 0.34, colour, look,
          stroke=max(0, _lw(look, W / 120) - 1))
    _underline(d, W / 2 + ox, H / 2 + oy, H * 0.34, colour, number, look)
    corner = colour if not look.variant % 2 else _ink_on(colour)
    _card_corners(d, img, W, H, number, corner, look)


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    return (int(a[0] * (1 - t) + b[0] * t), int(a[1] * (1 - t) + b[1] * t),
            int(a[2] * (1 - t) + b[2] * t))


def _symbol(d: ImageDraw.ImageDraw, element: str, cx: float, cy: float, r: float,
            look: Look, outline: RGB, *, mask_only: bool = False) -> None:
    """Each element its own shape: fire a flame (triangle), water a drop, earth a square,
    air a ring, magic a star; colour is the main cue, shape the second. ``mask_only``
    draws the shape's coverage in ``outline`` (an alpha mask)."""
    fill = ELEMENT_INK[element] if not mask_only else outline
    lw = max(1, int(r / 5 * look.line))
    if element == "fire":
        pts = [(cx, cy - r), (cx + r * 0.85, cy + r * 0.75), (cx - r * 0.85, cy + r * 0.75)]
        d.polygon(pts, fill=fill, outline=outline, width=lw)
    elif element == "water":
        d.ellipse((cx - r * 0.75, cy - r * 0.3, cx + r * 0.75, cy + r), fill=fill,
                  outline=outline, width=lw)
        d.polygon([(cx, cy - r), (cx + r * 0.62, cy + r * 0.05), (cx - r * 0.62, cy + r * 0.05)],
                  fill=fill)
    elif element == "earth":
        d.rectangle((cx - r * 0.8, cy - r * 0.8, cx + r * 0.8, cy + r * 0.8), fill=fill,
                    outline=outline, width=lw)
    elif element == "air":
        d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=fill, width=max(2, int(r / 2.6)))
        d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=outline, width=1)
    else:
        pts = []
        for k in range(10):
            rr = r if k % 2 == 0 else r * 0.45
            a = -math.pi / 2 + k * math.pi / 5
            pts.append((cx + rr * math.cos(a), cy + rr * math.sin(a)))
        d.polygon(pts, fill=fill, outline=outline, width=lw)


def edge_sequence(label: str, edge: Mapping[str, int], variant: int) -> list[str]:
    """The 16 edge symbols in drawing order, arranged by a stable hash (so faces cache)."""
    seq = [e for e in ELEMENTS for _ in range(int(edge.get(e, 0)))]
    if len(seq) != 16:
        raise ValueError(f"edge counts must add up to 16, not {len(seq)}")
    seed = zlib.crc32(f"{label}|{sorted(edge.items())}|{variant}".encode())
    order = np.random.default_rng(seed).permutation(16)
    return [seq[int(i)] for i in order]


def rox_edge_places(W: float, H: float) -> list[tuple[float, float]]:
    """The 16 edge symbol centres on a W×H Rox card, clockwise from the top-left."""
    m = W * 0.11
    places: list[tuple[float, float]] = []
    for side in range(4):
        for k in range(4):
            t = k / 4
            if side == 0:
                places.append((m + t * (W - 2 * m), m))
            elif side == 1:
                places.append((W - m, m + t * (H - 2 * m)))
            elif side == 2:
                places.append((W - m - t * (W - 2 * m), H - m))
            else:
                places.append((m, H - m - t * (H - 2 * m)))
    return places


def _rox_outline(look: Look) -> RGB:
    return (30, 30, 30) if not look.dark else (10, 10, 10)


def _paint_rox(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, label: str,
               look: Look, edge: dict[str, int]) -> None:
    """The card without its edge symbols: background and the centre stone with the
    element large on it (symbols are pasted by ``_rox_face``)."""
    if label not in ELEMENTS:
        raise ValueError(f"unknown element {label!r}")
    outline = _rox_outline(look)
    cx, cy = W / 2 + look.offset[0] * W, H / 2 + look.offset[1] * H
    sr = W * 0.24
    stone = (128, 124, 118) if look.variant % 2 else (96, 100, 108)
    d.ellipse((cx - sr * 1.1, cy - sr, cx + sr * 1.1, cy + sr), fill=stone, outline=outline,
              width=_lw(look, W / 90))
    _symbol(d, label, cx, cy, sr * 0.6, look, outline)


@functools.lru_cache(maxsize=512)
def _rox_blank(label: str, look: Look, W: int, H: int, scale: int) -> np.ndarray:
    img = Image.new("RGB", (W, H), look.background)
    _paint_rox(ImageDraw.Draw(img), img, W, H, label, look, {})
    out = np.ascontiguousarray(np.asarray(img.reduce(scale), dtype=np.uint8)[:, :, ::-1])
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=8192)
def _rox_sprite(element: str, look: Look, r: float, scale: int, fx: int, fy: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """One edge symbol drawn big and reduced, with alpha, at a sub-pixel phase (fx, fy
    in quarters of a final pixel: 0 or 2, halves are enough at these sizes)."""
    big = int(math.ceil(r * 2.4)) + 2 * scale
    big -= big % scale
    img = Image.new("RGB", (big, big), (0, 0, 0))
    mask = Image.new("RGB", (big, big), (0, 0, 0))
    c = big / 2 + fx * scale / 4, big / 2 + fy * scale / 4
    _symbol(ImageDraw.Draw(img), element, c[0], c[1], r, look, _rox_outline(look))
    _symbol(ImageDraw.Draw(mask), element, c[0], c[1], r, look, (255, 255, 255),
            mask_only=True)
    bgr = np.ascontiguousarray(np.asarray(img.reduce(scale), dtype=np.uint8)[:, :, ::-1])
    alpha = np.ascontiguousarray(np.asarray(mask.reduce(scale), dtype=np.uint8)[:, :, 0])
    return bgr, alpha


def _rox_face(label: str, edge_key: tuple[tuple[str, int], ...], look: Look, W: int, H: int,
              scale: int) -> tuple[np.ndarray, np.ndarray]:
    """A Rox card: the cached blank card with 16 cached edge symbol sprites pasted on (a
    card's edge counts are nearly unique, so composing beats drawing it whole)."""
    edge = dict(edge_key) or {label: 4, **{e: 3 for e in ELEMENTS if e != label}}
    seq = edge_sequence(label, edge, look.variant)
    out = _rox_blank(label, look, W, H, scale)
    r = W * 0.055 * look.glyph
    h, w = out.shape[:2]
    over = np.zeros_like(out)  # all 16 symbols, then one blend
    over_a = np.zeros((h, w), np.uint8)
    for (x, y), element in zip(rox_edge_places(W, H), seq, strict=True):
        fxp, fyp = x / scale, y / scale
        ix, iy = int(math.floor(fxp)), int(math.floor(fyp))
        bgr, alpha = _rox_sprite(element, look, round(r, 1), scale,
                                 2 * int((fxp - ix) * 2), 2 * int((fyp - iy) * 2))
        n = bgr.shape[0]
        x0, y0 = ix - n // 2, iy - n // 2
        sx0, sy0 = max(0, -x0), max(0, -y0)
        x1, y1 = min(w, x0 + n), min(h, y0 + n)
        if x1 <= max(x0, 0) or y1 <= max(y0, 0):
            continue
        ys, xs = slice(max(y0, 0), y1), slice(max(x0, 0), x1)
        hh_, ww_ = y1 - max(y0, 0), x1 - max(x0, 0)
        a = alpha[sy0:sy0 + hh_, sx0:sx0 + ww_]
        more = a > over_a[ys, xs]  # symbols do not overlap; keep the stronger coverage
        over[ys, xs][more] = bgr[sy0:sy0 + hh_, sx0:sx0 + ww_][more]
        over_a[ys, xs][more] = a[more]
    a16 = over_a.astype(np.uint16)[:, :, None]
    mix = over.astype(np.uint16) * a16 + out.astype(np.uint16) * (255 - a16) + 128
    out = ((mix + (mix >> 8)) >> 8).astype(np.uint8)
    out.setflags(write=False)
    return out, _face_alpha("rox_card", W, H, scale)


def _paint_rox_scoring(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, label: str,
                       look: Look, edge: dict[str, int]) -> None:
    gold: RGB = (196, 150, 40)
    _frame(d, W, H, gold, look)
    cx, cy = W / 2 + look.offset[0] * W, H / 2 + look.offset[1] * H
    r = W * 0.33
    d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=gold, width=_lw(look, W / 40))
    _text(d, (cx, cy), label, H * 0.3, _ink_on(look.background), look)
    _underline(d, cx, cy, H * 0.3, _ink_on(look.background), label, look)


def _paint_nummix(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, label: str,
                  look: Look, edge: dict[str, int]) -> None:
    """The number (or the joker's two-colour face) on a blank tile (``_nummix_blank``)."""
    bg = look.background
    ox, oy = _offset(look, W, H)
    cx, cy = W / 2 + ox * 0.5, H * 0.40 + oy * 0.5
    if label.startswith("J"):
        c1, c2 = NUMMIX_INK[NUMMIX_LETTER[label[1]]], NUMMIX_INK[NUMMIX_LETTER[label[2]]]
        fr = W * 0.32
        box = (cx - fr, cy - fr, cx + fr, cy + fr)
        d.pieslice(box, 90, 270, fill=c1)
        d.pieslice(box, -90, 90, fill=c2)
        er = fr * 0.13
        for ex in (cx - fr * 0.35, cx + fr * 0.35):
            d.ellipse((ex - er, cy - fr * 0.3 - er, ex + er, cy - fr * 0.3 + er), fill=bg)
        d.arc((cx - fr * 0.55, cy - fr * 0.5, cx + fr * 0.55, cy + fr * 0.6), 20, 160, fill=bg,
              width=max(2, int(fr / 7)))
        _text(d, (W * 0.2, H * 0.1), "J", H * 0.11, c1, look)
        _text(d, (W * 0.8, H * 0.1), "J", H * 0.11, c2, look)
        return
    colour = NUMMIX_INK[NUMMIX_LETTER[label[0]]]
    number = label[1:]
    size = H * (0.40 if len(number) == 1 else 0.34)
    if len(number) == 2:
        size = min(size, W * 0.58)
    stroke = max(1, int(W / 110 * look.line))
    if "Bold" not in look.font:  # regular faces made bold: the real numbers are heavy
        stroke += max(1, round(W / 60))
    _text(d, (cx, cy), number, size, colour, look, stroke=stroke)


def _cat(d: ImageDraw.ImageDraw, cx: float, cy: float, r: float, colour: RGB, lw: int) -> None:
    d.ellipse((cx - r, cy - r * 0.8, cx + r, cy + r), outline=colour, width=lw)
    d.line((cx - r * 0.9, cy - r * 0.3, cx - r * 0.75, cy - r * 1.25, cx - r * 0.3, cy - r * 0.75),
           fill=colour, width=lw)
    d.line((cx + r * 0.9, cy - r * 0.3, cx + r * 0.75, cy - r * 1.25, cx + r * 0.3, cy - r * 0.75),
           fill=colour, width=lw)
    for ex in (cx - r * 0.38, cx + r * 0.38):
        d.ellipse((ex - r * 0.1, cy - r * 0.1, ex + r * 0.1, cy + r * 0.1), fill=colour)
    for s in (-1, 1):
        d.line((cx + s * r * 0.2, cy + r * 0.35, cx + s * r * 1.2, cy + r * 0.25), fill=colour,
               width=max(1, lw // 2))


def _paint_catbox(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, label: str,
                  look: Look, edge: dict[str, int]) -> None:
    ink = _ink_on(look.background)
    faint = _mix(look.background, ink, 0.3)
    _frame(d, W, H, faint, look)
    _cat(d, W / 2, H * 0.7, W * 0.2, faint, _lw(look, W / 70))
    ox, oy = _offset(look, W, H)
    size = H * 0.3
    _text(d, (W / 2 + ox, H * 0.4 + oy), label, size, ink, look)
    _underline(d, W / 2 + ox, H * 0.4 + oy, size, ink, label, look)
    _card_corners(d, img, W, H, label, ink, look)


def _paint_token(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, label: str,
                 look: Look, edge: dict[str, int]) -> None:
    if label not in TOKEN_LABELS:
        raise ValueError(f"unknown token {label!r}")
    colour = INK[label] if label != "observed" else (70, 70, 76)
    d.rectangle((0, 0, W, H), fill=colour)
    hi = _mix(colour, (255, 255, 255), 0.35)
    d.ellipse((W * 0.22, H * 0.18, W * 0.5, H * 0.42), fill=hi)
    d.ellipse((2, 2, W - 3, H - 3), outline=_mix(colour, (0, 0, 0), 0.4), width=max(1, W // 16))
    if label == "observed":  # an eye
        d.ellipse((W * 0.25, H * 0.38, W * 0.75, H * 0.62), outline=(235, 235, 235),
                  width=max(1, W // 14))
        d.ellipse((W * 0.43, H * 0.43, W * 0.57, H * 0.57), fill=(235, 235, 235))


def qwixx_sheet_layout(W: float, H: float) -> dict[str, list[tuple[float, float, float, float]]]:
    """Box rectangles (x0, y0, x1, y1) on a sheet face W×H: each row's 11 number boxes then
    its lock box, ``fouls`` (4) and ``totals`` (6)."""
    out: dict[str, list[tuple[float, float, float, float]]] = {}
    top, row_h = H * 0.16, H * 0.16
    bw = W * 0.068
    x0 = W * 0.04
    for i, row in enumerate(QWIXX_ROWS):
        y = top + i * row_h
        boxes = []
        for k in range(12):
            x = x0 + k * (bw + W * 0.01) + (W * 0.02 if k == 11 else 0)
            boxes.append((x, y + row_h * 0.12, x + bw, y + row_h * 0.88))
        out[row] = boxes
    fy = top + 4 * row_h + H * 0.04
    out["fouls"] = [(W * 0.62 + k * W * 0.08, fy, W * 0.62 + k * W * 0.08 + W * 0.06,
                     fy + H * 0.1) for k in range(4)]
    out["totals"] = [(W * 0.04 + k * W * 0.09, fy, W * 0.04 + k * W * 0.09 + W * 0.07,
                      fy + H * 0.1) for k in range(6)]
    return out


def qwixx_row_numbers(row: str) -> list[int]:
    """The numbers of a sheet row left to right: red/yellow 2→12, green/blue 12→2."""
    return list(range(2, 13)) if row in ("red", "yellow") else list(range(12, 1, -1))


def _paint_sheet(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, label: str,
                 look: Look, edge: dict[str, int]) -> None:
    ink: RGB = (30, 30, 30)
    _text(d, (W * 0.2, H * 0.07), "QWIXX", H * 0.08, ink, look)
    if label:
        _text(d, (W * 0.62, H * 0.07), label, H * 0.07, (40, 40, 120), look)
    layout = qwixx_sheet_layout(W, H)
    top, row_h = H * 0.16, H * 0.16
    for i, row in enumerate(QWIXX_ROWS):
        colour = INK[row]
        y = top + i * row_h
        d.rectangle((W * 0.03, y, W * 0.97, y + row_h), fill=colour)
        pale = _mix(colour, (255, 255, 255), 0.78)
        for k, (x0, y0, x1, y1) in enumerate(layout[row]):
            d.rounded_rectangle((x0, y0, x1, y1), radius=(x1 - x0) * 0.15, fill=pale)
            text = str(qwixx_row_numbers(row)[k]) if k < 11 else "L"
            _text(d, ((x0 + x1) / 2, (y0 + y1) / 2), text, (y1 - y0) * 0.55, colour, look)
    for x0, y0, x1, y1 in layout["fouls"]:
        d.rectangle((x0, y0, x1, y1), outline=ink, width=_lw(look, W / 300))
    for x0, y0, x1, y1 in layout["totals"]:
        d.rectangle((x0, y0, x1, y1), outline=ink, width=_lw(look, W / 400))


def _paint_board(d: ImageDraw.ImageDraw, img: Image.Image, W: int, H: int, label: str,
                 look: Look, edge: dict[str, int]) -> None:
    ink = _ink_on(look.background)
    for c in range(9):
        x0, _, x1, _ = catbox_cell_rect(W, H, 0, c)
        _text(d, ((x0 + x1) / 2, H * 0.09), str(c + 1), H * 0.1, ink, look)
    for r, row in enumerate(CATBOX_ROWS):
        colour = INK[row]
        pale = _mix(colour, look.background, 0.55)
        for c in range(9):
            x0, y0, x1, y1 = catbox_cell_rect(W, H, r, c)
            d.rounded_rectangle((x0, y0, x1, y1), radius=(x1 - x0) * 0.12, fill=pale,
                                outline=colour, width=_lw(look, W / 300))


def catbox_cell_rect(W: float, H: float, row: int, col: int) -> tuple[float, float, float, float]:
    """The research board cell (row 0–3 red/blue/yellow/green, column 0–8) on a W×H face."""
    left, top = W * 0.03, H * 0.18
    cw, ch = W * 0.94 / 9, H * 0.79 / 4
    return (left + col * cw + cw * 0.06, top + row * ch + ch * 0.06,
            left + (col + 1) * cw - cw * 0.06, top + (row + 1) * ch - ch * 0.06)


PENS_BGR: tuple[tuple[int, int, int], ...] = (
    (30, 30, 30), (150, 60, 20), (20, 20, 160), (40, 110, 30), (110, 30, 120), (60, 60, 60))
MARK_STYLES: tuple[str, ...] = ("x", "stroke", "fill")


def draw_sheet_marks(bgr: np.ndarray, sheet: Mapping[str, Any], *, rng: np.random.Generator,
                     look: Look, marks: list[dict[str, Any]] | None = None) -> np.ndarray:
    """Hand-drawn crosses on a sheet face: an X, a single stroke or a filled box (a
    player's habit, sometimes another), wobbly, in one of several pen colours (now and then
    a borrowed pen), for every crossed number, lock box and foul. Appends what it drew to
    ``marks`` ({box, style, pen}) when given."""
    import cv2

    out = bgr.copy()
    H, W = out.shape[:2]
    layout = qwixx_sheet_layout(W, H)
    pen = PENS_BGR[int(rng.integers(len(PENS_BGR)))]
    style = int(rng.integers(3))
    lw = max(1, round(W / rng.uniform(130, 220) * look.line))
    boxes: list[tuple[str, tuple[float, float, float, float]]] = []
    for row in QWIXX_ROWS:
        numbers = qwixx_row_numbers(row)
        for n in sheet.get(row, []):
            boxes.append((f"{row} {int(n)}", layout[row][numbers.index(int(n))]))
        if row in sheet.get("locks", []):
            boxes.append((f"{row} lock", layout[row][11]))
    boxes.extend((f"foul {k + 1}", b) for k, b in enumerate(
        layout["fouls"][: int(sheet.get("fouls", 0))]))

    def wobbly(a: tuple[float, float], b: tuple[float, float], width: int) -> None:
        """A pen stroke: a slightly bent line through a jittered middle point."""
        mid = ((a[0] + b[0]) / 2 + rng.normal(0, 0.6), (a[1] + b[1]) / 2 + rng.normal(0, 0.6))
        pts = np.array([_pt(a), _pt(mid), _pt(b)], np.int32)
        cv2.polylines(out, [pts], False, ink, width, cv2.LINE_AA)

    for name, (x0, y0, x1, y1) in boxes:
        j = rng.uniform(-0.12, 0.12, size=4) * (x1 - x0)
        p = [(x0 + j[0], y0 + j[1]), (x1 + j[2], y1 + j[3]), (x1 - j[1], y0 + j[0]),
             (x0 - j[3], y1 - j[2])]
        s = style if rng.random() < 0.85 else int(rng.integers(3))
        ink = pen if rng.random() < 0.9 else PENS_BGR[int(rng.integers(len(PENS_BGR)))]
        if s == 0:
            wobbly(p[0], p[1], lw)
            wobbly(p[2], p[3], lw)
        elif s == 1:
            wobbly(p[3], p[2], lw + 1)
        else:
            m = (x1 - x0) * 0.12
            k = j * 0.3
            poly = np.array([_pt((x0 + m + k[0], y0 + m)), _pt((x1 - m, y0 + m + k[1])),
                             _pt((x1 - m + k[2], y1 - m)), _pt((x0 + m, y1 - m + k[3]))],
                            np.int32)
            cv2.fillPoly(out, [poly], ink, cv2.LINE_AA)
        if marks is not None:
            marks.append({"box": name, "style": MARK_STYLES[s], "pen": list(ink)})
    return out


def _pt(p: Sequence[float]) -> tuple[int, int]:
    return int(round(p[0])), int(round(p[1]))


_PAINTERS: dict[str, Any] = {
    "nox_card": _paint_nox,
    "qwixx_card": _paint_qwixx,
    "rox_card": _paint_rox,
    "rox_scoring": _paint_rox_scoring,
    "nummix_tile": _paint_nummix,
    "catbox_card": _paint_catbox,
    "token": _paint_token,
    "qwixx_sheet": _paint_sheet,
    "catbox_board": _paint_board,
}
