"""Nummix tiles' own steps after the first reading: outlines round two or three
touching tiles cut apart, unsure tiles read through a tile-sized outline, one stepped
over from a sure neighbour or the nearest sure tile's outline moved onto them, tiles
the locator missed found beside sure ones, and tiles
standing on a rack read standing on its ledge (``feet_on_ledges``, with
``companion.vision.standing``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.align import fit_card_outline
from companion.vision.detections import (
    Detections,
    cut_across,
    quad_axes,
    quad_iou,
    reach_circles,
    rectify,
    rotate_quad,
    side_lengths,
    within_reach,
)
from companion.vision.reading import (
    EDGE_FITS,
    PROBABILITIES,
    UNSURE,
    Image,
    Model,
    Reading,
    available_model,
    down_vector,
    load_model,
    portrait_first,
    read_quads,
    softmax,
    stepped_outlines,
    stepped_over,
    surer_readings,
    top_labels,
    with_readings,
)
from companion.vision.strays import (
    STRAY_DARKER,
    TILE_STRAY_CHROMA,
    face_colours,
    unlike_face,
)

TILE_PAIR_AREA = (1.4, 3.5)
"""A Nummix tile outline this many times the median area of the tiles near it
(``TILE_PAIR_NEAR``) may be two or three touching tiles the locator took for one, read
unsure or (now and then) surely wrong: three tiles k4 k5 k6 in one outline read k11 at
0.94 (rendered seed 7405, easy). Located outlines of 1.4 tiles' area or more, dev seeds
61200-61239 and 61300-61339 (normal and hard, 154): of the 78 round one tile (50 read
sure), none had its parts all read sure cut in two to seven; of the unsure ones round
two or three tiles, 32 were cut into parts read sure and right (unsure ones at 1.6-2.6
in two only: 28), from 1.42 up, two tiles at 2.67 (61302 hard) and three at 1.97
(61321 hard); none cut wrong. Outlines round five tiles (4.5-5) never read sure in
parts. Tiles wrong, unknown, missed or stray in the grids of the 80 hard scenes: 294 ->
285 (exact states unchanged, normal and hard)."""


TILE_PARTS = (2, 3, 4)
"""The parts such an outline is cut in, fewest first (``split_joined_tiles``). Four: a
run of four tiles whose outline has only 2.7 tiles' area beside bigger neighbours
(hard dev 61526: r4-r7 read sure and right in quarters)."""
TILE_FOUR_AREA = 2.5
"""Outlines are cut in four only from this many tiles' area up."""
TILE_CUT_SHIFTS = (-0.15, 0.15)
"""When no equal cut of an outline reads all sure, the equal cut read surest is read
again with its cuts moved along the long side by these shares of a part (the outline
sits off its tiles' seams: it starts partway into the next tile), and kept moved if its
parts all read sure (the surer of the two). Moving every cut (2, 3 and 4 parts) read
5 times the crops at hard (11 -> 57 a photo) for the same tiles; moving the surest one
only: 11 -> 22 at hard, 2.2 -> 2.9 at normal (dev 61200-61219).
Hard dev 61500-61539: two more outlines split sure and right (b16 b17 b1, k5 r5); of 61
outlines of 1.4-5.5 tiles' area, no cut, equal or moved, read all sure and wrong. With
the four parts: located tiles read right there 1035 -> 1043 of 1074 -> 1082 matched,
surely wrong unchanged (13), exact states unchanged (also normal 61200 and 61300)."""


TILE_PAIR_NEAR = 2.5
"""Tiles whose centre lies within this many of the outline's long side count as near;
with fewer than two near, the outline is measured against all the photo's other tiles
(dev 60000 normal: o7 and b10 at the end of a column, one outline of 2.2 tiles' area
with one tile near, read b5 at 0.20; cut in two, both read sure and right)."""


def split_joined_tiles(read: Detections, balanced: Image, model: Model) -> Detections:
    """Nummix tile outlines of two or three tiles' area (``TILE_PAIR_AREA``) cut across
    their long side into ``TILE_PARTS`` equal parts, kept so cut in the fewest parts that
    all read sure (else cut with the cuts moved along, ``TILE_CUT_SHIFTS``): two to four
    touching tiles with faint seams come out of the locator as one outline, read unsure
    or surely wrong."""
    tiles = [i for i in read if read.kinds[i] == "nummix_tile"]
    if len(tiles) < 3:
        return read
    quads = read.quads[tiles].astype(np.float64)
    centres = quads.mean(axis=1)
    areas = np.abs(np.array([cv2.contourArea(q.astype(np.float32)) for q in quads]))
    cuts: list[tuple[int, list[npt.NDArray[np.float32]]]] = []
    for k, i in enumerate(tiles):
        q = quads[k]
        sides = side_lengths(q)
        distance = np.linalg.norm(centres - centres[k], axis=1)
        near = (distance > 0) & (distance <= TILE_PAIR_NEAR * sides.max())
        if near.sum() < 2:
            near = distance > 0
        ratio = areas[k] / max(float(np.median(areas[near])), 1.0)
        if not TILE_PAIR_AREA[0] <= ratio <= TILE_PAIR_AREA[1]:
            continue
        cuts += [(i, [portrait_first(part, model.size) for part in cut_across(q, parts)])
                 for parts in TILE_PARTS if ratio >= TILE_FOUR_AREA or parts < 4]
    if not cuts:
        return read
    readings = iter(read_quads(model, balanced, [part for _, cut in cuts for part in cut]))
    chosen: dict[int, tuple[list[npt.NDArray[np.float32]], list[Reading]]] = {}
    nearest: dict[int, tuple[float, int]] = {}  # the equal cut read surest, for moving
    for i, cut in cuts:
        read_parts = [next(readings) for _ in cut]
        least = min(r.probs.max() for r in read_parts)
        if i not in chosen and least >= UNSURE:
            chosen[i] = cut, read_parts  # (the fewest parts first)
        if least > nearest.get(i, (-1.0, 0))[0]:
            nearest[i] = least, len(cut)
    moved = [(i, [portrait_first(part, model.size) for part in
                  cut_across(read.quads[i], parts, shift=shift)])
             for i, (_, parts) in nearest.items() if i not in chosen
             for shift in TILE_CUT_SHIFTS]
    readings = iter(read_quads(model, balanced, [part for _, cut in moved for part in cut]))
    for i, cut in moved:
        read_parts = [next(readings) for _ in cut]
        least = min(r.probs.max() for r in read_parts)
        if least >= max(UNSURE, nearest[i][0]):
            chosen[i], nearest[i] = (cut, read_parts), (least, len(cut))
    split: dict[int, Detections] = {}
    for i, (cut, read_parts) in chosen.items():
        tops = [top_labels(model.labels, r.probs) for r in read_parts]
        split[i] = Detections(
            np.asarray([rotate_quad(start, 2) if r.turned else start
                        for start, r in zip(cut, read_parts, strict=True)], np.float32),
            ("nummix_tile",) * len(cut), labels=tuple(label for label, _, _ in tops),
            confidences=np.asarray([conf for _, conf, _ in tops], np.float32),
            oriented=(True,) * len(cut),
            data={"alternatives": tuple(alt for _, _, alt in tops),
                  PROBABILITIES: tuple(r.probs for r in read_parts)})
    if not split:
        return read
    kept = read.select([i for i in read if i not in split])
    return Detections.concat([kept, *split.values()])


TILE_SIZE_OFF = (0.6, 1.3)
TILE_SIZE_NEAR = 5
TILE_SIZE_MOST = 2
"""An unsure Nummix tile outline covering less than 0.6 or more than 1.3 of a tile (the
median short and long sides of the ``TILE_SIZE_NEAR`` sure tiles nearest it) and with
no rack's ledge at its foot or along a side is read again through tile-sized outlines
in it or round it (``tile_sized``): at most ``TILE_SIZE_MOST`` a photo, the surest
first (27 outlines each, ~10 ms). On dev seeds 61200-61239 and 61300-61339 (hard) it
took another outline 30 times: 28 unknown tiles then read sure and right, one sure and
wrong, one outline on no tile read sure (with no bound and 36 outlines each: 51 times,
45 right, 2 wrong, 4 on no tile, at 47 ms a hard photo on average, up to 300; without
the ledge test, a stray on a rack's end, dropped onto the rack before, read k4 at 0.86
into the grid). Hard: tiles wrong, unknown, missed or stray in the grids 285 -> 264;
exact states unchanged (normal 38 + 37, hard 10 + 17); dev 61536 normal (an outline
running onto the next tile, k7 read k2 at 0.19) read exactly. CPU in it, seeds
61900-61919: normal 5 ms a photo on average (median 0), hard 14."""


def tile_sized(read: Detections, balanced: Image, model: Model) -> Detections:
    """Unsure Nummix tiles off a rack's ledge whose outline is far from the size of the
    sure tiles near it (``TILE_SIZE_OFF``, ``TILE_SIZE_MOST``) read again through
    outlines of that size at each of its corners, the middles of its sides and its
    centre, along its own sides (either way up) and its nearest sure tile's; the surest
    is kept if sure, surer and no other located tile's (``STEP_OVERLAP``): the locator
    outlines a tile now and then with its neighbour's edge or the table, or round its
    number alone. Tiles at a ledge are left to ``feet_on_ledges``."""
    tiles = [i for i in read if read.kinds[i] == "nummix_tile"]
    sure = [i for i in tiles if float(read.confidences[i]) >= UNSURE]
    doubtful = [i for i in tiles if float(read.confidences[i]) < UNSURE]
    if len(sure) < 2 or not doubtful:
        return read
    sure_quads = read.quads[sure].astype(np.float64)
    sides = np.array([side_lengths(q) for q in sure_quads])
    across, along_sides = (sides[:, 0] + sides[:, 2]) / 2, (sides[:, 1] + sides[:, 3]) / 2
    shorts, longs = np.minimum(across, along_sides), np.maximum(across, along_sides)
    centres = sure_quads.mean(axis=1)
    found: list[tuple[int, npt.NDArray[np.float64], float, float, int]] = []
    for i in sorted(doubtful, key=lambda i: -float(read.confidences[i])):
        q = read.quads[i].astype(np.float64)
        near = np.argsort(np.linalg.norm(centres - q.mean(axis=0), axis=1))[:TILE_SIZE_NEAR]
        short, long = float(np.median(shorts[near])), float(np.median(longs[near]))
        ratio = abs(cv2.contourArea(q.astype(np.float32))) / max(short * long, 1.0)
        if not TILE_SIZE_OFF[0] <= ratio <= TILE_SIZE_OFF[1]:
            found.append((i, q, short, long, int(near[0])))
    if found:  # a tile at a rack's ledge is left to feet_on_ledges (a rack's end: no tile)
        from companion.vision.standing import front_bands, is_ledge, ledge_sides, piece_map

        pieces = piece_map(balanced, read)
        bands = front_bands(balanced, read, pieces=pieces)
        standing = ledge_sides(balanced, read, bands, unsure_below=UNSURE, pieces=pieces)
        found = [f for f in found if f[0] not in standing and not is_ledge([bands[f[0]]])]
    tries: list[tuple[int, npt.NDArray[np.float32]]] = []
    for i, q, short, long, nearest in found[:TILE_SIZE_MOST]:
        for frame_quad, turns in ((q, 2), (sure_quads[nearest], 1)):
            along = (frame_quad[1] - frame_quad[0] + frame_quad[2] - frame_quad[3]) / 2
            along /= max(float(np.linalg.norm(along)), 1e-9)
            down = np.array([-along[1], along[0]])
            w, h = (float(np.ptp(q @ axis)) for axis in (along, down))
            for wide, tall in ((short, long), (long, short))[:turns]:
                a, b = along * wide, down * tall
                for u, v in itertools.product((-0.5, 0.0, 0.5), repeat=2):
                    p = (q.mean(axis=0) + u * (w - wide) * along + v * (h - tall) * down
                         - (a + b) / 2)
                    tries.append((i, portrait_first(np.array([p, p + a, p + a + b, p + b],
                                                             np.float32), model.size)))
    others = [read.quads[k] for k in tiles]  # only those within reach can overlap
    within = within_reach([t for _, t in tries], *reach_circles(others))
    tries = [(i, outline) for (i, outline), ks in zip(tries, within, strict=True) if not any(
        tiles[k] != i and quad_iou(outline, others[k]) >= STEP_OVERLAP for k in ks)]
    return with_readings(read, model, surer_readings(read, balanced, model, tries))


STEP_PITCH = 1.02
"""Touching tiles' centres lie a tile's side and a thin gap apart (PITCH in
companion/readers/nummix.py: 0.7 mm on 27 and 37 mm)."""


STEP_OVERLAP = 0.3
"""A stepped outline overlapping another located tile this much (IoU) is that tile's."""


def stepped_from_neighbours(read: Detections, balanced: Image, model: Model) -> Detections:
    """Unsure Nummix tiles read again through a sure neighbour's outline stepped one tile
    over (``STEP_PITCH``) whose centre lies in the unsure one's outline and that is no
    other located tile's (``STEP_OVERLAP``), kept (with that outline) if sure and surer:
    in a group of touching tiles the seams are faint, and the locator's outline can
    straddle one, half on the next tile."""
    tiles = [i for i in read if read.kinds[i] == "nummix_tile"]
    sure = [i for i in tiles if float(read.confidences[i]) >= UNSURE]
    doubtful = [i for i in tiles if float(read.confidences[i]) < UNSURE]
    if not sure or not doubtful:
        return read
    tries = stepped_outlines({i: read.quads[i] for i in tiles}, sure, doubtful,
                             pitch=STEP_PITCH, overlap=STEP_OVERLAP)
    return with_readings(read, model, surer_readings(read, balanced, model, tries))


STANDING_SHEARS = (-1.0, -0.75, -0.5, -0.25, 0.25, 0.5, 0.75, 1.0)
"""A tile standing on a rack, seen at a slant, is a parallelogram, its sides leaning
along the rack; its located outline is a rectangle about it. An unsure standing tile
is read again through parallelograms in the outline: its sides leaning by these shares
of its height along its foot, the outline's length kept or shortened by the lean
(``_sheared``). Kept if sure (``UNSURE``), the right way up and surer than before."""


def _sheared(quad: npt.NDArray[np.float32], shear: float, *, narrowed: bool
             ) -> npt.NDArray[np.float32]:
    """The parallelogram about ``quad``'s centre with its top and foot along the quad's
    and as far apart, its sides leaning by ``shear`` of that height along the foot; as
    long as the quad, or (``narrowed``) shorter by the lean, so it spans the quad."""
    centre, right, down = quad_axes(quad)
    length = max(float(np.linalg.norm(right)), 1e-9)
    along = right / length
    across = down - float(down @ along) * along
    height = float(np.linalg.norm(across))
    width = max(length - abs(shear) * height, 0.3 * length) if narrowed else length
    side = across + shear * height * along
    half = width / 2 * along
    out: npt.NDArray[np.float32] = np.array(
        [centre - half - side / 2, centre + half - side / 2, centre + half + side / 2,
         centre - half + side / 2], np.float32)
    return out


def feet_on_ledges(read: Detections, balanced: Image, models_dir: Path | None
                    ) -> Detections:
    """Nummix tiles get the band at each one's foot (``data["front"]``: a rack's ledge or
    the table, ``companion.vision.standing``) and beyond its head (``data["head"]``). A
    tile with a ledge along a side instead stands on it, read a quarter turn off: it is
    read again standing on the ledge, and kept so if that reading is surer than the
    first and the right way up (the ledge is the evidence; an unsure reading is still
    reported unsure); read no surer, it keeps its reading but its outline is still
    turned to stand on the ledge, so that the Nummix reader puts it on the rack (dev
    scene 61325: an unknown rack tile seen from above, outlined across the rack, stood
    in the grid as '?'). An unsure tile standing on a ledge (at its foot or along a
    side) is also read through parallelograms in its outline (``STANDING_SHEARS``)."""
    from companion.vision.standing import front_bands, is_ledge, ledge_sides, piece_map

    pieces = piece_map(balanced, read)  # the same for the tiles turned below
    bands = front_bands(balanced, read, pieces=pieces)
    if models_dir is None or not available_model("nummix_tile", models_dir):
        return read.with_fields(data={**read.data, "front": bands, "head": front_bands(
            balanced, read, head=True, pieces=pieces)})
    sides = ledge_sides(balanced, read, bands, unsure_below=UNSURE, pieces=pieces)
    feet = {**{i: (0,) for i in read if read.kinds[i] == "nummix_tile"
               and float(read.confidences[i]) < UNSURE and is_ledge([bands[i]])}, **sides}
    feet = {**_feet_as_neighbours(read, bands, feet), **feet}
    model = load_model("nummix_tile", models_dir)
    if feet:  # the quarter turns that put a ledge at each standing tile's foot
        confidences = read.confidences.copy()
        changes: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]] = {}
        tries = [(i, turns[0], rotate_quad(read.quads[i], turns[0]), True)
                 for i, turns in feet.items() if turns != (0,)]
        tries += [(i, turns[0], _sheared(rotate_quad(read.quads[i], turns[0]), shear,
                                         narrowed=narrowed), False)
                  for i, turns in feet.items() for shear in STANDING_SHEARS
                  for narrowed in (False, True)]
        for _ in range(2):  # then, for those still unsure, outlines fitted to the face
            for (i, turn, _, plain), again in zip(tries, read_quads(
                    model, balanced, [quad for _, _, quad, _ in tries]), strict=True):
                upright = (turn + 2 * again.turned) % 4  # the reading's foot on a ledge
                sure = float(again.probs.max())
                if (upright not in feet[i] or sure <= float(confidences[i])
                        or (not plain and sure < UNSURE)):
                    continue
                changes[i] = (rotate_quad(read.quads[i], upright), again.probs)
                confidences[i] = sure
            still = [i for i in feet if float(confidences[i]) < UNSURE]
            if not still:
                break
            smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
            starts = {i: rotate_quad(read.quads[i], feet[i][0]) for i in still}
            tries = [(i, feet[i][0], fit, False) for i in still for fit in fit_card_outline(
                smooth, starts[i], aspect=_own_aspect(starts[i]), count=EDGE_FITS)]
        probabilities = read.data.get(PROBABILITIES, (None,) * len(read))
        for i, turns in feet.items():  # no surer reading: still, the ledge is its foot
            if i not in changes and turns != (0,) and probabilities[i] is not None:
                changes[i] = (rotate_quad(read.quads[i], turns[0]), probabilities[i])
        if changes:
            read = with_readings(read, model, changes)
            bands = front_bands(balanced, read, pieces=pieces)
    read, bands = _against_the_row(read, balanced, model, bands, pieces)
    return read.with_fields(data={**read.data, "front": bands,
                                  "head": front_bands(balanced, read, head=True, pieces=pieces)})


def _own_aspect(quad: npt.NDArray[np.float32]) -> float:
    """A quad's long over short side (the means of opposite sides)."""
    sides = side_lengths(quad)
    a, b = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    return float(max(a, b) / max(min(a, b), 1e-6))


ROW_REACH = 1.6
"""Sure tiles standing on a ledge whose centres lie within this many of a tile's long
side stand in its row (a rack holds its tiles side by side)."""


ROW_ALIGNED = 0.7
"""The quarter turn of a tile whose foot points the row's way (cosine at least this)
puts its foot on the row's ledge."""


def _row_turns(read: Detections, bands: Sequence[Any], rows: Sequence[int], *,
               neighbours: int = 1) -> dict[int, int]:
    """Tiles ``rows`` beside at least ``neighbours`` sure tiles standing on a ledge
    (``ROW_REACH``): index -> the quarter turn that puts the tile's foot where theirs
    is (``ROW_ALIGNED``; 0 when it is there already)."""
    from companion.vision.standing import is_ledge

    standing = [i for i in read if read.kinds[i] == "nummix_tile"
                and float(read.confidences[i]) >= UNSURE and is_ledge([bands[i]])]
    if len(standing) < neighbours:
        return {}
    centres = read.quads[standing].mean(axis=1)
    downs = np.array([down_vector(read.quads[i], False) for i in standing], np.float64)
    downs /= np.maximum(np.linalg.norm(downs, axis=1, keepdims=True), 1e-9)
    out = {}
    for i in rows:
        q = read.quads[i]
        reach = ROW_REACH * float(side_lengths(q).max())
        near = ((np.linalg.norm(centres - q.mean(axis=0), axis=1) <= reach)
                & (np.array(standing) != i))
        if near.sum() < neighbours:
            continue
        way = downs[near].mean(axis=0)
        way /= max(float(np.linalg.norm(way)), 1e-9)
        cosines = []
        for turn in range(4):
            down = down_vector(rotate_quad(q, turn), False).astype(np.float64)
            cosines.append(float(down @ way) / max(float(np.linalg.norm(down)), 1e-9))
        best = int(np.argmax(cosines))
        if cosines[best] >= ROW_ALIGNED:
            out[i] = best
    return out


def _against_the_row(read: Detections, balanced: Image, model: Model,
                     bands: Sequence[Any], pieces: npt.NDArray[np.int32]
                     ) -> tuple[Detections, Sequence[Any]]:
    """Sure Nummix tiles with no ledge at their foot, beside a sure tile standing on one
    (in its row, ``ROW_REACH``), turned the other way (a quarter or half turn) with a
    ledge at the foot so turned: read again standing so (``_read_standing``), and kept
    so, sure or not. The model reads a slanted tile's outline from the wrong side surely
    now and then (a 6 as a 9, r16 a quarter turn off as r5); the ledge settles which way
    is up, and the reading that way is the tile's, unsure if so (dev 61127: k13 and r16
    read k5 and r5 at 0.87 and 0.83 stood in the grid; standing, k13 at 0.95 and r16 at
    0.59 go on the rack). With one standing neighbour rather than two, and unsure
    readings kept: dev exact normal 61100+40 34 -> 35 (61127, its two tiles beside one
    standing tile each), 60040+40 30 -> 31, 60400+40 35 -> 36 (60434: k14 read k2 at
    0.90, now k14 at 0.46); hard 61800+40 16 -> 17; normal 60000, 61800, 61900 and hard
    60000 unchanged. 13 tiles turned in those 320 scenes: 12 had been read sure and
    wrong (now 3 sure and right, 8 unsure with the right label first, one unsure), one
    lying b8 sure and right is now unsure (0.81 -> 0.60)."""
    from companion.vision.standing import front_bands, is_ledge

    rows = [i for i in read if read.kinds[i] == "nummix_tile"
            and float(read.confidences[i]) >= UNSURE and not is_ledge([bands[i]])]
    turns = {i: t for i, t in _row_turns(read, bands, rows).items() if t}
    if not turns:
        return read, bands
    turned = read.with_fields(quads=np.array([
        rotate_quad(q, turns.get(i, 0)) for i, q in enumerate(read.quads)], np.float32))
    ledge = front_bands(balanced, turned, pieces=pieces)
    again = [i for i in turns if is_ledge([ledge[i]])]
    if not again:
        return read, bands
    readings = _read_standing(model, balanced, [turned.quads[i] for i in again])
    read = with_readings(read, model, {i: (turned.quads[i], probs)
                                       for i, probs in zip(again, readings, strict=True)})
    return read, front_bands(balanced, read, pieces=pieces)


def _read_standing(model: Model, balanced: Image, quads: Sequence[npt.NDArray[np.float32]]
                   ) -> list[npt.NDArray[np.float64]]:
    """Label probabilities of pieces known to stand upright in ``quads`` (as
    ``read_crops`` scores them, given the piece is not upside down)."""
    if not quads:
        return []
    crops = np.stack([rectify(balanced, q, size=model.size) for q in quads])
    opposite = np.stack([rectify(balanced, rotate_quad(q, 2), size=model.size) for q in quads])
    both = softmax(model.logits(np.concatenate([crops, opposite])))
    k = len(model.labels)
    p0 = both[:len(quads)].reshape(-1, k, 2)
    p1 = both[len(quads):].reshape(-1, k, 2)
    upright = np.sqrt(p0[:, :, 0] * p1[:, :, 1])
    return list(upright / np.maximum(upright.sum(axis=1, keepdims=True), 1e-12))


def _feet_as_neighbours(read: Detections, bands: Sequence[Any],
                        feet: dict[int, tuple[int, ...]]) -> dict[int, tuple[int, ...]]:
    """Unsure Nummix tiles not in ``feet`` (no ledge found at a side of their own: the
    band hidden or outside the photo, or the outline wider than the tile) but beside a
    sure tile standing on one: index -> the quarter turn that stands them its way
    (``_row_turns``)."""
    rows = [i for i in read if read.kinds[i] == "nummix_tile"
            and float(read.confidences[i]) < UNSURE and i not in feet]
    return {i: (turn,) for i, turn in _row_turns(read, bands, rows).items()}



MISSED_SURE = 0.8
"""A tile the locator missed, read through a sure neighbour's outline stepped one tile
over, is kept from this confidence up (``missed_beside_sure``). Dev seeds 60000-60079,
60400-60439, 61100-61139, 61800-61839 and 61900-61939 normal, 60000-60039 and
61800-61839 hard: 17 tiles added (read 0.81-0.99), every one on a tile the locator had
missed (IoU 0.61-0.91 with it) and read right, none on the table; exact normal 61800
37 -> 38 (dev 61805: Jrk outlined with r2), hard 60000 16 -> 17."""


def missed_beside_sure(read: Detections, balanced: Image, model: Model) -> Detections:
    """Tiles the locator missed beside a sure one, added: the sure tile's outline stepped
    one tile over (``STEP_PITCH``) onto no located tile (its centre in none, no overlap
    of ``STEP_OVERLAP``), with a face like the sure tiles' (neither ``TILE_STRAY_CHROMA``
    off in colour nor ``STRAY_DARKER`` darker) and read sure (``MISSED_SURE``). The
    locator now and then misses a tile faint on a light table or outlines it with its
    neighbour (cut back to one tile by ``tile_sized``); a tile read unsure is not added,
    it stays missed rather than a guess. A step reaching past the photo's edge is not
    tried: its crop repeats the edge pixels, and a sure tile at the edge mirrored there
    read as a tile (dev 61721 normal: an o9 at the bottom edge gave an o1 at 0.83 wholly
    off the photo, in the grid; of the 28 tiles added on dev 60000-60299 and 61700-61739
    normal and 60000-60149 hard, the other 27 lay wholly within the photo)."""
    tiles = [i for i in read if read.kinds[i] == "nummix_tile"]
    sure = [i for i in tiles if float(read.confidences[i]) >= UNSURE]
    if len(sure) < 3:
        return read
    taken = [read.quads[i].astype(np.float32) for i in tiles]
    steps = [moved for j in sure for moved in stepped_over(read.quads[j], pitch=STEP_PITCH)]
    near_tiles = within_reach(steps, *reach_circles(taken))
    near_steps = within_reach(steps, *reach_circles(steps))
    kept: list[int] = []  # steps taken as tries, in order: each shadows the later ones
    kept_set: set[int] = set()  # the same, to ask whether a step is kept
    height, width = balanced.shape[:2]
    for m, moved in enumerate(steps):
        if not (np.all(moved >= 0) and np.all(moved[:, 0] <= width - 1)
                and np.all(moved[:, 1] <= height - 1)):
            continue  # read past the photo's edge, the crop is its edge pixels repeated
        centre = tuple(float(v) for v in moved.mean(axis=0))
        if not any(cv2.pointPolygonTest(o, centre, False) >= 0
                   or quad_iou(moved, o) >= STEP_OVERLAP
                   for o in [taken[k] for k in near_tiles[m]]
                   + [steps[k] for k in near_steps[m].tolist() if k in kept_set]):
            kept.append(m)
            kept_set.add(m)
    tries = [steps[m] for m in kept]
    usual = np.median(face_colours(balanced, [read.quads[i] for i in sure]), axis=0)
    tries = [t for t, face in zip(tries, face_colours(balanced, tries), strict=True)
             if not unlike_face(face, usual, chroma=TILE_STRAY_CHROMA, darker=STRAY_DARKER)]
    found = [(t, r) for t, r in zip(tries, read_quads(model, balanced, tries), strict=True)
             if float(r.probs.max()) >= MISSED_SURE]
    if not found:
        return read
    tops = [top_labels(model.labels, r.probs) for _, r in found]
    added = Detections(
        np.asarray([rotate_quad(t, 2) if r.turned else t for t, r in found], np.float32),
        ("nummix_tile",) * len(found), labels=tuple(label for label, _, _ in tops),
        confidences=np.asarray([conf for _, conf, _ in tops], np.float32),
        oriented=(True,) * len(found),
        data={"alternatives": tuple(alt for _, _, alt in tops),
              PROBABILITIES: tuple(r.probs for _, r in found)})
    return Detections.concat([read, added])


FACING_ALONG = 0.25
FACING_ACROSS = 0.35
"""A tile's centre a side and a thin gap (``STEP_PITCH``) from a sure lying tile's along
one of its axes, within ``FACING_ALONG`` along and ``FACING_ACROSS`` across (in its
sides; the Nummix reader's touching bounds), lies beside it in one construct
(``facing_neighbours``)."""


def _side_neighbour(sure: npt.NDArray[np.float32], other: npt.NDArray[np.float32]) -> bool:
    """Whether ``other``'s centre lies where a side neighbour touching the ``sure`` tile
    would (``FACING_ALONG``, ``FACING_ACROSS``), whichever way its own outline starts."""
    centre, right, down = quad_axes(sure)
    x, y = np.linalg.solve(np.stack([right, down], axis=1),
                           np.asarray(other, np.float64).mean(axis=0) - centre)
    return any(abs(along - STEP_PITCH) <= FACING_ALONG and across <= FACING_ACROSS
               for along, across in ((abs(x), abs(y)), (abs(y), abs(x))))


def facing_neighbours(read: Detections, balanced: Image, model: Model) -> Detections:
    """Unsure lying Nummix tiles (no ledge at their foot, ``data["front"]``) turned a
    quarter or half turn from the sure lying tiles they touch (``_side_neighbour``),
    which all face one way: read again turned their way, given they face it
    (``_read_standing``), and kept so if surer. Tiles of one construct face one way; a
    located outline that starts at a side is read squashed sideways (located table
    tiles, dev 60000-60699 normal and 60500-60699 hard: of 103 read under 0.5 with
    their outline a quarter turn off their tile, 10 were right). Loose tiles lie any
    way: only touching neighbours say which way a tile faces (the real tile photos,
    read worse when any sure tile near counted). Table tiles read right, unknown, wrong
    (at 0.5 or surer): hard 60620+60 1334, 77, 33 -> 1346, 65, 33; hard 60500+60 1242,
    85, 32 -> 1250, 76, 33. Exact hard 60620+60 15 -> 17; normal 60000, 60250, 60600
    and hard 60500 (+60) unchanged."""
    sure, doubtful = _lying_sure_and_doubtful(read)
    if not sure or not doubtful:
        return read
    downs = np.array([down_vector(read.quads[i], False) for i in sure], np.float64)
    downs /= np.maximum(np.linalg.norm(downs, axis=1, keepdims=True), 1e-9)
    turns: dict[int, int] = {}
    for i in doubtful:
        q = read.quads[i]
        near = [k for k, j in enumerate(sure) if _side_neighbour(read.quads[j], q)]
        if not near:
            continue
        way = downs[near].mean(axis=0)
        way /= max(float(np.linalg.norm(way)), 1e-9)
        if min(float(downs[k] @ way) for k in near) < ROW_ALIGNED:
            continue  # the neighbours do not all face one way
        cosines = []
        for turn in range(4):
            turned_down = down_vector(rotate_quad(q, turn), False).astype(np.float64)
            cosines.append(float(turned_down @ way)
                           / max(float(np.linalg.norm(turned_down)), 1e-9))
        best = int(np.argmax(cosines))
        if best and cosines[best] >= ROW_ALIGNED:
            turns[i] = best
    if not turns:
        return read
    turned = {i: rotate_quad(read.quads[i], t) for i, t in turns.items()}
    readings = _read_standing(model, balanced, list(turned.values()))
    changes = {i: (turned[i], probs) for i, probs in zip(turns, readings, strict=True)
               if float(probs.max()) > float(read.confidences[i])}
    if not changes:
        return read
    return _with_feet_measured(with_readings(read, model, changes), balanced)


NEAREST_SHIFTS = (-0.3, -0.15, 0.0, 0.15, 0.3)
NEAREST_SURE = 0.9
"""An unsure lying Nummix tile is read again through the outline of the sure lying tile
nearest it moved onto its centre and from there by these shares of that outline's sides
along each of its axes (25 outlines), kept only from ``NEAREST_SURE``
(``nearest_sure_outline``), and only if it names one of the tile's own top three.
Unsure lying tiles at normal difficulty are mostly partly under a hand; the rest, and
most at hard, have an outline off their tile (a square across a seam, a rectangle round
a sheared tile) and read sure through their true one. Lying tiles under 0.8 at the end
of the reading, the surest try's label at 0.8 / 0.9 / 0.95 (without the top-three
check), right and wrong: dev 61000-61299 normal 10 / 2, 8 / 0, 4 / 0 (of 60);
60500-60599 hard 52 / 5, 23 / 1, 6 / 1 (of 228). As the reading's step (0.9, top
three): 4 tiles changed on 61000-61299 normal, all right; 29 on 60500-60699 hard, one
wrong (an unknown k15 read k2 at 0.90 through a try a third on it)."""


NEAREST_MOST = 6
"""At most this many unsure tiles a photo are read so, the least sure first (those the
reader would report unknown): each costs 50 crops, ~20 ms."""


def nearest_sure_outline(read: Detections, balanced: Image, model: Model) -> Detections:
    """Unsure Nummix tiles with no ledge at their foot (``data["front"]``) read again
    through the outline of the nearest sure one so lying, moved onto the unsure one's
    centre and by ``NEAREST_SHIFTS`` about it, overlapping no other located tile
    (``STEP_OVERLAP``); the surest kept (with its outline) if sure to ``NEAREST_SURE``
    and surer. Tiles lying side by side on the table are outlined alike; the sure one's
    outline has the size and slant the unsure one's should have."""
    sure, doubtful = _lying_sure_and_doubtful(read)
    if not sure or not doubtful:
        return read
    tiles = [i for i in read if read.kinds[i] == "nummix_tile"]
    centres = read.quads[sure].astype(np.float64).mean(axis=1)
    tries: list[tuple[int, npt.NDArray[np.float32]]] = []
    for i in sorted(doubtful, key=lambda i: float(read.confidences[i]))[:NEAREST_MOST]:
        centre = read.quads[i].astype(np.float64).mean(axis=0)
        nearest = read.quads[sure[int(np.argmin(np.linalg.norm(centres - centre, axis=1)))]]
        middle, right, down = quad_axes(nearest)
        tries += [(i, (nearest - middle + centre + u * right + v * down).astype(np.float32))
                  for u, v in itertools.product(NEAREST_SHIFTS, repeat=2)]
    others = [read.quads[k].astype(np.float32) for k in tiles]
    near = within_reach([t for _, t in tries], *reach_circles(others))
    tries = [(i, t) for (i, t), ks in zip(tries, near, strict=True)
             if not any(tiles[k] != i and quad_iou(t, others[k]) >= STEP_OVERLAP for k in ks)]
    alternatives = read.data.get("alternatives", ((),) * len(read))
    changes = {i: change for i, change in surer_readings(read, balanced, model, tries).items()
               if float(change[1].max()) >= NEAREST_SURE
               and model.labels[int(change[1].argmax())] in {a for a, _ in alternatives[i]}}
    if not changes:
        return read
    return _with_feet_measured(with_readings(read, model, changes), balanced)


def _lying_sure_and_doubtful(read: Detections) -> tuple[list[int], list[int]]:
    """The Nummix tiles with no ledge at their foot (``data["front"]``): those read sure
    (``UNSURE``) and those not."""
    from companion.vision.standing import is_ledge

    bands = read.data.get("front", (None,) * len(read))
    lying = [i for i in read if read.kinds[i] == "nummix_tile" and not is_ledge([bands[i]])]
    return ([i for i in lying if float(read.confidences[i]) >= UNSURE],
            [i for i in lying if float(read.confidences[i]) < UNSURE])


def _with_feet_measured(read: Detections, balanced: Image) -> Detections:
    """``read`` with the bands at its tiles' feet and heads (``data["front"]``,
    ``data["head"]``) measured again: some of its outlines moved."""
    from companion.vision.standing import front_bands, piece_map

    pieces = piece_map(balanced, read)
    return read.with_fields(data={**read.data, "front": front_bands(balanced, read, pieces=pieces),
                                  "head": front_bands(balanced, read, head=True, pieces=pieces)})
