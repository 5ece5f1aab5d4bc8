"""What lies in front of a tile: the band of a rack's ledge, or the table.

A tile standing on a rack shows its face to the player with the rack's ledge along its
foot: a band of one flat colour, unlike the table, darker than the tile. A tile lying
on the table has table (or its own soft shadow, lighter the further out) at its foot.
``front_bands`` measures that band for each tile (and, with ``head``, the band beyond
its head, where a two-tier rack's lower tier meets the upper ledge); the Nummix reader
judges whole rows with them (companion/readers/nummix.py), since it sees no pixels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.detections import Detections, rotate_quad

BAND_DEPTHS = (0.06, 0.12, 0.18, 0.24)
"""Where the band is sampled, in tile heights out from the tile's foot: a rack's ledge
(8 mm in front of the tiles, 14 mm high, seen at an angle) covers at least this much."""
TABLE_DEPTH = (0.8, 1.1)
"""Where the table around a tile is sampled, in the tile's longer side (as outlined) out
from each side. In its height before: a rack tile seen foreshortened is outlined far
wider than tall (dev 61095: 54×21 px), and that near the table samples fell on the
rack's own body around it, so a black rack on a grey table showed a ledge 5 from the
"table" and stood in the grid as a row, read whole and wrong (60266 normal: 70×24 px,
2 from it). Exact, replayed on the same scenes: normal 60000+600 523 -> 526, 61000+100
82 -> 83, 61600+40, 61700+40 unchanged; hard 60000+300, 61900+40 unchanged (60076 hard
whole and wrong -> unsure); no scene newly wrong."""
ALONG = 8
"""Samples across the tile's width, per depth."""
GAP_PX = 2.0
"""Pixels skipped past the located outline (its antialiased edge)."""
LEDGE_CONTRAST = 25.0
LEDGE_DARKNESS = 0.30
LEDGE_RISE = 0.01
"""A rack's ledge: a band at least ``LEDGE_CONTRAST`` from the table around the tiles
(CIELAB), at most ``LEDGE_DARKNESS`` as light as their faces, lightening outward by at
most ``LEDGE_RISE`` of the face: not the table, nor a lying tile's soft shadow (which
lightens outward), nor its side. Measured on the located tiles of 120 rendered scenes
(seeds 60000–60119), as medians over each row of tiles: 521 of 574 rack tiles, and 11
of 2755 lying tiles (two rows on dark tables); a rack's band is 0.16–0.23 as light as
the faces and never lightens by more than 0.01, contrast from 22 (a near-black table)
up. The real black rack in tests/data/real_tiles: 0.04-0.12 as light as the faces,
contrast 21-195."""
LEDGE_STRONG = 60.0
LEDGE_STRONG_DARKNESS = 0.40
"""A rack's ledge seen only in the band's inner half (``BAND_DEPTHS``' first two): at
least ``LEDGE_STRONG`` from the table, at most ``LEDGE_STRONG_DARKNESS`` as light as
the faces, not lightening outward (``LEDGE_RISE``). A ledge seen edge-on is narrower
than the band, so the outer half is table and the whole band lightens outward; a lit
ledge (a lamp's bright spot) is lighter than 0.30 of the faces. Rows of tiles (rendered
seeds 60000-60099): racks told 64 -> 65 of 71, lying rows 0 of 481 either way; the
closest lying rows came to a contrast of 41 with such an inner half (a soft shadow on a
dark table), or darkness 0.50 at a contrast of 64."""
LEDGE_LIT = 80.0
LEDGE_LIT_DARKNESS = 0.55
"""A rack's ledge under a lamp's bright spot: at least ``LEDGE_LIT`` from the table, at
most ``LEDGE_LIT_DARKNESS`` as light as the faces, not lightening outward
(``LEDGE_RISE``). Dev scene 61313 (normal): a black rack's ledge, half of it in the
spot, 0.22-0.54 as light as the faces (median 0.39) at a contrast of 79-122 (median
104), lightening by -0.03-0.01. Rows of located tiles on rendered seeds 60000-60059
(normal) and 60000-60039 (hard): no lying row over a contrast of 96, and none over 60
at darkness 0.6 or less lightens outward by less than 0.016 (lying tiles' soft shadows
lighten by 0.04-0.11); racks told 39 of 42 before and after."""

LEDGE_STARK = 120.0
"""A rack's black ledge seen edge-on on a light table: a band's inner half at least
``LEDGE_STARK`` from the table and at most ``LEDGE_DARKNESS`` as light as the faces
is a ledge whether or not it lightens outward (where the band runs past a narrow
ledge onto the table it does, by up to 0.17 on a tile). Rows of located tiles on
rendered seeds 60000-60199 normal and 60000-60099 hard: of rows this stark, two racks
were told by nothing else (dev 60036 normal, lightening by a median 0.010; 60086 hard,
0.29), and the only tiles not on a rack were two lone tiles already taken for one
(60050 hard); no lying row came within a contrast of 104 at darkness 0.5."""


FAINT_CONTRAST = 15.0
FAINT_DARKNESS = 0.25
FAINT_FLAT = 0.01
"""A faint ledge (``is_faint_ledge``): a dark rack on a dark table, its band only
``FAINT_CONTRAST`` from the table (the ledge a slate grey, the table a dark brown:
contrast 21-24 against ``LEDGE_CONTRAST``'s 25), at most ``FAINT_DARKNESS`` as light as
the faces, neither lightening outward over the band nor changing over its inner half by
more than ``FAINT_FLAT`` of the face (one flat object; a lying tile's outline falls a
little inside the tile, and its inner half darkens outward off the tile's rim). Rows of
3+ located tiles side by side not told by ``is_ledge``, rendered seeds 60000-60399
normal, 60000-60199 hard, 61700-61739 normal: racks 60047, 60358, 60388, 61704 normal
(contrast 22.6-24.0, 0.19-0.20 as light, inner half changing by at most 0.005) and 60135
(21.3); lying rows so flat and dark, only one (60358 normal: contrast 18.6, 0.22 as
light); 20 lying rows dark enough but changing by 0.02-0.15 over the inner half, or
lighter than 0.25."""
FAINT_NEAR_CONTRAST = 50.0
FAINT_NEAR_DARKNESS = 0.22
"""A faint ledge seen over the band's inner half alone (``is_faint_ledge``): at least
``FAINT_NEAR_CONTRAST`` from the table and at most ``FAINT_NEAR_DARKNESS`` as light as
the faces, flat (``FAINT_FLAT``). A rack seen far off at a slant shows a ledge narrower
than the band, which lightens outward onto a light table (dev 61714 and 60296 normal:
inner halves 53.6 and 54.1 from the table, 0.20 as light, changing by 0.002; whole
bands lightening by 0.011 and 0.027). Same rows as ``FAINT_CONTRAST``: lying rows with
such a flat inner half came to 50.6 at 0.25 as light (60101 hard) or 45.5 at 0.21
(60193 hard)."""
FAINT_NEAR_FLAT = 0.015
"""How much such an inner half alone may change (``is_faint_ledge``): a black rack on a
red cloth seen edge-on, its ledge 58.6 from the table and 0.19 as light, changes by 0.011
(dev 61854 normal: read whole-but-for-a-hand as a row of the grid). Rows of 3+ located
tiles on dev 61000-61859 normal and 61000+60, 61300+60, 61500+60, 61900+60 hard:
among those at least ``FAINT_NEAR_CONTRAST`` from the table and at most
``FAINT_NEAR_DARKNESS`` as light, the only one changing by 0.01-0.02 besides was a lying
row (61038 hard, 0.016) on the plane the other tiles fit; of the rows off that plane
with an inner half 45 or more from the table and at most 0.24 as light, none lay."""


PALE_DARKNESS = 0.40
"""A pale ledge (``is_pale_ledge``): a band at least ``FAINT_CONTRAST`` from the table,
at most ``PALE_DARKNESS`` as light as the faces, not lightening outward
(``LEDGE_RISE``) and flat over its inner half (``FAINT_FLAT``): a black ledge in a
lamp's light, lighter than ``LEDGE_DARKNESS`` but far from the faces (dev 61015: 0.35
as light at a contrast of 26, the tiles in the lamp's spot 0.21-0.61; 60398: 0.32 at
44). Not enough alone: the Nummix reader asks the markers' table plane as well. Rows
of 3+ located tiles not told by ``is_ledge``, replayed on dev 60000+600, 61000+100,
61600+40, 61700+40 normal and 60000+300, 61900+40 hard: 3 racks and, among the rows
the markers' plane shows over 0.11 short, no lying row (the one such row dark and flat
enough lay 4 from the table)."""


@dataclass(frozen=True)
class FrontBand:
    """The band at one tile's foot (all in CIELAB, 8-bit OpenCV scale).

    ``contrast``: colour distance of the band from the table around the tile;
    ``darkness``: the band's lightness over the tile face's;
    ``rise``: lightness gained from the band's inner half to its outer half, over the
    face's (a soft shadow lightens outward, a ledge does not);
    ``covered``: share of the band's samples that fell on another located piece;
    ``near_*``: the same three measured on the band's inner half alone."""

    contrast: float
    darkness: float
    rise: float
    covered: float
    near_contrast: float = 0.0
    near_darkness: float = 1.0
    near_rise: float = 0.0


def front_bands(image: npt.NDArray[np.uint8], detections: Detections, *,
                kinds: tuple[str, ...] = ("nummix_tile",), head: bool = False,
                pieces: npt.NDArray[np.int32] | None = None) -> tuple[FrontBand | None, ...]:
    """For each piece of ``kinds`` (quads oriented: clockwise from the upright
    top-left, image pixels), the band at its foot (with ``head``, beyond its head: on
    a rack's lower tier, the upper tier's ledge); None for other pieces and for pieces
    whose band lies outside the image or on other pieces. ``pieces``: the detections'
    ``piece_map`` if drawn already."""
    n = len(detections)
    rows = [i for i in range(n) if detections.kinds[i] in kinds]
    if not rows:
        return (None,) * n
    pieces = piece_map(image, detections) if pieces is None else pieces
    quads = detections.quads[rows]
    if head:
        quads = np.array([rotate_quad(q, 2) for q in quads])
    out: list[FrontBand | None] = [None] * n
    for i, band in zip(rows, _bands(image, pieces, quads, np.array(rows) + 1), strict=True):
        out[i] = band
    return tuple(out)


def _row_medians(bands: Sequence[FrontBand | None]) -> Callable[[str], float] | None:
    """The median of a band field over a row's known ``bands`` (``_band_median``), as a
    function of the field's name; None when no band is known."""
    known = [b for b in bands if b is not None]
    return (lambda field: _band_median(known, field)) if known else None


def _band_median(known: Sequence[FrontBand], field: str) -> float:
    """The median of one field over measured bands (``is_ledge``, ``is_faint_ledge``)."""
    if len(known) == 1:  # one tile's band (the common case; np.median is slow)
        return float(getattr(known[0], field))
    return float(np.median([getattr(b, field) for b in known]))


def is_ledge(bands: Sequence[FrontBand | None]) -> bool:
    """Whether the bands at the feet of a row of tiles (or one tile; medians, the
    unmeasured left out) show a rack's ledge (``LEDGE_*``): over the whole band, or a
    strong one over its inner half (``LEDGE_STRONG``, ``LEDGE_STARK``), or a lit one
    (``LEDGE_LIT``)."""
    median = _row_medians(bands)
    if median is None:
        return False

    if median("rise") <= LEDGE_RISE and (
            (median("contrast") >= LEDGE_CONTRAST and median("darkness") <= LEDGE_DARKNESS)
            or (median("contrast") >= LEDGE_LIT and median("darkness") <= LEDGE_LIT_DARKNESS)):
        return True
    if median("near_contrast") >= LEDGE_STARK and median("near_darkness") <= LEDGE_DARKNESS:
        return True
    return (median("near_contrast") >= LEDGE_STRONG
            and median("near_darkness") <= LEDGE_STRONG_DARKNESS
            and median("near_rise") <= LEDGE_RISE)


def is_faint_ledge(bands: Sequence[FrontBand | None]) -> bool:
    """Whether the bands at the feet of a row of tiles (medians, the unmeasured left
    out) may show a rack's ledge too faint for ``is_ledge`` (``FAINT_*``): dark and flat,
    a little off the table. Not enough alone (a few lying rows on dark tables come
    close): the Nummix reader asks the row's shape as well."""
    median = _row_medians(bands)
    if median is None:
        return False

    near_rise = abs(median("near_rise"))
    whole = (near_rise <= FAINT_FLAT and median("contrast") >= FAINT_CONTRAST
             and median("darkness") <= FAINT_DARKNESS and median("rise") <= FAINT_FLAT)
    return whole or (near_rise <= FAINT_NEAR_FLAT
                     and median("near_contrast") >= FAINT_NEAR_CONTRAST
                     and median("near_darkness") <= FAINT_NEAR_DARKNESS)


def is_pale_ledge(bands: Sequence[FrontBand | None]) -> bool:
    """Whether the bands at the feet of a row of tiles (medians, the unmeasured left
    out) may show a rack's ledge too light for ``is_ledge`` (``PALE_DARKNESS``): off the
    table, flat, and darker than the faces. Not enough alone: the Nummix reader asks the
    table plane as well."""
    median = _row_medians(bands)
    if median is None:
        return False

    return (median("contrast") >= FAINT_CONTRAST and median("darkness") <= PALE_DARKNESS
            and median("rise") <= LEDGE_RISE and abs(median("near_rise")) <= FAINT_FLAT)


SOFT_CONTRAST = 40.0
SOFT_DARKENING = 0.04
"""A soft band (``is_soft_band``): under ``SOFT_CONTRAST`` from the table, its inner half
darkening outward by over ``SOFT_DARKENING`` of the face: a lying tile's light rim, then
its shadow, on a dark table, which ``is_ledge`` can take for a ledge (a ledge is one
flat colour). Rows told by ``is_ledge`` on dev scenes (60000+600, 61000+100, 61600+40,
61700+40, 61100+200 normal; 60000+300, 61900+40, 61300+100 hard): lying rows with such
a band 11 (all hard: 60107, 60237, 61921 read whole and wrong), racks 8 (60147, 60179,
60453 normal), of which 4 lie off the plane the other tiles fit; the Nummix reader lists
the others unknown."""


def is_soft_band(bands: Sequence[FrontBand | None]) -> bool:
    """Whether the bands at the feet of a row of tiles (medians, the unmeasured left out)
    are faint and darken outward over their inner half, as a lying tile's rim and soft
    shadow do (``SOFT_*``): a ledge so told is in doubt."""
    median = _row_medians(bands)
    return median is not None and (median("contrast") < SOFT_CONTRAST
                                   and median("near_rise") < -SOFT_DARKENING)


LIT_DOUBT_CONTRAST = 40.0
LIT_DOUBT_DARKNESS = 0.65
LIT_DOUBT_FLAT = 0.012
"""A band that may be a ledge in a lamp's light (``may_be_lit_ledge``): at least
``LIT_DOUBT_CONTRAST`` from the table, at most ``LIT_DOUBT_DARKNESS`` as light as the
faces, not lightening outward (``LEDGE_RISE``), its inner half flat within
``LIT_DOUBT_FLAT``: a black ledge under a lamp far lighter than ``LEDGE_LIT_DARKNESS``
(dev 61196: 0.57 as light at a contrast of 109; 61240: 0.44 at 48, flat on the markers'
plane), read whole and wrong as a row of the grid. The Nummix reader lists such a row
unknown. Rows of 3+ located tiles not told a rack (dev 60000+600, 61000+100,
61100+200, 61400+100, 61600+40, 61700+40, 61800+60 normal; 60000+300, 61300+100,
61500+60, 61900+40 hard): 5 racks (61196, 61240 normal; 60050, 61355, 61932 hard) and
2 lying rows (60169, 60448 normal; the next lying rows 0.70 as light, or their inner
half darkening by 0.03 or more)."""


def may_be_lit_ledge(bands: Sequence[FrontBand | None]) -> bool:
    """Whether the bands at the feet of a row of tiles (medians, the unmeasured left out)
    may show a rack's ledge lit too brightly for ``is_ledge`` (``LIT_DOUBT_*``): one
    flat band, far from the table, darker than the faces."""
    median = _row_medians(bands)
    if median is None:
        return False

    return (median("contrast") >= LIT_DOUBT_CONTRAST
            and median("darkness") <= LIT_DOUBT_DARKNESS and median("rise") <= LEDGE_RISE
            and abs(median("near_rise")) <= LIT_DOUBT_FLAT)


def lit_inner_half_only(bands: Sequence[FrontBand | None]) -> bool:
    """Whether a row's bands show a ledge (``is_ledge``) only by their inner half lighter
    than ``LEDGE_DARKNESS`` (``LEDGE_STRONG_DARKNESS``' allowance for a lit ledge) while
    the whole band lightens outward: a lit ledge seen edge-on, or a lying tile's shadow
    under a strong light. Rows of located tiles told so (dev 60000+600, 61000+100,
    61100+200, 61400+100, 61600+40, 61700+40, 61800+60 normal; 60000+300, 61300+100,
    61500+60, 61900+40 hard): 13 lying rows (all hard; 61543, 61553 read whole and
    wrong), 1 rack (60198 hard, inner half 0.31 as light); racks told by the inner half
    alone are mostly at most 0.21 as light."""
    median = _row_medians(bands)
    if median is None or not is_ledge(bands):
        return False

    whole = median("rise") <= LEDGE_RISE and (
        (median("contrast") >= LEDGE_CONTRAST and median("darkness") <= LEDGE_DARKNESS)
        or (median("contrast") >= LEDGE_LIT and median("darkness") <= LEDGE_LIT_DARKNESS))
    return not whole and median("near_darkness") > LEDGE_DARKNESS


def ledge_sides(image: npt.NDArray[np.uint8], detections: Detections,
                bands: Sequence[FrontBand | None], *, unsure_below: float = 1.0,
                pieces: npt.NDArray[np.int32] | None = None) -> dict[int, tuple[int, ...]]:
    """Tiles read less sure than ``unsure_below`` with no ledge at their foot but one
    along a side: index -> the quarter turns (1, 3 or both, ``rotate_quad``) that make
    such a side the foot. A tile standing on a rack, seen steeply from above, looks
    nearly square, and its outline may start at a side (it is then read unsure); its
    foot is where the ledge is (seen from above, the rack's dark back can lie along the
    other side: then both)."""
    rows = [i for i, band in enumerate(bands) if detections.kinds[i] == "nummix_tile"
            and float(detections.confidences[i]) < unsure_below and not is_ledge([band])]
    if not rows:
        return {}
    pieces = piece_map(image, detections) if pieces is None else pieces
    turned = np.array([[rotate_quad(detections.quads[i], turns) for turns in (1, 3)]
                       for i in rows], np.float64).reshape(-1, 4, 2)
    found = _bands(image, pieces, turned, np.repeat(np.array(rows) + 1, 2))
    out = {}
    for k, i in enumerate(rows):
        turns = tuple(t for n, t in enumerate((1, 3)) if is_ledge([found[2 * k + n]]))
        if turns:
            out[i] = turns
    return out


def piece_map(image: npt.NDArray[np.uint8], detections: Detections) -> npt.NDArray[np.int32]:
    """Every located piece drawn by its index + 1 (0: nothing located there). A quad
    turned round (``rotate_quad``) draws the same, so one map serves a photo's bands."""
    pieces = np.zeros(image.shape[:2], np.int32)
    for i in range(len(detections)):
        cv2.fillConvexPoly(pieces, np.round(detections.quads[i]).astype(np.int32), i + 1)
    return pieces


def _bands(image: npt.NDArray[np.uint8], pieces: npt.NDArray[np.int32],
           quads: npt.ArrayLike, owners: npt.NDArray[np.int64]) -> list[FrontBand | None]:
    """The band at the foot of each quad (m, 4, 2) of piece ``owners`` (index + 1 in
    ``pieces``), sampled for all quads at once: in front of the foot (``BAND_DEPTHS``),
    the table around the piece (``TABLE_DEPTH``, on no located piece), its face."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    top_left, top_right, bottom_right, bottom_left = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    down = ((bottom_left - top_left) + (bottom_right - top_right)) / 2
    right = ((top_right - top_left) + (bottom_right - bottom_left)) / 2
    tall = np.linalg.norm(down, axis=1)[:, None]
    wide = np.linalg.norm(right, axis=1)[:, None]
    unit_down, unit_right = down / np.maximum(tall, 1e-9), right / np.maximum(wide, 1e-9)
    centre = q.mean(axis=1)

    def at(u: npt.NDArray[np.float64], v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Points (m, k, 2) at ``u`` px along each piece's right and ``v`` px down."""
        out: npt.NDArray[np.float64] = (centre[:, None] + u[..., None] * unit_right[:, None]
                                        + v[..., None] * unit_down[:, None])
        return out

    along = np.linspace(-0.4, 0.4, ALONG)  # across the foot, as shares of the width
    depth = np.asarray(BAND_DEPTHS)
    band = at(np.tile(along, len(depth))[None] * wide,
              tall / 2 + np.repeat(depth, ALONG)[None] * tall + GAP_PX)
    spread = np.linspace(-1.0, 1.0, 5)
    side = np.maximum(tall, wide)  # a rack tile seen foreshortened: past the rack's body
    rings_u, rings_v = [], []
    for reach in np.linspace(*TABLE_DEPTH, 3):  # all four sides, beyond the piece
        for sign in (1.0, -1.0):
            rings_u += [spread[None] * wide / 2, sign * (wide / 2 + reach * side) + 0 * spread]
            rings_v += [sign * (tall / 2 + reach * side) + 0 * spread, spread[None] * tall / 2]
    ring = at(np.concatenate(rings_u, axis=1), np.concatenate(rings_v, axis=1))
    grid = np.linspace(-0.3, 0.3, 5)
    face = at(np.tile(grid, 5)[None] * wide, np.repeat(grid, 5)[None] * tall)
    points = np.concatenate([band, ring, face], axis=1)
    lab, owner = _lab_at(image, pieces, points)
    nb, nr = band.shape[1], ring.shape[1]
    free = owner[:, :nb] == 0
    table_ok = owner[:, nb:nb + nr] == 0
    face_ok = owner[:, nb + nr:] == owners[:, None]
    def median(part: slice, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
        """Each quad's median colour (m, 3) over its samples ``part`` where ``mask``."""
        return _quantile(lab[:, part], mask, 0.5)

    half = nb // 2  # the inner depths come first
    quarter = ALONG * (len(depth) // 4)  # the inner half's own inner and outer depths
    colour = median(slice(0, nb), free)
    table = median(slice(nb, nb + nr), table_ok)
    inner, outer = median(slice(0, half), free[:, :half]), median(slice(half, nb), free[:, half:])
    innermost = median(slice(0, quarter), free[:, :quarter])
    next_out = median(slice(quarter, half), free[:, quarter:half])
    face_light = np.maximum(_quantile(lab[:, nb + nr:, :1], face_ok, 0.75)[:, 0], 1.0)
    per_depth = free.reshape(len(q), len(depth), ALONG).sum(axis=2).min(axis=1)
    measured = ((tall[:, 0] >= 4) & (wide[:, 0] >= 4) & (per_depth >= ALONG // 2)
                & (table_ok.sum(axis=1) >= 5) & (face_ok.sum(axis=1) >= 5))
    out: list[FrontBand | None] = []
    for m in range(len(q)):
        if not measured[m]:
            out.append(None)
            continue
        out.append(FrontBand(contrast=float(np.linalg.norm(colour[m] - table[m])),
                             darkness=float(colour[m, 0] / face_light[m]),
                             rise=float((outer[m, 0] - inner[m, 0]) / face_light[m]),
                             covered=1.0 - float(free[m].mean()),
                             near_contrast=float(np.linalg.norm(inner[m] - table[m])),
                             near_darkness=float(inner[m, 0] / face_light[m]),
                             near_rise=float((next_out[m, 0] - innermost[m, 0])
                                             / face_light[m])))
    return out


def _quantile(values: npt.NDArray[np.float64], mask: npt.NDArray[np.bool_], q: float
              ) -> npt.NDArray[np.float64]:
    """Per row of ``values`` (m, k, c), the ``q`` quantile (linear, as ``np.quantile``)
    of the samples where ``mask`` (m, k); NaN for a row with none. All rows at once."""
    ordered = np.sort(np.where(mask[..., None], values, np.inf), axis=1)  # unmasked last
    rank = q * np.maximum(mask.sum(axis=1) - 1, 0)
    low = np.floor(rank).astype(np.int64)
    high = np.ceil(rank).astype(np.int64)
    rows = np.arange(len(values))
    below, above = ordered[rows, low], ordered[rows, high]
    with np.errstate(invalid="ignore"):
        out: npt.NDArray[np.float64] = below + (rank - low)[:, None] * (above - below)
    out[~mask.any(axis=1)] = np.nan
    return out


def _lab_at(image: npt.NDArray[np.uint8], pieces: npt.NDArray[np.int32],
            points: npt.NDArray[np.float64]
            ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """CIELAB colours (..., 3) at ``points`` (..., 2) (nearest pixel) and the located
    piece there (index + 1; 0 none, -1 off the image)."""
    height, width = image.shape[:2]
    xy = np.round(points).astype(np.int64)
    inside = (xy[..., 0] >= 0) & (xy[..., 0] < width) & (xy[..., 1] >= 0) & (xy[..., 1] < height)
    x = np.clip(xy[..., 0], 0, width - 1)
    y = np.clip(xy[..., 1], 0, height - 1)
    owner = np.where(inside, pieces[y, x], -1).astype(np.int64)
    bgr = np.ascontiguousarray(image[y.ravel(), x.ravel()]).reshape(-1, 1, 3)
    lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB).reshape(*points.shape[:-1], 3)
    return lab.astype(np.float64), owner
