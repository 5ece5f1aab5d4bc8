"""The real Rummikub tile photos (YOLO polygon labels) as labelled, upright tile quads.

CC BY 4.0, Roboflow Universe user "rummikue", project rummikub-nvypk-8cwem v1. Every
6th image by sorted name, starting with the first, is the held-out test subset (copied
to tests/data/real_tiles/); ``split`` keeps training and measuring apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

PHOTOS = Path("/work/shared/data/rummikub-photos")
REPO_SUBSET = Path(__file__).resolve().parents[2] / "tests" / "data" / "real_tiles"
COLOUR_LETTER = {"black": "k", "blue": "b", "orange": "o", "red": "r"}
HOLDOUT_EVERY = 6
SURE_UP_DEG = 35.0
"""Only tiles this close to the image's up direction have a trusted top (photos are
taken with the tiles' tops up; a tile lying across could be either way)."""


@dataclass(frozen=True)
class RealTile:
    image: str  # file name
    label: str  # contract notation ("k7"), or "joker" for the face joker
    quad: npt.NDArray[np.float32]  # (4, 2) clockwise from the tile's upright top-left
    sure_up: bool = True  # the tile stands within SURE_UP_DEG of the image's up



def class_names(folder: Path) -> list[str]:
    """The ``names`` list of classes.yaml (read without a YAML dependency)."""
    names = []
    for line in (folder / "classes.yaml").read_text().splitlines():
        line = line.strip()
        if line.startswith("- "):
            names.append(line[2:].strip().strip("'\""))
    return names


def to_label(name: str) -> str:
    """``black_7`` → ``k7``; ``joker`` stays ``joker`` (a face, not a Nummix joker)."""
    if name == "joker":
        return "joker"
    colour, number = name.split("_")
    return COLOUR_LETTER[colour] + str(int(number))


def upright_quad(polygon: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The polygon's min-area rectangle, clockwise from the top-left of the tile read
    upright: tiles are portrait, and the photos are taken with the tiles' tops up the
    image (up to ±90°), so the short side nearer the top of the image is the top."""
    box = cv2.boxPoints(cv2.minAreaRect(polygon.astype(np.float32))).astype(np.float32)
    best = None
    for k in range(4):
        q = np.roll(box, -k, axis=0)
        if cv2.contourArea(q, oriented=True) < 0:  # make it clockwise in image coords
            q = q[::-1].copy()
            q = np.roll(q, 1, axis=0)
        top = np.linalg.norm(q[1] - q[0])
        side = np.linalg.norm(q[3] - q[0])
        if side < top:  # the top must be the short side
            continue
        score = (q[0, 1] + q[1, 1]) - (q[2, 1] + q[3, 1])  # top edge high in the image
        if best is None or score < best[0]:
            best = (score, q)
    assert best is not None
    return best[1].astype(np.float32)


def points_up(quad: npt.NDArray[np.float32]) -> bool:
    """Whether the quad's top edge faces the image's top within SURE_UP_DEG."""
    up = (quad[0] + quad[1]) / 2 - (quad[2] + quad[3]) / 2
    angle = np.degrees(np.arctan2(up[0], -up[1]))
    return bool(abs(angle) <= SURE_UP_DEG)


def image_files(folder: Path = PHOTOS) -> list[Path]:
    return sorted((folder / "images").glob("*.jpg"))


def is_holdout(index: int) -> bool:
    """Every 6th image by sorted name, starting with the first (index 0)."""
    return index % HOLDOUT_EVERY == 0


def tiles_in(image_path: Path, names: list[str], labels_dir: Path) -> list[RealTile]:
    image = cv2.imread(str(image_path))
    if image is None:
        return []
    h, w = image.shape[:2]
    out = []
    label_file = labels_dir / (image_path.stem + ".txt")
    if not label_file.exists():
        return []
    for line in label_file.read_text().splitlines():
        parts = line.split()
        if len(parts) < 7:
            continue
        cls = int(parts[0])
        pts = np.array(parts[1:], np.float32).reshape(-1, 2) * [w, h]
        quad = upright_quad(pts)
        out.append(RealTile(image_path.name, to_label(names[cls]), quad, points_up(quad)))
    return out


def load(folder: Path = PHOTOS, *, split: str = "train"
         ) -> Iterator[tuple[npt.NDArray[np.uint8], list[RealTile]]]:
    """(image, tiles) for the ``train`` images, the ``test`` (held-out) ones, or ``all``."""
    names = class_names(folder)
    for i, path in enumerate(image_files(folder)):
        if split == "train" and is_holdout(i) or split == "test" and not is_holdout(i):
            continue
        image = cv2.imread(str(path))
        if image is None:
            continue
        yield image, tiles_in(path, names, folder / "labels")
