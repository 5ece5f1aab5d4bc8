"""The ``companion`` command line: one subcommand per module in ``companion.commands``.

Errors a user can cause end with a one-line message and exit 2; nothing prints a
traceback unless COMPANION_DEBUG=1 is set.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from companion.games.base import InputError

# Each module registers its own subcommands; add a module here to add a command.
COMMAND_MODULES: tuple[str, ...] = (
    "companion.commands.check",
    "companion.benchmarks",
    "companion.commands.calibrate",
    "companion.commands.synth",
    "companion.commands.train",
    "companion.commands.read",
)


class UsageError(Exception):
    """A command-line problem the user can fix (missing file, bad option value)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="Table Companion: read a game table, check plays, keep the score.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (InputError, UsageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the last line of defence: never a traceback to users
        if os.environ.get("COMPANION_DEBUG"):
            raise
        print(f"internal error: {type(exc).__name__}: {exc} "
              "(set COMPANION_DEBUG=1 for details)", file=sys.stderr)
        return 1
