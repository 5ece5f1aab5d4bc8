"""The Cat in the Box research board as ``classify`` reads it: turned upright and
fitted to its printed cells, the tokens the circle search missed found in its cells'
middles, and doubtful tokens (a circle on an empty cell, on the gap between cells or a
shadow) dropped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.detections import (
    Detections,
    rectify,
    rotate_quad,
    same_corner_order,
)
from companion.vision.reading import (
    Image,
)

if TYPE_CHECKING:  # locate imports this module: imported where used
    from companion.vision.locate import BoardView

UPRIGHT_VIEWS = "_upright_views"
"""Internal ``data`` field while a photo is read: each research board's rectified view
(``locate.BoardView``) as ``boards_upright`` made it for its fitted quad, handed on to
the token steps (``largest_board_view``) rather than warped again. Not in the result."""

BLOCKED = "observed"
"""The grey token that blocks a cell (``companion.readers.catbox``)."""
BOARD_ROWS = (0.28, 0.87)
"""Heights (shares of the board, top to bottom) of the middle of its first (red) and
last (green) row of cells, as companion.readers.catbox lays the grid out."""


def boards_upright(balanced: Image, detections: Detections) -> Detections:
    """Each research board turned upright and fitted to its cells (``orient_board``, from
    the locator's other outlines too), the tokens on it outlined at a token's size on
    the fitted board (the circle search's radius can be a cell's rounded outline's: dev
    61700, an outline 1.6 times the token's), and the tokens the circle search missed
    found in its cells' middles (``locate.tokens_in_cells``), added unread. A board whose
    print runs past an end of its fitted grid (``locate.PRINT_PAST_END``: no fit reached
    its cells) is marked ``data["grid_off"]``: its tokens' cells cannot be told."""
    boards = [i for i in detections if detections.kinds[i] == "catbox_board"]
    if not boards:
        return detections
    from companion.vision.locate import (
        PRINT_PAST_END,
        board_view,
        print_past_ends,
        token_squares,
        tokens_in_cells,
    )

    quads = detections.quads.copy()
    oriented = list(detections.oriented)
    confidences = detections.confidences.astype(np.float32).copy()
    others = detections.data.get("other_outlines") or ((),) * len(detections)
    tokens = [i for i in detections if detections.kinds[i] == "token"]
    more: list[npt.NDArray[np.float32]] = []
    grid_off: list[bool | None] = [None] * len(detections)
    views: list[BoardView | None] = [None] * len(detections)
    for i in boards:
        quads[i], sure = orient_board(balanced, quads[i], starts=others[i])
        grid_off[i] = max(print_past_ends(balanced, quads[i])) >= PRINT_PAST_END
        oriented[i] = True
        confidences[i] = max(float(confidences[i]), sure)
        on_board = [j for j in tokens if cv2.pointPolygonTest(
            quads[i], tuple(float(v) for v in quads[j].mean(axis=0)), False) >= 0]
        if on_board:  # a token's size from the fitted board (``locate.token_squares``)
            quads[on_board] = token_squares(quads[i], quads[on_board].mean(axis=1))
        views[i] = board_view(balanced, quads[i])
        more += tokens_in_cells(views[i], [quads[j] for j in tokens] + more)
    upright = detections.with_fields(quads=quads, oriented=tuple(oriented),
                                     confidences=confidences,
                                     data={**detections.data, "grid_off": tuple(grid_off),
                                           UPRIGHT_VIEWS: tuple(views)})
    if not more:
        return upright
    return Detections.concat([upright, Detections(
        np.asarray(more, np.float32), ("token",) * len(more),
        confidences=np.ones(len(more), np.float32))])


TOKEN_DOUBT = 0.9
TOKEN_DOUBT_CONTRAST = 40.0
"""A token read less surely than TOKEN_DOUBT whose middle differs from the ring around
it by less than TOKEN_DOUBT_CONTRAST (Lab) is no token: a circle the search found on an
empty cell's rounded outline or a shadow. Rendered scenes 61600-61639: of the tokens
read under 0.9 on the board, the 9 true ones (hard) differed by 42 or more; 13 of the
14 that were no token (normal and hard) by 37 or less. A token whose cell's middle
differs by that much is kept too: seen at a slant, a token's circle can lie off its
middle, and its own contrast fall short (dev 61314 hard: two red tokens on yellow
cells read at 0.82 and 0.90, their cells' middles 116 and 119)."""


ACROSS_GAP = 0.15
EMPTY_MIDDLE = 10.0
"""A token more than ACROSS_GAP cells off its cell's middle along both the columns and
the rows, whose cell's middle differs from the ring around it by less than
EMPTY_MIDDLE (Lab: the cell is empty), is no token: the circle search's find where
four cells' rounded corners meet, read as an observed token, surely. Dev 61804, 61812,
61119 normal: 0.25-0.29 cells off both ways, their cells' middles 0.3-1.5; dev
61600-61639 normal and hard, boards on their cells: no true token 0.2 off both ways,
their cells' middles 13.6 or more."""


def without_doubtful_tokens(read: Detections, view: BoardView | None) -> Detections:
    """Without the doubtful tokens on the research board seen in ``view``
    (``TOKEN_DOUBT``) and the circles on the gaps between its cells (``ACROSS_GAP``)."""
    tokens = [i for i in read if read.kinds[i] == "token"]
    if view is None or not tokens:
        return read
    from companion.vision.locate import cells_under, token_contrasts

    centres = read.quads[tokens].mean(axis=1)
    places = dict(zip(tokens, cells_under(view, centres), strict=True))
    drop = {i for i, place in places.items()
            if place is not None and min(abs(place[0]), abs(place[1])) > ACROSS_GAP
            and place[2] < EMPTY_MIDDLE}
    doubtful = [i for i in tokens if float(read.confidences[i]) < TOKEN_DOUBT]
    if doubtful:
        contrasts = token_contrasts(view, read.quads[doubtful].mean(axis=1))
        cell_middles = [place[2] if place else 0.0 for place in map(places.get, doubtful)]
        drop |= {i for i, c, m in zip(doubtful, contrasts, cell_middles, strict=True)
                 if max(c, m) < TOKEN_DOUBT_CONTRAST}
    return read.select([i for i in read if i not in drop]) if drop else read


NOT_GREY = 10.0
SURE_TOKEN = 0.95
"""A token read "observed" less surely than SURE_TOKEN whose middle's colour (Lab a*,
b*) lies more than NOT_GREY from the median of the photo's sure observed tokens' (three
or more) is no observed token: it takes the colour of the sure tokens (read at
SURE_TOKEN or more) nearest its own, or, nearest the observed ones still (no sure token
of its colour), the token model's likeliest other colour. Dev 61300-61339 and
61600-61639 hard: 688 true observed tokens within 7.1 of their photo's; blue tokens
read observed (0.53-0.92) 13 to 49 off (bluer), red ones 40 (redder; dev 61337 has no
sure red token, and the model's next guess for them is blue: wrong still)."""


NOT_NEUTRAL = 26.0
NEUTRAL_AB = (128.0, 128.0)
"""With fewer than three sure observed tokens to compare with (five players block no
column), a doubted "observed" token is held to grey itself: its colour more than
NOT_NEUTRAL from neutral (Lab a*, b* ``NEUTRAL_AB`` in the white-balanced photo) is no
observed token, and takes the token model's likeliest other colour (grey alone says
nothing of which colour: a purple token lies nearer blue than grey). Dev 60000-60039
normal and 61100-61129 hard: 632 true observed tokens at most 21.6 from neutral, the
players' tokens at least 30.9; a purple token read observed at 0.88 lay 61 off (dev
60006), a blue one at 0.92 34 off (60435)."""
SURE_NOT_NEUTRAL = 35.0
UNSURE_TOKEN = 0.4
"""A token read "observed" at SURE_TOKEN or more whose colour lies more than
SURE_NOT_NEUTRAL from neutral is no grey token either, but which player's it is the
colour alone does not tell surely (a purple token in glare, pinkish: dev 61938 hard,
read observed at 0.99, 43.6 off, whose model's next guess, blue, is wrong too): it is
read no surer than UNSURE_TOKEN (under the readers' bar), so the reader reports it
unknown. True observed tokens at most 21.6 off (``NOT_NEUTRAL``)."""


def observed_by_colour(read: Detections, view: BoardView | None) -> Detections:
    """Tokens read "observed" in a player's colour relabelled (``NOT_GREY``, or
    ``NOT_NEUTRAL`` with too few sure observed tokens): the token model takes a blue
    token in shade or a red one in glare for the grey observed one, which blocks the
    cell. ``view`` is the board the tokens lie on."""
    tokens = [i for i in read if read.kinds[i] == "token" and read.labels[i] is not None]
    observed = [i for i in tokens if read.labels[i] == BLOCKED]
    doubted = [i for i in observed if float(read.confidences[i]) < SURE_TOKEN]
    if view is None or not observed:
        return read
    from companion.vision.locate import token_colours

    colours = dict(zip(tokens, token_colours(view, read.quads[tokens].mean(axis=1)),
                       strict=True))
    read = _sure_observed_not_grey(read, observed, colours)
    if not doubted:
        return read
    sure: dict[str, list[npt.NDArray[np.float64]]] = {}
    for i in tokens:
        colour = colours[i]
        if float(read.confidences[i]) >= SURE_TOKEN and colour is not None:
            sure.setdefault(str(read.labels[i]), []).append(colour[1:])
    usual = {label: np.median(found, axis=0) for label, found in sure.items()}
    grey_itself = len(sure.get(BLOCKED, [])) < 3  # too few sure observed to compare with
    if grey_itself:
        usual[BLOCKED] = np.float64(NEUTRAL_AB)
    alternatives = read.data.get("alternatives", ((),) * len(read))
    labels = list(read.labels)
    for i in doubted:
        colour = colours[i]
        if colour is None:
            continue
        off = {label: _ab_distance(colour, ab) for label, ab in usual.items()}
        if off[BLOCKED] <= (NOT_NEUTRAL if grey_itself else NOT_GREY):
            continue
        nearest = min(off, key=off.__getitem__)
        if nearest == BLOCKED or grey_itself:  # no sure colour to go by: the model's next
            nearest = next((label for label, _ in alternatives[i] if label != BLOCKED),
                           BLOCKED)
        labels[i] = nearest
    return read.with_fields(labels=tuple(labels))


def _sure_observed_not_grey(read: Detections, observed: Sequence[int],
                            colours: Mapping[int, npt.NDArray[np.float64] | None]
                            ) -> Detections:
    """``read`` with each token read "observed" at ``SURE_TOKEN`` or more whose colour
    (``colours``: Lab) lies over ``SURE_NOT_NEUTRAL`` from neutral read no surer than
    ``UNSURE_TOKEN``: it is not grey, and its player's colour cannot be told surely."""
    confidences = read.confidences.copy()
    for i in observed:
        colour = colours[i]
        if (float(confidences[i]) >= SURE_TOKEN and colour is not None
                and _ab_distance(colour, NEUTRAL_AB) > SURE_NOT_NEUTRAL):
            confidences[i] = min(float(confidences[i]), UNSURE_TOKEN)
    return read.with_fields(confidences=confidences)


def _ab_distance(colour: npt.NDArray[np.float64], ab: npt.ArrayLike) -> float:
    """How far a token's Lab ``colour`` lies from the colour ``ab`` (a*, b*) in chroma."""
    return float(np.hypot(*(colour[1:] - np.asarray(ab, np.float64))))


def with_covered_cells(read: Detections, view: BoardView | None) -> Detections:
    """The largest board's ``data["covered_cells"]``: its (row, column) cells, 0-based,
    that a hand or an object covers (``locate.covered_cells``), for the reader to report
    a cell it cannot see as unknown rather than empty; and its ``data["faint_cells"]``
    (``locate.faint_cells``): cells whose middle may hold a token of their own colour.
    ``view`` is that board's."""
    board = largest_board(read)
    if view is None or board is None:
        return read
    from companion.vision.locate import covered_cells, faint_cells

    covered: list[object] = list(read.data.get("covered_cells", (None,) * len(read)))
    covered[board] = tuple(covered_cells(view))
    tokens = [i for i in read if read.kinds[i] == "token"]
    faint: list[object] = [None] * len(read)
    faint[board] = tuple(faint_cells(view, read.quads[tokens].mean(axis=1)
                                     if tokens else np.zeros((0, 2), np.float32)))
    return read.with_fields(data={**read.data, "covered_cells": tuple(covered),
                                  "faint_cells": tuple(faint)})


def largest_board(read: Detections) -> int | None:
    """The index of the photo's largest research board, the one that is read (a second,
    smaller one is a board in the background), or None without a board."""
    boards = [i for i in read if read.kinds[i] == "catbox_board"]
    if not boards:
        return None
    return max(boards, key=lambda i: abs(cv2.contourArea(read.quads[i])))


def largest_board_view(read: Detections, balanced: Image) -> BoardView | None:
    """The rectified view of the largest research board (``largest_board``), or None
    without a board; made once and shared by the token steps: the one ``boards_upright``
    made (``UPRIGHT_VIEWS``) while the board's quad is still the one it was made for."""
    from companion.vision.locate import board_view, same_board_view

    board = largest_board(read)
    if board is None:
        return None
    made = read.data.get(UPRIGHT_VIEWS, (None,) * len(read))[board]
    if made is not None and same_board_view(made, read.quads[board]):
        return made
    return board_view(balanced, read.quads[board])


def orient_board(balanced: Image, quad: npt.NDArray[np.float32], *,
                 starts: Sequence[npt.NDArray[np.float32]] = ()
                 ) -> tuple[npt.NDArray[np.float32], float]:
    """The research board's quad starting at its upright top-left (a long edge first,
    the red row at the top, the green one at the bottom), and how sure that is (0.5 to
    1, from how much redder the top row is than the bottom one). All four turns are
    tried: seen at a slant, the board's long side may look the shorter. The quad is then
    fitted to the board's printed cells (``locate.fit_board_to_cells``), from it and
    from the other outlines the locator offers (``starts``, corners in any order)."""
    best: tuple[float, npt.NDArray[np.float32]] | None = None
    for turn in range(4):
        q = rotate_quad(np.asarray(quad, np.float32).reshape(4, 2), turn)
        view = cv2.cvtColor(rectify(balanced, q, size=(120, 60)), cv2.COLOR_BGR2LAB)
        redness = view[..., 1].astype(np.float32)  # Lab a*: red high, green low
        top, bottom = (float(np.median(redness[int(h * 60) - 3:int(h * 60) + 3, 6:114]))
                       for h in BOARD_ROWS)
        if best is None or top - bottom > best[0]:
            best = (top - bottom, q)
    assert best is not None
    from companion.vision.locate import fit_board_to_cells

    others = tuple(same_corner_order(start, best[1]) for start in starts)
    return (fit_board_to_cells(balanced, best[1], starts=others),
            float(min(1.0, max(0.5, 0.5 + best[0] / 40))))
