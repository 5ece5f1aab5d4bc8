"""What every game shares: violations, input errors, the game protocol, JSON helpers.

The protocol is modelled on python-chess and OpenSpiel: a game is a set of pure
functions over an immutable state. Chance is fixed when the game starts (shuffled
piles live in the state) or drawn from a seed kept in the state, so `apply` is
deterministic and a game can be replayed from its seed and its plays.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from companion.rules import rule_text

JSON = Any
"""A value that came from or goes to JSON (dict, list, str, int, float, bool, None)."""


class InputError(ValueError):
    """Input that cannot be understood: malformed JSON, an unknown player, a card that
    cannot exist. Names the field (a dotted path such as ``kitties.Marie[2]``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


class IllegalPlay(ValueError):
    """Raised by ``apply`` for a play that breaks a rule; carries the violations."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        self.violations = tuple(violations)
        super().__init__("; ".join(f"{v.rule}: {v.message}" for v in self.violations))


@dataclass(frozen=True)
class Violation:
    """One broken rule: its RULES.md id, what is wrong in words, and where.

    ``where`` holds locators such as ``("player", "Anna"), ("stack", 2)``; kept as
    pairs so violations stay hashable.
    """

    rule: str
    message: str
    where: tuple[tuple[str, JSON], ...] = field(default=())

    def to_json(self) -> dict[str, JSON]:
        """The contract shape: rule, message, the rule in words, then the locators."""
        out: dict[str, JSON] = {"rule": self.rule, "message": self.message}
        out["explanation"] = rule_text(self.rule)
        out.update(dict(self.where))
        return out

    def locator(self, key: str) -> JSON:
        """The value of one locator (``player``, ``stack``...), or None."""
        return dict(self.where).get(key)


def violation(rule: str, message: str, **where: JSON) -> Violation:
    """Build a violation; keyword arguments say where (player, stack, card, cell...)."""
    return Violation(rule, message, tuple((k, v) for k, v in where.items() if v is not None))


S = TypeVar("S")
P = TypeVar("P")


class Game(Protocol[S, P]):
    """The small protocol all five games follow."""

    name: str
    min_players: int
    max_players: int

    def start(self, players: Sequence[str], rng: random.Random, **options: Any) -> S:
        """A new game for these players (clockwise seat order), chance drawn from rng."""
        ...

    def to_act(self, state: S) -> tuple[str, ...]:
        """The players who may play now (several where play is simultaneous)."""
        ...

    def legal_plays(self, state: S) -> Sequence[P]:
        """Every legal play now, for every player in ``to_act``."""
        ...

    def check_play(self, state: S, play: P) -> tuple[Violation, ...]:
        """Why this play is illegal here; empty when it is legal."""
        ...

    def apply(self, state: S, play: P) -> S:
        """The state after a legal play; raises IllegalPlay otherwise."""
        ...

    def scores(self, state: S) -> Mapping[str, int]:
        """Running totals per player."""
        ...

    def is_over(self, state: S) -> bool:
        """True once the game has ended."""
        ...

    def check_document(self, doc: Mapping[str, JSON]) -> dict[str, JSON]:
        """The verdict on a position in the ``companion check`` JSON contract."""
        ...


# --- reading the JSON contract -------------------------------------------------------


def require(
    doc: Mapping[str, JSON], key: str, kind: type | tuple[type, ...], path: str = ""
) -> Any:
    """``doc[key]``, checked to be of ``kind``; InputError naming the field otherwise."""
    name = f"{path}.{key}" if path else key
    if not isinstance(doc, Mapping):
        raise InputError(path or "document", "expected a JSON object")
    if key not in doc:
        raise InputError(name, "missing")
    return expect(doc[key], kind, name)


def optional(
    doc: Mapping[str, JSON], key: str, kind: type | tuple[type, ...], default: Any, path: str = ""
) -> Any:
    """``doc[key]`` if present (checked to be of ``kind``), else ``default``."""
    if key not in doc or doc[key] is None:
        return default
    return require(doc, key, kind, path)


_KIND_NAMES = {dict: "an object", list: "a list", str: "a string", int: "a whole number",
               bool: "true or false", float: "a number"}


def expect(value: JSON, kind: type | tuple[type, ...], name: str) -> Any:
    """``value`` checked to be of ``kind`` (bool is not accepted as int)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        wanted = " or ".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)
        raise InputError(name, f"expected {wanted}, got {json_type(value)}")
    return value


def json_type(value: JSON) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def read_players(doc: Mapping[str, JSON], *, low: int, high: int) -> tuple[str, ...]:
    """The ``players`` list: distinct non-empty names, ``low``..``high`` of them."""
    players = require(doc, "players", list)
    for i, p in enumerate(players):
        if not isinstance(p, str) or not p.strip():
            raise InputError(f"players[{i}]", "a player is a non-empty name")
    if len(set(players)) != len(players):
        raise InputError("players", "names must be distinct")
    if not low <= len(players) <= high:
        raise InputError("players", f"this game takes {low} to {high} players, got {len(players)}")
    return tuple(players)


def check_player(name: JSON, players: Sequence[str], field_name: str) -> str:
    """``name`` if it is one of ``players``; InputError naming the field otherwise."""
    if not isinstance(name, str) or name not in players:
        raise InputError(field_name, f"unknown player {name!r} (players: {', '.join(players)})")
    return name


def per_player(
    doc: Mapping[str, JSON], key: str, players: Sequence[str], *, complete: bool = False
) -> dict[str, JSON]:
    """An object keyed by player name; unknown names are errors, missing ones too if
    ``complete``."""
    table = require(doc, key, dict)
    for name in table:
        check_player(name, players, f"{key}.{name}")
    if complete:
        for name in players:
            if name not in table:
                raise InputError(f"{key}.{name}", "missing")
    return dict(table)


def winners(totals: Mapping[str, int]) -> list[str]:
    """Everyone with the highest total (ties share the win), in seat order."""
    if not totals:
        return []
    best = max(totals.values())
    return [p for p, t in totals.items() if t == best]
