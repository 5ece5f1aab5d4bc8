"""Qwixx: Das Kartenspiel from a photo: each score sheet, and the cards just played
(RULES.md §2).

A sheet's content comes from the vision's box-level reading (``data["boxes"]`` of a
``qwixx_sheet`` piece: one ``{"row", "value", "crossed", "confidence"}`` per box, and
``"covered": True`` on a box seen under a hand, rows
``red``…``blue`` with numbers and ``"lock"``, row ``"foul"`` with 1–4). On our printed
sheet the corner markers 20–23 place every box exactly: ``box_quads`` gives the
vision the image quad of each box to classify. Played cards are the face-up coloured or
joker cards (``g7``, ``J5``); backs (``back7``) are the display and are not a play.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.calibration import qwixx_sheet
from companion.calibration.markers import QWIXX_SHEET_IDS
from companion.readers.common import (
    MIN_CONFIDENCE,
    ReadState,
    assign,
    frame,
    indices,
    marker_list,
    names_unseated,
    seat_numbers,
    seat_player,
    seats,
    unsure,
)
from companion.vision.detections import Detections

ROWS = ("red", "yellow", "green", "blue")
LETTERS = {"r": "red", "y": "yellow", "g": "green", "b": "blue"}
SMALL_CARD = 0.4
"""A card outline under this share of the photo's median card area is not read as a
played card but listed unknown: a card's corner outlined apart (normal dev scene 60425:
the corner of an r10 read r12 at 0.80, 13 % of the median; 61706: a y9's end cut off at
its yellow band, read y11 at 0.86, 35 %) or a card mostly hidden. Surely read face-up
cards on dev 61000-61099, 61500-61739 (normal) and 61900-61959 (hard): under 0.4 only
those two (both wrong), then 0.51 and up (one in six of those under 0.6 wrong)."""

PLAY_TIE = 1.1
"""The played cards belong to the sheet they lie nearest (across its width, and a fifth
of that along it); when another sheet is less than this many times as far, the play's
player is named but listed unknown. Dev Qwixx 61000-61099, 61500-61539, 61600-61639,
61700-61739 normal: of 142 plays, the two given to the wrong sheet lay 1.00 and 1.07
times as far from the right one; five right ones lay under 1.1 (1.02 to 1.10), and
are named so too."""


PLAYED_SURE = 0.7
"""A face-up card is taken as played only when read at least this sure (the readers' bar,
``MIN_CONFIDENCE``, is 0.5): a played card read wrong settles a dispute wrongly, and
the reading then claims to be whole. Face-up card readings on dev 61100+100, 61400+100,
61600+60 normal and 61300+60, 61500+60 hard: 0.5-0.7, 5 of 8 wrong (61413 a back4
two-thirds seen read b7 at 0.56, hard 61527 a y8 read y5 at 0.53; right: 0.54-0.70, and
on 61314 a g6 and J5 at 0.58 and 0.55), 0.7-0.8 2 of 2 right, 0.8-0.9 9 of 67 wrong.
Backs (the display) keep the readers' bar."""


def box_quads(markers: Sequence[Any]) -> list[tuple[qwixx_sheet.Box, npt.NDArray[np.float32]]]:
    """Every box of our printed sheet as an image quad, from its four corner markers
    (20–23); empty if any marker is missing."""
    found = {m.id: m for m in marker_list(markers)}
    if not all(i in found for i in QWIXX_SHEET_IDS):
        return []
    side = qwixx_sheet.MARKER_MM
    src, dst = [], []
    for mid, (x, y) in qwixx_sheet.marker_corners_mm().items():
        src.extend([[x, y], [x + side, y], [x + side, y + side], [x, y + side]])
        dst.extend(found[mid].corners.tolist())
    h, _ = cv2.findHomography(np.array(src, np.float64), np.array(dst, np.float64), 0)
    out = []
    for box in qwixx_sheet.boxes():
        rect = np.array([[[box.x, box.y]], [[box.x + box.w, box.y]],
                         [[box.x + box.w, box.y + box.h]], [[box.x, box.y + box.h]]],
                        np.float64)
        out.append((box, cv2.perspectiveTransform(rect, h).reshape(4, 2).astype(np.float32)))
    return out


def read(detections: Detections, *, markers: Sequence[Any] = (), profile: Any = None,
         players: Sequence[str] | None = None, **_: Any) -> ReadState:
    result = ReadState("qwixx", {}, roles=[None] * len(detections))
    sheets = indices(detections, ("qwixx_sheet",))
    frames = {i: frame(detections.quads[i]) for i in sheets}
    seat_marks = seats(markers, profile, players)
    if seat_marks:
        costs = np.array([[float(np.linalg.norm(frames[i].centre - s.xy)) for s in seat_marks]
                          for i in sheets]).reshape(len(sheets), len(seat_marks))
        numbers = seat_numbers(dict(assign(costs)), seat_marks, players,
                               _directions(detections, sheets, frames), "a sheet",
                               result)
        named = [(numbers[k], seat_player(numbers[k], seat_marks, players), i)
                 if k in numbers else (99 + k, f"sheet{k + 1}", i)
                 for k, i in enumerate(sheets)]
        named.sort()
        order = [(name, i) for _, name, i in named]
    else:
        right = np.mean([frames[i].right for i in sheets], axis=0) if sheets else np.zeros(2)
        ordered = sorted(sheets, key=lambda i: float(frames[i].centre @ right))
        given = list(players) if players and len(players) >= len(ordered) else None
        order = [(given[k] if given else f"P{k + 1}", i) for k, i in enumerate(ordered)]
        if len(order) > 1:
            result.notes.append("no seat markers: sheets named left to right as their "
                                "players read them")
        names_unseated(given, len(order), "sheets", "left to right as their players read them",
                       result.unknown)
    out: dict[str, dict[str, Any]] = {}
    for name, i in order:
        sheet = _sheet(detections, i, result)
        result.roles[i] = {"role": "score sheet", "player": name}
        if sheet is not None:
            out[name] = sheet
    state: dict[str, Any] = {"game": "qwixx", "sheets": out}
    play = _play(detections, frames, order, result)
    if play is not None:
        if any(c.startswith("J") for c in play["cards"]):
            state["variant"] = "jokers"
        state["play"] = play
    result.state = state
    return result


def _directions(detections: Detections, sheets: list[int], frames: dict[int, Any]
                ) -> list[float]:
    """Each sheet's direction from the table's middle toward its player: from the
    display, which lies in the middle (RULES.md §2, setup), else the way the sheet faces."""
    display = [frame(detections.quads[i]).centre for i in indices(detections, ("qwixx_card",))
               if str(detections.labels[i]).startswith("back")]
    if not display:
        return [frames[i].down_angle for i in sheets]
    middle = np.mean(display, axis=0)
    return [math.atan2(float(frames[i].centre[1] - middle[1]),
                       float(frames[i].centre[0] - middle[0])) for i in sheets]


def _sheet(detections: Detections, i: int, result: ReadState) -> dict[str, Any] | None:
    boxes = detections.data.get("boxes", (None,) * len(detections))[i]
    if not boxes:
        result.unknown.append({"piece": i, "what": "score sheet",
                               "why": "its boxes were not read"})
        return None
    sheet: dict[str, Any] = {r: [] for r in ROWS}
    sheet["locks"] = []
    sheet["fouls"] = 0
    unsure_boxes: list[str] = []
    covered_boxes: list[str] = []
    for box in boxes:
        if float(box.get("confidence", 1.0)) < MIN_CONFIDENCE:
            (covered_boxes if box.get("covered") else unsure_boxes).append(
                f"{box['row']} {box['value']}")
            continue
        if not box.get("crossed"):
            continue
        row, value = box["row"], box["value"]
        if row == "foul":
            sheet["fouls"] += 1
        elif value == "lock":
            sheet["locks"].append(row)
        else:
            sheet[row].append(int(value))
    for row in ROWS:
        sheet[row].sort(key=lambda n, row=row: n if row in ("red", "yellow") else -n)
    if len(unsure_boxes) == len(boxes):  # vision.sheet.SHEET_SURE: the sheet as a whole
        result.unknown.append({"piece": i, "what": "score sheet boxes",
                               "why": "no box could be read surely (the sheet is blurred, "
                                      "too small in the photo, or covered): take a closer "
                                      "or sharper photo of it"})
    elif unsure_boxes:
        result.unknown.append({"piece": i, "what": "score sheet boxes",
                               "why": "not sure whether crossed: " + ", ".join(unsure_boxes)})
    if covered_boxes:  # vision.sheet._under_skin: skin where the box's print should be
        result.unknown.append({"piece": i, "what": "score sheet boxes",
                               "why": "covered, a skin's colour round them where their "
                                      "row's print should be (a hand over them?): "
                                      + ", ".join(covered_boxes)})
    return sheet


def _play(detections: Detections, frames: dict[int, Any], order: list[tuple[str, int]],
          result: ReadState) -> dict[str, Any] | None:
    """The face-up played cards beside one sheet: the active player's play."""
    played: list[int] = []
    cards = indices(detections, ("qwixx_card",))
    areas = {i: frame(detections.quads[i]).width * frame(detections.quads[i]).height
             for i in cards}
    typical = float(np.median(list(areas.values()))) if areas else 0.0
    for i in cards:
        problem = unsure(detections, i, "card")
        label = detections.labels[i]
        if problem is None and label is not None and label.startswith("back"):
            result.roles[i] = {"role": "display"}
            continue
        if problem is None:
            problem = unsure(detections, i, "card", sure_at=PLAYED_SURE)
        if problem is None and not _card_ok(str(label)):
            problem = {"piece": i, "what": "card", "why": f"not a Qwixx card: {label!r}"}
        if problem is None and areas[i] < SMALL_CARD * typical:
            problem = {"piece": i, "what": "card",
                       "why": f"read {label!r}, but its outline is {areas[i] / typical:.0%} "
                              "of a card's: a card's corner, or a card mostly hidden"}
        if problem is not None:
            result.unknown.append(problem)
            continue
        played.append(i)
    if not played or not order:
        return None
    centre = np.mean([frame(detections.quads[i]).centre for i in played], axis=0)
    # the play lies beside its player's sheet, within the sheet's width
    def offset(ns: tuple[str, int]) -> float:
        x, y = frames[ns[1]].local(centre)
        return float(abs(x) + 0.2 * abs(y))

    name, sheet = min(order, key=offset)
    nearest = offset((name, sheet))
    rivals = [n for n, k in order if k != sheet and offset((n, k)) < PLAY_TIE * nearest]
    if rivals:
        result.unknown.append({
            "piece": None, "what": "play's player", "candidates": [name, *rivals],
            "why": f"the played cards lie about as near {rivals[0]}'s sheet as {name}'s: "
                   f"read as {name}'s play; say whose it is"})
    right = frames[sheet].right
    labels = {i: str(detections.labels[i]) for i in played}
    for i in played:  # a 6 turned over is a 9: read as its player laid it
        label = labels[i]
        if label[1:] in ("6", "9") and float(
                frame(detections.quads[i]).down @ frames[sheet].down) < 0:
            labels[i] = label[0] + ("9" if label[1:] == "6" else "6")
            result.notes.append(
                f"card {i} read {label!r} upside down to {name}'s sheet: a played card "
                f"lies the way its player reads it, so it is {labels[i]!r}")
    played.sort(key=lambda i: float(frame(detections.quads[i]).centre @ right))
    cards = [labels[i] for i in played]
    for k, i in enumerate(played):
        result.roles[i] = {"role": "played card", "player": name, "position": k + 1}
    return {"player": name, "cards": cards, "cross": [int(c[1:]) for c in cards]}


def _card_ok(label: str) -> bool:
    return (len(label) >= 2 and (label[0] in LETTERS or label[0] == "J")
            and label[1:].isdigit() and 2 <= int(label[1:]) <= 12)
