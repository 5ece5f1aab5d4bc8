"""Nox reader on rendered scenes: kitties by seat, stacks as top cards, the verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest

from companion.readers import read_state
from companion.readers.common import circular_groups
from companion.readers.truth import (
    check,
    compare,
    detections_from_scene,
    hidden,
    nox_tops,
    read_scene,
)
from companion.synth import render_scene

SEEDS = range(12)


def scenes(difficulty: str) -> list:
    return [s for s in (render_scene("nox", seed=k, difficulty=difficulty) for k in SEEDS)
            if not hidden(s)]


@pytest.mark.parametrize("difficulty", ["easy", "normal"])
def test_state_and_verdict_read_exactly(difficulty: str) -> None:
    found = scenes(difficulty)
    assert len(found) >= 8
    assert {s.verdict["valid"] for s in found} == {True, False}  # legal and illegal
    for scene in found:
        read = read_scene(scene)
        result = compare(scene, read)
        assert result.state, (scene.seed, result.why)
        assert result.verdict, scene.seed
        assert read.complete


def test_seat_markers_name_the_kitties() -> None:
    with_markers = [s for s in scenes("normal") if s.camera["markers"]]
    assert with_markers
    for scene in with_markers:
        read = read_scene(scene)
        assert read.state["players"] == scene.state["players"]
        assert read.state["kitties"] == nox_tops(scene.state)
        # without names the seats are P1…Pn by their printed number
        unnamed = read_scene(scene, names=False)
        assert unnamed.state["players"] == [f"P{k + 1}" for k in
                                            range(len(scene.state["players"]))]


def test_without_markers_players_are_named_clockwise() -> None:
    scene = next(s for s in scenes("easy") if sum(1 for k in s.state["kitties"].values() if k)
                 >= 3)
    read = read_scene(scene, markers=False, names=False)
    assert read.state["players"][0] == "P1"
    assert any("clockwise" in n for n in read.notes)
    result = compare(scene, read)
    assert result.state and result.names is not None
    # the read names follow the true clockwise order, whichever seat is P1
    true = [p for p in scene.state["players"] if scene.state["kitties"][p]]
    mapped = [result.names[p] for p in read.state["players"] if read.state["kitties"][p]]
    k = true.index(mapped[0])
    assert mapped == true[k:] + true[:k]


def test_scores_and_rules_come_from_the_tops() -> None:
    scene = next(s for s in scenes("normal") if "nox.merge" in s.verdict["rules"]
                 or "nox.max_stacks" in s.verdict["rules"])
    verdict = check("nox", read_scene(scene).state)
    assert verdict is not None and not verdict["valid"]
    assert {v["rule"] for v in verdict["violations"]} & {"nox.merge", "nox.max_stacks"}


def test_unread_card_is_reported_not_guessed() -> None:
    scene = scenes("easy")[0]
    dets = detections_from_scene(scene)
    labels = list(dets.labels)
    labels[0] = None
    conf = dets.confidences.copy()
    conf[1] = 0.2
    read = read_state("nox", dets.with_fields(labels=tuple(labels), confidences=conf),
                      image_shape=scene.image.shape, markers=scene.markers,
                      players=scene.state["players"])
    pieces = [u for u in read.unknown if u["piece"] is not None]
    assert [u["piece"] for u in pieces] == [0, 1]
    assert "low confidence" in pieces[1]["why"]
    assert not read.complete
    total = sum(len(k) for k in read.state["kitties"].values())
    assert total == sum(1 for k in dets.kinds if k == "nox_card") - 2
    assert read.roles[0] is not None and read.roles[0]["role"] == "top card"


def test_a_card_read_under_the_classifiers_sure_level_is_unknown() -> None:
    """A Nox card read 0.5-0.8 (over the readers' bar, under the classifier's own sure
    level: ``nox.CARD_SURE``) is reported, not used: on hard dev scenes such cards were
    as often wrong as right (60733: a 12 read 5 at 0.65, the kitty whole and wrong)."""
    from companion.readers.nox import CARD_SURE

    scene = scenes("easy")[0]
    dets = detections_from_scene(scene)
    conf = dets.confidences.copy()
    conf[2] = (0.5 + CARD_SURE) / 2
    read = read_state("nox", dets.with_fields(confidences=conf),
                      image_shape=scene.image.shape, markers=scene.markers,
                      players=scene.state["players"])
    assert [u["piece"] for u in read.unknown if u["piece"] is not None] == [2]
    conf[2] = CARD_SURE
    read = read_state("nox", dets.with_fields(confidences=conf),
                      image_shape=scene.image.shape, markers=scene.markers,
                      players=scene.state["players"])
    assert not [u for u in read.unknown if u["piece"] is not None]


def test_circular_groups_split_at_the_widest_gaps() -> None:
    angles = [math.radians(a) for a in (350, 5, 10, 100, 110, 200)]
    groups = circular_groups(angles)
    assert sorted(sorted(g) for g in groups) == [[0, 1, 2], [3, 4], [5]]
    assert len(circular_groups(angles, count=2)) == 2
    assert circular_groups([], count=3) == []
    assert np.isclose(len(circular_groups([0.0])), 1)


def test_profile_seats_stand_in_for_seat_markers() -> None:
    from companion.calibration.table import Seat, TableProfile

    scene = next(s for s in scenes("normal") if s.camera["markers"])
    seat_marks = [m for m in scene.markers if m["id"] >= 10]
    names = {10 + k: p for k, p in enumerate(scene.state["players"])}
    profile = TableProfile(
        (scene.image.shape[1], scene.image.shape[0]), None, None,
        tuple(Seat(m["id"], names[m["id"]],
                   tuple(np.mean(m["quad"], axis=0).tolist()), None) for m in seat_marks),
        (1.0, 1.0, 1.0), "none")
    read = read_state("nox", detections_from_scene(scene), image_shape=scene.image.shape,
                      profile=profile)
    assert read.state["players"] == scene.state["players"]
    assert read.state["kitties"] == nox_tops(scene.state)


def test_a_card_read_upside_down_is_turned_back_to_its_kitty() -> None:
    """An 8 or an 11 reads the same turned round: the cards beside it decide."""
    from companion.vision.detections import rotate_quad

    scene = next(s for s in scenes("normal") if not s.camera["markers"]
                 and max(len(k) for k in s.state["kitties"].values()) >= 3)
    dets = detections_from_scene(scene)
    quads = dets.quads.copy()
    cards = [i for i in dets if dets.kinds[i] == "nox_card"]
    for i in cards[::3]:  # every third card as if read upside down
        quads[i] = rotate_quad(quads[i], 2)
    read = read_state("nox", dets.with_fields(quads=quads), image_shape=scene.image.shape)
    assert compare(scene, read).state, compare(scene, read).why


def test_a_seat_marker_not_seen_leaves_its_kitty_to_its_seat() -> None:
    """A small or blurred seat marker may go unseen: the kitty with no marker behind it
    is the missing seat's (the seats go round the table in order), not merged into a
    neighbour's, and the reader says which marker it missed."""
    found = [s for s in scenes("normal") if sum(m["id"] >= 10 for m in s.markers) >= 4
             and sum(1 for k in s.state["kitties"].values() if k) >= 4]
    assert found
    for scene in found:
        seat_ids = sorted(m["id"] for m in scene.markers if m["id"] >= 10)
        for dropped in seat_ids:
            markers = [m for m in scene.markers if m["id"] != dropped]
            read = read_state("nox", detections_from_scene(scene),
                              image_shape=scene.image.shape, markers=markers,
                              players=scene.state["players"])
            assert read.state["kitties"] == nox_tops(scene.state), (scene.seed, dropped)
            assert any(str(dropped) in note for note in read.notes)


def test_one_seat_marker_seen_names_every_kitty_clockwise() -> None:
    """With one seat marker seen, the others' kitties follow it clockwise round the
    photo (players sit in clockwise seat order), never the mirror order."""
    found = [s for s in scenes("normal") if sum(m["id"] >= 10 for m in s.markers) >= 3
             and all(s.state["kitties"].values())]
    assert found
    for scene in found:
        for kept in (m for m in scene.markers if m["id"] >= 10):
            read = read_state("nox", detections_from_scene(scene),
                              image_shape=scene.image.shape, markers=[kept],
                              players=scene.state["players"])
            assert read.state["kitties"] == nox_tops(scene.state), (scene.seed, kept["id"])


def test_names_given_without_a_seat_seen_are_reported_as_unseen() -> None:
    """Names given but no seat marker seen (dev 61134: all five too blurred by motion):
    the kitties get the names clockwise from the seat nearest the camera, and the reading
    says whose is whose cannot be seen, rather than passing as whole (there every name
    was one seat off). With the seat markers seen, nothing is said."""
    scene = next(s for s in scenes("normal") if any(m["id"] >= 10 for m in s.markers)
                 and len(s.state["players"]) > 2)
    seated = read_scene(scene)
    assert not any(u["what"] == "seats" for u in seated.unknown)
    unseated = read_state("nox", detections_from_scene(scene), image_shape=scene.image.shape,
                          markers=[m for m in scene.markers if m["id"] < 10],
                          players=scene.state["players"])
    seats = [u for u in unseated.unknown if u["what"] == "seats"]
    assert len(seats) == 1 and "no seat marker seen" in seats[0]["why"]
    assert not unseated.complete and seats[0] in unseated.unread
    assert sorted(unseated.state["kitties"]) == sorted(scene.state["players"])
    unnamed = read_state("nox", detections_from_scene(scene), image_shape=scene.image.shape,
                         markers=[m for m in scene.markers if m["id"] < 10])
    assert not any(u["what"] == "seats" for u in unnamed.unknown)  # P1… by the rule


def test_unseen_seats_with_a_kitty_missing_are_reported() -> None:
    """Two seat markers unseen and only one kitty left for them (the other player has
    no card on the table): which unseen seat it is cannot be told, and the reading says
    so (dev 60532, hard: every name one seat off). One marker unseen, one kitty left:
    the seats' order places it, nothing to say."""
    scene = next(s for s in scenes("normal") if sum(m["id"] >= 10 for m in s.markers) >= 3
                 and all(s.state["kitties"][p] for p in s.state["players"]))
    dets = detections_from_scene(scene)
    players = scene.state["players"]
    seat_ids = sorted(m["id"] for m in scene.markers if m["id"] >= 10)
    one_unseen = [m for m in scene.markers if m["id"] != seat_ids[0]]
    read = read_state("nox", dets, image_shape=scene.image.shape, markers=one_unseen,
                      players=players)
    assert not any(u["what"] == "seats" for u in read.unknown)
    assert compare(scene, read).state
    two_unseen = [m for m in scene.markers if m["id"] not in seat_ids[:2]]
    gone = [i for i in dets if dets.kinds[i] == "nox_card" and scene.pieces[
        _piece_index(scene, dets.quads[i])].owner == players[1]]
    kept = dets.select([i for i in dets if i not in gone])
    read = read_state("nox", kept, image_shape=scene.image.shape, markers=two_unseen,
                      players=players)
    seats = [u for u in read.unknown if u["what"] == "seats"]
    assert len(seats) == 1 and "not seen" in seats[0]["why"] and seats[0] in read.unread


def _piece_index(scene, quad) -> int:
    """The scene piece whose quad ``quad`` is (perfect detections keep the truth's)."""
    return next(k for k, p in enumerate(scene.pieces)
                if np.allclose(np.asarray(p.quad, np.float32), quad))
