"""``companion calibrate print|camera|table|deck``: printable aids and saved profiles."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from companion.calibration.camera import CameraProfile, calibrate_camera
from companion.calibration.deck import DEFAULT_LAYOUT, enrol_deck
from companion.calibration.markers import SEAT_IDS
from companion.calibration.printables import write_printables
from companion.calibration.table import calibrate_table
from companion.cli import UsageError
from companion.vision.images import load_image

CALIBRATION_DIR = Path(__file__).resolve().parents[2] / "calibration"
PROFILES_DIR = CALIBRATION_DIR / "profiles"


def register(sub: Any) -> None:
    cal = sub.add_parser("calibrate", help="print aids; calibrate the camera or the table")
    steps = cal.add_subparsers(dest="step", required=True, metavar="STEP")

    printing = steps.add_parser("print", help="write the printable aids (A4 PDF and PNG)")
    printing.add_argument("--out", default=str(CALIBRATION_DIR))
    printing.set_defaults(func=run_print)

    camera = steps.add_parser("camera", help="intrinsics from photos of the ChArUco board")
    camera.add_argument("images", nargs="+", help="3 or more photos of the board")
    camera.add_argument("--out", default=str(PROFILES_DIR / "camera.json"))
    camera.set_defaults(func=run_camera)

    table = steps.add_parser("table", help="table plane, seats and colour from one frame")
    table.add_argument("image")
    table.add_argument("--seat", action="append", default=[], metavar="ID=NAME",
                       help=f"name a seat marker (ids {SEAT_IDS[0]}-{SEAT_IDS[-1]}), repeatable")
    table.add_argument("--camera", help="a camera profile to undistort with")
    table.add_argument("--out", default=str(PROFILES_DIR / "table.json"))
    table.set_defaults(func=run_table)

    deck = steps.add_parser("deck", help="enrol your own deck from photos of known pieces")
    deck.add_argument("game", help=f"one of: {', '.join(DEFAULT_LAYOUT)}")
    deck.add_argument("photos", nargs="+", help="photos of the laid-out pieces")
    deck.add_argument("--layout", metavar="LABELS",
                      help="the pieces in reading order (rows top to bottom, left to right; "
                      "photo after photo), such as 1..15 or r1..r13,k1..k13; default per "
                      "game: " + "; ".join(f"{g} {v}" for g, v in DEFAULT_LAYOUT.items()))
    deck.add_argument("--out", help="default: calibration/profiles/deck_GAME.json")
    deck.set_defaults(func=run_deck)


def run_print(args: argparse.Namespace) -> int:
    for path in write_printables(Path(args.out)):
        print(path)
    return 0


def run_camera(args: argparse.Namespace) -> int:
    profile = calibrate_camera([load_image(p) for p in args.images])
    profile.save(Path(args.out))
    fx, fy = profile.camera_matrix[0][0], profile.camera_matrix[1][1]
    print(f"camera profile from {profile.views_used} views: fx {fx:.1f}, fy {fy:.1f}, "
          f"reprojection error {profile.rms_error_px:.2f} px -> {args.out}")
    return 0


def parse_seats(values: list[str]) -> dict[int, str]:
    """``["10=Marie", …]`` to ``{10: "Marie"}``; UsageError for anything else."""
    seats: dict[int, str] = {}
    for value in values:
        key, sep, name = value.partition("=")
        if not sep or not key.strip().isdigit() or not name.strip():
            raise UsageError(f"--seat {value!r}: expected ID=NAME, such as 10=Marie")
        marker_id = int(key)
        if marker_id not in SEAT_IDS:
            raise UsageError(f"--seat {value!r}: seat marker ids are "
                             f"{SEAT_IDS[0]}-{SEAT_IDS[-1]}")
        seats[marker_id] = name.strip()
    return seats


def run_table(args: argparse.Namespace) -> int:
    seats = parse_seats(args.seat)
    camera = CameraProfile.load(Path(args.camera)) if args.camera else None
    profile = calibrate_table(load_image(args.image), seat_names=seats, camera=camera)
    profile.save(Path(args.out))
    size = profile.table_size_mm
    print("table plane: " + (f"{size[0]:.0f} x {size[1]:.0f} mm between the corner markers"
                             if size else "no corner markers found (reader works without)"))
    print("seats (clockwise): " + (", ".join(s.name for s in profile.seats) or "none found"))
    gains = ", ".join(f"{g:.2f}" for g in profile.white_gains)
    print(f"white balance: {profile.white_source} (gains B,G,R {gains})")
    print(f"saved {args.out}")
    return 0


def run_deck(args: argparse.Namespace) -> int:
    if args.game not in DEFAULT_LAYOUT:
        raise UsageError(f"unknown game {args.game!r}; one of: {', '.join(DEFAULT_LAYOUT)}")
    profile = enrol_deck([load_image(p) for p in args.photos], args.game, args.layout)
    out = Path(args.out) if args.out else PROFILES_DIR / f"deck_{args.game}.json"
    profile.save(out)
    print(f"{args.game} deck enrolled from {len(profile.labels)} piece(s) in "
          f"{profile.photos} photo(s): colour error {profile.error_before:.1f} -> "
          f"{profile.error_after:.1f} (0-255 units)")
    print(f"saved {out}; read with: companion read {args.game} PHOTO --deck {out}")
    return 0
