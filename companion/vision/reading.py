"""Reading pieces with the small CNN classifiers, shared by every step of
``classify``: a model loaded (``models/<kind>.onnx``, onnxruntime on the CPU; torch is
never imported here), pieces rectified and scored both ways up, and one piece's reading
(label, confidence, top-3 alternatives, probabilities) set or replaced.

Portrait pieces are read twice, as found and turned 180°; the model knows both
"upright" and "upside down" for every label, so the two readings vote on label and
orientation together (a 6 upside down is not a 9: the tile's logo and the card's
underline tell).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.games.base import InputError
from companion.vision.align import piece_aspect
from companion.vision.detections import (
    Detections,
    quad_iou,
    rectify,
    rotate_quad,
    side_lengths,
)

Image = npt.NDArray[np.uint8]


MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
RETRY_KINDS = ("nummix_tile", "nox_card", "qwixx_card", "catbox_card", "rox_scoring")
"""Kinds read again, when unsure, through other outlines (``classify._other_outlines``)."""


PIECE_ASPECT = {kind: piece_aspect(kind) for kind in RETRY_KINDS}
"""Long over short side of the numbered pieces, for ``align.fit_card_outline``: a piece
still unsure after the nudges is read through its outline fitted to the photo (the
``EDGE_FITS`` best fits), kept if sure and surer. Located Nummix tiles (seeds
61000-61059 normal / 61000-61039 hard): read sure 1649 -> 1664 / 944 -> 964 of 1690 /
1032, sure and wrong 2 -> 3 / 6 -> 5."""


UNSURE = 0.80
"""Below this confidence a reading is "unsure": Tesseract is consulted (ocr="auto")."""


TOP_K = 3
ORT_THREADS = 1
"""onnxruntime threads per session: these models take a millisecond a crop, and one
thread was as fast as two on the 2-core machine and does not fight locate or Tesseract
for the second core (measured)."""


LONG_FIRST = 1.25
"""A quad whose first edge is this much longer than its second starts at a long edge."""


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


def parses(kind: str, label: str) -> bool:
    """Whether ``label`` is in the check contract's notation for ``kind``."""
    pattern = LABEL_PATTERNS.get(kind)
    return pattern is not None and pattern.fullmatch(label) is not None


def number_of(label: str) -> int | None:
    """The printed number a label carries (``r7`` → 7, ``back12`` → 12, ``Jrk`` → None)."""
    match = re.search(r"(\d+)$", label)
    return int(match.group(1)) if match else None


LOGITS_CHUNK = 64
"""Crops are run through a model this many at a time: a batch of thousands runs up to
twice as slow a crop as the same crops in pieces (memory), and the scores are the same
to the bit. Rox edge symbols (16×16 crops), 3200 in one batch or in pieces of 16-64:
161-182 ms against 77-83 ms; the edge search reads up to 5000 a call (dev 61407 normal:
930 -> 667 ms a photo); larger crops gain less (600 of 48×48: 155 -> 152 ms)."""


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
    file: str = ""  # the .onnx file loaded (``<name>.int8.onnx`` for an 8-bit copy)

    def logits(self, crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        """Class scores for (N, h, w, 3) BGR crops, divided by the temperature. The
        crops are made channels-first floats in one contiguous array, divided in place
        (``model_input``: the same values as the transposed copy divided, then copied
        chunk by chunk, in a quarter of the time on a Qwixx sheet's 1800 box crops,
        13 -> 3.5 ms)."""
        x = model_input(crops)
        parts = [self.session.run(None, {"crop": x[start:start + LOGITS_CHUNK]})[0]
                 for start in range(0, max(len(x), 1), LOGITS_CHUNK)]
        return np.asarray(np.concatenate(parts), np.float32) / np.float32(self.temperature)


def model_input(crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """(N, h, w, 3) BGR crops as the models take them: (N, 3, h, w) floats 0-1, in one
    contiguous array divided in place."""
    x = np.ascontiguousarray(crops.transpose(0, 3, 1, 2), dtype=np.float32)
    x /= np.float32(255.0)
    return x


def model_path(name: str, models_dir: Path = MODELS_DIR) -> Path:
    return models_dir / f"{name}.onnx"


_RUN_INT8 = {"copies": True}
"""Whether ``load_model`` picks the 8-bit copies by default (only ``float_models`` sets it)."""


@contextmanager
def float_models() -> Iterator[None]:
    """Within this block the reader runs the float models, not their 8-bit copies
    (``train.quantize.reader_crops``: a copy's ranges come from the crops the float
    reader cuts, so the copy made again from the same code is the same whether or not
    one exists already). Not for use across threads."""
    load_model.cache_clear()
    _RUN_INT8["copies"] = False
    try:
        yield
    finally:
        _RUN_INT8["copies"] = True
        load_model.cache_clear()


@lru_cache(maxsize=32)
def load_model(name: str, models_dir: Path = MODELS_DIR, *, int8: bool | None = None) -> Model:
    """Load ``models/<name>.onnx`` with its labels file (cached; CPU, one thread pool);
    its 8-bit copy ``<name>.int8.onnx`` instead when there is one, unless ``int8`` is
    False or, left None, within ``float_models`` (the same network, ~2.4 times as fast a
    crop: ``companion.train.quantize``)."""
    import onnxruntime as ort

    path = model_path(name, models_dir)
    meta_path = models_dir / f"{name}.labels.json"
    if not path.exists() or not meta_path.exists():
        raise InputError("model", f"no classifier for {name!r} in {models_dir}")
    small = models_dir / f"{name}.int8.onnx"
    if (_RUN_INT8["copies"] if int8 is None else int8) and small.exists():
        path = small
    meta = json.loads(meta_path.read_text())
    options = ort.SessionOptions()
    options.intra_op_num_threads = ORT_THREADS
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    size = (int(meta["input"]["width"]), int(meta["input"]["height"]))
    return Model(name, str(meta["kind"]), session, tuple(meta["labels"]), size,
                 bool(meta["oriented"]), float(meta.get("temperature", 1.0)),
                 float(meta.get("sure", 1.0)), path.name)


def available_model(kind: str, models_dir: Path = MODELS_DIR) -> bool:
    return model_path(kind, models_dir).exists()


def softmax(z: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
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


def read_quads(model: Model, balanced: Image, quads: Sequence[npt.NDArray[np.float32]]
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
        return [Reading(p, False) for p in softmax(model.logits(crops))]
    if turned_crops is None:
        turned_crops = np.ascontiguousarray(crops[:, ::-1, ::-1])
    both = softmax(model.logits(np.concatenate([crops, turned_crops])))
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


EDGE_FITS = 3
"""The best fitted outlines read for such a card (``fit_card_outline``): where a seam is
faint the second or third fit can be the card's own. On 390 located cards (seeds
60000-60029): 1 fit, 361 sure and exact, 0 sure and wrong; 3 fits, 371 and 1; 6 fits,
373 and 2."""


def nudged(quad: npt.NDArray[np.float32], scale: float, dx: float, dy: float, *,
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


def down_vector(quad: npt.NDArray[np.float32], turned: bool) -> npt.NDArray[np.float32]:
    """The way from a piece's top edge to its bottom edge, read ``turned`` or not."""
    q = rotate_quad(quad, 2) if turned else quad
    down: npt.NDArray[np.float32] = (q[3] - q[0] + q[2] - q[1]) / 2
    return down


def stepped_over(quad: npt.NDArray[np.float32], *, pitch: float
                 ) -> list[npt.NDArray[np.float32]]:
    """A piece's outline stepped ``pitch`` of its side over along each of its axes (right,
    left, down, up): where its side neighbours' outlines would lie."""
    right, down = down_vector(rotate_quad(quad, 3), False), down_vector(quad, False)
    return [(quad + pitch * step).astype(np.float32) for step in (right, -right, down, -down)]


def stepped_outlines(outlines: Mapping[int, npt.NDArray[np.float32]], sure: Iterable[int],
                     doubtful: Iterable[int], *, pitch: float, overlap: float
                     ) -> list[tuple[int, npt.NDArray[np.float32]]]:
    """Outlines to read each ``doubtful`` piece through: a ``sure`` neighbour's outline
    stepped ``pitch`` of its side over along one of its axes, whose centre lies in the
    doubtful piece's outline and that overlaps no other piece's (IoU under ``overlap``).
    Touching pieces' seams are faint, and a located outline can straddle one; a sure
    neighbour's outline has the right size and slant."""
    sure = list(sure)
    tries: list[tuple[int, npt.NDArray[np.float32]]] = []
    for i in doubtful:
        outline = np.asarray(outlines[i], np.float32)
        reach = 1.5 * float(side_lengths(outline).max())
        for j in sure:
            q = outlines[j]
            if float(np.linalg.norm(q.mean(axis=0) - outline.mean(axis=0))) > reach:
                continue
            for moved in stepped_over(q, pitch=pitch):
                centre = tuple(float(v) for v in moved.mean(axis=0))
                if cv2.pointPolygonTest(outline, centre, False) < 0:
                    continue
                if any(quad_iou(moved, other) >= overlap
                       for k, other in outlines.items() if k != i):
                    continue
                tries.append((i, moved))
    return tries


def top_labels(labels: tuple[str, ...], probs: npt.NDArray[np.float64]
         ) -> tuple[str, float, tuple[tuple[str, float], ...]]:
    """(label, confidence, top-``TOP_K`` alternatives) of one reading."""
    top = np.argsort(-probs)[:TOP_K]
    return (labels[int(top[0])], float(probs[top[0]]),
            tuple((labels[int(j)], round(float(probs[j]), 4)) for j in top))


def surer_readings(read: Detections, balanced: Image, model: Model,
                    tries: Sequence[tuple[int, npt.NDArray[np.float32]]], *,
                    readings: Sequence[Reading] | None = None
                    ) -> dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]]:
    """Pieces read again through other outlines (``tries``: piece, outline): for each,
    the surest reading that is sure (``UNSURE``) and surer than its own, as
    ``with_readings`` takes them (the outline turned to the reading's up). ``readings``:
    the tries' readings, when the caller has read them already."""
    confidences = read.confidences.copy()
    changes: dict[int, tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]] = {}
    if readings is None:
        readings = read_quads(model, balanced, [o for _, o in tries])
    for (i, outline), again in zip(tries, readings, strict=True):
        sure_now = float(again.probs.max())
        if sure_now < max(UNSURE, float(confidences[i])):
            continue
        changes[i] = (rotate_quad(outline, 2) if again.turned else outline, again.probs)
        confidences[i] = sure_now
    return changes


def with_readings(read: Detections, model: Model,
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
        labels[i], confidences[i], alternatives[i] = top_labels(model.labels, probs)
        probabilities[i] = probs
    return read.with_fields(quads=quads, labels=tuple(labels), confidences=confidences,
                            data={**read.data, "alternatives": tuple(alternatives),
                                  PROBABILITIES: tuple(probabilities)})
