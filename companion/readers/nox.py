"""Nox from a photo: kitties by seat, each stack its top card (RULES.md §1).

The locator reports only the top card of a stack, so a stack is read as its top card:
the tops fix the round's scores (``nox.colours``), ``nox.merge`` and ``nox.max_stacks``;
``nox.cover_colour`` (a mixed stack) cannot be seen from above.

Kitties are grouped by the way their cards face: a kitty lies in front of its player,
reading upright for them, so each card's top-to-bottom direction points to its owner's
seat. Groups are the clusters of that direction; a kitty's stacks are listed left to
right as its owner sees them.

A card's face cannot always tell up from down (an 8 or an 11 reads the same turned
round, and the corner indices are printed both ways), so a card that faces against
the other cards beside it, is turned round before grouping (``_settle_turns``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from companion.readers.common import (
    Frame,
    ReadState,
    SeatMark,
    angle_diff,
    assign,
    circular_groups,
    frame,
    indices,
    linked_groups,
    mean_angle,
    names_unseated,
    seat_count,
    seat_names,
    seats,
    unsure,
)
from companion.vision.detections import Detections
from companion.vision.reading import UNSURE

SEAT_GAP = math.radians(25)
"""Kitties whose cards face directions this far apart belong to different seats."""
SEAT_DISTANCE = 1.0
"""A seat marker lies about a card's height behind its kitty (in the owner's
direction); the marker nearest that point is the kitty's seat."""
SEAT_REACH = 3.0
"""When a seat's marker was not seen, a kitty whose seen marker lies further than this
many card heights from where its player sits (``SEAT_DISTANCE`` behind it) is not that
marker's: it takes an unseen seat by the seats' order round the table."""
NEIGHBOUR_REACH = (1.8, 0.6)
"""Cards of one kitty lie side by side: a neighbour's centre is within this many card
widths across and card heights along the card's own frame."""
OUTWARD_WEIGHT = 1.0
"""Weight of "cards face away from the table's centre" against one neighbour's vote."""
FIRST_SEAT_DIRECTION = math.pi / 2
"""Without seat markers P1 is the seat nearest the camera (the photo's bottom edge,
image angle +90°); the others follow clockwise."""


CARD_SURE = UNSURE
"""A Nox card is used as read from the classifier's own sure level (``vision.reading.UNSURE``,
under which it asks Tesseract), not the readers' bar (``MIN_CONFIDENCE``): a kitty
card read 0.5-0.8 after every second look is as often wrong as right: located cards of
dev 60500, 60700, 61300, 61600, 61900 + 60 hard and 60000, 61000, 61200 + 100 normal,
5 wrong (60733: a 12 read 5 at 0.65) and 2 right (all hard). Photo -> state, hard
60700 + 60: 3 whole-and-wrong readings now report the card (verdicts 3 more right),
exact 38 -> 37 (60738); 60500 + 60 two verdicts more right; 61900, 61600 + 60 hard and
61000 + 60, 61200 + 100 normal unchanged."""


def read(detections: Detections, *, markers: Sequence[Any] = (), profile: Any = None,
         players: Sequence[str] | None = None, **_: Any) -> ReadState:
    cards = indices(detections, ("nox_card",))
    result = ReadState("nox", {}, roles=[None] * len(detections))
    good: list[int] = []
    bad: set[int] = set()
    for i in cards:
        problem = unsure(detections, i, "nox card", sure_at=CARD_SURE)
        label = detections.labels[i]
        if problem is None and label is not None and not _is_card(label):
            problem = {"piece": i, "what": "nox card", "why": f"not a Nox card: {label!r}"}
        if problem is not None:
            result.unknown.append(problem)
            bad.add(i)
        good.append(i)  # an unsure card still shows where a kitty and a stack are
    frames = _settle_turns({i: frame(detections.quads[i]) for i in good}, detections)
    seat_marks = seats(markers, profile, players)
    count = seat_count(seat_marks, players) or None
    groups = [[good[k] for k in g] for g in circular_groups(
        [frames[i].down_angle for i in good], count=count, min_gap=SEAT_GAP)]
    directions = [mean_angle(frames[i].down_angle for i in g) for g in groups]
    names = _name_groups(groups, directions, frames, seat_marks, players, result)
    kitties: dict[str, list[list[int]]] = {}
    for name, group in zip(names, groups, strict=True):
        ordered = sorted(group, key=lambda i: _along(frames, group, i))
        stacks = []
        for s, i in enumerate(ordered):
            label = detections.labels[i]
            result.roles[i] = {"role": "top card", "player": name, "stack": s + 1}
            if i not in bad and label is not None:
                stacks.append([int(label)])
        kitties[name] = stacks
    order = list(players) if players else [s.name for s in seat_marks]  # seat order
    order += [n for n in names if n not in order]
    result.state = {"game": "nox", "players": order,
                    "kitties": {p: kitties.get(p, []) for p in order}}
    if len(order) < 2:
        result.notes.append(f"{len(order)} kitty found: Nox needs at least two players")
    return result


def _is_card(label: str) -> bool:
    return label.isdigit() and 1 <= int(label) <= 15


def _settle_turns(frames: dict[int, Frame], detections: Detections) -> dict[int, Frame]:
    """Frames with the cards of each row of side-by-side cards facing one way: the way
    most of them face (weighted by confidence), with a vote for facing away from the
    cards' centre, where the players sit. The face alone cannot tell up from down for
    some numbers."""
    if len(frames) < 2:
        return frames
    rows = _side_by_side(frames)
    middle = np.mean([f.centre for f in frames.values()], axis=0)
    settled = dict(frames)
    for row in rows:
        ref = frames[row[0]].down_angle
        vote = sum(float(detections.confidences[i]) * math.cos(frames[i].down_angle - ref)
                   for i in row)
        centre = np.mean([frames[i].centre for i in row], axis=0)
        outward = centre - middle
        if len(rows) >= 2 and np.linalg.norm(outward) > 0.5 * frames[row[0]].height:
            vote += OUTWARD_WEIGHT * math.cos(math.atan2(outward[1], outward[0]) - ref)
        way = ref if vote >= 0 else ref + math.pi
        for i in row:
            f = frames[i]
            if math.cos(f.down_angle - way) < 0:
                settled[i] = Frame(f.centre, -f.right, -f.down)
    return settled


def _side_by_side(frames: dict[int, Frame]) -> list[list[int]]:
    """Groups of cards lying side by side (same axis, neighbours within
    ``NEIGHBOUR_REACH``)."""
    def beside(i: int, j: int) -> bool:
        f, g = frames[i], frames[j]
        if angle_diff(2 * f.down_angle, 2 * g.down_angle) > 2 * SEAT_GAP:
            return False
        x, y = f.local(g.centre)
        return abs(x) <= NEIGHBOUR_REACH[0] and abs(y) <= NEIGHBOUR_REACH[1]

    return linked_groups(list(frames), beside)


def _along(frames: dict[int, Frame], group: list[int], i: int) -> float:
    """Position along the kitty, left to right as its owner reads the cards."""
    right = np.mean([frames[k].right / max(frames[k].width, 1e-9) for k in group], axis=0)
    return float(frames[i].centre @ right)


def _name_groups(groups: list[list[int]], directions: list[float], frames: dict[int, Frame],
                 seat_marks: list[SeatMark], players: Sequence[str] | None,
                 result: ReadState) -> list[str]:
    """Each kitty's player: the nearest seat marker behind it, else P1…Pn clockwise
    from the seat nearest the camera (or the given names in that order)."""
    if not groups:
        return []
    if seat_marks:
        costs = np.zeros((len(groups), len(seat_marks)))
        for g, group in enumerate(groups):
            centre = np.mean([frames[i].centre for i in group], axis=0)
            size = float(np.mean([frames[i].height for i in group]))
            out = np.array([math.cos(directions[g]), math.sin(directions[g])])
            seat_at = centre + out * SEAT_DISTANCE * size  # where its player sits
            for s, mark in enumerate(seat_marks):
                costs[g, s] = float(np.linalg.norm(mark.xy - seat_at)) / size
        pairs = dict(assign(costs))
        if seat_count(seat_marks, players) > len(seat_marks):  # a seat's marker unseen
            pairs = {g: s for g, s in pairs.items() if costs[g, s] <= SEAT_REACH}
        named = seat_names(pairs, seat_marks, players, directions, "a kitty", result,
                           clockwise=True)  # kitties lie round the table in seat order
        names = []
        for g in range(len(groups)):
            if g in named:
                names.append(named[g])
            else:
                names.append(f"seat{len(seat_marks) + g + 1}")
                result.notes.append("a kitty with no seat marker behind it")
        return names
    start = min(range(len(groups)), key=lambda g: abs(math.remainder(
        directions[g] - FIRST_SEAT_DIRECTION, 2 * math.pi)))
    names = [""] * len(groups)
    given = list(players) if players and len(players) >= len(groups) else None
    for k in range(len(groups)):
        g = (start + k) % len(groups)
        names[g] = given[k] if given else f"P{k + 1}"
    result.notes.append("no seat markers: players named clockwise from the seat nearest "
                        "the camera")
    names_unseated(given, len(groups), "kitties",
                   "clockwise from the seat nearest the camera", result.unknown)
    return names
