"""DiscoverModels: which PyTorch models does a script call?"""

from __future__ import annotations

import logging
import os
import re

import law

from mlprof import ingest
from mlprof.errors import CorruptResult, MLProfError
from mlprof.model.script import discover, script_hash, select
from mlprof.model.spec import ModelSpec, script_model_name
from mlprof.results import layout
from mlprof.tasks.framework import mixins
from mlprof.tasks.framework.mixins import ModelMixin, ScriptMixin
from mlprof.util import write_json_atomic

logger = logging.getLogger("mlprof")


class DiscoverModels(ModelMixin, ScriptMixin):
    """Run a model script in a child process and list the models it calls.

    Writes ``manifest.json``: for each model its hash (architecture + input shapes), class,
    file and line where it was created, parameter count and size, input names, shapes and
    dtypes, whether they are batched, and the number of calls; plus the script's labels and
    arguments. ``--model-file script.py::HASH`` is accepted; discovery always lists every model.
    """

    names_single_model = False  # the script as a whole: it is what finds the models

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
        # named by the script as a whole (whatever ::HASH the requiring task selected): the
        # segment a script without ::HASH has (the script's content, arguments and depth)
        content = layout.script_model_hash(script_hash(self.model_spec.file), self.script_argv,
                                           self.max_depth)
        return {"model": layout.model_segment(self.script_name, content),
                "settings": layout.discovery_settings_segment(self.script_key())}

    def output(self):
        return self.declared_outputs()["manifest"]

    def run(self):
        manifest = _DISCOVERED.get(_discovery_key(self)) or _discover(self)
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


#: manifests discovered by this process before their DiscoverModels ran (see :func:`only_model`),
#: by the script's identity (path, size, modification time), its arguments and the depth
_DISCOVERED: dict[tuple, dict] = {}


def _discovery_key(task: ScriptMixin) -> tuple:
    from mlprof.model.spec import _stat_key

    return (_stat_key(task.model_spec.file), task.script_argv, int(task.max_depth))


#: what this process imports next after a script's discovery (its export and measurement
#: tasks' parent side): imported while the discovery waits for the measurement server's start
#: (:func:`mlprof.measure.forkserver.waiting_for_start`), 75-110 ms off a script point's path
AFTER_DISCOVERY = ("mlprof.model.export", "mlprof.measure.harness", "mlprof.measure.results")


def _discover(task: DiscoverModels) -> dict:
    """Run the discovery of ``task``'s script in a child process."""
    from mlprof.measure.isolate import run_isolated

    return run_isolated(discover, {"path": task.model_spec.file, "script_args": task.script_argv,
                                   "max_depth": task.max_depth},
                        label=f"discovery of {task.model_spec.file}", torch=True,
                        reuse=script_process_key(task), end_later=True, warm=AFTER_DISCOVERY)


def script_process_key(task: ScriptMixin) -> tuple:
    """The key (``run_isolated``'s ``reuse``) of the process that discovered ``task``'s
    script, which its export then runs in (see :class:`~mlprof.tasks.export.ExportOnnx`)."""
    return ("script", *_discovery_key(task))


#: what :func:`only_model` found per discovery key (None: not exactly one model)
_ONLY: dict[tuple, str | None] = {}


def only_model(task: DiscoverModels) -> str | None:
    """The hash of the one model ``task``'s script calls; None when it calls several (or none,
    or its discovery fails: then the tasks that need it fail as they did, with their record).

    Read from ``task``'s manifest when it is in the store, else discovered now (a child
    process, once per process and script version; ``task`` writes that manifest when it runs).
    Asked by the tasks before they build a path, so that a script named without ``::HASH``
    names its model as ``script.py::HASH`` does.
    """
    key = _discovery_key(task)
    if key[0] is None:  # not readable: the tasks say so
        return None
    if key not in _ONLY:
        manifest = None
        try:
            if task.complete():
                manifest = task.manifest()
        except MLProfError:
            manifest = None  # a damaged manifest: discovered again below, and by its task
        if manifest is None:
            try:
                manifest = _DISCOVERED[key] = _discover(task)
            except Exception as e:  # the tasks that need the discovery fail, and say why
                logger.debug("discovery of %s before scheduling failed: %s",
                             task.model_spec.file, e)
        models = manifest.get("models") if isinstance(manifest, dict) else None
        only = models[0] if isinstance(models, list) and len(models) == 1 else None
        found = only.get("hash") if isinstance(only, dict) else None
        _ONLY[key] = found if isinstance(found, str) and re.fullmatch(r"[0-9a-f]{8}", found) \
            else None
    return _ONLY[key]


def _only_model_of(task: ScriptMixin, spec: ModelSpec, model_name: str | None) -> str | None:
    """:data:`mlprof.tasks.framework.mixins.ONLY_MODEL`: the one model of ``spec``'s script as
    ``task`` (its version, script arguments and depth) would discover it."""
    kw = {} if model_name is None else {"model_name": model_name}
    discovery = DiscoverModels(version=task.version, model_file=spec.file,
                               script_args=task.script_args, max_depth=task.max_depth, **kw)
    return only_model(discovery)


mixins.ONLY_MODEL = _only_model_of
