"""Preloaded by the measurement forkserver when script models or torch runtimes are used."""

import gc
import os
import sys

#: where an NVIDIA driver shows itself: its kernel module (also seen from a container), its
#: control device (passed into a container with the GPUs), WSL's GPU device
NVIDIA_DRIVER = ("/proc/driver/nvidia", "/dev/nvidiactl", "/dev/dxg")


def import_torch() -> None:
    """Import PyTorch; on a machine without an NVIDIA driver, as its CPU wheel does: without
    cuda-python's bindings (``cuda.bindings``).

    Why: PyTorch's CUDA wheel (PyPI's default, and setup.sh's) imports them as it starts
    (``torch.cuda._utils``): 50-73 ms here of torch's ~1.2 s, on the critical path of a model
    script's first point (discovery waits for this import). torch takes their absence as its CPU
    wheel does (``_HAS_CUDA_BINDINGS = False``), and what uses them (CUDA graphs' annotations,
    green contexts, CUDA error names) needs a GPU. They are hidden during this import only: a
    later ``import cuda.bindings`` (a model script's own, say) imports them as usual.
    """
    hide = "cuda.bindings" not in sys.modules and not any(map(os.path.exists, NVIDIA_DRIVER))
    if hide:
        sys.modules["cuda.bindings"] = None  # type: ignore[assignment]  # import stops here
    try:
        import torch  # noqa: F401
    finally:
        if hide and "cuda.bindings" in sys.modules and sys.modules["cuda.bindings"] is None:
            del sys.modules["cuda.bindings"]


import_torch()

import mlprof.model.export  # noqa: E402,F401
import mlprof.model.script  # noqa: E402,F401
import mlprof.runtimes.torch  # noqa: E402,F401

# PyTorch's objects join the collector's permanent generation too (see mlprof.measure.child:
# a child's full collection otherwise walks, and copies page by page, all of them)
gc.freeze()
