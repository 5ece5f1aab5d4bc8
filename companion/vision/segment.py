"""The learned locator, the default way to find pieces: a tiny U-Net
(models/locator.onnx, onnxruntime only) marks each piece's interior and outline, and each
interior blob becomes one quad.

The net sees the photo scaled so its long side is ``INPUT_SIDE`` and gives every pixel a
class, background or the interior of a piece of one kind group (``CLASSES``), and the
probability that it lies on a piece at all. An interior is the piece's quad shrunk
toward its centre to ``INTERIOR`` of its size, so touching tiles and cards are separate
blobs; a blob's piece is the on-a-piece pixels nearer to it than to any other blob, and
their minimum-area rectangle (less a measured overreach) is the quad. Cat in the Box
tokens, a few net pixels across, are found on the board in the photo itself. Trained by
``python -m companion.train.segment --seed S`` (see models/locator.md). Quads come out
as from ``locate``: clockwise, first edge a short edge, ``oriented=False``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.calibration.markers import Marker
from companion.games.base import InputError
from companion.vision.align import meeting_corners, outward_normal
from companion.vision.detections import Detections, cut_along_first_edge
from companion.vision.locate import GAMES, MIN_SIDE, short_edge_first, tokens_on_board

MODEL_PATH = Path(__file__).resolve().parents[2] / "models" / "locator.onnx"
INPUT_SIDE = 448
"""Long side, in pixels, of the image the net sees (a 1280×720 photo becomes 448×252,
padded to 448×256)."""
STRIDE = 16
"""The net's input height and width must be multiples of this (four 2× downsamplings)."""
INTERIOR = 0.6
"""An interior is the piece's quad scaled about its centre by this factor."""
CLASSES: tuple[str, ...] = ("background", "tile", "card", "large", "token")
"""What the net tells apart per pixel: table, and the interiors of number tiles, cards
(Nox, Qwixx, Rox, Cat in the Box, Rox scoring), large sheets and boards, and tokens."""
OUTPUTS = len(CLASSES) + 1
"""The net's output channels: the CLASSES' logits, then one logit for "on a piece at
all" (the piece's whole quad), from which each interior blob's outline is measured."""
GROUP_OF_KIND: dict[str, str] = {
    "nummix_tile": "tile", "nox_card": "card", "qwixx_card": "card", "rox_card": "card",
    "rox_scoring": "card", "catbox_card": "card", "qwixx_sheet": "large",
    "catbox_board": "large", "token": "token"}
KIND_OF_GROUP: dict[str, dict[str, str]] = {
    "nummix": {"tile": "nummix_tile", "card": "nummix_tile", "large": "nummix_tile",
               "token": "nummix_tile"},
    "nox": {"tile": "nox_card", "card": "nox_card", "large": "nox_card", "token": "nox_card"},
    "qwixx": {"tile": "qwixx_card", "card": "qwixx_card", "large": "qwixx_sheet",
              "token": "qwixx_card"},
    "rox": {"tile": "rox_card", "card": "rox_card", "large": "rox_card", "token": "rox_card"},
    "catbox": {"tile": "catbox_card", "card": "catbox_card", "large": "catbox_board",
               "token": "token"},
}
"""The kind reported for a blob of each group in each game (a game has no other kinds)."""
ROX_SCORING_ASPECT = 0.82
"""A Rox card narrower (short/long side, the camera's squeeze undone) than this is a
scoring card (44×68 mm) rather than an element card (68×68 mm)."""
SQUEEZE_CARDS = 7
"""The camera's squeeze at a Rox card is measured on this many cards nearest to it (a
strongly tilted camera squeezes the near cards less than the far ones)."""
FG_THRESHOLD = 0.5
"""A pixel belongs to a piece when the net gives the table less than this probability."""
RUNS_UNDER: dict[str, tuple[str, ...]] = {"catbox_board": ("token",)}
"""Groups whose interiors count as part of a kind's blob too: tokens lie on the research
board and would cut its interior into pieces."""
LARGE_KINDS = frozenset({"qwixx_sheet", "catbox_board"})
RECT_FIRST = frozenset({"catbox_board"})
"""Large kinds whose corners start from the outline's rectangle rather than its hull's
diagonal extremes (a card lying over a board's corner cuts the hull; measured: worst
corner 9.1 -> 8.7 px at the median, 45 -> 36 px at the 90th percentile)."""
SIDE_SAMPLES = 200
SIDE_LEAST = 0.04
SIDE_LINES_REACH = 0.25
"""A board's other outline (``_corners_of_side_lines``): its hull sampled at SIDE_SAMPLES points
evenly along it, a line fitted to the points nearest each side of its rectangle (at
least SIDE_LEAST of them); the corners stay within SIDE_LINES_REACH of the rectangle's
diagonal, else there is no other outline."""
ONE_PIECE = frozenset({"catbox_board"})
"""Kinds a photo shows at most one of (the research board). The net's interior of the
board is often cut into fragments (by the tokens and the coloured cells, which it
half takes for table) while its whole-piece channel covers the board in one patch:
fragments on one patch of whole-piece pixels are joined into one blob. Measured on
rendered scenes 61000-61029 (normal): 3 of 30 boards came out as 2 to 4 quads, each a
part of the board; joined, each is one quad."""
FRAGMENT_SHARE = 0.15
"""A blob under this share of its kind's usual blob (the median; for sheets and boards,
of which a photo shows few, the largest) is a fragment of a piece, not a piece."""
STRAIGHT_AGREEMENT = 0.15
"""How strongly (|mean of 4× the gradient directions| over the mean magnitude) a
piece's edges must agree on one pair of directions to turn its quad to them."""
STRAIGHT_MAX = np.radians(12)
"""A piece is turned by at most this much to its edges' direction."""
BOARD_REACH = 0.04
"""A board's side is looked for this share of its longest side either way of where the
net put it (a sheet's, of that side's own length): the net's outline of a board's
short side was up to 0.5 cells (12 px) off on rendered scenes, beyond the 6 px a
short side's own length gave."""
EDGE_SAMPLES = 24
EDGE_STEP = 6.0
"""A sheet's or board's side is sampled at this many points; a step of at least
EDGE_STEP grey levels per pixel across it is its edge there."""
WHOLE_THRESHOLD = 0.5
"""A pixel is on a piece when the whole-piece channel says so more likely than not."""
OUTLINE_UPSAMPLE = 4
"""The whole-piece probabilities are upsampled this much to find a piece's outline."""
OUTLINE_SHRINK: dict[str, float] = {"nummix_tile": 1.0}
"""Net pixels taken off each side of a measured outline, per kind (default
OUTLINE_SHRINK_CARD): the whole-piece pixels, taken as squares, overreach the piece's
edge by about this much, by the median on rendered scenes (cards 1.5; tiles 1.0, whose
thick sides the net learned to leave out)."""
OUTLINE_SHRINK_CARD = 1.4
SLIVER_ASPECT = 3.0
SLIVER_SHARE = 0.35
"""A located card or tile more than ``SLIVER_ASPECT`` times as long as wide, or
narrower than ``SLIVER_SHARE`` of its kind's usual width (the upper quartile: slivers
pull a median down), is a sliver, not a piece. On rendered scenes (seeds 60000–60059,
normal, every game) the located quads that match a piece are at most 2.54 times as
long as wide and at least 0.53 of that width."""
SQUEEZED_KINDS = frozenset({"catbox_card"})
SQUEEZED_ROW = 2.2
SQUEEZED_SLIVER_ASPECT = 3.4
"""A card of ``SQUEEZED_KINDS`` (cards lying side by side, never stacked) is a sliver by
its length only past ``SQUEEZED_SLIVER_ASPECT`` times its width when the other cards of
its kind located in the photo are ``SQUEEZED_ROW`` times as long as wide or more at the
median: a steep camera squeezes every card of the trick alike, and the most squeezed
passes ``SLIVER_ASPECT`` (dev 61913 hard: a 3 located at 3.07 beside cards at 2.41 and
2.71, dropped: the trick read without it, as whole). Catbox slivers dropped on dev
61900+60 and 60500+60 hard, 61800+60 and 61000+100 normal: the others lay on no card,
and the one of them between 3.0 and 3.4 (60512: 3.14) beside cards at 1.3-1.7."""
RACK_KINDS = frozenset({"nummix_tile"})
RACK_SLIVER_ASPECT = 4.5
RACK_ROW_REACH = 2.2
RACK_ROW_AXIS = np.radians(20)
RACK_ROW_LEAST = 2
"""A tile of ``RACK_KINDS`` is a sliver by its length only past ``RACK_SLIVER_ASPECT``
times its width when ``RACK_ROW_LEAST`` or more other tiles also longer than
``SLIVER_ASPECT`` lie along its long axis (within ``RACK_ROW_AXIS`` of it), their
centres within ``RACK_ROW_REACH`` of its long sides: a rack seen from low down shows
its standing tiles' tops side by side, each 3-4 times as wide as tall (dev 60658
normal: nine rack tiles located 3.2-3.7, all dropped; 60625)."""
MIN_BLOB_PX = 4
"""A blob of fewer net pixels than this is noise."""


def net_size(height: int, width: int) -> tuple[int, int]:
    """(height, width) of the image the net sees, before padding to STRIDE."""
    scale = INPUT_SIDE / max(height, width)
    return max(1, round(height * scale)), max(1, round(width * scale))


@lru_cache(maxsize=2)
def load_locator(path: Path = MODEL_PATH) -> Any:
    """The ONNX session (cached; single-threaded per call would be slower, so two
    intra-op threads). Its worker threads sleep between runs instead of spinning:
    onnxruntime's default spin-wait kept the second thread busy for as long again as
    the net ran (CPU per run 25 -> 13 ms on the 2-core machine, wall time the same)."""
    import onnxruntime as ort

    if not path.exists():
        raise InputError("model", f"locator model {path} is missing; train it with "
                         "python -m companion.train.segment --seed 1")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def predict(image: npt.NDArray[np.uint8], *, path: Path = MODEL_PATH
            ) -> npt.NDArray[np.float32]:
    """Per-pixel outputs (OUTPUTS, h, w) at ``net_size`` of the image: the CLASSES'
    probabilities, then the probability of lying on a piece at all."""
    h, w = net_size(*image.shape[:2])
    small = cv2.resize(image, (w, h), interpolation=cv2.INTER_AREA)
    ph, pw = -h % STRIDE, -w % STRIDE
    if ph or pw:
        small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
    x = np.ascontiguousarray(small.transpose(2, 0, 1)[None], dtype=np.float32)
    x *= np.float32(1 / 255.0)  # channels first, scaled in place: one copy, not three
    logits = load_locator(path).run(None, {"image": x})[0][0, :, :h, :w]
    classes = logits[:len(CLASSES)]
    classes = np.exp(classes - classes.max(axis=0, keepdims=True))
    classes /= classes.sum(axis=0, keepdims=True)
    whole = 1 / (1 + np.exp(-logits[len(CLASSES):]))
    out: npt.NDArray[np.float32] = np.concatenate([classes, whole]).astype(np.float32,
                                                                          copy=False)
    return out


def locate_learned(image: npt.NDArray[np.uint8], *, game: str, path: Path = MODEL_PATH,
                   markers: Sequence[Marker] | None = None) -> Detections:
    """Every piece of ``game`` in the BGR ``image`` as quads in image pixels, found by the
    learned locator (same conventions as ``locate``); confidence is the blob's mean
    interior probability. ``markers``: the photo's ArUco markers (image pixels), whose
    white squares are not pieces."""
    if game not in GAMES:
        raise InputError("game", f"unknown game {game!r}; one of: {', '.join(GAMES)}")
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise InputError("image", "expected a BGR uint8 image (height, width, 3)")
    if min(image.shape[:2]) < MIN_SIDE:
        return Detections.empty()
    prob = predict(image, path=path)
    found = blobs_to_detections(prob, image.shape[:2], game=game)
    if game == "nummix":
        found = _straighten(image, found)
    found = _off_large_pieces(_sharpen_large(image, found))
    if game == "catbox":
        found = _with_board_tokens(image, found)
    if markers and len(found):
        grown = _grown_markers(markers)
        found = found.select([i for i in found if not _on_marker(found.quads[i], grown)])
    return _without_slivers(found)


def _without_slivers(found: Detections) -> Detections:
    """Cards and tiles that are slivers dropped: longer than ``SLIVER_ASPECT`` times
    their width, or narrower than ``SLIVER_SHARE`` of the upper quartile of their kind's
    widths (three or more of it). A sliver is a strip of a piece's border or of a
    stack's lower card, and read as a number it is read wrong, often surely. Cards of a
    squeezed row may be longer (``SQUEEZED_SLIVER_ASPECT``)."""
    sides = np.stack([np.linalg.norm(found.quads[:, 1] - found.quads[:, 0], axis=1),
                      np.linalg.norm(found.quads[:, 2] - found.quads[:, 1], axis=1)], axis=1
                     ) if len(found) else np.zeros((0, 2))
    short, long = sides.min(axis=1, initial=np.inf), sides.max(axis=1, initial=0.0)
    aspect = long / np.maximum(short, 1e-6)
    usual = {}  # a kind's upper-quartile width, where there are three or more of it
    for kind in set(found.kinds):
        widths = [short[j] for j in found if found.kinds[j] == kind]
        if len(widths) >= 3:
            usual[kind] = float(np.percentile(widths, 75))
    keep = []
    for i in found:
        kind = found.kinds[i]
        if kind in LARGE_KINDS or kind == "token":
            keep.append(i)
            continue
        narrow = kind in usual and short[i] < SLIVER_SHARE * usual[kind]
        longest = SLIVER_ASPECT
        if kind in RACK_KINDS and aspect[i] > SLIVER_ASPECT and _in_a_rack_row(found, i, aspect):
            longest = RACK_SLIVER_ASPECT
        if kind in SQUEEZED_KINDS:
            others = [aspect[j] for j in found if found.kinds[j] == kind and j != i]
            if others and float(np.median(others)) >= SQUEEZED_ROW:
                longest = SQUEEZED_SLIVER_ASPECT
        if not narrow and aspect[i] <= longest:
            keep.append(i)
    return found if len(keep) == len(found) else found.select(keep)


def _in_a_rack_row(found: Detections, i: int, aspect: npt.NDArray[np.float64]) -> bool:
    """Whether ``RACK_ROW_LEAST`` other long pieces of piece ``i``'s kind lie along its
    long axis, near it (``RACK_ROW_*``): the tops of a rack's standing tiles."""
    q = found.quads[i]
    first, second = q[1] - q[0], q[2] - q[1]
    axis = first if np.linalg.norm(first) >= np.linalg.norm(second) else second
    long = float(np.linalg.norm(axis))
    axis = axis / max(long, 1e-6)
    centre = q.mean(axis=0)
    beside = 0
    for j in found:
        if j == i or found.kinds[j] != found.kinds[i] or aspect[j] <= SLIVER_ASPECT:
            continue
        offset = found.quads[j].mean(axis=0) - centre
        distance = float(np.linalg.norm(offset))
        if (distance <= RACK_ROW_REACH * long
                and abs(float(offset @ axis)) >= np.cos(RACK_ROW_AXIS) * distance):
            beside += 1
    return beside >= RACK_ROW_LEAST


def _sharpen_large(image: npt.NDArray[np.uint8], found: Detections) -> Detections:
    """Each score sheet's and board's four sides moved onto the paper's edge in the
    photo: a line fitted (robustly: a card over the edge pulls little) through the
    strongest step in brightness across each side, near where the net put it; the
    corners are where the lines meet. A side that shows too little edge stays."""
    rows = [i for i, k in enumerate(found.kinds) if k in LARGE_KINDS]
    if not rows:
        return found
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    quads = found.quads.copy()
    for i in rows:
        quads[i] = _edge_quad(grey, quads[i], board=found.kinds[i] == "catbox_board")
    return found.with_fields(quads=quads)


def _edge_quad(grey: npt.NDArray[np.float32], quad: npt.NDArray[np.float32], *,
               board: bool = False) -> npt.NDArray[np.float32]:
    """``quad``'s sides fitted to the brightness edges of ``grey`` (see _sharpen_large).
    A ``board``'s sides are looked for as far as its long sides' (BOARD_REACH), and
    each side's edge is a step of the one sign most of its samples show."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    centre = q.mean(axis=0)
    diagonal = float(np.linalg.norm(q[2] - q[0]))
    longest = max(float(np.linalg.norm(q[(k + 1) % 4] - q[k])) for k in range(4))
    lines = []
    for k in range(4):
        a, b = q[k], q[(k + 1) % 4]
        length = float(np.linalg.norm(b - a))
        if length < 20:
            return quad
        normal = outward_normal(a, b, centre)
        reach = max(6.0, (BOARD_REACH * longest) if board else 0.04 * length)
        offsets = np.arange(-reach, reach + 1.0)
        ts = np.linspace(0.08, 0.92, EDGE_SAMPLES)
        base = a[None, :] + ts[:, None] * (b - a)[None, :]
        pts = base[:, None, :] + offsets[None, :, None] * normal[None, None, :]
        values = cv2.remap(grey, pts[..., 0].astype(np.float32), pts[..., 1].astype(np.float32),
                           cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        step = np.diff(values, axis=1)
        if board:  # the board against the table: the same change all along the side
            strongest = step[np.arange(len(ts)), np.abs(step).argmax(axis=1)]
            step = step * (1.0 if float(np.median(strongest)) >= 0 else -1.0)
        else:
            step = np.abs(step)
        best = step.argmax(axis=1)
        strong = step[np.arange(len(ts)), best] >= EDGE_STEP
        if strong.sum() < EDGE_SAMPLES // 3:
            lines.append((a, (b - a) / length))
            continue
        hits = base[strong] + (offsets[best[strong]] + 0.5)[:, None] * normal[None, :]
        lines.append(_robust_line(hits))
    met = meeting_corners(lines)
    if met is None:
        return quad
    out = met.astype(np.float64)
    if np.linalg.norm(out - q, axis=1).max() > 0.08 * diagonal:
        return quad  # the lines went astray: keep the net's corners
    return out.astype(np.float32)


def _off_large_pieces(found: Detections) -> Detections:
    """Without the cards and tiles whose centre lies well inside a score sheet or the
    research board: filled boxes and printed cells there are not pieces (a card laid
    against a sheet's edge keeps its centre outside)."""
    large = [found.quads[i] for i, k in enumerate(found.kinds) if k in LARGE_KINDS]
    if not large:
        return found
    inner = [q.mean(axis=0) + (q - q.mean(axis=0)) * 0.9 for q in large]
    keep = []
    for i, kind in enumerate(found.kinds):
        centre = found.quads[i].mean(axis=0)
        inside = kind not in LARGE_KINDS and any(cv2.pointPolygonTest(
            q.astype(np.float32), (float(centre[0]), float(centre[1])), False) >= 0
            for q in inner)
        if not inside:
            keep.append(i)
    return found.select(keep)


def _straighten(image: npt.NDArray[np.uint8], found: Detections) -> Detections:
    """Each tile's quad turned about its centre to the direction of the strong edges in
    the photo around and inside it. A tile a dozen net pixels across gets its angle from
    the outline to within several degrees, and telling two touching tiles from a gap
    between them needs better: on rendered Nummix scenes this halves the worst angle
    errors (median 1.6° → 1.1°). (Rox cards, whose edge symbols make their own edges,
    came out worse, and are left as the outline gives them.)"""
    if not len(found):
        return found
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    quads = found.quads.copy()
    for i, kind in enumerate(found.kinds):
        if kind != "nummix_tile":
            continue
        quad = quads[i]  # (turned in place: the corner order is kept)
        centre = quad.mean(axis=0)
        grown = centre + (quad - centre) * 1.15
        x0, y0 = np.floor(grown.min(axis=0)).astype(int)
        x1, y1 = np.ceil(grown.max(axis=0)).astype(int) + 1
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(grey.shape[1], x1), min(grey.shape[0], y1)
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(inside, np.round(grown - [x0, y0]).astype(np.int32), 1)
        patch = grey[y0:y1, x0:x1]
        on = inside.astype(bool)
        gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3)[on]
        gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3)[on]
        # magnitude² times (cos 4θ, sin 4θ) of the gradient direction θ, by double angles
        xx_yy, two_xy = gx * gx - gy * gy, 2 * gx * gy
        mag2 = gx * gx + gy * gy
        total = float(mag2.sum())
        safe = np.maximum(mag2, 1e-6)
        zc = float(((xx_yy * xx_yy - two_xy * two_xy) / safe).sum())
        zs = float((2 * xx_yy * two_xy / safe).sum())
        if np.hypot(zc, zs) < STRAIGHT_AGREEMENT * total:
            continue  # no clear pair of directions: keep the outline's
        edge_angle = float(np.arctan2(zs, zc)) / 4  # the edges' direction, modulo 90°
        side = quad[1] - quad[0]
        current = float(np.arctan2(side[1], side[0]))
        turn = float(np.remainder(edge_angle - current + np.pi / 4, np.pi / 2) - np.pi / 4)
        if abs(turn) > STRAIGHT_MAX:
            continue
        c, s_ = np.cos(turn), np.sin(turn)
        quads[i] = ((quad - centre) @ np.array([[c, s_], [-s_, c]], np.float32) + centre)
    return found.with_fields(quads=quads)


def _with_board_tokens(image: npt.NDArray[np.uint8], found: Detections) -> Detections:
    """Cat in the Box tokens, a few net pixels across, looked for again in the photo as
    circles on each board (``locate.tokens_on_board``), in place of the net's own. (The
    net's tokens that no circle explains were tried as well: on 10 rendered scenes they
    found every token but put as many false ones on empty cells, and fewer boards came
    out exact.)"""
    boards = [found.quads[i] for i, k in enumerate(found.kinds) if k == "catbox_board"]
    tokens = [q for board in boards for q in tokens_on_board(image, board)]
    keep = [i for i, k in enumerate(found.kinds) if k != "token"]
    return Detections.concat([found.select(keep), Detections(
        np.asarray(tokens, np.float32).reshape(-1, 4, 2), ("token",) * len(tokens),
        confidences=np.ones(len(tokens), np.float32))])


def _grown_markers(markers: Sequence[Marker]) -> list[npt.NDArray[np.float32]]:
    """Each marker's corners grown by a quarter about its centre (the white margin
    printed around it), for ``_on_marker``: made once per photo, not once per piece."""
    out = []
    for marker in markers:
        corners = np.asarray(marker.corners, np.float32).reshape(4, 2)
        out.append(corners.mean(axis=0) + (corners - corners.mean(axis=0)) * 1.25)
    return out


def _on_marker(quad: npt.NDArray[np.float32], grown: Sequence[npt.NDArray[np.float32]]
               ) -> bool:
    """Whether the quad's centre lies on one of the markers ``grown`` by their margin
    (``_grown_markers``)."""
    centre = quad.mean(axis=0)
    for outline in grown:
        if cv2.pointPolygonTest(outline, (float(centre[0]), float(centre[1])), False) >= 0:
            return True
    return False


def _pixel_corners(points: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The four corners of every pixel at ``points`` (x, y of their top-left corners), so
    a shape fitted to them takes each pixel as a unit square (one pixel is 1 wide)."""
    return np.concatenate([points + d for d in np.float32([(0, 0), (1, 0), (0, 1), (1, 1)])]
                          ).astype(np.float32)


def _outline(whole: npt.NDArray[np.float32], owner: npt.NDArray[np.int32], n: int,
             box: tuple[int, int, int, int]
             ) -> tuple[tuple[tuple[float, float], tuple[float, float], float],
                        npt.NDArray[np.float32]] | None:
    """The minimum-area rectangle (net pixels) of the whole-piece pixels that blob ``n``
    owns, and their convex hull, looked for within its box (x, y, w, h) grown by three
    quarters of its size on every side (an outline is 1/INTERIOR of it). The
    probabilities are upsampled OUTLINE_UPSAMPLE× first, so the outline falls between
    net pixels where the probability crosses WHOLE_THRESHOLD."""
    x0, y0, bw, bh = box
    mx, my = (bw * 3) // 4 + 1, (bh * 3) // 4 + 1
    gx0, gy0 = max(0, x0 - mx), max(0, y0 - my)
    gx1, gy1 = x0 + bw + mx, y0 + bh + my
    up = OUTLINE_UPSAMPLE
    prob = cv2.resize(whole[gy0:gy1, gx0:gx1], None, fx=up, fy=up,
                      interpolation=cv2.INTER_LINEAR)
    mine = cv2.resize((owner[gy0:gy1, gx0:gx1] == n).astype(np.uint8), None, fx=up, fy=up,
                      interpolation=cv2.INTER_NEAREST)
    mask = ((prob > WHOLE_THRESHOLD) & (mine > 0)).astype(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    pts = _pixel_corners(max(contours, key=cv2.contourArea).reshape(-1, 2))
    (cx, cy), (rw, rh), angle = cv2.minAreaRect(pts)
    hull = cv2.convexHull(pts).reshape(-1, 2) / up + np.float32([gx0, gy0])
    return ((cx / up + gx0, cy / up + gy0), (rw / up, rh / up), angle), hull


def _four_corners(hull: npt.NDArray[np.float32]) -> npt.NDArray[np.float32] | None:
    """The hull's four corners (a sheet or board seen in perspective is no rectangle):
    its points farthest out in the four diagonal directions of its minimum-area
    rectangle; None when two of them coincide."""
    (_, _), (_, _), angle = cv2.minAreaRect(hull)
    a = np.radians(angle)
    u = np.array([np.cos(a), np.sin(a)], np.float32)
    v = np.array([-np.sin(a), np.cos(a)], np.float32)
    picks = [int(np.argmax(hull @ (su * u + sv * v)))
             for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    if len(set(picks)) < 4:
        return None
    return hull[picks].astype(np.float32)


def _corners_of_side_lines(hull: npt.NDArray[np.float32], rect: npt.NDArray[np.float32], *,
                inset: float = 0.0) -> npt.NDArray[np.float32] | None:
    """The corners where four lines meet, each fitted (robustly) to the stretch of the
    ``hull`` nearest one side of its minimum-area rectangle ``rect``: a board seen in
    perspective is a trapezoid, whose rectangle puts a corner out on the table (by up
    to two cells on rendered scenes), while a card over a corner cuts the hull's corner
    off, which the lines through the sides' own stretches restore. Each line is moved
    ``inset`` inward (as the rectangle is shrunk). None when a side has too little of
    the hull near it or the lines meet far from the rectangle."""
    centre = rect.mean(axis=0)
    ends = np.roll(hull, -1, axis=0)
    spacing = float(np.linalg.norm(ends - hull, axis=1).sum()) / SIDE_SAMPLES
    points = np.concatenate([
        np.linspace(a, b, max(1, int(np.linalg.norm(b - a) / spacing)), endpoint=False)
        for a, b in zip(hull, ends, strict=True)])
    distance = np.stack([np.abs(_cross(b - a, points - a)) / max(1e-6, float(
        np.linalg.norm(b - a))) for a, b in zip(rect, np.roll(rect, -1, axis=0), strict=True)],
        axis=1)
    nearest = distance.argmin(axis=1)
    lines = []
    for k in range(4):
        mine = points[nearest == k]
        if len(mine) < SIDE_LEAST * SIDE_SAMPLES:
            return None
        point, direction = _robust_line(mine)
        lines.append((point - inset * outward_normal(point, point + direction, centre),
                      direction))
    met = meeting_corners(lines)
    if met is None:
        return None
    diagonal = float(np.linalg.norm(rect[2] - rect[0]))
    if np.linalg.norm(met - rect, axis=1).max() > SIDE_LINES_REACH * diagonal:
        return None
    return met.astype(np.float32)


def _robust_line(points: npt.NDArray[Any]) -> tuple[npt.NDArray[np.float64],
                                                    npt.NDArray[np.float64]]:
    """(a point on it, its unit direction) of the line through ``points`` fitted with
    Huber's loss: a few points off it (a card over the edge) pull little."""
    vx, vy, x0, y0 = cv2.fitLine(np.asarray(points, np.float32), cv2.DIST_HUBER, 0, 0.01,
                                 0.01).ravel()
    return np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)


def _cross(u: npt.NDArray[np.float32], v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The 2-D cross product u × v (v: one point or rows of points)."""
    return np.asarray(u[0] * v[..., 1] - u[1] * v[..., 0], np.float32)


def _join_on_whole(comp: npt.NDArray[np.int32], stats: npt.NDArray[np.int32],
                   whole: npt.NDArray[np.bool_]
                   ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """The blobs (``comp`` labels and their ``stats``, area 0 for a blob not taken) that
    lie mostly on one connected patch of the ``whole``-piece mask joined under the
    first one's label: one piece, its interior cut apart (see ONE_PIECE)."""
    _, patch = cv2.connectedComponents(whole.astype(np.uint8), connectivity=8)
    comp, stats = comp.copy(), stats.copy()
    first: dict[int, int] = {}
    for n in range(1, len(stats)):
        if stats[n, cv2.CC_STAT_AREA] <= 0:
            continue
        under = patch[comp == n]
        under = under[under > 0]
        if not under.size:
            continue
        p = int(np.bincount(under).argmax())
        if p not in first:
            first[p] = n
            continue
        m = first[p]
        comp[comp == n] = m
        ys, xs = np.nonzero(comp == m)
        stats[m] = (xs.min(), ys.min(), xs.max() - xs.min() + 1, ys.max() - ys.min() + 1,
                    stats[m, cv2.CC_STAT_AREA] + stats[n, cv2.CC_STAT_AREA])
        stats[n, cv2.CC_STAT_AREA] = 0
    return comp, stats


def blobs_to_detections(prob: npt.NDArray[np.float32], shape: tuple[int, ...], *, game: str
                        ) -> Detections:
    """One quad per connected interior blob of the net's outputs ``prob`` (net size),
    scaled to an image of ``shape`` (height, width). Blobs are taken per kind of the
    game, so a token lying on the board is its own blob (and the board's blob runs
    under it); a blob far smaller than its kind's usual one is a fragment, not a piece.
    A blob's piece is the whole-piece pixels nearer to it than to any other blob
    (touching pieces share their border half and half); when the net gives the blob no
    such outline, its interior's rectangle grown by 1/INTERIOR."""
    fg = prob[0] < FG_THRESHOLD  # more likely some piece than the table
    group = prob[1:len(CLASSES)].argmax(axis=0)
    whole = prob[len(CLASSES)]
    kinds_map = KIND_OF_GROUP[game]
    blobs: list[tuple[str, npt.NDArray[np.int32], npt.NDArray[np.int32], int]] = []
    for kind in sorted(set(kinds_map.values())):
        own = np.isin(group, [i for i, g in enumerate(CLASSES[1:]) if kinds_map[g] == kind])
        under = np.isin(group, [CLASSES.index(g) - 1 for g in RUNS_UNDER.get(kind, ())])
        mask = (fg & (own | under)).astype(np.uint8)
        count, comp, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
        if under.any():  # a blob of only what runs under the kind (a token) is not one
            mine = np.bincount(comp[fg & own].ravel(), minlength=count)
            stats[mine < stats[:, cv2.CC_STAT_AREA] / 2, cv2.CC_STAT_AREA] = 0
        if kind in ONE_PIECE:
            comp, stats = _join_on_whole(comp, stats, whole > WHOLE_THRESHOLD)
        areas = stats[1:, cv2.CC_STAT_AREA]
        if not areas.any():
            continue
        usual = float(areas.max() if kind in LARGE_KINDS else np.median(areas[areas > 0]))
        least = max(MIN_BLOB_PX, FRAGMENT_SHARE * usual)
        blobs += [(kind, comp, stats[n], n) for n in range(1, count) if areas[n - 1] >= least]
    if not blobs:
        return Detections.empty()
    # every pixel's nearest blob, tokens aside (they lie on the board, which owns them)
    ids = np.zeros(fg.shape, np.int32)
    for k, (kind, comp, stat, n) in enumerate(blobs, start=1):
        if kind != "token":  # within the blob's box (its stats), not the whole map
            x0, y0 = stat[cv2.CC_STAT_LEFT], stat[cv2.CC_STAT_TOP]
            box = (slice(y0, y0 + stat[cv2.CC_STAT_HEIGHT]),
                   slice(x0, x0 + stat[cv2.CC_STAT_WIDTH]))
            ids[box][comp[box] == n] = k
    _, nearest = cv2.distanceTransformWithLabels(  # labels the blob pixels in raster order
        (ids == 0).astype(np.uint8), cv2.DIST_L2, 5, labelType=cv2.DIST_LABEL_PIXEL)
    owner = np.concatenate([[0], ids[ids > 0]])[nearest]
    sy = shape[0] / prob.shape[1]
    sx = shape[1] / prob.shape[2]
    quads, kinds, confs = [], [], []
    starts: dict[int, tuple[npt.NDArray[np.float32], ...]] = {}  # sheets', boards' others
    for k, (kind, comp, stat, n) in enumerate(blobs, start=1):
        x0, y0 = stat[cv2.CC_STAT_LEFT], stat[cv2.CC_STAT_TOP]
        bw, bh = stat[cv2.CC_STAT_WIDTH], stat[cv2.CC_STAT_HEIGHT]
        sub = comp[y0:y0 + bh, x0:x0 + bw] == n
        # the blob's border pixels hold every corner of its hull: no need for the inside's
        border, _ = cv2.findContours(sub.astype(np.uint8), cv2.RETR_EXTERNAL,
                                     cv2.CHAIN_APPROX_NONE, offset=(int(x0), int(y0)))
        pixels = _pixel_corners(np.concatenate(border).reshape(-1, 2).astype(np.float32))
        (cx, cy), (rw, rh), angle = cv2.minAreaRect(cv2.convexHull(pixels))
        rect = ((cx, cy), (rw / INTERIOR, rh / INTERIOR), angle)
        outline = None if kind == "token" else _outline(whole, owner, k, (x0, y0, bw, bh))
        grown_area = rect[1][0] * rect[1][1]
        corners = None
        if outline is not None and (
                0.4 * grown_area < outline[0][1][0] * outline[0][1][1] < 2.5 * grown_area):
            (ox, oy), (ow, oh), oa = outline[0]
            shrink = OUTLINE_SHRINK.get(kind, OUTLINE_SHRINK_CARD)
            rect = ((ox, oy), (max(1.0, ow - 2 * shrink), max(1.0, oh - 2 * shrink)), oa)
            if kind in LARGE_KINDS:  # the outline's hull corners, its rectangle's, or
                # where lines along its sides meet: each is right in some photos
                if kind not in RECT_FIRST:
                    corners = _four_corners(outline[1])
                others = [_corners_of_side_lines(outline[1], cv2.boxPoints(outline[0]),
                                                 inset=shrink)]
                if corners is not None:
                    others.append(cv2.boxPoints(rect))
                starts[len(quads)] = tuple(short_edge_first(_to_image(c, shape, sx, sy))
                                           for c in others if c is not None)
        if corners is None:
            corners = np.asarray(cv2.boxPoints(rect), np.float32)
        quads.append(short_edge_first(_to_image(corners, shape, sx, sy)))
        kinds.append(kind)
        confs.append(float(1.0 - prob[0, y0:y0 + bh, x0:x0 + bw][sub].mean()))
    data = {"other_outlines": tuple(starts.get(i, ()) for i in range(len(quads)))
            } if starts else {}
    unsqueezes = None
    if not data:
        quads, kinds, confs, unsqueezes = _rox_runs_split(quads, kinds, confs)
    return Detections(np.asarray(quads, np.float32), _rox_kinds(quads, kinds, unsqueezes),
                      confidences=np.asarray(confs, np.float32), data=data)


def _to_image(corners: npt.NDArray[np.float32], shape: tuple[int, ...], sx: float, sy: float
              ) -> npt.NDArray[np.float32]:
    """Net-pixel corners scaled by (sx, sy) to image pixels, kept inside the image."""
    box = np.asarray(corners, np.float32) * np.asarray([sx, sy], np.float32)
    box[:, 0] = box[:, 0].clip(0, shape[1])
    box[:, 1] = box[:, 1].clip(0, shape[0])
    return box


ROX_RUN_SLACK = (0.3, 0.35)
ROX_RUN_WIDTH = (0.75, 1.3)
"""A Rox blob whose outline, the camera's squeeze undone (``unsqueezed``), is k >= 2
times as long as wide (from ``ROX_RUN_SLACK[0]`` less to ``[1]`` more: the outline is
shrunk at its two ends only, so three whole cards outline 3.33 times as long as wide)
and as wide as the photo's element cards (``ROX_RUN_WIDTH`` of their median side) is k
touching element cards whose interiors the net joined into one blob: it is cut into k
squares along its length. A scoring card is 0.65 as wide as long. Seen on rendered
seeds 61200-61239 and 61300-61339 (normal): 61306 lost 6 of 17 element cards to three
such blobs (each outlined as one long piece and read as a scoring card), 1.76-2.31 as
long as wide as seen; no true scoring card's outline was over 1.4. A scoring card
touching an element card (not seen there: scoring cards lie apart) would be cut too,
and its half read as an element card without edge symbols: unsure."""


def unsqueezed(quads: list[npt.NDArray[np.float32]], rows: list[int], *,
               at: Sequence[int] | None = None) -> list[npt.NDArray[np.float64]]:
    """For each Rox card ``rows`` of ``quads`` (or only those at the positions ``at`` of
    ``rows``, the rest still the neighbours), the matrix that undoes the camera's squeeze
    where it lies (see ``_rox_kinds``), or the identity with fewer than three."""
    edges = [np.column_stack([quads[i][1] - quads[i][0], quads[i][3] - quads[i][0]])
             .astype(np.float64) for i in rows]
    grams = np.array([m @ m.T / max(abs(float(np.linalg.det(m))), 1e-9) for m in edges])
    centres = np.array([quads[i].mean(axis=0) for i in rows]).reshape(-1, 2)
    cards = list(range(len(rows)) if at is None else at)
    if len(edges) < 3 or not cards:
        return [np.eye(2) for _ in cards]
    # the squeeze where each card lies: its nearest cards', all cards at once (each
    # card's the same steps, element for element, as one at a time: the same bits)
    near = np.argsort(np.linalg.norm(centres[None, :, :] - centres[cards][:, None, :], axis=2),
                      axis=1)[:, :SQUEEZE_CARDS]
    values, vectors = np.linalg.eigh(np.median(grams[near], axis=1))
    return [vectors[n] @ np.diag(values[n] ** -0.5) @ vectors[n].T if values[n].min() > 0
            else np.eye(2) for n in range(len(cards))]


def _rox_runs_split(quads: list[npt.NDArray[np.float32]], kinds: list[str],
                    confs: list[float]
                    ) -> tuple[list[npt.NDArray[np.float32]], list[str], list[float],
                               list[npt.NDArray[np.float64]] | None]:
    """Rox blobs that are runs of touching element cards (``ROX_RUN_*``) cut into one
    square quad per card; other pieces as they are. Also the Rox cards' ``unsqueezed``
    when none was cut (the same quads: ``_rox_kinds`` needs them again), else None."""
    rows = [i for i, k in enumerate(kinds) if k == "rox_card"]
    if len(rows) < 3:
        return quads, kinds, confs, None
    unsqueezes = unsqueezed(quads, rows)
    sides = []
    for i, unsqueeze in zip(rows, unsqueezes, strict=True):
        a = float(np.linalg.norm(unsqueeze @ (quads[i][1] - quads[i][0])))
        b = float(np.linalg.norm(unsqueeze @ (quads[i][3] - quads[i][0])))
        sides.append((a, b))
    square = float(np.median([max(a, b) for a, b in sides if max(a, b) < 1.25 * min(a, b)]
                             or [0.0]))
    cut: dict[int, int] = {}
    for i, (a, b) in zip(rows, sides, strict=True):
        long, short = max(a, b), min(a, b)
        k = math.floor(long / max(short, 1e-9) + ROX_RUN_SLACK[0])
        if (k >= 2 and -ROX_RUN_SLACK[0] <= long / short - k <= ROX_RUN_SLACK[1]
                and ROX_RUN_WIDTH[0] * square <= short <= ROX_RUN_WIDTH[1] * square):
            cut[i] = k if a > b else -k  # along the first edge, or along the second
    if not cut:
        return quads, kinds, confs, unsqueezes
    out_q, out_k, out_c = [], [], []
    for i, (q, kind, conf) in enumerate(zip(quads, kinds, confs, strict=True)):
        if i not in cut:
            out_q.append(q)
            out_k.append(kind)
            out_c.append(conf)
            continue
        k = abs(cut[i])
        p = q if cut[i] > 0 else np.roll(q, -1, axis=0)  # p0->p1 runs along the blob
        for piece in cut_along_first_edge(p, k):
            out_q.append(short_edge_first(piece))
            out_k.append(kind)
            out_c.append(conf)
    return out_q, out_k, out_c, None


def _rox_kinds(quads: list[npt.NDArray[np.float32]], kinds: list[str],
               unsqueezes: Sequence[npt.NDArray[np.float64]] | None = None
               ) -> tuple[str, ...]:
    """Rox cards narrower than ROX_SCORING_ASPECT, once the camera's squeeze is undone,
    are scoring cards (44×68 mm beside 68×68). A tilted camera squeezes the photo along
    one direction: a square card turned one way looks narrow, a scoring card turned the
    other way looks square. The squeeze is measured on the cards themselves (most are
    square): each card's two edge vectors M give M·Mᵀ ∝ the squeeze's A·Aᵀ, whose median
    over the SQUEEZE_CARDS cards nearest to a card is undone before that card's shape is
    judged (three cards or more; else the shapes are taken as seen). On 16 rendered
    scenes: 1 of 272 cards of the wrong kind at normal difficulty, 3 of 267 at hard (by
    the shape as seen: 12 of 272 at normal). ``unsqueezes``: the Rox cards' ``unsqueezed``
    when already worked (``_rox_runs_split``)."""
    rows = [i for i, k in enumerate(kinds) if k == "rox_card"]
    out = list(kinds)
    if unsqueezes is None:
        unsqueezes = unsqueezed(quads, rows)
    for i, unsqueeze in zip(rows, unsqueezes, strict=True):
        m = np.column_stack([quads[i][1] - quads[i][0], quads[i][3] - quads[i][0]])
        sides = np.linalg.svd(unsqueeze @ m.astype(np.float64), compute_uv=False)
        if sides[1] < ROX_SCORING_ASPECT * sides[0]:
            out[i] = "rox_scoring"
    return tuple(out)
