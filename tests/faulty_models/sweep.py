"""A sweep over several models, each on its own runtime, as one law task (for the fault tests).

``law run sweep.FaultSweep --version v1 --model-files a.yaml,b.py --runtimes onnxruntime,torch``
with ``tests/faulty_models`` on ``PYTHONPATH``. It only requires one MergeRuntimes per model:
luigi runs every model it can, and a model that fails costs only its own results.
"""

from __future__ import annotations

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.tasks.framework.mixins import BatchSizesMixin, MeasurementMixin
from mlprof.tasks.framework.parameters import PathsParameter
from mlprof.tasks.runtime import MergeRuntimes


class FaultSweep(MeasurementMixin, BatchSizesMixin, law.WrapperTask):
    """MergeRuntimes of each model file on the runtime at the same position in ``--runtimes``."""

    model_files = PathsParameter(description="comma-separated model files")
    runtimes = law.CSVParameter(default=(), description="one runtime per model file")
    discover_only = luigi.BoolParameter(default=False, description="only DiscoverModels of "
                                        "each model script")

    def requires(self):
        if self.discover_only:
            from mlprof.tasks.discover import DiscoverModels

            return [DiscoverModels.req(self, model_file=f) for f in self.model_files]
        if len(self.runtimes) != len(self.model_files):
            raise MLProfError(f"{len(self.runtimes)} runtime(s) for {len(self.model_files)} "
                              "model file(s)", field="--runtimes")
        return [MergeRuntimes.req(self, model_file=f, runtime=rt)
                for f, rt in zip(self.model_files, self.runtimes, strict=True)]
