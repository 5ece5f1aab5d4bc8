"""Training crops for the piece classifiers: what each model reads, and labelled crops
from rendered scenes (through jittered ground-truth quads), rendered faces and the real
tile photos, with camera-like augmentation. numpy/OpenCV only (no torch here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.colour import white_balance
from companion.vision.detections import quad_iou, rectify, rotate_quad

Image = npt.NDArray[np.uint8]

NUMMIX_JOKERS = ("Jrk", "Jrb", "Jro", "Jkb", "Jko", "Jbo")


@dataclass(frozen=True)
class ModelSpec:
    """One classifier: the piece kind it reads, its crop size (w, h), its labels (in the
    check contract's notation), and whether it also learns upside-down crops."""

    name: str
    game: str
    kind: str
    size: tuple[int, int]
    labels: tuple[str, ...]
    oriented: bool = True  # classes are (label, upright) and (label, upside down)
    real_tiles: bool = False  # add crops from the real Rummikub photos
    # None: fit the temperature on the held-out crops; a number: use it as is
    temperature: float | None = None

    @property
    def classes(self) -> int:
        return len(self.labels) * (2 if self.oriented else 1)


SPECS: dict[str, ModelSpec] = {s.name: s for s in (
    ModelSpec("nummix_tile", "nummix", "nummix_tile", (32, 44),
              tuple(f"{c}{n}" for c in "rkbo" for n in range(1, 18)) + NUMMIX_JOKERS,
              # not fitted: the reader multiplies the two views' probabilities, so a fit on
              # single held-out crops (about 0.65) leaves more located tiles sure and wrong
              real_tiles=True, temperature=1.0),
    ModelSpec("nox_card", "nox", "nox_card", (36, 56), tuple(str(n) for n in range(1, 16))),
    ModelSpec("qwixx_card", "qwixx", "qwixx_card", (36, 56),
              tuple(f"{c}{n}" for c in "rygb" for n in range(2, 13))
              + tuple(f"back{n}" for n in range(2, 13)) + tuple(f"J{n}" for n in range(2, 13))),
    ModelSpec("catbox_card", "catbox", "catbox_card", (36, 56),
              tuple(str(n) for n in range(1, 10))),
    ModelSpec("rox_scoring", "rox", "rox_scoring", (32, 48), tuple(str(n) for n in range(1, 11))),
    ModelSpec("rox_card", "rox", "rox_card", (48, 48),
              ("fire", "water", "earth", "air", "magic"), oriented=False),
    ModelSpec("rox_edge", "rox", "rox_edge", (16, 16),
              ("fire", "water", "earth", "air", "magic"), oriented=False),
    ModelSpec("token", "catbox", "token", (24, 24),
              ("red", "blue", "yellow", "green", "purple", "observed"), oriented=False),
    ModelSpec("qwixx_box", "qwixx", "qwixx_box", (24, 24), ("empty", "crossed"),
              oriented=False),
)}


def jitter_quad(quad: npt.ArrayLike, rng: np.random.Generator, amount: float = 0.03
                ) -> npt.NDArray[np.float32]:
    """Each corner moved by up to ``amount`` of the quad's size: imperfect locating."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    side = float(np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[3] - q[0])) / 2
    return (q + rng.uniform(-amount, amount, (4, 2)) * side).astype(np.float32)


def augment(crop: Image, rng: np.random.Generator) -> Image:
    """Camera and light: colour temperature left after white balance, exposure, defocus
    and motion blur, noise and JPEG."""
    out = crop.astype(np.float32)
    temperature = rng.uniform(-0.12, 0.12)
    gains = np.array([1 - temperature, 1.0, 1 + temperature]) * rng.uniform(0.94, 1.06, 3)
    out = out * gains * rng.uniform(0.7, 1.2) + rng.uniform(-20, 20)
    out = np.clip(out, 0, 255).astype(np.uint8)
    if rng.random() < 0.4:
        sigma = rng.uniform(0.3, 1.4)
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    if rng.random() < 0.25:  # motion blur: a short line kernel at any angle
        length = int(rng.integers(2, 6))
        kernel = np.zeros((length * 2 + 1, length * 2 + 1), np.float32)
        angle = rng.uniform(0, np.pi)
        dx, dy = np.cos(angle) * length, np.sin(angle) * length
        cv2.line(kernel, (round(length - dx), round(length - dy)),
                 (round(length + dx), round(length + dy)), 1.0, 1)
        out = cv2.filter2D(out, -1, kernel / kernel.sum())
    if rng.random() < 0.5:
        noise = rng.normal(0, rng.uniform(2, 8), out.shape)
        out = np.clip(out + noise, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        quality = int(rng.integers(40, 95))
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def scene_crops(spec: ModelSpec, *, seed: int, scenes: int, rng: np.random.Generator
                ) -> tuple[list[Image], list[str]]:
    """Crops of ``spec``'s pieces from rendered scenes (white-balanced like the reader
    does), through ground-truth quads with jitter; covered pieces are left out."""
    from companion.synth import render_scene

    crops, labels = [], []
    for i in range(scenes):
        difficulty = ("easy", "normal", "normal", "hard")[i % 4]
        scene = render_scene(spec.game, seed=seed * 100_003 + i, difficulty=difficulty)
        balanced, _ = white_balance(scene.image)
        for piece in scene.pieces:
            if piece.kind != spec.kind or piece.covered or piece.label not in spec.labels:
                continue
            quad = jitter_quad(piece.quad, rng)
            crops.append(augment(rectify(balanced, quad, size=spec.size), rng))
            labels.append(piece.label)
    return crops, labels


def _matched_upright(quad: npt.ArrayLike, truth: list[Any]
                     ) -> tuple[Any, int, npt.NDArray[np.float32]] | None:
    """The truth piece a located ``quad`` overlaps at IoU >= 0.5 (the best one), the
    number of quarter turns that start the quad at the corner nearest the piece's
    upright top-left, and the quad so turned; None when no piece overlaps enough."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    if not truth:
        return None
    best = max(truth, key=lambda p: quad_iou(p.quad, q))
    if quad_iou(best.quad, q) < 0.5:
        return None
    target = np.asarray(best.quad, np.float32).reshape(4, 2)
    turns = [rotate_quad(q, t) for t in range(4)]
    k = int(np.argmin([float(np.linalg.norm(t - target, axis=1).sum()) for t in turns]))
    return best, k, turns[k]


def located_crops(spec: ModelSpec, *, seed: int, scenes: int, rng: np.random.Generator
                  ) -> tuple[list[Image], list[str]]:
    """Crops through the quads the default locator (``segment.locate_learned``) returns on
    rendered scenes (normal and hard, seeds apart from ``scene_crops``'s), each labelled by
    the uncovered truth piece of the same kind it overlaps at IoU >= 0.5: the reader sees
    these imperfect quads, not ground truth. The quad starts at a short edge as
    ``classify`` does, then at the corner nearer the truth's top-left of the two the reader
    tries (0° or 180°); quads a quarter turn off are skipped."""
    from companion.synth import render_scene
    from companion.vision.reading import portrait_first
    from companion.vision.segment import locate_learned

    crops, labels = [], []
    peers = {"rox_card", "rox_scoring"} if spec.game == "rox" else {spec.kind}
    for i in range(scenes):
        difficulty = ("normal", "hard")[i % 2]
        scene = render_scene(spec.game, seed=seed * 100_003 + 50_000 + i, difficulty=difficulty)
        balanced, _ = white_balance(scene.image)
        truth = [p for p in scene.pieces
                 if p.kind == spec.kind and not p.covered and p.label in spec.labels]
        found = locate_learned(scene.image, game=spec.game)
        for k in range(len(found.quads)):
            if found.kinds[k] not in peers or not truth:  # Rox: classify settles the kind
                continue
            quad = portrait_first(found.quads[k], spec.size)
            matched = _matched_upright(quad, truth)
            if matched is None or matched[1] % 2:
                continue
            best, _, upright = matched
            crops.append(augment(rectify(balanced, upright, size=spec.size), rng))
            labels.append(best.label)
    return crops, labels


def face_crops(spec: ModelSpec, *, count: int, rng: np.random.Generator
               ) -> tuple[list[Image], list[str]]:
    """Rendered faces of every label in turn, on a random table colour, seen through a
    jittered quad (balances the classes the scenes rarely show)."""
    from companion.synth import render_piece

    crops, labels = [], []
    w, h = spec.size
    for i in range(count):
        label = spec.labels[i % len(spec.labels)]
        edge = None
        if spec.kind == "rox_card":  # any edge counts, so the centre is read on its own
            counts = rng.multinomial(16, rng.dirichlet(np.ones(5)))
            edge = dict(zip(spec.labels, (int(c) for c in counts), strict=True))
        face = render_piece(spec.kind, label, rng=rng, height_px=int(h * 2.5), edge=edge)
        fh, fw = face.shape[:2]
        pad = int(0.1 * fh)
        table = rng.integers(30, 220, 3).tolist()
        canvas = cv2.copyMakeBorder(face, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=table)
        quad = np.array([[pad, pad], [pad + fw, pad], [pad + fw, pad + fh], [pad, pad + fh]],
                        np.float32)
        crops.append(augment(rectify(canvas, jitter_quad(quad, rng), size=(w, h)), rng))
        labels.append(label)
    return crops, labels


def real_crops(spec: ModelSpec, *, rng: np.random.Generator, split: str = "train",
               jitter: bool = True, copies: int = 3) -> tuple[list[Image], list[str]]:
    """Crops of the real tile photos (white-balanced), held-out images excluded unless
    ``split`` asks for them; the face joker (not a Nummix piece) and tiles whose top is
    not known for sure are left out."""
    from companion.train import real

    crops, labels = [], []
    for image, tiles in real.load(split=split):
        balanced, _ = white_balance(image)
        for tile in tiles:
            if tile.label not in spec.labels or not tile.sure_up:
                continue
            for _ in range(copies if jitter else 1):
                quad = jitter_quad(tile.quad, rng) if jitter else tile.quad
                crop = rectify(balanced, quad, size=spec.size)
                crops.append(augment(crop, rng) if jitter else crop)
                labels.append(tile.label)
    return crops, labels


def rox_edge_crops(spec: ModelSpec, *, count: int, rng: np.random.Generator
                   ) -> tuple[list[Image], list[str]]:
    """Edge-symbol patches of rendered Rox cards with random edge counts, cut where the
    reader cuts them (``rox_edge_places``) from a jittered, augmented card crop."""
    from companion.synth import random_look, render_piece
    from companion.synth.pieces import ELEMENTS, edge_sequence
    from companion.vision.rox_edges import ROX_EDGE_SIDE, rox_edge_patches

    crops: list[Image] = []
    labels: list[str] = []
    side = ROX_EDGE_SIDE
    for i in range(count):
        centre = ELEMENTS[i % len(ELEMENTS)]
        counts = rng.multinomial(16, rng.dirichlet(np.ones(len(ELEMENTS))))
        edge = {e: int(c) for e, c in zip(ELEMENTS, counts, strict=True)}
        look = random_look("rox_card", rng)
        face = render_piece("rox_card", centre, rng=rng, look=look, height_px=side * 2,
                            edge=edge)
        sequence = edge_sequence(centre, edge, look.variant)
        fh, fw = face.shape[:2]
        pad = int(0.1 * fh)
        table = rng.integers(30, 220, 3).tolist()
        canvas = cv2.copyMakeBorder(face, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=table)
        quad = np.array([[pad, pad], [pad + fw, pad], [pad + fw, pad + fh], [pad, pad + fh]],
                        np.float32)
        turns = int(rng.integers(4))  # the card may lie any way round
        quad = np.roll(quad, -turns, axis=0)
        square = augment(rectify(canvas, jitter_quad(quad, rng, 0.02), size=(side, side)), rng)
        patches = rox_edge_patches(square, spec.size[0])
        for k, patch in enumerate(patches):
            crops.append(patch)
            labels.append(sequence[(k + 4 * turns) % 16])
    return crops, labels


def located_rox_edge_crops(spec: ModelSpec, *, seed: int, scenes: int,
                           rng: np.random.Generator) -> tuple[list[Image], list[str]]:
    """Edge-symbol patches cut, as the reader cuts them, from Rox cards in rendered scenes
    (normal and hard) through the quads the default locator returns, each card turned to
    the corner nearest its truth's top-left and labelled by the scene's own sequence of
    16 symbols: the reader's imperfect quads, a tilted camera, the table's light."""
    from companion.synth import render_scene
    from companion.vision.rox_edges import ROX_EDGE_SIDE, rox_edge_patches
    from companion.vision.segment import locate_learned

    crops: list[Image] = []
    labels: list[str] = []
    side = ROX_EDGE_SIDE
    for i in range(scenes):
        difficulty = ("normal", "hard")[i % 2]
        scene = render_scene("rox", seed=seed * 100_003 + 70_000 + i, difficulty=difficulty)
        balanced, _ = white_balance(scene.image)
        truth = [p for p in scene.pieces if p.kind == "rox_card" and not p.covered
                 and p.extra.get("edge_sequence")]
        found = locate_learned(scene.image, game="rox")
        for quad in found.quads:
            if not truth:
                break
            matched = _matched_upright(quad, truth)
            if matched is None:
                continue
            best, _, upright = matched
            square = augment(rectify(balanced, upright, size=(side, side)), rng)
            crops += list(rox_edge_patches(square, spec.size[0]))
            labels += list(best.extra["edge_sequence"])
    return crops, labels


def sheet_box_crops(spec: ModelSpec, *, seed: int, scenes: int, rng: np.random.Generator
                    ) -> tuple[list[Image], list[str]]:
    """Qwixx score-sheet boxes cut as the sheet reader cuts them
    (``sheet.box_crops``), from rendered scenes (normal and hard): each sheet at least
    90 % in view placed from its true quad (turned to a random start corner, jittered)
    and from the quad the default locator returns for it, labelled by the scene's own
    sheet: crossed (an X, a stroke, a filled box in any pen) or empty."""
    from companion.readers.truth import sheet_boxes
    from companion.synth import render_scene
    from companion.vision import sheet
    from companion.vision.segment import locate_learned

    crops: list[Image] = []
    labels: list[str] = []
    for i in range(scenes):
        difficulty = ("normal", "hard")[i % 2]
        scene = render_scene("qwixx", seed=seed * 100_003 + 90_000 + i, difficulty=difficulty)
        balanced, _ = white_balance(scene.image)
        found = locate_learned(scene.image, game="qwixx")
        for p in scene.pieces:
            if p.kind != "qwixx_sheet" or p.covered or p.visible_fraction < 0.9:
                continue
            truth = sheet_boxes(scene.state["sheets"][p.owner])
            true_quad = np.roll(np.asarray(p.quad, np.float32), -int(rng.integers(4)), axis=0)
            quads = [jitter_quad(true_quad, rng, 0.01)]
            centre = np.asarray(p.quad, np.float32).mean(axis=0)
            quads += [found.quads[k] for k in found if found.kinds[k] == "qwixx_sheet"
                      and np.linalg.norm(found.quads[k].mean(axis=0) - centre) < 60]
            for quad in quads:
                placed, _ = sheet.pad_boxes(balanced, quad)
                for crop, box in zip(sheet.box_crops(balanced, placed, spec.size), truth,
                                     strict=True):
                    crops.append(augment(crop, rng))
                    labels.append("crossed" if box["crossed"] else "empty")
    return crops, labels


def build(spec: ModelSpec, *, seed: int, scenes: int, faces: int, located: int = 0
          ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """The training set: crops (N, h, w, 3) and class ids; for oriented models half the
    crops are turned 180° and carry the "upside down" class (label index * 2 + 1).
    ``located`` scenes add crops through the locator's quads (drawn last, so the other
    sources stay the same for a seed)."""
    rng = np.random.default_rng(seed)
    if spec.kind == "rox_edge":
        crops, labels = rox_edge_crops(spec, count=max(1, faces // 16), rng=rng)
        more, more_labels = [], []
    elif spec.kind == "qwixx_box":
        crops, labels = sheet_box_crops(spec, seed=seed, scenes=scenes, rng=rng)
        more, more_labels = [], []
    else:
        crops, labels = scene_crops(spec, seed=seed, scenes=scenes, rng=rng)
        more, more_labels = face_crops(spec, count=faces, rng=rng)
    crops += more
    labels += more_labels
    if spec.real_tiles:
        more, more_labels = real_crops(spec, rng=rng)
        crops += more
        labels += more_labels
    if located:
        more, more_labels = (
            located_rox_edge_crops(spec, seed=seed, scenes=located, rng=rng)
            if spec.kind == "rox_edge" else located_crops(spec, seed=seed, scenes=located, rng=rng))
        crops += more
        labels += more_labels
    index = {label: i for i, label in enumerate(spec.labels)}
    x = np.stack(crops).astype(np.uint8)
    y = np.array([index[label] for label in labels], np.int64)
    if spec.oriented:
        turn = rng.random(len(y)) < 0.5
        x[turn] = x[turn][:, ::-1, ::-1]
        y = y * 2 + turn.astype(np.int64)
    elif spec.size[0] == spec.size[1]:  # square, orientation-free: any quarter turn
        turns = rng.integers(0, 4, len(y))
        x = np.stack([np.rot90(c, int(k)) for c, k in zip(x, turns, strict=True)])
    return np.ascontiguousarray(x), y
