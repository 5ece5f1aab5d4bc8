"""Rox from a photo: each player's row in order, the face-up scoring cards (RULES.md §3).

A row is a straight line of touching element cards (up to six). Its first card is the
end nearer its player's seat marker; without seat markers, the left end as seen by the
player who reads the row's cards upright. The photo reader gives element cards no up,
so without seat markers a row shorter than six cards that lies clearly off the middle
of all the rows starts at its end farther from it (a player sits at the table's edge
and lays a row from the end nearer their seat); any other row is read by its cards'
centre symbols' up (``data["up"]``) where they show it clearly; else its direction
cannot be seen: it is given the way more of its links hold and its direction is
reported unknown. Fewer or more scoring cards than lie face up (players - 1) are
reported too: one may lie unseen. A row is
given only up to its first unread card: a link is between neighbours, so none is
checked across a card that could not be read. Each card brings
its centre element (label) and its 16 edge symbols counted per element
(``data["edge"]``). The caller is not on the table: the user names them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.games.rox import ELEMENTS, ElementCard
from companion.readers.common import (
    MIN_CONFIDENCE,
    Frame,
    ReadState,
    assign,
    frame,
    indices,
    later_candidates,
    linked_groups,
    names_unseated,
    seat_names,
    seats,
    unsure,
    within,
)
from companion.vision.detections import Detections
from companion.vision.reading import UNSURE
from companion.vision.rox_edges import CENTRE_SURE_AT

TOUCH = (0.8, 1.3)
"""Neighbours in a row lie this many card widths apart along the row…"""
ACROSS = 0.3
"""…and at most this many card heights across it."""
END_REACH = (0.5, 1.3)
END_ANGLE = math.radians(25)
"""A scoring card whose centre lies ``END_REACH`` element-card sides from a row's end
card, within ``END_ANGLE`` of the row's line, is against the row's end: an element card
partly covered (by a hand), its visible strip as narrow as a scoring card, is read
unknown rather than as a scoring card."""

SCORING_SURE = UNSURE
"""A scoring card read with less confidence than the classifier's own sure level
(``vision.reading.UNSURE``, as Nox cards and Nummix tiles) is unknown, not taken as read:
the scoring model's middling scores are mostly wrong (dev 61600-61799 normal, 260
scenes: of located scoring cards read at 0.5-0.8, 2 of 11 right, a 1 read as 2 at 0.64
and 0.75 among them; at 0.8-0.9 6 of 7; 0.9 and over 490 of 491). Photo -> state, dev
61600-61699 and 61800-61899 normal: exact unchanged (169 of 200: a false scoring card
read 5 at 0.55 now left out, 61860; a right 1 at 0.68 now unknown, 61880), readings that
claim to be whole and are wrong 4 -> 2; 61900-61959 hard: exact 24 -> 23 (a right card
at 0.5-0.8 now unknown; at hard 10 of 16 such cards are right)."""

ROW_FULL = 6
OUTER_CLEAR = 0.5
"""A row of fewer than ``ROW_FULL`` cards whose first end lies at least ``OUTER_CLEAR``
card sides farther from the rows' middle (``_rows_middle``) than its last starts there
(``_row_way``). On the unoriented rows read without seat markers of dev 60000-60029,
60300-60329 (normal) and 60500-60529 (hard), rows of 2-5 cards lay 0.5-2.2 sides off
it the right way round but for four (0.16-0.44: three right, one a row missing its
first card) and two rows missing their first cards; six-card rows lay within 0.82 of
it either way, right in about half (their direction cannot be seen)."""


def read(detections: Detections, *, markers: Sequence[Any] = (), profile: Any = None,
         players: Sequence[str] | None = None, caller: str | None = None,
         **_: Any) -> ReadState:
    result = ReadState("rox", {}, roles=[None] * len(detections))
    cards = indices(detections, ("rox_card",))
    bad: set[int] = set()
    edges = detections.data.get("edge", (None,) * len(detections))
    ups = detections.data.get("up", (None,) * len(detections))
    counted = detections.data.get("edge_sure", (None,) * len(detections))
    doubts = detections.data.get("centre_doubt", (None,) * len(detections))
    for i in cards:
        problem = unsure(detections, i, "element card")
        label = detections.labels[i]
        if problem is not None and counted[i] is not None and counted[i] < MIN_CONFIDENCE:
            problem["why"] = _edges_unsure(edges[i], float(counted[i]), detections, i)
        if problem is not None and doubts[i] is not None:
            problem["why"] = (f"centre element read {label!r}, but {doubts[i]}; "
                              + str(problem.get("why", "")))
        if problem is None and label not in ELEMENTS:
            problem = {"piece": i, "what": "element card", "why": f"not an element: {label!r}"}
        if problem is None and not _edge_ok(edges[i]):
            problem = {"piece": i, "what": "element card", "why": "edge symbols not counted"}
        if problem is not None:
            result.unknown.append(problem)
            bad.add(i)
    frames = {i: frame(detections.quads[i]) for i in cards}
    faceless = _centre_unsure(detections, bad)  # the rest show their up by their centre
    oriented = all(detections.oriented[i] for i in cards)
    rows = _rows(frames, cards, oriented=oriented)
    seat_marks = seats(markers, profile, players)
    middle = _rows_middle(rows, frames)  # of all the rows
    names: list[str] = []
    if seat_marks:
        costs = np.array([[min(float(np.linalg.norm(frames[row[0]].centre - s.xy)),
                               float(np.linalg.norm(frames[row[-1]].centre - s.xy)))
                           for s in seat_marks] for row in rows]).reshape(len(rows),
                                                                         len(seat_marks))
        pairs = dict(assign(costs))
        outward = [np.mean([frames[i].centre for i in row], axis=0) - middle for row in rows]
        named = seat_names(pairs, seat_marks, players,
                           [math.atan2(float(v[1]), float(v[0])) for v in outward],
                           "a row (read as without seat markers)", result)
        for r, row in enumerate(rows):
            if r not in named:
                names.append(f"row{r + 1}")
                result.notes.append(f"row {r + 1} has no seat marker")
                continue
            names.append(named[r])
            if r not in pairs:  # its seat is not seen: as without seat markers
                if not oriented:
                    rows[r] = _row_way(row, detections.labels, edges, frames, middle,
                                       named[r], result.unknown,
                                       _face_votes(row, frames, ups, faceless))
                continue
            seat = seat_marks[pairs[r]]
            if (np.linalg.norm(frames[row[-1]].centre - seat.xy)
                    < np.linalg.norm(frames[row[0]].centre - seat.xy)):
                row.reverse()  # the first card is the end nearer the seat
    else:
        rows.sort(key=lambda row: float(np.mean([frames[i].centre[1] for i in row])))
        given = list(players) if players and len(players) >= len(rows) else None
        names = [given[k] if given else f"P{k + 1}" for k in range(len(rows))]
        names_unseated(given, len(rows), "rows", "from the top of the photo down",
                       result.unknown)
        if not oriented:
            rows = [_row_way(row, detections.labels, edges, frames, middle, name,
                             result.unknown, _face_votes(row, frames, ups, faceless))
                    for row, name in zip(rows, names, strict=True)]
        if rows:
            result.notes.append(
                "no seat markers: rows named from the top of the photo down; each row read "
                + ("from its left end as its player sees it" if oriented else
                   "from its end farther from the middle of the rows where a row "
                   "shorter than six cards lies clearly off it, else from its left end "
                   "as the player who reads its cards' centre symbols upright sees it "
                   "where they show it (which end faces its player cannot always be "
                   "seen: lay seat markers, or check the order)"))
    out_rows: dict[str, list[dict[str, Any]]] = {}
    for name, row in zip(names, rows, strict=True):
        out_rows[name] = []
        unread = None
        for pos, i in enumerate(row):
            result.roles[i] = {"role": "row card", "player": name, "position": pos + 1}
            if i in bad and unread is None:
                unread = pos
            if unread is not None:
                continue  # links are checked card to card: none across an unread card
            out_rows[name].append({"centre": detections.labels[i],
                                   "edge": {e: int(n) for e, n in dict(edges[i]).items()}})
        if unread is not None:
            result.notes.append(
                f"{name}'s row is given up to card {unread}: card {unread + 1} could not be "
                f"read, and the links from it on cannot be checked")
        if len(row) > 6:
            result.notes.append(f"{name}'s row has {len(row)} cards")
    order = [s.name for s in seat_marks] if seat_marks else []
    order += [n for n in names if n not in order]
    scoring = []
    shown = indices(detections, ("rox_scoring",))
    for i in shown:
        problem = unsure(detections, i, "scoring card", sure_at=SCORING_SURE)
        beside = _row_beside(frame(detections.quads[i]), rows, frames)
        if problem is None and beside is not None:
            problem = {"piece": i, "what": "scoring card",
                       "why": f"it lies in line with the end of {names[beside]}'s row: an "
                              "element card partly covered, read by its visible strip?"}
        label = detections.labels[i]
        if problem is None and not (label is not None and label.isdigit()
                                    and 1 <= int(label) <= 10):
            problem = {"piece": i, "what": "scoring card", "why": f"not a value: {label!r}"}
        if problem is not None:
            result.unknown.append(problem)
            continue
        scoring.append(int(str(label)))
        result.roles[i] = {"role": "scoring card"}
    if len(shown) != len(order) - 1:
        result.unknown.append({
            "piece": None, "what": "scoring cards",
            "why": f"{len(shown)} scoring card(s) seen, but {len(order)} players play for "
                   f"{len(order) - 1} face up (RULES.md §3): one may lie unseen (under a "
                   "hand, or missed beside another), or a piece was taken for one"})
    state: dict[str, Any] = {"game": "rox", "players": order}
    if caller is None:
        result.unknown.append({"piece": None, "what": "caller", "ask_user": True,
                               "why": "who called Rox is not on the table: name them"})
    elif caller not in order:
        result.unknown.append({"piece": None, "what": "caller", "ask_user": True,
                               "why": f"{caller!r} is none of the players read "
                                      f"({', '.join(order)})"})
    else:
        state["caller"] = caller
    state["scoring_cards"] = sorted(scoring, reverse=True)
    state["rows"] = {p: out_rows.get(p, []) for p in order}
    result.state = state
    return result


def _rows_middle(rows: list[list[int]], frames: dict[int, Frame]) -> npt.NDArray[np.float64]:
    """The middle of the rows' extent: the centre of the box round all their cards' centres
    in the frame of the rows' common axis (each row's first-to-last direction, turned to
    agree with the longest row's, averaged). Rows start at their player's end and run
    as far as they are long, so the mean of the cards' centres leans toward the short
    rows' starts; the box's middle does not."""
    lined = [row for row in rows if len(row) >= 2]
    cards = [i for row in rows for i in row]
    if not cards:
        return np.zeros(2)
    pts = np.array([frames[i].centre for i in cards], np.float64)
    if not lined:
        return np.asarray(pts.mean(axis=0), np.float64)
    longest = max(lined, key=len)
    ref = frames[longest[-1]].centre - frames[longest[0]].centre
    axis = np.zeros(2)
    for row in lined:
        v = frames[row[-1]].centre - frames[row[0]].centre
        v = v / max(float(np.linalg.norm(v)), 1e-9)
        axis += v if float(v @ ref) >= 0 else -v
    axis /= max(float(np.linalg.norm(axis)), 1e-9)
    across = np.array([-axis[1], axis[0]])
    t, u = pts @ axis, pts @ across
    return np.asarray(axis * (t.min() + t.max()) / 2 + across * (u.min() + u.max()) / 2,
                      np.float64)


def _outer_margin(row: list[int], frames: dict[int, Frame], middle: npt.NDArray[np.float64]
                  ) -> float:
    """How much farther from ``middle`` ``row``'s first card lies than its last, in card
    sides (negative: nearer)."""
    first, last = frames[row[0]].centre, frames[row[-1]].centre
    side = float(np.mean([max(frames[i].width, frames[i].height) for i in row]))
    return float(np.linalg.norm(first - middle) - np.linalg.norm(last - middle)) / max(
        side, 1e-9)


def _row_way(row: list[int], labels: Sequence[str | None], edges: Sequence[Any],
             frames: dict[int, Frame], middle: npt.NDArray[np.float64], name: str,
             unknown: list[dict[str, Any]], faces: float = 0.0) -> list[int]:
    """``row`` (left to right in the photo) from its first card, read without seat
    markers or orientation (RULES.md §3: the first card is the end nearer its player's
    seat). A player sits at the table's edge and lays a row from the end nearer their
    seat, so a row shorter than ``ROW_FULL`` cards whose first end lies ``OUTER_CLEAR``
    card sides farther from the rows' middle than its last starts there. Otherwise a
    row whose cards' centre symbols show their up (``faces``, ``_face_votes``, at least
    ``FACES_SURE`` either way) starts at its left end as the player who reads them
    upright sees it (RULES.md §3, without seat markers). Otherwise which end faces its
    player cannot be seen: the row is given the way more of its links hold
    (``_linked_way``), and its direction is reported unknown, so that the check's
    verdict, which depends on it, does not pass as read."""
    if len(row) < 2:
        return row
    margin = _outer_margin(row, frames, middle)
    if len(row) < ROW_FULL and abs(margin) >= OUTER_CLEAR:
        return row if margin > 0 else row[::-1]
    if abs(faces) >= FACES_SURE:
        return row if faces > 0 else row[::-1]
    unknown.append({"piece": None, "what": "row direction", "player": name,
                    "why": f"which end of {name}'s row faces its player cannot be seen (no "
                           "seat marker, and the row lies across the middle of the rows): "
                           "it is given the way more of its links hold; check its order"})
    return _linked_way(row, labels, edges, outer_first=margin > 0)


FACE_VOTE = 0.3
FACES_SURE = 0.3
"""A row's cards whose centre element reads sure (``_centre_unsure``) each vote for the
way their centre symbol shows their up (``vision.rox_faces.face_ups``), at most
``FACE_VOTE`` either way, and the row is read so when the votes add up to ``FACES_SURE``
either way. On the located rows of dev 61000-61059 and 60100-60249 (normal, 610 rows)
and 60700-60759 (hard, 168), grouped by their true player: 489 and 78 rows so decided,
none the wrong way (from 0.2: 555 and 97, none wrong; from 0.1: 595 and 115, one hard
row wrong). Only sure cards voted then; with the cards unknown for their edge symbols
alone too, votes reach ``FACES_SURE`` in 8 more rows on dev 61600+40, 61700+40
(normal) and 61900+40 (hard), 13 more on 61500+40, 61800+40 (normal) and 61940+40
(hard), all the right way (61712: a blurred row's one sure card voted 0.26), and no
photo's exact reading changes (a row with an unknown card is not read whole anyway;
its direction says which end it is given from)."""


def _centre_unsure(detections: Detections, bad: set[int]) -> set[int]:
    """The cards of ``bad`` whose centre element itself is not read sure (the element
    card model's probability under ``rox_edges.CENTRE_SURE_AT``, its symbol's colour
    against it (``data["centre_doubt"]``), or no element): a card
    unknown for its edge symbols alone still shows its up by its centre symbol
    (``_face_votes``)."""
    alternatives = detections.data.get("alternatives", (None,) * len(detections))
    doubts = detections.data.get("centre_doubt", (None,) * len(detections))
    return {i for i in bad if not alternatives[i] or doubts[i] is not None
            or alternatives[i][0][0] != detections.labels[i]
            or float(alternatives[i][0][1]) < CENTRE_SURE_AT}


def _face_votes(row: list[int], frames: dict[int, Frame], ups: Sequence[Any],
                bad: set[int]) -> float:
    """How clearly ``row``'s cards not in ``bad`` show, by their centre symbols'
    up (``ups``), that their player reads the row left to right in the photo (positive)
    or right to left (negative; ``row`` runs from its photo-left card): each card's up
    along the up of a player reading the row so, at most ``FACE_VOTE`` either way, summed."""
    if len(row) < 2:
        return 0.0
    along = frames[row[-1]].centre - frames[row[0]].centre
    along = along / max(float(np.linalg.norm(along)), 1e-9)
    player_up = np.array([along[1], -along[0]])  # up for a reader whose right is ``along``
    return float(sum(np.clip(np.asarray(ups[i], np.float64) @ player_up, -FACE_VOTE, FACE_VOTE)
                     for i in row if i not in bad and ups[i] is not None))


def _row_beside(card: Frame, rows: list[list[int]], frames: dict[int, Frame]) -> int | None:
    """The row whose end ``card`` lies against, in line with it (``END_REACH`` of an
    element card's side from the end card's centre, within ``END_ANGLE`` of the row's
    line), if any. Scoring cards lie apart; a card there is the row's, partly covered."""
    for r, row in enumerate(rows):
        ends = {row[0], row[-1]}
        line = frames[row[-1]].centre - frames[row[0]].centre
        for end in ends:
            e = frames[end]
            offset = card.centre - e.centre
            distance = float(np.linalg.norm(offset))
            side = max(e.width, e.height)
            if not END_REACH[0] * side <= distance <= END_REACH[1] * side:
                continue
            along = abs(float(offset @ line)) / max(float(np.linalg.norm(line)), 1e-9)
            if len(row) == 1 or along >= math.cos(END_ANGLE) * distance:
                return r
    return None


def _linked_way(row: list[int], labels: Sequence[str | None], edges: Sequence[Any],
                *, outer_first: bool = True) -> list[int]:
    """``row`` (left to right in the photo) turned round when more of its links hold
    read from the other end (``rox.link``: a card's most frequent edge element,
    ``ElementCard.most_frequent``, is the next card's centre), or, when as many hold
    both ways, unless ``outer_first``. Every card with an element
    and counted edges votes, sure or not: only the direction is decided here."""
    most: dict[int, str | None] = {}
    for i in row:
        edge = edges[i]
        top = ElementCard(str(labels[i]), tuple(int(edge.get(e, 0)) for e in ELEMENTS)
                          ).most_frequent() if _edge_ok(edge) and edge else ()
        most[i] = top[0] if len(top) == 1 else None
    forward = backward = 0
    for a, b in zip(row, row[1:], strict=False):
        forward += most[a] is not None and most[a] == labels[b]
        backward += most[b] is not None and most[b] == labels[a]
    if forward == backward:
        return row if outer_first else row[::-1]
    return row[::-1] if backward > forward else row


def _edges_unsure(edge: Any, sure: float, detections: Detections, i: int) -> str:
    """Why card ``i`` is unknown when its edge symbols were counted unsure (``sure``,
    ``data["edge_sure"]``): the counts, then the centre element as read. The common
    message gives the card's confidence with the centre element's alternatives, which
    read as if the centre were in doubt."""
    alts = detections.data.get("alternatives", (None,) * len(detections))[i]
    counts = ", ".join(f"{e} {n}" for e, n in dict(edge or {}).items())
    return (f"edge symbols counted unsure ({sure:.2f}: {counts}); centre element "
            f"{detections.labels[i]!r}" + (f" (alternatives: {alts})" if alts else ""))


def _edge_ok(edge: Any) -> bool:
    return isinstance(edge, dict) and all(e in ELEMENTS and isinstance(n, int | np.integer)
                                          for e, n in edge.items())


def _rows(frames: dict[int, Frame], cards: list[int], oriented: bool = True
          ) -> list[list[int]]:
    """Touching cards in straight lines, each left to right as its player reads it.
    Cards whose upright is known (``oriented``) lie side by side along their own width;
    square cards read without an orientation may touch along either axis, and their
    rows run left to right in the photo (a seat marker then decides the first card).
    A card in a row touches cards along one of its axes only (``_one_axis``)."""
    def near(a: int, b: int) -> tuple[int, float, bool] | None:
        """(the axis of ``a``'s frame along which ``b`` lies beside it, how far from
        snug: off one card size along plus off the line across, whether on the axis's
        positive side), or None. Distances are in the two cards' mean size
        (``_pair_frame``)."""
        x, y = _pair_frame(frames[a], frames[b]).local(frames[b].centre)
        if TOUCH[0] <= abs(x) <= TOUCH[1] and abs(y) <= ACROSS:
            return 0, abs(abs(x) - 1.0) + abs(y), x > 0
        if not oriented and TOUCH[0] <= abs(y) <= TOUCH[1] and abs(x) <= ACROSS:
            return 1, abs(abs(y) - 1.0) + abs(x), y > 0
        return None

    sizes = np.array([max(frames[i].width, frames[i].height) for i in cards], np.float64)
    kept = _one_axis(cards, near, maybe=within(
        [frames[i] for i in cards], NEAR_REACH * (sizes[:, None] + sizes[None, :]) / 2))

    def touching(a: int, b: int) -> bool:
        return (a, b) in kept

    rows = []
    for row in linked_groups(cards, touching):
        if oriented:
            right = np.mean([frames[i].right for i in row], axis=0)
        else:
            right = _photo_right([frames[i].centre for i in row])
        rows.append(sorted(row, key=lambda i: float(frames[i].centre @ right)))
    return rows


def _pair_frame(a: Frame, b: Frame) -> Frame:
    """``a``'s frame with each side the mean of ``a``'s and ``b``'s extent along it (``b``'s
    side nearer that direction): in a tilted photo, or with one outline located a little
    small, neighbours differ in size, and a gap measured in the smaller card's own sides
    looks wider than it is."""
    def mean_side(side: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        length = float(np.linalg.norm(side))
        unit = side / max(length, 1e-9)
        other = max(abs(float(b.right @ unit)), abs(float(b.down @ unit)))
        return np.asarray(side * (length + other) / 2 / max(length, 1e-9), np.float64)

    return Frame(a.centre, mean_side(a.right), mean_side(a.down))


NEAR_REACH = TOUCH[1] + ACROSS
"""No card lies beside another (``_rows``' ``near``) further from its centre than this
many of the two cards' mean longer side (``_pair_frame``'s sides are at most that):
only the pairs this close are tested (``common.within``)."""


def _one_axis(cards: list[int],
              near: Callable[[int, int], tuple[int, float, bool] | None], *,
              maybe: npt.NDArray[np.bool_] | None = None) -> set[tuple[int, int]]:
    """The pairs of cards (both ways) that touch in a row: pairs that lie beside each
    other seen from both (``near``), each kept only if it runs along the axis each
    card's earlier links took. Pairs that carry a line on are taken first (one of the
    two cards has a neighbour on its other side along the same axis: a row is straight),
    then the rest, snuggest first. Two rows at a slight angle to each other come within
    a card's reach at one end, and two rows laid side by side touch all along; such
    cards lie beside each other across their rows' axis, and are not linked. ``maybe``
    (cards × cards, by position), when given, says which pairs can lie beside each other
    at all (a looser test on every pair at once: ``common.within``); only those are
    asked."""
    pairs = []
    sides: dict[tuple[int, int], set[bool]] = {}  # (card, axis) -> sides with a neighbour
    for k, a in enumerate(cards):
        for m in later_candidates(k, len(cards), maybe):
            b = cards[m]
            ab, ba = near(a, b), near(b, a)
            if ab is not None and ba is not None:
                pairs.append((ab[1] + ba[1], a, b, ab[0], ba[0]))
                sides.setdefault((a, ab[0]), set()).add(ab[2])
                sides.setdefault((b, ba[0]), set()).add(ba[2])

    def carries_on(pair: tuple[float, int, int, int, int]) -> bool:
        _, a, b, along_a, along_b = pair
        return len(sides[a, along_a]) == 2 or len(sides[b, along_b]) == 2

    axis: dict[int, int] = {}
    kept: set[tuple[int, int]] = set()
    for _, a, b, along_a, along_b in sorted(pairs, key=lambda p: (not carries_on(p), p)):
        if axis.get(a, along_a) == along_a and axis.get(b, along_b) == along_b:
            axis[a], axis[b] = along_a, along_b
            kept |= {(a, b), (b, a)}
    return kept


def _photo_right(centres: list[npt.NDArray[np.float64]]) -> npt.NDArray[np.float64]:
    """The direction along a row of cards at ``centres`` that points right in the photo
    (down, for a row running straight down): the order a row of cards read without an
    orientation is given in, since which end faces its player cannot be seen."""
    pts = np.asarray(centres, np.float64)
    if len(pts) < 2:
        return np.array([1.0, 0.0])
    _, _, vt = np.linalg.svd(pts - pts.mean(axis=0))
    axis = vt[0]
    if axis[0] < -1e-9 or (abs(axis[0]) <= 1e-9 and axis[1] < 0):
        axis = -axis
    return np.asarray(axis, np.float64)
