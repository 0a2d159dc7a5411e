"""DiscoverModels: which PyTorch models does a script call?"""

from __future__ import annotations

import json
import logging

from mlprof.errors import MLProfError
from mlprof.tasks.base import BaseTask, install_error_handling
from mlprof.tasks.parameters import ModelMixin, model_segment
from mlprof.util import write_json_atomic

install_error_handling()
logger = logging.getLogger("mlprof")


class DiscoverModels(ModelMixin, BaseTask):
    """Run a model script in a child process and list the models it calls.

    Writes ``manifest.json``: for each model its hash (architecture + input shapes), class,
    file and line where it was created, parameter count and size, input names, shapes and
    dtypes, whether they are batched, and the number of calls; plus the script's labels and
    arguments. ``--model-file script.py::HASH`` is accepted; discovery always lists every model.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_script:
            raise MLProfError("DiscoverModels takes a Python model script (.py)",
                              self.model_spec.spec_file, "--model-file")

    def store_parts(self):
        parts = super().store_parts()
        stem = self.model_spec.name.split("-")[0] if self.model_spec.model_hashes else \
            self.model_spec.name
        from mlprof.model.script import script_hash

        parts["model"] = model_segment(stem, script_hash(self.model_spec.file))
        parts["settings"] = self.script_tag() or "default"
        return parts

    def output(self):
        return self.local_target("manifest.json")

    def run(self):
        from mlprof.measure.isolate import run_isolated
        from mlprof.model.script import discover

        manifest = run_isolated(discover, {"path": self.model_spec.file,
                                           "script_args": self.script_argv,
                                           "max_depth": self.max_depth},
                                label=f"discovery of {self.model_spec.file}", torch=True)
        write_json_atomic(self.output().path, manifest)
        for m in manifest["models"]:
            logger.info("%s::%s  %s (line %s, %s parameters, %d call(s))",
                        self.model_spec.name, m["hash"], m["class"], m["line"],
                        f"{m['parameters']:,}", m["calls"])

    def manifest(self) -> dict:
        """The manifest, once the task ran."""
        with open(self.output().path) as f:
            return json.load(f)

    def selected(self, single: bool = False) -> list[dict]:
        """The models picked by ``::HASH`` (all without), exactly one with ``single``."""
        from mlprof.model.script import select

        return select(self.manifest(), self.model_spec.model_hashes, single=single)
