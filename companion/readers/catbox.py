"""Cat in the Box from a photo: the research board, and the trick in progress
(RULES.md §5).

Each token is placed on the board's cell under its centre (the board's own frame: rows
red, blue, yellow, green top to bottom, columns 1–9 left to right, as our rendered board
lays them out) and mapped to its player by colour. "observed" tokens block a cell
(``#``). Tricks won and predictions are not on the table: the user gives them
(``extra``), else they are reported unknown and the board alone is returned. The
current trick's cards are read left to right (``extra["trick"]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.readers.common import ReadState, frame, indices, unsure
from companion.synth.pieces import PIECE_MM
from companion.vision.board import BLOCKED, largest_board
from companion.vision.detections import Detections
from companion.vision.locate import board_cell
from companion.vision.reading import UNSURE

ROWS = ("red", "blue", "yellow", "green")
COLUMNS = 9
TOKEN_COLOURS = ("red", "blue", "yellow", "green", "purple")
"""Token colours in the order players are given them when names come without a
colour map: the first player red, the second blue, …"""
PLAYERS_BY_NUMBERS = {5: 2, 6: 3, 8: 4, 9: 5}
"""Numbers in play (columns not blocked) → players (docs/games/catbox.md, set-up)."""
NUMBERS_BY_PLAYERS = {players: numbers for numbers, players in PLAYERS_BY_NUMBERS.items()}
MIN_TOKENS_TO_FIT = 5
"""With this many tokens on the board their positions correct the board's outline."""
CELL_FIT = (0.1, 0.4)
"""Largest scale change (share) and shift (cells) that fitting the tokens to their
cells' middles may make along an axis."""
FIT_RMS = 0.12
"""The fit is used only if it leaves the tokens this close (root mean square, cells) to
their cells' middles: otherwise the outline is off by more than a small change mends."""
CARD_SURE = UNSURE
"""A card of the trick is used as read from the classifier's own sure level
(``vision.reading.UNSURE``, under which it asks Tesseract), not the readers' bar
(``MIN_CONFIDENCE``), as Nox cards, Rox scoring cards and Nummix tiles are: of the 1329
cards read on dev 61600, 61700, 61000, 61200 (+40, normal), 61900, 61700, 61800, 61100,
61300, 61500, 60500 (+40, hard) the three left at 0.5-0.8 after every second look were
all wrong (61517 hard: a 6 read 5 at 0.54; 61528: a 2 read 8 at 0.65, both read whole;
61536: a 3 where no card lies, 0.75); at 0.8 and over 1293 of 1310 right."""
TINY_CARD = 0.25
"""A card whose outline covers less than this share of a card's area on the table (the
board's plane, its size from the board's) is reported unknown: no card of the trick is so
small. Dev 61524 hard: a blob on the board's corner, 0.013 of a card, read 6 at 0.90 and
added to the trick, read whole. Of the 1329 cards read on dev Cat in the Box 61600, 61700,
61000, 61200 (+40, normal), 61900, 61700, 61800, 61100, 61300, 61500, 60500 (+40, hard)
that one and 61534's (0.08, a 2 where no card lies) were the smallest; every other 0.38 or
more (a card half under another)."""
TOKENS_OFF_GRID = 0.2
"""Tokens (MIN_TOKENS_TO_FIT or more) lying this far (root mean square along the columns
or the rows, cells, after ``_fit_to_cells``) from their cells' middles show a grid off the
board's cells: no token's cell is told. Dev 61901 hard: a hand over the board's first two
columns, the grid fitted to the other seven, the tokens 0.24 off along the columns and the
board read whole with 17 cells wrong. On dev Cat in the Box 61000, 61200, 61600 (+40,
normal), 61700, 61800, 61900 (+40, hard) every board read right left its tokens 0.16 or
less off along either axis, and the eight at 0.2 or more were all read wrong. With 60500,
61100, 61300, 61500 (+40, hard) too, 14 of the 400 scenes have their cells unknown so:
none was read exactly, one (61901) was read whole."""


def read(detections: Detections, *, players: Sequence[str] | None = None,
         extra: Mapping[str, Any] | None = None, **_: Any) -> ReadState:
    extra = dict(extra or {})
    result = ReadState("catbox", {}, roles=[None] * len(detections))
    boards = indices(detections, ("catbox_board",))
    cells: dict[tuple[str, int], str] = {}
    board = None
    if not boards:
        result.unknown.append({"piece": None, "what": "research board", "why": "not found"})
    else:
        if len(boards) > 1:
            result.notes.append(f"{len(boards)} boards found: the largest is read")
        board = largest_board(detections)
        result.roles[board] = {"role": "research board"}
        cells = _tokens(detections, board, result)
    colour_of = _players(cells, players, extra, result)
    names = list(colour_of.values())
    if board is not None and (players or isinstance(extra.get("tokens"), Mapping)):
        _blocked_by_set_up(cells, len(names), result)
    if board is not None and not _grid_off(detections, board):
        _covered_cells(detections, board, cells, result)
    blocked_cols = {n for (_, n), c in cells.items() if c == BLOCKED}
    board_out = {row: ["." for _ in range(COLUMNS)] for row in ROWS}
    for (row, number), colour in cells.items():
        if colour == BLOCKED:
            board_out[row][number - 1] = "#"
        elif colour in colour_of:
            board_out[row][number - 1] = colour_of[colour]
        else:
            result.notes.append(f"a {colour} token on {row} {number}: no player has that "
                                "colour")
    state: dict[str, Any] = {"game": "catbox", "players": names, "board": board_out}
    for key in ("tricks", "predictions", "paradox"):
        if key in extra:
            state[key] = extra[key]
    if "tricks" not in state:
        result.unknown.append({"piece": None, "what": "tricks", "ask_user": True,
                               "why": "tricks won are not on the table: give them"})
    if "predictions" not in state and len(names) != 2:
        result.unknown.append({"piece": None, "what": "predictions", "ask_user": True,
                               "why": "predictions are not on the table: give them"})
    result.state = state
    result.extra["trick"], result.extra["revealed"] = _cards(detections, board, result)
    if blocked_cols:
        result.extra["blocked_columns"] = sorted(blocked_cols)
    return result


def _tokens(detections: Detections, board: int, result: ReadState
            ) -> dict[tuple[str, int], str]:
    """(row, number) → token colour for every token on the board."""
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    to_board = cv2.getPerspectiveTransform(detections.quads[board].astype(np.float32), unit)
    tokens = indices(detections, ("token",))
    if _grid_off(detections, board):
        _cells_unknown(board, tokens, result, "the board's grid could not be fitted to its "
                       "cells (its print runs past the grid's end)")
        return {}
    places = []  # (column, row) in cells from the grid's top-left, fractional
    for i in tokens:
        centre = frame(detections.quads[i]).centre
        u, v = cv2.perspectiveTransform(centre.reshape(1, 1, 2), to_board).ravel()
        places.append(board_cell(float(u), float(v)))
    if len(places) >= MIN_TOKENS_TO_FIT:
        columns = _fit_to_cells([p[0] for p in places], COLUMNS)
        rows = _fit_to_cells([p[1] for p in places], len(ROWS))
        if max(_off_middles(columns), _off_middles(rows)) >= TOKENS_OFF_GRID:
            _cells_unknown(board, tokens, result, "the tokens lie far off the middles of "
                           "the board's grid's cells (the grid is off the board's cells)")
            return {}
        places = list(zip(columns, rows, strict=True))
    cells: dict[tuple[str, int], str] = {}
    off_middle: dict[tuple[str, int], float] = {}  # the kept token's distance (cells)
    for i, (x, y) in zip(tokens, places, strict=True):
        problem = unsure(detections, i, "token")
        col, row = int(np.floor(x)), int(np.floor(y))
        if not (0 <= col < COLUMNS and 0 <= row < len(ROWS)):
            result.roles[i] = {"role": "token off the board"}
            continue
        key = (ROWS[row], col + 1)
        result.roles[i] = {"role": "token", "cell": [ROWS[row], col + 1]}
        if problem is not None:
            result.unknown.append(problem)
            continue
        label = str(detections.labels[i])
        if label != BLOCKED and label not in TOKEN_COLOURS:
            result.unknown.append({"piece": i, "what": "token", "why": f"colour {label!r}"})
            continue
        off = float(np.hypot(x - col - 0.5, y - row - 0.5))
        if key in cells:
            result.notes.append(f"two tokens on {key[0]} {key[1]}")
            if off >= off_middle[key]:
                continue  # a token lies in its cell's middle: the other is a stray circle
        cells[key], off_middle[key] = label, off
    return cells


def _cells_unknown(board: int, tokens: Sequence[int], result: ReadState, why: str) -> None:
    """Every token's cell, and which cells are empty, reported unknown: the board's grid
    does not lie on its cells (``why``), so no cell can be told."""
    for i in tokens:
        result.roles[i] = {"role": "token, its cell unknown"}
        result.unknown.append({"piece": i, "what": "token",
                               "why": f"{why}: the token's cell cannot be told"})
    result.unknown.append({"piece": board, "what": "board cells",
                           "why": f"{why}: which cells are empty cannot be told"})


def _off_middles(xs: Sequence[float]) -> float:
    """How far (root mean square, cells) positions along one axis lie from their cells'
    middles."""
    x = np.asarray(xs, np.float64)
    off = x - np.floor(x) - 0.5
    return float(np.sqrt(np.mean(off * off)))


def _card_share(quad: npt.NDArray[np.float32], to_board: npt.NDArray[np.float64]) -> float:
    """The area of a card's ``quad`` on the board's plane (``to_board``: the image to the
    board's unit square) as a share of a Cat in the Box card's (``PIECE_MM``)."""
    on_board = cv2.perspectiveTransform(quad.reshape(1, 4, 2).astype(np.float32), to_board)
    card, board = (float(np.prod(PIECE_MM[k])) for k in ("catbox_card", "catbox_board"))
    return abs(float(cv2.contourArea(on_board.reshape(4, 2)))) / (card / board)


def _grid_off(detections: Detections, board: int) -> bool:
    """Whether the vision could fit no grid onto the ``board``'s cells
    (``data["grid_off"]``, ``companion.vision.board.boards_upright``)."""
    return bool(detections.data.get("grid_off", (None,) * len(detections))[board])


def _fit_to_cells(xs: Sequence[float], count: int) -> list[float]:
    """Token positions (in cells along one axis of ``count`` cells) scaled about the
    grid's middle and shifted, by the least amounts (within ``CELL_FIT``) that best put
    the tokens at their cells' middles: tokens lie in the middle of their cells, so
    their common offset from it is the board outline's error (cut short by a card, a
    corner a few pixels off) or the tokens' height seen at a slant."""
    x = np.asarray(xs, np.float64)
    middle = count / 2
    scales, shifts = CELL_FIT
    # every (scale, shift) of the 21 x 21 grid at once, a row of tokens each: the first
    # of the cheapest in the grid's order (scale, then shift) wins
    scale_of, shift_of = (grid.ravel()[:, None] for grid in np.meshgrid(
        np.linspace(1 - scales, 1 + scales, 21), np.linspace(-shifts, shifts, 21),
        indexing="ij"))
    moved_all = middle + (x - middle) * scale_of + shift_of
    off_all = moved_all - np.floor(moved_all) - 0.5
    costs = np.sum(np.minimum(off_all * off_all, 0.1), axis=1) + 0.05 * (
        np.abs(scale_of[:, 0] - 1) / scales + np.abs(shift_of[:, 0]) / shifts)
    best = int(np.argmin(costs))
    scale, shift = float(scale_of[best, 0]), float(shift_of[best, 0])
    moved = middle + (x - middle) * scale + shift
    if _off_middles(moved) > FIT_RMS:
        return list(x)  # the tokens do not sit in cells under any small change: keep
    return list(moved)


def _blocked_by_set_up(cells: dict[tuple[str, int], str], players: int,
                       result: ReadState) -> None:
    """With the players known, the columns no card of the game reaches are blocked at
    set-up (RULES.md §5: 4 players use 1–8, the 9 column blocked; 2 use 1–5): their cells
    not seen as blocked (an "observed" token under a hand or missed) are blocked, and
    the note says so. A player's token seen there stays, for the check to judge."""
    in_play = NUMBERS_BY_PLAYERS.get(players)
    if in_play is None:
        return
    unseen = [(row, number) for number in range(in_play + 1, COLUMNS + 1) for row in ROWS
              if (row, number) not in cells]
    for cell in unseen:
        cells[cell] = BLOCKED
    if unseen:
        result.notes.append(
            f"{len(unseen)} cell(s) of the columns over {in_play} (not in play with "
            f"{players} players) not seen blocked: blocked, as the game is set up")


def _covered_cells(detections: Detections, board: int, cells: Mapping[tuple[str, int], str],
                   result: ReadState) -> None:
    """Cells the vision saw covered (``data["covered_cells"]``: a hand or an object over
    them) with no token read on them are unknown, not empty: a token there cannot be
    seen; so are cells whose middle differs faintly from the cell round it
    (``data["faint_cells"]``: a token of the cell's own colour may lie there). Cells whose
    state the set-up fixes, or with a token on them, are known."""
    covered = detections.data.get("covered_cells", (None,) * len(detections))[board] or ()
    with_token = {tuple(role["cell"]) for role in result.roles
                  if role and role.get("role") == "token"}
    for row, column in covered:
        key = (ROWS[row], column + 1)
        if key in cells or key in with_token:
            continue
        result.unknown.append({"piece": board, "what": "board cell", "cell": list(key),
                               "why": "covered (a hand or an object over it): a token "
                                      "there cannot be seen"})
    faint = detections.data.get("faint_cells", (None,) * len(detections))[board] or ()
    for row, column in faint:
        key = (ROWS[row], column + 1)
        if key in cells or key in with_token or (row, column) in covered:
            continue
        result.unknown.append({"piece": board, "what": "board cell", "cell": list(key),
                               "why": "its middle differs faintly from the cell round it: "
                                      "a token of the cell's own colour, or none, cannot be "
                                      "told"})


def _players(cells: dict[tuple[str, int], str], players: Sequence[str] | None,
             extra: Mapping[str, Any], result: ReadState) -> dict[str, str]:
    """Token colour → player name, in seat order."""
    given = extra.get("tokens")
    if isinstance(given, Mapping):
        return {str(c): str(p) for c, p in given.items()}
    if players:
        return dict(zip(TOKEN_COLOURS, players, strict=False))
    seen = {c for c in cells.values() if c != BLOCKED}
    full = {n for n in range(1, COLUMNS + 1)
            if all(cells.get((row, n)) == BLOCKED for row in ROWS)}  # unused columns
    count = PLAYERS_BY_NUMBERS.get(COLUMNS - len(full), 0)
    colours = [c for c in TOKEN_COLOURS if c in seen]
    for c in TOKEN_COLOURS:
        if len(colours) >= count:
            break
        if c not in colours:
            colours.append(c)
    colours.sort(key=TOKEN_COLOURS.index)
    result.notes.append("no player names: players are named by their token colour")
    return {c: c for c in colours}


def _cards(detections: Detections, board: int | None, result: ReadState
           ) -> tuple[list[int | None], list[int | None]]:
    """The trick in progress (cards below the ``board`` read, left to right as it reads)
    and, two players, the revealed cards (beside it)."""
    cards = indices(detections, ("catbox_card",))
    to_board = None
    if board is not None:
        unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
        to_board = cv2.getPerspectiveTransform(
            detections.quads[board].astype(np.float32), unit)

    def place(i: int) -> tuple[float, float]:
        centre = frame(detections.quads[i]).centre.reshape(1, 1, 2)
        if to_board is None:
            return float(centre[0, 0, 0]), 2.0
        u, v = cv2.perspectiveTransform(centre, to_board).ravel()
        return float(u), float(v)

    trick: list[int | None] = []
    revealed: list[int | None] = []
    for i in sorted(cards, key=place):
        u, v = place(i)
        beside = v < 1.25 and (u < 0.0 or u > 1.0)  # the trick lies below the board
        out = revealed if beside else trick
        result.roles[i] = {"role": "revealed card" if beside else "trick card",
                           "position": len(out) + 1}
        problem = unsure(detections, i, "card", sure_at=CARD_SURE)
        if to_board is not None and _card_share(detections.quads[i], to_board) < TINY_CARD:
            problem = {"piece": i, "what": "card", "why": (
                "far smaller than a card on the board's table: a mark or a scrap read as "
                "a card, or a card mostly hidden")}
        if detections.data.get("under_hand", (None,) * len(detections))[i]:
            problem = {"piece": i, "what": "card",
                       "why": "partly under a hand: its number cannot be told"}
        label = detections.labels[i]
        if problem is None and not (label is not None and label.isdigit()):
            problem = {"piece": i, "what": "card", "why": f"not a number: {label!r}"}
        if problem is not None:
            result.unknown.append(problem)
            out.append(None)
            continue
        out.append(int(str(label)))
    return trick, revealed
