"""The five games' rules engines, each a module exposing ``GAME`` (see ``base.Game``)."""

from __future__ import annotations

import importlib
from typing import Any

from companion.games.base import InputError

GAME_NAMES: tuple[str, ...] = ("nox", "qwixx", "rox", "nummix", "catbox")


def get_game(name: str) -> Any:
    """The ``GAME`` object of a game by its name; InputError for an unknown name."""
    if name not in GAME_NAMES:
        raise InputError("game", f"unknown game {name!r} (games: {', '.join(GAME_NAMES)})")
    module = importlib.import_module(f"companion.games.{name}")
    return module.GAME
