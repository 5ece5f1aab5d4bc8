"""Every committed ONNX model agrees with its labels file: input size, one output per
class, labels in the check contract's notation, small enough to commit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from companion.train.data import SPECS, build
from companion.train.quantize import INT8_HEADING, QUANTIZED
from companion.vision.reading import MODELS_DIR, UNSURE, load_model, parses, softmax
from companion.vision.segment import MODEL_PATH as LOCATOR_PATH

ALL_MODELS = sorted(p.stem for p in MODELS_DIR.glob("*.onnx") if not p.stem.endswith(".int8"))
"""The trained (float) models; the 8-bit copies the reader runs are tested on their own."""
MODELS = [name for name in ALL_MODELS if name != LOCATOR_PATH.stem]
"""The piece classifiers; the learned locator has its own tests (test_segment.py)."""


def test_the_tile_model_is_committed() -> None:
    assert "nummix_tile" in MODELS


@pytest.mark.parametrize("name", MODELS)
def test_model_matches_its_labels_file(name: str) -> None:
    meta = json.loads((MODELS_DIR / f"{name}.labels.json").read_text())
    model = load_model(name)
    assert model.kind == meta["kind"] == name
    assert len(set(model.labels)) == len(model.labels) > 1
    bad = [label for label in model.labels if not parses(model.kind, label)]
    assert not bad, f"labels not in the contract notation: {bad}"
    w, h = model.size
    crops = np.random.default_rng(0).integers(0, 256, (3, h, w, 3), dtype=np.uint8)
    logits = model.logits(crops)
    per_label = 2 if model.oriented else 1
    assert logits.shape == (3, len(model.labels) * per_label)
    assert np.isfinite(logits).all()


@pytest.mark.parametrize("name", ALL_MODELS)
def test_model_is_small_and_documented(name: str) -> None:
    assert (MODELS_DIR / f"{name}.onnx").stat().st_size < 5 * 1024 * 1024
    card = Path(MODELS_DIR / f"{name}.md")
    assert card.exists(), f"model card {card.name} missing"
    text = card.read_text()
    retrain = "companion.train.segment" if name == LOCATOR_PATH.stem else "companion train"
    assert retrain in text
    assert "accuracy" in text.lower() or "found" in text.lower()


def test_labels_notation() -> None:
    assert parses("nummix_tile", "r17") and parses("nummix_tile", "Jrk")
    assert not parses("nummix_tile", "r18") and not parses("nummix_tile", "Jrr")
    assert parses("qwixx_card", "back7") and parses("qwixx_card", "J12")
    assert not parses("qwixx_card", "y13") and not parses("nox_card", "16")


@pytest.mark.parametrize("argv", [["train", "chess_piece", "--seed", "1"],
                                  ["train", "nox_card", "--seed", "1", "--epochs", "0"],
                                  ["train", "rox_edge", "--seed", "1", "--init", "none.onnx"],
                                  ["train", "all", "--seed", "1",
                                   "--init", "models/rox_edge.onnx"],
                                  ["train", "rox_edge", "--seed", "1", "--int8-only",
                                   "--init", "models/rox_edge.onnx"],
                                  ["train", "rox_edge", "--seed", "1", "--int8-only",
                                   "--out", "no/such/folder"]])
def test_train_refuses_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from companion.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.parametrize("name", ["rox_edge", "rox_card"])
def test_training_starts_from_an_exported_model(name: str) -> None:
    """``--init``: the network loaded from an export gives the export's scores."""
    import torch

    from companion.train.fit import SmallNet, load_exported

    model = load_model(name, int8=False)
    net = SmallNet(SPECS[name].classes)
    load_exported(net, MODELS_DIR / f"{name}.onnx")
    net.eval()
    w, h = model.size
    crops = np.random.default_rng(1).integers(0, 256, (4, h, w, 3), dtype=np.uint8)
    with torch.no_grad():
        ours = net(torch.from_numpy(crops.transpose(0, 3, 1, 2).astype(np.float32) / 255))
    exported = model.logits(crops) * model.temperature
    assert np.abs(ours.numpy() - exported).max() < 1e-3


def test_training_refuses_an_export_of_another_network() -> None:
    from companion.train.fit import SmallNet, load_exported

    with pytest.raises(RuntimeError):  # rox_edge has 5 classes, not 10
        load_exported(SmallNet(10), MODELS_DIR / "rox_edge.onnx")


@pytest.mark.parametrize("name", QUANTIZED)
def test_the_reader_runs_the_committed_8bit_copy(name: str) -> None:
    """The copy is committed, loaded by default, small, and reads as the float model
    does: the same label on nearly every training crop, and on every crop of one of
    the float model reads surely but a very few."""
    copy, full = load_model(name), load_model(name, int8=False)
    assert copy.file == f"{name}.int8.onnx" and full.file == f"{name}.onnx"
    assert (MODELS_DIR / copy.file).stat().st_size < (MODELS_DIR / full.file).stat().st_size / 2
    assert (copy.labels, copy.size, copy.temperature) == (full.labels, full.size, full.temperature)
    crops, _ = build(SPECS[name], seed=11, scenes=2, faces=400)
    a, b = softmax(full.logits(crops)), softmax(copy.logits(crops))
    same = a.argmax(1) == b.argmax(1)
    sure = a.max(1) >= UNSURE
    assert len(crops) >= 300 and sure.sum() >= 100
    assert same.mean() >= 0.98 and same[sure].mean() >= 0.995
    assert np.abs(a.max(1) - b[np.arange(len(b)), a.argmax(1)]).mean() < 0.02
    card = (MODELS_DIR / f"{name}.md").read_text()
    assert INT8_HEADING in card and f"companion train {name} --seed" in card


def test_int8_only_makes_the_copy_and_its_card_section(tmp_path: Path) -> None:
    """``companion train rox_edge --int8-only`` from the float model alone: the copy it
    writes reads as the committed copy does, and the card gets its section."""
    import shutil

    from companion.cli import main
    from companion.vision.reading import float_models

    for suffix in (".onnx", ".labels.json", ".md"):
        shutil.copy(MODELS_DIR / f"rox_edge{suffix}", tmp_path)
    card = (tmp_path / "rox_edge.md").read_text()
    (tmp_path / "rox_edge.md").write_text(card[:card.index(INT8_HEADING)])
    assert main(["train", "rox_edge", "--seed", "1", "--int8-only", "--out", str(tmp_path)]) == 0
    with float_models():
        assert load_model("rox_edge").file == "rox_edge.onnx"
    made = load_model("rox_edge", tmp_path)
    assert made.file == "rox_edge.int8.onnx"
    crops, _ = build(SPECS["rox_edge"], seed=12, scenes=0, faces=400)
    ours, committed = made.logits(crops), load_model("rox_edge").logits(crops)
    assert len(crops) >= 300 and (ours.argmax(1) == committed.argmax(1)).mean() >= 0.995
    text = (tmp_path / "rox_edge.md").read_text()
    assert text.count(INT8_HEADING) == 1 and "same label as the float model" in text.lower()
