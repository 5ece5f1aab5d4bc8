"""Deck enrolment: adapt the reader's colours to the user's own cards and tiles.

The user lays out known pieces (a Nox 1-15 run, one Rox card of each element, a Nummix
run per colour, ...) and photographs them. Each piece is found, put in reading order and
paired with its label; its background and ink colour (after white balance) are paired
with the colours our renderer draws for that label, which the models were trained on.
A 3×3 colour matrix plus offset, fitted by ridge least squares (pulled towards "no
change", so a few pieces cannot twist the colours), maps the user's deck to our look;
at read time it is applied to the white-balanced image before the pieces are classified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from companion.calibration.camera import _load_profile, save_profile
from companion.games.base import InputError
from companion.synth.pieces import (
    ELEMENT_INK,
    INK,
    NOX_COLOUR,
    NUMMIX_INK,
    NUMMIX_LETTER,
    QWIXX_LETTER,
)
from companion.vision.colour import white_balance
from companion.vision.detections import rectify
from companion.vision.reading import parses

Image = npt.NDArray[np.uint8]
RGB = tuple[int, int, int]

DECK_KIND = {"nox": "nox_card", "qwixx": "qwixx_card", "rox": "rox_card",
             "nummix": "nummix_tile", "catbox": "catbox_card"}
"""The piece kind a game's deck is made of (what enrolment reads)."""

DEFAULT_LAYOUT = {
    "nox": "1..15",
    "qwixx": "r2..r12,y2..y12,g2..g12,b2..b12",
    "rox": "fire,water,earth,air,magic",
    "nummix": "r1..r13,k1..k13,b1..b13,o1..o13",
    "catbox": "1..9",
}
"""What a photo shows when ``--layout`` is not given, in reading order (rows top to
bottom, left to right within a row)."""

RIDGE = 0.5
"""Pull of the colour fit towards the identity, per observed colour pair (0-1 units)."""
CROP = (64, 96)
"""Pieces are rectified to this size (width, height; turned for landscape kinds)."""
INK_SHARE = 0.06
"""The ink is the median of this share of a piece's centre pixels farthest from its
background (the printed number or symbol)."""

# The backgrounds the training looks draw (companion.synth.pieces.random_look), RGB.
LIGHT_BACKGROUND: RGB = (241, 240, 232)
DARK_BACKGROUND: RGB = (38, 38, 42)
NUMMIX_BACKGROUND: RGB = (240, 236, 224)
DARK_BELOW = 110
"""An observed background darker than this (mean of B, G, R) is a dark-look deck."""


def parse_layout(game: str, text: str | None) -> tuple[str, ...]:
    """``"r1..r13,k1..k13"`` (or the game's default) to labels in reading order; each
    label must be in the game's notation. ``a..b`` ranges keep a shared prefix."""
    if game not in DECK_KIND:
        raise InputError("game", f"unknown game {game!r}; one of: {', '.join(DECK_KIND)}")
    kind = DECK_KIND[game]
    text = DEFAULT_LAYOUT[game] if text is None else text
    labels: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise InputError("layout", f"empty entry in {text!r}")
        lo, sep, hi = part.partition("..")
        if sep:
            a = re.fullmatch(r"([A-Za-z]*)(\d+)", lo.strip())
            b = re.fullmatch(r"([A-Za-z]*)(\d+)", hi.strip())
            if not a or not b or (b.group(1) and b.group(1) != a.group(1)) \
                    or int(b.group(2)) < int(a.group(2)):
                raise InputError("layout", f"bad range {part!r} (expected such as 1..15 "
                                 "or r1..r13)")
            labels += [f"{a.group(1)}{n}" for n in range(int(a.group(2)), int(b.group(2)) + 1)]
        else:
            labels.append(part)
    for label in labels:
        if not parses(kind, label):
            raise InputError("layout", f"{label!r} is not a {game} piece ({kind})")
    return tuple(labels)


def reading_order(quads: npt.NDArray[np.float32]) -> list[int]:
    """Indices of the quads in reading order: rows (centres within half a piece height
    of each other) top to bottom, each row left to right."""
    if len(quads) == 0:
        return []
    centres = quads.mean(axis=1)
    sizes = np.array([min(np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[3] - q[0]))
                      for q in quads])
    tolerance = 0.5 * float(np.median(sizes))
    order = list(np.argsort(centres[:, 1]))
    rows: list[list[int]] = []
    for i in order:
        if rows and centres[i, 1] - np.mean([centres[j, 1] for j in rows[-1]]) < tolerance:
            rows[-1].append(int(i))
        else:
            rows.append([int(i)])
    return [i for row in rows for i in sorted(row, key=lambda j: centres[j, 0])]


def _upright_quad(quad: npt.NDArray[np.float32], kind: str) -> npt.NDArray[np.float32]:
    """The quad starting at a corner whose first edge matches the kind's width (portrait
    pieces start at a short edge). Which way up does not matter for colours."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    first, second = np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[3] - q[0])
    if kind != "rox_card" and first > second:
        q = np.roll(q, -1, axis=0)
    return q


def piece_colours(crop: Image, kind: str) -> tuple[npt.NDArray[np.float64],
                                                   npt.NDArray[np.float64]]:
    """(background, ink) BGR of an upright-or-upside-down crop: the background from
    strips along the long sides, the ink from the centre pixels farthest from it
    (Rox: the most colourful centre pixels, the element's symbol)."""
    h, w = crop.shape[:2]
    px = crop.astype(np.float64)
    # a few pixels in from the edge: a located quad may be that much off the piece
    strips = np.concatenate([px[int(0.3 * h):int(0.7 * h), int(0.08 * w):int(0.15 * w) + 1],
                             px[int(0.3 * h):int(0.7 * h), int(0.85 * w):int(0.92 * w) + 1]],
                            axis=1).reshape(-1, 3)
    background = np.median(strips, axis=0)
    centre = px[int(0.22 * h):int(0.78 * h), int(0.2 * w):int(0.8 * w)].reshape(-1, 3)
    if kind == "rox_card":
        score = centre.max(axis=1) - centre.min(axis=1)
    else:
        score = np.linalg.norm(centre - background, axis=1)
    keep = score >= np.quantile(score, 1 - INK_SHARE)
    return background, np.median(centre[keep], axis=0)


def reference_colours(kind: str, label: str, dark: bool) -> tuple[RGB, RGB | None]:
    """(background, ink) RGB our renderer draws for ``label`` (ink None where a piece
    has no one ink: jokers, Rox magic)."""
    background = NUMMIX_BACKGROUND if kind == "nummix_tile" else (
        DARK_BACKGROUND if dark else LIGHT_BACKGROUND)
    on_background: RGB = (20, 20, 24) if not dark else (240, 240, 236)
    ink: RGB | None
    if kind == "nox_card":
        ink = INK[NOX_COLOUR[int(label)]]
    elif kind == "qwixx_card":
        if label.startswith("back"):
            ink = (64, 64, 70) if not dark else (214, 214, 206)
        elif label.startswith("J"):
            ink = None
        else:
            ink = INK[QWIXX_LETTER[label[0]]]
    elif kind == "nummix_tile":
        ink = None if label.startswith("J") else NUMMIX_INK[NUMMIX_LETTER[label[0]]]
    elif kind == "rox_card":
        ink = None if label == "magic" else ELEMENT_INK[label]
    else:
        ink = on_background
    return background, ink


def fit_colour_matrix(observed: npt.ArrayLike, reference: npt.ArrayLike, *,
                      ridge: float = RIDGE) -> npt.NDArray[np.float64]:
    """3×4 matrix M (BGR, 0-255 image units) so that M·[c, 1] ≈ reference for each
    observed colour c; ridge least squares towards the identity."""
    x = np.asarray(observed, np.float64).reshape(-1, 3) / 255.0
    y = np.asarray(reference, np.float64).reshape(-1, 3) / 255.0
    design = np.column_stack([x, np.ones(len(x))])
    prior = np.hstack([np.eye(3), np.zeros((3, 1))])
    lam = ridge * np.eye(4)
    lam[3, 3] *= 0.25  # an offset (a tinted light) is cheap
    solved = np.linalg.solve(design.T @ design + lam, design.T @ y + lam @ prior.T).T
    solved[:, 3] *= 255.0
    return np.asarray(solved, np.float64)


def apply_colour_matrix(image: Image, matrix: npt.ArrayLike) -> Image:
    """``image`` with the 3×4 colour matrix applied to every pixel (saturating)."""
    out = cv2.transform(image, np.asarray(matrix, np.float64))
    return np.asarray(out, np.uint8)


@dataclass(frozen=True)
class DeckProfile:
    """A user's deck of ``game``: the colour matrix that maps it to our reference look,
    the labels enrolled, and the colour error (0-255 units) before and after."""

    game: str
    labels: tuple[str, ...]
    colour_matrix: tuple[tuple[float, float, float, float], ...]  # 3x4, BGR
    error_before: float
    error_after: float
    photos: int

    def correct(self, image: Image) -> Image:
        """The (white-balanced) image as if its pieces were printed in our look."""
        return apply_colour_matrix(image, self.colour_matrix)

    def save(self, path: Path) -> None:
        save_profile(path, "deck", self)

    @classmethod
    def load(cls, path: Path) -> DeckProfile:
        data = _load_profile(path, "deck")
        try:
            matrix = tuple(tuple(float(v) for v in row) for row in data["colour_matrix"])
            if len(matrix) != 3 or any(len(row) != 4 for row in matrix):
                raise ValueError("colour_matrix must be 3 rows of 4")
            if data["game"] not in DECK_KIND:
                raise ValueError(f"unknown game {data['game']!r}")
            return cls(str(data["game"]), tuple(str(x) for x in data["labels"]),
                       matrix,  # type: ignore[arg-type]
                       float(data["error_before"]), float(data["error_after"]),
                       int(data["photos"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(str(path), f"not a deck profile ({exc})") from None


def _crop_size(kind: str) -> tuple[int, int]:
    return (CROP[0], CROP[0]) if kind == "rox_card" else CROP


def _laid_out(image: Image, game: str) -> tuple[Image, npt.NDArray[np.float32], int]:
    """(white-balanced image, the deck's quads in reading order, other pieces found)."""
    from companion.vision.segment import locate_learned

    kind = DECK_KIND[game]
    found = locate_learned(image, game=game)  # the same locator that reads the deck later
    rows = [i for i in range(len(found)) if found.kinds[i] == kind]
    quads = found.quads[rows]
    balanced, _ = white_balance(image)
    return balanced, quads[reading_order(quads)], len(found) - len(rows)


def colour_pairs(balanced: Image, quads: npt.NDArray[np.float32], game: str,
                 labels: Sequence[str]) -> tuple[list[npt.NDArray[np.float64]], list[RGB]]:
    """Observed (white-balanced BGR) and reference (BGR) background and ink colours of
    the pieces at ``quads``, which show ``labels``."""
    kind = DECK_KIND[game]
    observed: list[npt.NDArray[np.float64]] = []
    reference: list[RGB] = []
    for label, quad in zip(labels, quads, strict=True):
        crop = rectify(balanced, _upright_quad(quad, kind), size=_crop_size(kind))
        background, ink = piece_colours(crop, kind)
        dark = float(background.mean()) < DARK_BELOW
        ref_bg, ref_ink = reference_colours(kind, label, dark)
        observed.append(background)
        reference.append((ref_bg[2], ref_bg[1], ref_bg[0]))
        if ref_ink is not None:
            observed.append(ink)
            reference.append((ref_ink[2], ref_ink[1], ref_ink[0]))
    return observed, reference


def enrol_deck(images: Sequence[Image], game: str, layout: str | None = None) -> DeckProfile:
    """A deck profile from photos of laid-out pieces: ``layout`` (default: the game's
    ``DEFAULT_LAYOUT``) names them in reading order, photo after photo (one photo of
    them all, or one per row or colour). InputError, naming what was found, when the
    photos hold more or fewer of the deck's pieces than the layout names."""
    labels = parse_layout(game, layout)
    if not images:
        raise InputError("photos", "give at least one photo of the laid-out pieces")
    kind = DECK_KIND[game]
    seen = [_laid_out(image, game) for image in images]
    counts = [len(quads) for _, quads, _ in seen]
    if sum(counts) != len(labels):
        per_photo = ", ".join(f"photo {k + 1}: {n}" + (f" (+{o} other)" if o else "")
                              for k, (n, (_, _, o)) in enumerate(zip(counts, seen,
                                                                       strict=True)))
        raise InputError("layout", f"found {sum(counts)} {kind} piece(s) ({per_photo}), but "
                         f"the layout names {len(labels)}: {', '.join(labels[:20])}"
                         f"{' ...' if len(labels) > 20 else ''}")
    observed: list[npt.NDArray[np.float64]] = []
    reference: list[RGB] = []
    start = 0
    for (balanced, quads, _), n in zip(seen, counts, strict=True):
        obs, ref = colour_pairs(balanced, quads, game, labels[start:start + n])
        observed += obs
        reference += ref
        start += n
    x = np.array(observed, np.float64)
    y = np.array(reference, np.float64)
    matrix = fit_colour_matrix(x, y)
    mapped = np.column_stack([x, np.ones(len(x))]) @ matrix.T
    before = float(np.linalg.norm(x - y, axis=1).mean())
    after = float(np.linalg.norm(np.clip(mapped, 0, 255) - y, axis=1).mean())
    rows = tuple(tuple(round(float(v), 5) for v in row) for row in matrix)
    return DeckProfile(game, labels, rows,  # type: ignore[arg-type]
                       round(before, 2), round(after, 2), len(images))
