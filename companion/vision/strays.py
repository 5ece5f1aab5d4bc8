"""Pieces that are no pieces: a fingertip, a patch of table or a scrap of a tile the
locator outlined, read unsure, whose face is unlike the photo's sure pieces' in colour,
or far smaller or larger, or apart from them all (``without_strays``, one rule a
kind)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.detections import (
    MIN_CONFIDENCE,
    Detections,
    rectify,
)
from companion.vision.reading import (
    UNSURE,
    Image,
)

STRAY_CHROMA = 12.0
STRAY_DARKER = 20.0
"""An unsure Nummix "tile" whose face (the lighter half of its crop, CIELAB) is at least
``STRAY_CHROMA`` from the photo's sure tiles' in colour and ``STRAY_DARKER`` darker is
no tile (a fingertip, a shadow on a hand). Located tiles of rendered seeds 60000-60099
normal: 2915 tiles' faces at most 12.2 off in colour (99.9 % within 9.1; the one
tile past 10 was 118 darker), none dropped; 8 of the 13 strays dropped (at 10 and 15
darker: one tile and 9 strays). The same holds Cat in the Box cards' white faces to
their sure neighbours': on dev scenes 61300-61339 (normal) it dropped the fingers read
as unknown cards in 61303 and 61308, and no card in 160 scenes."""


TILE_STRAY_CHROMA = 10.0
"""``STRAY_CHROMA`` for Nummix tiles. Unsure located tiles at ``without_strays``, dev
seeds 61200-61239 and 61300-61339 (normal and hard, 218 on tiles, 46 on none): every
tile at least 10 off in colour and 20 darker was under a hand (visible 0.15-0.66, read
unsure or wrong either way); 10 rather than 12 drops two more strays 20 darker (a
finger in dev 61317 normal, 11.3 off and 28 darker, stood in the grid as '?')."""


SURE_STRAY_CHROMA = 15.0
SURE_STRAY_DARKER = 25.0
"""A Nummix "tile" read sure whose face is at least ``SURE_STRAY_CHROMA`` from the
photo's sure tiles' in colour and ``SURE_STRAY_DARKER`` darker is no tile either: a
hand's fingers read as a tile surely (dev 61700 normal: b1 at 0.94, 25.9 off and 54
darker; 61550 hard: k4 at 0.81, 26.9 and 53). Sure located tiles, dev 61000-61859
normal (15152 on a tile) and 61000+60, 61300+60, 61500+60, 61900+60 hard (6175): those
on a tile at least 12 off in colour were lighter than the usual face, but one (61054
hard, a tile a fifth under a hand: 14.2 off, 56 darker); the one other sure stray so
dark (61808 normal, fingers read k14 at 0.95) is 13.9 off, left."""


TINY_TILE = 0.2
"""An unsure Nummix "tile" whose outline covers less than this share of the median area
of the photo's sure tiles is no tile (a scrap of a face's edge or of the table). Unsure
located tiles at ``without_strays``, dev seeds 61200-61239 and 61300-61339 (normal and
hard, 264 outlines): of the 218 on a tile, the smallest covered 0.18 (an outline on a
tenth of a hard scene's tile, read b4 for b12 at 0.09), the next 0.22; of the 46 on
none, 2 covered less than 0.2 (0.19, and 0.11 in dev 61300 normal: a corner of a rack
tile that stood in the grid as '?')."""


HUGE_TILE = 2.8
"""An unsure Nummix "tile" whose outline covers more than this many times the median
area of the photo's sure tiles is no tile: a hand's fingers outlined together (joined
tiles are cut apart before, ``split_joined_tiles``). Unsure located tiles at
``without_strays``, dev seeds 60000-60119, 61100-61139 and 61800-61839 normal and
60000-60059 hard (265 outlines): the 8 covering 3.0 times or more lay on no tile but one
(4.0, a tile under a hand, dropped by its colour anyway), among them the fingers that
stood in dev 60064's grid as '?' (5.7, only 8 off in colour, not alone); the largest on
a tile covered 2.57."""


COVERED_TILE = 0.5
"""An unsure Nummix "tile" whose outline lies at least this much (share of its area)
inside the photo's sure tiles' outlines is no tile of its own: a scrap outlined across
two touching tiles (dev 61934 normal: 0.86 covered, read o7 at 0.10, stood in the grid
as '?'). Unsure located tiles at ``without_strays``, dev seeds 60000-60079, 61100-61139
and 61900-61939 normal, 60000-60039 and 61800-61839 hard: the outlines with a tile of
their own (one whose centre no sure outline holds) were at most 0.3 covered; over 0.3
only outlines with none (0.36-0.86)."""


LONE_TILE = 2.5
"""An unknown Nummix "tile" (read under ``MIN_CONFIDENCE``) ``STRAY_DARKER`` darker than
the sure tiles, whose nearest located tile stands at least this many tile sizes (square
root of the sure tiles' median area) off, is no tile, whatever its colour: a fingertip
of a hand reaching in, which white balance leaves near the faces' colour (dev 60007,
60134, 60155 normal: 3-7 off, 29-90 darker, 7.8-12 sizes from any tile). Unsure tiles
of rendered seeds 60000-60199 normal and 60000-60099 hard: 16 such, 15 on no tile, one
on a tile 0.38 under a hand (read unknown either way); the closest lone tiles this
dark were 2.2-2.47 off."""


EDGE_TILE_BELOW = 0.15
EDGE_TILE_PX = 4.0
EDGE_TILE_APART = 1.3
"""An unknown Nummix "tile" read under ``EDGE_TILE_BELOW`` whose outline reaches within
``EDGE_TILE_PX`` of the photo's edge, its centre ``EDGE_TILE_APART`` tile sizes or more
from every other located tile's (beyond any side neighbour), is no tile: a patch of
table, a rack's end or a hand outlined where the photo cuts them off (dev 60261, 60656
normal and 60656 hard: read 0.04-0.05, each stood in the grid as a construct of one
'?'; exact normal 60250+60 51 -> 52, 60600+60 44 -> 45, hard 60620+60 14 -> 15).
Located tiles read under 0.5 within 8 px of the edge, dev 60000-60699 normal and
60500-60699 hard: the 12 on tiles (all but one on a rack) stood 0.59-0.89 sizes from
the next tile; of the 9 on none, 5 stood 1.34-2.34 apart and read 0.04-0.09."""


NOX_DOUBTFUL = 0.95
"""Nox cards read less sure than this are held to the sure cards' face colour
(``without_strays``). At 0.9 rather than ``UNSURE``, dev scenes, exact: 61200 normal
88 -> 89 of 100, 61300 normal 87 -> 88, 61400 normal 81 -> 83; 61200 hard 32 of 60
unchanged. At 0.95, with the retrained ``nox_card``, which read a hand's fingers as an
11 at 0.92 (dev 61329): 61300 normal 35 -> 36 of 40; 61200, 61400, 61500, 61600, 61700
normal and 61200, 61300 hard unchanged."""


NOX_COVERED = 0.25
NOX_SCRAP = 0.5
"""A Nox card read less sure than ``NOX_DOUBTFUL``, covering under ``NOX_SCRAP`` of the
sure cards' median area, whose outline lies at least ``NOX_COVERED`` (share of its
area) inside the sure cards' outlines is no card of its own: a scrap of a card's
corner or edge outlined apart, read as its corner index (dev 60023: 0.17 of a card's
area, 0.84 inside, read 4 at 0.89, a stack too many; 61437: 0.38, 0.36 inside, read 15
at 0.75). A whole card's outline grown over its neighbour (a square-looking card read
along its row) is no scrap.
Doubtful located cards of dev 60000-60039, 61100-61139, 61400-61439 normal and
60400-60439, 61100-61139 hard (106): the 62 centred on a true card at most 0.07
inside; of the 44 on none, 5 at 0.2 or more (0.2, 0.28, 0.3, 0.36, 0.84)."""
NOX_LONE = 3.0
NOX_LONE_DARKER = 30.0
"""A Nox card read less sure than ``NOX_DOUBTFUL`` that lies ``NOX_LONE`` card sizes or
more from every other card, its face ``STRAY_CHROMA`` off the sure cards' in colour or
``NOX_LONE_DARKER`` darker, is no card: a fingertip or a patch of table outlined apart
from the kitties (dev 61113: a scrap of table read a 15 at 0.89, 3.9 sizes out; 61831:
a finger read a 10 at 0.52, 6.7 out). Doubtful located cards of dev 61000-61059,
61100-61139, 61800-61839 normal and 61800-61839, 61900-61939 hard: of 94 on a card,
8 lay 3 sizes or more apart, at most 8.7 off in colour (lighter, in glare) and 8
darker; of 25 on none, 7 lay that far out, 6 of them this unlike."""


NOX_LIGHTER = 70.0
"""A Nox card read less sure than ``NOX_DOUBTFUL`` whose face is this much lighter
(CIELAB L*, 0-255) than the sure cards' is no card: a fingertip beside a kitty (dev
61059: read 3 at 0.51, 162 lighter; 61028: 10 at 0.44, 79 lighter). Doubtful located
cards of dev 61000-61259 and 60000-60059 normal and 60500-60539 hard (98): of those on
a card read right, at most 61 lighter (an 11 at 0.90 in glare, hard); on none, 4 were
70 or more (72-162); one card read wrong at 67."""


ROX_STRAY_APART = 2.5
ROX_STRAY_CHROMA = 15.0
ROX_STRAY_LIGHTNESS = 90.0
"""An unknown Rox "element card" (read under ``MIN_CONFIDENCE``) whose centre lies at
least ``ROX_STRAY_APART`` card sides from every sure element card's, and whose face is
``ROX_STRAY_CHROMA`` off theirs in colour or ``ROX_STRAY_LIGHTNESS`` in lightness
(either way: element cards come dark or light), is no element card: a hand's fingers
outlined as cards, or a scoring card taken for one (missing from the scoring cards
either way). A card partly under a hand lies in its row, beside a sure card, and stays
unknown. Dev seeds 61100-61139, 61800-61839 and 61900-61939 normal, 61100-61139 and
61800-61839 hard: dropped 9 outlines on no piece and 8 on scoring cards, no element
card; the unknown element cards 2.5 sides or more apart were at most 12.5 off in
colour and 66 in lightness (under a glare spot, 61139 hard: dropped at 60)."""


ROX_ROW_REACH = 1.3
ROX_ROW_SIZE = 1.4
"""An unknown Rox element card with another located element card (sure or not) whose
centre lies within ``ROX_ROW_REACH`` of its sides, and whose area is within
``ROX_ROW_SIZE`` times its own either way, lies in a row of cards, not lone: it is kept
(``ROX_STRAY_APART`` would drop it when the whole row reads unknown). Dev 61443 normal:
a row of three cards beside a hand, far from the sure cards and lit unlike them, all
dropped; 61212: two cards of a row under a hand's fingers."""


ROX_TINY = 0.3
"""An unknown Rox "element card" covering under this share of the sure element cards'
median area is no card: a fingertip of a hand reaching in beside a row, too near the
row for the lone rule (dev 60409, 60026 normal: each stood in the state as a row of one
unknown card). Unknown located element cards of dev seeds 60000-60119, 60400-60439,
60800-60839, 61100-61139, 61400-61439, 61800-61839 normal and 61800-61839 hard (about
200): the 6 under 0.3 (0.18-0.29) lay on no piece; the smallest on an element card
covered 0.39 (hard, whole but outlined small), on a scoring card partly under a hand
0.34."""


ROX_SCORING_COVERED = 0.5
ROX_SCORING_TINY = 0.12
"""A Rox "scoring card" lying at least ``ROX_SCORING_COVERED`` (share of its outline)
inside the sure element cards' outlines, or covering under ``ROX_SCORING_TINY`` of their
median area, is no card (``without_scoring_strays``): a scrap outlined on a seam
between two element cards or on their symbols, read as a number, often surely (dev
60433 normal: a 1 at 0.85 on a seam). Scoring cards located on dev seeds 60000-60119,
60400-60439, 60800-60839, 61100-61139, 61400-61439, 61800-61839 normal and 61800-61839
hard (682 on true scoring cards): none lay inside an element card's outline at all, the
smallest covered 0.18; of the outlines on no piece, 11 lay over half inside (0.73-1.0),
and 14 were under 0.12 (none of them on an element card)."""


Lab = npt.NDArray[np.float64]


def unlike_face(face: Lab, usual: Lab, *, chroma: float = math.inf, darker: float = math.inf,
            lighter: float = math.inf) -> bool:
    """Whether a ``face`` (CIELAB) lies ``chroma`` or more off the sure pieces' ``usual``
    one in colour, or ``darker`` or ``lighter`` than it by that much or more."""
    return (float(np.hypot(*(face[1:] - usual[1:]))) >= chroma
            or float(usual[0] - face[0]) >= darker or float(face[0] - usual[0]) >= lighter)


@dataclass(frozen=True)
class StrayRule:
    """How ``without_strays`` judges one kind: pieces read less sure than
    ``doubtful_below`` whose face is ``chroma`` off the surer ones' in colour (and
    ``STRAY_DARKER`` darker) or ``lighter`` lighter, or covering under ``tiny`` of their
    median area or over ``huge`` times it, or lying ``covered`` inside their outlines
    (those covering under
    ``covered_smaller`` of the median area: scraps), are no pieces; nor,
    with ``lone``, are those read under ``lone_below`` whose face is ``lone_chroma`` off
    the sure ones' in colour, or ``lone_darker`` darker or ``lone_lighter`` lighter, and
    that stand ``lone`` sizes or more from every other piece of the kind
    (``lone_from_sure``: from every sure one); nor, with ``edge_below``, are those read
    under it whose outline reaches within ``edge_px`` of the photo's edge, ``edge_apart``
    sizes or more from every other piece of the kind; nor, however sure, are those
    ``sure_chroma`` off in colour and ``sure_darker`` darker (a hand read surely). With
    ``row_reach``, a piece with another of its kind within ``row_reach`` sizes, of a
    like area (within ``row_size`` times), lies in a row and is never lone."""

    chroma: float = math.inf
    doubtful_below: float = UNSURE
    tiny: float = 0.0
    huge: float = 0.0
    lighter: float = math.inf
    covered: float = 0.0
    covered_smaller: float = math.inf
    lone: float = 0.0
    lone_below: float = MIN_CONFIDENCE
    lone_chroma: float = math.inf
    lone_darker: float = STRAY_DARKER
    lone_lighter: float = math.inf
    lone_from_sure: bool = False
    edge_below: float = 0.0
    edge_px: float = EDGE_TILE_PX
    edge_apart: float = EDGE_TILE_APART
    sure_chroma: float = math.inf
    sure_darker: float = math.inf
    row_reach: float = 0.0
    row_size: float = 1.0


STRAY_RULES = {
    "nummix_tile": StrayRule(TILE_STRAY_CHROMA, tiny=TINY_TILE, huge=HUGE_TILE,
                              covered=COVERED_TILE, lone=LONE_TILE,
                              edge_below=EDGE_TILE_BELOW, sure_chroma=SURE_STRAY_CHROMA,
                              sure_darker=SURE_STRAY_DARKER),
    "catbox_card": StrayRule(STRAY_CHROMA),
    "nox_card": StrayRule(STRAY_CHROMA, doubtful_below=NOX_DOUBTFUL, lighter=NOX_LIGHTER,
                          covered=NOX_COVERED,
                          covered_smaller=NOX_SCRAP,
                          lone=NOX_LONE, lone_below=NOX_DOUBTFUL, lone_chroma=STRAY_CHROMA,
                          lone_darker=NOX_LONE_DARKER),
    "rox_card": StrayRule(doubtful_below=MIN_CONFIDENCE, tiny=ROX_TINY, lone=ROX_STRAY_APART,
                          lone_chroma=ROX_STRAY_CHROMA, lone_darker=ROX_STRAY_LIGHTNESS,
                          lone_lighter=ROX_STRAY_LIGHTNESS, lone_from_sure=True,
                          row_reach=ROX_ROW_REACH, row_size=ROX_ROW_SIZE),
}


def without_strays(read: Detections, balanced: Image, kind: str) -> Detections:
    """Without the pieces of ``kind`` (Nummix tiles, Cat in the Box, Nox and Rox element
    cards) its ``STRAY_RULES`` call strays: the locator takes the odd fingertip, patch of
    table or scrap of a tile for a piece, and read unsure it would stand in the state as
    an unknown piece (a Rox one as a row of one card)."""
    rule = STRAY_RULES[kind]
    pieces = [i for i in read if read.kinds[i] == kind]
    sure = [i for i in pieces if float(read.confidences[i]) >= rule.doubtful_below]
    doubtful = [i for i in pieces if float(read.confidences[i]) < rule.doubtful_below]
    if len(sure) < 3 or not (doubtful or math.isfinite(rule.sure_chroma)):
        return read
    faces = dict(zip(sure + doubtful, face_colours(
        balanced, [read.quads[i] for i in sure + doubtful]), strict=True))
    usual = np.median([faces[i] for i in sure], axis=0)
    strays = {i for i in doubtful if (unlike_face(faces[i], usual, darker=STRAY_DARKER)
                                      and unlike_face(faces[i], usual, chroma=rule.chroma))
              or unlike_face(faces[i], usual, lighter=rule.lighter)}
    strays |= {i for i in sure if unlike_face(faces[i], usual, darker=rule.sure_darker)
               and unlike_face(faces[i], usual, chroma=rule.sure_chroma)}
    if not doubtful:
        return read.select([i for i in read if i not in strays]) if strays else read

    def area(i: int) -> float:
        return abs(float(cv2.contourArea(read.quads[i].astype(np.float32))))

    usual_area = float(np.median([area(i) for i in sure]))
    if rule.tiny:
        strays |= {i for i in doubtful if area(i) < rule.tiny * usual_area}
    if rule.huge:
        strays |= {i for i in doubtful if area(i) > rule.huge * usual_area}
    if rule.covered:
        strays |= {i for i in doubtful
                   if area(i) < rule.covered_smaller * usual_area
                   and _covered_share(read, sure, i, balanced.shape[:2]) >= rule.covered}
    centres = read.quads.mean(axis=1)

    def apart(i: int, others: list[int], reach: float) -> bool:
        """Piece ``i``'s centre lies ``reach`` or more from every one of ``others``'."""
        return all(float(np.linalg.norm(centres[j] - centres[i])) >= reach
                   for j in others if j != i)

    def in_row(i: int) -> bool:
        """Another piece of the kind, of a like area, lies within ``row_reach`` of its sizes."""
        reach = rule.row_reach * math.sqrt(area(i))
        return any(float(np.linalg.norm(centres[j] - centres[i])) < reach
                   and 1 / rule.row_size <= area(j) / max(area(i), 1e-6) <= rule.row_size
                   for j in pieces if j != i)

    if rule.lone:
        reach = rule.lone * math.sqrt(usual_area)
        others = sure if rule.lone_from_sure else pieces
        strays |= {i for i in doubtful if float(read.confidences[i]) < rule.lone_below
                   and unlike_face(faces[i], usual, chroma=rule.lone_chroma,
                               darker=rule.lone_darker, lighter=rule.lone_lighter)
                   and apart(i, others, reach) and not (rule.row_reach and in_row(i))}
    if rule.edge_below:
        height, width = balanced.shape[:2]
        for i in doubtful:
            q = read.quads[i]
            edge = min(float(q[:, 0].min()), float(q[:, 1].min()),
                       width - 1 - float(q[:, 0].max()), height - 1 - float(q[:, 1].max()))
            if (float(read.confidences[i]) < rule.edge_below and edge <= rule.edge_px
                    and apart(i, pieces, rule.edge_apart * math.sqrt(usual_area))):
                strays.add(i)
    return read.select([i for i in read if i not in strays]) if strays else read


def without_scoring_strays(read: Detections) -> Detections:
    """Without the Rox scoring cards that lie inside the sure element cards or are far
    smaller than them (``ROX_SCORING_COVERED``, ``ROX_SCORING_TINY``; three sure element
    cards or more): scraps of the element cards, which stand in the state as scoring
    cards, or as unknowns when read unsure."""
    sure = [i for i in read if read.kinds[i] == "rox_card"
            and float(read.confidences[i]) >= MIN_CONFIDENCE]
    scoring = [i for i in read if read.kinds[i] == "rox_scoring"]
    if len(sure) < 3 or not scoring:
        return read

    def area(i: int) -> float:
        return abs(float(cv2.contourArea(read.quads[i].astype(np.float32))))

    usual_area = float(np.median([area(i) for i in sure]))
    size = (int(read.quads[:, :, 1].max()) + 2, int(read.quads[:, :, 0].max()) + 2)
    strays = {i for i in scoring if area(i) < ROX_SCORING_TINY * usual_area
              or _covered_share(read, sure, i, size) >= ROX_SCORING_COVERED}
    return read.select([i for i in read if i not in strays]) if strays else read


CARD_TWICE = 0.15
"""Two Nox cards read the same whose outlines overlap by this share of the smaller
one's area or more are one card outlined twice (``without_doubles``): the smaller
outline is dropped. Top cards lie side by side: the true outlines of top cards, dev
60000-60149 normal and hard, overlapped at most 0.015 of the smaller; located cards read
the same overlapped, dev 61000-61099, 61400-61499 normal and 61600-61659 hard, at most
0.10 (a 3 read as a 6 beside a 6, hard). Dev 61349: a stack's 1 outlined whole and again
over its lower card's peeking edge, both read 1 surely (0.23): a stack too many."""


def without_doubles(read: Detections, kind: str) -> Detections:
    """Without the smaller of each two outlines of ``kind`` read the same that overlap by
    ``CARD_TWICE`` of the smaller's area or more: one card outlined twice."""
    pieces = [i for i in read if read.kinds[i] == kind and read.labels[i] is not None]
    quads = {i: read.quads[i].astype(np.float32) for i in pieces}
    areas = {i: abs(float(cv2.contourArea(quads[i]))) for i in pieces}
    doubles = set()
    for a in pieces:
        for b in pieces:
            if b <= a or read.labels[a] != read.labels[b]:
                continue
            smaller = min(areas[a], areas[b])
            shared, _ = cv2.intersectConvexConvex(quads[a], quads[b])
            if smaller > 0 and shared >= CARD_TWICE * smaller:
                doubles.add(a if areas[a] < areas[b] else b)
    return read.select([i for i in read if i not in doubles]) if doubles else read


def _covered_share(read: Detections, others: list[int], piece: int,
                   size: tuple[int, ...]) -> float:
    """The share of ``piece``'s outline lying inside the outlines of ``others``."""
    def drawn(indices: list[int]) -> npt.NDArray[np.uint8]:
        mask = np.zeros(size[:2], np.uint8)
        for i in indices:
            cv2.fillConvexPoly(mask, np.round(read.quads[i]).astype(np.int32), 1)
        return mask

    own = drawn([piece])
    return float((own & drawn(others)).sum()) / max(int(own.sum()), 1)


FACE_CROP = (16, 22)
"""Crop size a face colour is measured on: a tile's face, small enough to be quick."""


def face_colours(balanced: Image, quads: Sequence[npt.NDArray[np.float32]]
                 ) -> npt.NDArray[np.float64]:
    """Each tile's face colour (CIELAB, 8-bit scale), (N, 3): the median of the lighter
    half of its crop (the printed number and logo are darker). One colour conversion
    and the medians taken together (a Nummix photo measures a hundred outlines)."""
    if len(quads) == 0:
        return np.zeros((0, 3))
    crops = np.concatenate([rectify(balanced, q, size=FACE_CROP) for q in quads])
    lab = cv2.cvtColor(crops, cv2.COLOR_BGR2LAB).reshape(len(quads), -1, 3).astype(np.float64)
    lighter = lab[:, :, 0] >= np.median(lab[:, :, 0], axis=1, keepdims=True)
    ranked = np.sort(np.where(lighter[:, :, None], lab, np.nan), axis=1)  # NaNs last
    count = lighter.sum(axis=1)
    low, high = ((count - 1) // 2)[:, None, None], (count // 2)[:, None, None]
    out: npt.NDArray[np.float64] = (np.take_along_axis(ranked, np.broadcast_to(
        low, (len(quads), 1, 3)), axis=1)[:, 0] + np.take_along_axis(ranked, np.broadcast_to(
            high, (len(quads), 1, 3)), axis=1)[:, 0]) / 2
    return out
