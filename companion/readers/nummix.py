"""Nummix from a photo: the table's tiles snapped to grid cells, racks apart (RULES.md §4).

1. Tiles touching side to side form groups; each group is snapped cell by cell, walking
   from a tile to its neighbour in the tile's own image frame (the frame absorbs the
   camera's perspective and the grid's rotation: cells follow the tiles' own axes).
2. Tiles standing on a rack are read apart: the vision's ``standing`` flag if it gives
   one; else rows of tiles with a rack's ledge at their feet (the bands the vision
   measured there, judged over each row by ``companion.vision.standing.is_ledge``; a
   row whose ledge and the markers' table plane disagree is listed unknown);
   without those, with the table's corner markers (or a profile), a tile that is not a
   27×37 rectangle on the table plane; else a single row whose tiles look much shorter
   or taller than the table's other tiles. A rack's tiles are joined side by side, a
   little apart.
3. Groups that lie on one lattice near each other (constructs side by side, rows apart)
   share a grid; the others are separate grids, written one under another with an
   empty row between them (blank space between groups changes no construct).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.calibration.markers import TABLE_CORNER_IDS
from companion.readers.common import (
    Frame,
    ReadState,
    frame,
    indices,
    linked_groups,
    marker_list,
    unsure,
    within,
)
from companion.vision.detections import Detections, distances
from companion.vision.reading import UNSURE
from companion.vision.standing import (
    is_faint_ledge,
    is_ledge,
    is_pale_ledge,
    is_soft_band,
    lit_inner_half_only,
    may_be_lit_ledge,
)

TILE = np.array([27.0, 37.0])
"""A tile's width and height (mm) as COMPONENTS.md gives them."""
PITCH = TILE + 0.7
"""Centre-to-centre distance of touching tiles (mm): the tile and a thin gap."""
FLAT_ASPECT = 0.09
FLAT_SHEAR = 0.15
FLAT_FAN = 0.12
"""On the table plane from the corner markers, a group of lying tiles is 27×37
rectangles: a tile standing on a rack, seen from the front, maps to a shape shorter by
more than ``FLAT_ASPECT`` of its height, or its corners lean (cosine of the corner
angle) by more than ``FLAT_SHEAR`` (medians over the group), or a row's tiles lean ever
more from one end to the other (cosines spread over ``FLAT_FAN``, leaning a third as
much). Measured on 40 rendered scenes: lying groups' exact quads lean at most 0.025 and
spread 0.027, standing ones at least 0.08 and 0.15; located quads (rectangles in the
photo) of lying groups lean up to 0.18 and spread up to 0.09, and are up to 0.19 short,
standing ones 0.12 short at the median: located quads tell a rack less surely."""
LOWER_TIER = (0.6, 2.5, 2.5)
"""A lower-tier tile lies 0.6-2.5 heights below a rack tile (toward its foot), at most
2.5 widths along it: a rack of two tiers, each tile's foot on its own ledge (the
photos of real racks; rendered racks have one)."""
BESIDE_STEP = (0.6, 1.7)
BESIDE_ACROSS = 0.5
BESIDE_AXIS = math.radians(25)
"""Standing tiles are one rack's when the next is ``BESIDE_STEP`` widths along, at
most ``BESIDE_ACROSS`` heights across and turned at most ``BESIDE_AXIS``: a rack's
tiles stand a little apart, and their outlines, seen at a slant, are short and lean
(up to 18° apart on neighbours in rendered scenes)."""
TURNED_AXIS = math.radians(10)
"""A lone tile turned this close to a quarter from a rack's standing tile beside it is
that rack's, outlined from a side (``_turned_on_rack``). Lone located tiles so placed,
dev 60000-60699 normal and 60500-60699 hard: the 8 on a rack's tile turned 82-90°; 11
others (lying tiles, strays, or rack tiles under half seen) 71-90°, 3 of them (71-77°)
left out at 10° rather than 25°; exact states the same either way."""
RACK_CANDIDATES = 4
"""The largest single rows tried as the rack (each costs one plane fit)."""
RACK_ERROR = 0.06
RACK_MARGIN = 1.5
"""Without a table plane from markers: the plane is fitted to the tiles themselves, and
the single row of 3+ tiles furthest from 27×37 rectangles on it is a rack if its error
exceeds ``RACK_ERROR`` and ``RACK_MARGIN`` times any other group's (lens distortion
bends flat groups a little too)."""
TOUCH_GAP = 0.25
TOUCH_ACROSS = 0.35
"""Touching tiles are at most ``TOUCH_GAP`` (in tile sides) from a pitch apart along
their line, and ``TOUCH_ACROSS`` offset across it: a quarter of a tile's width of table
(7 mm) between two groups, or a group set off by over a third of a tile, keeps them
apart. Located outlines of touching tiles may stand up to a fifth of a tile apart
(blur, a tile's shadow), and a short outline moves its centre across: of 784 touching
pairs of located tiles (rendered seeds 60000–60039) 8 were offset across by more than
0.15 (a column came off its row), one by more than 0.25; no pair of tiles that do not
touch came within these bounds. At 0.35 rather than 0.3: located pairs of rendered
seeds 60000-60199 normal and 60000-60109 hard, touching ones stood up to 0.337 across
(dev 60158, 61812 normal: a column came off its run at 0.32-0.33); of those that do
not touch, only a rack's standing tiles came within 0.4 (0.30-0.38)."""
TOUCH_OVERLAP = 0.35
"""Touching tiles' centres may also stand up to this much (in tile sides) closer than a
pitch: tiles never overlap, so outlines that do were grown over the neighbour or cut
short (dev 60373 normal: o4 outlined 0.85 as wide as b4, 0.30 too close; 60671: r13
outlined 1.19 as tall as Jko, 0.26 too close; each split a construct)."""
JOIN_SNAP = 0.15
"""A group more than this far (in cells) from the lattice point of a grid's tile is
not on that grid's lattice."""
SAME_AXIS = math.radians(3)
"""Groups this close in angle (and on one lattice) may share one grid."""
NEAR = 3
"""Groups this close (cells) may share a grid: constructs in a row or rows apart."""

TOUCH_AXIS = math.radians(18)
"""Tiles turned further apart than this do not line up in one construct. At 18° rather
than 16°: located outlines of touching tiles stood up to 16.4° apart (dev 60129 normal:
a row lost its last tile; 61110 hard); within 18° came, of tiles that do not touch,
only a rack's tiles and two lying tiles beside a rack's end (rendered seeds
60000-60199 normal, 60000-60109 hard; dev 60018, 60042 hard, read wrong either way)."""
ALIGNED_AXIS = math.radians(25)
ALIGNED_ALONG = 0.1
ALIGNED_ACROSS = 0.12
"""Tiles turned up to ``ALIGNED_AXIS`` apart still touch when the one lies right on the
other's pitch: within ``ALIGNED_ALONG`` of it along their line and ``ALIGNED_ACROSS``
across. One blurred tile's outline can turn by 18° where its place is exact (dev 61944
normal: a k5 outlined at -27° between tiles at -43° and -45°, 0.01 from k6's pitch and
0.08 across, split a run of six into two and four; dev 60104 and 60158 hard, 18.4° and
19.4°, 0.09 and 0.10 off). Located pairs turned 18-25° apart and one step apart,
rendered seeds 60000-60149 normal and 60100-60179 hard: those three, and, not touching
(a standing tile and one outlined off its place), 0.17 and 0.22 across."""

Cells = dict[int, tuple[int, int]]

TILE_SURE = UNSURE
"""A tile is used as read only from the classifier's own sure level
(``vision.reading.UNSURE``, under which it asks Tesseract), not the readers' bar
(``MIN_CONFIDENCE``), as Nox cards (``nox.CARD_SURE``) and Rox scoring cards: located
tiles of dev 61000 + 60 normal and 61300 + 60 hard read 0.5-0.8 after every second
look, 11 right and 10 wrong (61326: k15 read k16 at 0.72). Photo -> state, normal
61000, 61200, 61600 + 60: exact 158 -> 157 (61216), whole and wrong 1 -> 0 (61623);
hard 61300 + 60, 61900 + 40: exact 45 -> 44, whole and wrong 5 -> 3."""


def read(detections: Detections, *, markers: Sequence[Any] = (), profile: Any = None,
         **_: Any) -> ReadState:
    tiles = indices(detections, ("nummix_tile",))
    result = ReadState("nummix", {"game": "nummix", "grid": []}, roles=[None] * len(detections))
    bad: set[int] = set()
    for i in tiles:
        problem = unsure(detections, i, "tile", sure_at=TILE_SURE)
        if problem is not None:
            result.unknown.append(problem)
            bad.add(i)
    if not tiles:
        result.notes.append("no tiles found")
        return result
    quads = detections.quads.astype(np.float64)
    groups = _touching_image(quads, tiles)
    for i in _turned_six_or_nine(detections, quads, groups):
        if i not in bad:
            result.unknown.append({"piece": i, "what": "tile", "why": (
                f"read {detections.labels[i]!r} upside down against every tile of its "
                "construct: a 6 and a 9 are one another turned")})
            bad.add(i)
    for i in _small_outlines(quads, tiles):
        if i not in bad:
            result.unknown.append({"piece": i, "what": "tile", "why": (
                f"read {detections.labels[i]!r}, but its outline is under a third of the "
                "tiles' near it: a tile's corner or its number outlined alone")})
            bad.add(i)
    frames = {i: f for g in groups for i, f in _group_frames(quads, g).items()}
    doubted: list[tuple[list[int], str]] = []
    standing = _standing(detections, quads, groups, _table_homography(markers, profile),
                         frames, doubted)
    for row, why in doubted:
        result.unknown.append({"piece": None, "what": "rack", "pieces": row, "why": why})
    for i in _turned_a_quarter(detections, quads, [i for i in tiles if i not in standing]):
        if i not in bad:
            result.unknown.append({"piece": i, "what": "tile", "why": (
                f"read {detections.labels[i]!r} turned a quarter against every lying tile round "
                "it: tiles lie one way up, so it was read sideways")})
            bad.add(i)
    grids = _grids(quads, [g for g in groups if not set(g) & standing], frames)
    lines: list[str] = []
    for g, cells in enumerate(grids):
        r0 = min(r for r, _ in cells.values())
        c0 = min(c for _, c in cells.values())
        rows = max(r for r, _ in cells.values()) - r0 + 1
        cols = max(c for _, c in cells.values()) - c0 + 1
        table = [["."] * cols for _ in range(rows)]
        if lines:
            lines.append(" ".join(["."] * cols))
        for i, (r, c) in cells.items():
            if table[r - r0][c - c0] != ".":
                result.notes.append(f"two tiles on one cell ({r - r0 + 1}, {c - c0 + 1})")
            label = detections.labels[i]
            table[r - r0][c - c0] = "?" if i in bad or label is None else label
            result.roles[i] = {"role": "tile", "grid": g + 1, "row": len(lines) + r - r0 + 1,
                               "column": c - c0 + 1}
        lines.extend(" ".join(row) for row in table)
    width = max((len(line.split()) for line in lines), default=0)
    result.state["grid"] = [" ".join(line.split() + ["."] * (width - len(line.split())))
                            for line in lines]
    if any("?" in line.split() for line in lines):
        result.notes.append("unknown tiles are shown as '?' in the grid: check needs them read")
    racks = _racks(quads, _side_by_side(quads, sorted(standing)))
    result.extra["racks"] = [[detections.labels[i] for i in rack] for rack in racks]
    for k, rack in enumerate(racks):
        for pos, i in enumerate(rack):
            result.roles[i] = {"role": "rack tile", "rack": k + 1, "position": pos + 1}
    if len(grids) > 1:
        result.notes.append(f"{len(grids)} separate grids, written one under another")
    return result


TURNED_PAIRS = ("6", "9")
"""Numbers that read as one another turned round. Tiles in a construct lie one way up
(on every rendered scene), so a 6 or 9 read upside down against all of its
construct's other tiles (two or more) may be the other number read wrongly surely (dev
61040: b9, its outline cut short, read b6 at 0.80, a whole reading and wrong; 61055: k6
read k9 at 0.85). Sure tiles read turned against all of their construct's, dev
61000-61859 normal: 10; both 6s and 9s among them were wrong, of the other 8 (1, 8, 11,
14, 15: much the same either way up) one (r14 for r11)."""
UPSIDE_DOWN = -0.5
"""Two tiles lie opposite ways up when the cosine between their down directions is
under this (turned more than 120° apart; a quarter-turned outline is not upside down)."""


def _turned_six_or_nine(detections: Detections, quads: npt.NDArray[np.float64],
                        groups: list[list[int]]) -> list[int]:
    """Tiles read as a 6 or 9 (``TURNED_PAIRS``) whose way up (their quads start at the
    upright top-left) is opposite to that of every other tile of their group, with two
    others or more: the reading is in doubt, and the tile is reported unsure."""
    out = []
    for g in groups:
        if len(g) < 3 or not all(detections.oriented[i] for i in g):
            continue
        frames = {i: frame(quads[i]) for i in g}
        down = {i: f.down / max(f.height, 1e-9) for i, f in frames.items()}
        for i in g:
            label = detections.labels[i]
            if (label is not None and label[1:] in TURNED_PAIRS
                    and all(float(down[i] @ down[j]) < UPSIDE_DOWN for j in g if j != i)):
                out.append(i)
    return out


QUARTER_TURNED = math.cos(math.radians(45))
QUARTER_ROUND = 2
QUARTER_REACH = 2.2
"""A tile read with its up more than 45° from the up of every located tile whose centre
lies within ``QUARTER_REACH`` of its longer side (a row's tiles two cells along, or
the next one across a one-cell gap), ``QUARTER_ROUND`` of them or more (the
cosine between their down directions under ``QUARTER_TURNED`` either way), was read
sideways: its outline, near square (tiles seen foreshortened), was taken turned a
quarter, and the number read so is in doubt (dev 61908 hard: r1 outlined 51×53 px
turned 88° against the three tiles round it read r14 at 0.89, whole and wrong). Sure
lying tiles so turned, dev normal 61000, 61400, 61600 + 40 and 61100, 61200, 61300,
61500, 61800 + 60, hard 61700, 61900 + 40 and 61000, 61300, 61500 + 60: 10, all read
wrong; whole and wrong there 19 -> 16 (61908, 61316 hard, 61526 normal), no scene
newly unsure that was right. With tiles round it asked within 2.2 of its longer side
rather than ``TOUCH_REACH`` (1.6: a b1 read b14 at the end of a run, 61301 hard, had
one tile so near, the next across a one-cell gap): 16 flagged, all wrong (1.9: 14,
2.0: 15, 2.4: 16, 2.6 and 3.2: 15, never a right one); whole and wrong 15 -> 14;
one wrong tile flagged at 1.6 is not at 2.2 (61726 hard: o14 read o5, a tile lying
its way two cells off; the scene has a hidden piece and 8 other unknowns).
Turned so against a single tile, as many right as wrong; turned half round against all
(read upside down), 17 right, 3 wrong: those are left to ``TURNED_PAIRS``."""


def _turned_a_quarter(detections: Detections, quads: npt.NDArray[np.float64],
                      tiles: list[int]) -> list[int]:
    """Tiles (of the lying ``tiles``) read turned a quarter against every other one
    round them (``QUARTER_TURNED``, ``QUARTER_ROUND``): their outlines were taken
    sideways, the reading is in doubt. A rack's standing tiles face their owner, not
    the table's constructs: they are not asked."""
    asked = [i for i in tiles if detections.oriented[i]]
    frames = [frame(quads[i]) for i in asked]
    centres = np.array([f.centre for f in frames], np.float64).reshape(-1, 2)
    downs = np.array([f.down / max(f.height, 1e-9) for f in frames], np.float64).reshape(-1, 2)
    reach = QUARTER_REACH * np.array([max(f.width, f.height) for f in frames], np.float64)
    near = distances(centres, centres) <= reach[:, None]
    np.fill_diagonal(near, False)
    turned = np.abs(downs @ downs.T) < QUARTER_TURNED
    return [i for k, i in enumerate(asked)
            if near[k].sum() >= QUARTER_ROUND and bool(turned[k][near[k]].all())]


SMALL_TILE = 0.35
SMALL_NEAR = 5
"""A tile outline under ``SMALL_TILE`` of the median area of the ``SMALL_NEAR`` located
tiles nearest it (six tiles or more in the photo) is a tile's corner or number
outlined alone, and its reading is in doubt (as Qwixx's ``SMALL_CARD``; dev 61506
hard: an r13 outlined at 0.21 of its neighbours' area read r7 at 0.87, whole and
wrong). Sure tiles, dev normal 61000, 61400, 61600 + 40 and 61100, 61200, 61300,
61500, 61800 + 60, hard 61700, 61900 + 40 and 61000, 61300, 61500 + 60: under 0.42
five, all wrong (0.13-0.41, three of them turned a quarter too); from 0.43 up, right
and wrong (0.43-0.55: six right, two wrong)."""


def _small_outlines(quads: npt.NDArray[np.float64], tiles: list[int]) -> list[int]:
    """Tiles whose outline is far smaller than the tiles' near it (``SMALL_TILE``)."""
    if len(tiles) <= SMALL_NEAR:
        return []
    q = np.asarray(quads[tiles], np.float64).reshape(-1, 4, 2)
    x, y = q[:, :, 0], q[:, :, 1]
    areas = np.abs(np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y,
                          axis=1)) / 2
    apart = distances(q.mean(axis=1), q.mean(axis=1))
    np.fill_diagonal(apart, np.inf)
    nearest = np.argsort(apart, axis=1, kind="stable")[:, :SMALL_NEAR]
    typical = np.median(areas[nearest], axis=1)
    return [i for k, i in enumerate(tiles) if areas[k] < SMALL_TILE * typical[k]]


def _table_homography(markers: Sequence[Any], profile: Any) -> npt.NDArray[np.float64] | None:
    """Image → table plane (up to scale), from the corner markers or a profile."""
    found = {m.id: m for m in marker_list(markers)}
    if all(i in found for i in TABLE_CORNER_IDS):
        from companion.calibration.table import _table_plane

        plane = _table_plane(found)
        if plane is not None:
            return np.asarray(plane[1], np.float64)
    if profile is not None and getattr(profile, "image_to_table", None) is not None:
        return np.asarray(profile.image_to_table, np.float64)
    return None


def _standing(detections: Detections, quads: npt.NDArray[np.float64], groups: list[list[int]],
              plane: npt.NDArray[np.float64] | None,
              frames: dict[int, Frame] | None = None,
              doubted: list[tuple[list[int], str]] | None = None) -> set[int]:
    """Tiles standing on a rack, not lying on the table (``frames``: the groups'
    ``_group_frames``, computed where needed unless given). Rows whose band shows a
    rack's ledge but which lie flat on the markers' table plane (``_flat_on_the_table``)
    are taken as lying, and rows whose faint ledge darkens outward as a lying tile's rim
    does, on the plane the other tiles fit, as standing: each is added to ``doubted``
    (with why) if given, the signs disagreeing."""
    flags = detections.data.get("standing")
    if flags is not None:
        return {i for g in groups for i in g if flags[i]}
    bands = detections.data.get("front")
    if bands is not None:  # judged rack by rack: its tiles stand side by side
        rows = [i for g in groups if _one_row(quads, g, frames) for i in g]
        chains = _side_by_side(quads, rows)
        lying = [rack for rack in chains
                 if _flat_on_the_table(quads, rack, [bands[i] for i in rack], plane)]
        upper = {i for rack in chains if rack not in lying
                 and is_ledge([bands[i] for i in rack]) for i in rack}
        if doubted is not None:
            doubted.extend((rack, FLAT_LEDGE) for rack in lying
                           if is_ledge([bands[i] for i in rack]))
            doubted.extend((rack, SOFT_LEDGE) for rack in chains if rack not in lying
                           and set(rack) <= upper and is_soft_band([bands[i] for i in rack])
                           and not _off_own_plane(quads, groups, rack, set()))
            doubted.extend((rack, LIT_INNER) for rack in chains if rack not in lying
                           and set(rack) <= upper
                           and lit_inner_half_only([bands[i] for i in rack])
                           and not _off_own_plane(quads, groups, rack, set()))
        upper |= {i for rack in chains if len(rack) >= FAINT_RACK_TILES and rack not in lying
                  and not set(rack) & upper and is_faint_ledge([bands[i] for i in rack])
                  and _off_own_plane(quads, groups, rack, upper) for i in rack}
        upper |= {i for rack in chains if len(rack) >= FAINT_RACK_TILES and rack not in lying
                  and not set(rack) & upper and is_pale_ledge([bands[i] for i in rack])
                  and _short_on_the_table(quads, rack, plane) for i in rack}
        upper |= _turned_on_rack(quads, groups, upper, {
            i for i in rows if detections.labels[i] is None
            or float(detections.confidences[i]) < TILE_SURE})
        if doubted is not None:
            doubted.extend((rack, LIT_LEDGE) for rack in chains
                           if len(rack) >= FAINT_RACK_TILES and not set(rack) & upper
                           and rack not in lying and may_be_lit_ledge([bands[i] for i in rack]))
        return upper | _lower_tier(quads, [i for i in rows if i not in upper], upper,
                                   detections.data.get("head"))
    if plane is not None:
        return _off_plane(quads, groups, plane)
    candidates = [g for g in groups if len(g) >= 3]
    rows = sorted((g for g in candidates if _one_row(quads, g, frames)), key=len,
                  reverse=True)[:RACK_CANDIDATES]
    best: tuple[float, list[int], npt.NDArray[np.float64]] | None = None
    for rack in rows:  # the plane fitted without each candidate row in turn
        rest = [i for g in groups if g is not rack and len(g) >= 2 for i in g]
        if len(rest) < 4:
            continue
        plane = _self_plane(quads, rest)
        fit = float(np.median(np.abs(_shape_errors(quads[rest], plane)).max(axis=1)))
        if best is None or fit < best[0]:
            best = (fit, rack, plane)
    if best is None:
        return set()
    _, rack, plane = best

    def error(g: list[int]) -> float:
        return float(np.median(np.abs(_shape_errors(quads[g], plane)).max(axis=1)))

    worst_other = max((error(g) for g in candidates if g is not rack), default=0.0)
    if error(rack) > RACK_ERROR and error(rack) > RACK_MARGIN * worst_other:
        return set(rack)
    return set()


PLANE_ASKED_BELOW = 44.0
"""A row whose ledge band lies less than this far from the table (median contrast,
``standing.FrontBand``) is asked the table plane from the corner markers too
(``_flat_on_the_table``). Rows of located tiles told by ``is_ledge`` with a plane,
rendered seeds 60000-60399 normal and 60000-60199 hard: under 44, 15 racks all off the
plane and 8 lying rows, 5 flat on it (60254, 60109 normal; 60000, 60054, 60084 hard:
a dark table's soft shadow); the racks flat on it start at 45.5 (60026 normal). Such
a row, its band a ledge by ``is_ledge`` but flat on the plane, is read as lying and
listed unknown (``"what": "rack"``): the two signs disagree, and on dev 60000+600
normal, 60000+300 hard (replayed) 6 such rows lay on the table (60254, 60109, 60598
normal; 60000, 60054, 60084 hard) but 4 stood on racks seen from behind, no shorter on
the plane than lying tiles (60415, 60472, 60501, 60512 normal: three read whole and
wrong). Whole and wrong there 14 -> 11 of 600, whole and right 427 -> 426 (60254)."""


FLAT_LEDGE = ("a rack's ledge at these tiles' feet, yet they lie as 27x37 rectangles on "
              "the table plane from the corner markers: standing on a rack or lying on "
              "the table, not told (read as lying, in the grid)")
SOFT_LEDGE = ("a faint ledge at these tiles' feet that darkens outward as a lying tile's "
              "rim and soft shadow do, and the row is not seen off the plane the other "
              "tiles fit: standing on a rack or lying on the table, not told (read as a "
              "rack)")
LIT_INNER = ("a ledge at these tiles' feet told only by a lit inner half, the band "
             "lightening outward as a shadow does, and the row is not seen off the plane "
             "the other tiles fit: standing on a rack or lying on the table, not told "
             "(read as a rack)")
LIT_LEDGE = ("a flat band at these tiles' feet, far from the table and darker than the "
             "faces, as a rack's ledge in a lamp's light: standing on a rack or lying on "
             "the table, not told (read as lying, in the grid)")
"""Why a row is listed unknown as a possible rack (``_standing``'s ``doubted``). A soft
band (``standing.is_soft_band``) on a row not off its own plane (``_off_own_plane``),
replayed on the same located scenes: whole and wrong hard 61900+40 8 -> 7 (61921),
60000+300 31 -> 29 (60107, 60237); whole and right normal 60000+600 426 -> 425 (60179,
a rack now unsure); 61000+100, 61600+40, 61700+40, 61100+200 normal and 61300+100
hard unchanged. A lit inner half alone (``standing.lit_inner_half_only``) on a row not
off its own plane: whole and wrong hard 60000+300 29 -> 28 (60173), 61500+60 4 -> 3
(61543), nothing else changed in flags. A band that may be a lit ledge
(``standing.may_be_lit_ledge``): whole and wrong normal 61100+100 3 -> 2 (61196),
61200+100 2 -> 1 (61240); whole and right normal 60000+600 425 -> 424 (60448)."""


def _flat_on_the_table(quads: npt.NDArray[np.float64], row: list[int],
                       bands: Sequence[Any], plane: npt.NDArray[np.float64] | None) -> bool:
    """Whether a row whose band at the feet is faint (``PLANE_ASKED_BELOW``) lies as
    27×37 rectangles on the table plane from the markers (``_off_plane`` holds not):
    lying tiles whose shadow on a dark table passes for a ledge (``is_ledge``, or
    ``is_faint_ledge`` with the row off the tiles' own plane: dev 60254 normal)."""
    known = [b.contrast for b in bands if b is not None]
    if plane is None or not known or float(np.median(known)) >= PLANE_ASKED_BELOW:
        return False
    return not _off_plane(quads, [row], plane)


PALE_SHORT = 0.11
"""A row whose band at the feet is a pale ledge (``standing.is_pale_ledge``: a black
ledge in a lamp's light) is a rack when its tiles come out shorter than 27×37 on the
table plane from the corner markers by more than this (median aspect error, as
``FLAT_ASPECT``): a face seen from the front. Rows of 3+ tiles with such a band, not
told by ``is_ledge`` (dev 60000+600, 61000+100, 61600+40, 61700+40 normal, 60000+300,
61900+40 hard): racks 0.435, 0.198, 0.122 short (60157 hard, 61015, 60398 normal);
lying rows 0.091 short (60397 normal) or less."""


def _short_on_the_table(quads: npt.NDArray[np.float64], row: list[int],
                        plane: npt.NDArray[np.float64] | None) -> bool:
    """Whether the row's tiles come out over ``PALE_SHORT`` shorter than 27×37 on the
    table plane from the markers (False without one)."""
    if plane is None:
        return False
    return float(np.median(_shape_errors(quads[row], plane)[:, 0])) < -PALE_SHORT


FAINT_RACK_TILES = 3
"""A row of tiles side by side is taken for a rack on a faint ledge
(``standing.is_faint_ledge``) only from this many tiles, and only if it lies off the
plane the other tiles fit (``_off_own_plane``): the plane is fitted to tiles of
groups, as the fit without markers does (``RACK_CANDIDATES``)."""


def _off_own_plane(quads: npt.NDArray[np.float64], groups: list[list[int]], row: list[int],
                   standing: set[int]) -> bool:
    """Whether the tiles of ``row`` are off the table plane fitted to the other lying
    tiles (groups of two or more, none of ``standing``): its error over ``RACK_ERROR``
    and ``RACK_MARGIN`` times any other group's, as a rack's is without bands. A faint
    ledge and a row's shape are two signs that fail apart: of the rows with a faint
    ledge only (the dev seeds at ``standing.FAINT_CONTRAST``; 60296 and 61714 at
    ``FAINT_NEAR_CONTRAST``), the racks lie off the plane, the one lying row on it (60358
    normal: 0.66 times the worst other group's error). Told so: those 7 racks, no lying
    row; hard 60000-60199 unchanged."""
    taken = set(row) | standing
    others = [g for g in groups if len(g) >= 2 and not set(g) & taken]
    rest = [i for g in others for i in g]
    if len(rest) < 4:
        return False
    plane = _self_plane(quads, rest)

    def error(g: list[int]) -> float:
        return float(np.median(np.abs(_shape_errors(quads[g], plane)).max(axis=1)))

    worst_other = max((error(g) for g in others), default=0.0)
    return error(row) > RACK_ERROR and error(row) > RACK_MARGIN * worst_other


def _turned_on_rack(quads: npt.NDArray[np.float64], groups: list[list[int]],
                    standing: set[int], unread: set[int] | None = None) -> set[int]:
    """Lone tiles (touching none) beside a standing tile as its rack's next tile would
    stand (``BESIDE_STEP``, ``BESIDE_ACROSS`` in its frame) but turned a quarter
    (within ``TURNED_AXIS``): a rack's tile whose outline starts at a side, left out
    of its rack's row by its turn (dev 60550, 60130 normal: such a tile stood in the
    grid as a construct of one); or, of ``unread`` (read unsure), turned any way: a
    rack's end tile outlined askew (dev 61057 normal: turned 30°, read k17 at 0.41,
    stood in the grid as a construct of one '?'). It stays unknown either way."""
    frames = {i: frame(quads[i]) for i in standing}
    out = set()
    for g in groups:
        if len(g) != 1 or g[0] in standing:
            continue
        f = frame(quads[g[0]])
        for s in frames.values():
            turn = abs(math.remainder(f.angle - s.angle, math.pi))
            x, y = s.local(f.centre)
            if ((g[0] in (unread or ()) or abs(turn - math.pi / 2) <= TURNED_AXIS)
                    and BESIDE_STEP[0] <= abs(x) <= BESIDE_STEP[1] and abs(y) <= BESIDE_ACROSS):
                out.add(g[0])
                break
    return out


def _lower_tier(quads: npt.NDArray[np.float64], tiles: list[int], upper: set[int],
                heads: Sequence[Any] | None) -> set[int]:
    """A rack's lower tier: tiles with the upper tier's ledge beyond their head (the
    vision's ``data["head"]``) lying below a rack's tile (``LOWER_TIER`` in its frame),
    and the tiles standing side by side with them whose head is that ledge too or
    hidden by the tile above."""
    if not heads or not upper:
        return set()
    frames = {i: frame(quads[i]) for i in upper}

    def under_rack(t: int) -> bool:
        centre = frame(quads[t]).centre
        for f in frames.values():
            x, y = f.local(centre)
            if LOWER_TIER[0] <= y <= LOWER_TIER[1] and abs(x) <= LOWER_TIER[2]:
                return True
        return False

    seeds = {t for t in tiles if is_ledge([heads[t]]) and under_rack(t)}
    open_heads = [t for t in tiles if heads[t] is None or is_ledge([heads[t]])]
    return {i for chain in _side_by_side(quads, open_heads) if set(chain) & seeds
            for i in chain}


def _side_by_side(quads: npt.NDArray[np.float64], tiles: list[int]) -> list[list[int]]:
    """Standing tiles in racks: each next to the other along its width (``BESIDE_*``;
    only pairs whose centres lie within that step and offset of each other are tested:
    ``common.within``)."""
    frames = {i: frame(quads[i]) for i in tiles}
    own = [frames[i] for i in tiles]
    reach = [BESIDE_STEP[1] * f.width + BESIDE_ACROSS * f.height for f in own]

    def beside(a: int, b: int) -> bool:
        fa, fb = frames[a], frames[b]
        if abs(math.remainder(fa.angle - fb.angle, math.pi)) > BESIDE_AXIS:
            return False
        x, y = fa.local(fb.centre)
        return BESIDE_STEP[0] <= abs(x) <= BESIDE_STEP[1] and abs(y) <= BESIDE_ACROSS

    return linked_groups(tiles, beside, maybe=within(own, reach))


def _shape_errors(quads: npt.NDArray[np.float64], h: npt.NDArray[np.float64]
                  ) -> npt.NDArray[np.float64]:
    """For (n, 4, 2) tile quads mapped by ``h``: (aspect error as a share, cosine of
    the corner angle) per tile — both 0 for a 27×37 rectangle on the plane."""
    pts = np.concatenate([quads.reshape(-1, 2), np.ones((quads.shape[0] * 4, 1))], axis=1)
    mapped = pts @ h.T
    q = (mapped[:, :2] / mapped[:, 2:3]).reshape(-1, 4, 2)
    right = ((q[:, 1] - q[:, 0]) + (q[:, 2] - q[:, 3])) / 2
    down = ((q[:, 3] - q[:, 0]) + (q[:, 2] - q[:, 1])) / 2
    w = np.maximum(np.linalg.norm(right, axis=1), 1e-9)
    hgt = np.maximum(np.linalg.norm(down, axis=1), 1e-9)
    aspect = hgt / w / (TILE[1] / TILE[0]) - 1
    cosine = np.einsum("ij,ij->i", right, down) / (w * hgt)
    out: npt.NDArray[np.float64] = np.stack([aspect, cosine], axis=1)
    return out


def _self_plane(quads: npt.NDArray[np.float64], tiles: list[int]) -> npt.NDArray[np.float64]:
    """The table plane (up to a similarity) from the tiles themselves: the homography
    under which the tiles are 27×37 rectangles, fitted robustly (Levenberg-Marquardt,
    reweighted so a rack's tiles count less). Four unknowns: the horizon and an aspect
    and shear."""
    chosen = quads[tiles]
    pts = chosen.reshape(-1, 2)
    centre, scale = pts.mean(axis=0), float(pts.std()) or 1.0
    norm = np.array([[1 / scale, 0, -centre[0] / scale], [0, 1 / scale, -centre[1] / scale],
                     [0, 0, 1]])

    def homography(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        persp = np.array([[1, 0, 0], [0, 1, 0], [x[0], x[1], 1]])
        affine = np.array([[1, x[2], 0], [0, x[3], 0], [0, 0, 1]])
        out: npt.NDArray[np.float64] = affine @ persp @ norm
        return out

    def residuals(x: npt.NDArray[np.float64], weights: npt.NDArray[np.float64]
                  ) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = _shape_errors(chosen, homography(x)).ravel() * weights
        return out

    x = np.array([0.0, 0.0, 0.0, 1.0])
    weights = np.ones(2 * len(tiles))
    for _ in range(3):
        damping = 1e-3
        current = residuals(x, weights)
        for _ in range(30):
            jac = np.empty((len(current), 4))
            for j in range(4):
                step = np.zeros(4)
                step[j] = 1e-6
                jac[:, j] = (residuals(x + step, weights) - current) / 1e-6
            normal = jac.T @ jac
            delta = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-9),
                                    -jac.T @ current)
            trial = residuals(x + delta, weights)
            if trial @ trial < current @ current:
                x, current, damping = x + delta, trial, damping / 3
                if np.abs(delta).max() < 1e-10:
                    break
            else:
                damping *= 5
        raw = np.abs(residuals(x, np.ones(2 * len(tiles))))
        weights = 1.0 / np.maximum(1.0, raw / 0.02)
    return homography(x)


def _off_plane(quads: npt.NDArray[np.float64], groups: list[list[int]],
               plane: npt.NDArray[np.float64], *, rows_only: bool = False) -> set[int]:
    """Groups whose tiles are not 27×37 rectangles on the plane (only single rows
    with ``rows_only``)."""
    out: set[int] = set()
    for g in groups:
        if rows_only and not _one_row(quads, g):
            continue
        errs = _shape_errors(quads[g], plane)
        shorter = float(np.median(errs[:, 0])) < -FLAT_ASPECT  # a face seen from the front
        lean = float(np.median(np.abs(errs[:, 1])))
        fan = float(np.ptp(errs[:, 1])) if len(g) >= 3 else 0.0  # leaning ever more along
        sheared = lean > FLAT_SHEAR or (fan > FLAT_FAN and lean > FLAT_SHEAR / 3)
        if shorter or sheared:
            out.update(g)
    return out


TOUCH_REACH = 1.6
"""Tiles whose centres lie further apart than this many of the first's longer side are
not tested for touching (a neighbour's centre lies a pitch away, 1.0-1.3 sides)."""


def _touching_image(quads: npt.NDArray[np.float64], tiles: list[int]) -> list[list[int]]:
    """Groups of tiles touching side to side, judged in each tile's own image frame, or,
    where that keeps them apart, with a side cut short mended (``_mended_frames``;
    pairs ``TOUCH_REACH`` apart are screened out for all pairs at once first:
    ``common.within``)."""
    frames = {i: frame(quads[i]) for i in tiles}
    mended = _mended_frames(quads, tiles)
    own = [frames[i] for i in tiles]

    def touching(a: int, b: int) -> bool:
        return touching_as(frames[a], frames[b]) or (
            (a in mended or b in mended)
            and touching_as(mended.get(a, frames[a]), mended.get(b, frames[b])))

    def touching_as(fa: Frame, fb: Frame) -> bool:
        if np.linalg.norm(fb.centre - fa.centre) > TOUCH_REACH * max(fa.width, fa.height):
            return False
        turned = abs(math.remainder(fa.angle - fb.angle, math.pi))
        if turned > ALIGNED_AXIS:
            return False  # (a tile read upside down still lies along the same axis)
        step = _shared([fa, fb], fa.centre).local(fb.centre)
        if turned > TOUCH_AXIS:  # one outline turned: only a neighbour right on its pitch
            return _neighbour(step, gap=ALIGNED_ALONG, overlap=ALIGNED_ALONG,
                              across=ALIGNED_ACROSS) is not None
        return _neighbour(step) is not None

    return linked_groups(tiles, touching, maybe=within(
        own, [TOUCH_REACH * max(f.width, f.height) for f in own]))


CUT_SHORT = 0.85
SIZE_NEAR = 4
SIZE_REACH = 3.0
"""A located outline whose width (or height) is under ``CUT_SHORT`` of the median of the
``SIZE_NEAR`` nearest other located tiles lying along its axes (within ``TOUCH_AXIS``,
their centres within ``SIZE_REACH`` of its longer side) was cut short round its own
tile: steps to its neighbours are measured with that median side instead
(``_mended_frames``). Tiles near each other are seen alike (perspective changes
slowly), and only an outline shorter than theirs is mended, so a real gap between
well outlined tiles is measured as before (dev 61425 normal: b17 and b16 outlined
20 px wide where their neighbours are 25-26, their centres a true pitch apart, a step
of 1.29 of their own width split a run). Only a side cut while the other is as near
theirs (within the same share) is mended: tiles all seen smaller or larger than their
neighbours are not cut, and mending them split pairs whose outlines overlap. Pairs so
judged only where their own sizes keep them apart, so no pair touching before is
split. Located tiles of the dev ranges at ``QUARTER_TURNED``: truly touching pairs
split 109 -> 104 of 12137 (61425 normal; 61021, 61049, 61321, 61337 hard), tiles of
two constructs joined 12 -> 12; states changed on 5 scenes, 61425 now exact, whole
and wrong 16 -> 15, none newly wrong."""


def _mended_frames(quads: npt.NDArray[np.float64], tiles: list[int]) -> dict[int, Frame]:
    """The tiles of ``tiles`` with one side cut short (``CUT_SHORT``), each its own frame
    with that side set to the median of the located tiles near it (every row of
    ``quads``: Nummix locates tiles only), its other side as near theirs."""
    mended = _mended_rows(np.ascontiguousarray(quads, np.float64).tobytes())
    return {i: mended[i] for i in tiles if i in mended}


@functools.lru_cache(maxsize=4)
def _mended_rows(data: bytes) -> dict[int, Frame]:
    """``_mended_frames`` of every row of the quads (as bytes: the walk of each group
    asks again of the same photo's quads). The sides and axes of all are measured at
    once, as ``quad_axes`` does one by one."""
    q = np.frombuffer(data, np.float64).reshape(-1, 4, 2)
    right = ((q[:, 1] - q[:, 0]) + (q[:, 2] - q[:, 3])) / 2
    down = ((q[:, 3] - q[:, 0]) + (q[:, 2] - q[:, 1])) / 2
    sides = np.stack([np.linalg.norm(right, axis=1), np.linalg.norm(down, axis=1)], axis=1)
    angles = np.arctan2(right[:, 1], right[:, 0])
    apart = distances(q.mean(axis=1), q.mean(axis=1))
    turned = np.abs(np.remainder(angles[:, None] - angles[None, :] + math.pi / 2, math.pi)
                    - math.pi / 2)
    near = (apart <= SIZE_REACH * sides.max(axis=1)[:, None]) & (turned <= TOUCH_AXIS)
    np.fill_diagonal(near, False)
    order = np.argsort(np.where(near, apart, np.inf), axis=1, kind="stable")[:, :SIZE_NEAR]
    counted = np.take_along_axis(near, order, axis=1).sum(axis=1)
    out = {}
    for i in range(len(q)):
        k = int(counted[i])
        if k < 2:
            continue
        width, height = np.median(sides[order[i, :k]], axis=0).tolist()
        wide, tall = sides[i, 0] / max(width, 1e-9), sides[i, 1] / max(height, 1e-9)
        if wide < CUT_SHORT and abs(tall - 1) <= 1 - CUT_SHORT:  # its width alone cut
            height = float(sides[i, 1])
        elif tall < CUT_SHORT and abs(wide - 1) <= 1 - CUT_SHORT:
            width = float(sides[i, 0])
        else:
            continue
        f = frame(q[i])
        out[i] = Frame(f.centre, f.right * (width / max(f.width, 1e-9)),
                       f.down * (height / max(f.height, 1e-9)))
    return out


def _shared(frames: list[Frame], centre: npt.NDArray[np.float64]) -> Frame:
    """A frame at ``centre`` with the tiles' right and down vectors averaged, each
    turned to agree with the way most tiles face (a tile read upside down counts the
    same, and does not turn its group: dev 60629 normal, an unsure tile read upside
    down first in a run wrote the run backwards): one tile's outline is a few pixels
    off, the group's average much less."""
    ref = max(frames, key=lambda f: sum(float(np.sign(f.right @ g.right)) for g in frames))
    rights, downs = [], []
    for f in frames:
        flip = -1.0 if float(f.right @ ref.right) < 0 else 1.0
        rights.append(flip * f.right)
        downs.append(flip * f.down)
    right, down = np.mean(rights, axis=0), np.mean(downs, axis=0)
    return Frame(np.asarray(centre, np.float64), right, down)


def _neighbour(xy: tuple[float, float], *, gap: float = TOUCH_GAP,
               overlap: float = TOUCH_OVERLAP, across: float = TOUCH_ACROSS
               ) -> tuple[int, int] | None:
    """The side neighbour a displacement (in tile sides) points to, if it is one: at most
    ``gap`` further or ``overlap`` closer than a pitch along, ``across`` off its line."""
    x, y = xy
    step = (round(x / (PITCH[0] / TILE[0])), round(y / (PITCH[1] / TILE[1])))
    if abs(step[0]) + abs(step[1]) != 1:
        return None
    ex = x - step[0] * PITCH[0] / TILE[0]
    ey = y - step[1] * PITCH[1] / TILE[1]
    off, aside = (ex, ey) if step[0] else (ey, ex)
    off *= 1.0 if step[0] + step[1] > 0 else -1.0  # > 0: a gap, < 0: outlines overlap
    if not -overlap <= off <= gap or abs(aside) > across:
        return None
    return int(step[0]), int(step[1])


def _one_row(quads: npt.NDArray[np.float64], group: list[int],
             frames: dict[int, Frame] | None = None) -> bool:
    """Whether a touching group's tiles snap to a single row of cells (``frames`` as
    ``_snap_image``)."""
    return len({r for r, _ in _snap_image(quads, group, frames).values()}) == 1


def _group_frames(quads: npt.NDArray[np.float64], group: list[int]) -> dict[int, Frame]:
    """Each tile of a group in the group's shared frame (its tiles' axes averaged, each
    tile at its own centre): steadier than the tile's own. The axes are the group's, the
    same for every tile: averaged once."""
    own = [frame(quads[i]) for i in group]
    shared = _shared(own, own[0].centre)
    return {i: Frame(np.asarray(f.centre, np.float64), shared.right, shared.down)
            for i, f in zip(group, own, strict=True)}


NEIGHBOUR_REACH = max(PITCH / TILE) + max(TOUCH_GAP, TOUCH_OVERLAP) + TOUCH_ACROSS
"""No side neighbour (``_neighbour``) lies further from a tile's centre than this many of
its frame's longer side (a pitch, the gap or overlap along, the offset across): the
walk of ``_snap_image`` tests only the tiles this close (``common.within``)."""


def _snap_image(quads: npt.NDArray[np.float64], group: list[int],
                frames: dict[int, Frame] | None = None) -> Cells:
    """Cells of a touching group, walking from tile to neighbour in the group's shared
    frame (``_group_frames``, computed here unless given), each step measured in the
    two tiles' own mean size (``_pair_sized``) as ``_touching_image`` measured it: in
    the group's mean size, a neighbour outlined wide stood too far (dev 61913 hard: Jrb
    outlined 40 px wide beside a 29 px b13, touching at 0.14 of a side but a step of
    0.35 in the group's size, split off its run; readings otherwise identical on dev
    60000+150, 61600+40, 61700+40 normal and 61900+40 hard, one scene of 60000+80
    hard laid out differently, wrong and unsure either way); where that step is no
    neighbour's, again with a side cut short mended, as ``_touching_image`` did."""
    frames = frames if frames is not None else _group_frames(quads, group)
    own = [frames[i] for i in group]
    near = within(own, [NEIGHBOUR_REACH * max(f.width, f.height) for f in own])
    place = {i: k for k, i in enumerate(group)}
    sizes = {i: frame(quads[i]) for i in group}
    mended: dict[int, Frame] | None = None  # measured only where a step needs it
    cells: Cells = {group[0]: (0, 0)}
    todo = [group[0]]
    while todo:
        a = todo.pop()
        ra, ca = cells[a]
        for m in np.flatnonzero(near[place[a]]).tolist():
            b = group[m]
            if b in cells:
                continue
            step = _neighbour(_pair_sized(frames[a], sizes[a], sizes[b]).local(
                frames[b].centre))
            if step is None:
                mended = _mended_frames(quads, group) if mended is None else mended
                if a in mended or b in mended:
                    step = _neighbour(_pair_sized(frames[a], mended.get(a, sizes[a]),
                                                  mended.get(b, sizes[b])).local(
                                                      frames[b].centre))
            if step is not None:
                cells[b] = (ra + step[1], ca + step[0])
                todo.append(b)
    return cells


def _pair_sized(group_frame: Frame, one: Frame, other: Frame) -> Frame:
    """``group_frame`` (a tile in its group's axes) with sides the mean of two tiles'
    own: the size ``_touching_image`` measured the pair in."""
    width = (one.width + other.width) / 2
    height = (one.height + other.height) / 2
    return Frame(group_frame.centre, group_frame.right * (width / group_frame.width),
                 group_frame.down * (height / group_frame.height))


def _grids(quads: npt.NDArray[np.float64], groups: list[list[int]],
           frames: dict[int, Frame] | None = None) -> list[Cells]:
    """Groups snapped to cells; groups on one lattice near each other share a grid. The
    tiles of a group that no walk from its first tile reaches (they touch it, but off
    its lattice: dev 60601 normal, an o1 half a tile down from the o2 it touches) are
    snapped as a group of their own, never left out. ``frames``: the groups'
    ``_group_frames`` (computed here unless given)."""
    if frames is None:
        frames = {i: f for g in groups for i, f in _group_frames(quads, g).items()}
    grids: list[Cells] = []
    todo = sorted(groups, key=len, reverse=True)
    while todo:
        g = todo.pop(0)
        cells = _snap_image(quads, g, frames)
        rest = [i for i in g if i not in cells]
        if rest:  # touching, but no step from its neighbours lands on a cell: its own
            todo.append(rest)
        for k, grid in enumerate(grids):
            joined = _join(frames, grid, cells)
            if joined is not None:
                grids[k] = {**grid, **joined}
                break
        else:
            grids.append(cells)
    return sorted(grids, key=lambda c: min(frames[i].centre[1] for i in c))


def _join(frames: dict[int, Any], grid: Cells, cells: Cells) -> Cells | None:
    """The group's cells on the grid's lattice, if the group lies on it (seen from the
    grid's nearest tile), near it and touching none of its tiles."""
    a, b = _nearest_pair(frames, list(grid), list(cells))
    fa, fb = frames[a], frames[b]
    if abs(math.remainder(fa.angle - fb.angle, math.pi)) > SAME_AXIS:
        return None
    x, y = fa.local(fb.centre)
    x, y = x / (PITCH[0] / TILE[0]), y / (PITCH[1] / TILE[1])
    step = (round(y), round(x))
    if abs(y - step[0]) > JOIN_SNAP or abs(x - step[1]) > JOIN_SNAP or abs(step[0]) + abs(
            step[1]) > NEAR:
        return None
    dr = grid[a][0] + step[0] - cells[b][0]
    dc = grid[a][1] + step[1] - cells[b][1]
    out = {i: (r + dr, c + dc) for i, (r, c) in cells.items()}
    taken = set(grid.values())
    for r, c in out.values():
        if {(r, c), (r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)} & taken:
            return None
    return out


def _nearest_pair(frames: dict[int, Any], first: list[int], second: list[int]
                  ) -> tuple[int, int]:
    """The pair (one of ``first``, one of ``second``) whose centres lie nearest, the
    first such in their order: the distances of all pairs are computed at once, and only
    the pairs within a hair of the least are measured again one by one (as the pairs
    were once all measured), so a last-bit difference cannot change which is taken."""
    one = np.array([frames[i].centre for i in first], np.float64).reshape(-1, 2)
    two = np.array([frames[i].centre for i in second], np.float64).reshape(-1, 2)
    apart = distances(one, two)
    close = np.argwhere(apart <= apart.min() * (1 + 1e-9) + 1e-9)  # row-major: in order
    pairs = [(first[int(r)], second[int(c)]) for r, c in close]
    return min(pairs, key=lambda ab: float(
        np.linalg.norm(frames[ab[0]].centre - frames[ab[1]].centre)))


def _racks(quads: npt.NDArray[np.float64], groups: list[list[int]]) -> list[list[int]]:
    """Racks, each left to right as its owner reads the tiles."""
    out = []
    for rack in groups:
        right = np.mean([frame(quads[i]).right for i in rack], axis=0)
        out.append(sorted(rack, key=lambda i: float(frame(quads[i]).centre @ right)))
    return out
