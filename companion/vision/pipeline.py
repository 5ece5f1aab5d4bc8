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
from companion.vision.detections import Detections
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


@dataclass(frozen=True)
class ReadResult:
    """What ``read_image`` found: the detections (classified unless the classifier was
    off and OCR could not read them) and milliseconds per stage."""

    detections: Detections
    width: int
    height: int
    game: str
    timing_ms: dict[str, float] = field(default_factory=dict)

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
        return {"game": self.game, "image": {"width": self.width, "height": self.height},
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
    t2 = time.perf_counter()
    timing = {"locate": (t1 - t0) * 1000, "classify": (t2 - t1) * 1000,
              "total": (t2 - t0) * 1000}
    return ReadResult(read, int(image.shape[1]), int(image.shape[0]), game, timing)


__all__ = ["GAMES", "LOCATORS", "UNSURE", "ReadResult", "read_image"]
