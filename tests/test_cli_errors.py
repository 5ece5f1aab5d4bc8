"""The CLI turns every bad input into a one-line error and exit 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from companion.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_unknown_game_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "p.json"
    f.write_text('{"game": "chess"}')
    code, _, err = run(["check", "chess", str(f)], capsys)
    assert code == 2
    assert "unknown game 'chess'" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "malformed JSON"),
        ("", "empty"),
        ("[1, 2]", "must hold a JSON object"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_malformed_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, needle: str
) -> None:
    f = tmp_path / "p.json"
    if isinstance(content, bytes):
        f.write_bytes(content)
    else:
        f.write_text(content)
    code, out, err = run(["check", "nox", str(f)], capsys)
    assert code == 2
    assert needle in err
    assert "Traceback" not in err and out == ""


def test_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["check", "nox", "/nonexistent/position.json"], capsys)
    assert code == 2
    assert "cannot read /nonexistent/position.json" in err


def test_document_for_another_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "p.json"
    f.write_text('{"game": "rox", "players": ["A", "B"]}')
    code, _, err = run(["check", "nox", str(f)], capsys)
    assert code == 2
    assert "for 'rox', not 'nox'" in err


def test_console_script_reads_stdin() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "check", "nox", "-"],
        input="{oops", capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: malformed JSON in stdin")
    assert "Traceback" not in proc.stderr
