"""What every reader shares: the read result, piece frames, seats, unsure pieces.

A reader works on the image plane with each piece's own frame (centre, right and down
vectors from its oriented quad): local frames absorb the camera's perspective, so no
table calibration is needed; seat markers and profiles only name the players.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.calibration.markers import SEAT_IDS, Marker
from companion.vision.detections import (
    JOINED,
    MIN_CONFIDENCE,
    Detections,
    distances,
    quad_axes,
)

Vec = npt.NDArray[np.float64]


@dataclass
class ReadState:
    """A photo's game state in the check contract (``state``), what could not be read
    (``unknown``: piece index, what, why), notes, and each piece's role for annotating."""

    game: str
    state: dict[str, Any]
    unknown: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    roles: list[dict[str, Any] | None] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Everything the state needs was read (nothing unknown)."""
        return not self.unknown

    @property
    def unread(self) -> list[dict[str, Any]]:
        """The unknowns about what the photo shows: all but those marked ``ask_user``
        (what is not on the table at all, such as tricks won or the Rox caller)."""
        return [u for u in self.unknown if not u.get("ask_user")]

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "complete": self.complete, "unknown": self.unknown,
                "notes": self.notes, "roles": self.roles, **self.extra}


@dataclass(frozen=True)
class Frame:
    """One piece on the image: centre, right and down vectors (a full side each). Its
    sizes, angle and axes matrix are computed once per frame (cached): readers ask them
    of the same frames for every pair of pieces."""

    centre: Vec
    right: Vec
    down: Vec

    @cached_property
    def width(self) -> float:
        return float(np.linalg.norm(self.right))

    @cached_property
    def height(self) -> float:
        return float(np.linalg.norm(self.down))

    @cached_property
    def angle(self) -> float:
        """Direction of the piece's right vector, radians (image: clockwise positive)."""
        return math.atan2(float(self.right[1]), float(self.right[0]))

    @cached_property
    def _axes(self) -> npt.NDArray[np.float64]:
        """The right and down vectors as the columns of a 2×2 matrix (``local``)."""
        return np.column_stack([self.right, self.down])

    @property
    def down_angle(self) -> float:
        """Direction from the piece's top to its bottom: where its reader sits."""
        return math.atan2(float(self.down[1]), float(self.down[0]))

    def local(self, point: npt.ArrayLike) -> tuple[float, float]:
        """A point in this piece's frame: (along right, along down) in piece sides."""
        x, y = np.linalg.solve(self._axes, np.asarray(point, np.float64) - self.centre)
        return float(x), float(y)


def frame(quad: npt.ArrayLike) -> Frame:
    return Frame(*quad_axes(quad))


def unsure(detections: Detections, i: int, what: str, *, sure_at: float = MIN_CONFIDENCE
           ) -> dict[str, Any] | None:
    """Why piece ``i`` cannot be used as read (no label, confidence under ``sure_at``),
    or None."""
    label = detections.labels[i]
    if label is None:
        return {"piece": i, "what": what, "why": "not read (no label)"}
    conf = float(detections.confidences[i])
    if conf < sure_at:
        alts = detections.data.get("alternatives", (None,) * len(detections))[i]
        why = f"low confidence {conf:.2f} for {label!r}"
        if alts:
            why += f" (alternatives: {alts})"
        if detections.data.get(JOINED, (False,) * len(detections))[i]:
            why += ("; its outline is over twice a card's size: two or three cards touching, "
                    "or part of a sheet, read as one")
        return {"piece": i, "what": what, "why": why}
    return None


def indices(detections: Detections, kinds: Iterable[str]) -> list[int]:
    wanted = set(kinds)
    return [i for i in detections if detections.kinds[i] in wanted]


def angle_diff(a: float, b: float) -> float:
    """Smallest absolute difference of two angles (radians)."""
    d = (a - b) % (2 * math.pi)
    return min(d, 2 * math.pi - d)


def linked_groups(items: Sequence[int], linked: Callable[[int, int], bool], *,
                  maybe: npt.NDArray[np.bool_] | None = None) -> list[list[int]]:
    """``items`` joined wherever ``linked(a, b)`` holds (each pair asked once, ``a``
    before ``b``), as groups: each in the items' order, groups in the order of their
    first item (union-find). ``maybe`` (items × items, by position), when given, says
    which pairs can be linked at all: a cheap, looser test (``within``) run on every
    pair at once, so ``linked`` is asked only where it holds; the groups are the same."""
    parent = {i: i for i in items}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for k, a in enumerate(items):
        for m in later_candidates(k, len(items), maybe):
            b = items[m]
            if linked(a, b):
                parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for i in items:
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def later_candidates(k: int, count: int, maybe: npt.NDArray[np.bool_] | None
                     ) -> Iterable[int]:
    """The positions after ``k`` (of ``count``) to pair with ``k``: all of them, or those
    the screen ``maybe`` (``within``) lets through."""
    if maybe is None:
        return range(k + 1, count)
    out: list[int] = (k + 1 + np.flatnonzero(maybe[k, k + 1:])).tolist()
    return out


WITHIN_SLACK = 1.01
"""``within`` widens each reach by this share (and a pixel): the distances it compares
are computed for all pairs at once, and may differ in their last bits from those of an
exact test on one pair; a reach 1 % longer keeps every pair that test could pass."""


def within(frames: Sequence[Frame], reach: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """For each pair of ``frames`` (by position), whether the second's centre lies within
    ``reach`` (pixels: one per frame, the first's, or one per pair) of the first's,
    widened by ``WITHIN_SLACK``: the prefilter ``linked_groups`` takes as ``maybe``. A
    pair tested exactly only when its centres are this close skips no pair that test
    could join."""
    if not frames:
        return np.zeros((0, 0), bool)
    centres = np.array([f.centre for f in frames], np.float64).reshape(-1, 2)
    apart = distances(centres, centres)
    limit = np.asarray(reach, np.float64)
    limit = (limit if limit.ndim == 2 else limit.reshape(-1, 1)) * WITHIN_SLACK + 1.0
    out: npt.NDArray[np.bool_] = apart <= limit
    return out


def circular_groups(angles: Sequence[float], *, count: int | None = None,
                    min_gap: float = math.radians(20)) -> list[list[int]]:
    """Split angles (radians) into groups at the gaps between them: the ``count``
    widest gaps when the number of groups is known, else every gap wider than
    ``min_gap``. Groups come in increasing angle (clockwise on an image)."""
    n = len(angles)
    if n == 0:
        return []
    order = sorted(range(n), key=lambda i: angles[i] % (2 * math.pi))
    vals = [angles[i] % (2 * math.pi) for i in order]
    gaps = [((vals[(k + 1) % n] - vals[k]) % (2 * math.pi)) or (2 * math.pi if n == 1 else 0.0)
            for k in range(n)]
    ranked = sorted(range(n), key=lambda k: -gaps[k])
    if count is not None:
        cuts = [k for k in ranked[:count] if gaps[k] >= min_gap / 2]
    else:
        cuts = [k for k in ranked if gaps[k] >= min_gap]
    if not cuts:
        return [[order[k] for k in range(n)]]
    cuts = sorted(cuts)
    groups = []
    for a, b in zip(cuts, cuts[1:] + [cuts[0] + n], strict=True):
        groups.append([order[k % n] for k in range(a + 1, b + 1)])
    return groups


def mean_angle(angles: Iterable[float]) -> float:
    xs = list(angles)
    return math.atan2(sum(math.sin(a) for a in xs), sum(math.cos(a) for a in xs))


@dataclass(frozen=True)
class SeatMark:
    """A seat seen in the photo: its order number (0 = seat 1), name and image place."""

    number: int
    name: str
    xy: Vec


def marker_list(markers: Iterable[Any]) -> list[Marker]:
    """Markers as ``Marker`` objects; also accepts dicts ``{"id", "quad"|"corners"}``
    (the renderer's and the JSON output's shape)."""
    out = []
    for m in markers:
        if isinstance(m, Marker):
            out.append(m)
        elif isinstance(m, Mapping):
            corners = m.get("corners", m.get("quad"))
            out.append(Marker(int(m["id"]), np.asarray(corners, np.float32).reshape(4, 2)))
    return out


def seats(markers: Iterable[Any], profile: Any = None,
          players: Sequence[str] | None = None) -> list[SeatMark]:
    """The seats the photo shows (seat markers 10-15), else those of a table profile.
    Seat k is named ``players[k]`` when names are given, else the profile's name,
    else ``P{k+1}``."""
    found: list[SeatMark] = []
    for m in marker_list(markers):
        if m.id in SEAT_IDS:
            k = SEAT_IDS.index(m.id)
            found.append(SeatMark(k, seat_name(k, players, None), m.centre.astype(np.float64)))
    if not found and profile is not None:
        for s in getattr(profile, "seats", ()):
            k = SEAT_IDS.index(s.marker_id) if s.marker_id in SEAT_IDS else len(found)
            found.append(SeatMark(k, seat_name(k, players, s.name),
                                  np.asarray(s.image_xy, np.float64)))
    return sorted(found, key=lambda s: s.number)


def fill_missing_seats(items: list[int], missing: list[int], seated: dict[int, int],
                       directions: list[float], *, clockwise: bool = False
                       ) -> dict[int, int]:
    """Seat numbers for ``items`` (kitties, rows) that no seat marker was matched to,
    from the seats whose marker was not seen (``missing``), given the items already
    ``seated`` and every item's direction from the table's middle toward its player
    (radians, image). The seats lie round the table in their order, so of all ways to
    give them, the one that keeps the most neighbouring items in seat order is taken:
    clockwise on the photo when ``clockwise`` (seats round a table, RULES.md: players
    in clockwise seat order), else either way round."""
    if not items or not missing:
        return {}
    total = max([*missing, *seated.values()]) + 1
    best: tuple[int, dict[int, int]] = (-1, {})
    for chosen in itertools.permutations(missing, min(len(items), len(missing))):
        trial = {**seated, **dict(zip(items, chosen, strict=False))}
        ring = [trial[g] for g in sorted(trial, key=lambda g: directions[g] % (2 * math.pi))]
        steps = [(b - a) % total for a, b in zip(ring, ring[1:] + ring[:1], strict=True)]
        score = sum(st == 1 for st in steps)
        if not clockwise:
            score = max(score, sum(st == total - 1 for st in steps))
        if score > best[0]:
            best = (score, dict(zip(items, chosen, strict=False)))
    return best[1]


def seat_numbers(pairs: Mapping[int, int], seat_marks: Sequence[SeatMark],
                 players: Sequence[str] | None, directions: list[float], what: str,
                 result: ReadState, *, clockwise: bool = False) -> dict[int, int]:
    """Seat numbers of the items (kitties, rows, sheets) at ``directions`` (from the
    table's middle toward each one's player): those matched to a seat marker (``pairs``:
    item -> index in ``seat_marks``), and for the seats whose marker was not seen (of as
    many seats as names given, or as the highest marker seen) the unmatched items by
    ``fill_missing_seats`` (``clockwise``: its seat order), saying so in the ``result``'s
    notes (``what``: "a kitty", "a row"). With fewer such items than unseen seats (a
    player with nothing on the table), which unseen seat each is cannot be told: an
    unknown ``seats`` says so (Nox dev 60532, hard: four seat markers unseen, three
    kitties for them, every name one seat off)."""
    seated = {g: seat_marks[s].number for g, s in pairs.items()}
    total = seat_count(seat_marks, players)
    missing = [k for k in range(total) if k not in {s.number for s in seat_marks}]
    unmatched = [g for g in range(len(directions)) if g not in pairs]
    seated.update(fill_missing_seats(unmatched, missing, seated, directions,
                                     clockwise=clockwise))
    if missing:
        unseen = ", ".join(str(SEAT_IDS[k]) for k in missing)
        result.notes.append(f"seat marker(s) {unseen} not seen: {what} without one is its "
                            "seat's by the seats' order round the table")
        if 0 < len(unmatched) < len(missing):
            result.unknown.append({
                "piece": None, "what": "seats",
                "why": f"seat marker(s) {unseen} not seen, and {len(unmatched)} left "
                       f"without one for those {len(missing)} seats ({what}): which seat "
                       "each is cannot be seen (check the names)"})
    return seated


def seat_names(pairs: Mapping[int, int], seat_marks: Sequence[SeatMark],
               players: Sequence[str] | None, directions: list[float], what: str,
               result: ReadState, *, clockwise: bool = False) -> dict[int, str]:
    """Player names of the items: the names of their ``seat_numbers`` (same arguments)."""
    seated = seat_numbers(pairs, seat_marks, players, directions, what, result,
                          clockwise=clockwise)
    return {g: seat_player(k, seat_marks, players) for g, k in seated.items()}


def names_unseated(players: Sequence[str] | None, count: int, what: str, order: str,
                   unknown: list[dict[str, Any]]) -> None:
    """With names given and no seat seen (no seat marker, no table profile's seats),
    which of the ``count`` items (``what``: "kitties", "sheets", "rows") is whose cannot
    be seen: the names go on them in ``order`` by rule, and the reading says so (seat
    markers too blurred to read pass otherwise as whole with every name turned one seat:
    Nox dev 61134)."""
    if players and count > 1:
        unknown.append({"piece": None, "what": "seats",
                        "why": f"no seat marker seen: the names given are put on the {what} "
                               f"{order}; whose is whose cannot be seen in the photo (lay "
                               "seat markers, or check the names)"})


def seat_player(k: int, seat_marks: Sequence[SeatMark], players: Sequence[str] | None
                ) -> str:
    """Seat ``k``'s player: the name its seen marker carries, else ``seat_name``."""
    return {s.number: s.name for s in seat_marks}.get(k) or seat_name(k, players)


def seat_count(seat_marks: Sequence[SeatMark], players: Sequence[str] | None) -> int:
    """How many seats the table has: as many as the names given, or as the highest seat
    marker seen (0 when neither is known)."""
    return max(len(players) if players else 0,
               max((s.number + 1 for s in seat_marks), default=0))


def seat_name(k: int, players: Sequence[str] | None, given: str | None = None) -> str:
    """Seat ``k``'s player: the name given for it, else the profile's, else P{k+1}."""
    if players is not None and k < len(players):
        return players[k]
    return given or f"P{k + 1}"


def assign(costs: npt.NDArray[np.float64]) -> list[tuple[int, int]]:
    """A minimum-cost matching of rows to columns (exhaustive for the handful of seats
    at a table, greedy beyond): pairs (row, column)."""
    rows, cols = costs.shape
    if rows == 0 or cols == 0:
        return []
    if max(rows, cols) <= 7:
        best: tuple[float, list[tuple[int, int]]] = (math.inf, [])
        if rows <= cols:
            for perm in itertools.permutations(range(cols), rows):
                c = float(sum(costs[r, perm[r]] for r in range(rows)))
                if c < best[0]:
                    best = (c, [(r, perm[r]) for r in range(rows)])
        else:
            for perm in itertools.permutations(range(rows), cols):
                c = float(sum(costs[perm[k], k] for k in range(cols)))
                if c < best[0]:
                    best = (c, [(perm[k], k) for k in range(cols)])
        return sorted(best[1])
    pairs = []
    used_r: set[int] = set()
    used_c: set[int] = set()
    for r, c in sorted(np.ndindex(rows, cols), key=lambda rc: costs[rc]):
        if r not in used_r and c not in used_c:
            pairs.append((r, c))
            used_r.add(r)
            used_c.add(c)
    return sorted(pairs)


def default_names(count: int, players: Sequence[str] | None) -> list[str]:
    """Names for ``count`` players in seat order: the given names, else P1…Pn."""
    if players is not None and len(players) >= count:
        return list(players[:count])
    return [f"P{k + 1}" for k in range(count)]
