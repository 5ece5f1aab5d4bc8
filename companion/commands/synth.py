"""``companion synth``: write rendered table scenes (JPEG + ground-truth JSON) to a folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from companion.games.base import InputError

GAME_CHOICES = ("nox", "qwixx", "rox", "nummix", "catbox", "all")


def register(sub: Any) -> None:
    p = sub.add_parser("synth", help="render photo-like scenes with exact ground truth")
    p.add_argument("game", help=f"one of: {', '.join(GAME_CHOICES)}")
    p.add_argument("--count", type=int, default=10, help="number of scenes (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed: the same seed gives the same files")
    p.add_argument("--out", required=True, help="folder to write scene_NNNN.jpg/.json into")
    p.add_argument("--difficulty", default="normal", help="easy, normal or hard")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=720)
    legal = p.add_mutually_exclusive_group()
    legal.add_argument("--legal", dest="legal", action="store_true", default=None,
                       help="only legal positions")
    legal.add_argument("--illegal", dest="legal", action="store_false",
                       help="only positions that break a rule")
    p.set_defaults(func=run_synth)


def scene_seed(seed: int, index: int) -> int:
    """The seed of scene ``index`` of a run with ``seed`` (stable across versions)."""
    return (seed * 1_000_003 + index) % (2**63)


def run_synth(args: argparse.Namespace) -> int:
    # imported here so other commands do not pay for OpenCV and Pillow
    import cv2

    from companion.synth import GAMES, render_scene
    from companion.synth.camera import DIFFICULTIES

    if args.game not in GAME_CHOICES:
        raise InputError("game", f"unknown game {args.game!r} (one of {', '.join(GAME_CHOICES)})")
    if args.difficulty not in DIFFICULTIES:
        raise InputError("difficulty", f"unknown difficulty {args.difficulty!r} "
                         f"(one of {', '.join(DIFFICULTIES)})")
    if args.count < 1:
        raise InputError("count", f"must be at least 1, got {args.count}")
    if not (64 <= args.width <= 8192 and 64 <= args.height <= 8192):
        raise InputError("width", "frame size must be 64 to 8192 pixels a side")
    if args.seed < 0:
        raise InputError("seed", f"must be 0 or more, got {args.seed}")
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError("out", f"cannot create {out}: {exc.strerror}") from exc
    games = GAMES if args.game == "all" else (args.game,)
    for i in range(args.count):
        game = games[i % len(games)]
        scene = render_scene(game, seed=scene_seed(args.seed, i), difficulty=args.difficulty,
                             width=args.width, height=args.height, legal=args.legal)
        quality = int(scene.camera["jpeg_quality"])
        ok, data = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise InputError("out", "JPEG encoding failed")
        (out / f"scene_{i:04d}.jpg").write_bytes(data.tobytes())
        doc = scene.to_json()
        doc["image"] = f"scene_{i:04d}.jpg"
        (out / f"scene_{i:04d}.json").write_text(json.dumps(doc, ensure_ascii=False) + "\n")
    print(f"wrote {args.count} scene{'s' if args.count != 1 else ''} to {out}")
    return 0
