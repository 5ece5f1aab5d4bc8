"""Motion blur (a phone moved while the shutter was open): its streak measured from the
photo's cepstrum (``motion_streak``), and the photo sharpened against it by a Wiener
filter (``without_motion_blur``). Small printed symbols smeared along the streak read
again sharpened."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from companion.vision.detections import side_lengths

Image = npt.NDArray[np.uint8]

STREAK_REACH = (2.5, 11.0)
"""Streak lengths looked for, in pixels: shorter streaks do not smear a symbol of 6 px
away, and a phone's shake seldom streaks more than 10 px."""

STREAK_DEPTH_FROM = 1.7
"""A streak is taken as measured when its cepstrum dip is at least this deep
(``Streak.depth``). Round the Rox cards of dev normal 60000-60059 the 13 photos blurred
by motion measured 2.7-8.8 and the 47 without 1.4-4.2 (the deep ones out of focus,
whose blur the sharpening also narrows). Reading the unsure cards of dev normal
60000, 60300, 60900 and 61500 (+60 each) sharpened from 1.7 kept every photo the
second read gains when made on every photo (52, 51, 48, 51 of 60 read exactly), from
2.0 or 2.5 it lost one or two of them."""


WIENER_NOISE = 0.05
"""The Wiener filter's noise-to-signal term: lower sharpens more and raises the photo's
noise and JPEG blocks more. Rox photos read exactly (every photo with an unsure card
read again), dev normal 60000+60 and 60300+60: 0.05 52 and 51 of 60, 0.15 51 and 51
(0.15 left fewer cards unsure, 48 against 59, but fewer photos whole; 0.01 raised the
noise into symbols on dev 60340 and 60041)."""


@dataclass(frozen=True)
class Streak:
    """A straight motion blur: ``length`` pixels at ``angle`` (radians, 0 along x, y down)."""

    length: float
    angle: float
    depth: float

    def kernel(self) -> npt.NDArray[np.float32]:
        """The streak as a normalised line kernel (anti-aliased), odd-sized."""
        size = int(math.ceil(self.length)) | 1
        kernel = np.zeros((size + 2, size + 2), np.float32)
        centre = (size + 1) / 2
        half = (self.length - 1) / 2
        dx, dy = math.cos(self.angle) * half, math.sin(self.angle) * half
        cv2.line(kernel, (round(centre - dx), round(centre - dy)),
                 (round(centre + dx), round(centre + dy)), 1.0, 1, cv2.LINE_AA)
        return kernel / max(float(kernel.sum()), 1e-9)


def motion_streak(image: Image) -> Streak:
    """The motion blur streak of ``image`` (BGR): where its cepstrum (the spectrum of the
    log power spectrum) is lowest within ``STREAK_REACH`` of its origin. A straight blur
    of length L multiplies the spectrum by a sinc with zeros every 1/L along it, which
    shows as a dip L pixels out along the streak; ``depth`` is how many standard
    deviations of the cepstrum within reach the dip lies below their mean. The dip is
    taken at a whole pixel: on a synthetic print the renderer's streaks of 3-8 px
    along an axis and of 6 px at any slant are measured within a pixel and 15°, but a
    slanting streak of 7-8 px is now and then read at half its length."""
    return motion_streaks(image, 1)[0]


STREAKS_APART = 1.5
"""Dips of the cepstrum within this many pixels of a deeper one (or of its mirror image
through the origin: the cepstrum of a real image is even) are the same streak
(``motion_streaks``)."""


def motion_streaks(image: Image, count: int) -> list[Streak]:
    """The ``count`` deepest dips of ``image``'s cepstrum within ``STREAK_REACH``, each
    ``STREAKS_APART`` from the deeper ones, deepest first (``motion_streak``: the first).
    The deepest is not always the streak: dev 61819 (normal), blurred 8 px at a slant,
    measured a dip 4 px out along the rows of pixels 3.3 deep, the streak's 3.1."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    window = np.outer(np.hanning(grey.shape[0]), np.hanning(grey.shape[1])).astype(np.float32)
    height, width = _fast_size(grey.shape)
    windowed = cv2.copyMakeBorder((grey - grey.mean()) * window, 0, height - grey.shape[0],
                                  0, width - grey.shape[1], cv2.BORDER_CONSTANT, value=0)
    spectrum = cv2.dft(windowed, flags=cv2.DFT_COMPLEX_OUTPUT)
    log_power = np.log(cv2.magnitude(spectrum[..., 0], spectrum[..., 1]) + 1e-3)
    # the log power spectrum is real and even, so its forward transform is its inverse
    cepstrum = np.fft.fftshift(cv2.dft(log_power, flags=cv2.DFT_COMPLEX_OUTPUT)[..., 0])
    reach = int(math.ceil(STREAK_REACH[1]))
    cy, cx = height // 2, width // 2
    near = cepstrum[cy - reach:cy + reach + 1, cx - reach:cx + reach + 1]
    ys, xs = np.mgrid[-reach:reach + 1, -reach:reach + 1]
    radius = np.hypot(ys, xs)
    ring = (radius >= STREAK_REACH[0]) & (radius <= STREAK_REACH[1])
    mean, spread = float(near[ring].mean()), max(float(near[ring].std()), 1e-9)
    left = ring.copy()
    out = []
    while len(out) < count and left.any():
        at = np.unravel_index(int(np.argmin(np.where(left, near, np.inf))), near.shape)
        y, x = float(ys[at]), float(xs[at])
        out.append(Streak(float(radius[at]), math.atan2(y, x), float((mean - near[at]) / spread)))
        left &= (np.hypot(ys - y, xs - x) > STREAKS_APART) & (
            np.hypot(ys + y, xs + x) > STREAKS_APART)
    return out


def _fast_size(shape: tuple[int, ...]) -> tuple[int, int]:
    """``shape``'s height and width each grown to a size the FFT takes quickly (a region
    1031 pixels wide, a prime, took several times as long as one 1080 wide)."""
    return cv2.getOptimalDFTSize(shape[0]), cv2.getOptimalDFTSize(shape[1])


def without_motion_blur(image: Image, streak: Streak, *, noise: float = WIENER_NOISE
                        ) -> Image:
    """``image`` sharpened against ``streak`` by a Wiener filter (each channel; borders
    reflected so the filter does not wrap round), its gain at zero frequency kept at 1
    (the plain filter darkens a photo by 1 / (1 + ``noise``))."""
    pad = int(math.ceil(streak.length)) * 2
    height, width = _fast_size((image.shape[0] + 2 * pad, image.shape[1] + 2 * pad))
    padded = cv2.copyMakeBorder(image, pad, height - image.shape[0] - pad, pad,
                                width - image.shape[1] - pad, cv2.BORDER_REFLECT)
    kernel = streak.kernel()
    spread = np.zeros((height, width), np.float32)
    spread[:kernel.shape[0], :kernel.shape[1]] = kernel
    spread = np.roll(spread, (-(kernel.shape[0] // 2), -(kernel.shape[1] // 2)), (0, 1))
    transfer = cv2.dft(spread, flags=cv2.DFT_COMPLEX_OUTPUT)
    power = (transfer[..., 0] ** 2 + transfer[..., 1] ** 2 + noise) / (1 + noise)
    inverse = np.dstack([transfer[..., 0] / power, -transfer[..., 1] / power])
    sharp = cv2.merge([cv2.idft(cv2.mulSpectrums(
        cv2.dft(channel.astype(np.float32), flags=cv2.DFT_COMPLEX_OUTPUT), inverse, 0),
        flags=cv2.DFT_SCALE | cv2.DFT_REAL_OUTPUT) for channel in cv2.split(padded)])
    return np.clip(sharp[pad:pad + image.shape[0], pad:pad + image.shape[1]], 0, 255
                   ).astype(np.uint8)


def sharpened_choices(balanced: Image, quads: npt.NDArray[np.float32], count: int
                      ) -> list[Image]:
    """``balanced`` with the surroundings of the pieces at ``quads`` (their bounding box and
    a piece's side round it) sharpened against each of the ``count`` deepest streaks
    measured there (``motion_streaks``) deep enough to be taken (``STREAK_DEPTH_FROM``;
    none: a photo not worth reading twice), deepest first."""
    side = float(np.median([side_lengths(q).mean() for q in quads]))
    height, width = balanced.shape[:2]
    x0, y0 = np.maximum(quads.reshape(-1, 2).min(axis=0) - side, 0).astype(int)
    x1, y1 = np.minimum(quads.reshape(-1, 2).max(axis=0) + side, (width, height)).astype(int)
    region = balanced[y0:y1, x0:x1]
    out = []
    for streak in motion_streaks(region, count):
        if streak.depth < STREAK_DEPTH_FROM:
            break
        sharp = balanced.copy()
        sharp[y0:y1, x0:x1] = without_motion_blur(region, streak)
        out.append(sharp)
    return out
