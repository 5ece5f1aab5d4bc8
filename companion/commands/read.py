"""``companion read GAME IMAGE``: the pieces in a photo, the game state they show and
the verdict on it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import cv2

from companion.calibration.deck import DeckProfile
from companion.calibration.table import TableProfile
from companion.commands.check import format_verdict
from companion.games.base import InputError
from companion.jsonio import load_document
from companion.vision.images import load_image
from companion.vision.locate import GAMES


def register(sub: Any) -> None:
    read = sub.add_parser("read", help="find and read the pieces in a photo")
    read.add_argument("game", help=f"one of: {', '.join(GAMES)}")
    read.add_argument("image", help="a photo (JPEG, PNG, ...)")
    read.add_argument("--json", action="store_true", help="print one JSON object")
    read.add_argument("--annotate", metavar="OUT.png",
                      help="write the photo with the quads and labels drawn on it")
    read.add_argument("--no-classifier", action="store_true",
                      help="read printed numbers with Tesseract only")
    read.add_argument("--players", help="player names in clockwise seat order, comma separated "
                      "(else seat markers name them, else P1, P2, ...)")
    read.add_argument("--caller", help="Rox: the player who called Rox")
    read.add_argument("--profile", help="a table profile from 'companion calibrate table'")
    read.add_argument("--deck", help="a deck profile from 'companion calibrate deck'")
    read.add_argument("--extra", help="JSON file with what a photo cannot show (Cat in the "
                      "Box: tricks, predictions, paradox)")
    read.add_argument("--locator", choices=("learned", "classical"), default="learned",
                      help="how pieces are found: the learned locator (default) or the "
                      "classical OpenCV one")
    read.set_defaults(func=run_read)


def run_read(args: argparse.Namespace) -> int:
    if args.game not in GAMES:
        raise InputError("game", f"unknown game {args.game!r}; one of: {', '.join(GAMES)}")
    out_path = Path(args.annotate) if args.annotate else None
    if out_path is not None and out_path.suffix.lower() not in (".png", ".jpg", ".jpeg"):
        raise InputError("annotate", f"write a .png or .jpg, not {out_path.name!r}")
    players = [p.strip() for p in args.players.split(",")] if args.players else None
    if players is not None and not all(players):
        raise InputError("players", f"empty name in {args.players!r}")
    profile = TableProfile.load(Path(args.profile)) if args.profile else None
    extra = load_document(args.extra) if args.extra else None
    deck = DeckProfile.load(Path(args.deck)) if args.deck else None
    if deck is not None and deck.game != args.game:
        raise InputError("deck", f"{args.deck} enrols a {deck.game} deck, not {args.game}")
    image = load_image(args.image)
    from companion.readers.photo import read_photo
    from companion.vision.pipeline import UNSURE

    result = read_photo(image, game=args.game, players=players, caller=args.caller,
                        profile=profile, extra=extra, use_classifier=not args.no_classifier,
                        deck=deck, locator=args.locator)
    doc = result.to_json()
    if out_path is not None:
        from companion.vision.annotate import annotate

        drawn = annotate(image, result.pieces.detections, unsure_below=UNSURE,
                         violations=result.violation_marks(),
                         covered=[u["region"] for u in doc.get("unknown", []) if "region" in u])
        if not cv2.imwrite(str(out_path), drawn):
            raise InputError("annotate", f"cannot write {out_path}")
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
    else:
        print(format_pieces(doc))
        print(format_reading(doc))
    return 0


def format_reading(doc: dict[str, Any]) -> str:
    """Human output of the state part: what could not be read, then the verdict."""
    lines = [_unknown_line(u) for u in doc.get("unknown", [])]
    lines += [f"note: {n}" for n in doc.get("notes", [])]
    if doc.get("check") is not None:
        lines.append(format_verdict(doc["check"]))
        if doc.get("unknown"):
            lines.append("(verdict on the pieces that could be read)")
    elif doc.get("check_error"):
        lines.append(f"not checked: {doc['check_error']}")
    return "\n".join(lines)


def format_pieces(doc: dict[str, Any]) -> str:
    """Human output: one line per piece (label, confidence, kind, centre), then timing."""
    image = doc["image"]
    lines = [f"{doc['game']}: {len(doc['pieces'])} piece(s) in {image['width']}×{image['height']}"
             + (f" (read shrunk to {round(image['width'] * image['read_scale'])}×"
                f"{round(image['height'] * image['read_scale'])})"
                if image.get("read_scale", 1.0) < 1.0 else "")]
    for piece in doc["pieces"]:
        xs = [p[0] for p in piece["quad"]]
        ys = [p[1] for p in piece["quad"]]
        label = piece["label"] if piece["label"] is not None else "?"
        line = (f"{label:>6}  {piece['confidence']:.2f}  {piece['kind']:<13} at "
                f"({sum(xs) / 4:.0f}, {sum(ys) / 4:.0f})")
        if piece.get("edge"):
            line += "  edge " + ", ".join(f"{k} {v}" for k, v in piece["edge"].items())
        if piece.get("unsure"):
            alts = ", ".join(f"{a} {p:.2f}" for a, p in piece.get("alternatives", []))
            line += "  UNSURE" + (f" (or: {alts})" if alts else "")
        lines.append(line)
    t = doc["timing_ms"]
    lines.append(f"time: locate {t['locate']:.0f} ms, classify {t['classify']:.0f} ms, "
                 f"total {t['total']:.0f} ms")
    return "\n".join(lines)


GIVEN_BY = {"caller": "--caller", "tricks": "--extra", "predictions": "--extra"}
"""The option that gives what the table does not show (an unknown marked ``ask_user``)."""


def _unknown_line(unknown: dict[str, Any]) -> str:
    """One unknown for people: what is not on the table (and the option that gives it),
    else what could not be read and where."""
    what, why = unknown.get("what"), unknown.get("why")
    if unknown.get("ask_user"):
        option = GIVEN_BY.get(str(what))
        return f"not on the table: {what}: {why}" + (f" ({option})" if option else "")
    where = _where(unknown)
    return f"could not read: {where} ({what}): {why}" if where else f"could not read: {what}: {why}"


def _where(unknown: dict[str, Any]) -> str | None:
    """Which piece or pieces (by index), or which part of the photo, could not be read
    (None: no one place, such as a row's direction)."""
    if unknown.get("piece") is not None:
        return f"piece {unknown['piece']}"
    if unknown.get("pieces"):  # a group of pieces, such as a row that may be a rack
        return "pieces " + ", ".join(str(i) for i in unknown["pieces"])
    if unknown.get("region"):
        xs, ys = zip(*unknown["region"], strict=True)
        return f"around x {min(xs):.0f}-{max(xs):.0f}, y {min(ys):.0f}-{max(ys):.0f}"
    return None
