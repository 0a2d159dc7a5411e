"""The measurement settings: one definition each, one check, used by the harness, the mlprof
command and the Python API."""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
import pytest

from mlprof.cli import _settings, build_parser
from mlprof.errors import MLProfError
from mlprof.measure import MeasureSettings
from mlprof.measure.inputs import make_feeds
from mlprof.measure.settings import (
    SETTINGS,
    Setting,
    check_batch_size,
    check_batch_sizes,
    check_setting,
    check_settings,
    cli_settings,
    setting,
)
from mlprof.model import InputSpec
from tests.helpers import DNN


def _bad_values() -> list[tuple[str, object, str]]:
    """(setting, value, expected message part) for every setting, from its definition."""
    out = []
    for s in SETTINGS.values():
        if s.min is not None:
            out.append((s.name, s.min - (1 if s.type is int else 0.5), f"must be >= {s.min:g}"))
        if s.type is int:
            out += [(s.name, True, "must be an integer"), (s.name, 1.5, "must be an integer"),
                    (s.name, "3", "must be an integer")]
        elif s.type is float:
            out += [(s.name, math.nan, "must be a finite number"),
                    (s.name, math.inf, "must be a finite number"),
                    (s.name, -math.inf, "must be a finite number"),
                    (s.name, False, "must be a number"), (s.name, "0.5", "must be a number")]
        else:
            out.append((s.name, 3, "must be a string"))
    return out


@pytest.mark.parametrize("name, value, message", _bad_values())
def test_each_bad_value_gives_one_error_naming_the_option(name, value, message):
    s = SETTINGS[name]
    with pytest.raises(MLProfError) as err:
        check_setting(name, value)
    assert err.value.field == (s.flag or name)
    assert message in err.value.message
    assert "\n" not in str(err.value)


def test_every_setting_is_covered_and_the_options_follow_the_names():
    assert list(SETTINGS) == [f.name for f in fields(MeasureSettings)]
    assert [s.name for s in cli_settings()] == ["threads", "n_calls", "n_events", "warmup",
                                                "min_duration", "input_data", "precision"]
    for s in cli_settings():
        assert s.flag == "--" + s.name.replace("_", "-")
        assert s.help and "default:" not in s.help  # the users of the help add it
        assert isinstance(s.default, s.type)
        assert check_setting(s.name, s.default) == s.default  # the defaults pass their own check
    assert SETTINGS["batch_size"].required and not SETTINGS["seed"].flag


def test_defaults_are_the_documented_ones():
    defaults = {s.name: s.default for s in SETTINGS.values() if not s.required}
    assert defaults == {"runtime": "onnxruntime", "device": "cpu", "threads": 1, "n_calls": 100,
                        "n_events": 1, "warmup": 10, "min_duration": 0.5,
                        "input_data": "random", "seed": 0, "tfaot_batch_rules": "",
                        "precision": "fp32"}
    assert MeasureSettings(batch_size=1).min_duration == 0.5


def test_values_are_normalized(tmp_path):
    assert check_setting("min_duration", 0) == 0.0
    assert isinstance(check_setting("min_duration", 0), float)
    n = check_setting("n_calls", np.int64(5))
    assert n == 5 and type(n) is int
    assert check_setting("runtime", "ORT") == "onnxruntime"
    assert check_setting("input_data", " Zeros ") == "zeros"
    f = tmp_path / "in.npz"
    np.savez(f, x=np.zeros((2, 3)))
    assert check_setting("input_data", str(f)) == str(f)
    assert check_settings({"threads": 0, "warmup": 0}) == {"threads": 0, "warmup": 0}
    assert check_setting("tfaot_batch_rules", "6:4,4 - 3:ones") == "3:1,1,1-6:4,4"


@pytest.mark.parametrize("name, value, field, message", [
    ("runtime", "nosuchruntime", "--runtime", "unknown runtime 'nosuchruntime'"),
    ("input_data", "noise", "--input-data", "expected one of random, incremental"),
    ("input_data", "/nonexistent/in.npz", "--input-data", "input data file not found"),
])
def test_validators(name, value, field, message):
    with pytest.raises(MLProfError) as err:
        check_setting(name, value)
    assert err.value.field == field and message in str(err.value)


def test_unknown_setting_lists_the_valid_ones():
    with pytest.raises(MLProfError) as err:
        check_settings({"n_call": 3})
    assert err.value.field == "n_call"
    assert "did you mean n_calls?" in str(err.value)
    assert all(name in str(err.value) for name in SETTINGS)
    with pytest.raises(MLProfError, match="unknown setting"):
        setting("speed")


def test_a_maximum_is_checked():
    s = Setting("x", int, 1, "a test setting", flag="--x", min=1, max=3)
    assert s.check(3) == 3
    with pytest.raises(MLProfError, match="--x: must be <= 3, got 4"):
        s.check(4)


def test_batch_size_is_checked_once_with_one_message():
    expected = "--batch-sizes: batch sizes must be >= 1, got 0"
    with pytest.raises(MLProfError) as direct:
        check_batch_size(0)
    with pytest.raises(MLProfError) as harness:
        MeasureSettings(batch_size=0).validated()
    with pytest.raises(MLProfError) as feeds:
        make_feeds([InputSpec("x", (3,), "float32")], 0)
    with pytest.raises(MLProfError) as sweep:
        check_batch_sizes([4, 0, 1])
    assert str(direct.value) == str(harness.value) == str(feeds.value) == str(sweep.value) \
        == expected
    with pytest.raises(MLProfError, match="batch sizes must be an integer, got True"):
        check_batch_size(True)
    with pytest.raises(MLProfError, match="at least one batch size"):
        check_batch_sizes([])
    assert check_batch_sizes([8, 1, 8]) == (1, 8)


def test_validated_checks_every_setting_and_the_device():
    s = MeasureSettings(batch_size=np.int64(2), runtime="ort", min_duration=0).validated()
    assert (s.batch_size, s.runtime, s.min_duration) == (2, "onnxruntime", 0.0)
    with pytest.raises(MLProfError, match="--min-duration: must be a finite number, got nan"):
        MeasureSettings(batch_size=1, min_duration=math.nan).validated()
    with pytest.raises(MLProfError, match="--warmup: must be an integer, got True"):
        MeasureSettings(batch_size=1, warmup=True).validated()
    with pytest.raises(MLProfError) as err:
        MeasureSettings(batch_size=1, device="GPU").validated()
    assert err.value.field == "--device"


@pytest.mark.parametrize("value, on", [
    ("1", True), ("true", True), ("YES", True), (" on ", True),
    ("", False), ("0", False), ("false", False), ("No", False), ("off", False), ("OFF", False),
])
def test_mlp_quick_takes_on_and_off_words(value, on, monkeypatch):
    """``MLP_QUICK=off`` used to turn quick mode on (anything but empty, 0, false, no did)."""
    from mlprof.measure.settings import quick

    monkeypatch.setenv("MLP_QUICK", value)
    assert quick() is on


@pytest.mark.parametrize("value", ["2", "maybe", "offf", "-1"])
def test_mlp_quick_refuses_other_values_in_one_line(value, monkeypatch):
    from mlprof.measure.settings import quick

    monkeypatch.setenv("MLP_QUICK", value)
    for check in (quick, MeasureSettings(batch_size=1).validated):
        with pytest.raises(MLProfError) as err:
            check()
        assert err.value.field == "MLP_QUICK" and "\n" not in str(err.value)
        assert repr(value) in str(err.value)


def test_a_bad_mlp_quick_exits_40_in_one_line_writing_nothing(store):
    from tests.helpers import files_in, law_run

    r = law_run("PlotRuntimes", "--version", "v1", store=store, env={"MLP_QUICK": "off-ish"})
    assert r.returncode == 40, r.stdout + r.stderr
    errors = [line for line in (r.stdout + r.stderr).splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and "MLP_QUICK: 'off-ish' is not a value it takes" in errors[0], errors
    assert not files_in(store)


# --- the mlprof command ---------------------------------------------------------------------------
def test_cli_defaults_are_the_definitions():
    a = build_parser().parse_args(["benchmark", str(DNN)])
    for s in cli_settings():
        got = getattr(a, s.name)
        assert got == s.default and type(got) is s.type, s.name
    assert check_setting("runtime", a.runtimes) == SETTINGS["runtime"].default
    assert a.batch_sizes == (1,)
    # everything the command measures with is passed on, n_events and input_data included
    assert _settings(a) == {**{s.name: s.default for s in cli_settings()}, "script_args": ""}


def test_cli_options_are_parsed_and_checked(tmp_path):
    f = tmp_path / "in.npy"
    np.save(f, np.zeros((2, 64), dtype=np.float32))
    a = build_parser().parse_args(["benchmark", str(DNN), "--n-events", "3", "--input-data",
                                   str(f), "--min-duration", "0", "--batch-sizes", "8,1,8"])
    assert (a.n_events, a.input_data, a.min_duration) == (3, str(f), 0.0)
    assert a.batch_sizes == (1, 8)


@pytest.mark.parametrize("args, message", [
    *[((s.flag, str(s.min - 1)),
       f"mlprof error: {s.flag}: must be >= {s.min:g}, got {s.type(s.min - 1)!r}\n")
      for s in cli_settings() if s.min is not None],
    (("--n-calls", "1.5"), "mlprof error: --n-calls: must be an integer, got '1.5'"),
    (("--min-duration", "inf"), "mlprof error: --min-duration: must be a finite number, got inf"),
    (("--input-data", "noise"), "mlprof error: --input-data: expected one of random"),
    (("--batch-sizes", "1,0"), "mlprof error: --batch-sizes: batch sizes must be >= 1, got 0"),
    (("--batch-sizes", "1,x"), "mlprof error: --batch-sizes: batch sizes must be an integer"),
])
def test_cli_refuses_bad_values_naming_the_option(capsys, args, message):
    from mlprof.cli import EXIT_BAD_INPUT, main

    assert main(["benchmark", str(DNN), *args]) == EXIT_BAD_INPUT == 40
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# --- the Python API -------------------------------------------------------------------------------
def test_api_refuses_unknown_and_bad_settings_before_running_anything(store):
    import mlprof

    with pytest.raises(MLProfError) as err:
        mlprof.benchmark_files(str(DNN), n_call=5)
    msg = str(err.value)
    assert msg.startswith("n_call: unknown setting; did you mean n_calls? valid: ")
    assert all(s.name in msg for s in cli_settings()) and "\n" not in msg
    with pytest.raises(MLProfError, match="runtime: unknown setting"):
        mlprof.benchmark_files(str(DNN), runtime="torch")  # that is runtimes=[...] here
    with pytest.raises(MLProfError, match="--min-duration: must be >= 0, got -1.0"):
        mlprof.benchmark_files(str(DNN), min_duration=-1)
    with pytest.raises(MLProfError, match="--batch-sizes: batch sizes must be >= 1, got 0"):
        mlprof.benchmark_files(str(DNN), batch_sizes=[0])
    with pytest.raises(MLProfError, match="n_calls: unknown setting"):
        mlprof.export_onnx(str(DNN), n_calls=5)  # export has no measurement settings
    assert not store.exists()
