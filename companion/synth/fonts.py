"""Fonts for rendered artwork: a fixed list of TrueType files that installed packages carry.

Looked up without importing anything heavy: Debian's fonts-dejavu-core and
fonts-dejavu-extra (installed by the Makefile), matplotlib's bundled STIX and Computer
Modern files (matplotlib is a dependency), and Pillow's own default font. So a reader
trained on these scenes does not learn one typeface. The list is fixed, not "whatever is
on the machine", because the same seed must draw the same scene on every machine.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from PIL import ImageFont

# Bold or heavy faces only: printed numbers on cards and tiles are bold.
_WANTED = (
    "DejaVuSans-Bold.ttf", "DejaVuSansCondensed-Bold.ttf", "DejaVuSerif-Bold.ttf",
    "DejaVuSansMono-Bold.ttf", "DejaVuSerifCondensed-Bold.ttf", "DejaVuSans.ttf",
    "STIXGeneralBol.ttf", "cmb10.ttf", "cmss10.ttf",
)
_SYSTEM_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"))
DEFAULT = "<pillow-default>"


@functools.cache
def font_paths() -> tuple[str, ...]:
    """Every usable font file, deduplicated by file name, in a fixed order; the Pillow
    default font (``DEFAULT``) is always last, so the list is never empty."""
    found: dict[str, str] = {}
    roots = list(_SYSTEM_DIRS)
    spec = importlib.util.find_spec("matplotlib")
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            roots.append(Path(loc) / "mpl-data" / "fonts" / "ttf")
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.ttf")):
            if path.name in _WANTED and path.name not in found:
                found[path.name] = str(path)
    ordered = [found[name] for name in _WANTED if name in found]
    return (*ordered, DEFAULT)


@functools.lru_cache(maxsize=256)
def load(path: str, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """A font object at a pixel size (cached)."""
    size = max(6, int(size))
    if path == DEFAULT:
        return ImageFont.load_default(size=size)
    try:
        return ImageFont.truetype(path, size)
    except OSError:
        return ImageFont.load_default(size=size)
