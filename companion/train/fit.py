"""Train one piece classifier with torch and export it to ONNX (opset 17).

The network is small (four conv stages, global pooling, one linear layer): it takes
BGR crops scaled to 0–1, (N, 3, h, w) float32, and returns class logits. Training is
deterministic for a seed on CPU.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch import nn

from companion.train.data import SPECS, ModelSpec, build
from companion.train.quantize import QUANTIZED, int8_path, quantize_named

OPSET = 17


def _conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU())


class SmallNet(nn.Module):
    """24-48-64-64-96 channels, max-pooled between stages, then average pooling: about
    11 M multiply-adds for a 32×44 crop, so it trains in minutes on two cores."""

    def __init__(self, classes: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _conv(3, 24), nn.MaxPool2d(2), _conv(24, 48), nn.MaxPool2d(2),
            _conv(48, 64), _conv(64, 64), nn.MaxPool2d(2), _conv(64, 96),
            nn.AdaptiveAvgPool2d(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(96, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features((x - 0.5) / 0.25))


def to_tensor(x: npt.NDArray[np.uint8]) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))).float() / 255.0


FINE_TUNE_LR = 1e-3
"""The peak learning rate when training starts from an exported model (``init``): a fifth
of a fresh start's, so new crops refine what it reads rather than overwrite it."""


def train(spec: ModelSpec, *, seed: int, out: Path, epochs: int = 10, scenes: int = 60,
          faces: int = 5000, located: int = 0, init: Path | None = None,
          log: Any = print) -> dict[str, Any]:
    """Build the data, train (from the exported model ``init`` if given, else from
    scratch), export ``out/<name>.onnx`` and ``<name>.labels.json``; returns a summary
    (sizes, held-out accuracy on rendered crops, time)."""
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    x, y = build(spec, seed=seed, scenes=scenes, faces=faces, located=located)
    log(f"{spec.name}: {len(y)} crops built in {time.perf_counter() - t0:.0f}s")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    n_val = max(1, len(y) // 10)
    val, fit = order[:n_val], order[n_val:]
    xv, yv = to_tensor(x[val]), torch.from_numpy(y[val])
    model = SmallNet(spec.classes)
    if init is not None:
        load_exported(model, init)
    peak = 5e-3 if init is None else FINE_TUNE_LR
    optimiser = torch.optim.AdamW(model.parameters(), lr=peak, weight_decay=1e-4)
    batch = 96
    steps = epochs * ((len(fit) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=peak, total_steps=steps)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    generator = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        model.train()
        if init is not None:  # batch norm keeps the statistics folded into the export
            for norm in model.modules():
                if isinstance(norm, nn.BatchNorm2d):
                    norm.eval()
        perm = fit[torch.randperm(len(fit), generator=generator).numpy()]
        total = 0.0
        for i in range(0, len(perm), batch):
            idx = perm[i:i + batch]
            xb, yb = to_tensor(x[idx]), torch.from_numpy(y[idx])
            optimiser.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * len(idx)
        accuracy = evaluate(model, xv, yv, oriented=spec.oriented)
        log(f"epoch {epoch + 1}/{epochs}: loss {total / len(fit):.3f}, "
            f"held-out label accuracy {accuracy:.4f} ({time.perf_counter() - t0:.0f}s)")
    held_out = logits_of(model, xv)
    temperature = (fit_temperature(held_out, yv) if spec.temperature is None
                   else spec.temperature)
    sure = typical_sureness(held_out, yv, temperature)
    log(f"temperature {temperature:.3f}, typical sureness {sure:.3f} (held-out crops)")
    export(model, spec, out, temperature=temperature, sure=sure)
    return {"model": spec.name, "crops": len(y), "held_out": n_val,
            "held_out_accuracy": accuracy, "temperature": temperature, "sure": sure,
            "seconds": time.perf_counter() - t0,
            "seed": seed, "epochs": epochs, "scenes": scenes, "faces": faces,
            "located": located, "init": str(init) if init is not None else None}


def load_exported(model: SmallNet, path: Path) -> None:
    """Start ``model`` from an exported ONNX model's weights: the export folds each batch
    norm into its convolution, so each convolution takes the folded weight and its batch
    norm passes the folded bias through (mean 0, variance 1 − eps, scale 1), which keeps
    the network's output as exported while batch norm stays in eval mode."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    weights = {w.name: torch.from_numpy(numpy_helper.to_array(w).copy())
               for w in graph.initializer}
    folded = [node.input[1:] for node in graph.node if node.op_type == "Conv"]
    head = next(node.input[1:] for node in graph.node if node.op_type == "Gemm")
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if len(folded) != len(convs) or len(norms) != len(convs):
        raise ValueError(f"{path} does not have this network's {len(convs)} convolutions")
    with torch.no_grad():
        for conv, norm, (weight, bias) in zip(convs, norms, folded, strict=True):
            conv.weight.copy_(weights[weight])
            norm.weight.fill_(1.0)
            norm.bias.copy_(weights[bias])
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)
        linear = model.head[-1]
        linear.weight.copy_(weights[head[0]])
        linear.bias.copy_(weights[head[1]])


def logits_of(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The model's class scores for crops ``x`` (eval mode, no gradients, 512 at a time)."""
    model.eval()
    with torch.no_grad():
        return torch.cat([model(x[i:i + 512]) for i in range(0, len(x), 512)])


def fit_temperature(logits: torch.Tensor, y: torch.Tensor) -> float:
    """The temperature T that makes softmax(logits / T) best match the held-out crops'
    labels (least negative log-likelihood, T searched on a log grid): label smoothing in
    training leaves the raw probabilities too timid, and the reader multiplies them (a
    Rox card's 16 edge symbols) and compares them with a threshold."""
    grid = np.exp(np.linspace(np.log(0.5), np.log(3.0), 61))
    losses = [float(nn.functional.cross_entropy(logits / float(t), y)) for t in grid]
    return round(float(grid[int(np.argmin(losses))]), 4)


def typical_sureness(logits: torch.Tensor, y: torch.Tensor, temperature: float) -> float:
    """The median top probability (at ``temperature``) of the held-out crops the model
    reads right: how sure it is of a plain right reading. Label smoothing keeps it under
    1, so a product over many readings (a Rox card's 16 symbols) is measured against
    this, not against certainty."""
    probs = torch.softmax(logits / temperature, dim=1)
    right = probs.argmax(1) == y
    top = probs.max(1).values[right]
    return round(float(top.median()), 4) if len(top) else 1.0


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, oriented: bool) -> float:
    """Share of crops whose label (orientation aside) is the top class."""
    pred = logits_of(model, x).argmax(1)
    if oriented:
        pred, y = pred // 2, y // 2
    return float((pred == y).float().mean())


def export(model: nn.Module, spec: ModelSpec, out: Path, *, temperature: float = 1.0,
           sure: float = 1.0) -> None:
    out.mkdir(parents=True, exist_ok=True)
    model.eval()
    w, h = spec.size
    dummy = torch.zeros(1, 3, h, w)
    path = out / f"{spec.name}.onnx"
    torch.onnx.export(model, (dummy,), str(path), input_names=["crop"], output_names=["logits"],
                      dynamic_axes={"crop": {0: "n"}, "logits": {0: "n"}}, opset_version=OPSET,
                      dynamo=False)
    meta = {"model": spec.name, "game": spec.game, "kind": spec.kind,
            "input": {"width": w, "height": h, "channels": "BGR", "scale": "0-1"},
            "labels": list(spec.labels), "oriented": spec.oriented,
            "temperature": temperature, "sure": sure,
            "classes": ("(label, upright) at 2*i, (label, upside down) at 2*i+1"
                        if spec.oriented else "one per label")}
    (out / f"{spec.name}.labels.json").write_text(json.dumps(meta, indent=1) + "\n")


def train_named(name: str, **kwargs: Any) -> dict[str, Any]:
    """Train, export, measure the exported model through the reader, write its card."""
    from companion.train.card import measure, write_card
    from companion.vision.reading import load_model

    int8_path(name, kwargs["out"]).unlink(missing_ok=True)  # the old model's copy
    summary = train(SPECS[name], **kwargs)
    load_model.cache_clear()
    measured = measure(name, kwargs["out"])
    write_card(summary, measured, kwargs["out"])
    summary.update({k: list(v) for k, v in measured.items()})
    if name in QUANTIZED:
        summary["int8"] = quantize_named(name, seed=kwargs["seed"], out=kwargs["out"])
    return summary
