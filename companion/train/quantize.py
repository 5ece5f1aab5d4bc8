"""An 8-bit copy of a trained classifier (``models/<name>.int8.onnx``) for the models that
read hundreds of crops a photo: the same network, weights and activations in int8
(onnxruntime static quantization, ranges calibrated on the crops the reader cuts from
rendered scenes), about 2.4 times as fast a crop on this machine's CPU. The float model
stays the trained original (``--init`` starts from it); the reader loads the 8-bit copy
when there is one (``vision.reading.load_model``). Needs the train extra (onnx)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.train.data import SPECS, build

QUANTIZED = ("rox_edge",)
"""Models with an 8-bit copy: the one whose crops cost most of a read, Rox edge symbols
(~3000 16×16 crops a photo: 156 -> 65 ms). Through the copy, dev Rox 61000, 61400,
61600, 61800 +40 normal and 61900+40 hard gave the same flags (state exact, reading
whole, verdict right) on every scene but one, 61017, now exact; CPU median 61900 hard
629 -> 378 ms. Tried and left float: the Nummix tile model (~116 crops read both ways up,
32 -> 14 ms a photo): its copy made one dev normal scene whole and exact (61217) but two
hard scenes read sure and wrong (61922: a b2 read b3 at 0.81; 61736: a b7 made sure over
a grid already misread), on 6 normal and 2 hard ranges; the Qwixx box model (~450
crops), calibrated the same way: on 61000/61400/61600+40 normal and 61900+40 hard one
sheet newly whole (61618), two scenes no longer exact (61035, 61904) and one more verdict
wrong (61921)."""

CALIBRATION_SCENES = 8
"""Rendered scenes of each difficulty (normal, hard; training seeds) read by the whole
reader to collect the crops that set the 8-bit ranges (their activations' minimum and
maximum): the crops the reader really cuts, turned both ways, off-centre and all.
(Calibrated on augmented training crops, the Nummix copy changed more dev scenes.) The
same seed and the same reader give the same file byte for byte; the reader's own changes
change its crops, so a copy made again after them differs a little (the committed one,
made at 45d13f4: same label as the float model on 99.87 % of held-out crops; made again
at db0ef2c, after the Rox sharpening changed: 99.80 %, not adopted without measuring)."""
CALIBRATION_CROPS = 2000
AGREEMENT_CROPS = 1500
"""Held-out training crops (the next seed) on which the copy is compared with the float
model: the share of crops given the same label, and of those the float model reads
surely (top probability >= UNSURE)."""


def int8_path(name: str, models_dir: Path) -> Path:
    return models_dir / f"{name}.int8.onnx"


def _crops(name: str, *, seed: int, count: int) -> npt.NDArray[np.uint8]:
    """``count`` held-out training crops of ``name`` (N, h, w, 3 BGR)."""
    crops, _ = build(SPECS[name], seed=seed, scenes=4, faces=800, located=4)
    pick = np.random.default_rng(seed).permutation(len(crops))[:count]
    return crops[np.sort(pick)]


def reader_crops(name: str, *, seed: int, count: int) -> npt.NDArray[np.uint8]:
    """Up to ``count`` of the crops the reader gives model ``name`` while it reads
    ``CALIBRATION_SCENES`` rendered scenes of each difficulty (seeds apart from the
    training crops'), with the float models, recorded at ``Model.logits``."""
    from companion.readers.photo import read_photo
    from companion.synth import render_scene
    from companion.vision.reading import Model, float_models

    seen: list[npt.NDArray[np.uint8]] = []
    logits = Model.logits

    def recording(model: Model, crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        if model.name == name:
            seen.append(np.array(crops))
        return logits(model, crops)

    game = SPECS[name].game
    Model.logits = recording  # type: ignore[method-assign]
    try:
        with float_models():
            for difficulty in ("normal", "hard"):
                for i in range(CALIBRATION_SCENES):
                    scene = render_scene(game, seed=seed * 100_003 + 95_000 + i,
                                         difficulty=difficulty)
                    read_photo(scene.image, game=game)
    finally:
        Model.logits = logits  # type: ignore[method-assign]
    crops = np.concatenate(seen)
    pick = np.random.default_rng(seed).permutation(len(crops))[:count]
    return crops[np.sort(pick)]


def quantize(name: str, *, models_dir: Path, seed: int) -> dict[str, Any]:
    """Write ``<name>.int8.onnx`` from ``<name>.onnx`` (QDQ, per-channel int8 weights,
    uint8 activations); returns how it agrees with the float model on held-out crops."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from companion.vision.reading import UNSURE, load_model, model_input, softmax

    t0 = time.perf_counter()
    calibration = model_input(reader_crops(name, seed=seed, count=CALIBRATION_CROPS))

    class Batches(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.batches = iter([{"crop": calibration[i:i + 64]}
                                 for i in range(0, len(calibration), 64)])

        def get_next(self) -> dict[str, npt.NDArray[np.float32]] | None:
            return next(self.batches, None)

    out = int8_path(name, models_dir)
    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / f"{name}.onnx"
        quant_pre_process(str(models_dir / f"{name}.onnx"), str(prepared))
        quantize_static(str(prepared), str(out), Batches(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        per_channel=True)
    load_model.cache_clear()
    held_out = _crops(name, seed=seed + 1, count=AGREEMENT_CROPS)
    full = softmax(load_model(name, models_dir, int8=False).logits(held_out))
    small = softmax(load_model(name, models_dir, int8=True).logits(held_out))
    same = full.argmax(1) == small.argmax(1)
    sure = full.max(1) >= UNSURE
    seconds = time.perf_counter() - t0
    return {"model": name, "int8": out.name, "seed": seed,
            "calibration_crops": len(calibration), "held_out_crops": len(held_out),
            "same_label": float(same.mean()), "same_label_sure": float(same[sure].mean()),
            "kib": out.stat().st_size / 1024, "seconds": seconds,
            "float_us": per_crop_us(name, models_dir, int8=False),
            "int8_us": per_crop_us(name, models_dir, int8=True)}


def per_crop_us(name: str, models_dir: Path, *, int8: bool, batch: int = 64,
                repeat: int = 20) -> float:
    """Median microseconds a crop, ``batch`` random crops a run (the reader's chunks)."""
    from companion.benchmarks import median_ms
    from companion.vision.reading import load_model

    model = load_model(name, models_dir, int8=int8)
    w, h = model.size
    crops = np.random.default_rng(0).integers(0, 256, (batch, h, w, 3), dtype=np.uint8)
    return 1000 * median_ms(lambda: model.logits(crops), repeat=repeat, warmup=3) / batch


def int8_section(result: dict[str, Any], measured: dict[str, Any]) -> list[str]:
    """The model card's section on the 8-bit copy (``write_int8_section``)."""
    from companion.vision.reading import UNSURE

    def pct(pair: tuple[int, int]) -> str:
        return f"{100 * pair[0] / max(1, pair[1]):.1f} % ({pair[0]}/{pair[1]})"

    lines = [
        INT8_HEADING, "",
        f"`{result['int8']}` ({result['kib']:.0f} KiB) is what the reader runs: the same "
        "network with int8 weights (per output channel) and uint8 activations, quantized "
        "statically by onnxruntime (QDQ) with ranges from "
        f"{result['calibration_crops']} crops the reader cut from rendered scenes "
        f"(`quantize.reader_crops`, seed {result['seed']}); "
        f"{result['seconds']:.0f} s. Made from the float model by "
        f"`companion train {result['model']} --seed {result['seed']} --int8-only` "
        "(also after every retraining); the float `.onnx` stays the trained original.", "",
        f"- Same label as the float model on {100 * result['same_label']:.2f} % of "
        f"{result['held_out_crops']} held-out training crops (seed {result['seed'] + 1}), "
        f"and on {100 * result['same_label_sure']:.2f} % of those the float model reads "
        f"surely (top probability ≥ {UNSURE:g}).",
        f"- Time a crop (batches of 64, one thread, median): float {result['float_us']:.0f} µs, "
        f"8-bit {result['int8_us']:.0f} µs.",
    ]
    if "rendered" in measured:
        lines.append(f"- Rendered scenes (seed 777, normal, 12 scenes), through `classify` "
                     f"with Tesseract off, read by the 8-bit copy: {pct(measured['rendered'])} "
                     "read right.")
    if "real" in measured:
        lines.append(f"- Real held-out photos (jokers aside), read by the 8-bit copy: "
                     f"{pct(measured['real'])} read right; turned the right way up "
                     f"{pct(measured['real_turned'])}.")
    return lines + [""]


INT8_HEADING = "## The 8-bit copy the reader runs"


def write_int8_section(name: str, result: dict[str, Any], measured: dict[str, Any],
                       models_dir: Path) -> Path:
    """Put the 8-bit section into ``<name>.md`` before "## Licence credits" (or at the
    end), replacing an earlier one."""
    card = models_dir / f"{name}.md"
    text = card.read_text() if card.exists() else f"# Model card: `{name}`\n"
    if INT8_HEADING in text:  # drop the earlier section, up to the next heading
        start = text.index(INT8_HEADING)
        following = text.find("\n## ", start + len(INT8_HEADING))
        text = text[:start] + (text[following + 1:] if following >= 0 else "")
    section = "\n".join(int8_section(result, measured)) + "\n"
    at = text.find("## Licence credits")
    text = (text[:at] + section + text[at:]) if at >= 0 else text.rstrip("\n") + "\n\n" + section
    card.write_text(text)
    return card


def quantize_named(name: str, *, seed: int, out: Path) -> dict[str, Any]:
    """Write ``<name>.int8.onnx`` from ``<name>.onnx``, measure it through the reader as
    the card's float figures are (``card.measure``), and put both in the card."""
    from companion.train.card import measure
    from companion.vision.reading import load_model

    result = quantize(name, models_dir=out, seed=seed)
    load_model.cache_clear()
    measured = measure(name, out)
    write_int8_section(name, result, measured, out)
    result.update({k: list(v) for k, v in measured.items()})
    return result
