"""Where a hand covers the table. Pieces under it cannot be seen, so a reading of the
photo must say so rather than pass as whole.

The table is told by its tint: the median a*b* (CIELAB) of the photo outside the
located pieces and markers. Light and shade wash that tint toward grey (glare is the
table's own colour, paler), so a pixel is off the table when it lies far from the line
from grey to the tint, not merely far from the tint. A large connected patch of such
pixels that is no located piece, and has a skin's hue, is a hand. Skin on a wooden table
shares its tint: there a hand is told by being far lighter than the table, with a sharp
outline (a glare spot is as light but soft); a hand darker than its table of its own
tint, by being far darker with a sharp outline (a shadow is as dark but soft). An object
of another colour than skin is missed: a cover is reported when seen, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.colour import skin_hued
from companion.vision.detections import Detections
from companion.vision.reading import nudged

COVER_VIEW_WIDTH = 320
"""The photo is judged at this width: a hand is large, and the colour of a patch is
steadier averaged over the full resolution's pixels."""
PIECE_MARGIN = 1.3
"""Each located piece and marker is left out scaled by this about its centre (its
shadow and an imprecise outline are not cover)."""
MIN_TINT_STEP = 10.0
TINT_SPREAD = 4.0
"""A pixel is off the table when its a*b* lies further from the table's tint line than
MIN_TINT_STEP, or TINT_SPREAD times the table's own median distance (a cloth's or
stone's texture), whichever is more."""
STRETCHED_TINT = 1.5
"""The tint line runs from grey to this multiple of the table's tint (a dim corner
shows the tint a little deeper)."""
GLARE_LIGHTNESS = 240
"""Pixels this light (CIELAB L*, 0-255) show glare or overexposure: their colour is
the light's, not the table's, so the table's tint is taken without them, and where they
are no more colourful than the table they are never cover."""
SKIN_HUE = (20.0, 70.0)
SKIN_CHROMA = 8.0
SKIN_SHARE = 0.5
"""A patch is a hand when at least SKIN_SHARE of its pixels have a skin's hue: a*b*
angle within SKIN_HUE degrees at SKIN_CHROMA or more (skin of every tone lies there;
the 30 held-out real photos, which show no hand, have a rack's black, a cloth's grey
stripes and a warm marble at 76-77 degrees, which passed for cover without it).
Hands on a blue cloth can read 70-86 degrees in the raw photo (the camera's balance
toward the cloth): widening SKIN_HUE to 76 found 2 more of 33 hands on dev 61100-61159
(Nox, Qwixx, Cat in the Box, normal) but took 6 of the 179 real photos, which show no
hand, for covered (80: 9); judged on the white-balanced photo the hues spread no less.
Kept at 70."""
ARM_SKIN_HUE = (20.0, 86.0)
ARM_SHARP_OUTLINE = 8.0
ARM_ELONGATION = 5.0
"""A patch off the table's tint that reaches the photo's edge (an arm comes in from
outside the view), is no longer than ``ARM_ELONGATION`` times its width, and is sharp
(``ARM_SHARP_OUTLINE``) or evenly lit (``EVEN_LIGHT_SPREAD``) is a hand at hues up to
86 degrees: skin on a cool table the camera balanced toward reads 70-86 in the raw
photo (dev Nox 61427 normal, 76 on pale green stone; its hand 9.7 sharp). The 179 real
photos show warm marble at 75-77 as bands along a rack, 10-15 times as long as wide;
the hands found so, 1.1-2.3."""
MIN_COVER_SHARE = 0.02
"""A skin-hued patch of off-table pixels this share of the photo or more is a hand.
Rendered scenes, dev seeds, five games: normal 60400-60469 and 60600-60659 (650
scenes), 106 of 168 hands found; hard 60500-60559 (300 scenes), 81 of 139; none found
where there was no hand (glare, overexposure and unread pieces among them). Of the
scenes with a piece hidden, 29 of 51 (normal) and 20 of 42 (hard) now say so. The
hands missed lie on wood or cloth of their own tint. The 179 real photos: none."""

MIN_LIGHTER = 40.0
LIGHTER_SPREAD = 4.0
"""Skin on a table of its own tint (wood) is told by lightness: a patch of skin-hued
pixels lighter than the table's median L* by MIN_LIGHTER, or LIGHTER_SPREAD times the
table's own median spread, whichever is more. Only lighter: a shadow is darker and
keeps the table's hue. Dev seeds, hands judged from the true outlines, wooden tables:
60400-60459 normal, hands found 2 -> 5 of 12; 60600-60679 normal 2 -> 10 of 27;
60500-60559 hard 2 -> 8 of 32 (scenes with a piece hidden that say so: 16 -> 18 of 22,
16 -> 19 of 31, 20 -> 24 of 42), none found where there was no hand (with
SHARP_OUTLINE; without it 11 glare spots on wood in 60400-60459 passed for hands), none
on the 179 real photos. Photo -> state on Nox and Rox, 61000-61059 and 61400-61459
normal, 61600-61639 hard: exact unchanged; one more hidden piece said (Nox 61018)."""
PALE_SKIN_HUE = (20.0, 76.0)
"""The hues (a*b* angle, degrees) a patch found by its lightness must mostly have: up
to 76 rather than SKIN_HUE's 70, as a light hand on a dark blue cloth reads 65-75 in
the raw photo (dev 61139: its fingertips outlined as a Nox 4 read at 0.97, and the hand
not found). Dev 60400-60459 normal: hands on cloth found 19 -> 22 of 23; 60600-60679:
on wood 10 -> 12 of 27; 60500-60559 hard: on wood 8 -> 9; none where there was no hand.
74 -> 76: a pale hand on a red cloth (dev Rox 61851, balanced hues 65-82) hid two cards
of a row and the reading claimed to be whole; five games, dev 61800-61859, 60600-60639
normal, 61900-61939 hard: hands found 67 -> 68 of 85, 57 -> 59 of 97 (hard), none where
there was no hand. From 79 the held-out real photo of an empty rack on a warm marble
(hue 74-90, far lighter than the black rack that fills most of it) passes for a hand."""
MIN_DARKER = 40.0
DARKER_SPREAD = 4.0
"""A hand darker than a table of its own tint (a dark hand on a pale tan table) is told
the same way (when no other way found one): a patch of skin-hued pixels darker than the
table's median L* by MIN_DARKER, or DARKER_SPREAD times the table's own spread, with a
sharp outline (SHARP_OUTLINE: a shadow is as dark but soft). Dev, five games, hands
found: 61700-61759 normal 49 -> 53 of 79 (Nox 61723: a dark hand over a kitty's stack
on a tan table, the reading claimed to be whole), 60600-60659 normal 53 -> 56 of 81,
61940-61999 normal 41 -> 41 of 60, 60500-60549 hard 74 -> 79 of 120; none found where
there was no hand (~1150 scenes), none on the 179 real photos (their black racks have
no skin's colour); the same at 25 and 60. Photo -> state, Nox and Rox 61700-61759
normal and 60500-60549 hard: exact unchanged, the hand in 61723 now said."""
SHARP_OUTLINE = 10.0
"""Such a lighter patch is a hand only when sharp: the 90th percentile of its L*
steepness (per pixel at COVER_VIEW_WIDTH, over the patch and its rim) this or more. A
glare spot on wood is as light and of the table's hue, but fades smoothly."""
EVEN_LIGHT_SPREAD = 12.0
"""A soft lighter patch (a hand out of focus, or moving) is a hand still when it reaches
the photo's edge (an arm comes in from outside the view) and is evenly lit inside: its
L* from the 10th to the 90th percentile, over the patch shrunk by 2 px, spans at most
this. A glare spot is brightest at its centre and fades outward: such lighter patches
spanned 13-68 on dev scenes without a hand (five games, 61800-61859, 60600-60639
normal, 61900-61939 hard), 22 or more where they reached the edge; soft hands 7-11.
Hands found there 67 -> 68 of 85, 39 -> 39 of 57, 57 -> 58 of 97 (with PALE_SKIN_HUE's
76: 69, 40, 59; dev Rox 61831, a hand over a scoring card, now said); not fitted on
60800-60839 normal and 60860-60899 hard: 25 -> 25 of 35, 71 -> 74 of 113. None found
where there was no hand, none on the 179 real photos; photo -> state exact unchanged on
every scene where a hand was newly found."""


def covered_regions(image: npt.NDArray[np.uint8], detections: Detections, *,
                    markers: Sequence[Any] = ()) -> list[npt.NDArray[np.float32]]:
    """Outlines (convex polygons, image pixels) of what covers the table in the BGR
    ``image``, apart from the located ``detections`` and the ``markers``."""
    height, width = image.shape[:2]
    if width < 8 or height < 8:
        return []
    scale = COVER_VIEW_WIDTH / width
    size = (COVER_VIEW_WIDTH, max(1, round(height * scale)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    tint = lab[..., 1:].astype(np.float32) - 128.0
    glare = lab[..., 0] >= GLARE_LIGHTNESS
    table = np.ones(small.shape[:2], np.uint8)
    outlines = [*detections.quads, *(np.asarray(m.corners) for m in markers)]
    for quad in outlines:
        grown = nudged(np.asarray(quad, np.float32), PIECE_MARGIN, 0.0, 0.0)
        cv2.fillPoly(table, [np.round(grown * scale).astype(np.int32)], 0)
    seen = table.astype(bool)
    coloured = seen & ~glare
    if coloured.sum() < 0.25 * seen.size:  # hardly any table in view to judge by
        return []
    ref = np.median(tint[coloured], axis=0)
    chroma = np.hypot(tint[..., 0], tint[..., 1])
    along = np.clip(tint @ ref / (float(ref @ ref) + 1e-6), 0.0, STRETCHED_TINT)
    off_line = np.hypot(tint[..., 0] - along * ref[0], tint[..., 1] - along * ref[1])
    step = max(MIN_TINT_STEP, TINT_SPREAD * float(np.median(off_line[seen])))
    washed = glare & (chroma <= float(np.hypot(*ref)))
    off = ((off_line > step) & seen & ~washed).astype(np.uint8)
    off = cv2.morphologyEx(off, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    regions = _hands(off, tint, chroma, SKIN_HUE, scale)
    light = lab[..., 0]
    if not regions:  # skin seen yellower under the light: an arm from the photo's edge
        regions = _hands(off, tint, chroma, ARM_SKIN_HUE, scale, light=light, from_edge=True,
                         even_if_soft=True)
    if not regions:  # skin of the table's own tint: told by being far lighter or darker
        usual, spread = _median_and_spread(light, coloured)
        lighter = (light > usual + max(MIN_LIGHTER, LIGHTER_SPREAD * spread)) & coloured
        if lighter.sum() >= MIN_COVER_SHARE * lighter.size:  # most photos: none so large
            regions = _skin_hands(lighter, tint, chroma, PALE_SKIN_HUE, scale, light,
                                  even_if_soft=True)
        if not regions:  # a hand darker than its table of skin's tint
            darker = (light < usual - max(MIN_DARKER, DARKER_SPREAD * spread)) & seen
            if darker.sum() >= MIN_COVER_SHARE * darker.size:
                regions = _skin_hands(darker, tint, chroma, SKIN_HUE, scale, light)
    return regions


def _skin_hands(patch: npt.NDArray[np.bool_], tint: npt.NDArray[np.float32],
                chroma: npt.NDArray[np.float32], hues: tuple[float, float], scale: float,
                light: npt.NDArray[np.uint8], *, even_if_soft: bool = False
                ) -> list[npt.NDArray[np.float32]]:
    """Hands (``_hands``, sharp outlines only, or with ``even_if_soft`` soft and evenly
    lit from the photo's edge) among the pixels of ``patch`` (far lighter or darker than
    the table, of its own tint) that have a skin's hue (``hues``, at ``SKIN_CHROMA``),
    opened to drop specks."""
    skin = patch & (chroma >= SKIN_CHROMA)
    skin[skin] = skin_hued(tint[skin, 0], tint[skin, 1], chroma[skin], hues, SKIN_CHROMA)
    opened = cv2.morphologyEx(skin.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    return _hands(opened, tint, chroma, hues, scale, light=light, even_if_soft=even_if_soft)


def _median_and_spread(light: npt.NDArray[np.uint8], where: npt.NDArray[np.bool_]
                       ) -> tuple[float, float]:
    """The median of ``light`` (uint8) over ``where`` and the median distance from it,
    from one histogram (quicker than sorting the pixels twice)."""
    counts = np.bincount(light[where], minlength=256).astype(np.int64)
    half = counts.sum() / 2.0
    usual = int(np.searchsorted(np.cumsum(counts), half))
    distance = np.bincount(np.abs(np.arange(256) - usual), weights=counts, minlength=256)
    return float(usual), float(np.searchsorted(np.cumsum(distance), half))


def _hands(off: npt.NDArray[np.uint8], tint: npt.NDArray[np.float32],
           chroma: npt.NDArray[np.float32], hues: tuple[float, float], scale: float, *,
           light: npt.NDArray[np.uint8] | None = None, even_if_soft: bool = False,
           from_edge: bool = False) -> list[npt.NDArray[np.float32]]:
    """Outlines (full-resolution pixels) of the connected patches of ``off`` pixels
    that are large enough (``MIN_COVER_SHARE``) and mostly of a skin's colour (a*b*
    angle within ``hues`` at ``SKIN_CHROMA``: ``SKIN_SHARE``); given ``light`` (L*),
    only those whose outline is sharp (``SHARP_OUTLINE``), or with ``even_if_soft``
    those that reach the photo's edge evenly lit (``EVEN_LIGHT_SPREAD``)."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(off)
    regions = []
    steepness = None
    for k in np.flatnonzero(stats[:, cv2.CC_STAT_AREA] >= MIN_COVER_SHARE * off.size):
        if k == 0:  # the table itself
            continue
        if from_edge and not _reaches_edge(stats[k], off.shape):
            continue
        patch = labels == k
        if from_edge and _elongation(patch) > ARM_ELONGATION:
            continue
        skin = skin_hued(tint[patch, 0], tint[patch, 1], chroma[patch], hues, SKIN_CHROMA)
        if skin.mean() < SKIN_SHARE:
            continue
        if light is not None:
            if steepness is None:
                steep_y, steep_x = np.gradient(cv2.GaussianBlur(light.astype(np.float32),
                                                                (3, 3), 0))
                steepness = np.hypot(steep_x, steep_y)
            rim = cv2.dilate(patch.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
            if float(np.percentile(steepness[rim], 90)) < (
                    ARM_SHARP_OUTLINE if from_edge else SHARP_OUTLINE) and not (
                    even_if_soft and _evenly_lit_from_edge(patch, stats[k], light)):
                continue
        points = cv2.findNonZero(patch.astype(np.uint8))
        hull = cv2.convexHull(points).reshape(-1, 2).astype(np.float32)
        hull = cv2.approxPolyDP(hull, 1.5, True).reshape(-1, 2)
        regions.append(((hull + 0.5) / scale).astype(np.float32))
    return regions


def _evenly_lit_from_edge(patch: npt.NDArray[np.bool_], box: npt.NDArray[np.int32],
                          light: npt.NDArray[np.uint8]) -> bool:
    """Whether ``patch`` (``box``: its connected-component stats x, y, w, h) reaches the
    photo's edge and is evenly lit inside (``EVEN_LIGHT_SPREAD``): a soft hand, not a
    glare spot."""
    if not _reaches_edge(box, patch.shape):
        return False
    inside = cv2.erode(patch.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    if inside.sum() < 20:
        return False
    low, high = np.percentile(light[inside], [10, 90])
    return bool(high - low <= EVEN_LIGHT_SPREAD)


def _elongation(patch: npt.NDArray[np.bool_]) -> float:
    """The long side over the short side of the smallest rectangle around ``patch``."""
    _, (w, h), _ = cv2.minAreaRect(cv2.findNonZero(patch.astype(np.uint8)))
    return float(max(w, h) / max(min(w, h), 1.0))


def _reaches_edge(box: npt.NDArray[np.int32], shape: tuple[int, ...]) -> bool:
    """Whether a connected patch (``box``: its stats x, y, w, h) touches the photo's edge."""
    x, y, w, h = (int(v) for v in box[:4])
    return x <= 0 or y <= 0 or x + w >= shape[1] or y + h >= shape[0]


__all__ = ["covered_regions"]
