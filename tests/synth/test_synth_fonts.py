"""The renderer draws with a fixed set of fonts on every machine set up by the Makefile,
so a seed gives the same scene everywhere (and the models see the looks they trained on)."""

from __future__ import annotations

from pathlib import Path

from companion.synth import fonts


def test_every_wanted_font_is_installed() -> None:
    found = fonts.font_paths()
    names = [Path(p).name for p in found[:-1]]
    assert names == list(fonts._WANTED)
    assert found[-1] == fonts.DEFAULT
