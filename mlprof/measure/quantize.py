"""The child side of QuantizeModel: a model converted to a lower precision, in a measurement
child (:func:`mlprof.measure.isolate.run_isolated`, as ``tasks/quantize.py`` calls it).

Here, not in :mod:`mlprof.model.precision` (which holds the recipe, :func:`convert_onnx`):
int8-static calibrates on inputs made by the measurement's own generator
(:func:`mlprof.measure.inputs.make_feeds`), and ``model`` does not import ``measure``
(tests/test_imports.py).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from mlprof.measure.inputs import make_feeds
from mlprof.model import read_model_file
from mlprof.model.onnx_graph import resolve
from mlprof.model.precision import (
    CALIBRATION_BATCH_SIZE,
    CALIBRATION_SEED,
    check_calibration_batches,
    check_precision,
    convert_onnx,
)
from mlprof.progress import Progress


def quantize_model(spec_file: str, source: str, out_onnx: str, precision: str,
                   calibration_batches: int = 0, progress: Any = None) -> dict[str, Any]:
    """Convert the ONNX model ``source`` (the graph of the model file ``spec_file``, or a
    script's export) to ``precision`` into ``out_onnx``; the recipe of :func:`convert_onnx`.

    int8-static calibrates on ``calibration_batches`` batches of
    :data:`CALIBRATION_BATCH_SIZE` events of random inputs (seed :data:`CALIBRATION_SEED`),
    made by the measurement's own input generator from the model's input specs."""
    precision = check_precision(precision)
    feeds: list[dict[str, np.ndarray]] = []
    with Progress(progress) as rep:
        if precision == "int8-static":
            n = check_calibration_batches(calibration_batches)
            rep.phase(f"making {n} calibration batch(es) of {CALIBRATION_BATCH_SIZE} random "
                      "events")
            spec = read_model_file(spec_file)
            if os.path.abspath(spec.file) != os.path.abspath(source):
                spec = read_model_file(source)
            resolved = resolve(spec)
            feeds = make_feeds(resolved.inputs, CALIBRATION_BATCH_SIZE, n, "random",
                               CALIBRATION_SEED)
        os.makedirs(os.path.dirname(os.path.abspath(out_onnx)), exist_ok=True)
        recipe = convert_onnx(source, out_onnx, precision, calibration=feeds, rep=rep)
        rep.phase(f"converted in {recipe['convert_s']:.2f} s", 1.0)
        return recipe
