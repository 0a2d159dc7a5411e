"""Records with a format version (issue 20): a newer or damaged ``format_version`` is refused
in one line naming the file, never guessed at; a hostile ``model_identity`` never becomes a
name (the record's task names the model instead)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlprof.errors import CorruptResult
from mlprof.measure.results import read_provenance
from mlprof.results import records
from mlprof.results.layout import branch_files
from tests.helpers import damaged_copies, one_warning_each


def _branch_json(tmp_path: Path, **extra) -> Path:
    path = tmp_path / branch_files(4)["json"]
    path.write_text(json.dumps({"settings": {"batch_size": 4}, "n_samples": 10, **extra}))
    return path


def test_every_writer_stamps_the_format_and_kind():
    rec = records.stamp({"format_version": 0, "record": "x", "a": 1}, "branch")
    assert list(rec)[:2] == ["format_version", "record"]
    assert rec == {"format_version": records.FORMAT_VERSION, "record": "branch", "a": 1}
    with pytest.raises(ValueError):
        records.stamp({}, "nonsense")


@pytest.mark.parametrize("value, why", [
    (records.FORMAT_VERSION + 1, "is newer than this mlprof reads"),
    ("1", "not a whole number"), (True, "not a whole number"), (-1, "not a whole number"),
    (1.5, "not a whole number"), (None, "not a whole number"), ([1], "not a whole number"),
])
def test_a_newer_or_damaged_format_is_refused_naming_the_file(tmp_path, value, why):
    path = _branch_json(tmp_path, format_version=value)
    with pytest.raises(CorruptResult) as e:
        read_provenance(path)
    assert why in str(e.value) and path.name in str(e.value)


def test_format_0_and_1_read(tmp_path):
    assert read_provenance(_branch_json(tmp_path))["n_samples"] == 10
    assert read_provenance(_branch_json(tmp_path, format_version=1))["n_samples"] == 10


@pytest.mark.parametrize("ident", [
    "linear", 7, [], {"name": 5}, {"name": ""}, {"name": "   "}, {"label": "x"}, None,
])
def test_a_hostile_model_identity_falls_back_to_the_task(ident):
    prov = {"model_identity": ident, "model": {"name": "model", "spec_file": "/s/model.onnx"},
            "task": {"model_name": "linear", "model_file": "/m/linear.py"}}
    got = records.model_identity(prov, "linear", "5af07083")
    assert (got.name, got.label, got.file) == ("linear", "linear", "/m/linear.py")


def test_identity_fields_of_other_types_are_dropped():
    prov = {"model_identity": {"name": "m", "label": ["<b>"], "file": 3, "hash": {"a": 1}}}
    got = records.model_identity(prov, model_hash="01234567")
    assert got == records.ModelIdentity("m", "m", None, "01234567")


# --- load records (issue 35): every field checked, a damaged record costs only its row ----------

def _set(path: str, value):
    """A damage: the field at ``path`` (``points.0.streams``) set to ``value``."""
    def damage(rec: dict) -> None:
        *where, last = path.split(".")
        obj = rec
        for k in where:
            obj = obj[int(k)] if k.isdigit() else obj[k]
        obj[int(last) if last.isdigit() else last] = value
    return damage


def _drop(path: str):
    """A damage: the field at ``path`` removed."""
    def damage(rec: dict) -> None:
        *where, last = path.split(".")
        obj = rec
        for k in where:
            obj = obj[int(k)] if k.isdigit() else obj[k]
        del obj[last]
    return damage


#: (name, damage, the field the warning names): each field a reader formats or shows, of the
#: wrong type, missing, out of range; NaN and Infinity as JSON writes them, and as strings
LOAD_DAMAGES = [
    ("batch-1e308", _set("points.0.batch_size", 1e308), "points[0].batch_size"),
    ("record-batch-1e308", _set("batch_size", 1e308), "batch_size"),
    ("streams-half", _set("points.0.streams", 0.5), "points[0].streams"),
    ("streams-zero", _set("points.0.streams", 0), "points[0].streams"),
    ("streams-missing", _drop("points.0.streams"), "points[0].streams"),
    ("threads-text", _set("points.0.threads", "two"), "points[0].threads"),
    ("threads-missing", _drop("points.0.threads"), "points[0].threads"),
    ("threads-bool", _set("points.0.threads", True), "points[0].threads"),
    ("max-batch-text", _set("points.0.max_batch", "8"), "points[0].max_batch"),
    ("max-batch-huge", _set("points.0.max_batch", 10 ** 9), "points[0].max_batch"),
    ("max-wait-nan-text", _set("points.0.max_wait_ms", "NaN"), "points[0].max_wait_ms"),
    ("percentile-bool", _set("points.0.percentile", True), "points[0].percentile"),
    ("percentile-100", _set("points.0.percentile", 100.0), "points[0].percentile"),
    ("bound-text", _set("load.latency_bound_ms", "5"), "load.latency_bound_ms"),
    ("load-percentile-nan", _set("load.percentile", float("nan")), "load.percentile"),
    ("load-max-batch-zero", _set("load.max_batch", 0), "load.max_batch"),
    ("settings-list", _set("settings", [1, 2]), "settings"),
    ("settings-threads-text", _set("settings.threads", "x"), "settings.threads"),
    ("rate-negative", _set("points.0.rate", -100.0), "points[0].rate"),
    ("rates-negative", _set("load.rates", [-1.0]), "load.rates[0]"),
    ("events-nan-text", _set("points.0.events_per_s", "NaN"), "points[0].events_per_s"),
    ("events-infinite", _set("points.0.events_per_s", float("inf")),
     "points[0].events_per_s"),
    ("p99-list", _set("points.0.p99_ms", [3.0]), "points[0].p99_ms"),
    ("verdict-number", _set("points.0.verdict", 3), "points[0].verdict"),
    ("environment-text", _set("points.0.environment", "quiet"), "points[0].environment"),
    ("busy-negative", _set("points.0.busy", -0.5), "points[0].busy"),
    ("best-rate-text", _set("load.search", {"best_rate": "fast"}), "load.search.best_rate"),
    ("host-number", _set("host", 5), "host"),
    ("timestamp-list", _set("timestamp", []), "timestamp"),
    ("load-missing", _drop("load"), "load"),
    ("point-a-list", _set("points.0", [1]), "points[0]"),
    ("sessions-other", _set("points.0.sessions", "many"), "points[0].sessions"),
]


@pytest.fixture(scope="module")
def load_record(tmp_path_factory) -> Path:
    """A server load record written by a real ``law run MeasureLoad`` (one rate, a bound).
    The bound is loose (200 requests/s of the small DNN against 500 ms) so that the point has
    an answer even when the machine stalls: a point whose rate misses its bound has no answer
    and no history (PlotHistory's load panel below counts on one); at 2000/s and 5 ms a
    loaded machine missed it."""
    from tests.helpers import DNN, files_in, law_run

    store = tmp_path_factory.mktemp("load") / "store"
    r = law_run("MeasureLoad", "--version", "v1", "--model-file", str(DNN), "--scenario",
                "server", "--rates", "200", "--latency-bound-ms", "500", "--min-duration",
                "0.2", "--n-calls", "10", "--warmup", "1", store=store,
                env={"MLP_NO_LOCK": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    (path,) = [p for p in files_in(store) if p.suffix == ".json" and p.name.startswith("load_")]
    return path


@pytest.mark.slow  # a real MeasureLoad point (module fixture)
def test_a_real_load_record_reads_back_every_field(load_record):
    raw = json.loads(load_record.read_text())
    rec = records.LoadRecord.from_json(raw, str(load_record))
    assert rec.to_json() == raw
    assert rec.load.scenario == "server" and rec.load.latency_bound_ms == 500.0
    (point,) = rec.points
    assert point.streams == 1 and point.rate == 200.0 and point.batch_size == 1
    assert rec.header.mlprof_version and rec.header.settings["threads"] == 1


@pytest.mark.slow  # a real MeasureLoad point (module fixture)
def test_an_older_load_record_is_upgraded(load_record):
    """Format 0 (no ``format_version``, no ``record``), points without their scenario and
    batch size: read as today's."""
    raw = json.loads(load_record.read_text())
    old = {k: v for k, v in raw.items() if k not in ("format_version", "record")}
    old["points"] = [{k: v for k, v in p.items() if k not in ("scenario", "batch_size")}
                     for p in raw["points"]]
    got = records.LoadRecord.from_json(old, "old.json").to_json()
    assert got["format_version"] == records.FORMAT_VERSION and got["record"] == "load"
    assert got["points"][0]["scenario"] == "server" and got["points"][0]["batch_size"] == 1


def test_the_load_bounds_are_those_of_the_options():
    from mlprof.measure.loadgen import settings as L

    assert records.LOAD_SCENARIOS == L.SCENARIOS and records.LOAD_SESSIONS == L.SESSIONS
    assert (records.LOAD_MAX_STREAMS, records.LOAD_MAX_RATE, records.LOAD_MAX_BOUND_MS,
            records.LOAD_PERCENTILE_RANGE, records.LOAD_MAX_BATCH, records.LOAD_MAX_WAIT_MS) \
        == (L.MAX_STREAMS, L.MAX_RATE, L.MAX_BOUND_MS, L.PERCENTILE_RANGE, L.MAX_BATCH,
            L.MAX_WAIT_MS)


@pytest.mark.slow  # a real MeasureLoad point (module fixture), then fast
@pytest.mark.parametrize("name, damage, field", LOAD_DAMAGES, ids=[d[0] for d in LOAD_DAMAGES])
def test_a_damaged_load_record_is_refused_naming_its_field(load_record, name, damage, field):
    from mlprof.measure.loadgen import read_load

    raw = json.loads(load_record.read_text())
    damage(raw)
    with pytest.raises(CorruptResult) as e:
        records.LoadRecord.from_json(raw, "f.json")
    assert e.value.field == field and e.value.file == "f.json", str(e.value)
    assert "\n" not in str(e.value)
    # read_load, as every reader reads it: the same error (JSON writes NaN and Infinity)
    path = load_record.parent / f"damaged_{name}.json"
    path.write_text(json.dumps(raw))
    try:
        with pytest.raises(CorruptResult) as e:
            read_load(str(path))
        assert e.value.field == field
    finally:
        path.unlink()


@pytest.fixture(scope="module")
def hostile_load_store(load_record, tmp_path_factory) -> tuple[Path, Path, dict[str, Path]]:
    """A store of the good record (versions ``good`` and ``good2``: a history) and each
    damaged one in a version directory of its own (named after the damage)."""
    store = tmp_path_factory.mktemp("hostile") / "store"
    version_dir = load_record.parent
    rel = version_dir.relative_to(version_dir.parents[4])  # MeasureLoad/<model>/<rt>/<set>/v1
    good, bad = damaged_copies(load_record, rel.parent, store, "load_", LOAD_DAMAGES)
    return store, good, bad


@pytest.mark.slow  # one law run each over 33 records
@pytest.mark.parametrize("task", ["Report", "PlotHistory", "Dashboard"])
def test_hostile_load_records_cost_only_their_row(hostile_load_store, tmp_path, task):
    """``law run Report``, ``PlotHistory`` and ``Dashboard`` over the good record and every
    damaged one: exit 0, one warning per damaged record naming its file and field, the good
    record's row there."""
    import pandas as pd

    from tests.helpers import files_in, law_run

    store, good, bad = hostile_load_store
    good2 = good.parent.parent / "good2" / good.name
    out = tmp_path / "out"
    r = law_run(task, "--version", "x1", "--stores", str(store), store=out)
    assert r.returncode == 0, r.stdout + r.stderr
    one_warning_each(r.stdout + r.stderr, bad)
    if task == "Report":
        (csv,) = [p for p in files_in(out) if p.name == "load.csv"]
        df = pd.read_csv(csv)
        assert sorted(df["path"]) == [str(good), str(good2)]
    elif task == "PlotHistory":
        assert "1 load history plot(s)" in r.stdout, r.stdout
    elif task == "Dashboard":
        (index,) = [p for p in files_in(out) if p.name == "index.html"]
        assert "1 load point" in index.read_text()


@pytest.mark.slow  # one mlprof store list over 33 records
def test_mlprof_store_lists_each_damaged_load_record_as_corrupt(hostile_load_store):
    """``mlprof store list``: exit 0, the good record ``ok``, each damaged one ``corrupt``
    with one line naming its file and field."""
    from tests.helpers import mlprof_run

    store, good, bad = hostile_load_store
    r = mlprof_run("store", "list", "--store", str(store))
    assert r.returncode == 0, r.stdout + r.stderr
    good_rows = [line for line in r.stdout.splitlines() if " good" in line]
    assert len(good_rows) == 2 and all(" ok " in g for g in good_rows), r.stdout
    for key, path in bad.items():
        field = key.split(" ")[0]
        rel = str(path.relative_to(store))
        lines = [line for line in r.stdout.splitlines() if line.startswith("corrupt: ")
                 and rel in line]
        assert len(lines) == 1 and f" {field}: " in lines[0], (key, lines)


@pytest.mark.slow  # a real MeasureLoad point (module fixture)
def test_collect_loads_keeps_the_good_row(hostile_load_store, caplog):
    from mlprof.report.collect import collect_loads

    store, good, bad = hostile_load_store
    with caplog.at_level("WARNING", logger="mlprof"):
        rows = collect_loads([store])
    good2 = good.parent.parent / "good2" / good.name
    assert sorted(r["path"] for r in rows) == [str(good), str(good2)]
    one_warning_each(caplog.text, bad)


# --- one header, one writer (issue 35) -----------------------------------------------------------

def test_the_header_has_one_writer():
    """``mlprof_version`` is named once in the package (``records.MLPROF_VERSION``): every
    measurement record's header is filled by ``mlprof.measure.provenance``."""
    import subprocess

    from tests.helpers import REPO

    hits = subprocess.run(["grep", "-rn", '"mlprof_version"', "mlprof/"], cwd=REPO,
                          capture_output=True, text=True).stdout.splitlines()
    assert [h.split(":")[0] for h in hits] == ["mlprof/results/records/core.py"], hits


@pytest.mark.slow  # a branch, a profile and a GEMM peak of the example DNN, in this process
def test_every_writer_starts_with_the_same_checked_header(monkeypatch):
    """A branch's, a profile's and a peak's records all read back as a :class:`Header` with
    the versions, the machine and the environment; the profile's environment says what else
    used the CPUs during its profiled calls, as the branch's does for its timed loop."""
    from mlprof.measure import MeasureSettings
    from mlprof.measure.harness import measure
    from mlprof.measure.peak import measure_peak
    from mlprof.measure.profile import profile
    from tests.helpers import DNN

    s = MeasureSettings(batch_size=2, n_calls=10, warmup=1, min_duration=0.0)
    provs = {"branch": measure(str(DNN), s).provenance,
             "profile": profile(str(DNN), s).provenance,
             "peak": measure_peak("onnxruntime", 1, sizes=(32,), target_s=0.005)}
    for kind, prov in provs.items():
        header = records.Header.from_json(prov, kind)
        assert header.mlprof_version and header.host and header.pid, kind
        assert header.library_versions and "numpy" in header.library_versions, kind
        env = header.environment
        assert env is not None and "other_cpu_cores" in env and "contended" in env, kind
        assert {k: v for k, v in header.to_json().items() if k != "model_identity"} == {
            k: prov[k] for k in header.to_json() if k != "model_identity"}, kind
    assert provs["profile"]["runtime"] == provs["branch"]["runtime"] == "onnxruntime"
    assert provs["profile"]["precision"] == {"precision": "fp32"}


@pytest.mark.parametrize("field, value", [
    ("mlprof_version", 1), ("threads", "1"), ("threads", True), ("settings", []),
    ("batch_size", 1e308), ("environment", "busy"), ("isa", ["AVX2", 3]), ("host", None),
    # the cause record is checked as it is written: names from the one list, numbers in range
    ("environment", {"causes": ["<b>busy</b>"]}), ("environment", {"causes": "cpu-wait"}),
    ("environment", {"run_wait_share": -0.5}), ("environment", {"nr_throttled": 1.5}),
    ("environment", {"drift_pct": float("nan")}),
])
def test_a_damaged_header_field_is_named(field, value):
    rec = {"mlprof_version": "0.1.0", "host": "h", "threads": 1, "settings": {"threads": 1},
           "batch_size": 4, "environment": {"contended": False}, "isa": ["AVX2"]}
    rec[field] = value
    if value is None:  # null where a string belongs: read as absent
        assert records.Header.from_json(rec, "f.json").host is None
        return
    with pytest.raises(CorruptResult) as e:
        records.Header.from_json(rec, "f.json")
    assert e.value.field.startswith(field) and e.value.file == "f.json"


# --- branch, profile and peak records ------------------------------------------------------------

_HEADER = {"mlprof_version": "0.1.0", "git_commit": None, "timestamp": "2026-11-28T12:00:00+00:00",
           "host": "h", "threads": 1, "environment": {"contended": True, "other_cpu_cores": 1.2}}
_FMT = records.FORMAT_VERSION
_BRANCH = {**_HEADER, "format_version": _FMT, "record": "branch",
           "settings": {"batch_size": 4, "threads": 1, "n_calls": 10}, "n_samples": 10,
           "session_creation_ms": 3.0, "first_call_ms": 0.5, "compile_s": 1.2,
           "compile_cache": "hit", "rounds": 1,
           "runtime_settings": {"compile": {"mode": "aot (torch.export + AOTInductor package)"}}}
_PROFILE = {**_HEADER, "format_version": _FMT, "record": "profile", "runtime": "onnxruntime",
            "runtime_version": "1.32.0", "profiler": "onnxruntime", "batch_size": 4,
            "n_profiled_calls": 2, "wall_ms": [0.1, 0.2], "wall_ms_per_call": 0.15,
            "op_ms_per_call": 0.1, "coverage": 0.9, "cut_by_budget": False}
_PEAK = {**_HEADER, "format_version": _FMT, "record": "peak", "peak_gflops": 50.0, "spread": 0.01,
         "n": 512, "stable": True, "contended": False,
         "attempts": [{"peak_gflops": 50.0, "contended": False, "other_cpu_cores": 0.1}]}


@pytest.mark.parametrize("cls, good", [(records.BranchRecord, _BRANCH),
                                       (records.ProfileRecord, _PROFILE),
                                       (records.PeakRecord, _PEAK)])
def test_typed_records_read_back_every_field(cls, good):
    rec = cls.from_json(good, "f.json")
    assert rec.to_json() == good and rec.header.host == "h"
    old = {k: v for k, v in good.items() if k not in ("format_version", "record")}
    assert cls.from_json(old, "f.json").format == 0  # format 0: upgraded on writing back
    assert cls.from_json(old, "f.json").to_json() == good


@pytest.mark.parametrize("cls, good, field, value", [
    (records.BranchRecord, _BRANCH, "n_samples", 0),
    (records.BranchRecord, _BRANCH, "n_samples", 10.0),
    (records.BranchRecord, _BRANCH, "settings", [4]),
    (records.BranchRecord, _BRANCH, "first_call_ms", "NaN"),
    (records.BranchRecord, _BRANCH, "session_creation_ms", -1.0),
    (records.BranchRecord, _BRANCH, "compile_s", "1.2"),
    (records.BranchRecord, _BRANCH, "compile_cache", "warm"),
    (records.BranchRecord, _BRANCH, "record", "profile"),
    (records.BranchRecord, _BRANCH, "threads", True),
    (records.ProfileRecord, _PROFILE, "wall_ms", {"a": 1}),
    (records.ProfileRecord, _PROFILE, "coverage", float("inf")),
    (records.ProfileRecord, _PROFILE, "batch_size", 1e308),
    (records.ProfileRecord, _PROFILE, "cut_by_budget", "no"),
    (records.ProfileRecord, _PROFILE, "profiler", None),
    (records.PeakRecord, _PEAK, "peak_gflops", 0.0),
    (records.PeakRecord, _PEAK, "peak_gflops", True),
    (records.PeakRecord, _PEAK, "attempts", "three"),
    (records.PeakRecord, _PEAK, "stable", 1),
])
def test_a_damaged_typed_record_is_refused_naming_its_field(cls, good, field, value):
    bad = {**good, field: value}
    with pytest.raises(CorruptResult) as e:
        cls.from_json(bad, "f.json")
    assert e.value.field == field and e.value.file == "f.json", str(e.value)


def test_a_branch_names_how_it_compiled_checked_on_read():
    """``runtime_settings.compile.mode`` is a typed field of the branch (reports and event
    lines show it): one printable line of at most 100 characters, else the record is damaged,
    named at that field; a runtime that records no compile has none."""
    assert records.BranchRecord.from_json(_BRANCH).compile_mode.startswith("aot (")
    plain = {k: v for k, v in _BRANCH.items() if k != "runtime_settings"}
    assert records.BranchRecord.from_json(plain).compile_mode is None
    no_mode = {**_BRANCH, "runtime_settings": {"compile": {"cache_dir": None}}}
    assert records.BranchRecord.from_json(no_mode).compile_mode is None
    for mode in ("x" * 101, "", "aot\njit", 7):
        bad = {**_BRANCH, "runtime_settings": {"compile": {"mode": mode}}}
        with pytest.raises(CorruptResult) as e:
            records.BranchRecord.from_json(bad, "f.json")
        assert e.value.field == "runtime_settings.compile.mode" and e.value.file == "f.json"
    with pytest.raises(CorruptResult) as e:
        records.BranchRecord.from_json({**_BRANCH, "runtime_settings": {"compile": "aot"}})
    assert e.value.field == "runtime_settings.compile"


def test_a_profile_without_its_environment_reads_as_not_contended():
    old = {k: v for k, v in _PROFILE.items() if k != "environment"}
    assert records.ProfileRecord.from_json(old).contended is False
    assert records.ProfileRecord.from_json(_PROFILE).contended is True


@pytest.mark.slow  # two sessions of the example DNN, 6 rounds, in this process
def test_an_interleaved_record_reads_back_and_names_a_damaged_field():
    from mlprof.measure import MeasureSettings
    from mlprof.measure.interleave import Config, measure_interleaved
    from tests.helpers import DNN

    configs = [Config(f"m{i}", str(DNN), "onnxruntime", f"m{i}") for i in range(2)]
    res = measure_interleaved(configs, MeasureSettings(batch_size=2, n_calls=5, warmup=1,
                                                       min_duration=0.0), 6)
    raw = records.stamp({"interleaved": True, "task": {"family": "CompareInterleaved"},
                         "compared": None, "batch_sizes": {"2": res.provenance}}, "interleaved")
    raw = json.loads(json.dumps(raw))
    rec = records.InterleavedRecord.from_json(raw, "f.json")
    assert rec.to_json() == raw and rec.runs[2].rounds == 6 and len(rec.runs[2].configs) == 2
    assert rec.runs[2].header.mlprof_version and rec.runs[2].header.timestamp
    for damage, field in [
            (lambda r: r["batch_sizes"]["2"].update(rounds=0), "batch_sizes.2.rounds"),
            (lambda r: r["batch_sizes"]["2"].update(threads="1"), "batch_sizes.2.threads"),
            (lambda r: r["batch_sizes"]["2"]["configs"][1].update(runtime=3),
             "batch_sizes.2.configs[1].runtime"),
            (lambda r: r["batch_sizes"].update({"x": {}}), "batch_sizes.x"),
            (lambda r: r.update(batch_sizes=[]), "batch_sizes")]:
        bad = json.loads(json.dumps(raw))
        damage(bad)
        with pytest.raises(CorruptResult) as e:
            records.InterleavedRecord.from_json(bad, "f.json")
        assert e.value.field == field, str(e.value)


def test_a_cause_record_as_written_reads_back():
    from mlprof.measure.contention import environment, snapshot

    env = environment(snapshot(), snapshot())
    assert records.Header.from_json({"mlprof_version": "0.1.0", "environment": env},
                                    "f.json").environment == env


def test_a_format_1_load_point_reads_its_bound_under_its_one_name():
    """Format 1 wrote a point's bound as ``bound_ms``; it reads (and Report's load.csv shows
    it) as ``latency_bound_ms``, the option's name; format 2 writes that name."""
    path = next((Path(__file__).parent / "fixtures" / "store_v1" / "MeasureLoad").rglob(
        "load_server_*_r500_*.json"))
    raw = json.loads(path.read_text())
    assert raw["format_version"] == 1 and raw["points"][0]["bound_ms"] == 5.0
    rec = records.LoadRecord.from_json(raw, str(path))
    assert rec.points[0].latency_bound_ms == 5.0
    point = rec.to_json()["points"][0]
    assert point["latency_bound_ms"] == 5.0 and "bound_ms" not in point
    raw["points"][0]["bound_ms"] = -1.0  # still checked under its old name
    with pytest.raises(CorruptResult) as e:
        records.LoadRecord.from_json(raw, "f.json")
    assert e.value.field == "points[0].bound_ms"
