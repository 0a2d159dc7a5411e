"""MeasureGeneration (a workflow over (prompt length, batch size) points of a decoder, every
runtime interleaved in each) and PlotGeneration (TTFT and TPOT against prompt length, decode
tokens/s against batch size, and the end-of-run table).

The measurement is :mod:`mlprof.measure.generation`; these tasks choose the points, name their
files (:func:`mlprof.results.layout.generation_point_tag`) and wire the calls. Every option is a
field of :class:`~mlprof.measure.generation.settings.GenerationSettings`, which makes the law
parameter and checks the value once, when the task is made.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import TYPE_CHECKING

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.results import layout, records
from mlprof.tasks.framework.base import BaseTask, Requirements
from mlprof.tasks.framework.mixins import PlotMixin
from mlprof.tasks.framework.parameters import (
    BatchSizesParameter,
    PathParameter,
    RuntimesParameter,
    settings_parameter,
)
from mlprof.tasks.framework.remote import HTCondorWorkflow, SlurmWorkflow, batch_job_info
from mlprof.tasks.framework.workflow import MeasurementWorkflow, refused
from mlprof.util import write_text_atomic

if TYPE_CHECKING:
    from mlprof.measure.generation.settings import GenerationSettings

logger = logging.getLogger("mlprof")

#: the bundled decoder (gen-model's): a Llama-class model with random weights, no download
DEFAULT_DECODER = "$MLP_BASE/models/generation/tiny_llama.py"


def _generation_parameter(name: str) -> luigi.Parameter:
    """The law parameter of generation option ``name``, from its one definition in
    :class:`~mlprof.measure.generation.settings.GenerationSettings` (type, default, help)."""
    from mlprof.measure.generation.settings import GENERATION_FIELDS, GenerationSettings

    return settings_parameter(name, GENERATION_FIELDS, GenerationSettings, "generation",
                              {"batch_sizes": BatchSizesParameter,
                               "runtimes": RuntimesParameter})


def decoder_hash(path: str) -> str:
    """The content hash naming a decoder in the store: the script's bytes, or every file of a
    ``save_pretrained`` directory (names and bytes). The decoder's own hash (its config and
    weights, :attr:`~mlprof.model.decoder.Decoder.content_hash`) needs the model built (a
    second or more); this one is read before anything is scheduled, and the record keeps
    both."""
    import hashlib

    h = hashlib.sha256()
    if os.path.isdir(path):
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(root, name)
                h.update(os.path.relpath(full, path).encode() + b"\0")
                with open(full, "rb") as fh:
                    for block in iter(functools.partial(fh.read, 1 << 20), b""):
                        h.update(block)
    else:
        with open(path, "rb") as fh:
            for block in iter(functools.partial(fh.read, 1 << 20), b""):
                h.update(block)
    return h.hexdigest()


#: the context (tokens) of each decoder this process checked, by its source hash
_CONTEXTS: dict[str, int] = {}


def checked_decoder(path: str, settings: GenerationSettings, source_hash: str) -> int:
    """The context of the decoder at ``path`` (tokens), or a one-line
    :class:`~mlprof.errors.MLProfError` naming the file (not a decoder) or the file and
    ``--prompt-lengths`` (``settings``' longest prompt and new tokens beyond the context):
    asked when a generation task is made, so that ``law run`` exits 40 with nothing written
    instead of each branch failing in its child after writing a failure record.

    Answered, fastest first, by this process's earlier answer; by the store's decoder cache
    (:func:`~mlprof.model.decoder.known_source`: a loaded decoder's ``decoder.json``, under a
    millisecond); else by loading the decoder once in an isolated child under the measurement
    lock, as a branch would (:func:`~mlprof.measure.generation.run.prepare_decoder`: the bundled
    model ~4 s the first time, most of it importing transformers), which caches it for the
    branches only when it passes (a refused decoder leaves the store as it was, so a refused
    run pays the load again the next time)."""
    if source_hash in _CONTEXTS:
        return _CONTEXTS[source_hash]
    from mlprof.model.decoder import known_source, remember_source

    decoder = known_source(source_hash)
    if decoder is None:
        from mlprof.measure.generation.run import prepare_decoder
        from mlprof.measure.isolate import run_isolated

        label = f"checking the decoder {os.path.basename(path.rstrip('/'))}"
        logger.info("%s (loading it once; later runs read the store's cache)", label)
        # not under the measurement lock, as a script's discovery before scheduling is not:
        # behind another session's sweep a refusal waited minutes (30-40 s measured here);
        # a measurement beside it records the load in its cause record
        decoder = run_isolated(prepare_decoder, {"model_file": path, "settings": settings},
                               label=label, torch=True)
        remember_source(source_hash, decoder)
    _CONTEXTS[source_hash] = decoder.max_context
    return decoder.max_context


class GenerationMixin(BaseTask):
    """A decoder and what to measure of it: the options of
    :class:`~mlprof.measure.generation.settings.GenerationSettings`, checked once, as one
    settings object, when the task is made."""

    exclude_index = True

    model_file = PathParameter(default=DEFAULT_DECODER, description="decoder: a Python script "
                               "that builds a Hugging Face causal LM, or a directory written by "
                               "save_pretrained; default: the bundled tiny Llama")
    # GenerationSettings' options, in its order (type, default and help are each field's)
    (prompt_lengths, batch_sizes, new_tokens, runtimes, threads, precision, warmup, n_calls,
     min_duration, interleave) = map(_generation_parameter, (
        "prompt_lengths", "batch_sizes", "new_tokens", "runtimes", "threads", "precision",
        "warmup", "n_calls", "min_duration", "interleave"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from mlprof.measure.generation.settings import GENERATION_FIELDS, GenerationSettings
        from mlprof.measure.settings import check_threads_here

        path = str(self.model_file).partition("::")[0]
        if not path.strip():
            raise MLProfError("must not be empty (an unset variable?)", field="--model-file")
        if os.path.isdir(path):
            if not os.path.isfile(os.path.join(path, "config.json")):
                raise MLProfError("not a decoder: a directory without config.json (give one "
                                  "written by save_pretrained)", path, "--model-file")
        elif not os.path.isfile(path):
            raise MLProfError("no such file or directory", path, "--model-file")
        elif not path.endswith(".py"):
            raise MLProfError("not a decoder: give a Python script (.py) that builds a "
                              "causal language model, or a save_pretrained directory", path,
                              "--model-file")
        self.decoder_path = path
        self.generation = GenerationSettings(**{n: getattr(self, n) for n in GENERATION_FIELDS})
        check_threads_here(self.generation.threads)
        from mlprof.tasks.framework.hooks import run_hooks_installed

        if run_hooks_installed():  # law run, the mlprof command (the API asks itself)
            self.check_decoder()

    def check_decoder(self) -> None:
        """Refuse a model that is not a decoder, or a prompt and new tokens beyond its
        context, in one line before anything is written (:func:`checked_decoder`). Asked when
        the task is made by ``law run`` and the ``mlprof`` command, by the API before it
        builds; not when Python code merely makes the task (a test, a notebook, a report
        reading the store), where a first check would load the model (4-16 s)."""
        context = checked_decoder(self.decoder_path, self.generation, self._decoder_hash)
        self.generation.check_context(context, self.decoder_path)

    @property
    def device(self) -> str:
        """Generation runs on the CPU."""
        return "cpu"

    @property
    def decoder_name(self) -> str:
        """The decoder's name: the script's or directory's stem."""
        return os.path.splitext(os.path.basename(self.decoder_path.rstrip("/")))[0]

    @functools.cached_property
    def _decoder_hash(self) -> str:
        return decoder_hash(self.decoder_path)

    def model_identity(self) -> records.ModelIdentity:
        """The decoder as the user named it."""
        return records.ModelIdentity(self.decoder_name, self.decoder_name, self.decoder_path,
                                     self._decoder_hash[:8])

    def store_parts(self) -> dict[str, str]:
        from mlprof.runtimes import runtime_version

        g = self.generation
        return {"model": layout.model_segment(self.decoder_name, self._decoder_hash),
                "runtime": layout.runtime_segment([(r, runtime_version(r)) for r in g.runtimes],
                                                  self.device),
                "settings": layout.generation_settings_segment(
                    g.new_tokens, g.warmup, g.n_calls, g.min_duration, g.interleave, g.threads,
                    g.precision)}

    def generation_points(self) -> list[tuple[str, GenerationSettings]]:
        """``(file tag, the point's settings)`` of every branch: prompt lengths, then batch
        sizes."""
        return [(layout.generation_point_tag(p.prompt_length, p.batch_size), p)
                for p in self.generation.points()]


class MeasureGeneration(GenerationMixin, MeasurementWorkflow, SlurmWorkflow, HTCondorWorkflow):
    """Measure a decoder generating, one branch per (prompt length, batch size): every runtime
    loaded in one isolated child, warmed up and timed in interleaved rounds, the tokens checked
    against the reference runtime.

    Each branch writes ``generation_p<P>_bs<B>.csv`` (every generated token's time of every
    timed call) and ``generation_p<P>_bs<B>.json`` (provenance and, per runtime, the metrics
    with their formulas and intervals, the agreement, peak memory; the paired speed-ups).
    Under ``--workflow slurm``/``htcondor`` each point is a job on a whole node."""

    param_reasons = {
        "branch": "one branch: its own point's files (all of the workflow's where it has one "
                  "point)",
    }

    def jobs_tag(self) -> str:
        """Remote jobs of other point sets keep apart (see RemoteJobsMixin)."""
        return layout.generation_set_tag(self.generation.prompt_lengths,
                                         self.generation.batch_sizes)

    def measurement_points(self) -> list[tuple[str, GenerationSettings]]:
        """The (prompt length, batch size) points (:meth:`generation_points`), one branch
        each."""
        return self.generation_points()

    def output(self):
        return self.declared_outputs(tag=self.branch_data[0])

    def point_failure_file(self) -> str:
        """One failure record per point (the branches share a directory)."""
        return layout.generation_failure_file(self.branch_data[0])

    def prestart_torch(self) -> bool:
        """Every generation runtime's child is made with torch (the decoders are built with
        it: :func:`mlprof.measure.generation.run.measure_generation_isolated`)."""
        return True

    @staticmethod
    def record_damage(json_path: str) -> str | None:
        """What :func:`mlprof.measure.generation.run.read_generation` refuses in the record."""
        from mlprof.measure.generation.run import read_generation

        return refused(read_generation, json_path)

    def run(self):
        from mlprof.measure.generation.run import measure_generation_isolated, write_generation

        self.replace_damaged()
        tag, point = self.branch_data
        label = (f"{self.decoder_name} on {','.join(point.runtimes)}, prompt "
                 f"{point.prompt_length}, batch {point.batch_size} (point {self.branch + 1} of "
                 f"{len(self.branch_map)})")
        self.publish_message(f"generating: {label}")
        progress = self.progress_reporter(label)
        result = measure_generation_isolated(
            self.decoder_path, point, layout.generation_cache_dir(),
            model_identity=self.model_identity().to_dict(), progress=progress)
        write_generation(result, {k: t.path for k, t in self.output().items()}, task={
            "family": self.task_family, "version": self.version,
            "model_name": self.decoder_name, "model_file": self.decoder_path,
            "params": self.to_str_params(only_significant=True)},
            model_identity=self.model_identity().to_dict(), batch_job=batch_job_info())


class PlotGeneration(GenerationMixin):
    """TTFT and TPOT against prompt length (one curve per runtime and batch size), decode
    tokens/s against batch size (one curve per runtime and prompt length), and the table:
    TTFT, TPOT and decode tokens/s with their intervals, and the tokens' agreement, per runtime
    and point (as CSV and text; printed at the end of ``law run``)."""

    file_types = PlotMixin.file_types
    top_right_label = PlotMixin.top_right_label
    plot_postfix = PlotMixin.plot_postfix
    view_cmd = PlotMixin.view_cmd

    param_reasons = {"view_cmd": "only opens the finished plots in a viewer"}
    reqs = Requirements(MeasureGeneration=MeasureGeneration)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.file_types:
            raise MLProfError("give at least one of pdf, png, svg", field="--file-types")

    def requires(self):
        return self.reqs.MeasureGeneration.req(self)

    def set_tag(self) -> str:
        return layout.generation_set_tag(self.generation.prompt_lengths,
                                         self.generation.batch_sizes)

    def plot_tag(self) -> str:
        """The plot options that are not the default, as a file-name part."""
        from mlprof.util import short_hash

        tags = []
        if self.top_right_label != law.NO_STR:
            tags.append("trl" + short_hash(self.top_right_label, length=6))
        if self.plot_postfix != law.NO_STR:
            tags.append(layout.path_safe(self.plot_postfix))
        return "__" + "_".join(tags) if tags else ""

    def output(self):
        """The plots, the table as CSV and as text (the family's files)."""
        stem = layout.generation_plot_files(self.set_tag())["plot"]
        return self.declared_outputs(stem=stem, tag=self.plot_tag(),
                                     file_types=tuple(self.file_types))

    def records(self) -> list[dict]:
        """The points' records, checked."""
        from mlprof.measure.generation.run import read_generation

        coll = self.input()["collection"]
        return [read_generation(coll.targets[b]["json"].path) for b in sorted(coll.targets)]

    def run_summary(self) -> str:
        from mlprof.tasks.framework.base import table_summary

        return table_summary(self)

    def run(self):
        from mlprof.plotting import save_figure
        from mlprof.plotting.generation import corner_text, plot_generation
        from mlprof.report.generation import COLUMNS, format_table, formulas_of, points_table

        recs = self.records()
        df = points_table(recs)
        write_text_atomic(self.output()["csv"].path, df[list(COLUMNS)].to_csv(index=False))
        write_text_atomic(self.output()["text"].path, format_table(df, formulas_of(recs)))
        corner = (self.top_right_label if self.top_right_label != law.NO_STR
                  else corner_text(recs))
        title = f"{self.decoder_name}, {self.generation.new_tokens} new tokens" + (
            f", {self.generation.precision}" if self.generation.precision != "fp32" else "")
        fig = plot_generation(df, title=title, top_right_label=corner)
        paths = [t.path for k, t in self.output().items() if k in self.file_types]
        save_figure(fig, paths)
        from mlprof.tasks.framework.summary import listed_at_end

        if not listed_at_end(self):
            for p in paths:
                self.publish_message(f"plot: {p}")
        if self.view_cmd != law.NO_STR:
            import shlex
            import subprocess

            for p in paths:
                subprocess.call(shlex.split(self.view_cmd) + [p])
