"""``companion train MODEL --seed S [--out models/]``: retrain a piece classifier (and
write its 8-bit copy, ``companion.train.quantize``); ``--int8-only``: the copy alone.

Needs the ``train`` extra (torch, onnx): ``pip install -e '.[train]'``. The same seed
gives the same model on the same machine and library versions.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from companion.games.base import InputError

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"


def register(sub: Any) -> None:
    from companion.train.data import SPECS

    train = sub.add_parser("train", help="train a piece classifier (needs the train extra)")
    train.add_argument("model", help=f"one of: {', '.join(SPECS)}, or all")
    train.add_argument("--seed", type=int, required=True, help="seed (reproducible)")
    train.add_argument("--out", default=str(MODELS_DIR), help="folder for the .onnx files")
    train.add_argument("--epochs", type=int, default=10)
    train.add_argument("--scenes", type=int, default=60, help="rendered scenes to crop")
    train.add_argument("--faces", type=int, default=5000, help="rendered single faces")
    train.add_argument("--located", type=int, default=0,
                       help="rendered scenes to crop through the locator's own quads")
    train.add_argument("--init", default=None,
                       help="an exported model (.onnx) to start from instead of from scratch")
    train.add_argument("--int8-only", action="store_true",
                       help="no training: write the existing model's 8-bit copy "
                            "(<name>.int8.onnx, what the reader runs) and its card section; "
                            "'all' means the models that have one")
    train.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> int:
    from companion.train.data import SPECS
    from companion.train.quantize import QUANTIZED

    everything = QUANTIZED if args.int8_only else tuple(SPECS)
    names = list(everything) if args.model == "all" else [args.model]
    for name in names:
        if name not in SPECS:
            raise InputError("model", f"unknown model {name!r}; one of: {', '.join(SPECS)}")
    for field in ("epochs", "scenes", "faces", "located"):
        if getattr(args, field) < (1 if field == "epochs" else 0):
            raise InputError(field, f"--{field} must be positive")
    if args.init is not None and (len(names) != 1 or not Path(args.init).is_file()):
        raise InputError("init", "--init takes one model's existing .onnx file")
    if args.int8_only and args.init is not None:
        raise InputError("init", "--int8-only makes a copy of the existing model; no --init")
    out = Path(args.out)
    if args.int8_only:
        for name in names:
            if not (out / f"{name}.onnx").is_file():
                raise InputError("model", f"no trained {name}.onnx in {out} to make an "
                                          "8-bit copy of")
    try:
        import onnx  # noqa: F401  (the 8-bit copies: onnxruntime.quantization needs it)

        from companion.train.fit import train_named
        from companion.train.quantize import quantize_named
    except ImportError as exc:
        raise InputError("model", f"training needs the train extra ({exc}); "
                         "pip install -e '.[train]'") from exc
    if args.int8_only:
        for name in names:
            print(json.dumps(quantize_named(name, seed=args.seed, out=out)))
        return 0
    for name in names:
        summary = train_named(name, seed=args.seed, out=out, epochs=args.epochs,
                              scenes=args.scenes, faces=args.faces,
                              located=args.located,
                              init=Path(args.init) if args.init is not None else None)
        print(json.dumps(summary))
    return 0
