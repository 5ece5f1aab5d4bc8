"""``companion.synth``: photo-like scenes of the five games with exact ground truth.

``render_piece`` draws one piece's upright face (training crops); ``render_scene`` lays a
real game state on a generated table and photographs it with a simulated camera, and
returns the image with every piece's corners, the state in ``companion check``'s JSON
and the verdict the scene was generated for. See docs/synth.md.
"""

from __future__ import annotations

from companion.synth.pieces import KINDS, PIECE_MM, Look, random_look, render_piece
from companion.synth.scene import PieceTruth, Scene, render_scene
from companion.synth.states import GAMES

__all__ = ["GAMES", "KINDS", "PIECE_MM", "Look", "PieceTruth", "Scene", "random_look",
           "render_piece", "render_scene"]
