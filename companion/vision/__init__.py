"""The photo reader: locate → rectify → classify → assemble a scene → per-game reader.

Every stage is a plain function over ``Detections`` (see ``detections.py``); the image
comes first, options are keyword-only, coordinates are image pixels.
"""

from companion.vision.detections import Detections, quad_iou, rectify

__all__ = ["Detections", "quad_iou", "rectify"]
