"""Draw what the reader found onto the photo: each quad, its first (top-left) corner,
and its label with the confidence; unsure pieces in orange, sure ones in green, and
pieces a broken rule is about in red with the rule ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.detections import Detections

SURE = (60, 200, 60)
UNSURE = (0, 140, 255)
UNREAD = (200, 200, 200)
VIOLATION = (0, 0, 230)


def annotate(image: npt.NDArray[np.uint8], found: Detections, *, unsure_below: float = 0.8,
             violations: Mapping[int, Sequence[str]] | None = None,
             covered: Sequence[npt.ArrayLike] = ()) -> npt.NDArray[np.uint8]:
    """A copy of ``image`` with every piece's quad and label drawn on it; ``violations``
    (piece index -> rule ids) are drawn in red with their ids under the label;
    ``covered`` outlines (image pixels) are where something hides the table."""
    out = image.copy()
    scale = max(out.shape[:2]) / 1000
    thick = max(1, round(2 * scale))
    for region in covered:
        outline = np.round(np.asarray(region, np.float64)).astype(np.int32).reshape(-1, 2)
        cv2.polylines(out, [outline], True, UNSURE, thick, cv2.LINE_AA)
        x, y = outline.min(axis=0)
        cv2.putText(out, "covered?", (int(x), int(y) + 14), cv2.FONT_HERSHEY_SIMPLEX,
                    0.45 * scale + 0.2, UNSURE, thick, cv2.LINE_AA)
    for i in found:
        quad = found.quads[i]
        label = found.labels[i]
        conf = float(found.confidences[i])
        colour = UNREAD if label is None else (SURE if conf >= unsure_below else UNSURE)
        rules = (violations or {}).get(i, ())
        if rules:
            colour = VIOLATION
        cv2.polylines(out, [np.round(quad).astype(np.int32)], True, colour,
                      thick * 2 if rules else thick, cv2.LINE_AA)
        x0, y0 = (int(round(v)) for v in quad[0])
        cv2.circle(out, (x0, y0), thick + 2, colour, -1, cv2.LINE_AA)
        text = "?" if label is None else f"{label} {conf:.2f}"
        if label is not None and conf < unsure_below:
            text += "?"
        cx, cy = (int(round(v)) for v in quad.mean(axis=0))
        font = 0.45 * scale + 0.2
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font, thick)
        org = (cx - tw // 2, cy + th // 2)
        cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, font, (0, 0, 0), thick + 2,
                    cv2.LINE_AA)
        cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, font, colour, thick, cv2.LINE_AA)
        for k, rule in enumerate(dict.fromkeys(rules)):
            below = (org[0], org[1] + (k + 1) * (th + 6))
            cv2.putText(out, rule, below, cv2.FONT_HERSHEY_SIMPLEX, font * 0.9, (255, 255, 255),
                        thick + 2, cv2.LINE_AA)
            cv2.putText(out, rule, below, cv2.FONT_HERSHEY_SIMPLEX, font * 0.9, VIOLATION,
                        thick, cv2.LINE_AA)
    return out
