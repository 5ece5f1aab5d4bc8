"""Camera intrinsics and lens distortion from photos of the printed ChArUco board.

Optional: the reader works without a camera profile, and straighter lines with one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from companion.calibration.markers import charuco_board
from companion.games.base import InputError

MIN_VIEWS = 3
MIN_CORNERS_PER_VIEW = 6


class CalibrationError(InputError):
    """Calibration could not be done from what was given (too few views, no markers)."""

    def __init__(self, message: str) -> None:
        super().__init__("calibration", message)


@dataclass(frozen=True)
class CameraProfile:
    """A camera's intrinsics (pixels) and distortion, for images of ``image_size``."""

    image_size: tuple[int, int]  # width, height
    camera_matrix: tuple[tuple[float, ...], ...]  # 3x3
    dist_coeffs: tuple[float, ...]
    rms_error_px: float
    views_used: int

    def matrix(self) -> npt.NDArray[np.float64]:
        return np.array(self.camera_matrix, np.float64)

    def save(self, path: Path) -> None:
        save_profile(path, "camera", self)

    @classmethod
    def load(cls, path: Path) -> CameraProfile:
        data = _load_profile(path, "camera")
        try:
            return cls(tuple(data["image_size"]), tuple(tuple(r) for r in data["camera_matrix"]),
                       tuple(data["dist_coeffs"]), float(data["rms_error_px"]),
                       int(data["views_used"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(str(path), f"not a camera profile ({exc})") from None


def save_profile(path: Path, kind: str, profile: Any) -> None:
    """Write a profile dataclass as JSON tagged with its ``kind`` (read back by
    ``_load_profile``), making the folder when needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"kind": kind, **asdict(profile)}, indent=2))


def _load_profile(path: Path, kind: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise InputError(str(path), f"cannot read profile: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"malformed profile JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise InputError(str(path), f"not a {kind} profile")
    return data


def find_board_corners(image: npt.NDArray[np.uint8]
                       ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int32]] | None:
    """The ChArUco corners visible in one image (pixels) and their ids, or None."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    detector = cv2.aruco.CharucoDetector(charuco_board())
    corners, ids, _, _ = detector.detectBoard(grey)
    if ids is None or len(ids) < MIN_CORNERS_PER_VIEW:
        return None
    return np.asarray(corners, np.float32), np.asarray(ids, np.int32)


def calibrate_camera(images: Sequence[npt.NDArray[np.uint8]]) -> CameraProfile:
    """Intrinsics and distortion from several views of the ChArUco board."""
    if not images:
        raise CalibrationError("no images given")
    size = (images[0].shape[1], images[0].shape[0])
    board = charuco_board()
    object_points, image_points = [], []
    for k, image in enumerate(images):
        if (image.shape[1], image.shape[0]) != size:
            raise CalibrationError(f"image {k + 1} is {image.shape[1]}x{image.shape[0]}, "
                                   f"the first is {size[0]}x{size[1]}: use one camera setting")
        found = find_board_corners(image)
        if found is None:
            continue
        obj, img = board.matchImagePoints(found[0], found[1])
        object_points.append(obj)
        image_points.append(img)
    if len(object_points) < MIN_VIEWS:
        raise CalibrationError(
            f"the board was found in {len(object_points)} of {len(images)} images; "
            f"at least {MIN_VIEWS} views from different angles are needed")
    rms, matrix, dist, _, _ = cv2.calibrateCamera(object_points, image_points, size, None, None)
    return CameraProfile(size, tuple(tuple(float(v) for v in row) for row in matrix),
                         tuple(float(v) for v in np.ravel(dist)), float(rms), len(object_points))


def undistort(image: npt.NDArray[np.uint8], profile: CameraProfile) -> npt.NDArray[np.uint8]:
    """The image with the lens distortion removed (same size and intrinsics)."""
    if (image.shape[1], image.shape[0]) != tuple(profile.image_size):
        return image  # a profile is only valid for the size it was made at
    out: npt.NDArray[np.uint8] = cv2.undistort(image, profile.matrix(),
                                                np.array(profile.dist_coeffs))
    return out
