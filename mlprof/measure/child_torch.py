"""Preloaded by the measurement forkserver when script models or torch runtimes are used."""

import torch  # noqa: F401

import mlprof.model.export  # noqa: F401
import mlprof.model.script  # noqa: F401
import mlprof.runtimes.torch  # noqa: F401
