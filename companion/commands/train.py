"""``companion train MODEL --seed S [--out models/]``: retrain a piece classifier.

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
    train.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> int:
    from companion.train.data import SPECS

    names = list(SPECS) if args.model == "all" else [args.model]
    for name in names:
        if name not in SPECS:
            raise InputError("model", f"unknown model {name!r}; one of: {', '.join(SPECS)}")
    for field in ("epochs", "scenes", "faces", "located"):
        if getattr(args, field) < (1 if field == "epochs" else 0):
            raise InputError(field, f"--{field} must be positive")
    if args.init is not None and (len(names) != 1 or not Path(args.init).is_file()):
        raise InputError("init", "--init takes one model's existing .onnx file")
    try:
        from companion.train.fit import train_named
    except ImportError as exc:
        raise InputError("model", f"training needs the train extra ({exc}); "
                         "pip install -e '.[train]'") from exc
    for name in names:
        summary = train_named(name, seed=args.seed, out=Path(args.out), epochs=args.epochs,
                              scenes=args.scenes, faces=args.faces,
                              located=args.located,
                              init=Path(args.init) if args.init is not None else None)
        print(json.dumps(summary))
    return 0
