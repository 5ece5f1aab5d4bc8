"""The photo reader: locate → rectify → classify → assemble a scene → per-game reader.

Every stage is a plain function over ``Detections`` (see ``detections.py``); the image
comes first, options are keyword-only, coordinates are image pixels.
"""

from threadpoolctl import threadpool_limits

from companion.vision.detections import Detections, quad_iou, rectify

# numpy's BLAS on one thread: the products the photo reader runs are small (a few
# hundred rows), where OpenBLAS's threads cost more than they share, and while the
# camera, the page or another program keeps the cores busy, its spinning threads made a
# Rox photo's read 2.6 times slower (dev 60000-60029: median 638 -> 247 ms under load).
# Set here, after numpy is loaded, and not in the package root: the rules need no numpy.
# OpenCV and ONNX Runtime keep their own thread pools.
threadpool_limits(limits=1, user_api="blas")

__all__ = ["Detections", "quad_iou", "rectify"]
