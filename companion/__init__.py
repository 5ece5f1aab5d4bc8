"""Table Companion: reads a game table from a photo, checks plays, keeps the score."""

import numpy  # noqa: F401  (loads numpy's BLAS first, so its thread pool can be limited)
from threadpoolctl import threadpool_limits

__version__ = "0.1.0"

# numpy's BLAS on one thread: the products it runs here are small (a few hundred rows),
# where OpenBLAS's threads cost more than they share, and while the camera, the page or
# another program keeps the cores busy, its spinning threads made a Rox photo's read 2.6
# times slower (dev 60000-60029: median 638 -> 247 ms under load). OpenCV and ONNX
# Runtime keep their own thread pools.
threadpool_limits(limits=1, user_api="blas")
