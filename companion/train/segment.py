"""Train the learned piece locator (a tiny U-Net) and export it to models/locator.onnx.

``python -m companion.train.segment --seed S`` renders scenes of all five games with
``companion.synth`` (easy, normal and hard mixed), adds the real tile photos' training
split (never the held-out every-6th images), trains for a fixed budget and exports the
ONNX model with BatchNorm folded into the convolutions. The net predicts, per pixel of
the image scaled so its long side is ``INPUT_SIDE``, one of ``CLASSES``: background or
the *interior* of a piece of a kind group (each piece's quad shrunk toward its centre to
``INTERIOR`` of its size, so touching pieces stay separate blobs), and in one more
channel whether the pixel lies on a piece at all (its whole quad: the outline the
interiors' blobs are grown back to). Deterministic for a seed on CPU with the same
library versions.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import torch
from torch import nn

from companion.vision.segment import (
    CLASSES,
    GROUP_OF_KIND,
    INTERIOR,
    MODEL_PATH,
    OUTPUTS,
    STRIDE,
    net_size,
)

OPSET = 17
IGNORE = 255
GAP = 254
"""Target value of a table pixel between two pieces' interiors (within GAP_RADIUS of
both): background, weighted GAP_WEIGHT in the loss, because a blob bridging the gap
merges two pieces into one wrong quad."""
GAP_RADIUS = 4
CLASS_WEIGHT = {"background": 1.0, "tile": 2.0, "card": 2.0, "large": 1.5, "token": 6.0}
"""Loss weight per class: tokens are small and few, so their pixels count more."""
GAP_WEIGHT = 8.0
TRAIN_SEED_BASE = 1_000_000
"""Training scenes use seeds from TRAIN_SEED_BASE + 10_000·seed: far from the seeds the
benchmark (50 000…) and the tests (900…, 70 000…) render."""
RENDER_SIZE = (640, 360)
"""Scenes are rendered at this size and area-scaled to the net's input, as inference
area-scales a 1280×720 photo."""
CROP = 192
DIFFICULTIES = ("easy", "normal", "normal", "hard", "hard")


# ---------------------------------------------------------------- the network

def _conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class TinyUNet(nn.Module):
    """A U-Net that works at half resolution and below: the input is folded 2×2 into
    channels (space-to-depth), encoded at strides 2-4-8-16 with 12-24-32-48 channels,
    decoded FPN-style (1×1 projection, nearest upsampling, addition, 3×3 conv), and the
    head's 4·classes channels unfolded back to full resolution (depth-to-space), so
    small pieces keep a full-resolution outline for a fraction of the cost. Input: BGR
    scaled to 0–1, (N, 3, H, W) with H, W multiples of 16; output: logits
    (N, classes, H, W): the CLASSES, then the whole-piece channel."""

    def __init__(self, classes: int = OUTPUTS, width: tuple[int, ...] = (12, 24, 32, 48)
                 ) -> None:
        super().__init__()
        c1, c2, c3, c4 = width
        self.fold = nn.PixelUnshuffle(2)
        self.e1 = nn.Sequential(_conv(12, c1), _conv(c1, c1))
        self.e2 = nn.Sequential(_conv(c1, c2, 2), _conv(c2, c2))
        self.e3 = nn.Sequential(_conv(c2, c3, 2), _conv(c3, c3))
        self.e4 = nn.Sequential(_conv(c3, c4, 2), _conv(c4, c4), _conv(c4, c4))
        self.p3 = nn.Conv2d(c4, c3, 1)
        self.p2 = nn.Conv2d(c3, c2, 1)
        self.p1 = nn.Conv2d(c2, c1, 1)
        self.d3 = _conv(c3, c3)
        self.d2 = _conv(c2, c2)
        self.d1 = _conv(c1, c1)
        self.head = nn.Conv2d(c1, classes * 4, 1)
        self.unfold = nn.PixelShuffle(2)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1 = self.e1(self.fold((x - 0.5) / 0.25))
        x2 = self.e2(x1)
        x3 = self.e3(x2)
        x4 = self.e4(x3)
        y = self.d3(self.up(self.p3(x4)) + x3)
        y = self.d2(self.up(self.p2(y)) + x2)
        y = self.d1(self.up(self.p1(y)) + x1)
        out: torch.Tensor = self.unfold(self.head(y))
        return out


def fold_batchnorm(model: nn.Module) -> nn.Module:
    """The same network with every Conv2d+BatchNorm2d pair merged into one Conv2d (eval)."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    model.eval()
    for module in model.modules():
        if isinstance(module, nn.Sequential):
            for i in range(len(module) - 1):
                conv, bn = module[i], module[i + 1]
                if isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d):
                    module[i] = fuse_conv_bn_eval(conv, bn)
                    module[i + 1] = nn.Identity()
    return model


def export(model: nn.Module, path: Path) -> None:
    """ONNX (opset 17) with dynamic height and width, BatchNorm folded."""
    model = fold_batchnorm(model)
    h, w = net_size(720, 1280)
    dummy = torch.zeros(1, 3, h + -h % STRIDE, w + -w % STRIDE)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(model, (dummy,), str(path), input_names=["image"],
                      output_names=["logits"], opset_version=OPSET, dynamo=False,
                      dynamic_axes={"image": {2: "height", 3: "width"},
                                    "logits": {2: "height", 3: "width"}})


# ---------------------------------------------------------------- training data

def target_mask(shape: tuple[int, int], pieces: Iterable[tuple[npt.NDArray[np.float32], int]],
                ignore: Iterable[npt.NDArray[np.float32]] = (),
                hidden: Iterable[npt.NDArray[np.float32]] = ()) -> npt.NDArray[np.uint8]:
    """Targets at the net's input size, (h, w, 2). Channel 0, per-pixel class: each
    (quad in net pixels, class) drawn as its interior in the given order (later ones on
    top), pixels where two interiors touch set to background, ``ignore`` and ``hidden``
    quads (not targets, but not clearly table either) set to IGNORE where no interior
    is; GAP marks table between two interiors. Channel 1, whole piece: 1 on every target
    piece's quad, 0 elsewhere, IGNORE on ``ignore`` quads outside target pieces; 0 on
    ``hidden`` ones (cards under a stack's top), which are no part of the top card's
    outline."""
    h, w = shape
    ids = np.zeros((h, w), np.int32)
    whole = np.zeros((h, w), np.uint8)
    classes = [0]
    for n, (quad, cls) in enumerate(pieces, start=1):
        centre = quad.mean(axis=0)
        inner = centre + (quad - centre) * INTERIOR
        cv2.fillPoly(ids, [np.round(inner * 16).astype(np.int32)], n, cv2.LINE_8, shift=4)
        cv2.fillPoly(whole, [np.round(quad * 16).astype(np.int32)], 1, cv2.LINE_8, shift=4)
        classes.append(cls)
    kernel = np.ones((2 * GAP_RADIUS + 1,) * 2, np.uint8)
    ids_f = ids.astype(np.float32)
    most = cv2.dilate(ids_f, kernel)  # the largest id near each pixel
    least = cv2.erode(np.where(ids > 0, ids_f, np.float32(1e9)), kernel)  # smallest non-zero
    between = (least < 1e9) & (most != least)  # two different interiors nearby
    out = np.asarray(classes, np.uint8)[ids]
    small = np.ones((3, 3), np.uint8)
    touch = (ids > 0) & ((cv2.dilate(ids_f, small) > ids_f) | (cv2.erode(
        np.where(ids > 0, ids_f, np.float32(1e9)), small) < ids_f))
    out[touch] = 0  # two interiors meet: keep them apart
    out[between & (out == 0)] = GAP
    skip = np.zeros((h, w), np.uint8)  # 1: ignored quad, 2: card under a stack's top
    for value, quads in ((1, ignore), (2, hidden)):
        for quad in quads:
            cv2.fillPoly(skip, [np.round(quad * 16).astype(np.int32)], value, cv2.LINE_8,
                         shift=4)
    out[(skip > 0) & (out == 0)] = IGNORE
    whole_target = whole.copy()
    whole_target[(skip == 1) & (whole == 0)] = IGNORE
    return np.dstack([out, whole_target])


def scene_sample(game: str, seed: int, difficulty: str
                 ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """One rendered scene at the net's input size and its target mask."""
    from companion.synth import render_scene

    scene = render_scene(game, seed=seed, difficulty=difficulty, width=RENDER_SIZE[0],
                         height=RENDER_SIZE[1])
    h, w = net_size(*scene.image.shape[:2])
    sy, sx = h / scene.image.shape[0], w / scene.image.shape[1]
    image = cv2.resize(scene.image, (w, h), interpolation=cv2.INTER_AREA)
    pieces, ignore, hidden = [], [], []
    for p in scene.pieces:
        quad = np.asarray(p.quad, np.float32) * [sx, sy]
        if p.top is False:
            hidden.append(quad)
        elif p.covered or p.visible_fraction < 0.5:
            ignore.append(quad)
        else:
            pieces.append((quad, CLASSES.index(GROUP_OF_KIND[p.kind])))
    return image, target_mask((h, w), pieces, ignore, hidden)


def real_samples(folder: Path | None = None
                 ) -> list[tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]]:
    """The real tile photos' training split (the held-out every-6th images left out)."""
    from companion.train import real

    folder = folder or real.PHOTOS
    if not folder.exists():
        return []
    out = []
    for image, tiles in real.load(folder, split="train"):
        h, w = net_size(*image.shape[:2])
        sy, sx = h / image.shape[0], w / image.shape[1]
        small = cv2.resize(image, (w, h), interpolation=cv2.INTER_AREA)
        cls = CLASSES.index(GROUP_OF_KIND["nummix_tile"])
        pieces = [(t.quad * np.float32([sx, sy]), cls) for t in tiles]
        out.append((small, target_mask((h, w), pieces)))
    return out


def build(seed: int, scenes: int, log: Callable[[str], None] = print
          ) -> list[tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]]:
    from companion.synth import GAMES

    t0 = time.perf_counter()
    data = []
    for i in range(scenes):
        game = GAMES[i % len(GAMES)]
        difficulty = DIFFICULTIES[(i // len(GAMES)) % len(DIFFICULTIES)]
        data.append(scene_sample(game, TRAIN_SEED_BASE + 10_000 * seed + i, difficulty))
        if (i + 1) % 500 == 0:
            log(f"rendered {i + 1} scenes in {time.perf_counter() - t0:.0f}s")
    return data


# ---------------------------------------------------------------- training

def _augment(image: npt.NDArray[np.uint8], mask: npt.NDArray[np.uint8],
             rng: np.random.Generator) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.uint8]]:
    """A random CROP×CROP window (padded with ignore when the image is smaller), turned
    by a random quarter, mirrored, with random gains per channel and contrast."""
    h, w = mask.shape[:2]
    ph, pw = max(0, CROP - h), max(0, CROP - w)
    if ph or pw:
        image = cv2.copyMakeBorder(image, 0, ph, 0, pw, cv2.BORDER_REFLECT)
        mask = cv2.copyMakeBorder(mask, 0, ph, 0, pw, cv2.BORDER_CONSTANT,
                                  value=(IGNORE, IGNORE))
        h, w = mask.shape[:2]
    y = int(rng.integers(0, h - CROP + 1))
    x = int(rng.integers(0, w - CROP + 1))
    img = image[y:y + CROP, x:x + CROP]
    msk = mask[y:y + CROP, x:x + CROP]
    k = int(rng.integers(0, 4))
    img, msk = np.rot90(img, k), np.rot90(msk, k)
    if rng.random() < 0.5:
        img, msk = img[:, ::-1], msk[:, ::-1]
    out = img.astype(np.float32) / 255.0
    gains = rng.uniform(0.8, 1.2, 3).astype(np.float32)
    contrast = np.float32(rng.uniform(0.7, 1.3))
    mean = out.mean()
    out = ((out - mean) * contrast + mean) * gains + np.float32(rng.uniform(-0.1, 0.1))
    return np.clip(out, 0, 1).transpose(2, 0, 1), np.ascontiguousarray(msk)


def _load(model: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Weights from an earlier run into ``model``; a head with fewer outputs (a model
    from before the whole-piece channel) fills the first outputs, the rest start fresh."""
    own = model.state_dict()
    for name, value in state.items():
        if name in own and own[name].shape != value.shape:
            merged = own[name].clone()
            merged[:value.shape[0]] = value
            state[name] = merged
    model.load_state_dict(state)


def train(*, seed: int, out: Path = MODEL_PATH, scenes: int = 2500, steps: int = 3000,
          batch: int = 12, real_weight: int = 3, init: Path | None = None,
          max_lr: float = 4e-3, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Render, train for ``steps`` batches of random crops (starting from the weights in
    ``init`` when given: a run continued in a second budget), export; returns a summary."""
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    t0 = time.perf_counter()
    data = build(seed, scenes, log)
    reals = real_samples()
    log(f"{len(data)} scenes and {len(reals)} real photos in {time.perf_counter() - t0:.0f}s")
    pool = data + reals * real_weight
    rng = np.random.default_rng(seed)
    model = TinyUNet()
    if init is not None:
        _load(model, torch.load(init))
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max_lr, total_steps=steps,
                                                pct_start=0.1)
    weight = torch.tensor([CLASS_WEIGHT[c] for c in CLASSES])
    loss_fn = nn.CrossEntropyLoss(weight=weight, ignore_index=IGNORE, reduction="none")
    whole_loss = nn.BCEWithLogitsLoss(reduction="none")
    model.train()
    t1 = time.perf_counter()
    running = 0.0
    for step in range(steps):
        picks = rng.integers(0, len(pool), batch)
        xs, ys = zip(*(_augment(*pool[int(i)], rng) for i in picks), strict=True)
        x = torch.from_numpy(np.stack(xs))
        targets = torch.from_numpy(np.stack(ys)).long()
        y, whole = targets[..., 0].clone(), targets[..., 1]
        gap = y == GAP
        y[gap] = 0
        pixel_weight = torch.where(gap, GAP_WEIGHT, 1.0) * (y != IGNORE)
        logits = model(x)
        loss = (loss_fn(logits[:, :len(CLASSES)], y) * pixel_weight).sum() \
            / pixel_weight.sum().clamp(min=1)
        known = (whole != IGNORE).float()
        loss = loss + (whole_loss(logits[:, len(CLASSES)], (whole == 1).float()) * known
                       ).sum() / known.sum().clamp(min=1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        running = 0.98 * running + 0.02 * loss.item() if step else loss.item()
        if (step + 1) % 100 == 0:
            log(f"step {step + 1}/{steps} loss {running:.4f} "
                f"({time.perf_counter() - t1:.0f}s)")
        if (step + 1) % 1000 == 0:  # a long run cut short still leaves its weights
            torch.save(model.state_dict(), out.with_suffix(".pt"))
    torch.save(model.state_dict(), out.with_suffix(".pt"))  # kept in case export fails
    export(model, out)
    summary = {"seed": seed, "scenes": len(data), "real_photos": len(reals),
               "steps": steps, "batch": batch, "crop": CROP, "params": params,
               "loss": round(running, 4), "seconds": round(time.perf_counter() - t0),
               "bytes": out.stat().st_size, "out": str(out)}
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.train.segment",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", default=str(MODEL_PATH))
    parser.add_argument("--scenes", type=int, default=2500)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=12)
    parser.add_argument("--init", default=None, help="continue from these weights (.pt)")
    parser.add_argument("--max-lr", type=float, default=4e-3)
    args = parser.parse_args(argv)
    summary = train(seed=args.seed, out=Path(args.out), scenes=args.scenes, steps=args.steps,
                    batch=args.batch, init=Path(args.init) if args.init else None,
                    max_lr=args.max_lr)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
