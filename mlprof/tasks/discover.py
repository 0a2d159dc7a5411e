"""DiscoverModels: which PyTorch models does a script call?"""

from __future__ import annotations

import logging
import os

import law

from mlprof import ingest
from mlprof.errors import CorruptResult, MLProfError
from mlprof.model.script import discover, script_hash, select
from mlprof.model.spec import script_model_name
from mlprof.results import layout
from mlprof.tasks.parameters import ModelMixin, ScriptMixin
from mlprof.util import write_json_atomic

logger = logging.getLogger("mlprof")


class DiscoverModels(ModelMixin, ScriptMixin):
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

    @property
    def script_name(self) -> str:
        """The script, not one of its models: --model-name if given, else the script's stem."""
        if self.model_name != law.NO_STR:
            return self.model_name
        return os.path.splitext(os.path.basename(self.model_spec.file))[0]

    def store_parts(self):
        return {"model": layout.model_segment(self.script_name, script_hash(self.model_spec.file)),
                "settings": layout.discovery_settings_segment(self.script_key())}

    def output(self):
        return self.declared_outputs()["manifest"]

    def run(self):
        from mlprof.measure.isolate import run_isolated

        manifest = run_isolated(discover, {"path": self.model_spec.file,
                                           "script_args": self.script_argv,
                                           "max_depth": self.max_depth},
                                label=f"discovery of {self.model_spec.file}", torch=True)
        write_json_atomic(self.output().path, manifest)
        for m in manifest["models"]:
            logger.info("%s  %s (line %s, %s parameters, %d call(s))",
                        script_model_name(self.script_name, m["hash"]), m["class"], m["line"],
                        f"{m['parameters']:,}", m["calls"])

    def manifest(self) -> dict:
        """The manifest, once the task ran (read through :mod:`mlprof.ingest`: a FIFO there is
        one line, never a hang)."""
        manifest = ingest.load_json(self.output().path)
        if not isinstance(manifest, dict) or not isinstance(manifest.get("models"), list):
            raise CorruptResult("is not a manifest (a JSON object with models)",
                                self.output().path)
        return manifest

    def selected(self, single: bool = False) -> list[dict]:
        """The models picked by ``::HASH`` (all without), exactly one with ``single``."""

        return select(self.manifest(), self.model_spec.model_hashes, single=single)
