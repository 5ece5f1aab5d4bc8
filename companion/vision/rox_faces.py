"""Which way up a Rox element card lies, seen from its centre symbol (``face_ups``): fire's
flame, water's drop and magic's star point to the card's top; earth's square and air's
ring look the same turned round. The reader orders a row without a seat marker by it
(``readers/rox.py``: the first card is the left end as the player who reads the cards
upright sees it)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.detections import rectify
from companion.vision.reading import Image

FACE_SIDE = 96
"""Cards are rectified to this square side to match their centre symbol."""
GLYPH_REACH = 0.6 * 0.24
"""The centre symbol reaches this far from the card's middle, in card sides (the stone's
radius is 0.24 of the side, the symbol 0.6 of the stone's)."""
GLYPH_SCALES = (0.85, 0.95, 1.05, 1.12)
"""Sizes the symbol is matched at, of ``GLYPH_REACH``: a located outline may be a little
small or large."""
STONE_RING = (0.19, 0.215)
"""The ring (radii in card sides) whose median colour is the stone's: the symbol is
matched on each pixel's colour distance from it, whatever the element's ink."""
POINTED = ("fire", "water", "magic")
"""Centre elements whose symbol points to the card's top."""


def face_ups(balanced: Image, quads: npt.NDArray[np.float32], labels: Sequence[str | None]
             ) -> list[tuple[float, float] | None]:
    """Each card's up in the photo (x, y), read from its centre symbol (labelled
    ``labels``): the sum over the card's two axes of the axis's unit direction in the
    photo times how much better the symbol matches pointing that way than the other (a
    difference of normalised correlations, -1..1); None for a card whose symbol has no up
    (``POINTED``). On the located cards of dev 61000-61059 and 60100-60249 (normal), the
    up's component along the true up was positive for 99.5 % of fire cards, 98.6 % of
    water, 98.1 % of magic (median 0.32, 0.16, 0.20); hard 60700-60759: 98.2, 93.3,
    79.6 %."""
    out: list[tuple[float, float] | None] = []
    for quad, label in zip(quads, labels, strict=True):
        if label not in POINTED:
            out.append(None)
            continue
        quad = np.asarray(quad, np.float64)
        ink = _symbol_ink(balanced, quad)
        right, down = quad[1] - quad[0], quad[3] - quad[0]
        up = np.zeros(2)
        # the square turned a quarter (counter-clockwise) has the card's x axis as its y
        for region, axis in ((ink, down), (np.ascontiguousarray(np.rot90(ink)), -right)):
            up -= _points_up(region, str(label)) * axis / max(float(np.linalg.norm(axis)), 1e-9)
        out.append((float(up[0]), float(up[1])))
    return out


def _symbol_ink(balanced: Image, quad: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    """The middle of the card at ``quad`` rectified, as each pixel's colour distance from
    the stone's (``STONE_RING``): the centre symbol stands out whatever its ink."""
    square = _face(balanced, quad).astype(np.float32)
    stone = _stone_colour(square)
    lo, hi = int(FACE_SIDE / 2 - 0.24 * FACE_SIDE), int(FACE_SIDE / 2 + 0.24 * FACE_SIDE)
    return np.asarray(np.linalg.norm(square[lo:hi, lo:hi] - stone, axis=2), np.float32)


def _points_up(ink: npt.NDArray[np.float32], label: str) -> float:
    """How much better the centre symbol in ``ink`` (``_symbol_ink``) matches pointing
    to its top than to its bottom (best over ``GLYPH_SCALES`` and small shifts)."""
    best = {True: -1.0, False: -1.0}
    for scale in GLYPH_SCALES:
        shape = _glyph(label, round(GLYPH_REACH * FACE_SIDE * scale, 2))
        for pointing_up, template in ((True, shape), (False, shape[::-1].copy())):
            match = float(cv2.matchTemplate(ink, template, cv2.TM_CCOEFF_NORMED).max())
            best[pointing_up] = max(best[pointing_up], match)
    return best[True] - best[False]


def _face(balanced: Image, quad: npt.ArrayLike) -> Image:
    """The card at ``quad`` rectified to a ``FACE_SIDE`` square and lightly blurred: what
    its centre symbol is judged on (its up, ``_symbol_ink``; its colour,
    ``centre_colour_doubts``)."""
    square = rectify(balanced, np.asarray(quad, np.float32), size=(FACE_SIDE, FACE_SIDE))
    return np.asarray(cv2.GaussianBlur(square, (3, 3), 0), np.uint8)


def _stone_colour(square: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The median colour (in the channels of ``square``, a ``_face``) of the stone's ring
    round the centre symbol (``STONE_RING``)."""
    radius = _radii(FACE_SIDE)
    ring = (radius > STONE_RING[0] * FACE_SIDE) & (radius < STONE_RING[1] * FACE_SIDE)
    return np.asarray(np.median(square[ring], axis=0), np.float32)


@lru_cache(maxsize=4)
def _radii(side: int) -> npt.NDArray[np.float64]:
    """Each pixel's distance from the middle of a ``side`` square."""
    ys, xs = np.mgrid[0:side, 0:side] - (side - 1) / 2
    return np.asarray(np.hypot(xs, ys), np.float64)


@lru_cache(maxsize=32)
def _glyph(label: str, reach: float) -> npt.NDArray[np.float32]:
    """The printed centre symbol of ``label`` pointing up, filled, ``reach`` pixels from
    its middle to its tip: fire a triangle, water a drop, magic a five-pointed star."""
    size = int(2 * reach + 7)
    mid = size / 2
    image = np.zeros((size, size), np.uint8)

    def fill(points: list[tuple[float, float]]) -> None:
        cv2.fillPoly(image, [np.round(np.array(points) * 16).astype(np.int32)], 255, shift=4)

    if label == "fire":
        fill([(mid, mid - reach), (mid + reach * 0.85, mid + reach * 0.75),
              (mid - reach * 0.85, mid + reach * 0.75)])
    elif label == "water":
        cv2.ellipse(image, (round(mid * 16), round((mid + reach * 0.35) * 16)),
                    (round(reach * 0.75 * 16), round(reach * 0.65 * 16)), 0, 0, 360, 255, -1,
                    shift=4)
        fill([(mid, mid - reach), (mid + reach * 0.62, mid + reach * 0.05),
              (mid - reach * 0.62, mid + reach * 0.05)])
    else:
        tips = [(reach if k % 2 == 0 else reach * 0.45, -math.pi / 2 + k * math.pi / 5)
                for k in range(10)]
        fill([(mid + r * math.cos(a), mid + r * math.sin(a)) for r, a in tips])
    return image.astype(np.float32)


SYMBOL_DISC = 0.15
"""The disc (radius in card sides, a little over ``GLYPH_REACH``) whose colours are the
centre symbol's for ``centre_colour_doubts``."""
INK_CHROMA = 30
"""A pixel is coloured ink at this CIELAB a*b* distance from the stone's colour
(``STONE_RING``) or more: magic's white and black star stays under it, on the grey stone
and on the hard scenes' slate-blue one (from grey, 2 of 787 right magic readings on dev
60800-60859 hard had 3-7 % of their disc over it)."""
COLOURED_SHARE = 0.02
"""A centre read ``magic`` is doubted when this share of its symbol disc or more is
coloured ink (``INK_CHROMA``). Located element cards, dev 61000-61059 normal and
60700-60739 hard: all 310 magic cards had none; right-read coloured cards had 0.07 or
more but for a few washed out by glare (none); coloured cards read magic had 0.06-0.2 or,
washed out, none. Held out, dev 60100-60199 normal / 60800-60859 hard: no right reading
of 1427 / 787 doubted (``centre_colour_doubts``, both rules)."""
INK_HUES = {"fire": 35.0, "air": 95.0, "earth": 142.0, "water": 289.0}
"""Each coloured element's ink hue (CIELAB a*b* angle in degrees, after white balance):
the medians on the cards above (red, yellow, green, blue)."""
HUE_OFF = 40.0
"""A centre read as a coloured element is doubted when its ink's median hue lies this
many degrees or more from the element's (``INK_HUES``); the right readings above were
all within 22.3 (normal) and 22.8 (hard, air toward green), held out (hard) 30.8, and the
neighbouring inks lie 47 or more apart."""


def centre_colour_doubts(balanced: Image, quads: npt.NDArray[np.float32],
                         labels: Sequence[str | None]) -> list[str | None]:
    """For each card, why its centre symbol's colour (``balanced``: white-balanced)
    clearly disagrees with its centre element as read (``labels``), else None.
    COMPONENTS.md gives colour as the element's main cue; the element card model
    alone read a plain red fire symbol as magic at 0.94 (dev 61730)."""
    out: list[str | None] = []
    radius = _radii(FACE_SIDE)
    disc = radius < SYMBOL_DISC * FACE_SIDE
    for quad, label in zip(quads, labels, strict=True):
        if label is None:
            out.append(None)
            continue
        lab = cv2.cvtColor(_face(balanced, quad), cv2.COLOR_BGR2LAB).astype(np.float32)
        stone = _stone_colour(lab)
        a, b = lab[disc][:, 1] - 128, lab[disc][:, 2] - 128
        ink = np.hypot(a - (stone[1] - 128), b - (stone[2] - 128)) >= INK_CHROMA
        share = float(ink.mean())
        if share < COLOURED_SHARE:
            out.append(None)  # no coloured ink: magic, or a symbol washed out by glare
            continue
        hue = float(np.median(np.degrees(np.arctan2(b[ink], a[ink])) % 360))
        nearest = min(INK_HUES, key=lambda e: _hue_apart(hue, INK_HUES[e]))
        if label == "magic":
            out.append(f"its symbol is coloured ({share:.0%} of it, nearest {nearest}'s "
                       f"hue), magic's is white")
        elif label in INK_HUES and _hue_apart(hue, INK_HUES[label]) >= HUE_OFF:
            out.append(f"its symbol's colour (hue {hue:.0f}) is nearest {nearest}'s, "
                       f"not {label}'s")
        else:
            out.append(None)
    return out


def _hue_apart(a: float, b: float) -> float:
    """Degrees between hue angles ``a`` and ``b`` round the circle."""
    d = abs(a - b) % 360
    return min(d, 360 - d)
