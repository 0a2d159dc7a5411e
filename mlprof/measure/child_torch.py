"""Preloaded by the measurement forkserver when script models or torch runtimes are used."""

import gc

import torch  # noqa: F401

import mlprof.model.export  # noqa: F401
import mlprof.model.script  # noqa: F401
import mlprof.runtimes.torch  # noqa: F401

# PyTorch's objects join the collector's permanent generation too (see mlprof.measure.child:
# a child's full collection otherwise walks, and copies page by page, all of them)
gc.freeze()
