"""Every bundled example is understood by ``companion check``; an example named
``<game>_violation_<rule>.json`` must produce a violation of ``<game>.<rule>``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.commands.check import EXAMPLES_DIR, check_document

EXAMPLES = sorted(EXAMPLES_DIR.glob("*.json"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_is_understood(path: Path) -> None:
    doc = json.loads(path.read_text())
    game = path.stem.split("_", 1)[0]
    result = check_document(game, doc)
    assert result["game"] == game
    assert isinstance(result["valid"], bool)
    assert isinstance(result["scores"], dict)
    for v in result["violations"]:
        assert v["rule"].startswith(game + ".") and v["message"]
    if "_violation_" in path.stem:
        rule = game + "." + path.stem.split("_violation_", 1)[1]
        assert rule in {v["rule"] for v in result["violations"]}, result["violations"]
        assert result["valid"] is False
    if path.stem.endswith("_valid"):
        assert result["valid"] is True, result["violations"]
