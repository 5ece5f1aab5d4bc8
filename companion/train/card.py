"""Write a model card (``models/<name>.md``) from a training run and a measurement of
the exported model with the reader itself (``companion.vision.classify``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from companion.train.data import SPECS

PHOTO_CREDIT = (
    '"Rummikub" dataset by the Roboflow Universe user *rummikue*, project '
    "rummikub-nvypk-8cwem, version 1, CC BY 4.0 "
    "(https://creativecommons.org/licenses/by/4.0/); train split only, every 6th image "
    "by sorted name (starting with the first) held out for testing and never trained on.")


def measure(name: str, models_dir: Path) -> dict[str, Any]:
    """Accuracy of the exported model through ``classify`` on fresh rendered scenes
    (seed 777, normal difficulty) and, for tiles, the held-out real photos."""
    from companion.vision.classify_bench import KIND_GAME, real_cases, rendered_cases, score

    spec = SPECS[name]
    out: dict[str, Any] = {}
    if name in KIND_GAME:
        result = score(rendered_cases(name, seed=777, scenes=12), ocr="off",
                       models_dir=models_dir)
        out["rendered"] = (result.right, result.total)
    if spec.real_tiles:
        result = score(real_cases(), ocr="off", models_dir=models_dir)
        out["real"] = (result.right, result.total)
        out["real_turned"] = (result.turned_right, result.oriented_total)
    return out


def write_card(summary: dict[str, Any], measured: dict[str, Any], models_dir: Path) -> Path:
    spec = SPECS[summary["model"]]
    w, h = spec.size

    def pct(pair: tuple[int, int]) -> str:
        right, total = pair
        return f"{100 * right / max(1, total):.1f} % ({right}/{total})"

    classes = (f"{len(spec.labels)} labels × 2 orientations (upright, upside down) = "
               f"{spec.classes} classes" if spec.oriented else f"{len(spec.labels)} classes")
    lines = [
        f"# Model card: `{spec.name}`", "",
        f"Reads a {spec.kind.replace('_', ' ')} ({spec.game}) from a rectified "
        f"{w}×{h} BGR crop (white-balanced image, values 0–1) with onnxruntime on the "
        "CPU. Used by `companion.vision." + ("sheet" if spec.kind == "qwixx_box" else
                                             "classify") + "`.", "",
        "## Classes", "",
        f"{classes}; labels in the check contract's notation, in output order "
        f"(`{spec.name}.labels.json`):", "",
        ", ".join(f"`{label}`" for label in spec.labels), "",
    ]
    if spec.oriented:
        lines += ["Output 2·i is label i upright, 2·i+1 label i upside down. The reader scores "
                  "the crop as found and turned 180° and multiplies the matching pairs, so "
                  "the two views vote on label and orientation together.", ""]
    if spec.kind == "qwixx_box":
        lines += ["Input: one score-sheet box of the original pad (no markers), cut with a "
                  "10 % margin where the sheet reader places it (`sheet.box_crops`). Its "
                  "probability of `crossed` is the box's (confidence 2·|p − ½|); our printed "
                  "sheet, and the pad when this model is missing, are read by the logistic "
                  "model over the box's ink statistics.", ""]
    if spec.kind == "rox_edge":
        from companion.vision.rox_edges import ROX_EDGE_PATCH, ROX_EDGE_SIDE

        lines += [f"Input: one of the 16 edge-symbol patches cut from a {ROX_EDGE_SIDE}×"
                  f"{ROX_EDGE_SIDE} rectified Rox card at `rox_edges.rox_edge_places`, each "
                  f"{ROX_EDGE_PATCH:g} of the card's side (`rox_edges.ROX_EDGE_PATCH`: the "
                  "symbol and a little of its neighbours) shrunk to "
                  f"{w}×{h}; the reader counts the 16 readings.", ""]
    lines += [
        "## Network", "",
        "Four conv stages (24-48-64-64-96 channels, 3×3, batch norm, ReLU, max pooling), "
        "global average pooling, dropout, one linear layer. ONNX opset 17.", "",
        "## Training data", "",
    ]
    if spec.kind == "qwixx_box":
        lines.append(f"- The 52 boxes of every Qwixx sheet at least 90 % in view in "
                     f"{summary['scenes']} rendered scenes (normal/hard), placed from the "
                     "sheet's true quad (any start corner, jittered by 1 %) and from the quad "
                     "the default locator returns for it, labelled by the scene's sheet: "
                     "crosses are an X, a stroke or a filled box in one of several pens.")
    elif spec.kind == "rox_edge":
        lines.append(f"- {summary['faces'] // 16} Rox cards rendered by `companion.synth` "
                     "with random edge counts and looks, any quarter turn, 16 patches each.")
    else:
        lines.append(f"- Crops of `{spec.kind}` pieces from {summary['scenes']} scenes rendered "
                     f"by `companion.synth.render_scene` (easy/normal/hard), white-balanced like "
                     "the reader, through ground-truth quads with corners jittered by ±3 %.")
        lines.append(f"- {summary['faces']} single faces from `companion.synth.render_piece`, "
                     "every label in turn, on random table colours, through jittered quads.")
    if summary.get("located") and spec.kind == "rox_edge":
        lines.append(f"- The 16 edge patches of every Rox card in {summary['located']} more "
                     "rendered scenes (normal/hard), cut through the quads the default locator "
                     "(`companion.vision.segment.locate_learned`) returns, labelled by the "
                     "scene's own symbol sequence: the imperfect quads the reader actually sees.")
    elif summary.get("located"):
        lines.append(f"- Crops from {summary['located']} more rendered scenes (normal/hard) "
                     "through the quads the default locator "
                     "(`companion.vision.segment.locate_learned`) returns, each labelled by "
                     "the uncovered truth piece it overlaps at IoU ≥ 0.5: the imperfect "
                     "quads the reader actually sees.")
    if spec.real_tiles:
        lines.append("- Real tile photos (numbers 1–13 in four colours, 3 jittered copies of "
                     "each tile whose top is known): " + PHOTO_CREDIT)
    lines += [
        "- Augmentation: colour temperature and exposure, blur, noise, JPEG; half the crops "
        "turned 180° with the upside-down class." if spec.oriented else
        "- Augmentation: colour temperature and exposure, blur, noise, JPEG; quarter turns.",
        "",
        f"{summary['crops']} crops, {summary['epochs']} epochs, AdamW with a one-cycle "
        f"schedule, seed {summary['seed']}; {summary['seconds']:.0f} s on this machine."
        + (f" Started from the exported model `{Path(summary['init']).name}` (its batch "
           "norm kept as folded into it) at a fifth of the learning rate "
           "(`fit.FINE_TUNE_LR`)." if summary.get("init") else "")
        + (f" Scores are divided by a fixed temperature of {spec.temperature:g} (not fitted "
           "on the held-out crops: the reader multiplies the probabilities of the crop as "
           "found and turned 180°, and the sharper fitted one leaves more located tiles "
           "sure and wrong)." if spec.temperature is not None else ""), "",
        "## How to retrain", "",
        "```", "pip install -e '.[train]'",
        f"companion train {spec.name} --seed {summary['seed']} --epochs {summary['epochs']} "
        f"--scenes {summary['scenes']} --faces {summary['faces']}"
        + (f" --located {summary['located']}" if summary.get("located") else "")
        + (f" --init models/{Path(summary['init']).name}" if summary.get("init") else "")
        + " --out models/",
        "```", "",
        "The same seed gives the same crops; torch on the CPU is deterministic up to "
        "floating-point summation order across thread counts.", "",
        "## Accuracy", "",
        f"- Held-out 10 % of the training crops (augmented): "
        f"{100 * summary['held_out_accuracy']:.1f} % (label, orientation aside).",
    ]
    if "rendered" in measured and spec.kind == "rox_card":
        lines.append("- Rox cards count as read right only when the centre and all 16 edge "
                     "symbols (counted by `rox_edge`) are right.")
    if "rendered" in measured:
        lines.append(f"- Rendered scenes (seed 777, normal, 12 scenes, uncovered pieces, "
                     f"quads given either way up), through `classify` with Tesseract off: "
                     f"{pct(measured['rendered'])} read right.")
    if "real" in measured:
        lines.append(f"- Real held-out photos (tests/data/real_tiles, jokers aside): "
                     f"{pct(measured['real'])} read right (number and colour); turned the "
                     f"right way up: {pct(measured['real_turned'])} of the tiles whose top is "
                     "known. Real tiles only go to 13 and their joker is a face: numbers "
                     "14–17 and the two-colour jokers are known from rendered tiles only.")
    if spec.kind == "qwixx_box":
        lines += ["", "Box by box through the sheet reader, at true and at located quads: "
                  "`docs/BENCHMARKS.md` (`companion bench --only sheets`).", ""]
    else:
        lines += ["", "Current figures with Tesseract's help: `docs/BENCHMARKS.md` "
                  "(`companion bench --only classify`).", ""]
    if spec.real_tiles:
        lines += ["## Licence credits", "", PHOTO_CREDIT, ""]
    path = models_dir / f"{spec.name}.md"
    path.write_text("\n".join(lines))
    return path
