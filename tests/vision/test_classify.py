"""The piece reader on fixed sets: seeded rendered scenes and the held-out real tile
photos (tests/data/real_tiles, quads from their labelled polygons). Thresholds sit a
little under what the benchmark measures (docs/BENCHMARKS.md)."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import pytest

from companion.games.base import InputError
from companion.vision.classify import classify
from companion.vision.classify_bench import Case, real_cases, rendered_cases, score
from companion.vision.detections import MIN_CONFIDENCE, Detections, quad_iou, rotate_quad
from companion.vision.reading import MODELS_DIR, available_model

RENDERED_SEED = 4242


@lru_cache(maxsize=8)
def rendered(kind: str, scenes: int = 6) -> tuple[Case, ...]:
    return tuple(rendered_cases(kind, seed=RENDERED_SEED, scenes=scenes))


@lru_cache(maxsize=1)
def real() -> tuple[Case, ...]:
    return tuple(real_cases())


def test_rendered_nummix_tiles_are_read_and_turned_upright() -> None:
    result = score(rendered("nummix_tile"), ocr="off")
    assert result.total >= 60
    assert result.accuracy >= 0.97, result.confusions
    assert result.oriented_total == result.total
    assert result.turned_right / result.oriented_total >= 0.97


def test_real_tiles_are_read() -> None:
    result = score(real(), ocr="off")
    assert result.total >= 250  # the 30 held-out photos, jokers aside
    assert result.accuracy >= 0.94, result.confusions.most_common(10)
    assert result.oriented_total >= 150  # tiles whose top is known from the photo
    assert result.turned_right / result.oriented_total >= 0.88


@pytest.mark.parametrize("source", ["rendered", "real"])
def test_a_tile_turned_180_degrees_reads_the_same(source: str) -> None:
    case = rendered("nummix_tile")[1] if source == "rendered" else real()[1]
    once = classify(case.image, case.detections, game="nummix", ocr="off")
    turned = case.detections.with_fields(
        quads=np.array([rotate_quad(q, 2) for q in case.detections.quads], np.float32))
    twice = classify(case.image, turned, game="nummix", ocr="off")
    assert once.labels == twice.labels
    assert all(once.oriented) and all(twice.oriented)
    if source == "rendered":  # the same upright top-left, found from either start
        np.testing.assert_allclose(once.quads, twice.quads)
        np.testing.assert_allclose(once.quads, case.upright)


def test_every_reading_carries_ranked_alternatives() -> None:
    case = rendered("nummix_tile")[0]
    read = classify(case.image, case.detections, game="nummix", ocr="off")
    for label, confidence, alternatives in zip(read.labels, read.confidences,
                                               read.data["alternatives"], strict=True):
        assert len(alternatives) == 3
        assert alternatives[0] == (label, pytest.approx(confidence, abs=1e-3))
        probs = [p for _, p in alternatives]
        assert probs == sorted(probs, reverse=True) and sum(probs) <= 1.0 + 1e-6


def test_an_unreadable_piece_is_reported_unsure() -> None:
    # A blank cream patch where a tile should be: no number to read.
    image = np.full((200, 200, 3), (60, 90, 120), np.uint8)
    image[60:140, 70:128] = (205, 230, 238)
    quad = np.array([[[72, 62], [126, 62], [126, 138], [72, 138]]], np.float32)
    read = classify(image, Detections(quad, ("nummix_tile",)), game="nummix", ocr="off")
    assert read.confidences[0] < 0.8
    assert len(read.data["alternatives"][0]) == 3


def test_tesseract_alone_reads_clear_tiles() -> None:
    cases = rendered("nummix_tile", 2)
    result = score(cases, use_classifier=False)
    assert result.accuracy >= 0.5, result.confusions  # the second opinion, not the reader


def test_bad_options_are_input_errors() -> None:
    case = real()[0]
    with pytest.raises(InputError, match="game"):
        classify(case.image, case.detections, game="chess")
    with pytest.raises(InputError, match="ocr"):
        classify(case.image, case.detections, game="nummix", ocr="maybe")
    with pytest.raises(InputError, match="ocr"):
        classify(case.image, case.detections, game="nummix", use_classifier=False, ocr="off")
    with pytest.raises(InputError, match="image"):
        classify(case.image[:, :, 0], case.detections, game="nummix")


def test_no_pieces_no_work() -> None:
    image = np.zeros((10, 10, 3), np.uint8)
    assert len(classify(image, Detections.empty(), game="nox")) == 0


# Each kind's reader on 4 fresh rendered scenes (seeded); thresholds under the
# figures in docs/BENCHMARKS.md.
KIND_THRESHOLDS = {"nox_card": 0.95, "qwixx_card": 0.9, "catbox_card": 0.95, "rox_card": 0.9,
                   "rox_scoring": 0.75, "token": 0.97}
SCENES = {"rox_scoring": 12}  # few scoring cards per scene


@pytest.mark.parametrize("kind", sorted(KIND_THRESHOLDS))
def test_rendered_pieces_of_every_kind_are_read(kind: str) -> None:
    if not available_model(kind):
        pytest.fail(f"no model for {kind} in models/")
    cases = rendered(kind, SCENES.get(kind, 4))
    result = score(cases, ocr="off")
    assert result.total >= 8
    assert result.accuracy >= KIND_THRESHOLDS[kind], result.confusions.most_common(8)


def test_rox_cards_carry_all_sixteen_edge_symbols() -> None:
    case = rendered("rox_card", 2)[0]
    read = classify(case.image, case.detections, game="rox")
    for edge, truth in zip(read.data["edge"], case.edges, strict=True):
        assert sum(edge.values()) == 16 and set(edge) == set(truth or edge)


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
def test_the_research_board_is_turned_to_read_red_row_first(turns: int) -> None:
    from companion.synth import render_scene
    from companion.vision.board import orient_board
    from companion.vision.colour import white_balance

    scene = render_scene("catbox", seed=7200 + turns)
    board = next(p for p in scene.pieces if p.kind == "catbox_board")
    truth = np.asarray(board.quad, np.float32)
    balanced, _ = white_balance(scene.image)  # as classify judges colours
    quad, sure = orient_board(balanced, rotate_quad(truth, turns))
    cell = float(np.linalg.norm(truth[1] - truth[0])) * 0.94 / 9
    # turned right, then fitted to its printed cells: within a tenth of a cell
    assert np.abs(quad - truth).max() < 0.1 * cell and sure > 0.6


def test_edge_confidence_is_measured_against_the_models_typical_sureness() -> None:
    """The Rox edge model's labels file carries its fitted temperature and its typical
    top probability; logits come divided by the temperature, and a clearly printed
    card read through its true quad counts as sure."""
    import json

    from companion.synth import render_scene
    from companion.vision.colour import white_balance
    from companion.vision.reading import load_model
    from companion.vision.rox_edges import read_rox_edges

    meta = json.loads((MODELS_DIR / "rox_edge.labels.json").read_text())
    model = load_model("rox_edge")
    assert model.temperature == meta["temperature"] and 0.3 < model.temperature < 3
    assert model.sure == meta["sure"] and 0.5 < model.sure <= 1
    crops = np.zeros((1, 16, 16, 3), np.uint8) + 128
    raw = model.session.run(None, {"crop": crops.transpose(0, 3, 1, 2).astype(np.float32)
                                   / 255})[0]
    assert np.allclose(model.logits(crops), raw / model.temperature, atol=1e-5)
    scene = render_scene("rox", seed=7300, difficulty="easy")
    cards = [p for p in scene.pieces if p.kind == "rox_card" and not p.covered]
    balanced, _ = white_balance(scene.image)
    read = read_rox_edges(balanced, np.array([p.quad for p in cards], np.float32), MODELS_DIR)
    exact = [counts == {e: p.edge.get(e, 0) for e in counts}
             for (counts, _), p in zip(read, cards, strict=True)]
    sure = [s >= 0.8 for _, s in read]
    assert sum(exact) >= 0.8 * len(cards)
    assert all(e for e, s in zip(exact, sure, strict=True) if s)  # sure means right


def test_a_rack_tile_outlined_wider_than_tall_is_read_a_quarter_turn_round() -> None:
    """Seen from above, a tile standing on a rack looks wider than tall: an outline
    started at its short edge puts its top on the side. Unsure, it is read again a
    quarter turn round."""
    from companion.synth import render_scene

    tiles: list[tuple[object, list[object]]] = []
    for seed in range(60000, 60010):
        scene = render_scene("nummix", seed=seed)
        rack = [p for p in scene.pieces if p.owner == "rack" and not p.covered
                and p.visible_fraction > 0.9]
        if rack:
            tiles.append((scene, rack))
    right = total = 0
    for scene, rack in tiles:
        quads = np.array([rotate_quad(np.asarray(p.quad, np.float32), 1) for p in rack])
        read = classify(scene.image, Detections(quads, ("nummix_tile",) * len(rack)),
                        game="nummix", ocr="off")
        for p, label, conf in zip(rack, read.labels, read.confidences, strict=True):
            total += 1
            right += label == p.label and conf >= 0.8
    assert total >= 20
    assert right >= 0.8 * total, (right, total)


def test_a_rox_card_outlined_askew_is_searched_for(monkeypatch) -> None:
    """A located outline a few pixels off cuts every edge symbol's patch askew: an
    unsure card is read again through outlines searched about it (and through its
    outline fitted to the photo), and mostly read surely."""
    from companion.synth import render_scene
    from companion.vision import rox_edges as module
    from companion.vision.colour import white_balance

    cards, quads, images = [], [], []
    for seed in (7300, 7301, 7302):
        scene = render_scene("rox", seed=seed)
        balanced, _ = white_balance(scene.image)
        for p in scene.pieces:
            if p.kind == "rox_card" and not p.covered and p.visible_fraction > 0.99:
                q = np.asarray(p.quad, np.float32)
                side = float(np.linalg.norm(q[1] - q[0]))
                cards.append(p)
                quads.append(q + np.float32([0.08, 0.0]) * side)  # 8 % off to the right
                images.append(balanced)

    def tally() -> tuple[int, int]:
        right = wrong = 0
        for p, q, image in zip(cards, quads, images, strict=True):
            (counts, sure), = module.read_rox_edges(image, q[None], MODELS_DIR)
            if sure >= 0.5:
                exact = counts == {e: p.edge.get(e, 0) for e in counts}
                right, wrong = right + exact, wrong + (not exact)
        return right, wrong

    monkeypatch.setattr(module, "EDGE_REFIT_BELOW", 0.0)  # the search alone
    monkeypatch.setattr(module, "EDGE_FIT_CHECK_BELOW", 0.0)
    searched = tally()
    monkeypatch.setattr(module, "_edge_search",
                        lambda model, balanced, outlines: [(({}, 0.0), None)] * len(outlines))
    plain = tally()
    assert len(cards) >= 30
    # here 41 of 41 sure and exact searched for, 11 not; none sure and wrong
    assert searched[0] >= plain[0] + 0.25 * len(cards), (searched, plain, len(cards))
    assert searched[1] <= 0.03 * len(cards)
    monkeypatch.setattr(module, "EDGE_REFIT_BELOW", 0.9)  # the fitted outline alone
    monkeypatch.setattr(module, "EDGE_FIT_CHECK_BELOW", 0.9)
    fitted = tally()
    assert fitted[0] >= plain[0] + 0.25 * len(cards), (fitted, plain, len(cards))
    assert fitted[1] <= 0.03 * len(cards)


def _sure_right_and_wrong(photos: list[tuple[Any, list[Any]]]) -> tuple[int, int]:
    """Rox cards whose edge counts ``read_rox_edges`` (as the module stands, patches
    included) reads sure and right, and sure and wrong, over ``photos``."""
    from companion.vision import rox_edges as module

    right = wrong = 0
    for balanced, pairs in photos:
        read = module.read_rox_edges(balanced, np.array([q for q, _ in pairs]), MODELS_DIR)
        for (counts, sure), (_, p) in zip(read, pairs, strict=True):
            exact = counts == {e: p.edge.get(e, 0) for e in counts}
            right += sure >= 0.5 and exact
            wrong += sure >= 0.5 and not exact
    return right, wrong


def _located_rox_cards(seeds: tuple[int, ...]) -> list[tuple[np.ndarray, list]]:
    """Per rendered normal Rox photo: the white-balanced image and each element card the
    learned locator found, (its located quad, the uncovered truth card it overlaps most)."""
    from companion.synth import render_scene
    from companion.vision.colour import apply_gains, white_gains
    from companion.vision.segment import locate_learned

    photos = []
    for seed in seeds:
        scene = render_scene("rox", seed=seed, difficulty="normal")
        found = locate_learned(scene.image, game="rox")
        truth = [p for p in scene.pieces if p.kind == "rox_card" and not p.covered]
        pairs = [(q, max(truth, key=lambda p, q=q: quad_iou(p.quad, q)))
                 for q, kind in zip(found.quads, found.kinds, strict=True)
                 if kind == "rox_card"]
        photos.append((apply_gains(scene.image, white_gains(scene.image)), pairs))
    return photos


def test_a_rox_card_read_fairly_sure_is_searched_for_too(monkeypatch) -> None:
    """A card read fairly sure (0.5-0.8) through a located outline a few pixels off can
    have one symbol wrong: it is searched for too, and its surer reading is right. On
    these photos each such card read sure and wrong when only unsure cards were."""
    from companion.vision import rox_edges as module

    photos = _located_rox_cards((61216, 61305, 61321))

    def sure_and_wrong() -> int:
        wrong = 0
        for balanced, pairs in photos:
            read = module.read_rox_edges(balanced, np.array([q for q, _ in pairs]),
                                         MODELS_DIR)
            wrong += sum(sure >= 0.5 and counts != {e: p.edge.get(e, 0) for e in counts}
                         for (counts, sure), (_, p) in zip(read, pairs, strict=True))
        return wrong

    assert sure_and_wrong() == 0
    monkeypatch.setattr(module, "EDGE_SEARCH_BELOW", MIN_CONFIDENCE)
    # 2 before outlines were fitted as the slanted photo shows a square, which reads one
    assert sure_and_wrong() >= 1


def test_a_rox_card_read_fairly_sure_through_a_sheared_outline_is_read_fitted_too(
        monkeypatch) -> None:
    """Dev 61704 (normal): a water card's located outline is sheared 10 px across its
    seam with the next card, whose air ring it reads for one of its water drops, 0.81
    sure (under ``EDGE_FIT_CHECK_BELOW``, over ``EDGE_REFIT_BELOW``). Read through its
    fitted outline too it is counted right; without, sure and wrong."""
    from companion.vision import rox_edges as module

    photos = _located_rox_cards((61704,))
    checked = _sure_right_and_wrong(photos)
    monkeypatch.setattr(module, "EDGE_FIT_CHECK_BELOW", module.EDGE_REFIT_BELOW)
    unchecked = _sure_right_and_wrong(photos)
    assert checked[1] == 0 and unchecked[1] >= 1, (checked, unchecked)
    assert checked[0] >= unchecked[0] + 1


def test_a_rox_card_still_unsure_after_the_search_is_searched_again(monkeypatch) -> None:
    """A located outline off by more than one search step's reach (a side located 15 %
    short) is reached in a second round from the surest outline of the first: on these
    photos one card each is read sure and right in two rounds, unsure in one, and no
    card is read sure and wrong either way (without the neighbours' stepped outlines,
    which reach these cards too, or the photos sharpened)."""
    import math

    from companion.vision import deblur
    from companion.vision import rox_edges as module

    monkeypatch.setattr(module, "stepped_outlines", lambda *_, **__: [])  # the search alone
    monkeypatch.setattr(deblur, "STREAK_DEPTH_FROM", math.inf)  # on the photo as taken
    photos = _located_rox_cards((61303, 61314))

    twice = _sure_right_and_wrong(photos)
    monkeypatch.setattr(module, "EDGE_SEARCH_ROUNDS", 1)
    once = _sure_right_and_wrong(photos)
    # 28 and 26 before outlines were fitted as the slanted photo shows a square, 29 and 28
    assert twice[0] >= once[0] + 1 and twice[1] == once[1] == 0, (twice, once)


def test_a_rox_card_outlined_narrow_as_a_scoring_card_is_read_as_an_element_card(
        monkeypatch) -> None:
    """The locator tells Rox element and scoring cards apart by shape: an element card
    outlined a little narrow is judged a scoring card. Its 16 edge symbols, read through
    its outline fitted square, say it is an element card; a scoring card, which has none,
    stays one (however near a row it lies)."""
    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene
    from companion.vision import rox_edges as module
    from companion.vision.colour import apply_gains, white_gains

    monkeypatch.setattr(module, "ELEMENT_CHECK_REACH", 1e9)  # check every scoring card
    narrowed = turned = kept = 0
    for seed in (7300, 7301, 7302):
        scene = render_scene("rox", seed=seed)
        truth = detections_from_scene(scene, min_visible=0.99)
        balanced = apply_gains(scene.image, white_gains(scene.image))
        cards = [i for i, kind in enumerate(truth.kinds) if kind == "rox_card"]
        quads, kinds = truth.quads.copy(), list(truth.kinds)
        for i in cards[::3]:  # every third card outlined 0.8 as wide, judged scoring
            across = (quads[i][1] - quads[i][0]) / 2
            quads[i] = quads[i] + np.float32([[1], [-1], [-1], [1]]) * across * 0.2
            kinds[i] = "rox_scoring"
        read = module.element_cards_by_edges(
            balanced, truth.with_fields(quads=quads, kinds=tuple(kinds)), MODELS_DIR)
        for i, kind in enumerate(truth.kinds):
            if kind == "rox_scoring":
                assert read.kinds[i] == "rox_scoring", (seed, i)
                kept += 1
            elif kinds[i] == "rox_scoring":
                narrowed += 1
                turned += read.kinds[i] == "rox_card"
                if read.kinds[i] == "rox_card":
                    assert quad_iou(read.quads[i], truth.quads[i]) > 0.8
    assert kept >= 3
    assert narrowed >= 10 and turned >= 0.85 * narrowed, (turned, narrowed)  # here 15 of 15


def test_a_rox_scoring_card_outlined_square_is_read_as_a_scoring_card() -> None:
    """A scoring card outlined square is judged an element card by the locator and read
    unknown (no edge symbols): apart from the rows, the scoring-card model reads its
    number surely and it is a scoring card again; an unknown element card in a row stays
    an element card."""
    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene
    from companion.vision.cards import scoring_cards_by_number
    from companion.vision.colour import apply_gains, white_gains

    squared = taken = stayed = 0
    for seed in (7300, 7301, 7302):
        scene = render_scene("rox", seed=seed)
        truth = detections_from_scene(scene, min_visible=0.99)
        balanced = apply_gains(scene.image, white_gains(scene.image))
        quads, kinds = truth.quads.copy(), list(truth.kinds)
        confidences = np.ones(len(truth), np.float32)
        for i, kind in enumerate(truth.kinds):
            if kind == "rox_scoring":  # widened to a square, judged an element card
                across = (quads[i][1] - quads[i][0]) / 2
                quads[i] = quads[i] + np.float32([[-1], [1], [1], [-1]]) * across * 0.55
                kinds[i], confidences[i] = "rox_card", 0.0
        in_row = next(i for i, kind in enumerate(truth.kinds) if kind == "rox_card")
        confidences[in_row] = 0.0
        read = scoring_cards_by_number(balanced, truth.with_fields(
            quads=quads, kinds=tuple(kinds), confidences=confidences), MODELS_DIR)
        assert read.kinds[in_row] == "rox_card"
        stayed += 1
        for i, kind in enumerate(truth.kinds):
            if kind == "rox_scoring":
                squared += 1
                if read.kinds[i] == "rox_scoring":
                    taken += 1
                    assert read.labels[i] == truth.labels[i], (seed, i)
                    assert read.data["edge"][i] is None
    assert stayed == 3
    assert squared >= 7 and taken >= 5, (taken, squared)  # here 5 of 7, none wrong


def test_a_rox_scoring_card_cut_in_two_element_cards_is_read_whole() -> None:
    """A scoring card the locator cut in two (as a run of two element cards), each half
    read unknown, is read through the rectangle round both halves: one scoring card."""
    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene
    from companion.vision.cards import scoring_cards_by_number
    from companion.vision.colour import apply_gains, white_gains
    from companion.vision.detections import cut_across

    joined = 0
    for seed in (7300, 7301, 7302):
        scene = render_scene("rox", seed=seed)
        truth = detections_from_scene(scene, min_visible=0.99)
        balanced = apply_gains(scene.image, white_gains(scene.image))
        cut = next(i for i, kind in enumerate(truth.kinds) if kind == "rox_scoring")
        keep = [i for i in truth if i != cut]
        halves = cut_across(truth.quads[cut], 2)
        n = len(keep) + 2
        pieces = Detections(
            np.concatenate([truth.quads[keep], halves]),
            (*(truth.kinds[i] for i in keep), "rox_card", "rox_card"),
            (*(truth.labels[i] for i in keep), "magic", "magic"),
            np.float32([1.0] * len(keep) + [0.0, 0.0]))
        read = scoring_cards_by_number(balanced, pieces, MODELS_DIR)
        if len(read) == n - 1:
            joined += 1
            assert read.kinds[n - 2] == "rox_scoring"
            assert read.labels[n - 2] == truth.labels[cut], seed
            assert quad_iou(read.quads[n - 2], truth.quads[cut]) > 0.7
    assert joined >= 2, joined


def test_a_fingertip_beside_a_rox_row_read_as_an_unknown_element_card_is_dropped() -> None:
    """An unknown "element card" far smaller than the sure ones (``ROX_TINY``) next to a
    row is a fingertip, dropped; an unknown card of a card's size there stays."""
    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene
    from companion.vision.colour import apply_gains, white_gains
    from companion.vision.strays import ROX_TINY, without_strays

    scene = render_scene("rox", seed=7300)
    truth = detections_from_scene(scene, min_visible=0.99)
    balanced = apply_gains(scene.image, white_gains(scene.image))
    a = truth.quads[next(i for i, kind in enumerate(truth.kinds) if kind == "rox_card")]
    beside = a + (a[1] - a[0]) * 1.05  # one card over along the row's first side
    fingertip = beside.mean(axis=0) + (beside - beside.mean(axis=0)) * (0.8 * ROX_TINY) ** 0.5
    n = len(truth)
    read = Detections(np.concatenate([truth.quads, [fingertip, beside]]).astype(np.float32),
                      (*truth.kinds, "rox_card", "rox_card"), (*truth.labels, "air", "air"),
                      np.float32([1.0] * n + [0.0, 0.0]))
    kept = without_strays(read, balanced, "rox_card")
    assert len(kept) == n + 1
    assert np.allclose(kept.quads[n], beside)


def test_fingers_read_surely_as_a_tile_are_dropped() -> None:
    """Dev scene 61700 (normal): a hand's fingers read as b1 at 0.94, 25.9 off the
    tiles' faces in colour and 54 darker (``SURE_STRAY_CHROMA``), stood in the grid as a
    construct of one; the tiles stay."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene("nummix", seed=61700, difficulty="normal")
    found = read_image(scene.image, game="nummix").detections
    fingers = np.float32([428, 487])
    assert all(np.linalg.norm(q.mean(axis=0) - fingers) > 40 for q in found.quads)
    tiles = [p for p in scene.pieces if p.kind == "nummix_tile" and p.visible_fraction > 0.9]
    assert sum(f == "nummix_tile" for f in found.kinds) >= len(tiles)


def test_a_scrap_of_rox_element_cards_read_as_a_scoring_card_is_dropped() -> None:
    """A "scoring card" outlined on the seam between two element cards, or far smaller
    than an element card, is no card; the true scoring cards stay."""
    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene
    from companion.vision.strays import without_scoring_strays

    scene = render_scene("rox", seed=7300)
    truth = detections_from_scene(scene, min_visible=0.99)
    cards = [i for i, kind in enumerate(truth.kinds) if kind == "rox_card"]
    a = truth.quads[cards[0]]
    seam = (a[1] + a[2]) / 2  # the middle of the first card's right side
    scrap = (seam + (a - a.mean(axis=0)) * 0.3).astype(np.float32)  # on the seam
    tiny = np.float32([30, 30]) + (a - a.mean(axis=0)) * 0.2  # a fifth of a card
    n = len(truth)
    read = Detections(np.concatenate([truth.quads, [scrap, tiny.astype(np.float32)]]),
                      (*truth.kinds, "rox_scoring", "rox_scoring"),
                      (*truth.labels, "1", "7"), np.ones(n + 2, np.float32))
    kept = without_scoring_strays(read)
    assert len(kept) == n
    assert kept.kinds.count("rox_scoring") == truth.kinds.count("rox_scoring") >= 1


def test_tesseract_tips_a_close_call_but_does_not_overrule_the_network() -> None:
    """Tesseract's number is a likelihood ratio (``OCR_WEIGHT``): between a 5 and a 6
    the network hesitates over, it decides; against a clear reading it cannot win."""
    from companion.vision.classify import _with_ocr

    labels = ("b5", "b6", "r5", "r6")
    close = _with_ocr(labels, np.array([0.5, 0.45, 0.03, 0.02]), 6, 0.9)
    assert labels[int(np.argmax(close))] == "b6"
    clear = _with_ocr(labels, np.array([0.85, 0.1, 0.03, 0.02]), 6, 0.95)
    assert labels[int(np.argmax(clear))] == "b5"
    assert np.allclose(_with_ocr(labels, np.array([0.5, 0.45, 0.03, 0.02]), None, 0.9),
                       [0.5, 0.45, 0.03, 0.02])


def test_a_tile_outlined_a_fifth_off_is_read_through_its_fitted_outline(monkeypatch) -> None:
    """A located outline a fifth of a tile off cuts the number: a tile still unsure
    after the nudges is read through its outline fitted to the photo's edges (measured
    without ``nearest_sure_outline``, which reads most of them right from its sure
    neighbours' outlines too)."""
    from companion.synth import render_scene
    from companion.vision import classify as module

    monkeypatch.setattr(module, "nearest_sure_outline", lambda read, *_: read)

    def tally() -> tuple[int, int, int]:
        seen = right = wrong = 0
        for seed in (7400, 7401, 7402):
            scene = render_scene("nummix", seed=seed, difficulty="easy")
            tiles = [p for p in scene.pieces if p.kind == "nummix_tile" and not p.covered
                     and p.visible_fraction > 0.99 and not p.extra.get("standing")]
            quads = np.array([np.asarray(p.quad, np.float32) for p in tiles])
            quads += 0.2 * (quads[:, 1:2] - quads[:, 0:1])  # a fifth of a tile to its right
            read = classify(scene.image, Detections(quads, ("nummix_tile",) * len(tiles)),
                            game="nummix", ocr="off")
            n = len(tiles)  # (tiles left out here, partly covered, may be found beside)
            for p, label, conf in zip(tiles, read.labels[:n], read.confidences[:n],
                                      strict=True):
                seen += 1
                if conf >= 0.8:
                    right, wrong = right + (label == p.label), wrong + (label != p.label)
        return seen, right, wrong

    seen, fitted, fitted_wrong = tally()
    monkeypatch.setattr(module, "PIECE_ASPECT", {})
    _, plain, plain_wrong = tally()
    # here 53 of 55 sure and right fitted, 31 not; none sure and wrong
    assert seen >= 40
    assert fitted >= plain + 0.25 * seen, (fitted, plain, seen)
    assert fitted_wrong <= plain_wrong + 1


def test_two_nox_cards_in_one_outline_are_read_as_two() -> None:
    """The locator now and then outlines two touching cards of a kitty as one: such an
    outline (far larger than its neighbours', squarer than a card) is read as its two
    halves when both read sure the same way up; single cards are left whole."""
    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene

    joined = 0
    for seed in range(6):
        scene = render_scene("nox", seed=seed, difficulty="easy")
        truth = detections_from_scene(scene)
        tops = [p for p in scene.pieces if p.kind == "nox_card" and p.top]
        pair = next(((a, b) for a in tops for b in tops if a.owner == b.owner
                     and b.stack == a.stack + 1 and a.label != b.label), None)
        if pair is None or len(truth) < 4:
            continue
        a, b = pair
        union = np.asarray([a.quad[0], b.quad[1], b.quad[2], a.quad[3]], np.float32)
        keep = [i for i in truth if not any(np.allclose(truth.quads[i], p.quad)
                                            for p in pair)]
        rest = truth.select(keep)
        found = Detections(np.concatenate([rest.quads, union[None]]),
                           rest.kinds + ("nox_card",))
        read = classify(scene.image, found, game="nox", ocr="off")
        assert len(read) == len(found) + 1, seed
        assert sorted(read.labels) == sorted(truth.labels), seed
        whole = classify(scene.image, Detections(truth.quads, truth.kinds), game="nox",
                         ocr="off")
        assert len(whole) == len(truth), seed  # nothing else split
        joined += 1
    assert joined >= 3


def test_a_square_looking_nox_card_is_read_along_its_row() -> None:
    """A card squeezed square by the camera's tilt shows no axis of its own: read on its
    side, a 3 is a sure 8. The neighbour lying beyond its top or bottom, not beside it,
    says it lies a quarter turn round."""
    from companion.readers.common import angle_diff, frame
    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene

    tried = 0
    for seed in range(8):
        scene = render_scene("nox", seed=seed, difficulty="easy")
        truth = detections_from_scene(scene)
        rows = [i for i in truth if any(
            j != i and np.linalg.norm(truth.quads[j].mean(0) - truth.quads[i].mean(0))
            < 1.2 * np.linalg.norm(truth.quads[i][1] - truth.quads[i][0]) for j in truth)]
        if not rows:
            continue
        i = rows[0]
        q = truth.quads[i]
        grow = (np.linalg.norm(q[3] - q[0]) / np.linalg.norm(q[1] - q[0]) - 1) / 2
        wide = q + grow * np.array([q[0] - q[1], q[1] - q[0], q[2] - q[3], q[3] - q[2]])
        quads = truth.quads.copy()
        quads[i] = rotate_quad(wide, 1)  # square, starting at a side: read on its side
        read = classify(scene.image, Detections(quads, truth.kinds), game="nox", ocr="off")
        assert angle_diff(frame(read.quads[i]).down_angle, frame(q).down_angle) < 0.5, seed
        tried += 1
    assert tried >= 4



def test_two_square_looking_nox_cards_side_by_side_are_both_read_along_their_row() -> None:
    """Two neighbouring cards squeezed square and both outlined on their side (a kitty
    near the photo's edge, dev scene 61924 read a 3 and a 15 as a sure 8 and 9): each
    is the other's nearest card, lying beyond its top or bottom, so both are turned."""
    from companion.readers.common import angle_diff, frame
    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene

    tried = 0
    for seed in range(12):
        scene = render_scene("nox", seed=seed, difficulty="easy")
        truth = detections_from_scene(scene)
        centres = np.array([q.mean(0) for q in truth.quads])
        pairs = [(i, j) for i in truth for j in truth if i < j and np.linalg.norm(
            centres[i] - centres[j]) < 1.2 * np.linalg.norm(truth.quads[i][1] - truth.quads[i][0])]
        if not pairs:
            continue
        quads = truth.quads.copy()
        for i in pairs[0]:
            q = truth.quads[i]
            grow = (np.linalg.norm(q[3] - q[0]) / np.linalg.norm(q[1] - q[0]) - 1) / 2
            wide = q + grow * np.array([q[0] - q[1], q[1] - q[0], q[2] - q[3], q[3] - q[2]])
            quads[i] = rotate_quad(wide, 1)  # square, starting at a side: read on its side
        read = classify(scene.image, Detections(quads, truth.kinds), game="nox", ocr="off")
        for i in pairs[0]:
            assert angle_diff(frame(read.quads[i]).down_angle,
                              frame(truth.quads[i]).down_angle) < 0.5, (seed, i)
            assert read.labels[i] == truth.labels[i], (seed, i)
        tried += 1
    assert tried >= 4


def test_a_cat_in_the_box_trick_seen_square_is_read_along_its_row() -> None:
    """Dev 61932 (Cat in the Box, hard): a tilted camera squeezes the trick's cards
    square and three are outlined on their side, a 2 read as 8 at 0.95 and the reading
    whole and wrong; read along their row (``cards.PAIR_KINDS``) they are 7, 6, 2, 5."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene("catbox", seed=61932, difficulty="hard")
    read = read_image(scene.image, game="catbox").detections
    cards = sorted((i for i in read if read.kinds[i] == "catbox_card"),
                   key=lambda i: float(read.quads[i][:, 0].mean()))
    assert [read.labels[i] for i in cards] == ["7", "6", "2", "5"]
    assert min(float(read.confidences[i]) for i in cards) >= 0.9


def test_a_card_read_surely_both_ways_round_is_not_settled_by_its_own_turn() -> None:
    """Dev 61600 (Cat in the Box, hard): the trick's 2, squeezed square, read 8 surely on
    its side and 2 a quarter turn round; nudged outlines of its side-on outline then read
    8 at 0.99 and the trick was whole and wrong. Left unsure by its turn, no card of the
    trick is read wrong surely."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene("catbox", seed=61600, difficulty="hard")
    read = read_image(scene.image, game="catbox").detections
    cards = sorted((i for i in read if read.kinds[i] == "catbox_card"),
                   key=lambda i: float(read.quads[i][:, 0].mean()))
    truth = ["1", "2", "5"]
    assert len(cards) == len(truth)
    for i, label in zip(cards, truth, strict=True):
        assert read.labels[i] == label or float(read.confidences[i]) < 0.5


def test_a_card_joined_square_from_its_parts_is_not_read_on_its_side() -> None:
    """Dev 60714 (Nox, hard): a stack's 3 outlined as two parts, joined into a square
    rectangle that read 8 at 0.999 on its side (and 3 upright), then 8 again through
    card-sized outlines along that side: the kitty whole and wrong. Read both ways sure
    of different numbers, it stays unsure (``cards._turned_joins_disputed``)."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene("nox", seed=60714, difficulty="hard")
    read = read_image(scene.image, game="nox").detections
    near = [i for i in read if read.kinds[i] == "nox_card"
            and np.linalg.norm(read.quads[i].mean(axis=0) - (440.0, 485.0)) < 25]
    assert len(near) == 1
    assert read.labels[near[0]] == "3" or float(read.confidences[near[0]]) < 0.5


def test_a_squeezed_card_finds_its_row_neighbour_a_pitch_away() -> None:
    """Dev 61924 (Nox, hard): a kitty's first card, a 3, outlined 29x40 px by a steep
    camera, its neighbour 49 px away (beyond 1.4 of its size): read on its side it was
    an 8 at 0.85 in the next kitty (``cards.NEIGHBOUR_REACH``)."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene("nox", seed=61924, difficulty="hard")
    read = read_image(scene.image, game="nox").detections
    near = [i for i in read if read.kinds[i] == "nox_card"
            and np.linalg.norm(read.quads[i].mean(axis=0) - (376.0, 627.0)) < 20]
    assert len(near) == 1
    assert read.labels[near[0]] == "3"


def test_a_kittys_cards_squeezed_to_look_landscape_are_read_along_the_row() -> None:
    """Dev 61958 (Nox, hard): a steep camera makes a kitty's 10 and 11 near the photo's
    bottom look landscape; read along their longer side they were an 8 and a 4 at 0.81
    (``cards.FORESHORTENED_SURE``)."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene("nox", seed=61958, difficulty="hard")
    read = read_image(scene.image, game="nox").detections
    low = sorted((i for i in read if float(read.quads[i][:, 1].mean()) > 560
                  and float(read.quads[i][:, 0].mean()) < 600),
                 key=lambda i: float(read.quads[i][:, 0].mean()))
    assert [read.labels[i] for i in low] == ["10", "11"]
    assert min(float(read.confidences[i]) for i in low) >= 0.9


def _without_missed_tiles(monkeypatch) -> None:
    """``classify`` without ``missed_beside_sure``: tests that outline only the tiles
    in full view would otherwise get the partly covered ones found beside them."""
    from companion.vision import classify as module

    monkeypatch.setattr(module, "missed_beside_sure", lambda read, *_: read)


def _lying_tiles(seed: int) -> tuple[Any, list[Any], list[np.ndarray]]:
    """An easy rendered Nummix scene, its tiles lying in full view, and their quads."""
    from companion.synth import render_scene

    scene = render_scene("nummix", seed=seed, difficulty="easy")
    tiles = [p for p in scene.pieces if p.kind == "nummix_tile" and not p.covered
             and p.visible_fraction > 0.99 and not p.extra.get("standing")]
    return scene, tiles, [np.asarray(p.quad, np.float32) for p in tiles]


@pytest.mark.parametrize("parts", [2, 3])
def test_touching_tiles_outlined_as_one_are_cut_apart(parts: int, monkeypatch) -> None:
    """Two or three tiles side by side whose seams the locator missed come as one
    outline of that many tiles' area, read unsure (dev 61321 hard: k8 o8 r8 read r1 at
    0.19): it is cut in two, else in three (``TILE_PARTS``), and each part read surely;
    three tiles cut in two give no part that is one tile."""
    _without_missed_tiles(monkeypatch)
    runs = right = 0
    for scene, tiles, quads in map(_lying_tiles, (7400, 7401, 7402, 7403)):
        side = float(np.median([np.linalg.norm(q[1] - q[0]) for q in quads]))
        after = {a: b for a in range(len(tiles)) for b in range(len(tiles))
                 if np.linalg.norm(quads[a][1] - quads[b][0]) < 0.1 * side
                 and np.linalg.norm(quads[a][2] - quads[b][3]) < 0.1 * side}
        run = next(([a, b] for a, b in after.items()), None) if parts == 2 else next(
            ([a, b, after[b]] for a, b in after.items() if b in after), None)
        if run is None:
            continue
        first, last = run[0], run[-1]
        merged = np.array([quads[first][0], quads[last][1], quads[last][2], quads[first][3]],
                          np.float32)
        rest = [q for k, q in enumerate(quads) if k not in run]
        found = Detections(np.array([merged, *rest]), ("nummix_tile",) * (len(rest) + 1))
        read = classify(scene.image, found, game="nummix", ocr="off")
        runs += 1
        assert len(read) == len(found) + parts - 1
        centres = read.quads.mean(axis=1)
        for k in run:
            near = int(np.argmin(np.linalg.norm(centres - quads[k].mean(axis=0), axis=1)))
            right += (read.labels[near] == tiles[k].label
                      and float(read.confidences[near]) >= 0.8)
    assert runs >= (3 if parts == 2 else 2)
    assert right >= parts * runs - 1, (right, runs)


def test_two_tiles_outlined_off_their_seam_are_cut_where_the_tiles_are() -> None:
    """Two touching tiles in one outline that starts a fifth of a tile into the next
    tile (or short of the first) and runs as far past the second: cut in halves, each
    part straddles a seam and reads unsure; the cuts moved a sixth of a part along
    (``TILE_CUT_SHIFTS``) read both tiles surely (28 -> 43 of 44 sure and right when
    this was measured)."""
    from companion.vision.detections import cut_across

    square = np.array([[0, 0], [40, 0], [40, 10], [0, 10]], np.float32)
    assert np.allclose(cut_across(square, 2, shift=0.25)[0][:, 0], [5, 25, 25, 5])
    pairs = right = 0
    for offset in (0.2, -0.2):
        for scene, tiles, quads in map(_lying_tiles, (7400, 7401, 7402, 7403)):
            side = float(np.median([np.linalg.norm(q[1] - q[0]) for q in quads]))
            after = [(a, b) for a in range(len(tiles)) for b in range(len(tiles))
                     if np.linalg.norm(quads[a][1] - quads[b][0]) < 0.1 * side
                     and np.linalg.norm(quads[a][2] - quads[b][3]) < 0.1 * side][:2]
            for a, b in after:
                moved = np.array([quads[a][0], quads[b][1], quads[b][2], quads[a][3]],
                                 np.float32) + (quads[b][1] - quads[a][0]) / 2 * offset
                rest = [q for k, q in enumerate(quads) if k not in (a, b)]
                found = Detections(np.array([moved, *rest]), ("nummix_tile",) * (len(rest) + 1))
                read = classify(scene.image, found, game="nummix", ocr="off")
                pairs += 1
                for k in (a, b):
                    label, conf = _reading_at(read, quads[k].mean(axis=0))
                    right += label == tiles[k].label and conf >= 0.8
    assert pairs >= 12
    assert right >= 2 * pairs - 2, (right, pairs)


def test_two_tiles_outlined_as_one_with_one_tile_near_are_cut_apart() -> None:
    """Dev scene 60000 (normal): o7 and b10, apart from the other tiles, come out of the
    locator as one outline with only one located tile near (``TILE_PAIR_NEAR``); its area
    is measured against the photo's other tiles, it is cut in two and the state is read
    exact (with the near tile alone it went uncut, read b5 at 0.20, and b10 was lost)."""
    from companion.readers.photo import read_photo
    from companion.readers.truth import compare, given_names
    from companion.synth import render_scene

    scene = render_scene("nummix", seed=60000, difficulty="normal")
    players, caller = given_names(scene)
    read = read_photo(scene.image, game="nummix", players=players, caller=caller)
    assert compare(scene, read.reading).state


def test_a_tile_the_locator_missed_beside_a_sure_one_is_found() -> None:
    """Every third lying tile left out of the located outlines: those with a tile beside
    them are found again through their neighbour's outline stepped over and read right
    (``missed_beside_sure``: 14 of 20, none without it); no tile is added where the
    photo has none."""
    missing = found = 0
    for scene, tiles, quads in map(_lying_tiles, (7400, 7401, 7402)):
        kept = [k for k in range(len(tiles)) if k % 3]
        read = classify(scene.image, Detections(np.array([quads[k] for k in kept]),
                                                ("nummix_tile",) * len(kept)),
                        game="nummix", ocr="off")
        truth = [np.asarray(p.quad, np.float32) for p in scene.pieces
                 if p.kind == "nummix_tile"]
        for q in read.quads[len(kept):]:  # each added outline lies on a tile
            assert max(quad_iou(q, t) for t in truth) >= 0.5
        for k in range(0, len(tiles), 3):
            missing += 1
            label, sure = _reading_at(read, quads[k].mean(axis=0))
            at = read.quads[int(np.argmin(np.linalg.norm(
                read.quads.mean(axis=1) - quads[k].mean(axis=0), axis=1)))]
            found += (quad_iou(at, quads[k]) >= 0.5 and label == tiles[k].label
                      and sure >= 0.8)
    assert missing >= 15
    assert found >= 0.6 * missing, (found, missing)


def test_no_missed_tile_is_added_past_the_photos_edge() -> None:
    """Dev scene 61721 (normal): a rack's o9 at the photo's bottom edge, stepped over
    past it, read o1 at 0.83 from the edge pixels repeated, an outline wholly off the
    photo that stood in the grid and kept the rack from being read apart. No located
    tile lies off the photo, and the grid is read exact."""
    from companion.readers.photo import read_photo
    from companion.readers.truth import compare, given_names
    from companion.synth import render_scene

    scene = render_scene("nummix", seed=61721, difficulty="normal")
    players, caller = given_names(scene)
    read = read_photo(scene.image, game="nummix", players=players, caller=caller)
    height, width = scene.image.shape[:2]
    centres = read.pieces.detections.quads.mean(axis=1)
    assert np.all((centres >= 0) & (centres < [width, height]))
    assert compare(scene, read.reading).state


def test_a_rack_tile_read_surely_a_quarter_turn_off_is_read_standing() -> None:
    """Dev scene 61127 (normal): k13 and r16 stand on a rack seen steeply, each beside
    one sure standing tile, outlined a quarter turn off and read k5 and r5 surely; with
    the ledge at the foot of the turned outline they are read standing (k13 sure, r16
    unsure: a sure reading against the ledge is no reading), go on the rack, and the
    grid is read exact (before, both stood in it)."""
    from companion.readers.photo import read_photo
    from companion.readers.truth import compare, given_names
    from companion.synth import render_scene

    scene = render_scene("nummix", seed=61127, difficulty="normal")
    players, caller = given_names(scene)
    read = read_photo(scene.image, game="nummix", players=players, caller=caller)
    assert compare(scene, read.reading).state
    tiles = read.pieces.detections
    for truth in (p for p in scene.pieces if p.label in ("k13", "r16") and p.extra.get(
            "standing")):
        label, sure = _reading_at(tiles, np.asarray(truth.quad, np.float32).mean(axis=0))
        assert label == truth.label or sure < 0.8, (label, sure)


def _reading_at(read: Detections, centre: np.ndarray) -> tuple[str | None, float]:
    """The label and confidence of the piece read nearest ``centre``."""
    j = int(np.argmin(np.linalg.norm(read.quads.mean(axis=1) - centre, axis=1)))
    return read.labels[j], float(read.confidences[j])


def test_a_tile_outlined_far_larger_than_a_tile_is_read_through_a_tile_sized_outline(
        monkeypatch) -> None:
    """Tiles whose outline runs over the table beyond their head (0.7 of a tile more):
    of those read unsure through it, all but one are read sure and right through a
    tile-sized outline in it (``tile_sized``; measured without ``nearest_sure_outline``,
    which reads some of them right from a sure neighbour's outline too)."""
    from companion.vision import classify as module

    monkeypatch.setattr(module, "nearest_sure_outline", lambda read, *_: read)
    unsure = right = 0
    for scene, tiles, quads in map(_lying_tiles, (7400, 7401, 7402, 7403)):
        for k in range(0, len(tiles), 3):
            grown = quads[k].copy()
            grown[:2] -= 0.7 * (quads[k][3] - quads[k][0])  # its top edge moved up
            found = Detections(np.array([grown, *quads[:k], *quads[k + 1:]]),
                               ("nummix_tile",) * len(quads))
            centre = quads[k].mean(axis=0)
            with monkeypatch.context() as m:
                m.setattr(module, "tile_sized", lambda read, *_: read)
                without = classify(scene.image, found, game="nummix", ocr="off")
                if _reading_at(without, centre)[1] >= 0.8:
                    continue
            unsure += 1
            label, sure = _reading_at(classify(scene.image, found, game="nummix", ocr="off"),
                                      centre)
            right += label == tiles[k].label and sure >= 0.8
    assert unsure >= 5
    assert right >= unsure - 1, (right, unsure)


def test_an_outline_at_a_rack_ledge_is_not_read_at_a_tiles_size(monkeypatch) -> None:
    """Two unsure outlines half again a tile's size: the one with a rack's ledge at its
    foot is left to the ledge's reading (dev 61732: a stray on a rack's end read k4 at
    0.86 through a tile-sized outline), the one on the table is read at a tile's size."""
    from companion.vision import reading
    from companion.vision.reading import PROBABILITIES, Reading, load_model
    from companion.vision.tiles import tile_sized

    image = np.full((400, 700, 3), (150, 160, 170), np.uint8)  # a light table
    cv2.rectangle(image, (90, 274), (200, 296), (32, 30, 30), -1)  # a rack's ledge
    sure = [np.array([[x, 40], [x + 54, 40], [x + 54, 114], [x, 114]], np.float32)
            for x in (300, 356, 412)]
    at_ledge = np.array([[100, 154], [184, 154], [184, 274], [100, 274]], np.float32)
    on_table = np.array([[500, 200], [584, 200], [584, 320], [500, 320]], np.float32)
    for quad in (*sure, at_ledge, on_table):
        cv2.fillConvexPoly(image, quad.astype(np.int32), (235, 240, 242))
    model = load_model("nummix_tile")
    flat = np.full(len(model.labels), 1.0 / len(model.labels))
    read = Detections(np.array([*sure, at_ledge, on_table]), ("nummix_tile",) * 5,
                      labels=("r7", "b2", "k1", "o3", "o4"),
                      confidences=np.array([0.99, 0.98, 0.97, 0.3, 0.3], np.float32),
                      oriented=(True,) * 5, data={PROBABILITIES: (flat,) * 5})
    asked: list[np.ndarray] = []

    def unsure_readings(_model: object, _image: object, quads: list) -> list:
        asked.extend(quads)
        return [Reading(flat, False) for _ in quads]

    monkeypatch.setattr(reading, "read_quads", unsure_readings)  # as surer_readings asks
    tile_sized(read, image, model)
    centres = np.array([q.mean(axis=0) for q in asked])
    assert len(asked) > 0
    assert np.linalg.norm(centres - on_table.mean(axis=0), axis=1).max() < 60
    assert np.linalg.norm(centres - at_ledge.mean(axis=0), axis=1).min() > 200


def test_a_fingertip_taken_for_a_tile_is_dropped(monkeypatch) -> None:
    """A pink patch of skin outlined as a tile reads unsure and its face is unlike the
    photo's tiles': it is dropped, and every real tile kept."""
    import cv2

    from companion.synth import render_scene

    scene = render_scene("nummix", seed=7400, difficulty="easy")
    tiles = [p for p in scene.pieces if p.kind == "nummix_tile" and not p.covered
             and p.visible_fraction > 0.99]
    quads = np.array([np.asarray(p.quad, np.float32) for p in tiles])
    side = quads[0, 1] - quads[0, 0]
    down = quads[0, 3] - quads[0, 0]
    image = scene.image.copy()
    corner = np.float32([30, 30])
    finger = np.array([corner, corner + side, corner + side + down, corner + down])
    cv2.fillConvexPoly(image, np.round(finger).astype(np.int32), (150, 160, 215))  # skin
    found = Detections(np.array([*quads, finger]), ("nummix_tile",) * (len(tiles) + 1))
    _without_missed_tiles(monkeypatch)
    read = classify(image, found, game="nummix", ocr="off")
    assert len(read) == len(tiles)
    centres = read.quads.mean(axis=1)
    assert np.linalg.norm(centres - finger.mean(axis=0), axis=1).min() > 5


def test_a_pale_fingertip_taken_for_a_tile_is_dropped(monkeypatch) -> None:
    """A paler patch of skin (11.7 off the tiles' faces in colour, 36 darker; dev 61317:
    a finger 11.3 off and 28 darker) outlined as a tile is dropped (``TILE_STRAY_CHROMA``),
    every real tile kept; at Cat in the Box's bound (``STRAY_CHROMA``) it would stand."""
    from companion.synth import render_scene
    from companion.vision import strays as module

    scene = render_scene("nummix", seed=7400, difficulty="easy")
    tiles = [p for p in scene.pieces if p.kind == "nummix_tile" and not p.covered
             and p.visible_fraction > 0.99]
    quads = np.array([np.asarray(p.quad, np.float32) for p in tiles])
    side, down = quads[0, 1] - quads[0, 0], quads[0, 3] - quads[0, 0]
    image = scene.image.copy()
    corner = np.float32([30, 30])
    finger = np.array([corner, corner + side, corner + side + down, corner + down])
    cv2.fillConvexPoly(image, np.round(finger).astype(np.int32), (172, 184, 218))
    found = Detections(np.array([*quads, finger]), ("nummix_tile",) * (len(tiles) + 1))
    _without_missed_tiles(monkeypatch)
    read = classify(image, found, game="nummix", ocr="off")
    assert len(read) == len(tiles)
    assert sorted(read.labels) == sorted(p.label for p in tiles)
    monkeypatch.setitem(module.STRAY_RULES, "nummix_tile", module.StrayRule(
        module.STRAY_CHROMA, tiny=module.TINY_TILE))
    assert len(classify(image, found, game="nummix", ocr="off")) == len(tiles) + 1


def test_a_lone_fingertip_in_the_tiles_colour_is_dropped(monkeypatch) -> None:
    """Dev scene 60155 (normal): a hand's fingertip, far from every tile, is outlined
    and read unknown; white balance leaves it near the faces' colour (6 off), so only
    being darker and alone tells it (``LONE_TILE``). Dropped, the state is read exact;
    without that bound it stands in the grid as '?'."""
    from companion.readers.photo import read_photo
    from companion.readers.truth import compare, given_names
    from companion.synth import render_scene
    from companion.vision import strays as module

    scene = render_scene("nummix", seed=60155, difficulty="normal")
    players, caller = given_names(scene)
    read = read_photo(scene.image, game="nummix", players=players, caller=caller)
    assert compare(scene, read.reading).state
    monkeypatch.setitem(module.STRAY_RULES, "nummix_tile", module.StrayRule(
        module.TILE_STRAY_CHROMA, tiny=module.TINY_TILE))
    kept = read_photo(scene.image, game="nummix", players=players, caller=caller)
    assert len(kept.pieces.detections) == len(read.pieces.detections) + 1
    assert any("?" in line.split() for line in kept.reading.state["grid"])


def test_a_hands_fingers_outlined_as_one_tile_are_dropped(monkeypatch) -> None:
    """Dev scene 60064 (normal): a hand's fingers, beside a group of tiles and near the
    faces' colour (8 off), are outlined as one "tile" 5.7 times a tile's area and read
    unknown; so large an unsure outline is no tile (``HUGE_TILE``) and the grid holds
    no '?'; without that bound the fingers stand in it as one."""
    from companion.readers.photo import read_photo
    from companion.readers.truth import given_names
    from companion.synth import render_scene
    from companion.vision import strays as module

    scene = render_scene("nummix", seed=60064, difficulty="normal")
    players, caller = given_names(scene)
    read = read_photo(scene.image, game="nummix", players=players, caller=caller)
    assert not any("?" in line.split() for line in read.reading.state["grid"])
    # the hand itself is named (vision.cover), as a part of the photo, not as a piece
    assert [u["what"] for u in read.reading.unknown] == ["table"]
    monkeypatch.setitem(module.STRAY_RULES, "nummix_tile",
                        replace(module.STRAY_RULES["nummix_tile"], huge=0.0))
    kept = read_photo(scene.image, game="nummix", players=players, caller=caller)
    assert any("?" in line.split() for line in kept.reading.state["grid"])


def test_a_scrap_outlined_across_two_tiles_is_dropped(monkeypatch) -> None:
    """Dev scene 61934 (normal): an outline across two touching tiles, 0.86 of it inside
    their sure outlines, reads unknown; it is no tile of its own (``COVERED_TILE``) and
    the state is read exact; without that bound it stands in the grid as '?'."""
    from companion.readers.photo import read_photo
    from companion.readers.truth import compare, given_names
    from companion.synth import render_scene
    from companion.vision import strays as module

    scene = render_scene("nummix", seed=61934, difficulty="normal")
    players, caller = given_names(scene)
    read = read_photo(scene.image, game="nummix", players=players, caller=caller)
    assert compare(scene, read.reading).state
    monkeypatch.setitem(module.STRAY_RULES, "nummix_tile",
                        replace(module.STRAY_RULES["nummix_tile"], covered=0.0))
    kept = read_photo(scene.image, game="nummix", players=players, caller=caller)
    assert any("?" in line.split() for line in kept.reading.state["grid"])


def test_a_scrap_of_a_tile_outlined_as_a_tile_is_dropped(monkeypatch) -> None:
    """A small outline in a tile's corner (a tenth of a tile: plain face, the tile's own
    colour) reads unsure: it is dropped as far smaller than the sure tiles
    (``TINY_TILE``), and every real tile kept; without that bound it would stand."""
    from companion.synth import render_scene
    from companion.vision import strays as module

    scene = render_scene("nummix", seed=7400, difficulty="easy")
    tiles = [p for p in scene.pieces if p.kind == "nummix_tile" and not p.covered
             and p.visible_fraction > 0.99]
    quads = np.array([np.asarray(p.quad, np.float32) for p in tiles])
    corner = quads[0, 0]
    side, down = quads[0, 1] - corner, quads[0, 3] - corner
    scrap = np.array([corner + 0.05 * down, corner + 0.3 * side + 0.05 * down,
                      corner + 0.3 * side + 0.35 * down, corner + 0.35 * down], np.float32)
    found = Detections(np.array([*quads, scrap]), ("nummix_tile",) * (len(tiles) + 1))
    _without_missed_tiles(monkeypatch)
    read = classify(scene.image, found, game="nummix", ocr="off")
    assert len(read) == len(tiles)
    assert sorted(read.labels) == sorted(p.label for p in tiles)
    monkeypatch.setitem(module.STRAY_RULES, "nummix_tile", module.StrayRule(
        module.TILE_STRAY_CHROMA))
    kept = classify(scene.image, found, game="nummix", ocr="off")
    assert len(kept) == len(tiles) + 1  # read unsure, in the tile's colour: only its size tells


def test_a_slanted_rack_tile_is_read_through_a_parallelogram(monkeypatch) -> None:
    """A tile standing on a rack, seen at a slant, is a parallelogram; located, it is
    a rectangle about it, often read unsure. Standing on the ledge, it is read again
    through parallelograms in that rectangle, and more rack tiles are read surely."""
    from companion.synth import render_scene
    from companion.vision import tiles as module
    from companion.vision.detections import quad_iou
    from companion.vision.pipeline import read_image

    scenes = [render_scene("nummix", seed=seed) for seed in range(61100, 61130)]

    def tally() -> tuple[int, int, int]:
        seen = right = wrong = 0
        for scene in scenes:
            found = read_image(scene.image, game="nummix", ocr="off").detections
            rack = [p for p in scene.pieces if p.owner == "rack" and not p.covered]
            for i in found:
                if not rack or found.kinds[i] != "nummix_tile":
                    continue
                best = max(rack, key=lambda p: quad_iou(p.quad, found.quads[i]))
                if quad_iou(best.quad, found.quads[i]) < 0.5:
                    continue
                seen += 1
                if found.confidences[i] >= 0.8:
                    ok = found.labels[i] == best.label
                    right, wrong = right + ok, wrong + (not ok)
        return seen, right, wrong

    seen, searched, searched_wrong = tally()
    monkeypatch.setattr(module, "STANDING_SHEARS", ())
    _, plain, plain_wrong = tally()
    # here 130 of 143 located rack tiles sure and right searched, 126 not; 3 and 3 sure
    # and wrong
    assert seen >= 120, seen
    assert searched >= plain + 3, (searched, plain, seen)
    assert searched_wrong <= plain_wrong + 1, (searched_wrong, plain_wrong)


def test_a_qwixx_play_in_one_outline_is_read_card_by_card() -> None:
    """Two or three played cards of a colour lying side by side come out of the locator
    as one outline now and then: cut into as many parts as its area holds, each read
    sure the same way up, it is read as those cards; the true outlines stay whole."""
    import cv2

    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene
    from companion.vision.detections import order_clockwise

    joined = split = 0
    for seed in range(9):
        scene = render_scene("qwixx", seed=seed, difficulty="easy")
        truth = detections_from_scene(scene)
        cards = [i for i in truth if truth.kinds[i] == "qwixx_card"]
        played = [i for i in cards if not str(truth.labels[i]).startswith("back")]
        if len(played) not in (2, 3) or len(cards) - len(played) < 2:
            continue
        joined += 1
        corners = truth.quads[played].reshape(-1, 2)
        union = order_clockwise(cv2.boxPoints(cv2.minAreaRect(corners)))
        rest = truth.select([i for i in truth if i not in played])
        found = Detections(np.concatenate([rest.quads, union[None]]),
                           rest.kinds + ("qwixx_card",))
        read = classify(scene.image, found, game="qwixx", ocr="off")
        if len(read) == len(truth):
            assert sorted(read.labels[i] for i in read if read.kinds[i] == "qwixx_card") \
                == sorted(truth.labels[i] for i in cards), seed
            split += 1
        whole = classify(scene.image, Detections(truth.quads, truth.kinds), game="qwixx",
                         ocr="off")
        assert len(whole) == len(truth), seed  # nothing else split
    # here 5 of 5 (two of two cards, three of three)
    assert joined >= 4 and split >= joined - 1, (joined, split)


def test_an_unsure_tile_beside_standing_tiles_is_turned_to_their_ledge() -> None:
    from companion.vision.standing import front_bands
    from companion.vision.tiles import _feet_as_neighbours

    image = np.full((400, 600, 3), (150, 160, 170), np.uint8)  # a light table
    cv2.rectangle(image, (90, 274), (370, 296), (32, 30, 30), -1)  # the rack's ledge
    tiles = [np.array([[x, 200], [x + 54, 200], [x + 54, 274], [x, 274]], np.float32)
             for x in (100, 156, 212)]
    for tile in tiles:
        cv2.fillConvexPoly(image, tile.astype(np.int32), (235, 240, 242))
    far = np.array([[450, 60], [504, 60], [504, 134], [450, 134]], np.float32)
    cv2.fillConvexPoly(image, far.astype(np.int32), (235, 240, 242))
    quads = np.array([*tiles[:2], np.roll(tiles[2], -1, axis=0), far], np.float32)
    read = Detections(quads=quads, kinds=("nummix_tile",) * 4, labels=("r7", "b2", "k1", "o3"),
                      confidences=np.array([0.99, 0.98, 0.3, 0.3], np.float32),
                      oriented=(True,) * 4)
    bands = front_bands(image, read)
    feet = _feet_as_neighbours(read, bands, {})
    assert feet == {2: (3,)}  # the far tile stands in no row
    assert np.allclose(rotate_quad(quads[2], 3), tiles[2])


def test_an_unsure_tile_with_a_ledge_along_a_side_is_turned_onto_it() -> None:
    """A blank face outlined a quarter turn off, the ledge along its side: no reading
    through the turned outlines is sure, yet the outline comes back standing on the
    ledge (the reading kept), so the reader puts the tile on the rack, not the grid."""
    from companion.vision.reading import PROBABILITIES, load_model
    from companion.vision.standing import is_ledge
    from companion.vision.tiles import feet_on_ledges

    image = np.full((400, 600, 3), (150, 160, 170), np.uint8)  # a light table
    cv2.rectangle(image, (290, 274), (364, 296), (32, 30, 30), -1)  # the rack's ledge
    tile = np.array([[300, 200], [354, 200], [354, 274], [300, 274]], np.float32)
    cv2.fillConvexPoly(image, tile.astype(np.int32), (235, 240, 242))
    labels = load_model("nummix_tile").labels
    probs = np.full(len(labels), 0.21 / (len(labels) - 1))
    probs[labels.index("r3")] = 0.79
    read = Detections(quads=np.roll(tile, -1, axis=0)[None], kinds=("nummix_tile",),
                      labels=("r3",), confidences=np.array([0.79], np.float32),
                      oriented=(True,), data={PROBABILITIES: (probs,)})
    out = feet_on_ledges(read, image, MODELS_DIR)
    assert np.allclose(out.quads[0], tile)
    assert out.labels[0] == "r3" and float(out.confidences[0]) == pytest.approx(0.79)
    assert is_ledge([out.data["front"][0]])


def test_row_turns_need_the_neighbours_asked_for() -> None:
    from companion.vision.standing import front_bands
    from companion.vision.tiles import _row_turns

    image = np.full((400, 600, 3), (150, 160, 170), np.uint8)
    cv2.rectangle(image, (90, 274), (370, 296), (32, 30, 30), -1)
    tiles = [np.array([[x, 200], [x + 54, 200], [x + 54, 274], [x, 274]], np.float32)
             for x in (100, 156, 212)]
    for tile in tiles:
        cv2.fillConvexPoly(image, tile.astype(np.int32), (235, 240, 242))
    quads = np.array([tiles[0], tiles[1], rotate_quad(tiles[2], 2)], np.float32)  # upside down
    read = Detections(quads=quads, kinds=("nummix_tile",) * 3, labels=("r7", "b2", "o9"),
                      confidences=np.array([0.99, 0.98, 0.9], np.float32), oriented=(True,) * 3)
    bands = front_bands(image, read)
    assert _row_turns(read, bands, [2], neighbours=2) == {2: 2}
    assert _row_turns(read, bands, [0], neighbours=2) == {}  # one other standing tile
    assert _row_turns(read, bands, [0], neighbours=1) == {0: 0}


def test_an_outline_straddling_a_seam_is_stepped_from_its_sure_neighbour() -> None:
    from companion.synth import render_scene
    from companion.vision.colour import apply_gains, white_gains
    from companion.vision.reading import load_model
    from companion.vision.tiles import stepped_from_neighbours

    scene = render_scene("nummix", seed=4243, difficulty="normal")
    tiles = [p for p in scene.pieces if p.kind == "nummix_tile" and not p.covered]
    above = next(p for p in tiles if p.label == "r6")
    below = next(p for p in tiles if p.label == "k6")  # touching r6's foot
    truth = np.asarray(below.quad, np.float32)
    down = (truth[3] - truth[0] + truth[2] - truth[1]) / 2
    straddling = truth - 0.45 * down  # half on r6 (a faint seam)
    quads = np.array([np.asarray(above.quad, np.float32), straddling], np.float32)
    read = Detections(quads=quads, kinds=("nummix_tile",) * 2, labels=("r6", "k9"),
                      confidences=np.array([0.99, 0.3], np.float32), oriented=(True, True))
    balanced = apply_gains(scene.image, white_gains(scene.image))
    out = stepped_from_neighbours(read, balanced, load_model("nummix_tile"))
    assert out.labels[1] == "k6" and float(out.confidences[1]) >= 0.8
    assert quad_iou(out.quads[1], truth) > 0.85
    assert out.labels[0] == "r6" and np.allclose(out.quads[0], quads[0])


def test_tesseract_is_asked_last_and_only_about_pieces_still_unsure(monkeypatch) -> None:
    """The fingertip outlined as a tile reads unsure but is dropped as no tile: Tesseract
    (a ~100 ms process) is not started for it; every piece it is asked about is one the
    reading reports, still unsure."""
    import cv2

    from companion.synth import render_scene
    from companion.vision import ocr

    asked: list[int] = []
    real_read_numbers = ocr.read_numbers

    def counting(crops, **options):
        asked.append(len(crops))
        return real_read_numbers(crops, **options)

    monkeypatch.setattr(ocr, "read_numbers", counting)
    scene = render_scene("nummix", seed=7400, difficulty="easy")
    tiles = [p for p in scene.pieces if p.kind == "nummix_tile" and not p.covered
             and p.visible_fraction > 0.99]
    quads = np.array([np.asarray(p.quad, np.float32) for p in tiles])
    image = scene.image.copy()
    corner = np.float32([30, 30])
    finger = np.array([corner, corner + quads[0, 1] - quads[0, 0],
                       corner + quads[0, 2] - quads[0, 0], corner + quads[0, 3] - quads[0, 0]])
    cv2.fillConvexPoly(image, np.round(finger).astype(np.int32), (150, 160, 215))  # skin
    found = Detections(np.array([*quads, finger]), ("nummix_tile",) * (len(tiles) + 1))
    _without_missed_tiles(monkeypatch)
    read = classify(image, found, game="nummix", ocr="auto")
    assert len(read) == len(tiles)  # the fingertip was dropped ...
    assert sum(asked) == sum(read.data["second_opinion"])  # ... and never sent to Tesseract
    assert all(key in ("alternatives", "second_opinion", "front", "head", "joined")
               for key in read.data), sorted(read.data)

    blank = np.full((200, 200, 3), (60, 90, 120), np.uint8)  # a tile with no number
    blank[60:140, 70:128] = (205, 230, 238)
    quad = np.array([[[72, 62], [126, 62], [126, 138], [72, 138]]], np.float32)
    asked.clear()
    read = classify(blank, Detections(quad, ("nummix_tile",)), game="nummix", ocr="auto")
    assert asked == [1] and read.data["second_opinion"] == (True,)
    assert read.confidences[0] < 0.8


def test_a_card_outlined_onto_the_board_is_read_through_a_card_sized_outline() -> None:
    """A card lying against the research board gets an outline running half a card onto
    the table past it; measured in the board's plane it is too large for a card, so it
    is read through a card-sized outline in its corner, fitted to the card."""
    from companion.synth import render_scene

    checked = 0
    for seed in (7300, 7301, 7302, 7303):
        scene = render_scene("catbox", seed=seed, difficulty="easy")
        board = next(p for p in scene.pieces if p.kind == "catbox_board")
        cards = [p for p in scene.pieces if p.kind == "catbox_card" and not p.covered
                 and p.visible_fraction > 0.99]
        if not cards:
            continue
        card = cards[0]
        truth = np.asarray(card.quad, np.float32)
        grown = truth.copy()
        grown[2:] += 0.6 * ((truth[3] - truth[0]) + (truth[2] - truth[1])) / 2  # past its foot
        found = Detections(np.array([np.asarray(board.quad, np.float32), grown]),
                           ("catbox_board", "catbox_card"))
        read = classify(scene.image, found, game="catbox", ocr="off")
        k = read.kinds.index("catbox_card")
        assert quad_iou(read.quads[k], truth) > 0.85, (seed, quad_iou(grown, truth))
        assert read.labels[k] == card.label and read.confidences[k] >= 0.95
        checked += 1
    assert checked >= 3


def test_a_fingertip_taken_for_a_cat_in_the_box_card_is_dropped() -> None:
    """As for Nummix tiles: a patch of skin outlined as a card reads unsure, its face is
    unlike the sure cards' white, and it is dropped; every real card is kept."""
    from companion.synth import render_scene

    for seed in (7300, 7301, 7302, 7303, 7304):
        scene = render_scene("catbox", seed=seed, difficulty="easy")
        cards = [p for p in scene.pieces if p.kind == "catbox_card" and not p.covered
                 and p.visible_fraction > 0.99]
        if len(cards) >= 3:
            break
    assert len(cards) >= 3
    quads = np.array([np.asarray(p.quad, np.float32) for p in cards])
    image = scene.image.copy()
    corner = np.float32([20, 20])
    finger = quads[0] - quads[0].min(axis=0) + corner
    cv2.fillConvexPoly(image, np.round(finger).astype(np.int32), (110, 140, 200))  # skin
    found = Detections(np.array([*quads, finger]), ("catbox_card",) * (len(cards) + 1))
    read = classify(image, found, game="catbox", ocr="off")
    assert len(read) == len(cards)
    assert sorted(read.labels) == sorted(p.label for p in cards)


def test_an_unsure_outline_far_smaller_than_a_card_is_no_cat_in_the_box_card() -> None:
    """Measured in the research board's plane, a blank white patch a fifth of a card's
    size, read unsure, is no card (a fingertip, a glint); the real cards are kept."""
    from companion.synth import render_scene

    scene = render_scene("catbox", seed=7300, difficulty="easy")
    board = next(p for p in scene.pieces if p.kind == "catbox_board")
    cards = [p for p in scene.pieces if p.kind == "catbox_card" and not p.covered
             and p.visible_fraction > 0.99]
    quads = [np.asarray(p.quad, np.float32) for p in cards]
    image = scene.image.copy()
    patch = (quads[0] - quads[0].mean(axis=0)) * 0.45 + np.float32([40, 40])
    cv2.fillConvexPoly(image, np.round(patch).astype(np.int32), (235, 235, 235))
    found = Detections(np.array([np.asarray(board.quad, np.float32), *quads, patch]),
                       ("catbox_board",) + ("catbox_card",) * (len(cards) + 1))
    read = classify(image, found, game="catbox", ocr="off")
    kept = [i for i in read if read.kinds[i] == "catbox_card"]
    assert len(kept) == len(cards)
    assert sorted(read.labels[i] for i in kept) == sorted(p.label for p in cards)


def test_a_patch_of_table_read_fairly_sure_as_a_nox_card_is_dropped() -> None:
    """A Nox "card" read under 0.9 whose face is a dark brown cloth's, unlike the sure
    cards' faces, is a stray; a real card read as unsure is kept."""
    from companion.synth import render_scene
    from companion.vision.colour import white_balance
    from companion.vision.strays import NOX_DOUBTFUL, without_strays

    scene = render_scene("nox", seed=7100, difficulty="easy")
    cards = [p for p in scene.pieces if p.kind == "nox_card" and not p.covered
             and p.visible_fraction > 0.99][:5]
    assert len(cards) >= 4
    image = scene.image.copy()
    quads = [np.asarray(p.quad, np.float32) for p in cards]
    patch = quads[0] - quads[0].min(axis=0) + np.float32([5, 5])
    cv2.fillConvexPoly(image, np.round(patch).astype(np.int32), (4, 10, 45))  # dark cloth
    balanced, _ = white_balance(image)
    confidences = [1.0] * (len(cards) - 1) + [0.85, 0.85]  # the last card and the patch
    read = Detections(np.array([*quads, patch]), ("nox_card",) * (len(cards) + 1),
                      labels=tuple(p.label for p in cards) + ("5",),
                      confidences=np.float32(confidences))
    kept = without_strays(read, balanced, "nox_card")
    assert NOX_DOUBTFUL > 0.85  # the 0.85 pieces above are held to the faces
    assert len(kept) == len(cards)
    assert kept.labels == tuple(p.label for p in cards)


def test_a_scrap_of_a_nox_card_outlined_apart_is_dropped() -> None:
    """An outline on a card's corner, most of it inside that card's sure outline and
    read as its corner index at 0.89, is no card of its own (``NOX_COVERED``); a real
    card read 0.89 beside the sure ones is kept."""
    from companion.synth import render_scene
    from companion.vision.colour import white_balance
    from companion.vision.strays import NOX_COVERED, _covered_share, without_strays

    scene = render_scene("nox", seed=7100, difficulty="easy")
    cards = [p for p in scene.pieces if p.kind == "nox_card" and not p.covered
             and p.visible_fraction > 0.99][:5]
    assert len(cards) >= 4
    quads = [np.asarray(p.quad, np.float32) for p in cards]
    corner = quads[0][0]
    scrap = corner + (quads[0] - corner) * 0.3  # a tenth of the card, at its corner
    scrap = scrap + (quads[0][2] - quads[0][0]) * 0.05  # a little way inside it
    balanced, _ = white_balance(scene.image)
    read = Detections(np.array([*quads, scrap]), ("nox_card",) * (len(cards) + 1),
                      labels=tuple(p.label for p in cards) + ("4",),
                      confidences=np.float32([1.0] * (len(cards) - 1) + [0.89, 0.89]))
    assert _covered_share(read, list(range(len(cards) - 1)), len(cards),
                          balanced.shape[:2]) >= NOX_COVERED
    kept = without_strays(read, balanced, "nox_card")
    assert kept.labels == tuple(p.label for p in cards)


def _played_qwixx_cards(seeds: tuple[int, ...], *, overlap: float, sure: float
                        ) -> tuple[int, int]:
    """Face-up played cards of rendered normal Qwixx scenes read at ``sure`` or more,
    right and wrong, each the located card overlapping its truth card most (at
    ``overlap`` or more), located as ``companion read`` does (Tesseract off)."""
    from companion.calibration.markers import detect_markers
    from companion.synth import render_scene
    from companion.vision.cards import same_face
    from companion.vision.pipeline import read_image

    right = wrong = 0
    for seed in seeds:
        scene = render_scene("qwixx", seed=seed, difficulty="normal")
        found = read_image(scene.image, game="qwixx", ocr="off",
                           markers=tuple(detect_markers(scene.image))).detections
        for piece in scene.pieces:
            if piece.kind != "qwixx_card" or piece.label.startswith("back"):
                continue
            near = [(quad_iou(found.quads[i], piece.quad), i) for i in found
                    if found.kinds[i] == "qwixx_card"]
            most, i = max(near, default=(0.0, -1))
            if most < overlap or float(found.confidences[i]) < sure:
                continue
            ok = same_face(str(found.labels[i]), piece.label)
            right, wrong = right + ok, wrong + (not ok)
            assert found.data["alternatives"][i][0][0] == found.labels[i]  # in step
    return right, wrong


def test_fairly_sure_qwixx_cards_are_checked_at_card_size_on_the_sheet(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Played cards whose located outline is turned or too large and takes in part of
    the next card are read as its number fairly surely (0.83-0.94); read again through
    card-sized outlines in the sheet's plane they come out right, or unsure. Development
    scenes where the first reading was wrong, located as ``companion read`` does."""
    from companion.vision import cards as module

    seeds = (61302, 61314, 61327, 61503, 61523)
    checked, checked_wrong = _played_qwixx_cards(seeds, overlap=0.5, sure=MIN_CONFIDENCE)
    monkeypatch.setattr(module, "CARD_CHECK_BELOW", 0.0)
    plain, plain_wrong = _played_qwixx_cards(seeds, overlap=0.5, sure=MIN_CONFIDENCE)
    # here 7 played cards read right and 0 wrong checked, 5 and 2 not (the model trained
    # on 300 located scenes reads most of them right at first)
    assert plain_wrong >= 2, (plain, plain_wrong)  # the scenes still show the fault
    assert checked_wrong <= 1 and checked >= plain + 2, (checked, checked_wrong, plain,
                                                         plain_wrong)


def test_qwixx_cards_outlined_small_are_checked_through_card_sized_outlines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A played card outlined on its white panel, or on its part away from a touching
    card, reads its number as another surely (dev 61603: a g7 read g11 at 0.92, the
    reading whole and wrong; 61103, 61243: an r10 and an r11 read r12); read again
    through card-sized outlines round it, lying as its neighbours do, each comes out
    right or unsure for a played card (``qwixx.PLAYED_SURE``)."""
    from companion.readers.qwixx import PLAYED_SURE
    from companion.vision import cards as module

    seeds = (61603, 61103, 61243)
    checked, checked_wrong = _played_qwixx_cards(seeds, overlap=0.3, sure=PLAYED_SURE)
    monkeypatch.setattr(module, "CARD_CHECK_SMALL", 0.0)
    plain, plain_wrong = _played_qwixx_cards(seeds, overlap=0.3, sure=PLAYED_SURE)
    # here 4 played cards read sure and right, none wrong, checked; 2 and 3 not
    assert plain_wrong >= 3, (plain, plain_wrong)  # the scenes still show the fault
    assert checked_wrong == 0 and checked >= plain + 1, (checked, checked_wrong, plain,
                                                         plain_wrong)


def test_a_rox_card_unsure_is_read_through_its_sure_neighbours_outline(monkeypatch) -> None:
    """A located outline swollen by a hand's shadow (61828) or cut short at a faint seam
    (61810, 61901) is read through a sure neighbour's outline stepped one card over,
    searched from there: on these photos such cards read sure and right, unsure without
    the steps, and no card is read sure and wrong either way."""
    from companion.vision import rox_edges as module

    photos = _located_rox_cards((61828, 61810, 61901))

    stepped = _sure_right_and_wrong(photos)
    monkeypatch.setattr(module, "stepped_outlines", lambda *_, **__: [])
    unstepped = _sure_right_and_wrong(photos)
    # here 48 and 45 (46 since outlines are fitted as the slanted photo shows a square;
    # 48 and 0 against 46 and 1 since the 8-bit rox_edge copy reads the symbols)
    assert stepped[0] >= unstepped[0] + 2 and stepped[1] == 0 <= unstepped[1], (
        stepped, unstepped)


def test_rox_cards_whose_magic_stars_glare_washes_out_are_counted_sure(monkeypatch) -> None:
    """Dev 61036 (normal): a glare spot lies on a row of cards, and their white magic
    stars fade into the white card (read magic at 0.5-0.95, air second), while their
    coloured symbols keep their colour. A symbol read magic that shows no colour
    (``rox_edges.MAGIC_COLOURLESS``) counts sure: through the locator's outlines three
    more cards are read sure and right (four in the photo reader), none sure and wrong
    either way."""
    from companion.vision import rox_edges as module

    photos = _located_rox_cards((61036,))
    checked = _sure_right_and_wrong(photos)
    monkeypatch.setattr(module, "MAGIC_COLOURLESS", 0.0)
    monkeypatch.setattr(module, "RIVAL_PALER", 0.0)  # nor against the air rings alone
    unchecked = _sure_right_and_wrong(photos)
    # here 19 checked, 16 not
    assert checked[0] >= unchecked[0] + 3 and checked[1] == unchecked[1] == 0, (
        checked, unchecked)


def test_rox_cards_whose_magic_stars_look_pale_blue_are_counted_sure(monkeypatch) -> None:
    """Dev 61017 (normal): on cream cards balanced white the white magic stars look pale
    blue, and the model hesitates between magic and water (0.78-0.93), but the cards'
    water drops are three to five times as coloured: a star read magic, water second,
    that pale counts sure (``rox_edges.RIVAL_PALER``), and three cards more are read
    sure and right; water read for a star that pale is doubted, and no card more is
    read sure and wrong (one fewer before the photo was sharpened against the streak the
    cards read surest on, ``rox_edges.STREAK_CHOICES``, which leaves that card unsure
    without it too). Read with the float rox_edge model, whose hesitations these photos
    show (the 8-bit copy the reader runs hesitates less here)."""
    from companion.vision import rox_edges as module
    from companion.vision.reading import float_models

    with float_models():
        photos = _located_rox_cards((61017,))
        checked = _sure_right_and_wrong(photos)
        monkeypatch.setattr(module, "RIVAL_PALER", 0.0)
        unchecked = _sure_right_and_wrong(photos)
    # here 18 and 1 checked, 15 and 1 not (17 and 1, 14 and 2 sharpened against one streak)
    assert checked[0] >= unchecked[0] + 3 and checked[1] <= unchecked[1], (checked, unchecked)


def test_rox_cards_whose_pale_magic_stars_are_read_as_air_are_read_magic(
        monkeypatch) -> None:
    """Dev 61712 (normal): in a glare spot the white magic stars of a row of cards are
    read air or fire at 0.65-0.85, magic second, as pale as magic against the cards' air
    rings: read magic (``rox_edges.STAR_*``), more cards are read sure and right, none
    sure and wrong either way."""
    from companion.vision import rox_edges as module

    photos = _located_rox_cards((61712,))
    starred = _sure_right_and_wrong(photos)
    monkeypatch.setattr(module, "STAR_SECOND_FROM", 2.0)  # no star read magic
    plain = _sure_right_and_wrong(photos)
    assert starred[0] >= plain[0] + 3 and starred[1] == plain[1] == 0, (starred, plain)


def test_rox_cards_whose_stars_are_read_magic_hesitantly_are_counted_sure(
        monkeypatch) -> None:
    """Dev 61712 (normal): two cards' white magic stars in a glare spot are read magic at
    only 0.61-0.70, air 0.27-0.35 second (together under 0.97), at a fifth to a third of
    the chroma of the cards' air rings: they count sure (``rox_edges.RIVAL_SHARE``), and
    the two cards are read sure and right, none sure and wrong either way. Read with
    the float rox_edge model, whose hesitations these photos show (the 8-bit copy the
    reader runs reads these stars surer: 17 either way)."""
    from companion.vision import rox_edges as module
    from companion.vision.reading import float_models

    with float_models():
        photos = _located_rox_cards((61712,))
        shared = _sure_right_and_wrong(photos)
        monkeypatch.setattr(module, "RIVAL_SHARE", 0.97)
        strict = _sure_right_and_wrong(photos)
    assert shared[0] >= strict[0] + 2 and shared[1] == strict[1] == 0, (shared, strict)


def test_rox_cards_blurred_by_motion_are_read_again_sharpened(monkeypatch) -> None:
    """Dev 60058 is blurred by a 6 px streak: its cards' edge symbols, still unsure after
    the outline fit and search, read sure and right on the photo sharpened against the
    streak measured there (``deblur``); none reads sure and wrong either way."""
    import math

    from companion.vision import deblur

    photos = _located_rox_cards((60058,))
    sharpened = _sure_right_and_wrong(photos)
    monkeypatch.setattr(deblur, "STREAK_DEPTH_FROM", math.inf)  # no second read
    plain = _sure_right_and_wrong(photos)
    # here 15 of 15 sharpened, 10 not
    assert sharpened[0] >= plain[0] + 3 and sharpened[1] == plain[1] == 0, (sharpened, plain)


def test_rox_cards_read_sure_are_not_read_again_sharpened(monkeypatch) -> None:
    """On the photo sharpened against motion blur only the cards still unsure are read
    again, the sure ones keeping their reading and outline as neighbours to step over
    from: dev 60023 (one located card of 13 unsure) read 292 outlines sharpened, every
    card again and some sure ones searched, and then 44 (now 105: with outlines fitted
    as the slanted photo shows a square, ``rox_edges._photo_aspects``, a second card
    reads 0.79 before sharpening); its cards read as sure and right as before (12 of
    13)."""
    from companion.vision import rox_edges as module

    photos = _located_rox_cards((60023,))
    (balanced, pairs), = photos
    sharpened: list[int] = []
    read = module._edge_readings

    def counted(model: Any, image: np.ndarray, quads: list, **options: Any) -> list:
        if image is not balanced:
            sharpened.append(len(quads))
        return read(model, image, quads, **options)

    monkeypatch.setattr(module, "_edge_readings", counted)
    right, wrong = _sure_right_and_wrong(photos)
    assert sharpened and sharpened[0] < len(pairs), sharpened  # the unsure cards alone
    assert sum(sharpened) <= 120, sum(sharpened)
    assert right >= len(pairs) - 1 and wrong == 0, (right, wrong, len(pairs))


@pytest.mark.parametrize(("game", "seed", "cards"), [
    ("qwixx", 60027, {"y7", "y8", "y9"}),  # a y7 and a y8 outlined as one y12 at 0.88
    ("nox", 60024, {"10", "9"}),  # a 10 and a 9 outlined as one card of a kitty
])
def test_two_touching_cards_outlined_as_one_are_read_as_two(game: str, seed: int,
                                                            cards: set[str]) -> None:
    """An outline about twice its neighbours' area is cut in two once one half reads
    sure (``PAIR_TWICE_AREA``): the other half, a card lying a little turned, is read
    through outlines of its own instead of the pair being read as one sure number."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene(game, seed=seed, difficulty="normal")
    read = read_image(scene.image, game=game).detections
    kind = f"{game}_card"
    labels = [read.labels[i] for i in read if read.kinds[i] == kind]
    assert cards <= set(labels), labels
    assert "y12" not in labels


def test_an_unread_tile_cut_off_by_the_photo_s_edge_apart_from_the_tiles_is_dropped() -> None:
    """Dev scene 60261 (normal): a patch of table cut off by the photo's top edge, 1.6
    tile sizes from the rack beside it, was outlined as a tile, read k10 at 0.05, and
    stood in the grid as '?' (``EDGE_TILE_BELOW``); the rack's tiles and the grid stay."""
    from companion.readers.truth import compare, read_scene
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene("nummix", seed=60261, difficulty="normal")
    found = read_image(scene.image, game="nummix").detections
    assert not any(float(found.quads[i][:, 1].min()) < 4 and found.confidences[i] < 0.15
                   for i in found)
    assert compare(scene, read_scene(scene, found)).state


def test_a_tile_outlined_a_quarter_turn_off_its_neighbours_is_read_facing_their_way() -> None:
    """A located tile whose outline starts at a side is read squashed sideways, unsure
    or wrong; its sure neighbours all face one way, and read turned their way it reads
    right (``facing_neighbours``)."""
    from companion.readers.truth import detections_from_scene
    from companion.synth import render_scene
    from companion.vision.detections import rotate_quad
    from companion.vision.reading import load_model
    from companion.vision.tiles import facing_neighbours

    scene = render_scene("nummix", seed=7400, difficulty="easy")
    truth = detections_from_scene(scene, min_visible=0.99)
    model = load_model("nummix_tile")
    centres = truth.quads.mean(axis=1)
    side = float(np.linalg.norm(truth.quads[0][1] - truth.quads[0][0]))
    i = next(i for i in truth if sum(
        1 for j in truth if 0 < np.linalg.norm(centres[j] - centres[i]) < 1.5 * side) >= 2)
    quads = truth.quads.copy()
    quads[i] = rotate_quad(quads[i], 1)
    labels = list(truth.labels)
    labels[i] = "k1" if truth.labels[i] != "k1" else "k2"
    confidences = np.ones(len(truth), np.float32)
    confidences[i] = 0.2
    read = facing_neighbours(truth.with_fields(quads=quads, labels=tuple(labels),
                                               confidences=confidences), scene.image, model)
    assert read.labels[i] == truth.labels[i] and read.confidences[i] > 0.2
    assert np.allclose(read.quads[i], truth.quads[i])


def test_rox_cards_centre_symbols_show_their_up() -> None:
    """Fire's flame, water's drop and magic's star point to the card's top: read through
    a card's outline turned any way round, its up (``rox_faces.face_ups``) points along
    its true up; earth and air show none."""
    from companion.synth import render_scene
    from companion.vision.colour import white_balance
    from companion.vision.rox_faces import POINTED, face_ups

    rng = np.random.default_rng(4)
    along, labels = [], []
    for seed in (61000, 61001, 61002, 61003):
        scene = render_scene("rox", seed=seed, difficulty="normal")
        cards = [p for p in scene.pieces if p.kind == "rox_card" and p.visible_fraction > 0.99]
        balanced, _ = white_balance(scene.image)
        quads = np.array([rotate_quad(np.asarray(p.quad, np.float32), int(rng.integers(4)))
                          for p in cards])
        for p, up in zip(cards, face_ups(balanced, quads, [p.label for p in cards]),
                         strict=True):
            true_up = np.mean(p.quad[:2], axis=0) - np.mean(p.quad[2:], axis=0)
            labels.append(p.label)
            along.append(None if up is None else float(np.asarray(up) @ true_up)
                         / float(np.linalg.norm(true_up)))
    assert all((a is None) == (label not in POINTED) for a, label in zip(along, labels,
                                                                          strict=True))
    pointed = [a for a in along if a is not None]
    # none points the wrong way; a few show next to nothing (61002's white stars)
    assert len(pointed) >= 30 and min(pointed) > -0.05
    assert sum(a > 0.05 for a in pointed) >= 0.7 * len(pointed)


def test_rox_centre_colour_doubts_a_centre_whose_colour_disagrees() -> None:
    """A centre symbol's colour (``rox_faces.centre_colour_doubts``) agrees with every
    card's true element through its true outline, and disagrees with magic read for a
    coloured symbol and with an element two inks away; dev 61730's plain red fire card,
    which the element card model reads magic at 0.94, comes back unsure."""
    from companion.synth import render_scene
    from companion.vision.colour import white_balance
    from companion.vision.pipeline import read_image
    from companion.vision.rox_faces import INK_HUES, centre_colour_doubts

    wrong_for = {"fire": "earth", "air": "water", "earth": "fire", "water": "air"}
    for seed in (61000, 61001, 61002, 61003):
        scene = render_scene("rox", seed=seed, difficulty="normal")
        cards = [p for p in scene.pieces if p.kind == "rox_card" and p.visible_fraction > 0.99]
        balanced, _ = white_balance(scene.image)
        quads = np.array([np.asarray(p.quad, np.float32) for p in cards])
        assert centre_colour_doubts(balanced, quads, [p.label for p in cards]) == (
            [None] * len(cards))
        coloured = [k for k, p in enumerate(cards) if p.label in INK_HUES]
        assert len(coloured) >= 5
        for misread in ("magic", None):
            labels = [("magic" if misread else wrong_for[str(cards[k].label)])
                      for k in coloured]
            doubts = centre_colour_doubts(balanced, quads[coloured], labels)
            assert sum(d is not None for d in doubts) >= len(coloured) - 1  # glare
    scene = render_scene("rox", seed=61730, difficulty="normal")
    read = read_image(scene.image, game="rox").detections
    fire = next(p for p in scene.pieces if p.kind == "rox_card" and p.label == "fire"
                and quad_iou(np.asarray(p.quad, np.float32), read.quads[2]) > 0.5)
    assert fire is not None and read.labels[2] == "magic"
    assert read.data["centre_doubt"][2] is not None
    assert read.confidences[2] < MIN_CONFIDENCE
    assert sum(d is not None for d in read.data["centre_doubt"]) == 1


def _outlined_off(seed: int, label: str, neighbour: str
                  ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """A normal rendered Nummix scene (white balanced), the true outline of its tile
    ``label``, that outline grown by a sixth and moved a fifth of a side along both of
    its axes (a square across a seam, as the locator outlines small tiles now and
    then), and the true outline of the sure tile ``neighbour`` beside it."""
    from companion.synth import render_scene
    from companion.vision.colour import apply_gains, white_gains

    scene = render_scene("nummix", seed=seed, difficulty="normal")
    tiles = {p.label: np.asarray(p.quad, np.float32) for p in scene.pieces
             if p.kind == "nummix_tile" and not p.covered}
    truth = tiles[label]
    centre = truth.mean(axis=0)
    right = (truth[1] - truth[0] + truth[2] - truth[3]) / 2
    down = (truth[3] - truth[0] + truth[2] - truth[1]) / 2
    off = (centre + 1.15 * (truth - centre) + 0.2 * right + 0.2 * down).astype(np.float32)
    return apply_gains(scene.image, white_gains(scene.image)), truth, off, tiles[neighbour]


@pytest.mark.parametrize("named", [True, False])
def test_an_unsure_tile_outlined_off_is_read_through_its_sure_neighbours_outline(
        named: bool) -> None:
    """An unsure lying tile outlined off its tile is read again through the sure tile
    beside it's outline moved onto it (``nearest_sure_outline``): sure and right, and on
    its tile, when its own reading names that label among its alternatives; left as it
    was when it does not (a reading found among many outlines is not trusted alone)."""
    from companion.vision.reading import load_model
    from companion.vision.tiles import NEAREST_SURE, nearest_sure_outline

    balanced, truth, off, sure = _outlined_off(4243, "k6", "r6")
    alternatives = ((("k9", 0.3), ("k6", 0.2), ("k8", 0.1)) if named
                    else (("k9", 0.3), ("k8", 0.2), ("k3", 0.1)))
    read = Detections(quads=np.array([sure, off], np.float32), kinds=("nummix_tile",) * 2,
                      labels=("r6", "k9"), confidences=np.array([0.99, 0.3], np.float32),
                      oriented=(True, True),
                      data={"alternatives": ((("r6", 0.99),), alternatives)})
    out = nearest_sure_outline(read, balanced, load_model("nummix_tile"))
    assert out.labels[0] == "r6" and np.allclose(out.quads[0], sure)
    if named:
        assert out.labels[1] == "k6" and float(out.confidences[1]) >= NEAREST_SURE
        assert quad_iou(out.quads[1], truth) > quad_iou(off, truth)
    else:
        assert out.labels[1] == "k9" and np.allclose(out.quads[1], off)


def test_one_nox_card_outlined_twice_keeps_its_larger_outline() -> None:
    """Two outlines read the same overlapping by CARD_TWICE of the smaller are one card
    (the smaller dropped); two cards read the same lying side by side both stay, as does
    an overlapping pair read differently."""
    from companion.vision.strays import without_doubles

    def card(x: float, y: float, w: float = 30.0, h: float = 45.0) -> list[list[float]]:
        return [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]

    quads = np.float32([card(0, 0), card(10, 5, 25, 35), card(100, 0), card(131, 0),
                        card(200, 0), card(210, 5, 25, 35)])
    read = Detections(quads, ("nox_card",) * 6, ("1", "1", "5", "5", "7", "8"),
                      np.ones(6, np.float32))
    kept = without_doubles(read, "nox_card")
    assert kept.labels == ("1", "5", "5", "7", "8")
    assert np.allclose(kept.quads[0], quads[0])


def test_a_stack_top_outlined_twice_is_one_card() -> None:
    """Dev 61349 (normal): a stack's 1 outlined whole and again over its lower card's
    peeking edge, both read 1 surely: one stack, and the state is the scene's."""
    from companion.readers.photo import read_photo
    from companion.readers.truth import compare, given_names
    from companion.synth import render_scene

    scene = render_scene("nox", seed=61349, difficulty="normal")
    players, caller = given_names(scene)
    reading = read_photo(scene.image, game="nox", players=players, caller=caller).reading
    assert compare(scene, reading).state, reading.state


def test_a_large_qwixx_card_read_sure_whole_is_not_cut_on_one_sure_half() -> None:
    """Dev 60346 (normal): a y7 close to the camera, outlined 1.78 times its neighbours'
    area, read y7 at 0.99 whole; its halves read as jokers (J4 at 0.99 and 0.88), and the
    one sure half cut it into two cards. Both halves must read sure now."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene("qwixx", seed=60346, difficulty="normal")
    found = read_image(scene.image, game="qwixx").detections
    card = next(p for p in scene.pieces if p.kind == "qwixx_card" and p.label == "y7")
    best = max(found, key=lambda i: quad_iou(found.quads[i], card.quad))
    assert quad_iou(found.quads[best], card.quad) >= 0.5
    assert found.labels[best] == "y7"
    assert not any(str(label).startswith("J") for label in found.labels)


def test_a_rox_row_read_unknown_far_from_the_sure_cards_is_kept() -> None:
    """Dev 61443 (normal): a row of three element cards beside a hand, far from the sure
    cards and lit unlike them, read unknown: as a row (card-sized neighbours within 1.3
    sides) they are no lone strays, and the two located apart from the hand are kept
    (before: both dropped; the third is outlined together with the hand)."""
    from companion.synth import render_scene
    from companion.vision.pipeline import read_image

    scene = render_scene("rox", seed=61443, difficulty="normal")
    found = read_image(scene.image, game="rox").detections
    row = [p for p in scene.pieces if p.kind == "rox_card" and p.visible_fraction >= 0.99
           and np.asarray(p.quad)[:, 1].min() > 530]
    hit = sum(max(quad_iou(p.quad, q) for q in found.quads) >= 0.5 for p in row)
    assert len(row) == 3 and hit == 2, (len(row), hit)
