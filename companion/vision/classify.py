"""Read each located piece: its label in the check contract's notation, how sure the
reader is, and which way up it lies.

Each kind of piece has a small CNN (``models/<kind>.onnx``, run with onnxruntime on the
CPU; torch is never imported here). Colours are judged after white balance. Portrait
pieces are read twice, as found and turned 180°; the model knows both "upright" and
"upside down" for every label, so the two readings vote on label and orientation
together (a 6 upside down is not a 9: the tile's logo and the card's underline tell).
Unsure pieces keep a low confidence and their top-3 alternatives; Tesseract is asked
for a second opinion on printed numbers the CNN is still unsure of once the photo is
read (all of them in one Tesseract process: starting it costs more than reading a crop).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.games.base import InputError
from companion.synth.pieces import PIECE_MM
from companion.vision.align import fit_card_outline, piece_aspect
from companion.vision.colour import apply_gains, white_gains
from companion.vision.detections import (
    MIN_CONFIDENCE,
    Detections,
    quad_iou,
    rectify,
    rotate_quad,
    same_corner_order,
    side_lengths,
)

if TYPE_CHECKING:
    from companion.calibration.deck import DeckProfile

Image = npt.NDArray[np.uint8]

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
RETRY_KINDS = ("nummix_tile", "nox_card", "qwixx_card", "catbox_card", "rox_scoring")
"""Kinds read again, when unsure, through other outlines (``_other_outlines``)."""
PIECE_ASPECT = {kind: piece_aspect(kind) for kind in RETRY_KINDS}
"""Long over short side of the numbered pieces, for ``align.fit_card_outline``: a piece
still unsure after the nudges is read through its outline fitted to the photo (the
``EDGE_FITS`` best fits), kept if sure and surer. Located Nummix tiles (seeds
61000-61059 normal / 61000-61039 hard): read sure 1649 -> 1664 / 944 -> 964 of 1690 /
1032, sure and wrong 2 -> 3 / 6 -> 5."""
PAIR_KINDS = ("nox_card",)
"""Kinds that lie side by side in rows (a Nox kitty), where a square-looking card is
read along its row (``_across_neighbour``)."""
SPLIT_KINDS = ("nox_card", "qwixx_card")
"""Kinds whose touching cards the locator now and then gives one outline (a Nox kitty,
a Qwixx play of one colour): ``_split_card_pairs``."""
PAIR_AREA = 1.4
"""An outline this many times the area of its neighbours' (the median of the
``PAIR_NEIGHBOURS`` nearest pieces of its kind) may be two or more cards side by side:
two if squarer than one card, three if its area holds three and its thirds look more
like a card than it does (``_joined_count``)."""
PAIR_NEIGHBOURS = 4
SQUARE_LOOK = 1.35
"""A card whose outline is less than this many times as long as wide (a camera's
tilt squeezes it) shows no axis of its own: which of its sides is its top is judged
from its neighbour (``_across_neighbour``)."""
NEIGHBOUR_REACH = 1.4
"""The neighbour whose place says which way a card lies is its nearest card of its kind
within this many card sizes (the square root of its area); it must lie across the card
(their axes more than 60° apart, ``ACROSS_COS``), so that a quarter turn lines them up.
Located Nox cards, seeds 61300-61399 (normal): 9 of 1180 read on their side -> 2 (the
card's and its nearest neighbour's axes were 76°-89° apart; single cards are read as
before)."""
ACROSS_COS = 0.5
PAIR_SURE = 0.9
"""Such an outline is two cards when both its halves read at least this sure, the same
way up (three cards when at least two of its thirds do: the cut through a wider outline
is rougher, and an unsure part is read again through other outlines like any card).
Located Nox cards on seeds 61000-61119 (normal): of 39 candidates, the 5 that were two
cards read 0.97-1.0 in both halves; of the 34 single cards (most a stack whose
lower cards widen the outline), no half pair read better than 0.86 and 0.77."""
UNSURE = 0.80
"""Below this confidence a reading is "unsure": Tesseract is consulted (ocr="auto")."""
OCR_MODES = ("auto", "off")
OCR_WEIGHT = 5.0
"""How far Tesseract's reading moves an unsure piece (``_with_ocr``), fitted by the
least negative log-likelihood of the true labels on the unsure crops of located Nummix
tiles, Nox and Qwixx cards (development seeds 61100-61179 normal, 61100-61159 hard:
377 crops; Tesseract gave a number for 158, right for 95). The fold it replaces gave
the labels with the number Tesseract's confidence shared among them and the others the
rest, trusting it 70-330 times over; on those Nummix tiles it doubled the readings
sure (0.5) and wrong, 15 -> 30."""
OCR_SCALE = 3
"""Crops for Tesseract are rectified this many times larger than the CNN's."""
TOP_K = 3
ORT_THREADS = 1
"""onnxruntime threads per session: these models take a millisecond a crop, and one
thread was as fast as two on the 2-core machine and does not fight locate or Tesseract
for the second core (measured)."""
LONG_FIRST = 1.25
"""A quad whose first edge is this much longer than its second starts at a long edge."""

GAMES = ("nox", "qwixx", "rox", "nummix", "catbox")

# The printed number's area in an upright crop (x0, y0, x1, y1 as fractions), per kind.
NUMBER_REGION: dict[str, tuple[float, float, float, float]] = {
    "nummix_tile": (0.0, 0.0, 1.0, 0.72),
    "nox_card": (0.12, 0.18, 0.88, 0.82),
    "qwixx_card": (0.12, 0.18, 0.88, 0.82),
    "catbox_card": (0.12, 0.18, 0.88, 0.82),
    "rox_scoring": (0.1, 0.1, 0.9, 0.9),
}
MAX_NUMBER = {"nummix_tile": 17, "nox_card": 15, "qwixx_card": 12, "catbox_card": 9,
              "rox_scoring": 10}

# Label notation per kind (the check contracts'), used to validate model label files.
LABEL_PATTERNS: dict[str, re.Pattern[str]] = {
    "nummix_tile": re.compile(r"[rkbo](?:[1-9]|1[0-7])|J(?:rk|rb|ro|kb|ko|bo)"),
    "nox_card": re.compile(r"[1-9]|1[0-5]"),
    "qwixx_card": re.compile(r"(?:[rygb]|back|J)(?:[2-9]|1[0-2])"),
    "catbox_card": re.compile(r"[1-9]"),
    "rox_scoring": re.compile(r"[1-9]|10"),
    "rox_card": re.compile(r"fire|water|earth|air|magic"),
    "rox_edge": re.compile(r"fire|water|earth|air|magic"),
    "token": re.compile(r"red|blue|yellow|green|purple|observed"),
    "qwixx_box": re.compile(r"empty|crossed"),
}

# Reference ink colours (BGR after white balance) for the OCR-only path.
INKS: dict[str, dict[str, tuple[int, int, int]]] = {
    "nummix_tile": {"r": (40, 40, 200), "k": (35, 35, 35), "b": (190, 100, 30),
                    "o": (40, 140, 240)},
    "qwixx_card": {"r": (40, 40, 200), "y": (30, 200, 230), "g": (60, 160, 40),
                   "b": (190, 100, 30)},
}


ROX_EDGE_SIDE = 96
"""Rox cards are rectified to this square side to cut out their 16 edge symbols."""
ROX_EDGE_MARGIN = 0.11
ROX_EDGE_PATCH = 0.17


def rox_edge_places(side: float) -> list[tuple[float, float]]:
    """Centres of the 16 edge symbols in a square crop: four per side, clockwise from
    the top-left corner, ``ROX_EDGE_MARGIN`` of the side in from the edge."""
    m = ROX_EDGE_MARGIN * side
    span = side - 2 * m
    places = []
    for k in range(4):
        places.append((m + k / 4 * span, m))
    for k in range(4):
        places.append((side - m, m + k / 4 * span))
    for k in range(4):
        places.append((side - m - k / 4 * span, side - m))
    for k in range(4):
        places.append((m, side - m - k / 4 * span))
    return places


def rox_edge_patches(square: Image, size: int) -> npt.NDArray[np.uint8]:
    """The 16 edge-symbol patches (16, size, size, 3) of a rectified square Rox card:
    each the square around its symbol's place (``rox_edge_places``) warped to ``size``,
    all in one remap (the same sampling as ``rectify`` on each, a grey level apart at
    most)."""
    map_x, map_y = _edge_patch_maps(square.shape[0], size)
    out: npt.NDArray[np.uint8] = cv2.remap(square, map_x, map_y, cv2.INTER_LINEAR,
                                           borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(16, size, size, *square.shape[2:])


@lru_cache(maxsize=8)
def _edge_patch_maps(side: int, size: int) -> tuple[npt.NDArray[np.float32],
                                                      npt.NDArray[np.float32]]:
    """Where each pixel of the 16 stacked patches samples the square card."""
    half = ROX_EDGE_PATCH * side / 2
    step = np.arange(size, dtype=np.float64) * (2 * half / size)
    xs, ys = [], []
    for cx, cy in rox_edge_places(side):
        grid_x, grid_y = np.meshgrid(cx - half + step, cy - half + step)
        xs.append(grid_x)
        ys.append(grid_y)
    return (np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.float32))


def parses(kind: str, label: str) -> bool:
    """Whether ``label`` is in the check contract's notation for ``kind``."""
    pattern = LABEL_PATTERNS.get(kind)
    return pattern is not None and pattern.fullmatch(label) is not None


def number_of(label: str) -> int | None:
    """The printed number a label carries (``r7`` → 7, ``back12`` → 12, ``Jrk`` → None)."""
    match = re.search(r"(\d+)$", label)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class Model:
    """A loaded classifier: onnxruntime session, labels, crop size, orientation classes,
    the temperature its scores are divided by (fitted on held-out crops when it was
    trained, so its probabilities mean what they say; 1.0 for older models), and its
    typical top probability on a right reading (``sure``; label smoothing keeps it
    under 1)."""

    name: str
    kind: str
    session: Any
    labels: tuple[str, ...]
    size: tuple[int, int]
    oriented: bool
    temperature: float = 1.0
    sure: float = 1.0

    def logits(self, crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        """Class scores for (N, h, w, 3) BGR crops, divided by the temperature."""
        x = crops.transpose(0, 3, 1, 2).astype(np.float32) / np.float32(255.0)
        out = self.session.run(None, {"crop": np.ascontiguousarray(x)})[0]
        return np.asarray(out, np.float32) / np.float32(self.temperature)


def model_path(name: str, models_dir: Path = MODELS_DIR) -> Path:
    return models_dir / f"{name}.onnx"


@lru_cache(maxsize=16)
def load_model(name: str, models_dir: Path = MODELS_DIR) -> Model:
    """Load ``models/<name>.onnx`` with its labels file (cached; CPU, one thread pool)."""
    import onnxruntime as ort

    path = model_path(name, models_dir)
    meta_path = models_dir / f"{name}.labels.json"
    if not path.exists() or not meta_path.exists():
        raise InputError("model", f"no classifier for {name!r} in {models_dir}")
    meta = json.loads(meta_path.read_text())
    options = ort.SessionOptions()
    options.intra_op_num_threads = ORT_THREADS
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    size = (int(meta["input"]["width"]), int(meta["input"]["height"]))
    return Model(name, str(meta["kind"]), session, tuple(meta["labels"]), size,
                 bool(meta["oriented"]), float(meta.get("temperature", 1.0)),
                 float(meta.get("sure", 1.0)))


def available_model(kind: str, models_dir: Path = MODELS_DIR) -> bool:
    return model_path(kind, models_dir).exists()


def _softmax(z: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    e = np.exp(z.astype(np.float64) - z.max(axis=-1, keepdims=True))
    out: npt.NDArray[np.float64] = e / e.sum(axis=-1, keepdims=True)
    return out


def portrait_first(quad: npt.ArrayLike, size: tuple[int, int]) -> npt.NDArray[np.float32]:
    """For portrait crops, start the quad at a short edge. Quads from ``locate`` already
    do; only a first edge clearly the longer (by ``LONG_FIRST``) is moved on, since a
    tile standing on a rack, seen from the front, looks nearly square."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    w, h = size
    first, side = np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[3] - q[0])
    if w < h and first > LONG_FIRST * side:
        q = rotate_quad(q, 1)
    return q


def _other_outlines(quad: npt.NDArray[np.float32], kind: str
                    ) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]:
    """(outline to read through, outline to report) to read an unsure piece again:
    nudged (``OUTLINE_NUDGES``: a located outline a few pixels off; the located outline is
    still the one reported), and for a Nummix tile a quarter turn round (a tile standing
    on a rack, seen from above, looks wider than tall, so its outline's short edge is not
    its top). A reading through one of them is kept only if it is sure (``UNSURE``) and
    surer than the first: the best of several readings is surer by chance alone (kept
    whenever surer, a quarter turn made an unsure, right real tile, b3, wrong at 0.57)."""
    out = [(_nudge(quad, *nudge), quad) for nudge in OUTLINE_NUDGES]
    if kind == "nummix_tile":
        out.append((rotate_quad(quad, 1), rotate_quad(quad, 1)))
    return out


def _read_again(model: Model, balanced: Image, starts: list[npt.NDArray[np.float32]],
                readings: list[Reading],
                tries: list[tuple[int, npt.NDArray[np.float32], npt.NDArray[np.float32]]]
                ) -> None:
    """Read pieces again: each try is (piece ``k``, outline to read through, outline to
    report); a reading takes the place of piece ``k``'s (in ``starts`` and ``readings``)
    only if it is sure (``UNSURE``) and surer than the one it replaces."""
    again = _read_quads(model, balanced, [read for _, read, _ in tries])
    for (k, _, report), reading in zip(tries, again, strict=True):
        if reading.probs.max() >= max(UNSURE, readings[k].probs.max()):
            starts[k], readings[k] = report, reading


def _read_quads(model: Model, balanced: Image, quads: Sequence[npt.NDArray[np.float32]]
                ) -> list[Reading]:
    """``read_crops`` of the pieces at ``quads`` (each also from its opposite corner)."""
    if not quads:
        return []
    size = model.size
    crops = np.stack([rectify(balanced, q, size=size) for q in quads])
    opposite = np.stack([rectify(balanced, rotate_quad(q, 2), size=size) for q in quads]
                        ) if model.oriented else None
    return read_crops(model, crops, opposite)


@dataclass(frozen=True)
class Reading:
    """One piece read: label probabilities (over the model's labels) and orientation."""

    probs: npt.NDArray[np.float64]
    turned: bool  # the piece lies upside down relative to the quad as given


def read_crops(model: Model, crops: npt.NDArray[np.uint8],
               turned_crops: npt.NDArray[np.uint8] | None = None) -> list[Reading]:
    """Read upright-or-upside-down crops: for oriented models, the crop as found and
    turned 180° are both scored; P(label, turned) ∝ √(p₀(label, t)·p₁₈₀(label, ¬t)).
    ``turned_crops`` are the pieces rectified from the opposite corner (default: the
    crops flipped); rectifying both makes the reading independent of the start corner."""
    if len(crops) == 0:
        return []
    if not model.oriented:
        return [Reading(p, False) for p in _softmax(model.logits(crops))]
    if turned_crops is None:
        turned_crops = np.ascontiguousarray(crops[:, ::-1, ::-1])
    both = _softmax(model.logits(np.concatenate([crops, turned_crops])))
    k = len(model.labels)
    p0 = both[:len(crops)].reshape(-1, k, 2)
    p1 = both[len(crops):].reshape(-1, k, 2)
    upright = np.sqrt(p0[:, :, 0] * p1[:, :, 1])
    flipped = np.sqrt(p0[:, :, 1] * p1[:, :, 0])
    out = []
    for up, down in zip(upright, flipped, strict=True):
        total = up.sum() + down.sum()
        probs = (up + down) / total
        best = int(np.argmax(probs))
        out.append(Reading(probs, bool(down[best] > up[best])))
    return out


def _with_ocr(labels: tuple[str, ...], probs: npt.NDArray[np.float64],
              number: int | None, confidence: float) -> npt.NDArray[np.float64]:
    """Fold Tesseract's reading (``number`` with ``confidence``) into the label
    probabilities as a likelihood ratio: labels carrying that number weigh
    1 + ``OCR_WEIGHT`` × confidence against the others."""
    if number is None or confidence <= 0:
        return probs
    match = np.array([number_of(label) == number for label in labels])
    if not match.any():
        return probs
    combined = probs * np.where(match, 1.0 + OCR_WEIGHT * min(confidence, 1.0), 1.0)
    total = combined.sum()
    return combined / total if total > 0 else probs


def _ink_colour(kind: str, crop: Image) -> tuple[str, float]:
    """The number's ink, nearest reference colour (OCR-only path); (letter, closeness)."""
    from companion.vision.ocr import binarise

    region = NUMBER_REGION[kind]
    mask = binarise(crop, region=region) == 0
    h, w = crop.shape[:2]
    x0, y0, x1, y1 = region
    part = crop[int(y0 * h):max(int(y1 * h), int(y0 * h) + 1),
                int(x0 * w):max(int(x1 * w), int(x0 * w) + 1)]
    if not mask.any():
        return "", 0.0
    ink = part[mask].astype(np.float32).mean(axis=0)
    lab = cv2.cvtColor(ink.reshape(1, 1, 3).astype(np.uint8), cv2.COLOR_BGR2LAB)[0, 0]
    best, best_d, second_d = "", 1e9, 1e9
    for letter, ref in INKS[kind].items():
        ref_lab = cv2.cvtColor(np.array([[ref]], np.uint8), cv2.COLOR_BGR2LAB)[0, 0]
        d = float(np.linalg.norm(lab.astype(np.float32) - ref_lab.astype(np.float32)))
        if d < best_d:
            best, best_d, second_d = letter, d, best_d
        elif d < second_d:
            second_d = d
    return best, float(second_d / (best_d + second_d)) if second_d < 1e9 else 1.0


def _ocr_only(kind: str, balanced: Image, quad: npt.NDArray[np.float32],
              size: tuple[int, int]) -> tuple[str | None, float, bool,
                                              tuple[tuple[str, float], ...]]:
    """Tesseract alone (classifier off): the number (both ways up, the surer wins) and,
    where the colour matters, the nearest ink colour. (label, confidence, turned, alts)."""
    from companion.vision.ocr import read_number

    w, h = size
    big = rectify(balanced, quad, size=(w * OCR_SCALE, h * OCR_SCALE))
    readings = []
    for turned, crop in ((False, big), (True, np.ascontiguousarray(big[::-1, ::-1]))):
        number, conf = read_number(crop, max_value=MAX_NUMBER[kind], region=NUMBER_REGION[kind])
        if number is not None:
            readings.append((conf, turned, number, crop))
    if not readings:
        return None, 0.0, False, ()
    readings.sort(key=lambda r: -r[0])
    conf, turned, number, crop = readings[0]
    label = str(number)
    if kind in INKS:
        letter, closeness = _ink_colour(kind, crop)
        if not letter:
            return None, 0.0, False, ()
        label = f"{letter}{number}"
        conf *= closeness
    if not parses(kind, label):
        return None, 0.0, False, ()
    alternatives = tuple((str(n) if kind not in INKS else f"{label[0]}{n}", round(c, 4))
                         for c, _, n, _ in readings if n != number)[:TOP_K - 1]
    return label, float(conf), turned, ((label, round(float(conf), 4)), *alternatives)


EDGE_SURE_AT = 0.7
"""A card's product of symbol sureness must reach this to be sure; it is reported on
the readers' common scale (``MIN_CONFIDENCE`` 0.5 falls here). On 340 located cards
(rendered seeds 60020-60044) 244 of 245 cards at 0.7 or more were counted exactly,
17 of 27 between 0.5 and 0.7."""
OUTLINE_NUDGES = ((0.95, 0.0, 0.0), (1.05, 0.0, 0.0), (1.0, 0.03, 0.0), (1.0, -0.03, 0.0),
                  (1.0, 0.0, 0.03), (1.0, 0.0, -0.03))
"""An unsure piece's outline read again scaled by 5 % either way and moved by 3 % of its
side along each image axis (``_other_outlines``)."""
EDGE_NUDGED_SURE = 0.7
"""A searched reading is kept only at this sureness: the best of several readings is
surer than one reading by chance alone (nudges alone, on 590 located cards, seeds
60000-60044: kept from 0.7, sure and wrong 4 -> 5; from 0.5, 4 -> 9)."""
EDGE_SEARCH_SCALES = (0.92, 1.0, 1.08)
EDGE_SEARCH_TURNS = (-4.0, 0.0, 4.0)
EDGE_SEARCH_SHIFT = 0.05
"""A card still unsure after the outline fit is searched for coarse to fine: its located
and its best fitted outline each scaled by 8 % and turned by 4° either way, or moved by
5 % of its side each way (16 outlines each), then the surest of all those moved by half
as much each way (8 more). Located outlines of cards in a row are often a little small,
askew or off along the row (the seams are faint). On 1548 located cards (seeds
60000-60119, normal), against the nudges of 5 % and 3 % it replaces: unsure 52 -> 28,
sure and wrong 7 -> 7. Without the shifts in the coarse step: 33 unsure; a finer grid
of scales and turns: one unsure fewer, one sure and wrong more."""


EDGE_SEARCH_CARDS = 6
"""At most this many cards a photo are searched for, the unsure ones first and the surest
first among those as among the rest (each costs 40
readings of 16 symbols): a photo's time stays bounded however many cards it leaves
unsure. On hard rendered scenes (seeds 60000-60029, 382 located cards) the edge reading
took 125 ms a photo with the nudges before the search and 200 ms with it (101 -> 87
unsure), as with no bound; three cards at most left 91 unsure, and at normal
difficulty one photo of 30 (61012) with four unsure cards lost one."""


EDGE_REFIT_BELOW = 0.8
"""Cards read less sure than this are read again through their fitted outline; the
surer cards keep their reading, and the photo its time (on 391 located cards, fitting
every card or only those below 0.8 gave the same counts; below 0.7 made one sure and
wrong. With the search after it, on 1548 located cards, 0.8 and 0.9 gave the same
counts, 0.8 about 8 ms a photo sooner)."""
EDGE_SEARCH_BELOW = 0.8
"""Cards still read less sure than this after the fit are searched for (``_edge_search``),
those under ``MIN_CONFIDENCE`` first: a card read fairly sure through an outline a few
pixels off can have one symbol wrong, and the search finds a surer reading of it. On
the located cards of rendered seeds 61200-61239 and 61300-61339 (normal), searching
from 0.8 rather than from 0.5: sure and wrong 5 -> 1, sure and exact 1019 -> 1023,
photos read exactly 56 -> 60 of 80; the edge reading took about 4 % more time a photo
(hard: 11-17 %). From 0.9: 61 photos, 25-45 % more time."""
EDGE_FITS = 3
"""The best fitted outlines read for such a card (``fit_card_outline``): where a seam is
faint the second or third fit can be the card's own. On 390 located cards (seeds
60000-60029): 1 fit, 361 sure and exact, 0 sure and wrong; 3 fits, 371 and 1; 6 fits,
373 and 2."""


def read_rox_edges(balanced: Image, quads: npt.NDArray[np.float32], models_dir: Path
                   ) -> list[tuple[dict[str, int], float]]:
    """Count each Rox card's 16 edge symbols by element: ({element: count} over all five
    elements, how sure the counts are). Sureness is the product over the 16 symbols of
    each one's top probability against the model's typical one on a right reading
    (``Model.sure``, at most 1 each): a card read as plainly as the model reads its right
    crops is sure; the product is put on the readers' common scale by ``EDGE_SURE_AT``.

    A card read less sure than ``EDGE_REFIT_BELOW`` is read again through its outline
    fitted to the card's edges in the photo (``align.fit_card_outline``, the
    ``EDGE_FITS`` best fits), and the surest reading kept: an outline a few pixels off
    cuts every symbol's patch askew. (On 390 located cards, rendered seeds
    60000-60029, with small nudges after it: sure and exact 317 -> 371, sure and wrong
    2 -> 1.) A card still less sure than ``EDGE_SEARCH_BELOW`` is searched for from
    both outlines (``_edge_search``), and the surest reading kept if it reaches
    ``EDGE_NUDGED_SURE``. (Reading each card at its four quarter turns and averaging was
    tried: on 590 located cards it gained one exact card and cost 30 ms a photo.)"""
    model = load_model("rox_edge", models_dir)
    if len(quads) == 0:
        return []
    out = _edge_readings(model, balanced, list(quads))
    refit = [k for k, (_, sure) in enumerate(out) if sure < EDGE_REFIT_BELOW]
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0) if refit else balanced
    square = piece_aspect("rox_card")
    fitted = {k: fit_card_outline(smooth, quads[k], aspect=square, count=EDGE_FITS)
              for k in refit}
    tried = [(k, fit) for k, fits in fitted.items() for fit in fits]
    for (k, _), reading in zip(tried, _edge_readings(model, balanced, [f for _, f in tried]),
                               strict=True):
        out[k] = max(out[k], reading, key=lambda r: r[1])
    unsure = sorted((k for k, (_, sure) in enumerate(out) if sure < EDGE_SEARCH_BELOW),
                    key=lambda k: (out[k][1] >= MIN_CONFIDENCE, -out[k][1]))[:EDGE_SEARCH_CARDS]
    for k, best in zip(unsure, _edge_search(model, balanced, [
            [quads[k], *fitted.get(k, [])[:1]] for k in unsure]), strict=True):
        if best[1] >= EDGE_NUDGED_SURE and best[1] > out[k][1]:
            out[k] = best
    return out


ELEMENT_EDGES_SURE = 0.7
"""A piece the locator judged a Rox scoring card by its shape is an element card when its
16 edge symbols read at least this sure through one of its outlines fitted square (the
best of a few readings, as ``EDGE_NUDGED_SURE``): a scoring card shows no edge symbols,
an element card partly covered too few. Of the located scoring cards on rendered seeds
61200-61239 and 61300-61339 (normal) and 61200-61239 (hard), no real one read above
0.05; of the element cards judged scoring, the whole ones whose outline was not a
fragment read 0.57-0.99 (4 of 5 at 0.7 or more), every covered one below 0.05."""


ELEMENT_CHECK_REACH = 1.5
"""Only a scoring card within this many element-card sides of an element card's centre
is checked (``_element_cards_by_edges``): scoring cards lie apart from the rows, and
fitting an outline costs a few milliseconds a card."""


def _element_cards_by_edges(balanced: Image, detections: Detections, models_dir: Path
                            ) -> Detections:
    """``detections`` with each Rox scoring card against an element card
    (``ELEMENT_CHECK_REACH``) whose edge symbols read sure through its outline fitted
    square (``ELEMENT_EDGES_SURE``) turned into an element card with that outline: the
    locator judges the two kinds by shape alone (44×68 mm beside 68×68), and a square
    card's outline located a little narrow looks like a scoring card's."""
    cards = [i for i, kind in enumerate(detections.kinds) if kind == "rox_card"]
    centres = detections.quads.mean(axis=1)
    sides = np.array([float(side_lengths(q).mean()) for q in detections.quads])
    scoring = [i for i, kind in enumerate(detections.kinds) if kind == "rox_scoring"
               and any(np.linalg.norm(centres[i] - centres[j]) <= ELEMENT_CHECK_REACH * sides[j]
                       for j in cards)]
    if not scoring:
        return detections
    model = load_model("rox_edge", models_dir)
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
    square = piece_aspect("rox_card")
    tried = [(i, fit) for i in scoring for fit in fit_card_outline(
        smooth, detections.quads[i], aspect=square, count=EDGE_FITS)]
    best: dict[int, tuple[float, npt.NDArray[np.float32]]] = {}
    for (i, fit), (_, sure) in zip(tried, _edge_readings(model, balanced,
                                                          [f for _, f in tried]), strict=True):
        if sure >= ELEMENT_EDGES_SURE and sure > best.get(i, (0.0, fit))[0]:
            best[i] = (sure, fit)
    if not best:
        return detections
    kinds = list(detections.kinds)
    quads = detections.quads.copy()
    for i, (_, fit) in best.items():
        kinds[i], quads[i] = "rox_card", fit
    return detections.with_fields(kinds=tuple(kinds), quads=quads)


def _edge_search(model: Model, balanced: Image, outlines: list[list[npt.NDArray[np.float32]]]
                 ) -> list[tuple[dict[str, int], float]]:
    """The surest reading of each card found coarse to fine (``EDGE_SEARCH_*``) from its
    ``outlines`` (the located one, and the best fitted one if any): each scaled, turned
    or moved, then the surest of all those moved half as far each way."""
    if not outlines:
        return []
    shapes = [(scale, turn) for scale in EDGE_SEARCH_SCALES for turn in EDGE_SEARCH_TURNS
              if (scale, turn) != (1.0, 0.0)]
    shift = EDGE_SEARCH_SHIFT
    steps = [(dx, dy) for dx in (-shift, 0.0, shift) for dy in (-shift, 0.0, shift) if dx or dy]
    coarse = [(n, _nudge(outline, scale, 0.0, 0.0, turn=turn))
              for n, card in enumerate(outlines) for outline in card for scale, turn in shapes]
    coarse += [(n, _nudge(outline, 1.0, dx, dy))
               for n, card in enumerate(outlines) for outline in card for dx, dy in steps]
    steps = [(dx / 2, dy / 2) for dx, dy in steps]
    read = _edge_readings(model, balanced, [quad for _, quad in coarse])
    surest = [max((j for j, (m, _) in enumerate(coarse) if m == n), key=lambda j: read[j][1])
              for n in range(len(outlines))]
    fine = _edge_readings(model, balanced, [_nudge(coarse[j][1], 1.0, dx, dy)
                                            for j in surest for dx, dy in steps])
    return [max([read[j], *fine[n * len(steps):(n + 1) * len(steps)]], key=lambda r: r[1])
            for n, j in enumerate(surest)]


def _edge_readings(model: Model, balanced: Image, quads: list[npt.NDArray[np.float32]]
                   ) -> list[tuple[dict[str, int], float]]:
    """(counts, sureness on the common scale) of the cards at ``quads``, in one call."""
    if not quads:
        return []
    side = ROX_EDGE_SIDE
    patches = np.concatenate([rox_edge_patches(rectify(balanced, quad, size=(side, side)),
                                               model.size[0]) for quad in quads])
    every = _softmax(model.logits(patches)).reshape(len(quads), 16, -1)
    out = []
    for probs in every:
        picks = probs.argmax(axis=1)
        counts = {label: int((picks == k).sum()) for k, label in enumerate(model.labels)}
        product = float(np.prod(np.minimum(1.0, probs.max(axis=1) / model.sure)))
        out.append((counts, product ** (np.log(0.5) / np.log(EDGE_SURE_AT))))
    return out


def _nudge(quad: npt.NDArray[np.float32], scale: float, dx: float, dy: float, *,
           turn: float = 0.0) -> npt.NDArray[np.float32]:
    """``quad`` scaled and turned (``turn`` degrees) about its centre and moved by
    (dx, dy) shares of its mean side."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    centre = q.mean(axis=0)
    side = float(side_lengths(q).mean())
    a = math.radians(turn)
    rotation = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], np.float32)
    out: npt.NDArray[np.float32] = (centre + ((q - centre) @ rotation.T) * scale
                                    + np.float32([dx, dy]) * side).astype(np.float32)
    return out


PROBABILITIES = "_probabilities"
"""Internal ``data`` field while a photo is read: each piece's latest CNN label
probabilities (None if not read by a CNN), so Tesseract is asked last, about the pieces
still unsure after every reading again (``_second_opinion``). Not in the result."""


def _sheet_upright(quad: npt.NDArray[np.float32], boxes: Sequence[Any]
                   ) -> tuple[npt.NDArray[np.float32], bool]:
    """The sheet's quad started at its upright top-left, the corner nearest its red 2
    box (the sheet reader has found which way up it lies), and whether that is known."""
    first = next((b for b in boxes if b.get("row") == "red" and b.get("value") == 2), None)
    if first is None or first.get("quad") is None:
        return quad, False
    centre = np.asarray(first["quad"], np.float32).reshape(4, 2).mean(axis=0)
    k = int(np.argmin(np.linalg.norm(np.asarray(quad, np.float32) - centre, axis=1)))
    return rotate_quad(quad, k), True


BOARD_ROWS = (0.28, 0.87)
"""Heights (shares of the board, top to bottom) of the middle of its first (red) and
last (green) row of cells, as companion.readers.catbox lays the grid out."""


def _boards_upright(balanced: Image, detections: Detections) -> Detections:
    """Each research board turned upright and fitted to its cells (``orient_board``, from
    the locator's other outlines too), and the tokens the circle search missed found in
    its cells' middles (``locate.tokens_in_cells``), added unread."""
    boards = [i for i in detections if detections.kinds[i] == "catbox_board"]
    if not boards:
        return detections
    from companion.vision.locate import tokens_in_cells

    quads = detections.quads.copy()
    oriented = list(detections.oriented)
    confidences = detections.confidences.astype(np.float32).copy()
    others = detections.data.get("other_outlines") or ((),) * len(detections)
    tokens = [detections.quads[i] for i in detections if detections.kinds[i] == "token"]
    more: list[npt.NDArray[np.float32]] = []
    for i in boards:
        quads[i], sure = orient_board(balanced, quads[i], starts=others[i])
        oriented[i] = True
        confidences[i] = max(float(confidences[i]), sure)
        more += tokens_in_cells(balanced, quads[i], tokens + more)
    upright = detections.with_fields(quads=quads, oriented=tuple(oriented),
                                     confidences=confidences)
    if not more:
        return upright
    return Detections.concat([upright, Detections(
        np.asarray(more, np.float32), ("token",) * len(more),
        confidences=np.ones(len(more), np.float32))])


CARD_CHECK_BELOW = 0.97
"""A face-up Qwixx card read at least ``UNSURE`` but less surely than this, whose outline
is larger than a card (``CARD_CHECK_AREA``), is read again (``_cards_checked_on_sheets``)
through a card-sized outline in each of its corners (a Qwixx card's size in the plane of
the nearest score sheet, whose box quads the sheet reader placed), each fitted to the
photo's edges; the mean of those four readings and the first decides. The located
outline of a played card is often turned or too large and takes in part of the next
card, read as its number fairly surely (dev scene 61302: y3 as y4 at 0.91; 61503: J3 as
J4 at 0.94). Of the 85 played cards read 0.80-0.97 over normal and hard scenes
61300-61339 and 61500-61539, read right at the readers' bar (0.5) 75 -> 80, wrong 10 ->
2, unknown 0 -> 3 (Tesseract not asked)."""


CARD_CHECK_AREA = (1.05, 2.5)
"""Only a card whose outline covers this many times a card's area in the sheet's plane is
checked (``CARD_CHECK_BELOW``): of the 85 played cards read 0.80-0.97 (normal and hard
scenes 61300-61339, 61500-61539) the ten read wrong all had outlines 1.07-1.67 cards
large; one right g5 at 1.04 was read again as g3, and an outline 12.9 cards large is
measured in another sheet's plane."""


def _cards_checked_on_sheets(read: Detections, balanced: Image, markers: Sequence[Any],
                             models_dir: Path) -> Detections:
    """Face-up Qwixx cards read fairly but not very surely (``CARD_CHECK_BELOW``) read
    again through outlines fitted at a card's size in the nearest sheet's plane: where
    the mean of the readings names another face (a 6 and a 9 are one), the card takes
    the mean's reading, unsure unless the readings agree."""
    from companion.vision.sheet import printed_sheet, sheet_plane

    kinds, quads, labels = read.kinds, read.quads, read.labels
    probabilities = read.data.get(PROBABILITIES, (None,) * len(read))
    boxes = read.data.get("boxes", (None,) * len(read))
    check = [i for i in read if kinds[i] == "qwixx_card"
             and probabilities[i] is not None and not str(labels[i]).startswith("back")
             and UNSURE <= float(probabilities[i].max()) < CARD_CHECK_BELOW]
    if not check or not available_model("qwixx_card", models_dir):
        return read
    planes = [(quads[s].mean(axis=0), h) for s in read if kinds[s] == "qwixx_sheet"
              and boxes[s] for h in [sheet_plane(boxes[s], printed=printed_sheet(
                  markers, quads[s]))] if h is not None]
    if not planes:
        return read
    model = load_model("qwixx_card", models_dir)
    smooth = np.asarray(cv2.GaussianBlur(balanced, (3, 3), 0), np.uint8)
    tries: list[tuple[int, list[npt.NDArray[np.float32]]]] = []
    for i in check:
        centre = quads[i].mean(axis=0)
        to_image = min(planes, key=lambda p: float(np.linalg.norm(p[0] - centre)))[1]
        cards, corners = _card_sized_corners(quads[i], to_image, "qwixx_card")
        if not CARD_CHECK_AREA[0] <= cards <= CARD_CHECK_AREA[1]:
            continue
        outlines: list[npt.NDArray[np.float32]] = []
        for corner in corners:
            outlines += fit_card_outline(smooth, portrait_first(corner, model.size),
                                         aspect=PIECE_ASPECT["qwixx_card"])[:1]
        tries.append((i, [portrait_first(o, model.size) for o in outlines]))
    readings = iter(_read_quads(model, balanced, [o for _, os in tries for o in os]))
    changes: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]] = {}
    for i, outlines in tries:
        mean = np.mean([probabilities[i], *(next(readings).probs for _ in outlines)], axis=0)
        if not _same_face(model.labels[int(np.argmax(mean))], str(labels[i])):
            changes[i] = (quads[i], mean)  # the outline stays; the reading is the mean's
    return _with_readings(read, model, changes)


def _same_face(a: str, b: str) -> bool:
    """Whether two card labels name the same face up to a half turn (a 6 read upside
    down is a 9; which way a played card lies is settled against its player's sheet)."""
    turned = {"6": "9", "9": "6"}
    return a == b or (a[:-1] == b[:-1] and turned.get(a[-1:]) == b[-1:]
                      and a[-2:-1] != "1" and b[-2:-1] != "1")


def _without_printed_boxes(read: Detections) -> Detections:
    """Without the cards whose middle lies among a score sheet's boxes as the sheet was
    read (its boxes placed by the fit to the printed layout): a box the locator took for
    a card where its outline of the sheet fell short (a blue box read as b7 at 0.88)."""
    hulls = [cv2.convexHull(np.concatenate([np.asarray(b["quad"], np.float32)
                                            for b in boxes if b.get("quad") is not None]))
             for boxes in read.data.get("boxes", ()) if boxes
             and any(b.get("quad") is not None for b in boxes)]
    if not hulls:
        return read
    inside = {i for i in read if read.kinds[i] in PIECE_ASPECT and any(
        cv2.pointPolygonTest(hull, tuple(float(v) for v in read.quads[i].mean(axis=0)),
                             False) > 0 for hull in hulls)}
    return read.select([i for i in read if i not in inside]) if inside else read


TOKEN_DOUBT = 0.9
TOKEN_DOUBT_CONTRAST = 40.0
"""A token read less surely than TOKEN_DOUBT whose middle differs from the ring around
it by less than TOKEN_DOUBT_CONTRAST (Lab) is no token: a circle the search found on an
empty cell's rounded outline or a shadow. Rendered scenes 61600-61639: of the tokens
read under 0.9 on the board, the 9 true ones (hard) differed by 42 or more; 13 of the
14 that were no token (normal and hard) by 37 or less."""


def _without_doubtful_tokens(read: Detections, balanced: Image) -> Detections:
    """Without the doubtful tokens on the research board (``TOKEN_DOUBT``)."""
    boards = [i for i in read if read.kinds[i] == "catbox_board"]
    doubtful = [i for i in read if read.kinds[i] == "token"
                and float(read.confidences[i]) < TOKEN_DOUBT]
    if not boards or not doubtful:
        return read
    from companion.vision.locate import token_contrasts

    board = max(boards, key=lambda i: abs(cv2.contourArea(read.quads[i])))
    contrasts = token_contrasts(balanced, read.quads[board],
                                read.quads[doubtful].mean(axis=1))
    drop = {i for i, c in zip(doubtful, contrasts, strict=True) if c < TOKEN_DOUBT_CONTRAST}
    return read.select([i for i in read if i not in drop]) if drop else read


def orient_board(balanced: Image, quad: npt.NDArray[np.float32], *,
                 starts: Sequence[npt.NDArray[np.float32]] = ()
                 ) -> tuple[npt.NDArray[np.float32], float]:
    """The research board's quad starting at its upright top-left (a long edge first,
    the red row at the top, the green one at the bottom), and how sure that is (0.5 to
    1, from how much redder the top row is than the bottom one). All four turns are
    tried: seen at a slant, the board's long side may look the shorter. The quad is then
    fitted to the board's printed cells (``locate.fit_board_to_cells``), from it and
    from the other outlines the locator offers (``starts``, corners in any order)."""
    best: tuple[float, npt.NDArray[np.float32]] | None = None
    for turn in range(4):
        q = rotate_quad(np.asarray(quad, np.float32).reshape(4, 2), turn)
        view = cv2.cvtColor(rectify(balanced, q, size=(120, 60)), cv2.COLOR_BGR2LAB)
        redness = view[..., 1].astype(np.float32)  # Lab a*: red high, green low
        top, bottom = (float(np.median(redness[int(h * 60) - 3:int(h * 60) + 3, 6:114]))
                       for h in BOARD_ROWS)
        if best is None or top - bottom > best[0]:
            best = (top - bottom, q)
    assert best is not None
    from companion.vision.locate import fit_board_to_cells

    others = tuple(same_corner_order(start, best[1]) for start in starts)
    return (fit_board_to_cells(balanced, best[1], starts=others),
            float(min(1.0, max(0.5, 0.5 + best[0] / 40))))


def cut_across(quad: npt.ArrayLike, parts: int) -> list[npt.NDArray[np.float32]]:
    """``quad`` cut across its longer sides into ``parts`` equal parts, in order along
    them (that many cards lying side by side, one outline round them all)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    if np.linalg.norm(q[1] - q[0]) < np.linalg.norm(q[2] - q[1]):
        q = rotate_quad(q, 1)  # q0 -> q1 along a longer side
    t = np.linspace(0.0, 1.0, parts + 1)[:, None].astype(np.float32)
    top, bottom = q[0] + t * (q[1] - q[0]), q[3] + t * (q[2] - q[3])
    return [np.array([top[k], top[k + 1], bottom[k + 1], bottom[k]], np.float32)
            for k in range(parts)]


def _joined_count(sides: npt.NDArray[np.float64], area_ratio: float, aspect: float) -> int:
    """How many cards of ``aspect`` an outline of ``sides`` (two lengths) and
    ``area_ratio`` times its neighbours' area seems to hold side by side: 1 below
    ``PAIR_AREA``; 2 if squarer than a card; 3 if its area holds three (at least 2.5)
    and its thirds, cut across its long side, look more like a card than it does."""
    if area_ratio < PAIR_AREA:
        return 1
    long, short = float(sides.max()), max(float(sides.min()), 1e-6)
    if long < aspect * short:
        return 2
    third = long / 3
    third_misfit = abs(max(third, short) / max(min(third, short), 1e-6) - aspect)
    if area_ratio >= 2.5 and third_misfit < long / short - aspect:
        return 3
    return 1


def _split_card_pairs(balanced: Image, detections: Detections, models_dir: Path
                      ) -> Detections:
    """Outlines that are two or three cards side by side, each replaced by its parts (see
    ``PAIR_AREA``, ``PAIR_SURE``): the locator gives touching cards one outline now and
    then, read as one number (often surely) and lost as a stack or a play's card."""
    split: dict[int, list[npt.NDArray[np.float32]]] = {}
    for kind in SPLIT_KINDS:
        rows = [i for i in detections if detections.kinds[i] == kind]
        if len(rows) < 3 or not available_model(kind, models_dir):
            continue
        model = load_model(kind, models_dir)
        q = detections.quads[rows]
        sides = np.stack([np.linalg.norm(q[:, 1] - q[:, 0], axis=1),
                          np.linalg.norm(q[:, 2] - q[:, 1], axis=1)], axis=1)
        areas, centres = sides.prod(axis=1), q.mean(axis=1)
        candidates = []
        for k, i in enumerate(rows):
            others = np.linalg.norm(centres - centres[k], axis=1)
            others[k] = np.inf
            usual = float(np.median(areas[np.argsort(others)[:PAIR_NEIGHBOURS]]))
            count = _joined_count(sides[k], areas[k] / max(usual, 1e-6), PIECE_ASPECT[kind])
            if count > 1:
                candidates.append((i, [portrait_first(part, model.size) for part in
                                       cut_across(detections.quads[i], count)]))
        readings = iter(_read_quads(model, balanced, [p for _, ps in candidates for p in ps]))
        for i, parts in candidates:
            read = [next(readings) for _ in parts]
            downs = [_down(p, r.turned) for p, r in zip(parts, read, strict=True)
                     if r.probs.max() >= PAIR_SURE]
            if len(downs) >= max(2, len(parts) - 1) and all(
                    downs[0] @ d > 0 for d in downs[1:]):
                split[i] = parts
    if not split:
        return detections
    order = [i for i in detections for _ in split.get(i, [None])]
    quads = np.stack([q for i in detections for q in split.get(i, [detections.quads[i]])])
    return detections.select(order).with_fields(quads=quads)


TRIM_AREA = 1.3
TRIM_SURE = 0.95
"""A Cat in the Box card whose outline covers at least ``TRIM_AREA`` times a card's area
on the table (measured in the research board's plane, whose size is known) is read
again through card-sized outlines in each of its corners, each fitted to the card's
edges in the photo (``_trimmed_to_card_size``); the surest is kept if it reads at least
``TRIM_SURE`` and surer than the whole outline. A card lying against the board gets an
outline running onto the board, read as another number (dev scene 61317: a 1 as a 5
at 0.84; its corner outline, fitted, covers the card at IoU 0.98 and reads 1 at 0.99)."""


def _card_sized_corners(quad: npt.NDArray[np.float32], to_image: npt.NDArray[np.float64],
                        kind: str) -> tuple[float, list[npt.NDArray[np.float32]]]:
    """``quad`` (image pixels) measured on the table, whose millimetres ``to_image`` maps
    to the photo: how many cards of ``kind`` (``PIECE_MM``) its area covers, and the
    card-sized outlines in each of its four corners, along its own sides (image pixels,
    unfitted). A card's outline that runs onto a neighbour or the board is larger than a
    card; the card lies in one of its corners."""
    card_long, card_short = max(PIECE_MM[kind]), min(PIECE_MM[kind])
    q = cv2.perspectiveTransform(quad.reshape(1, 4, 2).astype(np.float64),
                                 np.linalg.inv(to_image))[0]  # millimetres on the table
    along, down = (q[1] - q[0] + q[2] - q[3]) / 2, (q[3] - q[0] + q[2] - q[1]) / 2
    width, height = float(np.linalg.norm(along)), float(np.linalg.norm(down))
    wide = width >= height
    a = along / max(width, 1e-9) * min(card_long if wide else card_short, width)
    b = down / max(height, 1e-9) * min(card_short if wide else card_long, height)
    corners = [cv2.perspectiveTransform(np.array([[p, p + a, p + a + b, p + b]]),
                                        to_image)[0].astype(np.float32)
               for p in (q[0], q[1] - a, q[2] - a - b, q[3] - b)]
    return width * height / (card_long * card_short), corners


def _board_plane(detections: Detections) -> npt.NDArray[np.float64] | None:
    """The homography from millimetres on the table to image pixels, from the first
    research board's (upright, fitted) outline and its known size; None without one."""
    boards = [i for i in detections if detections.kinds[i] == "catbox_board"]
    if not boards:
        return None
    board_w, board_h = PIECE_MM["catbox_board"]
    out: npt.NDArray[np.float64] = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [board_w, 0], [board_w, board_h], [0, board_h]]),
        detections.quads[boards[0]].astype(np.float32))
    return out


TINY_CARD = 0.4
"""An unsure Cat in the Box "card" covering less than this share of a card's area on the
table (in the board's plane) is no card: fingertips outlined as cards in hard scenes."""


def _without_tiny_cards(read: Detections) -> Detections:
    """Without the unsure Cat in the Box cards far smaller than a card (``TINY_CARD``)."""
    to_image = _board_plane(read)
    if to_image is None:
        return read
    to_table = np.linalg.inv(to_image)
    card = float(np.prod(PIECE_MM["catbox_card"]))
    tiny = set()
    for i in read:
        if read.kinds[i] != "catbox_card" or float(read.confidences[i]) >= UNSURE:
            continue
        q = cv2.perspectiveTransform(read.quads[i].reshape(1, 4, 2).astype(np.float64),
                                     to_table)[0].astype(np.float32)
        if abs(cv2.contourArea(q)) < TINY_CARD * card:
            tiny.add(i)
    return read.select([i for i in read if i not in tiny]) if tiny else read


def _trimmed_to_card_size(balanced: Image, detections: Detections, models_dir: Path
                          ) -> Detections:
    """Cat in the Box card outlines larger than a card (``TRIM_AREA``) replaced by the
    card-sized, fitted outline in one of their corners that reads surest (``TRIM_SURE``)."""
    rows = [i for i in detections if detections.kinds[i] == "catbox_card"]
    to_image = _board_plane(detections)
    if to_image is None or not rows or not available_model("catbox_card", models_dir):
        return detections
    model = load_model("catbox_card", models_dir)
    smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
    tries: list[tuple[int, list[npt.NDArray[np.float32]]]] = []
    for i in rows:
        cards, corners = _card_sized_corners(detections.quads[i], to_image, "catbox_card")
        if cards < TRIM_AREA:
            continue
        outlines = [portrait_first(detections.quads[i], model.size)]
        for corner in corners:
            outlines += fit_card_outline(smooth, portrait_first(corner, model.size),
                                         aspect=PIECE_ASPECT["catbox_card"])
        tries.append((i, outlines))
    if not tries:
        return detections
    quads = detections.quads.copy()
    readings = iter(_read_quads(model, balanced, [x for _, xs in tries for x in xs]))
    for i, outlines in tries:
        sure = [float(next(readings).probs.max()) for _ in outlines]
        best = int(np.argmax(sure[1:])) + 1
        if sure[best] >= TRIM_SURE and sure[best] > sure[0]:
            quads[i] = outlines[best]
    return detections.with_fields(quads=quads)


def _across_neighbour(quads: Sequence[npt.NDArray[np.float32]]) -> list[int]:
    """The cards (of one kind lying side by side in rows) whose outline looks square
    (``SQUARE_LOOK``) and whose nearest card (``NEIGHBOUR_REACH``) lies beyond its top or
    bottom edge rather than beside it, its axis across the card's: read a quarter turn
    round, the neighbour is beside it, as the cards of a row lie. The classifier alone
    reads a 3 on its side as a sure 8."""
    if len(quads) < 2:
        return []
    q = np.asarray(quads, np.float64)
    right = ((q[:, 1] - q[:, 0]) + (q[:, 2] - q[:, 3])) / 2
    down = ((q[:, 3] - q[:, 0]) + (q[:, 2] - q[:, 1])) / 2
    widths, heights = np.linalg.norm(right, axis=1), np.linalg.norm(down, axis=1)
    sizes = np.sqrt(np.abs(right[:, 0] * down[:, 1] - right[:, 1] * down[:, 0]))
    centres = q.mean(axis=1)
    out = []
    for k in range(len(q)):
        if max(widths[k], heights[k]) >= SQUARE_LOOK * min(widths[k], heights[k]):
            continue
        gaps = np.linalg.norm(centres - centres[k], axis=1)
        gaps[k] = np.inf
        j = int(np.argmin(gaps))
        if gaps[j] > NEIGHBOUR_REACH * sizes[k]:
            continue
        offset = centres[j] - centres[k]
        beyond = abs(offset @ down[k]) / heights[k] > abs(offset @ right[k]) / widths[k]
        if beyond and abs(down[k] @ down[j]) < ACROSS_COS * heights[k] * heights[j]:
            out.append(k)
    return out


def _down(quad: npt.NDArray[np.float32], turned: bool) -> npt.NDArray[np.float32]:
    """The way from a piece's top edge to its bottom edge, read ``turned`` or not."""
    q = rotate_quad(quad, 2) if turned else quad
    down: npt.NDArray[np.float32] = (q[3] - q[0] + q[2] - q[1]) / 2
    return down


def _top(labels: tuple[str, ...], probs: npt.NDArray[np.float64]
         ) -> tuple[str, float, tuple[tuple[str, float], ...]]:
    """(label, confidence, top-``TOP_K`` alternatives) of one reading."""
    top = np.argsort(-probs)[:TOP_K]
    return (labels[int(top[0])], float(probs[top[0]]),
            tuple((labels[int(j)], round(float(probs[j]), 4)) for j in top))


def classify(image: Image, detections: Detections, *, game: str,
             use_classifier: bool = True, ocr: str = "auto",
             models_dir: Path = MODELS_DIR, deck: DeckProfile | None = None,
             markers: Sequence[Any] = ()) -> Detections:
    """Label every piece in ``detections`` whose kind has a model; quads come back
    starting at the piece's upright top-left with ``oriented`` True, confidences, and
    ``data["alternatives"]`` (top-3 (label, probability) pairs), ``data["second_opinion"]``
    (whether Tesseract was asked, the CNN being unsure); Rox cards also get
    ``data["edge"]`` = {element: count} of their 16 edge symbols, and a confidence no
    higher than the chance that all 16 were read right. Qwixx sheets get ``data["boxes"]``:
    every box crossed or not (``companion.vision.sheet.read_sheet``; ``markers`` are the
    photo's ArUco markers, for our printed sheet's 20–23). Nummix tiles get
    ``data["front"]``: the band at each tile's foot (``companion.vision.standing``);
    a Nummix outline may come back cut in two to four (``_split_joined_tiles``), an
    unsure one at a tile's size (``_tile_sized``), moved onto the tile it straddles
    (``_stepped_from_neighbours``) or dropped as no tile (``_without_strays``), and two
    or three Nox or Qwixx cards in one outline as that many (``_split_card_pairs``), so
    rows need not match the detections given."""
    if game not in GAMES:
        raise InputError("game", f"unknown game {game!r}; one of: {', '.join(GAMES)}")
    if ocr not in OCR_MODES:
        raise InputError("ocr", f"expected one of {', '.join(OCR_MODES)}, not {ocr!r}")
    if not use_classifier and ocr == "off":
        raise InputError("ocr", "with the classifier off, Tesseract must be allowed")
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise InputError("image", "expected a BGR uint8 image (height, width, 3)")
    n = len(detections)
    if n == 0:
        return detections
    balanced = apply_gains(image, white_gains(image))  # once per photo, by table lookup
    if deck is not None:  # the user's enrolled deck, mapped to the look the models know
        balanced = deck.correct(balanced)
    if use_classifier:
        detections = _split_card_pairs(balanced, detections, models_dir)
    if use_classifier and available_model("rox_edge", models_dir):
        detections = _element_cards_by_edges(balanced, detections, models_dir)
    detections = _boards_upright(balanced, detections)
    if use_classifier:
        detections = _trimmed_to_card_size(balanced, detections, models_dir)
    n = len(detections)
    quads = detections.quads.copy()
    labels: list[str | None] = list(detections.labels)
    confidences = detections.confidences.astype(np.float32).copy()
    oriented = list(detections.oriented)
    alternatives: list[tuple[tuple[str, float], ...]] = list(
        detections.data.get("alternatives", ((),) * n))
    probabilities: list[Any] = [None] * n  # PROBABILITIES: for Tesseract, asked last
    for kind in sorted(set(detections.kinds)):
        rows = [i for i in range(n) if detections.kinds[i] == kind]
        if not available_model(kind, models_dir):
            continue
        model = load_model(kind, models_dir)
        size = model.size
        starts = [portrait_first(quads[i], size) for i in rows]
        if not use_classifier:
            if kind not in NUMBER_REGION:
                continue
            for i, q in zip(rows, starts, strict=True):
                label, conf, turned, alts = _ocr_only(kind, balanced, q, size)
                quads[i] = rotate_quad(q, 2) if turned else q
                labels[i], confidences[i], oriented[i], alternatives[i] = (
                    label, conf, label is not None, alts)
            continue
        readings = _read_quads(model, balanced, starts)
        if kind in PAIR_KINDS:  # a square-looking card read across its row: a quarter turn
            turn = _across_neighbour(starts)
            for k, reading in zip(turn, _read_quads(
                    model, balanced, [rotate_quad(starts[k], 1) for k in turn]), strict=True):
                starts[k], readings[k] = rotate_quad(starts[k], 1), reading
        retry = [k for k, r in enumerate(readings) if r.probs.max() < UNSURE]
        if retry and kind in RETRY_KINDS:  # unsure: read again through other outlines
            _read_again(model, balanced, starts, readings, [
                (k, read, report) for k in retry
                for read, report in _other_outlines(starts[k], kind)])
        still = [k for k in retry if readings[k].probs.max() < UNSURE]
        if still and kind in PIECE_ASPECT:  # still unsure: its outline fitted to the photo
            smooth = cv2.GaussianBlur(balanced, (3, 3), 0)
            _read_again(model, balanced, starts, readings, [
                (k, fit, fit) for k in still for fit in fit_card_outline(
                    smooth, starts[k], aspect=PIECE_ASPECT[kind], count=EDGE_FITS)])
        for i, q, reading in zip(rows, starts, readings, strict=True):
            upright = rotate_quad(q, 2) if reading.turned else q
            quads[i] = upright
            oriented[i] = model.oriented
            labels[i], confidences[i], alternatives[i] = _top(model.labels, reading.probs)
            probabilities[i] = reading.probs
    data = dict(detections.data)
    data["alternatives"] = tuple(alternatives)
    data[PROBABILITIES] = tuple(probabilities)
    rox_rows = [i for i in range(n) if detections.kinds[i] == "rox_card"]
    if use_classifier and rox_rows and available_model("rox_edge", models_dir):
        edges: list[Any] = list(data.get("edge", (None,) * n))
        for i, (counts, certainty) in zip(
                rox_rows, read_rox_edges(balanced, quads[rox_rows], models_dir), strict=True):
            edges[i] = counts
            confidences[i] = min(float(confidences[i]), certainty)
        data["edge"] = tuple(edges)
    others = data.get("other_outlines") or ((),) * n  # the locator's other outlines
    sheet_rows = [i for i in range(n) if detections.kinds[i] == "qwixx_sheet"]
    if sheet_rows:  # box by box: crossed or not (companion.vision.sheet)
        from companion.vision.sheet import read_sheet

        boxes: list[Any] = list(data.get("boxes", (None,) * n))
        for i in sheet_rows:
            boxes[i] = read_sheet(balanced, quads[i], markers=markers, balanced=True,
                                  starts=others[i])
            quads[i], oriented[i] = _sheet_upright(quads[i], boxes[i])
        data["boxes"] = tuple(boxes)
    read = detections.with_fields(quads=quads, labels=tuple(labels), confidences=confidences,
                                  oriented=tuple(oriented), data=data)
    if sheet_rows:
        if use_classifier:
            read = _cards_checked_on_sheets(read, balanced, markers, models_dir)
        read = _without_printed_boxes(read)
    if game == "catbox":
        read = _without_doubtful_tokens(read, balanced)
        read = _without_strays(read, balanced, "catbox_card")
        read = _without_tiny_cards(read)
    if game == "nox":
        read = _without_strays(read, balanced, "nox_card")
    if game == "nummix":
        if use_classifier and available_model("nummix_tile", models_dir):
            tile_model = load_model("nummix_tile", models_dir)
            read = _split_joined_tiles(read, balanced, tile_model)
            read = _tile_sized(read, balanced, tile_model)
            read = _stepped_from_neighbours(read, balanced, tile_model)
            read = _without_strays(read, balanced, "nummix_tile")
        read = _feet_on_ledges(read, balanced, models_dir if use_classifier else None)
    return _second_opinion(read, balanced, models_dir, ask=ocr == "auto")


def _second_opinion(read: Detections, balanced: Image, models_dir: Path, *, ask: bool
                    ) -> Detections:
    """Tesseract's reading folded into every numbered piece the CNN still reads unsure
    (``UNSURE``) once the photo is read (``_with_ocr``; all in one Tesseract process),
    and ``data["second_opinion"]``: whether it was asked. Asked last, it reads each
    piece through the outline and the way up the reader settled on, and not the pieces
    read sure again, cut in two or dropped as no piece (a Tesseract process costs ~100
    ms, more than the rest of a photo's reading)."""
    probabilities = read.data.get(PROBABILITIES, (None,) * len(read))
    unsure = [i for i in read if ask and probabilities[i] is not None
              and read.kinds[i] in NUMBER_REGION and float(probabilities[i].max()) < UNSURE]
    data = {k: v for k, v in read.data.items() if k != PROBABILITIES}
    data["second_opinion"] = tuple(i in unsure for i in read)
    if not unsure:
        return read.with_fields(data=data)
    from companion.vision.ocr import read_numbers

    models = {kind: load_model(kind, models_dir) for kind in {read.kinds[i] for i in unsure}}
    big = [rectify(balanced, read.quads[i], size=(
        models[read.kinds[i]].size[0] * OCR_SCALE, models[read.kinds[i]].size[1] * OCR_SCALE))
        for i in unsure]
    opinions = read_numbers(big, max_values=[MAX_NUMBER[read.kinds[i]] for i in unsure],
                            regions=[NUMBER_REGION[read.kinds[i]] for i in unsure])
    labels = list(read.labels)
    confidences = read.confidences.copy()
    alternatives = list(data.get("alternatives", ((),) * len(read)))
    for i, (number, conf) in zip(unsure, opinions, strict=True):
        kind_labels = models[read.kinds[i]].labels
        probs = _with_ocr(kind_labels, probabilities[i], number, conf)
        labels[i], confidences[i], alternatives[i] = _top(kind_labels, probs)
    data["alternatives"] = tuple(alternatives)
    return read.with_fields(labels=tuple(labels), confidences=confidences, data=data)


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
"""The parts such an outline is cut in, fewest first (``_split_joined_tiles``). Four: a
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
"""Tiles whose centre lies within this many of the outline's long side count as near."""


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
"""``STRAY_CHROMA`` for Nummix tiles. Unsure located tiles at ``_without_strays``, dev
seeds 61200-61239 and 61300-61339 (normal and hard, 218 on tiles, 46 on none): every
tile at least 10 off in colour and 20 darker was under a hand (visible 0.15-0.66, read
unsure or wrong either way); 10 rather than 12 drops two more strays 20 darker (a
finger in dev 61317 normal, 11.3 off and 28 darker, stood in the grid as '?')."""
TINY_TILE = 0.2
"""An unsure Nummix "tile" whose outline covers less than this share of the median area
of the photo's sure tiles is no tile (a scrap of a face's edge or of the table). Unsure
located tiles at ``_without_strays``, dev seeds 61200-61239 and 61300-61339 (normal and
hard, 264 outlines): of the 218 on a tile, the smallest covered 0.18 (an outline on a
tenth of a hard scene's tile, read b4 for b12 at 0.09), the next 0.22; of the 46 on
none, 2 covered less than 0.2 (0.19, and 0.11 in dev 61300 normal: a corner of a rack
tile that stood in the grid as '?')."""


NOX_DOUBTFUL = 0.9
"""Nox cards read less sure than this are held to the sure cards' face colour
(``_without_strays``). Dev scenes, exact: 61200 normal 88 -> 89 of 100, 61300 normal
87 -> 88, 61400 normal 81 -> 83; 61200 hard 32 of 60 unchanged."""


@dataclass(frozen=True)
class _StrayRule:
    """How ``_without_strays`` judges one kind: pieces read less sure than
    ``doubtful_below`` whose face is ``chroma`` off the surer ones' in colour (and
    ``STRAY_DARKER`` darker), or covering under ``tiny`` of their median area, are no
    pieces."""

    chroma: float
    doubtful_below: float = UNSURE
    tiny: float = 0.0


STRAY_RULES = {
    "nummix_tile": _StrayRule(TILE_STRAY_CHROMA, tiny=TINY_TILE),
    "catbox_card": _StrayRule(STRAY_CHROMA),
    "nox_card": _StrayRule(STRAY_CHROMA, doubtful_below=NOX_DOUBTFUL),
}


def _without_strays(read: Detections, balanced: Image, kind: str) -> Detections:
    """Without the pieces of ``kind`` (Nummix tiles, Cat in the Box and Nox cards) its
    ``STRAY_RULES`` call strays: the locator takes the odd fingertip, patch of table or
    scrap of a tile for a piece, and read unsure it would stand in the state as an
    unknown piece."""
    rule = STRAY_RULES[kind]
    doubtful_below = rule.doubtful_below
    tiles = [i for i in read if read.kinds[i] == kind]
    sure = [i for i in tiles if float(read.confidences[i]) >= doubtful_below]
    doubtful = [i for i in tiles if float(read.confidences[i]) < doubtful_below]
    if len(sure) < 3 or not doubtful:
        return read
    faces = {i: _face_colour(balanced, read.quads[i]) for i in sure + doubtful}
    usual = np.median([faces[i] for i in sure], axis=0)
    strays = {i for i in doubtful
              if float(np.hypot(*(faces[i][1:] - usual[1:]))) >= rule.chroma
              and float(usual[0] - faces[i][0]) >= STRAY_DARKER}
    if rule.tiny:
        def area(i: int) -> float:
            return abs(float(cv2.contourArea(read.quads[i].astype(np.float32))))

        usual_area = float(np.median([area(i) for i in sure]))
        strays |= {i for i in doubtful if area(i) < rule.tiny * usual_area}
    return read.select([i for i in read if i not in strays]) if strays else read


def _face_colour(balanced: Image, quad: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """A tile's face colour (CIELAB, 8-bit scale): the median of the lighter half of its
    crop (the printed number and logo are darker)."""
    crop = rectify(balanced, quad, size=(16, 22))
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float64)
    out: npt.NDArray[np.float64] = np.median(
        lab[lab[:, 0] >= np.median(lab[:, 0])], axis=0)
    return out


def _split_joined_tiles(read: Detections, balanced: Image, model: Model) -> Detections:
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
            continue
        ratio = areas[k] / max(float(np.median(areas[near])), 1.0)
        if not TILE_PAIR_AREA[0] <= ratio <= TILE_PAIR_AREA[1]:
            continue
        cuts += [(i, [portrait_first(part, model.size) for part in cut_across(q, parts)])
                 for parts in TILE_PARTS if ratio >= TILE_FOUR_AREA or parts < 4]
    if not cuts:
        return read
    readings = iter(_read_quads(model, balanced, [part for _, cut in cuts for part in cut]))
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
                  _cut_moved(read.quads[i], parts, shift)])
             for i, (_, parts) in nearest.items() if i not in chosen
             for shift in TILE_CUT_SHIFTS]
    readings = iter(_read_quads(model, balanced, [part for _, cut in moved for part in cut]))
    for i, cut in moved:
        read_parts = [next(readings) for _ in cut]
        least = min(r.probs.max() for r in read_parts)
        if least >= max(UNSURE, nearest[i][0]):
            chosen[i], nearest[i] = (cut, read_parts), (least, len(cut))
    split: dict[int, Detections] = {}
    for i, (cut, read_parts) in chosen.items():
        tops = [_top(model.labels, r.probs) for r in read_parts]
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


def _cut_moved(quad: npt.ArrayLike, parts: int, shift: float) -> list[npt.NDArray[np.float32]]:
    """``cut_across(quad, parts)`` with every cut moved ``shift`` of a part along the long
    sides (the end parts reaching past the outline or short of its end by as much)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    if np.linalg.norm(q[1] - q[0]) < np.linalg.norm(q[2] - q[1]):
        q = rotate_quad(q, 1)
    t = ((np.arange(parts + 1) + shift) / parts)[:, None].astype(np.float32)
    top, bottom = q[0] + t * (q[1] - q[0]), q[3] + t * (q[2] - q[3])
    return [np.array([top[k], top[k + 1], bottom[k + 1], bottom[k]], np.float32)
            for k in range(parts)]


TILE_SIZE_OFF = (0.6, 1.3)
TILE_SIZE_NEAR = 5
TILE_SIZE_MOST = 2
"""An unsure Nummix tile outline covering less than 0.6 or more than 1.3 of a tile (the
median short and long sides of the ``TILE_SIZE_NEAR`` sure tiles nearest it) and with
no rack's ledge at its foot or along a side is read again through tile-sized outlines
in it or round it (``_tile_sized``): at most ``TILE_SIZE_MOST`` a photo, the surest
first (27 outlines each, ~10 ms). On dev seeds 61200-61239 and 61300-61339 (hard) it
took another outline 30 times: 28 unknown tiles then read sure and right, one sure and
wrong, one outline on no tile read sure (with no bound and 36 outlines each: 51 times,
45 right, 2 wrong, 4 on no tile, at 47 ms a hard photo on average, up to 300; without
the ledge test, a stray on a rack's end, dropped onto the rack before, read k4 at 0.86
into the grid). Hard: tiles wrong, unknown, missed or stray in the grids 285 -> 264;
exact states unchanged (normal 38 + 37, hard 10 + 17); dev 61536 normal (an outline
running onto the next tile, k7 read k2 at 0.19) read exactly. CPU in it, seeds
61900-61919: normal 5 ms a photo on average (median 0), hard 14."""


def _tile_sized(read: Detections, balanced: Image, model: Model) -> Detections:
    """Unsure Nummix tiles off a rack's ledge whose outline is far from the size of the
    sure tiles near it (``TILE_SIZE_OFF``, ``TILE_SIZE_MOST``) read again through
    outlines of that size at each of its corners, the middles of its sides and its
    centre, along its own sides (either way up) and its nearest sure tile's; the surest
    is kept if sure, surer and no other located tile's (``STEP_OVERLAP``): the locator
    outlines a tile now and then with its neighbour's edge or the table, or round its
    number alone. Tiles at a ledge are left to ``_feet_on_ledges``."""
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
    if found:  # a tile at a rack's ledge is left to _feet_on_ledges (a rack's end: no tile)
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
    tries = [(i, outline) for i, outline in tries if not any(
        quad_iou(outline, read.quads[k]) >= STEP_OVERLAP for k in tiles if k != i)]
    return _with_readings(read, model, _surer_readings(read, balanced, model, tries))


def _surer_readings(read: Detections, balanced: Image, model: Model,
                    tries: Sequence[tuple[int, npt.NDArray[np.float32]]]
                    ) -> dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]]:
    """Pieces read again through other outlines (``tries``: piece, outline): for each,
    the surest reading that is sure (``UNSURE``) and surer than its own, as
    ``_with_readings`` takes them (the outline turned to the reading's up)."""
    confidences = read.confidences.copy()
    changes: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]] = {}
    for (i, outline), again in zip(tries, _read_quads(model, balanced, [o for _, o in tries]),
                                   strict=True):
        sure_now = float(again.probs.max())
        if sure_now < max(UNSURE, float(confidences[i])):
            continue
        changes[i] = (rotate_quad(outline, 2) if again.turned else outline, again.probs)
        confidences[i] = sure_now
    return changes


def _with_readings(read: Detections, model: Model,
                   changes: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]]
                   ) -> Detections:
    """``read`` with pieces read again: index -> (the outline it was read through, the
    label probabilities) sets its quad, label, confidence and alternatives."""
    if not changes:
        return read
    quads = read.quads.copy()
    labels = list(read.labels)
    confidences = read.confidences.copy()
    alternatives = list(read.data.get("alternatives", ((),) * len(read)))
    probabilities = list(read.data.get(PROBABILITIES, (None,) * len(read)))
    for i, (quad, probs) in changes.items():
        quads[i] = quad
        labels[i], confidences[i], alternatives[i] = _top(model.labels, probs)
        probabilities[i] = probs
    return read.with_fields(quads=quads, labels=tuple(labels), confidences=confidences,
                            data={**read.data, "alternatives": tuple(alternatives),
                                  PROBABILITIES: tuple(probabilities)})


STEP_PITCH = 1.02
"""Touching tiles' centres lie a tile's side and a thin gap apart (PITCH in
companion/readers/nummix.py: 0.7 mm on 27 and 37 mm)."""
STEP_OVERLAP = 0.3
"""A stepped outline overlapping another located tile this much (IoU) is that tile's."""


def _stepped_from_neighbours(read: Detections, balanced: Image, model: Model) -> Detections:
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
    tries: list[tuple[int, npt.NDArray[np.float32]]] = []
    for i in doubtful:
        outline = read.quads[i].astype(np.float32)
        reach = 1.5 * float(side_lengths(outline).max())
        for j in sure:
            q = read.quads[j]
            if float(np.linalg.norm(q.mean(axis=0) - outline.mean(axis=0))) > reach:
                continue
            right, down = _down(rotate_quad(q, 3), False), _down(q, False)
            for step in (right, -right, down, -down):
                moved = (q + STEP_PITCH * step).astype(np.float32)
                centre = tuple(float(v) for v in moved.mean(axis=0))
                if cv2.pointPolygonTest(outline, centre, False) < 0:
                    continue
                if any(quad_iou(moved, read.quads[k]) >= STEP_OVERLAP
                       for k in tiles if k != i):
                    continue
                tries.append((i, moved))
    return _with_readings(read, model, _surer_readings(read, balanced, model, tries))


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
    q = np.asarray(quad, np.float64).reshape(4, 2)
    right = ((q[1] - q[0]) + (q[2] - q[3])) / 2
    down = ((q[3] - q[0]) + (q[2] - q[1])) / 2
    length = max(float(np.linalg.norm(right)), 1e-9)
    along = right / length
    across = down - float(down @ along) * along
    height = float(np.linalg.norm(across))
    width = max(length - abs(shear) * height, 0.3 * length) if narrowed else length
    side = across + shear * height * along
    centre = q.mean(axis=0)
    half = width / 2 * along
    out: npt.NDArray[np.float32] = np.array(
        [centre - half - side / 2, centre + half - side / 2, centre + half + side / 2,
         centre - half + side / 2], np.float32)
    return out


def _feet_on_ledges(read: Detections, balanced: Image, models_dir: Path | None
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
            for (i, turn, _, plain), again in zip(tries, _read_quads(
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
            read = _with_readings(read, model, changes)
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
    downs = np.array([_down(read.quads[i], False) for i in standing], np.float64)
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
            down = _down(rotate_quad(q, turn), False).astype(np.float64)
            cosines.append(float(down @ way) / max(float(np.linalg.norm(down)), 1e-9))
        best = int(np.argmax(cosines))
        if cosines[best] >= ROW_ALIGNED:
            out[i] = best
    return out


def _against_the_row(read: Detections, balanced: Image, model: Model,
                     bands: Sequence[Any], pieces: npt.NDArray[np.int32]
                     ) -> tuple[Detections, Sequence[Any]]:
    """Sure Nummix tiles with no ledge at their foot, in a row of at least two sure
    tiles standing on one, turned the other way (a quarter or half turn) with a ledge
    at the foot so turned: read again standing so (``_read_standing``), and kept so if
    that reading is sure. The model reads a slanted tile's outline from the wrong side
    surely now and then (a 6 as a 9); the ledge settles which way is up."""
    from companion.vision.standing import front_bands, is_ledge

    rows = [i for i in read if read.kinds[i] == "nummix_tile"
            and float(read.confidences[i]) >= UNSURE and not is_ledge([bands[i]])]
    turns = {i: t for i, t in _row_turns(read, bands, rows, neighbours=2).items() if t}
    if not turns:
        return read, bands
    turned = read.with_fields(quads=np.array([
        rotate_quad(q, turns.get(i, 0)) for i, q in enumerate(read.quads)], np.float32))
    ledge = front_bands(balanced, turned, pieces=pieces)
    again = [i for i in turns if is_ledge([ledge[i]])]
    readings = _read_standing(model, balanced, [turned.quads[i] for i in again])
    kept = [(i, probs) for i, probs in zip(again, readings, strict=True)
            if float(probs.max()) >= UNSURE]
    if not kept:
        return read, bands
    read = _with_readings(read, model, {i: (turned.quads[i], probs) for i, probs in kept})
    return read, front_bands(balanced, read, pieces=pieces)


def _read_standing(model: Model, balanced: Image, quads: Sequence[npt.NDArray[np.float32]]
                   ) -> list[npt.NDArray[np.float64]]:
    """Label probabilities of pieces known to stand upright in ``quads`` (as
    ``read_crops`` scores them, given the piece is not upside down)."""
    if not quads:
        return []
    crops = np.stack([rectify(balanced, q, size=model.size) for q in quads])
    opposite = np.stack([rectify(balanced, rotate_quad(q, 2), size=model.size) for q in quads])
    both = _softmax(model.logits(np.concatenate([crops, opposite])))
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
