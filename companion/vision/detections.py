"""The one type every vision stage passes on: pieces found in an image.

Modelled on Roboflow supervision's ``Detections``: parallel arrays, one row per piece.
Coordinates are image pixels (x right, y down, origin at the top-left pixel's corner).
A quad's corners run clockwise from the piece's top-left *as the piece reads upright*
once the orientation is known; before that (straight out of ``locate``) they run
clockwise from an arbitrary corner, and ``oriented`` is False.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Quad = npt.NDArray[np.float32]
"""A (4, 2) float32 array of [x, y] image-pixel corners."""
MIN_CONFIDENCE = 0.5
"""A piece read with less confidence than this is reported unknown, never guessed (the
readers' bar; a Rox card's edge sureness is put on the same scale)."""

JOINED = "joined"
"""``Detections.data`` field: the outline holds two or three touching cards read as one
(``vision.cards.JOINED_AREA``), so its reading is capped unsure and the reader says why."""


@dataclass(frozen=True)
class Detections:
    """Pieces found in one image: quads, kinds, labels, confidences, extra fields."""

    quads: npt.NDArray[np.float32]  # (N, 4, 2)
    kinds: tuple[str, ...]  # "tile", "card", "rox_card", "sheet", "board", "token", ...
    labels: tuple[str | None, ...] = ()  # check-contract notation; None until classified
    confidences: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros(0, np.float32))
    oriented: tuple[bool, ...] = ()
    data: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # e.g. "alternatives"

    def __post_init__(self) -> None:
        n = len(self.kinds)
        quads = np.asarray(self.quads, np.float32).reshape(n, 4, 2)
        object.__setattr__(self, "quads", quads)
        if not self.labels:
            object.__setattr__(self, "labels", (None,) * n)
        if len(self.confidences) == 0 and n:
            object.__setattr__(self, "confidences", np.zeros(n, np.float32))
        if not self.oriented:
            object.__setattr__(self, "oriented", (False,) * n)
        for name, values in (("labels", self.labels), ("confidences", self.confidences),
                             ("oriented", self.oriented), *self.data.items()):
            if len(values) != n:
                raise ValueError(f"Detections.{name} has {len(values)} rows, expected {n}")

    @classmethod
    def empty(cls) -> Detections:
        return cls(np.zeros((0, 4, 2), np.float32), ())

    def __len__(self) -> int:
        return len(self.kinds)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self)))

    def select(self, index: Sequence[int] | npt.NDArray[np.bool_]) -> Detections:
        """A subset by row indices or a boolean mask, fields kept aligned."""
        idx = np.flatnonzero(index) if np.asarray(index).dtype == bool else np.asarray(index, int)
        pick = [int(i) for i in idx]
        return Detections(
            self.quads[pick] if pick else np.zeros((0, 4, 2), np.float32),
            tuple(self.kinds[i] for i in pick),
            tuple(self.labels[i] for i in pick),
            self.confidences[pick] if pick else np.zeros(0, np.float32),
            tuple(self.oriented[i] for i in pick),
            {k: tuple(v[i] for i in pick) for k, v in self.data.items()},
        )

    def with_fields(self, **changes: Any) -> Detections:
        """A copy with some fields replaced (labels, confidences, quads, oriented, data)."""
        return replace(self, **changes)

    @staticmethod
    def concat(parts: Sequence[Detections]) -> Detections:
        parts = [p for p in parts if len(p)]
        if not parts:
            return Detections.empty()
        keys = set().union(*(p.data.keys() for p in parts))
        return Detections(
            np.concatenate([p.quads for p in parts]),
            sum((p.kinds for p in parts), ()),
            sum((p.labels for p in parts), ()),
            np.concatenate([p.confidences for p in parts]),
            sum((p.oriented for p in parts), ()),
            {k: sum((p.data.get(k, (None,) * len(p)) for p in parts), ()) for k in keys},
        )


def order_clockwise(points: npt.ArrayLike) -> Quad:
    """Four points ordered clockwise (in image coordinates, y down) starting from the one
    nearest the top-left; for quads whose reading direction is not yet known."""
    pts = np.asarray(points, np.float32).reshape(4, 2)
    centre = pts.mean(axis=0)
    angles = np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0])
    pts = pts[np.argsort(angles)]  # increasing angle = clockwise when y points down
    start = int(np.argmin(pts.sum(axis=1)))
    return np.roll(pts, -start, axis=0).astype(np.float32)


def rectify(image: npt.NDArray[np.uint8], quad: npt.ArrayLike, *, size: tuple[int, int]
            ) -> npt.NDArray[np.uint8]:
    """Warp the quad's content to an upright ``size`` = (width, height) crop; the quad's
    first corner lands at the crop's top-left, the second at its top-right."""
    w, h = size
    src = np.asarray(quad, np.float32).reshape(4, 2)
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    matrix = cv2.getPerspectiveTransform(src, dst)
    out: npt.NDArray[np.uint8] = cv2.warpPerspective(
        image, matrix, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    return out


_TURNED_CORNERS = tuple(np.array([(i + k) % 4 for i in range(4)]) for k in range(4))
"""For each number of quarter turns, the corners in their new order (what ``np.roll``
by that many back gives, taken by index: a quarter of its time, called hundreds of
times a photo)."""


def rotate_quad(quad: npt.ArrayLike, quarter_turns: int) -> Quad:
    """The same quad with its starting corner moved by ``quarter_turns`` clockwise: the
    piece is read as turned by 90° per step."""
    out: Quad = np.asarray(quad, np.float32).reshape(4, 2)[_TURNED_CORNERS[quarter_turns % 4]]
    return out


def same_corner_order(quad: npt.ArrayLike, like: npt.ArrayLike) -> Quad:
    """``quad`` (clockwise) turned so its corners follow ``like``'s: each near the same
    corner of ``like`` (another outline of the same piece)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    ref = np.asarray(like, np.float32).reshape(4, 2)
    turn = min(range(4), key=lambda k: float(np.linalg.norm(rotate_quad(q, k) - ref)))
    return rotate_quad(q, turn)


def side_lengths(quad: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The lengths of a quad's four sides, from corner 0 to 1, 1 to 2, 2 to 3, 3 to 0."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    out: npt.NDArray[np.float64] = np.linalg.norm(q[_TURNED_CORNERS[1]] - q, axis=1)
    return out


def quad_axes(quad: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64],
                                             npt.NDArray[np.float64]]:
    """A quad's centre and its right and down vectors (each the mean of two opposite
    sides: a full side long), image pixels."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    return q.mean(axis=0), ((q[1] - q[0]) + (q[2] - q[3])) / 2, ((q[3] - q[0]) + (q[2] - q[1])) / 2


def quad_iou(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Intersection over union of two convex quads (image pixels)."""
    pa = np.asarray(a, np.float32).reshape(4, 2)
    pb = np.asarray(b, np.float32).reshape(4, 2)
    inter, _ = cv2.intersectConvexConvex(pa, pb)
    union = cv2.contourArea(pa) + cv2.contourArea(pb) - inter
    return float(inter / union) if union > 0 else 0.0


def distances(points: npt.ArrayLike, others: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The distance (pixels) from each of ``points`` (N, 2) to each of ``others`` (M, 2),
    as an (N, M) array: the one screen that the readers' and the markers' pair tests
    share, so that all of them measure alike."""
    a = np.asarray(points, np.float64).reshape(-1, 2)
    b = np.asarray(others, np.float64).reshape(-1, 2)
    out: npt.NDArray[np.float64] = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))
    return out


def reach_circles(quads: npt.ArrayLike) -> tuple[npt.NDArray[np.float64],
                                                npt.NDArray[np.float64]]:
    """Each quad's centre (N, 2) and the radius (N,) of the circle round it through its
    farthest corner, for ``within_reach``."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    centres = q.mean(axis=1)
    return centres, np.linalg.norm(q - centres[:, None], axis=2).max(axis=1)


def within_reach(quads: npt.ArrayLike, centres: npt.NDArray[np.float64],
                 radii: npt.NDArray[np.float64]) -> list[npt.NDArray[np.intp]]:
    """For each of ``quads``, the indices of the quads whose ``reach_circles`` meet its
    own: the only ones that can overlap it or hold its centre, so the exact tests
    (``quad_iou``) need not be run on the rest (a pixel's slack for rounding)."""
    own_centres, own_radii = reach_circles(quads)
    meet = distances(own_centres, centres) <= own_radii[:, None] + radii[None] + 1.0
    return [np.flatnonzero(row) for row in meet]


def cut_across(quad: npt.ArrayLike, parts: int, *, shift: float = 0.0
               ) -> list[npt.NDArray[np.float32]]:
    """``quad`` cut across its longer sides into ``parts`` equal parts, in order along
    them (that many cards lying side by side, one outline round them all); ``shift``
    moves every cut that share of a part along them (the end parts reaching past the
    outline or short of its end by as much)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    if np.linalg.norm(q[1] - q[0]) < np.linalg.norm(q[2] - q[1]):
        q = rotate_quad(q, 1)  # q0 -> q1 along a longer side
    return cut_along_first_edge(q, parts, shift=shift)


def cut_along_first_edge(quad: npt.ArrayLike, parts: int, *, shift: float = 0.0
                         ) -> list[npt.NDArray[np.float32]]:
    """``quad`` cut into ``parts`` equal parts along its first edge (q0 -> q1), in order
    along it, each starting at its own corner nearest q0; ``shift`` as ``cut_across``."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    t = (np.linspace(0.0, 1.0, parts + 1) + shift / parts)[:, None].astype(np.float32)
    top, bottom = q[0] + t * (q[1] - q[0]), q[3] + t * (q[2] - q[3])
    return [np.array([top[k], top[k + 1], bottom[k + 1], bottom[k]], np.float32)
            for k in range(parts)]
