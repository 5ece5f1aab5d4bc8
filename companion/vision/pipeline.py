"""One photo in, the pieces out: locate, then classify, with the time each stage took."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from companion.games.base import InputError
from companion.vision.classify import classify
from companion.vision.detections import Detections, side_lengths
from companion.vision.locate import GAMES, locate
from companion.vision.segment import locate_learned

if TYPE_CHECKING:
    from companion.calibration.deck import DeckProfile
    from companion.calibration.markers import Marker

LOCATORS: tuple[str, ...] = ("learned", "classical")
"""Ways to find the pieces: the learned locator (segment.py, the default: it finds more
pieces in every game's rendered scenes and in the real tile photos, see
docs/BENCHMARKS.md) or the classical OpenCV one (locate.py)."""

UNSURE = 0.80
"""A piece read with less confidence than this is reported as unsure, with alternatives."""

BORDER_REACH = 0.005
"""A side of an outline whose two corners lie within this share of the photo's long side
of one edge of the photo (6.4 px at 1280: the locator's outlines stop 1.4 net pixels, 4
px, short of a piece's edge) is a piece cut off by the photo's edge."""
BORDER_SIDE_MATCH = 0.25
"""A cut piece's side along the photo's edge that is within this share of its kind's
usual short (long) side makes the piece's whole length its usual long (short) side."""
BORDER_USUAL_LEAST = 3
"""Whole pieces of a kind (touching no edge of the photo) needed to know its usual size."""
BORDER_KINDS = frozenset({"nummix_tile", "nox_card", "qwixx_card", "rox_card",
                          "rox_scoring", "catbox_card"})
"""Kinds outlined whole beyond the photo's edge (``whole_beyond_the_photo``): not sheets
and boards (their size varies with the camera's tilt, one a photo) nor tokens."""


@dataclass(frozen=True)
class ReadResult:
    """What ``read_image`` found: the detections (classified unless the classifier was
    off and OCR could not read them) and milliseconds per stage. ``scale``: the size the
    photo was read at against its own (below 1 for a large photo read from a shrunk copy,
    ``readers.photo.READ_SIDE``); the quads are in the photo's own pixels either way."""

    detections: Detections
    width: int
    height: int
    game: str
    timing_ms: dict[str, float] = field(default_factory=dict)
    scale: float = 1.0

    def to_json(self) -> dict[str, Any]:
        """The ``companion read --json`` shape: game, image size, pieces, timing."""
        pieces = []
        found = self.detections
        alternatives = found.data.get("alternatives", ((),) * len(found))
        edges = found.data.get("edge", (None,) * len(found))
        for i in found:
            piece: dict[str, Any] = {
                "kind": found.kinds[i],
                "label": found.labels[i],
                "confidence": round(float(found.confidences[i]), 4),
                "quad": [[round(float(x), 1), round(float(y), 1)] for x, y in found.quads[i]],
            }
            if edges[i] is not None:
                piece["edge"] = edges[i]
            if found.labels[i] is None or found.confidences[i] < UNSURE:
                piece["unsure"] = True
                piece["alternatives"] = [[str(label), round(float(p), 4)]
                                         for label, p in (alternatives[i] or ())]
            pieces.append(piece)
        return {"game": self.game, "image": {"width": self.width, "height": self.height,
                                             "read_scale": round(self.scale, 4)},
                "pieces": pieces,
                "timing_ms": {k: round(v, 1) for k, v in self.timing_ms.items()}}


def read_image(image: npt.NDArray[np.uint8], *, game: str, use_classifier: bool = True,
               ocr: str = "auto", deck: DeckProfile | None = None,
               markers: Sequence[Marker] | None = None, locator: str = "learned"
               ) -> ReadResult:
    """Locate every piece of ``game`` in the BGR ``image`` with ``locator`` (one of
    LOCATORS) and read it (with the colours of an enrolled ``deck`` mapped to the models'
    look, when given). ``markers``: the photo's ArUco markers if the caller found them
    already (they are found once per photo)."""
    if locator not in LOCATORS:
        raise InputError("locator", f"unknown locator {locator!r}; one of: "
                         f"{', '.join(LOCATORS)}")
    t0 = time.perf_counter()
    if locator == "learned":
        found = locate_learned(image, game=game, markers=markers)
    else:
        found = locate(image, game=game, markers=markers)
    t1 = time.perf_counter()
    read = classify(image, found, game=game, use_classifier=use_classifier, ocr=ocr,
                    deck=deck, markers=markers or ())
    read = whole_beyond_the_photo(read, image.shape[:2])
    t2 = time.perf_counter()
    timing = {"locate": (t1 - t0) * 1000, "classify": (t2 - t1) * 1000,
              "total": (t2 - t0) * 1000}
    return ReadResult(read, int(image.shape[1]), int(image.shape[0]), game, timing)


def whole_beyond_the_photo(found: Detections, shape: tuple[int, ...]) -> Detections:
    """``found`` with each piece cut off by the photo's edge outlined whole: the side on
    the edge moved out until the piece is its kind's usual size (the median of its whole
    pieces'). The pieces were read through what the photo shows; the outline says where
    the piece lies (dev 61242: five rack tiles half out of the photo, outlined on their
    visible halves, matched none of them)."""
    height, width = shape[0], shape[1]
    reach = BORDER_REACH * max(height, width)

    def on_edge(points: npt.NDArray[np.float32]) -> bool:
        """Both points within ``reach`` of the same edge of the photo."""
        return bool((points[:, 0] <= reach).all() or (points[:, 0] >= width - reach).all()
                    or (points[:, 1] <= reach).all() or (points[:, 1] >= height - reach).all())

    cut = {i: [k for k in range(4) if on_edge(found.quads[i][[k, (k + 1) % 4]])]
           for i in found if found.kinds[i] in BORDER_KINDS}
    cut = {i: sides for i, sides in cut.items() if sides}
    if not cut:
        return found
    quads = found.quads.copy()
    for kind in {found.kinds[i] for i in cut}:
        whole = [np.sort(side_lengths(found.quads[j]).reshape(2, 2).mean(axis=0))
                 for j in found if found.kinds[j] == kind and j not in cut]
        if len(whole) < BORDER_USUAL_LEAST:
            continue
        short, long = np.median(whole, axis=0)
        for i in (i for i in cut if found.kinds[i] == kind):
            for k in cut[i]:
                q = quads[i]
                along = float(np.linalg.norm(q[(k + 1) % 4] - q[k]))
                if abs(along / short - 1) <= BORDER_SIDE_MATCH:
                    full = long
                elif abs(along / long - 1) <= BORDER_SIDE_MATCH:
                    full = short
                else:
                    continue
                for corner, opposite in ((k, (k + 3) % 4), ((k + 1) % 4, (k + 2) % 4)):
                    out = q[corner] - q[opposite]
                    seen = float(np.linalg.norm(out))
                    if 0 < seen < full:
                        q[corner] = q[opposite] + out * (full / seen)
    return found.with_fields(quads=quads)


__all__ = ["GAMES", "LOCATORS", "UNSURE", "ReadResult", "read_image"]
