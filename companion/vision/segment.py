"""A learned alternative to ``locate``: a tiny U-Net (models/locator.onnx, onnxruntime
only) marks each piece's interior, and each blob becomes one quad.

The net sees the photo scaled so its long side is ``INPUT_SIDE`` and labels every pixel
background or the interior of a piece of one kind group (``CLASSES``). An interior is
the piece's quad shrunk toward its centre to ``INTERIOR`` of its size, so touching tiles
and cards are separate blobs; each blob's minimum-area rectangle, grown back by
1/``INTERIOR``, is the piece. Trained by ``python -m companion.train.segment --seed S``
(see models/locator.md). Quads come out as from ``locate``: clockwise, first edge a
short edge, ``oriented=False``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.games.base import InputError
from companion.vision.detections import Detections
from companion.vision.locate import GAMES, MIN_SIDE, short_edge_first

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
"""A Rox card blob narrower than this (short/long side) is a scoring card (44×68 mm)
rather than an element card (68×68 mm)."""
FG_THRESHOLD = 0.5
"""A pixel belongs to a piece when the net gives the table less than this probability."""
MIN_BLOB_PX = 4
"""A blob of fewer net pixels than this is noise."""


def net_size(height: int, width: int) -> tuple[int, int]:
    """(height, width) of the image the net sees, before padding to STRIDE."""
    scale = INPUT_SIDE / max(height, width)
    return max(1, round(height * scale)), max(1, round(width * scale))


@lru_cache(maxsize=2)
def load_locator(path: Path = MODEL_PATH) -> Any:
    """The ONNX session (cached; single-threaded per call would be slower, so two
    intra-op threads)."""
    import onnxruntime as ort

    if not path.exists():
        raise InputError("model", f"locator model {path} is missing; train it with "
                         "python -m companion.train.segment --seed 1")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def predict(image: npt.NDArray[np.uint8], *, path: Path = MODEL_PATH
            ) -> npt.NDArray[np.float32]:
    """Per-pixel class probabilities (len(CLASSES), h, w) at ``net_size`` of the image."""
    h, w = net_size(*image.shape[:2])
    small = cv2.resize(image, (w, h), interpolation=cv2.INTER_AREA)
    ph, pw = -h % STRIDE, -w % STRIDE
    if ph or pw:
        small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
    x = (small.astype(np.float32) * np.float32(1 / 255.0)).transpose(2, 0, 1)[None]
    logits = load_locator(path).run(None, {"image": np.ascontiguousarray(x)})[0][0, :, :h, :w]
    logits = logits - logits.max(axis=0, keepdims=True)
    prob = np.exp(logits)
    out: npt.NDArray[np.float32] = prob / prob.sum(axis=0, keepdims=True)
    return out


def locate_learned(image: npt.NDArray[np.uint8], *, game: str, path: Path = MODEL_PATH
                   ) -> Detections:
    """Every piece of ``game`` in the BGR ``image`` as quads in image pixels, found by the
    learned locator (same conventions as ``locate``); confidence is the blob's mean
    interior probability."""
    if game not in GAMES:
        raise InputError("game", f"unknown game {game!r}; one of: {', '.join(GAMES)}")
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise InputError("image", "expected a BGR uint8 image (height, width, 3)")
    if min(image.shape[:2]) < MIN_SIDE:
        return Detections.empty()
    prob = predict(image, path=path)
    return blobs_to_detections(prob, image.shape[:2], game=game)


def blobs_to_detections(prob: npt.NDArray[np.float32], shape: tuple[int, ...], *, game: str
                        ) -> Detections:
    """One quad per connected interior blob of the class map ``prob`` (net size), scaled
    to an image of ``shape`` (height, width). Blobs are taken per kind of the game, so a
    token lying on the board is its own blob, not a part of the board's."""
    fg = prob[0] < FG_THRESHOLD  # more likely some piece than the table
    group = prob[1:].argmax(axis=0)
    kinds_map = KIND_OF_GROUP[game]
    sy = shape[0] / prob.shape[1]
    sx = shape[1] / prob.shape[2]
    quads, kinds, confs = [], [], []
    for kind in sorted(set(kinds_map.values())):
        members = [i for i, g in enumerate(CLASSES[1:]) if kinds_map[g] == kind]
        mask = (fg & np.isin(group, members)).astype(np.uint8)
        count, comp, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
        for n in range(1, count):
            if stats[n, cv2.CC_STAT_AREA] < MIN_BLOB_PX:
                continue
            x0, y0 = stats[n, cv2.CC_STAT_LEFT], stats[n, cv2.CC_STAT_TOP]
            bw, bh = stats[n, cv2.CC_STAT_WIDTH], stats[n, cv2.CC_STAT_HEIGHT]
            sub = comp[y0:y0 + bh, x0:x0 + bw] == n
            contours, _ = cv2.findContours(sub.astype(np.uint8), cv2.RETR_EXTERNAL,
                                           cv2.CHAIN_APPROX_SIMPLE)
            edge = np.concatenate(contours).reshape(-1, 2) + [x0, y0]
            # the boundary pixels' square corners, so a one-pixel-wide blob has width 1
            pts = np.concatenate([edge + d for d in ((0, 0), (1, 0), (0, 1), (1, 1))]
                                 ).astype(np.float32)
            (cx, cy), (rw, rh), angle = cv2.minAreaRect(pts)
            box = np.asarray(cv2.boxPoints(((cx, cy), (rw / INTERIOR, rh / INTERIOR), angle)),
                             np.float32) * np.asarray([sx, sy], np.float32)
            box[:, 0] = box[:, 0].clip(0, shape[1])
            box[:, 1] = box[:, 1].clip(0, shape[0])
            found = kind
            if kind == "rox_card" and min(rw, rh) < ROX_SCORING_ASPECT * max(rw, rh):
                found = "rox_scoring"
            quads.append(short_edge_first(box))
            kinds.append(found)
            confs.append(float(1.0 - prob[0, y0:y0 + bh, x0:x0 + bw][sub].mean()))
    if not quads:
        return Detections.empty()
    return Detections(np.asarray(quads, np.float32), tuple(kinds),
                      confidences=np.asarray(confs, np.float32))
