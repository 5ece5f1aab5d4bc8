"""Contact sheets: a grid of scenes per game, downscaled, for people to look at."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from companion.synth.scene import render_scene
from companion.synth.states import GAMES


def contact_sheet(game: str, *, seeds: range = range(6), difficulty: str | None = None,
                  cols: int = 2, tile: tuple[int, int] = (640, 360)) -> np.ndarray:
    """``len(seeds)`` scenes of ``game`` in a grid (difficulty cycles easy/normal/hard
    when None), each captioned with its verdict on a strip above it."""
    cells = []
    levels = ("easy", "normal", "hard")
    for k, seed in enumerate(seeds):
        level = difficulty or levels[k % 3]
        scene = render_scene(game, seed=seed, difficulty=level)
        img = cv2.resize(scene.image, tile, interpolation=cv2.INTER_AREA)
        verdict = "legal" if scene.verdict["valid"] else "illegal: " + ", ".join(
            scene.verdict["rules"])
        text = f"{game} seed {seed} {level} - {verdict}"
        img = np.vstack([caption_strip(text, tile[0]), img])
        cells.append(img)
    while len(cells) % cols:
        cells.append(np.zeros_like(cells[0]))
    rows = [np.hstack(cells[i:i + cols]) for i in range(0, len(cells), cols)]
    return np.vstack(rows)


def caption_strip(text: str, width: int, height: int = 26) -> np.ndarray:
    """The caption written once, in white on a solid dark strip above the scene (text
    drawn over the picture looked doubled after JPEG)."""
    strip = np.full((height, width, 3), 32, np.uint8)
    cv2.putText(strip, text, (8, height - 8), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255),
                1, cv2.LINE_AA)
    return strip


def write_contact_sheets(folder: Path, games: tuple[str, ...] = GAMES) -> list[Path]:
    """docs/contact_sheets/<game>.jpg for every game (JPEG quality 80, < 400 KB)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for game in games:
        path = folder / f"{game}.jpg"
        cv2.imwrite(str(path), contact_sheet(game), [cv2.IMWRITE_JPEG_QUALITY, 80])
        out.append(path)
    return out


if __name__ == "__main__":
    import sys

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/contact_sheets")
    for p in write_contact_sheets(target):
        print(p, p.stat().st_size // 1024, "KB")
