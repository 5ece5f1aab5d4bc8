"""``companion read``: the JSON shape of the issue, human lines, --annotate, and one-line
errors with exit 2 for every kind of bad image."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main

REAL = Path(__file__).resolve().parents[1] / "data" / "real_tiles" / "images"
PHOTO = sorted(REAL.glob("*.jpg"))[0]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_large_photo_is_read_shrunk_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A photo longer than ``READ_SIDE`` is read from a shrunk copy; the JSON gives the
    photo's own size, the scale and quads in its own pixels, the human lines the size read."""
    from companion.synth import render_scene

    scene = render_scene("nox", seed=61100, difficulty="normal", width=2560, height=1440)
    photo = tmp_path / "big.jpg"
    cv2.imwrite(str(photo), scene.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    code, out, err = _run(capsys, "read", "nox", str(photo), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["image"] == {"width": 2560, "height": 1440, "read_scale": 0.75}
    assert {"shrink", "locate", "classify", "total"} <= set(doc["timing_ms"])
    from companion.vision.detections import quad_iou

    truths = [np.asarray(t.quad, np.float32).reshape(4, 2) for t in scene.pieces]
    best = [max(quad_iou(np.asarray(p["quad"], np.float32), t) for t in truths)
            for p in doc["pieces"]]
    assert len(best) >= 5 and np.median(best) >= 0.8, best  # on the pieces, full-size pixels
    code, out, err = _run(capsys, "read", "nox", str(photo))
    assert code == 0, err
    assert "in 2560×1440 (read shrunk to 1920×1080)" in out.splitlines()[0]


def test_json_has_the_contract_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "read", "nummix", str(PHOTO), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["game"] == "nummix"
    assert doc["image"] == {"width": 1000, "height": 750, "read_scale": 1.0}
    assert set(doc["timing_ms"]) == {"locate", "classify", "total"}
    assert doc["timing_ms"]["total"] >= doc["timing_ms"]["locate"] >= 0
    assert len(doc["pieces"]) >= 10
    for piece in doc["pieces"]:
        assert piece["kind"] == "nummix_tile"
        assert 0.0 <= piece["confidence"] <= 1.0
        assert len(piece["quad"]) == 4 and all(len(p) == 2 for p in piece["quad"])
        assert all(0 <= x <= 1000 and 0 <= y <= 750 for x, y in piece["quad"])
        if piece["label"] is None or piece["confidence"] < 0.8:
            assert piece["unsure"] is True and isinstance(piece["alternatives"], list)
        else:
            assert "unsure" not in piece


def test_human_output_one_line_per_piece(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "read", "nummix", str(PHOTO))
    assert code == 0
    lines = out.strip().splitlines()
    count = int(lines[0].split(": ")[1].split()[0])
    # heading, one line per piece, timing, then the state's verdict
    assert all("nummix_tile" in line for line in lines[1:count + 1])
    assert lines[count + 1].startswith("time: locate")
    assert any(line.startswith("nummix:") or line.startswith("not checked")
               for line in lines[count + 2:])


def test_annotate_writes_the_photo_with_quads(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    out_png = tmp_path / "out.png"
    code, _, _ = _run(capsys, "read", "nummix", str(PHOTO), "--annotate", str(out_png))
    assert code == 0
    drawn = cv2.imread(str(out_png))
    original = cv2.imread(str(PHOTO))
    assert drawn.shape == original.shape
    assert np.mean(np.any(drawn != original, axis=2)) > 0.005  # something was drawn


def _png_header(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))


@pytest.mark.parametrize(("name", "content", "message"), [
    ("notes.jpg", b"these are not pixels", "not an image"),
    ("empty.png", b"", "0 bytes"),
    ("cut.jpg", PHOTO.read_bytes()[:20_000], "truncated"),
    ("huge.png", _png_header(50_000, 50_000), "too large"),
])
def test_bad_images_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                         name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = _run(capsys, "read", "nummix", str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def test_missing_file_and_unknown_game(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    code, _, err = _run(capsys, "read", "nummix", str(tmp_path / "nope.jpg"))
    assert code == 2 and "no such file" in err
    code, _, err = _run(capsys, "read", "chess", str(PHOTO))
    assert code == 2 and "unknown game" in err


def test_both_locators_find_the_labelled_tiles(capsys: pytest.CaptureFixture[str]) -> None:
    """--locator picks how pieces are found; either way most labelled tiles of the photo
    come back as quads on them (IoU >= 0.5)."""
    from companion.vision.bench import match, read_yolo_quads
    from companion.vision.detections import Detections

    truth = read_yolo_quads(REAL.parent / "labels" / f"{PHOTO.stem}.txt", 1000, 750)
    for locator in ("learned", "classical"):
        code, out, err = _run(capsys, "read", "nummix", str(PHOTO), "--json",
                              "--locator", locator)
        assert code == 0, err
        quads = np.array([p["quad"] for p in json.loads(out)["pieces"]], np.float32)
        matched, _ = match(truth, Detections(quads, ("nummix_tile",) * len(quads)))
        assert matched >= 0.9 * len(truth), (locator, matched, len(truth))


def test_an_unknown_locator_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:  # argparse's own usage error
        main(["read", "nummix", str(PHOTO), "--locator", "magic"])
    assert exit_info.value.code == 2
    assert "--locator" in capsys.readouterr().err


def test_unknowns_are_told_apart_for_people() -> None:
    """What is not on the table is asked for with the option that gives it; what could
    not be read says where (a piece, a region of the photo) or, with no one place, what."""
    from companion.commands.read import format_reading

    text = format_reading({"unknown": [
        {"piece": None, "what": "caller", "ask_user": True, "why": "who called Rox is not "
         "on the table: name them"},
        {"piece": 3, "what": "card", "why": "low confidence"},
        {"piece": None, "what": "table", "region": [[10, 20], [50, 20], [50, 80]],
         "why": "a hand covers part of the table"},
        {"piece": None, "what": "row direction", "why": "which end faces its player"}],
        "notes": [], "check": None, "check_error": "caller not given"}).splitlines()
    assert text[0] == ("not on the table: caller: who called Rox is not on the table: "
                       "name them (--caller)")
    assert text[1] == "could not read: piece 3 (card): low confidence"
    assert text[2].startswith("could not read: around x 10-50, y 20-80 (table)")
    assert text[3] == "could not read: row direction: which end faces its player"
    assert text[-1] == "not checked: caller not given"
