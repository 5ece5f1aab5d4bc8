"""Readers: the pieces found in a photo → the game state ``companion check`` takes.

``read_state(game, detections, …)`` dispatches to one module per game; each returns a
``ReadState``: the state in the check contract, what it could not read (which piece,
why) and each piece's role (player, stack, row, cell) for annotating. See
docs/readers.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from companion.games.base import InputError
from companion.readers.common import ReadState
from companion.vision.detections import Detections

GAMES: tuple[str, ...] = ("nox", "rox", "nummix", "qwixx", "catbox")

__all__ = ["GAMES", "ReadState", "read_state"]


def read_state(game: str, detections: Detections, *, image_shape: Sequence[int],
               markers: Sequence[Any] = (), profile: Any = None,
               players: Sequence[str] | None = None, caller: str | None = None,
               extra: Mapping[str, Any] | None = None) -> ReadState:
    """The state of ``game`` shown by ``detections`` (image pixels of an image of
    ``image_shape``). ``markers``: ArUco markers found (seats 10-15 name the players);
    ``profile``: a table profile (its seats, when the photo shows no seat markers);
    ``players``: names in seat order; ``caller``: who called Rox; ``extra``: fields a
    photo cannot show (Cat in the Box ``tricks``, ``predictions``, ``paradox``)."""
    if game not in GAMES:
        raise InputError("game", f"unknown game {game!r}; one of: {', '.join(GAMES)}")
    if players is not None and len(set(players)) != len(players):
        raise InputError("players", "player names must be different")
    module = importlib.import_module(f"companion.readers.{game}")
    result: ReadState = module.read(detections, image_shape=tuple(image_shape),
                                    markers=markers, profile=profile, players=players,
                                    caller=caller, extra=dict(extra or {}))
    return result
