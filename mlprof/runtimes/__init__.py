"""Runtimes behind one interface (:class:`mlprof.runtimes.base.Runtime`), found by name.

The registry maps names to ``module:Class`` strings so that looking up a name (as the tasks do
to build output paths) imports no runtime library.
"""

from __future__ import annotations

import importlib

from mlprof.errors import MLProfError

#: canonical name -> (import path, package whose version is recorded, aliases)
RUNTIMES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "onnxruntime": ("mlprof.runtimes.onnxruntime:OnnxRuntime", "onnxruntime", ("ort",)),
    "torch": ("mlprof.runtimes.torch:TorchRuntime", "torch",
              ("torch-eager", "pytorch", "eager")),
    "torch-compile": ("mlprof.runtimes.torch:TorchCompileRuntime", "torch",
                      ("torch-compiled", "inductor", "compile")),
}

DEVICES: dict[str, tuple[str, ...]] = {
    "onnxruntime": ("cpu",),
    "torch": ("cpu",),
    "torch-compile": ("cpu",),
}

#: runtimes that run the model script itself (the others need an ONNX file)
SCRIPT_RUNTIMES = ("torch", "torch-compile")


def canonical_runtime(name: str) -> str:
    """Resolve a runtime name or alias (``ort`` -> ``onnxruntime``); unknown names fail clearly."""
    key = str(name).strip().lower()
    for canon, (_, _, aliases) in RUNTIMES.items():
        if key == canon or key in aliases:
            return canon
    known = ", ".join(f"{c} (alias {', '.join(a)})" if a else c
                      for c, (_, _, a) in RUNTIMES.items())
    raise MLProfError(f"unknown runtime {name!r}; available: {known}", field="--runtime")


def check_device(runtime: str, device: str) -> str:
    """Validate ``device`` for ``runtime`` and return its canonical (lower-case) name."""
    dev = str(device).strip().lower()
    runtime = canonical_runtime(runtime)
    if dev not in DEVICES[runtime]:
        raise MLProfError(f"device {device!r} is not supported by {runtime}; supported: "
                          f"{', '.join(DEVICES[runtime])}", field="--device")
    return dev


def runtime_version(name: str) -> str:
    """The installed version of a runtime's library, without importing it."""
    from mlprof.util import dist_version

    return dist_version(RUNTIMES[canonical_runtime(name)][1]) or "unknown"


def get_runtime(name: str):
    """Import and return the runtime class for ``name`` (an alias works too)."""
    target = RUNTIMES[canonical_runtime(name)][0]
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)
