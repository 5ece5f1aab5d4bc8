"""Fit a sheet's or board's quad to its printed layout: the located outline is only as
good as the paper's visible edge (cut by a card lying on it, a corner lost in glare),
but the coloured rows printed on it are seen whole. The quad is refined by ECC image
alignment (Evangelidis & Psarakis 2008, ``cv2.findTransformECC``) of the layout's
colour pattern to the photo's colourfulness, a homography, from the located quad.

Only the layout's geometry is assumed (where the coloured rows lie: the same table the
sheet reader places its boxes from), not its artwork or its colours.

Used for the Qwixx pad. The Cat in the Box board was tried and left out: its cells
repeat every ninth of its width, so a fit can slip by a whole column (a column washed
out by a lamp's glare), and held to less than half a cell it changed nothing.

``fit_card_outline`` fits a card's four sides to the straight edges around it, for
readers that cut small patches near a card's border (the Rox edge symbols).
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TypeVar

import cv2
import numpy as np
import numpy.typing as npt

from companion.synth.pieces import PIECE_MM, qwixx_sheet_layout
from companion.vision.detections import side_lengths

Image = npt.NDArray[np.uint8]
Quad = npt.NDArray[np.float32]
_T = TypeVar("_T")

LONG_SIDE = (120, 240)
"""The template's long side in pixels, coarse then fine: the coarse fit reaches further,
the fine one places the rows and cells to a pixel or two."""
MARGIN = 0.12
"""The photo is sampled this share of the template's size beyond the located quad on
every side, so an outline that was found too small can grow."""
MAX_SHIFT = 0.12
"""A refined corner may move at most this share of the quad's diagonal; a larger move
means the alignment went astray and the located quad is kept."""
MIN_GAIN = 0.02
"""The refined fit must correlate this much better than the located one to be used."""
ITERATIONS = 30


@lru_cache(maxsize=8)
def layout_template(kind: str, long_side: int) -> npt.NDArray[np.float32]:
    """The colourful parts of a piece's face (1 where the print is coloured, a lower
    level for pale boxes, 0 for the white paper), upright, ``long_side`` pixels wide.
    Cached (the same few templates serve every fit; drawing one took 1 ms), so read-only."""
    w_mm, h_mm = PIECE_MM[kind]
    W, H = long_side, round(long_side * h_mm / w_mm)
    out = np.zeros((H, W), np.float32)

    def fill(rect: tuple[float, float, float, float], level: float) -> None:
        x0, y0, x1, y1 = (round(v) for v in rect)
        out[y0:y1, x0:x1] = level

    if kind == "qwixx_sheet":
        layout = qwixx_sheet_layout(W, H)
        top, row_h = H * 0.16, H * 0.16
        for i, row in enumerate(("red", "yellow", "green", "blue")):
            fill((W * 0.03, top + i * row_h, W * 0.97, top + (i + 1) * row_h), 1.0)
            for rect in layout[row]:
                fill(rect, 0.35)
    else:
        raise ValueError(f"no printed layout for {kind!r}")
    template: npt.NDArray[np.float32] = cv2.GaussianBlur(out, (0, 0), 1.0)
    template.flags.writeable = False
    return template


def colourfulness(image: Image) -> npt.NDArray[np.float32]:
    """Chroma (distance from grey in Lab's a*, b*) of a BGR image, 0..~1."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    a, b = lab[..., 1] - 128.0, lab[..., 2] - 128.0
    out: npt.NDArray[np.float32] = np.sqrt(a * a + b * b) / 100.0
    return out


def align_to_layout(image: Image, quad: npt.ArrayLike, kind: str,
                    long_sides: tuple[int, ...] = LONG_SIDE) -> tuple[Quad, float]:
    """``quad`` (image pixels, clockwise from the face's upright top-left) moved onto the
    printed layout of ``kind`` as the photo shows it, and the fit's correlation (-1..1).
    The quad comes back unchanged when the alignment fails or strays. ``long_sides``:
    the template's sizes, coarse to fine (the coarse one alone is a quick look)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    located = refined = q
    before = None
    for long_side in long_sides:
        template = layout_template(kind, long_side)
        fitted = _fit(image, refined, template)
        if before is None:
            before = fitted[2]
        if fitted[0] is None:
            break
        refined, after = fitted[0], fitted[1]
    assert before is not None
    diagonal = float(np.linalg.norm(q[2] - q[0]))
    shift = float(np.max(np.linalg.norm(refined - located, axis=1)))
    if refined is located or shift > MAX_SHIFT * diagonal or after < before + MIN_GAIN:
        return located, before
    return refined, after


SEARCH_TURNS = (-8.0, -4.0, 0.0, 4.0, 8.0)
"""Degrees the searched layout is turned from the start's own direction."""
SEARCH_SCALES = (0.8, 0.9, 1.0, 1.1)
"""Widths of the searched layout, as shares of the start's mean long side."""
SEARCH_REACH = 0.3
"""The layout is looked for this share of its size beyond the start's on every side."""


def search_layout(image: Image, quad: npt.ArrayLike, kind: str) -> tuple[Quad, float]:
    """Where the printed layout of ``kind`` lies near ``quad`` (clockwise from the face's
    upright top-left), found by template matching over a few turns and sizes of an
    upright rectangle of the piece's aspect about the quad's middle, and how well it
    matched (-1..1): a start for ``align_to_layout`` when the located outline is too
    far off for ECC to converge (a corner run on to a card beside the sheet). Worked
    once a start (``fits_remembered``)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    return _once("search", (image,), (q.tobytes(), kind), lambda: _search_once(image, q, kind))


def _search_once(image: Image, q: Quad, kind: str) -> tuple[Quad, float]:
    """``search_layout`` worked, from the start ``q`` ((4, 2) float32)."""
    template = layout_template(kind, LONG_SIDE[0])
    H, W = template.shape
    mx, my = round(W * SEARCH_REACH), round(H * SEARCH_REACH)
    centre = q.mean(axis=0)
    along = (q[1] - q[0]) + (q[2] - q[3])
    angle = float(np.degrees(np.arctan2(along[1], along[0])))
    long_side = float(np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2
    best: tuple[float, Quad] = (-2.0, q)
    for turn in SEARCH_TURNS:
        for scale in SEARCH_SCALES:
            # image -> canvas: the rectangle about ``centre`` lands on the canvas's middle
            m = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), angle + turn,
                                        W / (scale * long_side))
            m[:, 2] += np.array([mx + W / 2, my + H / 2]) - centre
            view = cv2.warpAffine(image, m, (W + 2 * mx, H + 2 * my), flags=cv2.INTER_AREA,
                                  borderMode=cv2.BORDER_REPLICATE)
            seen = cv2.GaussianBlur(colourfulness(view), (0, 0), 1.0)
            scores = cv2.matchTemplate(seen, template, cv2.TM_CCOEFF_NORMED)
            _, score, _, (x, y) = cv2.minMaxLoc(scores)
            if score > best[0]:
                corners = np.array([[x, y], [x + W, y], [x + W, y + H], [x, y + H]],
                                   np.float32)
                back = cv2.invertAffineTransform(m)
                found = corners @ back[:, :2].T.astype(np.float32) + back[:, 2].astype(
                    np.float32)
                best = (float(score), found.astype(np.float32))
    return best[1], best[0]


_memory = threading.local()
"""``_memory.fits``, while ``fits_remembered`` is on in this thread: each fit and layout
search worked, by its image and template (their ids) and start, with the image and
template (held, so their ids name them) and the result. One per thread: photos read in
parallel threads do not share (or clear) each other's."""


@contextmanager
def fits_remembered() -> Iterator[None]:
    """Within: an ECC fit (``_fit``) or a layout search (``search_layout``) of the same
    image object from the same start with the same template is worked once and its result
    handed out again (a copy). A sheet's read tries the same start more than once (its
    fit's coarse look in ``_column_refit`` and again in ``_searched_refit``, a searched
    place's fit in ``_pad_fit`` and again in ``_searched_refit``), and both are
    deterministic, so the results are the same: dev Qwixx 61000+20 normal, 46 of 337
    fits and 6 of 38 searches were repeats (16 ms CPU a photo on average, most on the
    slow photos). Nested, the outer memory serves."""
    if getattr(_memory, "fits", None) is not None:
        yield
        return
    _memory.fits = {}
    try:
        yield
    finally:
        _memory.fits = None


def _once(work: str, held: tuple[Any, ...], key: tuple[Any, ...], worked: Callable[[], _T]
          ) -> _T:
    """``worked()``, or its result for the same ``work``, objects ``held`` (the image, the
    template: the same objects) and ``key`` when ``fits_remembered`` is on and has it (a
    copy: callers may change what they get)."""
    remembered: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] | None = getattr(
        _memory, "fits", None)
    if remembered is None:
        return worked()
    at = (work, *(id(h) for h in held), *key)
    entry = remembered.get(at)
    if entry is None or any(a is not b for a, b in zip(entry[0], held, strict=True)):
        entry = (held, worked())
        remembered[at] = entry
    result: _T = copy.deepcopy(entry[1])
    return result


def _fit(image: Image, quad: Quad, template: npt.NDArray[np.float32]
         ) -> tuple[Quad | None, float, float]:
    """One ECC fit of ``template`` from ``quad``: (refined quad or None, correlation
    after, correlation before); worked once a start (``fits_remembered``)."""
    return _once("fit", (image, template), (quad.dtype.str, quad.shape, quad.tobytes()),
                 lambda: _fit_once(image, quad, template))


def _fit_once(image: Image, quad: Quad, template: npt.NDArray[np.float32]
              ) -> tuple[Quad | None, float, float]:
    """``_fit`` worked."""
    H, W = template.shape
    mx, my = round(W * MARGIN), round(H * MARGIN)
    # the photo around the quad, warped so the quad lands at the template's place
    canvas = np.array([[mx, my], [mx + W, my], [mx + W, my + H], [mx, my + H]], np.float32)
    to_canvas = cv2.getPerspectiveTransform(quad, canvas)
    view = cv2.warpPerspective(image, to_canvas, (W + 2 * mx, H + 2 * my),
                               flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    seen = cv2.GaussianBlur(colourfulness(view), (0, 0), 1.0)
    warp = np.array([[1, 0, mx], [0, 1, my], [0, 0, 1]], np.float32)
    before = _correlation(template, seen, warp)
    try:
        after, warp = cv2.findTransformECC(
            template, seen, warp, cv2.MOTION_HOMOGRAPHY,
            (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, ITERATIONS, 1e-4), None, 3)
    except cv2.error:
        return None, before, before
    corners = np.array([[[0, 0]], [[W, 0]], [[W, H]], [[0, H]]], np.float32)
    on_canvas = cv2.perspectiveTransform(corners, warp.astype(np.float64))
    refined = cv2.perspectiveTransform(on_canvas, np.linalg.inv(to_canvas)).reshape(4, 2)
    if not np.all(np.isfinite(refined)):
        return None, before, before
    return refined.astype(np.float32), float(after), before


def _correlation(template: npt.NDArray[np.float32], seen: npt.NDArray[np.float32],
                 warp: npt.NDArray[np.float32]) -> float:
    """Zero-mean normalised correlation of the template with the photo under ``warp``."""
    H, W = template.shape
    back = cv2.warpPerspective(seen, warp, (W, H), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    a = template - template.mean()
    b = back - back.mean()
    return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-9))


OUTLINE_REACH = 0.15
"""A card's side is looked for this share of its length either way of the located one."""
OUTLINE_SAMPLES = 24
"""Points along each side where the photo is sampled across it."""
OUTLINE_CANDIDATES = 4
"""The strongest distinct lines kept per side; the four sides are then chosen together."""
OUTLINE_QUANTILE = 0.2
"""A line's strength is this quantile of the edge strength along it: a card's edge runs
its whole length, a row of symbols inside the card has gaps."""
OUTLINE_SHAPE_WEIGHT = 3.0
"""How much a departure from the card's known aspect costs, against the sides' strength
(relative to the card's strongest side)."""


def piece_aspect(kind: str) -> float:
    """A piece's long side over its short side (``companion.synth.pieces.PIECE_MM``, the
    sizes COMPONENTS.md gives), the ``aspect`` ``fit_card_outline`` keeps."""
    w_mm, h_mm = PIECE_MM[kind]
    return max(w_mm, h_mm) / min(w_mm, h_mm)


def fit_card_outline(image: Image, quad: npt.ArrayLike, *, aspect: float, count: int = 1
                     ) -> list[Quad]:
    """``quad`` (image pixels, corner order kept) with each side moved onto a straight
    edge of the BGR ``image`` near it, the ``count`` best fits first: for each side the
    strongest few lines within ``OUTLINE_REACH`` of it (strength = a low quantile of the
    colour step across the line), then the four that are strongest together while keeping
    the card's ``aspect`` (long over short side). Where two cards touch, the seam between
    them is faint and a row of symbols inside can look stronger; the aspect settles most
    of those, and a reader can try the next fits."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    centre = q.mean(axis=0)
    lengths = side_lengths(q)
    if lengths.min() < 8:
        return [np.asarray(quad, np.float32).reshape(4, 2)]
    sides = []
    for k in range(4):
        a, b = q[k], q[(k + 1) % 4]
        normal = outward_normal(a, b, centre)
        sides.append((a, b, normal, *_side_lines(image, a, b, normal, lengths[k])))
    strongest = max(float(s[4][:, 2].max()) for s in sides) + 1e-6
    # every choice of one candidate per side: its mean offsets and strengths
    choice = _side_choices()
    shift = np.stack([sides[k][3][choice[:, k]] for k in range(4)], axis=1)
    strength = np.stack([sides[k][4][choice[:, k], 2] for k in range(4)], axis=1)
    across_02 = (lengths[1] + lengths[3]) / 2 + shift[:, 0] + shift[:, 2]
    across_13 = (lengths[0] + lengths[2]) / 2 + shift[:, 1] + shift[:, 3]
    ratio = np.maximum(across_02, across_13) / np.maximum(np.minimum(across_02, across_13), 1e-6)
    total = strength.sum(axis=1) / strongest - OUTLINE_SHAPE_WEIGHT * np.abs(ratio - aspect)
    order = choice[np.argsort(-total, kind="stable")]
    points = np.empty((len(order), 4, 2))  # each choice's four lines, best first
    ways = np.empty((len(order), 4, 2))
    for k in range(4):
        a, b, normal, _, found = sides[k]
        p0 = a + 0.1 * (b - a) + found[order[:, k], 0][:, None] * normal
        p1 = a + 0.9 * (b - a) + found[order[:, k], 1][:, None] * normal
        points[:, k], ways[:, k] = p0, p1 - p0
    corners, met = _meeting_corners_each(points, ways)
    corners = corners[met]
    fits: list[Quad] = []  # the best first, each 1 px or more from the fits before it
    apart = np.ones(len(corners), bool)  # (repeated candidates give the same quad twice)
    while len(fits) < count and apart.any():
        fit = corners[int(np.argmax(apart))]
        fits.append(fit.copy())
        apart &= ~(np.abs(corners - fit).max(axis=(1, 2)) < 1.0)
    return fits or [np.asarray(quad, np.float32).reshape(4, 2)]


def outward_normal(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64],
                   centre: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The unit normal of the side a→b of a quad around ``centre``, pointing out of it."""
    along = (b - a) / max(float(np.linalg.norm(b - a)), 1e-12)
    normal = np.array([along[1], -along[0]])
    return -normal if float(normal @ ((a + b) / 2 - centre)) < 0 else normal


def meeting_corners(lines: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]
                     ) -> Quad | None:
    """The four corners where each (point, direction) line meets the one before it."""
    corners = []
    for k in range(4):
        (p1, d1), (p2, d2) = lines[k - 1], lines[k]
        m = np.column_stack([d1, -d2])
        if abs(np.linalg.det(m)) < 1e-6:
            return None
        corners.append(p1 + np.linalg.solve(m, p2 - p1)[0] * d1)
    return np.asarray(corners, np.float32)


@lru_cache(maxsize=1)
def _side_choices() -> npt.NDArray[np.intp]:
    """Every choice of one of the ``OUTLINE_CANDIDATES`` lines per side, (choices, 4),
    made once (read-only)."""
    choice = np.array(list(itertools.product(range(OUTLINE_CANDIDATES), repeat=4)))
    choice.flags.writeable = False
    return choice


def _meeting_corners_each(points: npt.NDArray[np.float64], ways: npt.NDArray[np.float64]
                          ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """``meeting_corners`` of many quads' lines at once ((N, 4, 2) points and directions):
    (N, 4, 2) corners and whether each quad's lines all meet. numpy solves and takes the
    determinant of each 2×2 system alone, as for one quad, so the corners are the same
    to the bit (a Rox card's outline fit tries up to 256 line choices, and one quad at a
    time cost about 1 ms of Python a card; dev Rox 61000+15 normal: 12 ms CPU a photo)."""
    ahead, behind = ways, np.roll(ways, 1, axis=1)  # line k and the one before it
    systems = np.stack([behind, -ahead], axis=-1)  # columns d1, -d2, as meeting_corners
    parallel = np.abs(np.linalg.det(systems)) < 1e-6
    systems[parallel] = np.eye(2)  # (left out below: a singular system would raise)
    start = np.roll(points, 1, axis=1)
    along = np.linalg.solve(systems, (points - start)[..., None])[..., 0, 0]
    corners: npt.NDArray[np.float32] = (start + along[..., None] * behind).astype(np.float32)
    return corners, ~parallel.any(axis=1)


@lru_cache(maxsize=16)
def _line_samples(n: int, samples: int) -> npt.NDArray[np.int32]:
    """Flat indices into a (``samples``, ``n``) array of edge strengths across a side
    (sample points along it, ``n`` offsets across) of every straight line from offset i
    at the first sample to offset j at the last: shape (n, n, samples). Cached by size
    (sides of the same length share it; int32 to keep the cache small, 1.4 MB at n = 121)."""
    index = np.arange(n)
    weight = (np.linspace(0.1, 0.9, samples) - 0.1) / 0.8
    at = np.rint(index[:, None, None] * (1 - weight)[None, None, :]
                 + index[None, :, None] * weight[None, None, :]).astype(np.intp)
    flat: npt.NDArray[np.int32] = (np.arange(samples)[None, None, :] * n + at).astype(np.int32)
    flat.flags.writeable = False
    return flat


def _side_lines(image: Image, a: npt.NDArray[np.float64], b: npt.NDArray[np.float64],
                normal: npt.NDArray[np.float64], length: float
                ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The ``OUTLINE_CANDIDATES`` strongest distinct lines near the side a→b: (their mean
    offset along ``normal`` in pixels, rows of (offset at 10 % of the side, offset at
    90 %, strength))."""
    step = 0.5
    reach = max(3.0, OUTLINE_REACH * length)
    offsets = np.arange(-reach, reach + 1e-9, step)
    ts = np.linspace(0.1, 0.9, OUTLINE_SAMPLES)
    base = a[None] + ts[:, None] * (b - a)[None]
    points = (base[:, None, :] + offsets[None, :, None] * normal[None, None, :]).astype(np.float32)
    values = cv2.remap(image, points[..., 0], points[..., 1], cv2.INTER_LINEAR,
                       borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    pixel = int(round(1 / step))
    edge = np.zeros(values.shape[:2], np.float32)  # colour step across 1 px, per sample
    edge[:, pixel:-pixel] = np.abs(values[:, 2 * pixel:] - values[:, :-2 * pixel]).sum(axis=2)
    n = len(offsets)
    rank = OUTLINE_QUANTILE * (len(ts) - 1)  # np.quantile's, by partition (faster)
    low, high = int(np.floor(rank)), int(np.ceil(rank))
    # one partition at ``high``: the ``low``-th value is then the largest before it
    # (the same values as a partition at both, which numpy does 6x slower)
    ranked = np.partition(np.take(edge.ravel(), _line_samples(n, len(ts))), high, axis=2)
    at_high = ranked[..., high]
    at_low = ranked[..., :high].max(axis=2) if high > low else at_high
    strength = at_low + (rank - low) * (at_high - at_low)
    peaks = (strength >= cv2.dilate(strength, np.ones((9, 9), np.uint8))) & (strength > 0)
    i, j = np.nonzero(peaks)  # local maxima: lines at least 2 px apart at an end
    order = np.argsort(strength[i, j])[::-1][:OUTLINE_CANDIDATES]
    if not len(order):
        i, j, order = np.array([n // 2]), np.array([n // 2]), np.array([0])
    order = np.resize(order, OUTLINE_CANDIDATES)  # fewer peaks: the strongest repeated
    rows = np.column_stack([offsets[i[order]], offsets[j[order]], strength[i[order], j[order]]])
    return (rows[:, 0] + rows[:, 1]) / 2, rows
