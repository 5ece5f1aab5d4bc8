"""Every state a scene is generated from passes ``companion check`` with the verdict the
scene was made for; and the ``companion synth`` command on good and bad arguments."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from companion.cli import main
from companion.commands.check import check_document
from companion.synth import GAMES, render_scene
from companion.synth.states import make_state


def _verdict(game: str, state: dict) -> tuple[bool, list[str]]:
    result = check_document(game, state)
    return bool(result["valid"]), sorted({v["rule"] for v in result["violations"]})


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("legal", [True, False])
def test_generated_states_get_the_intended_verdict(game: str, legal: bool) -> None:
    for seed in range(40):
        setup = make_state(game, np.random.default_rng(seed), legal)
        assert setup.verdict["valid"] is legal
        assert _verdict(game, setup.state) == (legal, setup.verdict["rules"]), setup.state


@pytest.mark.parametrize("game", GAMES)
def test_rendered_scene_state_passes_check(game: str) -> None:
    for seed in range(2):
        s = render_scene(game, seed=seed, width=240, height=160)
        assert _verdict(game, s.state) == (s.verdict["valid"], s.verdict["rules"])


def test_cli_writes_identical_files_for_the_same_seed(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    args = ["synth", "all", "--count", "5", "--seed", "7", "--width", "320", "--height", "200"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert len(names) == 10 and names[0] == "scene_0000.jpg"
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    games = [json.loads((tmp_path / "a" / f"scene_{i:04d}.json").read_text())["game"]
             for i in range(5)]
    assert sorted(games) == sorted(GAMES)
    doc = json.loads((tmp_path / "a" / "scene_0000.json").read_text())
    ok = _verdict(doc["game"], doc["state"])
    assert ok == (doc["verdict"]["valid"], doc["verdict"]["rules"])


def test_cli_illegal_flag_gives_illegal_positions(tmp_path: Path) -> None:
    assert main(["synth", "rox", "--count", "2", "--illegal", "--width", "200", "--height",
                 "150", "--out", str(tmp_path)]) == 0
    for i in range(2):
        doc = json.loads((tmp_path / f"scene_{i:04d}.json").read_text())
        assert doc["verdict"]["valid"] is False


@pytest.mark.parametrize(("argv", "needle"), [
    (["synth", "chess"], "unknown game 'chess'"),
    (["synth", "nox", "--difficulty", "insane"], "unknown difficulty"),
    (["synth", "nox", "--count", "0"], "count"),
    (["synth", "nox", "--width", "10"], "width"),
])
def test_cli_bad_arguments_exit_2_with_one_line(argv: list[str], needle: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*argv, "--out", str(tmp_path / "o")])
    _, err = capsys.readouterr()
    assert code == 2
    assert needle in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
