"""Every parameter of every task family is accounted for (issue 9).

The families and their parameters come from luigi's task registry, never from a list written
here: for each significant parameter a changed value must either change the task's output paths
or be refused with an MLProfError (a parameter that does not apply); otherwise the task must
name the reason it does not change the output (``param_reasons``). Every insignificant
parameter must have such a reason too. Nothing runs: tasks are only constructed.
"""

from __future__ import annotations

import importlib

import law
import luigi
import pytest

from mlprof.errors import MLProfError
from tests.helpers import DNN, REPO

#: the task modules law loads (law.cfg [modules])
MODULES = [line.strip() for line in (REPO / "law.cfg").read_text().split("[modules]")[1]
           .split("[")[0].splitlines() if line.strip() and not line.startswith("#")]

SCRIPT = str(REPO / "models" / "selftest" / "linear.py")
OTHER_SCRIPT = str(REPO / "models" / "selftest" / "mlp.py")
OTHER_YAML = str(REPO / "examples" / "dnn" / "model_onnx_l20u128.yaml")
#: an AOT TensorFlow model (where --tfaot-batch-rules applies); reading it needs no TensorFlow
AOT = str(REPO / "examples" / "dnn" / "model_tfaot_l10u128.yaml")
OTHER_AOT = str(REPO / "examples" / "cnn" / "model_tfaot_cnn.yaml")
EXPERIMENT = str(REPO / "experiments" / "dnn_onnxruntime.yaml")
OTHER_EXPERIMENT = str(REPO / "experiments" / "linear_runtimes.yaml")
#: decoders (the generation tasks take these, and nothing else): the bundled one, a corpus one
DECODER = str(REPO / "models" / "generation" / "tiny_llama.py")
OTHER_DECODER = str(REPO / "models" / "transformers" / "gpt2.py")


def kinds_of(cls: type) -> tuple[str, ...]:
    """The kinds of model a task family is checked with: a decoder for the generation tasks,
    a YAML, a script and an AOT model for every other."""
    if cls.__module__ == "mlprof.tasks.generation":
        return ("decoder",)
    return ("yaml", "script", "tfaot")


def families() -> list[type]:
    """Every runnable mlprof task class (law's index leaves out the abstract ones)."""
    for m in MODULES:
        importlib.import_module(m)
    classes = {c for c in luigi.task_register.Register._reg
               if isinstance(c, type) and c.__module__.startswith("mlprof.tasks")
               and not c.__dict__.get("exclude_index", False)}
    return sorted(classes, key=lambda c: c.__name__)


def base_kwargs(cls: type, kind: str) -> dict:
    """The required parameters, with a YAML or a script model where the task takes one."""
    params = dict(cls.get_params())
    kw: dict = {"version": "v"}
    model = {"script": SCRIPT, "tfaot": AOT, "decoder": DECODER}.get(kind, str(DNN))
    if "model_file" in params:
        kw["model_file"] = model
    if "model_files" in params:
        kw["model_files"] = (model,)
    if "experiment_file" in params:
        kw["experiment_file"] = EXPERIMENT
    # a precision with a calibration (int8-static) where a YAML model is measured or converted,
    # so that --calibration-batches, which applies to it only, is checked too
    if kind == "yaml" and "calibration_batches" in params:
        if "precision" in params:
            kw["precision"] = "int8-static"
        if "precisions" in params:
            kw["precisions"] = ("fp32", "int8-static")
    elif kind == "script" and cls.__name__ == "ComparePrecisions":  # it needs two
        kw["precisions"] = ("fp32", "int8-dynamic")
    # the load tasks: the server scenario with a script model, so that its parameters (refused
    # with the default streams scenario) are checked too; with dynamic batching, so that
    # --max-wait-ms (refused with --max-batch 1) is
    if kind == "script" and "scenario" in params:
        kw.update(scenario="server", latency_bound_ms=1.0, max_batch=2)
    return kw


#: values a changed parameter needs beside it to be valid (the server scenario needs a rate or
#: a bound): applied when the changed value is the key's
COMPANIONS = {("scenario", "server"): {"latency_bound_ms": 1.0}}


#: values for string parameters whose generic alternative ("other") means nothing; a value
#: table, not a list of parameters to check (a new parameter is checked with the generic value)
STRING_VALUES = {
    "input_data": "zeros", "runtime_version": "1.20.1", "device": "gpu",
    "script_args": "--batch_size 3", "experiments": str(REPO / "tests"),
    "experiments_file": "other.json", "workflow": "slurm", "effective_workflow": "slurm",
    "tfaot_batch_rules": "3:ones", "compare": "threads=1,2", "precision": "int8-dynamic",
}


#: likewise for comma-separated lists
CSV_VALUES = {"file_types": ("png",), "runtime_versions": ("1.20.1",), "streams": (2,),
              "rates": (1000.0,), "prompt_lengths": (16, 64),
              "precisions": ("fp32", "int8-static")}

#: likewise for integers whose generic alternative is out of range
INT_VALUES = {"opset": 17, "interleave": 7,  # interleave: at least MIN_ROUNDS
              "branch": 0}  # a branch every workflow has (a load workflow may have one only)

#: parameters that have no other valid value on this machine (a CPU-only machine has one
#: device), or of one family ("Family.name": ProfileRuntime runs locally only, and refuses
#: another --workflow as every measuring workflow refuses an unknown one): the only ones
#: allowed to be refused in every case
NO_ALTERNATIVE_HERE = {"device", "ProfileRuntime.workflow"}


def alternative(name: str, param: luigi.Parameter, value, kind: str, tmp_path):
    """A valid-looking value other than ``value`` for ``param``."""
    from mlprof.runtimes import runtime_names
    from mlprof.tasks.framework.parameters import (
        BatchSizesParameter,
        PathParameter,
        PathsParameter,
        RuntimeParameter,
        RuntimesParameter,
    )

    if isinstance(param, BatchSizesParameter):
        return (1, 3)
    if isinstance(param, RuntimesParameter):
        # two runtimes that can measure this kind of model (a YAML DNN: onnxruntime, openvino)
        from mlprof.runtimes import runtime_info

        kinds = {"script": ("script", "onnx"), "tfaot": ("tfaot",)}.get(kind, ("onnx",))
        fit = [n for n in runtime_names() if set(runtime_info(n).model_kinds) & set(kinds)]
        return tuple((fit + list(runtime_names()))[:2]) if len(fit) < 2 else tuple(fit[:2])
    if isinstance(param, RuntimeParameter):
        return next(n for n in runtime_names() if n != value)
    other_model = {"script": OTHER_SCRIPT, "tfaot": OTHER_AOT,
                   "decoder": OTHER_DECODER}.get(kind, OTHER_YAML)
    if isinstance(param, PathsParameter):
        return (other_model,)
    if isinstance(param, PathParameter):
        if name == "experiment_file":
            return OTHER_EXPERIMENT
        return other_model
    if isinstance(param, law.MultiRangeParameter):
        return ((0, 1),)
    if isinstance(param, law.CSVParameter):
        if name == "stores":
            return (str(tmp_path),)
        return CSV_VALUES.get(name, ("other",))
    if isinstance(param, luigi.BoolParameter):
        return not value
    if isinstance(param, luigi.ChoiceParameter):
        return next(c for c in param._choices if c != value)
    if isinstance(param, luigi.IntParameter):
        return INT_VALUES.get(name, 2 if value in (0, -1) else value + 1)
    if isinstance(param, luigi.FloatParameter):
        return 0.25 if value is None or value == law.NO_FLOAT else value + 0.25
    if name in STRING_VALUES:
        return STRING_VALUES[name]
    return "other"


def outputs(task) -> set[str]:
    """Every output path of ``task`` (a workflow: every branch's)."""
    def paths(targets) -> set[str]:
        out = set()
        for t in law.util.flatten(targets):
            out |= paths(t.targets) if isinstance(t, law.TargetCollection) else {t.path}
        return out

    return paths(task.output())


CASES = [(cls, kind) for cls in families() for kind in kinds_of(cls)]


def _construct(cls, kw):
    try:
        return cls(**kw)
    except MLProfError:
        return None


#: (family, kind) -> the parameters whose changed value was refused
REFUSED: dict[tuple[str, str], set[str]] = {}
#: (family, kind) cases skipped because the family does not take that kind of model
NOT_TAKEN: set[tuple[str, str]] = set()


#: cases of 2 s or more here (2026-11-26: 2.2 s, 3.1-4.0 s in CI): out of the 5-minute fast tier
SLOW_CASES = {("MeasureRuntime", "script")}


@pytest.mark.parametrize("cls, kind", [
    pytest.param(c, k, marks=pytest.mark.slow) if (c.__name__, k) in SLOW_CASES else (c, k)
    for c, k in CASES], ids=[f"{c.__name__}-{k}" for c, k in CASES])
def test_every_parameter_reaches_the_output_or_says_why(cls, kind, store, tmp_path):
    # a measured version named like the generic test value ("other"), for options that must
    # name one (Dashboard --current)
    (store / "MeasureRuntime" / "m__0123abcd" / "onnxruntime-1__cpu" / "s" / "other").mkdir(
        parents=True)
    base_kw = base_kwargs(cls, kind)
    base = _construct(cls, base_kw)
    if base is None:
        NOT_TAKEN.add((cls.__name__, kind))
        pytest.skip(f"{cls.__name__} does not take a {kind} model")
    base_out = outputs(base)
    assert base_out, f"{cls.__name__} has no outputs"
    unaccounted = []
    refused = REFUSED.setdefault((cls.__name__, kind), set())
    for name, param in cls.get_params():
        if not param.significant:
            if not cls.param_reason(name):
                unaccounted.append(f"{name} (insignificant, no reason given)")
            continue
        value = alternative(name, param, getattr(base, name), kind, tmp_path)
        try:
            extra = COMPANIONS.get((name, value), {}) if isinstance(value, str) else {}
            other = cls(**{**base_kw, **extra, name: value})
        except MLProfError:
            refused.add(name)  # refused: a value that does not apply is never ignored
            continue
        if other.task_id == base.task_id:
            continue  # normalized to the same value (an alias): the same question
        if outputs(other) == base_out and not cls.param_reason(name):
            unaccounted.append(f"{name}={value!r}")
    assert not unaccounted, (f"{cls.__name__} ({kind} model): these change the task but not "
                             f"its output path: {', '.join(unaccounted)}")


@pytest.mark.slow  # after every case, SLOW_CASES included: the slow tier runs after the fast one
def test_no_parameter_escapes_by_being_refused_everywhere():
    """A parameter whose test value is refused for every kind of model was never checked (the
    test above would pass vacuously): each one must be accepted somewhere."""
    families_seen = {f for f, _ in REFUSED}
    if not families_seen:
        pytest.skip("run with the enumeration test")
    family_kinds = {c.__name__: kinds_of(c) for c in families()}
    escaped = []
    for family in families_seen:
        if any((family, k) not in REFUSED and (family, k) not in NOT_TAKEN
               for k in family_kinds[family]):
            continue  # a case of another tier (SLOW_CASES) did not run: checked by pytest --all
        kinds = [k for f, k in REFUSED if f == family]
        always = set.intersection(*(REFUSED[(family, k)] for k in kinds))
        escaped += [f"{family}.{n}" for n in sorted(always - NO_ALTERNATIVE_HERE)
                    if f"{family}.{n}" not in NO_ALTERNATIVE_HERE]
    assert not escaped, escaped


def test_the_registry_has_every_family():
    names = {c.__name__ for c in families()}
    assert {"MeasureRuntime", "MergeRuntimes", "PlotRuntimes", "PlotMultiRuntimes",
            "DiscoverModels", "ExportOnnx", "Report", "PlotHistory", "Dashboard",
            "RunExperiment", "ConfirmResults", "Nightly"} <= names, names
    assert not any(n.endswith("Mixin") or n in ("BaseTask", "MeasurementTask") for n in names)


@pytest.mark.parametrize("cls", families(), ids=lambda c: c.__name__)
def test_tasks_stay_three_mixins_deep(cls):
    """A concrete task's chain of mlprof base classes is at most three deep."""
    def depth(c: type) -> int:
        bases = [b for b in c.__bases__ if b.__module__.startswith("mlprof.")]
        return 1 + max((depth(b) for b in bases), default=0) if bases else 0

    assert depth(cls) <= 3, [c.__name__ for c in cls.__mro__ if c.__module__.startswith("mlprof")]


def test_an_option_that_does_not_apply_is_refused(store):
    from mlprof.tasks.runtime import MergeRuntimes

    with pytest.raises(MLProfError, match="--calibration-batches: applies to --precision "
                       "int8-static only"):
        MergeRuntimes(version="v", model_file=str(DNN), precision="int8-dynamic",
                      calibration_batches=4)
    with pytest.raises(MLProfError, match="--opset: applies to ONNX exports only"):
        MergeRuntimes(version="v", model_file=SCRIPT, runtime="torch", opset=17)
    with pytest.raises(MLProfError, match="--script-args"):
        MergeRuntimes(version="v", model_file=str(DNN), script_args="--x 1")
