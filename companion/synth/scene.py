"""Whole scenes: a game state laid out on a table and photographed by a simulated camera.

Pieces are placed in table millimetres (each with its four upright corners in 3-D, so
standing rack tiles and stacked cards work the same way), projected with the camera's
3×4 matrix and warped onto the frame with OpenCV. An id buffer drawn alongside says how
much of every piece stays visible after stacking and the hand.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from companion.synth import camera as cam
from companion.synth.pieces import (
    CATBOX_ROWS,
    LOOK_POOL,
    PIECE_MM,
    Look,
    _cached_face,
    catbox_cell_rect,
    edge_sequence,
    pooled_look,
    render_piece_rgba,
)
from companion.synth.states import GAMES, GameSetup, catbox_blocked, catbox_board, make_state

THICKNESS_MM = {"nummix_tile": 6.0, "token": 0.9, "rox_card": 0.4, "qwixx_sheet": 0.1,
                "catbox_board": 2.0}
SIZE_BUCKETS = (40, 56, 80, 112, 160, 224, 320, 448, 640)


@dataclass
class PieceTruth:
    """What the camera sees of one piece, in the check contract's notation."""

    kind: str
    label: str
    quad: list[list[float]]  # 4 image corners clockwise from the upright top-left
    visible_fraction: float = 1.0
    covered: bool = False
    edge: dict[str, int] | None = None
    cell: list[Any] | None = None
    owner: str | None = None
    stack: int | None = None
    depth: int | None = None  # 0 = bottom of its stack
    top: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "label": self.label,
                               "quad": [[round(x, 2), round(y, 2)] for x, y in self.quad],
                               "visible_fraction": round(self.visible_fraction, 4),
                               "covered": self.covered}
        for key in ("edge", "cell", "owner", "stack", "depth", "top"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        out.update(self.extra)
        return out


@dataclass
class Scene:
    """One rendered scene and everything that is true about it."""

    game: str
    seed: int
    difficulty: str
    image: np.ndarray
    pieces: list[PieceTruth]
    state: dict[str, Any]
    verdict: dict[str, Any]
    camera: dict[str, Any]
    markers: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        h, w = self.image.shape[:2]
        return {"game": self.game, "seed": self.seed, "difficulty": self.difficulty,
                "width": w, "height": h, "state": self.state, "verdict": self.verdict,
                "pieces": [p.to_json() for p in self.pieces], "markers": self.markers,
                "camera": self.camera}


@dataclass
class Placed:
    """A piece on the table: its four corners in table mm (x, y, z; z < 0 is up),
    clockwise from its upright top-left, and its ground truth."""

    kind: str
    label: str
    corners: np.ndarray
    look: Look
    truth: PieceTruth
    thickness: float = 0.0
    sheet: dict[str, Any] | None = None
    shadow: bool = True
    quad_img: np.ndarray | None = None  # its corners in the (lens-distorted) image
    bottom_img: np.ndarray | None = None  # the corners of its underside, thick pieces


def _rect(cx: float, cy: float, w: float, h: float, angle_deg: float, z: float = 0.0
          ) -> np.ndarray:
    """Corners of a w×h rectangle centred at (cx, cy), its upright top turned by angle."""
    a = math.radians(angle_deg)
    ca, sa = math.cos(a), math.sin(a)
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    rot = local @ np.array([[ca, sa], [-sa, ca]])
    pts = rot + np.array([cx, cy])
    return np.hstack([pts, np.full((4, 1), z)])


class _Layout:
    """Collects placed pieces with a shared look per kind (one deck, one look)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.items: list[Placed] = []
        self.looks: dict[str, Look] = {}
        self.extras: list[np.ndarray] = []  # decoration polygons (racks) drawn under pieces

    def look(self, kind: str) -> Look:
        if kind not in self.looks:
            self.looks[kind] = pooled_look(kind, int(self.rng.integers(LOOK_POOL)))
        return self.looks[kind]

    def add(self, kind: str, label: str, cx: float, cy: float, angle: float, *,
            z: float = 0.0, corners: np.ndarray | None = None, **truth: Any) -> Placed:
        w, h = PIECE_MM[kind]
        thick = THICKNESS_MM.get(kind, 0.3)
        pts = corners if corners is not None else _rect(cx, cy, w, h, angle, z - thick)
        sheet = truth.pop("sheet", None)
        p = Placed(kind, label, pts, self.look(kind), PieceTruth(kind, label, [], **truth),
                   thickness=thick, sheet=sheet)
        if p.truth.edge is not None:  # the 16 symbols clockwise from the top-left corner
            p.truth.extra["edge_sequence"] = edge_sequence(label, p.truth.edge, p.look.variant)
        self.items.append(p)
        return p


# --------------------------------------------------------------------------- game layouts

def _seat_angles(n: int, rng: np.random.Generator) -> list[float]:
    start = rng.uniform(0, 360)
    return [start + 360.0 * i / n for i in range(n)]


def _layout_nox(setup: GameSetup, L: _Layout) -> list[tuple[float, float, float, int]]:
    rng = L.rng
    players = setup.state["players"]
    seats = []
    n = len(players)
    radius = 110 + 45 * n
    for i, (p, ang) in enumerate(zip(players, _seat_angles(n, rng), strict=True)):
        a = math.radians(ang)
        # the kitty lies in front of its player, reading upright for them
        cx, cy = radius * math.cos(a), radius * math.sin(a)
        facing = ang - 90.0  # card tops point to the table centre, bottoms to the player
        stacks = setup.state["kitties"][p]
        gap = rng.uniform(4, 14)
        step = 59 + gap
        ux, uy = math.cos(math.radians(facing)), math.sin(math.radians(facing))
        for s, stack in enumerate(stacks):
            off = (s - (len(stacks) - 1) / 2) * step
            sx, sy = cx + ux * off, cy + uy * off
            for d, card in enumerate(stack):
                top = d == len(stack) - 1
                jx, jy = (rng.normal(0, 3.5, 2) if not top else rng.normal(0, 1.0, 2))
                if not top:  # lower cards peek out at an edge
                    jx += rng.choice([-1, 1]) * rng.uniform(4, 10)
                    jy += rng.choice([-1, 1]) * rng.uniform(3, 12)
                L.add("nox_card", str(card), sx + jx, sy + jy,
                      facing + rng.normal(0, 5 if not top else 2.5), z=-0.3 * d, owner=p,
                      stack=s, depth=d, top=top)
        sx, sy = (radius + 80) * math.cos(a), (radius + 80) * math.sin(a)
        seats.append((sx, sy, facing, 10 + i))
    return seats


def _layout_rox(setup: GameSetup, L: _Layout) -> list[tuple[float, float, float, int]]:
    rng = L.rng
    players = setup.state["players"]
    seats = []
    w = PIECE_MM["rox_card"][0]
    n = len(players)
    for i, p in enumerate(players):
        row = setup.state["rows"][p]
        flip = 180.0 if i % 2 else 0.0
        y = (i - (n - 1) / 2) * (w + rng.uniform(35, 60))
        skew = rng.normal(0, 3)
        gap = rng.uniform(0, 3)
        ux, uy = math.cos(math.radians(flip + skew)), math.sin(math.radians(flip + skew))
        for j, card in enumerate(row):
            off = (j - 2.5) * (w + gap)
            L.add("rox_card", card["centre"], off * ux + rng.normal(0, 0.8),
                  y + off * uy + rng.normal(0, 0.8), flip + skew + rng.normal(0, 1.2),
                  edge=dict(card["edge"]), owner=p, cell=[j])
        seats.append((-ux * 4.2 * w, y - uy * 4.2 * w, flip + 90.0, 10 + i))
    for k, value in enumerate(setup.state["scoring_cards"]):
        # beyond the seat markers at the rows' ends (4.2 w out, 40 mm square): at 4.4 w a
        # marker lay on a scoring card and hid its number
        L.add("rox_scoring", str(value), 5.6 * w, (k - (len(setup.state["scoring_cards"]) - 1)
              / 2) * 75.0, rng.normal(0, 8))
    return seats


def _layout_nummix(setup: GameSetup, L: _Layout) -> list[tuple[float, float, float, int]]:
    rng = L.rng
    grid = [row.split(" ") for row in setup.state["grid"]]
    tw, th = PIECE_MM["nummix_tile"]
    # blocks of rows separated by empty rows become separate grids on the table
    blocks: list[list[int]] = []
    current: list[int] = []
    for r, row in enumerate(grid):
        if all(t == "." for t in row):
            if current:
                blocks.append(current)
                current = []
        else:
            current.append(r)
    if current:
        blocks.append(current)
    separate = rng.random() < 0.6
    # separate grids are packed in shelves about as wide as a 16:9 frame wants, so the
    # play area stays compact (a real table is arranged to be reachable)
    extents = []
    for b in blocks:
        cols = [c for r in b for c, t in enumerate(grid[r]) if t != "."]
        extents.append((min(cols), (max(cols) - min(cols) + 1) * (tw + 1), len(b) * (th + 1)))
    area = sum((w + 40) * (h + 40) for _, w, h in extents)
    shelf_w = max(max(w for _, w, _ in extents), math.sqrt(area * 16 / 9))
    x_cursor, y_cursor, shelf_h = 0.0, 0.0, 0.0
    for b, (c0, bw_, bh_) in zip(blocks, extents, strict=True):
        # a rigid grid is laid out square and turned as a whole below
        angle = rng.normal(0, 8) if separate else 0.0
        gap = rng.uniform(0.2, 1.2)
        if separate:
            # place the block by its rotated bounding box, so separate grids never touch
            # (touching grids would be one construct in the photo, not the stated truth)
            a = math.radians(angle)
            local = np.array([[0, 0], [bw_, 0], [bw_, bh_], [0, bh_]]) - [tw / 2, th / 2]
            turned = local @ np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])
            lo_, hi_ = turned.min(axis=0), turned.max(axis=0)
            rw, rh = hi_ - lo_
            if x_cursor > 0 and x_cursor + rw > shelf_w:
                x_cursor, y_cursor, shelf_h = 0.0, y_cursor + shelf_h + rng.uniform(20, 45), 0.0
            ox = x_cursor - lo_[0] + rng.uniform(0, 15)
            oy = y_cursor - lo_[1] + rng.uniform(0, 10)
            x_cursor += rw + 15 + rng.uniform(25, 55)
            shelf_h = max(shelf_h, rh + 10)
            c0_ = c0
        else:
            ox, oy, c0_ = 0.0, y_cursor, 0
        a = math.radians(angle)
        ca, sa = math.cos(a), math.sin(a)
        for r in b:
            for c, t in enumerate(grid[r]):
                if t == ".":
                    continue
                lx = (c - c0_) * (tw + gap)
                ly = (r - b[0]) * (th + gap)
                x = ox + lx * ca - ly * sa + rng.normal(0, 0.4)
                y = oy + lx * sa + ly * ca + rng.normal(0, 0.4)
                L.add("nummix_tile", t, x, y, angle + rng.normal(0, 1.5), cell=[r, c])
        if not separate:
            y_cursor += len(b) * (th + 1) + th + gap
    if not separate:  # one rigid grid rotated as a whole
        turn = rng.uniform(0, 360)
        pts = np.vstack([p.corners[:, :2] for p in L.items])
        centre = pts.mean(axis=0)
        a = math.radians(turn)
        rot = np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])
        for p in L.items:
            p.corners[:, :2] = (p.corners[:, :2] - centre) @ rot + centre
    # a rack with standing tiles, seen at an angle
    rack = setup.extra.get("rack", [])
    if rack and rng.random() < 0.6:
        pts = np.vstack([p.corners[:, :2] for p in L.items])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        ry = hi[1] + rng.uniform(40, 80)
        rx0 = (lo[0] + hi[0]) / 2 - len(rack) * (tw + 1) / 2
        rack_h, lean = 14.0, math.radians(rng.uniform(25, 45))
        length = len(rack) * (tw + 1) + 20
        base = np.array([[rx0 - 10, ry - 8, 0], [rx0 - 10 + length, ry - 8, 0],
                         [rx0 - 10 + length, ry + 22, 0], [rx0 - 10, ry + 22, 0]])
        top = base.copy()
        top[:, 2] = -rack_h
        L.extras.append(np.vstack([base, top]))
        for k, t in enumerate(rack):
            x0 = rx0 + k * (tw + 1)
            y_back = ry + th * math.sin(lean)
            z_top = -rack_h - th * math.cos(lean)
            # the face is the tile's upper side (it leans back toward +y): seen from
            # above, its top-left is at x0 + tw (a camera never sees it mirrored)
            corners = np.array([[x0 + tw, y_back, z_top], [x0, y_back, z_top],
                                [x0, ry, -rack_h], [x0 + tw, ry, -rack_h]])
            pl = L.add("nummix_tile", t, 0, 0, 0, corners=corners, owner="rack")
            pl.truth.extra["standing"] = True
            pl.thickness = 0.0
            pl.shadow = False
    return []


def _layout_qwixx(setup: GameSetup, L: _Layout) -> list[tuple[float, float, float, int]]:
    rng = L.rng
    sheets = setup.state["sheets"]
    seats = []
    sw, sh = PIECE_MM["qwixx_sheet"]
    n = len(sheets)
    for i, (p, sheet) in enumerate(sheets.items()):
        x = (i - (n - 1) / 2) * (sw + rng.uniform(20, 50))
        y = 130.0
        ang = rng.normal(0, 6)
        L.add("qwixx_sheet", p, x, y, ang, owner=p, sheet=sheet)
        seats.append((x, y + sh / 2 + 60, ang, 10 + i))
        if p == setup.state["play"]["player"]:
            for k, c in enumerate(setup.state["play"]["cards"]):
                L.add("qwixx_card", c, x - 70 + k * 66 + rng.normal(0, 2), y - sh / 2 - 70,
                      ang + rng.normal(0, 5), owner=p, extra={"played": True})
    for k, c in enumerate(setup.extra.get("display", [])):
        L.add("qwixx_card", c, (k - 1.5) * 68 + rng.normal(0, 2), -150 + rng.normal(0, 3),
              rng.normal(0, 4), extra={"display": True})
    return seats


def _layout_catbox(setup: GameSetup, L: _Layout) -> list[tuple[float, float, float, int]]:
    rng = L.rng
    bw, bh = PIECE_MM["catbox_board"]
    angle = rng.normal(0, 4)
    board = L.add("catbox_board", "", 0, 0, angle)
    corners = board.corners
    tokens = setup.extra["tokens"]
    z = corners[0, 2]
    for (colour, number), player in catbox_board(setup.state).items():
        r = CATBOX_ROWS.index(colour)
        x0, y0, x1, y1 = catbox_cell_rect(bw, bh, r, number - 1)
        u, v = (x0 + x1) / 2 / bw + rng.normal(0, 0.004), (y0 + y1) / 2 / bh + rng.normal(0, 0.01)
        top = corners[0] + (corners[1] - corners[0]) * u
        bottom = corners[3] + (corners[2] - corners[3]) * u
        pt = top + (bottom - top) * v
        L.add("token", tokens[player], pt[0], pt[1], rng.uniform(0, 360), z=z, owner=player,
              cell=[colour, number])
    revealed = setup.state.get("revealed", [])
    blocked = {cell: "revealed" for cell in catbox_blocked(revealed)}
    for c in range(CATBOX_NUMBERS_MAX):
        for r in range(4):
            why = "unused" if c + 1 > setup.extra["numbers"] else blocked.get(
                (CATBOX_ROWS[r], c + 1))
            if why is None:
                continue
            # blocked cells (unused columns; two players: cells of revealed cards) carry
            # observed tokens
            x0, y0, x1, y1 = catbox_cell_rect(bw, bh, r, c)
            u, v = (x0 + x1) / 2 / bw, (y0 + y1) / 2 / bh
            top = corners[0] + (corners[1] - corners[0]) * u
            bottom = corners[3] + (corners[2] - corners[3]) * u
            pt = top + (bottom - top) * v
            L.add("token", "observed", pt[0], pt[1], rng.uniform(0, 360), z=z,
                  cell=[CATBOX_ROWS[r], c + 1], extra={"blocked": why})
    for k, number in enumerate(revealed):  # the revealed cards lie face up by the board
        L.add("catbox_card", str(number), -bw / 2 - 50 + rng.normal(0, 3),
              (k - 1) * 70 + rng.normal(0, 3), 90 + rng.normal(0, 6),
              extra={"revealed": True})
    trick = setup.extra["trick"]
    plays = setup.state["plays"]
    for k, idx in enumerate(trick):
        play = plays[idx]
        L.add("catbox_card", str(play["card"]), (k - (len(trick) - 1) / 2) * 70,
              bh / 2 + 80 + rng.normal(0, 5), rng.normal(0, 8), owner=play["player"],
              extra={"declared": play["colour"], "play": idx})
    return []


CATBOX_NUMBERS_MAX = 9
_LAYOUTS = {"nox": _layout_nox, "rox": _layout_rox, "nummix": _layout_nummix,
            "qwixx": _layout_qwixx, "catbox": _layout_catbox}


# --------------------------------------------------------------------------- rendering

def render_scene(game: str, *, seed: int, difficulty: str = "normal", width: int = 1280,
                 height: int = 720, legal: bool | None = None) -> Scene:
    """Render one scene of ``game`` from ``seed`` (the same seed gives the same scene)."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r} (games: {', '.join(GAMES)})")
    fx = cam.effects(difficulty)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), GAMES.index(game)]))
    setup = make_state(game, rng, legal)
    L = _Layout(rng)
    seats = _LAYOUTS[game](setup, L)
    markers_on = bool(rng.random() < 0.5)
    bounds = np.vstack([p.corners[:, :2] for p in L.items])
    marker_mm = 40.0
    marker_items: list[tuple[int, np.ndarray]] = []
    if markers_on:
        pad = rng.uniform(28, 45)  # markers at the play area's corners
        lo, hi = bounds.min(axis=0) - pad, bounds.max(axis=0) + pad
        for k, (x, y) in enumerate([(lo[0], lo[1]), (hi[0], lo[1]), (hi[0], hi[1]),
                                    (lo[0], hi[1])]):
            marker_items.append((k, _rect(x, y, marker_mm, marker_mm, 0.0)))
        for sx, sy, ang, mid in seats:
            marker_items.append((mid, _rect(sx, sy, marker_mm, marker_mm, ang)))
        bounds = np.vstack([bounds] + [c[:, :2] for _, c in marker_items])
    pose, sizes = _frame_pieces(rng, fx, bounds, L.items, width, height)
    k1 = round(float(rng.uniform(-fx.distortion, fx.distortion)), 2) if fx.distortion else 0.0

    def project(pts: np.ndarray) -> np.ndarray:
        """Table mm → pixels of the distorted image (the lens is folded into geometry:
        every piece is warped straight to its distorted corners)."""
        return cam.distort_points(pose.project(pts), k1, width, height)

    # every piece's corners (and underside) in one projection
    stacks = []
    for p in L.items:
        stacks.append(p.corners)
        if p.thickness >= 1.0:
            bottom = p.corners.copy()
            bottom[:, 2] += p.thickness
            stacks.append(bottom)
    projected = project(np.vstack(stacks))
    k = 0
    for p in L.items:
        p.quad_img = projected[k:k + 4]
        k += 4
        if p.thickness >= 1.0:
            p.bottom_img = projected[k:k + 4]
            k += 4

    # the table: a generated texture warped at half resolution (it is smooth) with the
    # lens applied there, then scaled up
    texture_kind = cam.TEXTURES[int(rng.integers(len(cam.TEXTURES)))]
    tex = cam.table_texture_from_bank(texture_kind, rng)
    lo, hi = bounds.min(axis=0), bounds.max(axis=0)
    span = float(max(hi - lo)) * 1.6 + 200
    mm_per_texel = span / tex.shape[0] * rng.uniform(0.6, 1.0)
    centre = (lo + hi) / 2
    A = np.array([[mm_per_texel, 0, centre[0] - span / 2], [0, mm_per_texel,
                                                            centre[1] - span / 2], [0, 0, 1]])
    half = np.array([[0.5, 0, -0.25], [0, 0.5, -0.25], [0, 0, 1]])
    hw, hh = (width + 1) // 2, (height + 1) // 2
    table = cv2.warpPerspective(tex, half @ pose.H @ A, (hw, hh), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REFLECT)
    if k1:
        table = cam.distort(table, k1)

    # soft shadows of everything, cast on the table (quarter resolution)
    shade = np.zeros((height // 4, width // 4), np.float32)
    light_dir = rng.normal(0, 1, 2)
    light_dir = light_dir / (np.linalg.norm(light_dir) + 1e-9)
    casters = [p for p in L.items if p.shadow]
    feet = [p.corners[:, :2] + light_dir * (max(p.thickness, 1.0) + 2.0) * 1.5
            for p in casters] + [extra[:, :2] + light_dir * 10 for extra in L.extras]
    if feet:
        flat = project(np.vstack(feet)) / 4
        k = 0
        for f in feet:
            pts = flat[k:k + len(f)].astype(np.float32)
            k += len(f)
            hull = cv2.convexHull(pts).reshape(-1, 2)
            cv2.fillConvexPoly(shade, np.round(hull * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    shade = cv2.GaussianBlur(shade, (0, 0), 2.5)
    factor = (255.0 - 255.0 * fx.shadow * shade).astype(np.uint8)
    factor = cv2.resize(factor, (hw, hh), interpolation=cv2.INTER_LINEAR)
    table = cv2.multiply(table, cv2.cvtColor(factor, cv2.COLOR_GRAY2BGR), scale=1 / 255)
    image = cv2.resize(table, (width, height), interpolation=cv2.INTER_LINEAR)

    # racks and other furniture
    for extra in L.extras:
        img_pts = project(extra)
        hull = cv2.convexHull(img_pts.astype(np.float32)).astype(np.int32)
        cv2.fillConvexPoly(image, hull, (32, 30, 30), cv2.LINE_AA)
        topface = img_pts[4:].astype(np.int32)
        cv2.fillConvexPoly(image, topface, (48, 46, 44), cv2.LINE_AA)

    # the pieces, bottom to top, with an id buffer for visibility
    ids = np.full((height, width), -1, np.int32)
    areas: list[int] = []
    for idx, p in enumerate(L.items):
        areas.append(_draw_piece(image, ids, idx, p, rng))
    marker_quads = [project(c) for _, c in marker_items]
    for (mid, _), quad in zip(marker_items, marker_quads, strict=True):
        _draw_marker(image, ids, mid, quad)

    # a hand entering the frame
    hand_on = bool(rng.random() < fx.hand)
    if hand_on:
        hand_mask = _draw_hand(image, rng, width, height)
        ids[hand_mask] = -2

    # visibility
    for idx, p in enumerate(L.items):
        assert p.quad_img is not None
        x0, y0, x1, y1 = _bbox(p.quad_img, width, height)
        seen = int(np.count_nonzero(ids[y0:y1, x0:x1] == idx)) if x1 > x0 and y1 > y0 else 0
        frac = seen / areas[idx] if areas[idx] else 0.0
        p.truth.visible_fraction = float(min(1.0, frac))
        p.truth.covered = frac < 0.5
        if hand_on:
            p.truth.extra["under_hand"] = bool(
                x1 > x0 and y1 > y0 and np.any(ids[y0:y1, x0:x1] == -2) and frac < 0.98)

    # light, glare, blur, noise (all in uint8)
    field_, light_params = cam.light_field(rng, fx, width, height)
    img = cv2.multiply(image, field_, scale=1 / 128)
    n_glare = int(rng.integers(0, fx.glare + 1))
    spots = cam.glare(rng, n_glare, width, height)
    if spots is not None:
        img = cv2.add(img, cv2.cvtColor(spots, cv2.COLOR_GRAY2BGR))
    defocus = float(rng.uniform(0, fx.defocus))
    motion = bool(rng.random() < fx.motion)
    motion_len = int(rng.integers(3, 9)) if motion else 0
    motion_angle = float(rng.uniform(0, math.pi))
    sigma = float(rng.uniform(*fx.noise))
    quality = int(rng.integers(fx.jpeg[0], fx.jpeg[1] + 1))
    if defocus > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), defocus)
    if motion_len:
        img = cv2.filter2D(img, -1, cam.motion_kernel(motion_len, motion_angle))
    img, sigma = cam.add_noise(img, rng, sigma)

    pieces = []
    for p in L.items:
        assert p.quad_img is not None
        p.truth.quad = [[float(x), float(y)] for x, y in p.quad_img]
        pieces.append(p.truth)
    markers = []
    for (mid, _), quad in zip(marker_items, marker_quads, strict=True):
        markers.append({"id": mid, "quad": [[round(float(x), 2), round(float(y), 2)]
                                            for x, y in quad]})
    camera = {"tilt_deg": round(pose.tilt, 2), "yaw_deg": round(pose.yaw, 2),
              "roll_deg": round(pose.roll, 2),
              "projection": [[round(float(v), 6) for v in row] for row in pose.P],
              "distortion_k1": k1, "texture": texture_kind, **light_params,
              "glare_spots": n_glare, "hand": hand_on, "defocus_sigma": round(defocus, 3),
              "motion_blur_px": motion_len, "noise_sigma": round(sigma, 3),
              "jpeg_quality": quality, "markers": markers_on, **sizes}
    return Scene(game, int(seed), difficulty, img, pieces, setup.state, setup.verdict, camera,
                 markers)


SIZED_KINDS = ("nox_card", "qwixx_card", "rox_card", "rox_scoring", "nummix_tile",
               "catbox_card")
TILE_HEIGHT_PER_SIDE = 40.0 / 28.0  # tile height needed per pixel of the shortest side


def min_piece_px(difficulty: str, width: int, height: int) -> float:
    """The shortest card/tile side a scene guarantees, scaled from 1280×720 to the frame."""
    return cam.effects(difficulty).min_px * min(width / 1280.0, height / 720.0)


def piece_sizes(pose: cam.Pose, items: list[Placed]) -> tuple[np.ndarray, np.ndarray]:
    """Per flat card/tile: its shortest projected side and its projected upright height
    (mean of its left and right edges), in pixels."""
    flat = [p for p in items if p.kind in SIZED_KINDS and not p.truth.extra.get("standing")]
    if not flat:
        return np.zeros(0), np.zeros(0)
    q = pose.project(np.vstack([p.corners for p in flat])).reshape(-1, 4, 2)
    edges = np.linalg.norm(q - np.roll(q, -1, axis=1), axis=2)  # 01 12 23 30
    return edges.min(axis=1), (edges[:, 1] + edges[:, 3]) / 2


def _frame_pieces(rng: np.random.Generator, fx: cam.Effects, bounds: np.ndarray,
                  items: list[Placed], width: int, height: int
                  ) -> tuple[cam.Pose, dict[str, Any]]:
    """A camera framing the play area (``fx.fill`` of the frame) whose every card and tile
    is at least ``min_px`` wide (tiles ``TILE_HEIGHT_PER_SIDE`` times that high): a random
    pose first; if a piece is too small, the frame is filled more, then other turns and
    gentler tilts are tried (as a user steps closer or turns the phone); the best wins."""
    need = fx.min_px * min(width / 1280.0, height / 720.0)
    is_tile = np.array([p.kind == "nummix_tile" for p in items if p.kind in SIZED_KINDS
                        and not p.truth.extra.get("standing")], bool)

    def score(pose: cam.Pose) -> float:
        short, tall = piece_sizes(pose, items)
        if not len(short):
            return 1.0
        ratio = short.min() / need
        if is_tile.any():
            ratio = min(ratio, float(tall[is_tile].min()) / (need * TILE_HEIGHT_PER_SIDE))
        return float(ratio)

    pose = cam.make_pose(rng, fx, bounds, width, height)
    best, best_score, tries = pose, score(pose), 0
    if best_score < 1.0:
        for tries in range(1, 25):
            tilt = pose.tilt if tries <= 8 else fx.tilt[0] + (pose.tilt - fx.tilt[0]) * (
                1.0 - min(1.0, (tries - 8) / 10))
            cand = cam.pose_for(bounds, width, height, tilt=tilt,
                                yaw=pose.yaw if tries == 1 else float(rng.uniform(0, 360)),
                                roll=pose.roll, fill=fx.fill[1],
                                shift=rng.uniform(-1, 1, size=2))
            sc = score(cand)
            if sc > best_score:
                best, best_score = cand, sc
            if best_score >= 1.0:
                break
    short, tall = piece_sizes(best, items)
    img = best.project(bounds)
    fill = float(max(np.ptp(img[:, 0]) / width, np.ptp(img[:, 1]) / height))
    info: dict[str, Any] = {"fill": round(fill, 3), "framing_tries": tries,
                            "min_piece_px_wanted": round(need, 1)}
    if len(short):
        info["piece_px"] = [round(float(short.min()), 1), round(float(short.max()), 1)]
        if is_tile.any():
            info["tile_height_px"] = [round(float(tall[is_tile].min()), 1),
                                      round(float(tall[is_tile].max()), 1)]
    return best, info


def _bbox(quad: np.ndarray, width: int, height: int) -> tuple[int, int, int, int]:
    x0 = max(0, int(math.floor(quad[:, 0].min())) - 1)
    y0 = max(0, int(math.floor(quad[:, 1].min())) - 1)
    x1 = min(width, int(math.ceil(quad[:, 0].max())) + 2)
    y1 = min(height, int(math.ceil(quad[:, 1].max())) + 2)
    return x0, y0, x1, y1


def _face_height(quad: np.ndarray) -> int:
    side = max(np.linalg.norm(quad[3] - quad[0]), np.linalg.norm(quad[2] - quad[1]))
    want = side * 1.3
    for b in SIZE_BUCKETS:
        if b >= want:
            return b
    return SIZE_BUCKETS[-1]


def _draw_piece(image: np.ndarray, ids: np.ndarray, idx: int, p: Placed,
                rng: np.random.Generator) -> int:
    """Warp one piece onto the frame (with its side if it is thick), only over its
    bounding box; returns its area."""
    height, width = image.shape[:2]
    quad = p.quad_img
    assert quad is not None
    x0, y0, x1, y1 = _bbox(quad, width, height)
    if p.bottom_img is not None:  # the piece's side, seen below its top face
        both = np.vstack([p.bottom_img, quad]).astype(np.float32)
        hull = cv2.convexHull(both).reshape(-1, 2)
        side_colour = _side_colour(p)
        cv2.fillConvexPoly(image, np.round(hull * 16).astype(np.int32), side_colour,
                           cv2.LINE_AA, 4)
        bx0, by0, bx1, by1 = _bbox(hull, width, height)
        if bx1 > bx0 and by1 > by0:
            region = ids[by0:by1, bx0:bx1]
            side_mask = np.zeros(region.shape, np.uint8)
            cv2.fillConvexPoly(side_mask, np.round(hull - [bx0, by0]).astype(np.int32), 1)
            region[side_mask > 0] = -3
    if x1 <= x0 or y1 <= y0:
        return 0
    height_px = _face_height(quad)
    if p.kind in ("qwixx_sheet", "catbox_board"):
        height_px = min(height_px, 320)  # big flat pieces: enough detail, far cheaper
    if p.sheet is not None:
        marks: list[dict[str, Any]] = []
        face, alpha = render_piece_rgba(p.kind, p.label, rng=rng, look=p.look,
                                        height_px=height_px, edge=p.truth.edge, sheet=p.sheet,
                                        marks=marks)
        p.truth.extra["marks"] = marks
        bgra = np.dstack([face, alpha])
        mean_alpha = float(alpha.mean())
    else:
        edge_key = tuple(sorted(p.truth.edge.items())) if p.truth.edge else ()
        bgra, mean_alpha = _face_bgra(p.kind, p.label, edge_key, p.look, height_px)
    fh, fw = bgra.shape[:2]
    src = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
    dst = (quad - np.array([x0, y0])).astype(np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    both = cv2.warpPerspective(bgra, M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    a = both[:, :, 3]
    _blend(image[y0:y1, x0:x1], both[:, :, :3], a)
    inside = a > 127
    ids[y0:y1, x0:x1][inside] = idx
    # area of the whole face even where it leaves the frame
    full = abs(cv2.contourArea(quad.astype(np.float32)))
    clipped = int(np.count_nonzero(inside))
    return max(clipped, 1) if full < 1 else int(max(full * mean_alpha / 255.0, 1))


def _blend(roi: np.ndarray, top: np.ndarray, alpha: np.ndarray) -> None:
    """roi ← top over roi with 8-bit alpha, in integers (exact /255 rounding)."""
    a = alpha.astype(np.uint16)[:, :, None]
    mix = top.astype(np.uint16) * a + roi.astype(np.uint16) * (255 - a) + 128
    roi[:] = ((mix + (mix >> 8)) >> 8).astype(np.uint8)


def _side_colour(p: Placed) -> tuple[int, int, int]:
    """The colour of a thick piece's side: tiles ivory-grey, tokens their darkened face."""
    if p.kind == "token":
        return _token_side(p.label, p.look)
    return (150, 165, 175) if p.kind == "nummix_tile" else (60, 60, 60)


@functools.lru_cache(maxsize=256)
def _token_side(label: str, look: Look) -> tuple[int, int, int]:
    face, _ = _cached_face("token", label, (), look, 40)
    m = face.reshape(-1, 3).mean(axis=0) * 0.6
    return int(m[0]), int(m[1]), int(m[2])


@functools.lru_cache(maxsize=16384)
def _face_bgra(kind: str, label: str, edge_key: tuple[tuple[str, int], ...], look: Look,
               height_px: int) -> tuple[np.ndarray, float]:
    """A cached face with its alpha as one BGRA image (one warp per piece) and the mean
    alpha; faces are small (a 56 px tile is 13 KB), so a long run keeps them all."""
    face, alpha = _cached_face(kind, label, edge_key, look, height_px)
    out = np.dstack([face, alpha])
    out.setflags(write=False)
    return out, float(alpha.mean())


def _draw_marker(image: np.ndarray, ids: np.ndarray, mid: int, quad: np.ndarray) -> None:
    """An ArUco marker (DICT_4X4_50) on a white card, as calibration/ prints them."""
    height, width = image.shape[:2]
    x0, y0, x1, y1 = _bbox(quad, width, height)
    if x1 <= x0 or y1 <= y0:
        return
    marker = _marker_image(mid)
    fh, fw = marker.shape[:2]
    src = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
    M = cv2.getPerspectiveTransform(src, (quad - [x0, y0]).astype(np.float32))
    both = cv2.warpPerspective(marker, M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    _blend(image[y0:y1, x0:x1], both[:, :, :3], both[:, :, 3])
    ids[y0:y1, x0:x1][both[:, :, 3] > 127] = -4


_MARKERS: dict[int, np.ndarray] = {}


def _marker_image(mid: int) -> np.ndarray:
    if mid not in _MARKERS:
        d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
        m = cv2.aruco.generateImageMarker(d, mid, 120)
        m = cv2.copyMakeBorder(m, 30, 30, 30, 30, cv2.BORDER_CONSTANT, value=255)
        _MARKERS[mid] = cv2.cvtColor(m, cv2.COLOR_GRAY2BGRA)  # alpha 255: the card
    return _MARKERS[mid]


# skin tones (RGB) from very light to very dark; a hand takes a random blend of two
# neighbours, so tones vary continuously
SKIN_RGB = ((255, 224, 200), (241, 194, 167), (224, 172, 135), (198, 134, 98),
            (160, 104, 72), (120, 76, 52), (88, 56, 40))
SLEEVES_BGR = ((40, 40, 44), (120, 70, 30), (60, 60, 150), (200, 200, 200), (40, 90, 40),
               (150, 120, 90))


def _draw_hand(image: np.ndarray, rng: np.random.Generator, width: int, height: int
               ) -> np.ndarray:
    """A hand entering from an edge (palm, tapered fingers, thumb, sometimes a sleeve) in
    a random skin tone, rounded by shading, lit from one side, with a faint skin texture,
    a soft edge and a soft shadow on the table; returns the mask of what it hides.
    Shapes are drawn at a quarter of the resolution and only the hand's box is blended."""
    q = 4
    sw, sh = width // q, height // q
    mask = np.zeros((sh, sw), np.uint8)
    sleeve = np.zeros((sh, sw), np.uint8)
    edge = int(rng.integers(4))
    t = rng.uniform(0.2, 0.8)
    s = min(sw, sh) * rng.uniform(0.18, 0.3)
    entry = [(t * sw, -s * 0.2), (sw + s * 0.2, t * sh), (t * sw, sh + s * 0.2),
             (-s * 0.2, t * sh)][edge]
    inward = [(0, 1), (-1, 0), (0, -1), (1, 0)][edge]
    ang = math.atan2(inward[1], inward[0]) + rng.normal(0, 0.35)
    d = np.array([math.cos(ang), math.sin(ang)])
    n = np.array([-d[1], d[0]]) * (1 if rng.random() < 0.5 else -1)  # left or right hand
    palm = np.array(entry) + d * s * 0.9

    def P(v: np.ndarray) -> tuple[int, int]:
        return int(v[0] * 16), int(v[1] * 16)

    cv2.ellipse(mask, P(palm), (int(s * 0.72 * 16), int(s * 0.55 * 16)),
                math.degrees(ang), 0, 360, 255, -1, cv2.LINE_AA, 4)
    arm_end = np.array(entry) - d * s * 1.5
    cv2.line(mask, P(arm_end), P(palm - d * s * 0.3), 255, max(1, int(s * 0.8)), cv2.LINE_AA, 4)
    if rng.random() < 0.6:  # a sleeve over the forearm
        cv2.line(sleeve, P(arm_end), P(np.array(entry) + d * s * rng.uniform(-0.1, 0.3)), 255,
                 max(1, int(s * 0.95)), cv2.LINE_AA, 4)
    spread = rng.uniform(0.02, 0.12)
    for k, length in enumerate((0.62, 0.72, 0.68, 0.52)):
        base = palm + d * s * 0.45 + n * s * (k - 1.5) * 0.26
        tip = base + (d + n * (k - 1.5) * spread) * s * length * rng.uniform(0.8, 1.05)
        wide = max(2, int(s * 0.2))
        cv2.line(mask, P(base), P(base + (tip - base) * 0.5), 255, wide, cv2.LINE_AA, 4)
        cv2.line(mask, P(base + (tip - base) * 0.5), P(tip), 255, max(2, int(wide * 0.85)),
                 cv2.LINE_AA, 4)
        cv2.circle(mask, P(tip), int(wide * 0.42 * 16), 255, -1, cv2.LINE_AA, 4)
    thumb = palm + n * s * 0.5 - d * s * 0.1
    tip = thumb + (d * 0.45 + n * 0.55) * s * 0.62
    cv2.line(mask, P(thumb), P(tip), 255, max(2, int(s * 0.22)), cv2.LINE_AA, 4)
    cv2.circle(mask, P(tip), int(s * 0.1 * 16), 255, -1, cv2.LINE_AA, 4)
    mask = np.maximum(mask, sleeve)

    # the box the hand and its shadow cover, at quarter and full resolution
    shift = (int(s * 0.15), int(s * 0.1))
    ys, xs = np.nonzero(mask)
    if not len(xs):
        return np.zeros((height, width), bool)
    pad = int(s * 0.5) + 4
    bx0, by0 = max(0, xs.min() - pad), max(0, ys.min() - pad)
    bx1, by1 = min(sw, xs.max() + pad + shift[1]), min(sh, ys.max() + pad + shift[0])
    m = mask[by0:by1, bx0:bx1].astype(np.float32) / 255.0
    m = cv2.GaussianBlur(m, (0, 0), 0.6)  # a soft edge
    slv = sleeve[by0:by1, bx0:bx1].astype(np.float32) / 255.0
    # rounded: darker towards the outline; lit from one side; a faint blotchy texture
    depth = cv2.GaussianBlur(m, (0, 0), max(1.0, s * 0.14))
    lx, ly = rng.normal(0, 1, 2)
    hh, ww = m.shape
    yy, xx = np.mgrid[0:hh, 0:ww].astype(np.float32)
    side = ((xx - ww / 2) * lx + (yy - hh / 2) * ly) / (math.hypot(lx, ly) * max(hh, ww) + 1e-6)
    tex = cv2.resize(rng.standard_normal((max(2, hh // 6), max(2, ww // 6))).astype(
        np.float32), (ww, hh), interpolation=cv2.INTER_CUBIC)
    shade = (0.62 + 0.42 * np.sqrt(np.clip(depth, 0, 1))) * (1.0 + 0.22 * side) + 0.025 * tex
    k = rng.uniform(0, len(SKIN_RGB) - 1)
    lo_, frac = int(k), k - int(k)
    rgb = np.array(SKIN_RGB[lo_], np.float32) * (1 - frac) + np.array(
        SKIN_RGB[min(lo_ + 1, len(SKIN_RGB) - 1)], np.float32) * frac
    skin = rgb[::-1] * rng.uniform(0.94, 1.06, 3)
    cloth = np.array(SLEEVES_BGR[int(rng.integers(len(SLEEVES_BGR)))], np.float32)
    colour = (skin[None, None, :] * (1 - slv[:, :, None]) + cloth[None, None, :]
              * slv[:, :, None]) * shade[:, :, None]
    moved = np.zeros_like(m)
    moved[shift[0]:, shift[1]:] = m[:hh - shift[0], :ww - shift[1]]
    shadow = cv2.GaussianBlur(moved, (0, 0), max(1.0, s * 0.12))
    X0, Y0 = bx0 * q, by0 * q
    X1, Y1 = min(width, bx1 * q), min(height, by1 * q)
    up = (X1 - X0, Y1 - Y0)
    soft = cv2.resize(m, up, interpolation=cv2.INTER_LINEAR)
    keep = (1.0 - soft) * (1.0 - 0.45 * cv2.resize(shadow, up, interpolation=cv2.INTER_LINEAR))
    paint = cv2.resize(colour, up, interpolation=cv2.INTER_LINEAR) * soft[:, :, None]
    roi = image[Y0:Y1, X0:X1]
    out = roi.astype(np.float32) * keep[:, :, None] + paint
    roi[:] = np.clip(out, 0, 255).astype(np.uint8)
    full = np.zeros((height, width), bool)
    full[Y0:Y1, X0:X1] = soft > 0.5
    return full
