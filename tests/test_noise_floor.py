"""The noise floor per host (issue 36 item 3): the floor of given A/A ratios, the record's
checks against hostile values, a real ``law run CalibrateNoise`` into a temporary store (once
per fingerprint, whatever --version), and Nightly requiring it and recording what it used.

The floor's figures are computed on given ratios (deterministic); the real runs check what was
written and read back, never how large this machine's floor is.
"""

from __future__ import annotations

import copy
import json
import logging
import math

import numpy as np
import pytest

from mlprof.errors import CorruptResult, MLProfError
from mlprof.measure.calibration import calibration_classes, check_pairs, floor_of
from mlprof.measure.noise import (
    NOT_CALIBRATED_SHORT,
    describe_class,
    find_floor,
    noise_paths,
    read_noise,
)
from mlprof.measure.provenance import measurement_header
from mlprof.results import records
from mlprof.results.records import NOISE_MAX_PAIRS, NoiseRecord
from mlprof.sysinfo import fingerprint_id, host_fingerprint
from tests.helpers import DNN, files_in, law_run

#: 20 pairs whose |ratio - 1| are 0.001 ... 0.020, alternately above and below 1
RATIOS = [1 + (k / 1000) * (-1) ** k for k in range(1, 21)]


def test_the_floor_is_the_95th_percentile_of_the_pairs_with_a_seeded_interval():
    f = floor_of(RATIOS)
    # 95th percentile of 0.001..0.020 (linear): position 0.95 x 19 = 18.05 -> 0.01905
    assert f["floor"] == pytest.approx(0.01905)
    assert f["median_abs"] == pytest.approx(0.0105)
    assert f["ci_low"] <= f["floor"] <= f["ci_high"] <= 0.020 + 1e-12
    assert f["ci_low"] < f["floor"]  # resamples without the largest pairs
    assert floor_of(RATIOS) == f  # seeded: the same ratios, the same interval
    assert floor_of(RATIOS, seed=1) != f
    # a ratio and its inverse are as far from 1 either way (to first order): A/A' or A'/A
    assert floor_of([1 / r for r in RATIOS])["floor"] == pytest.approx(0.01905, rel=0.03)


def test_the_floor_is_inside_its_interval_whatever_the_pairs():
    """Widened where the bootstrap distribution is lopsided: a record's floor is always inside
    its interval (NoiseRecord refuses one outside)."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(20, 60))
        ratios = np.exp(rng.standard_t(2, n) * rng.uniform(0.001, 0.2))
        f = floor_of(ratios, seed=int(rng.integers(1000)))
        assert f["ci_low"] <= f["floor"] <= f["ci_high"]


def test_bad_ratios_and_pairs_are_refused():
    for bad in ([1.0], [1.0, float("nan")], [1.0, 0.0], [1.0, -1.0]):
        with pytest.raises(ValueError):
            floor_of(bad)
    assert check_pairs(20) == 20 and check_pairs(NOISE_MAX_PAIRS) == NOISE_MAX_PAIRS
    for bad in (5, 19, NOISE_MAX_PAIRS + 1, True, 20.0):
        with pytest.raises(MLProfError, match="--pairs"):
            check_pairs(bad)


def test_classes_cover_short_and_long_calls_at_one_thread_and_the_usable_cpus():
    assert [(c.batch_size, c.threads) for c in calibration_classes(4.0)] == [
        (1, 1), (256, 1), (256, 4)]
    assert [(c.batch_size, c.threads) for c in calibration_classes(1.5)] == [(1, 1), (256, 1)]
    assert [c.threads for c in calibration_classes(None)] == [1, 1]


# --- the record --------------------------------------------------------------------------------

def _record() -> dict:
    c = {"call_ms": 0.02, "threads": 1, "pairs": 20, **floor_of(RATIOS), "model": "dnn_l10u128",
         "runtime": "onnxruntime", "batch_size": 1, "ratios": RATIOS}
    return records.stamp({**measurement_header().to_json(), "fingerprint": host_fingerprint(),
                          "fingerprint_id": fingerprint_id(), "classes": [c]}, "noise")


def test_a_record_reads_back_and_says_its_floor():
    rec = NoiseRecord.from_json(_record(), "noise.json")
    assert rec.fingerprint_id == fingerprint_id()
    assert rec.floor_for(0.03, 1) == pytest.approx(0.01905)
    assert rec.min_detectable(0.03, 1) == pytest.approx(0.0381)
    assert describe_class(rec.classes[0]) == (
        "0.02 ms calls, 1 thread(s): floor 1.9 % [" + f"{100 * rec.classes[0].ci_low:.1f}, "
        "2.0], minimum detectable change 3.8 % (20 A/A pairs)")


@pytest.mark.parametrize("field, change", [
    ("classes[0].floor", lambda r: r["classes"][0].update(floor=0.5)),  # outside its interval
    ("classes[0].floor", lambda r: r["classes"][0].update(floor=math.nan)),
    ("classes[0].ci_high", lambda r: r["classes"][0].update(ci_high=math.inf)),
    ("classes[0].pairs", lambda r: r["classes"][0].update(pairs=10 ** 9)),
    ("classes[0].ratios", lambda r: r["classes"][0].update(ratios=[1.0] * 10 ** 4)),
    ("classes[0].ratios.3", lambda r: r["classes"][0]["ratios"].__setitem__(3, -1.0)),
    ("fingerprint_id", lambda r: r.update(fingerprint_id="../../etc")),
    ("fingerprint_id", lambda r: r.update(fingerprint_id=12)),
    ("classes", lambda r: r.update(classes=[])),
    ("classes", lambda r: r.pop("classes")),
    ("fingerprint", lambda r: r.update(fingerprint="a string")),
])
def test_a_hostile_record_is_one_line_naming_its_field(field, change, tmp_path):
    rec = copy.deepcopy(_record())
    change(rec)
    with pytest.raises(CorruptResult) as e:
        NoiseRecord.from_json(rec, "noise.json")
    assert "\n" not in str(e.value) and field in str(e.value), str(e.value)
    # through the file, as every reader reads it: the same one line, naming the file
    path = tmp_path / "noise.json"
    path.write_text(json.dumps(rec))
    with pytest.raises(MLProfError) as e2:
        read_noise(str(path))
    assert "\n" not in str(e2.value) and str(path) in str(e2.value)


def test_find_floor_skips_a_damaged_record_with_a_warning(tmp_path, caplog):
    fid = fingerprint_id()
    d = tmp_path / "CalibrateNoise" / "host" / f"fp-{fid}" / "aa1"
    d.mkdir(parents=True)
    (d / "noise.json").write_text('{"format_version": ')
    with caplog.at_level(logging.WARNING):
        assert find_floor(str(tmp_path)) is None
    assert "skipped a damaged noise record" in caplog.text
    (d / "noise.json").write_text(json.dumps(_record()))
    assert find_floor(str(tmp_path)).fingerprint_id == fid
    assert find_floor(str(tmp_path), "0" * 12) is None  # another fingerprint has none
    # a record copied into another fingerprint's directory is not that machine's floor
    other = tmp_path / "CalibrateNoise" / "host" / "fp-000000000000" / "aa1"
    other.mkdir(parents=True)
    (other / "noise.json").write_text(json.dumps(_record()))
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert find_floor(str(tmp_path), "0" * 12) is None
    assert f"the record is of fingerprint {fid}, its directory of 000000000000" in caplog.text


# --- the task ----------------------------------------------------------------------------------

def test_too_few_pairs_is_one_line_and_nothing_is_written(store):
    r = law_run("CalibrateNoise", "--pairs", "5", store=store, timeout=120)
    out = (r.stdout + r.stderr).strip()
    assert r.returncode == 40, out[-2000:]
    assert out == ("ERROR: luigi-interface - mlprof error: --pairs: give at least 20 A/A pairs, "
                   "got 5 (the 95th percentile of fewer is their largest: no floor)")
    assert not store.exists()


@pytest.mark.slow  # a real calibration (1-7 s here, more beside other tests)
def test_calibrate_noise_writes_one_floor_per_fingerprint(store, capsys):
    r = law_run("CalibrateNoise", "--version", "v1", store=store, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    (path,) = [p for p in files_in(store) if p.name == "noise.json"]
    assert noise_paths(str(store), fingerprint_id()) == [str(path)]
    assert "/v1/" not in str(path) and str(path).endswith(f"/fp-{fingerprint_id()}/aa1/noise.json")
    rec = find_floor(str(store))
    assert rec is not None and rec.fingerprint_id == fingerprint_id()
    usable = host_fingerprint().get("usable_cpus")
    assert [(c.batch_size, c.threads) for c in rec.classes] == [
        (c.batch_size, c.threads) for c in calibration_classes(usable)]
    for c in rec.classes:
        assert c.pairs == 20 and c.ratios is not None and len(c.ratios) == 20
        assert c.floor == pytest.approx(floor_of(c.ratios)["floor"])
    # short and long calls: the classes' call times are apart
    assert rec.classes[1].call_ms > 5 * rec.classes[0].call_ms
    assert rec.header.host_fingerprint == fingerprint_id()
    assert rec.data is not None and rec.data["method"].startswith("per class, 20 A/A pairs")
    # the publish message states each class's floor, interval and minimum detectable change
    for c in rec.classes:
        assert describe_class(c) in out
    # a second run (another --version, more pairs) does nothing: one floor per fingerprint;
    # it shows the stored floor and says that --pairs did not apply
    again = law_run("CalibrateNoise", "--version", "v2", "--pairs", "40", store=store,
                    timeout=120)
    said = again.stdout + again.stderr
    assert again.returncode == 0, said[-2000:]
    assert "luigi: 0 ran, 1 complete already" in said
    assert [p for p in files_in(store) if p.name == "noise.json"] == [path]
    assert f"noise floor of fingerprint {fingerprint_id()} (measured " in said
    assert all(describe_class(c) in said for c in rec.classes)
    assert ("--pairs 40 not applied: this fingerprint's floor is measured (20 pairs); delete "
            "the file to measure it again") in said

    # mlprof system-info shows it; without a store of it, says how to get one
    from mlprof.cli import main

    assert main(["system-info"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["host_fingerprint"] == fingerprint_id()
    assert [c["floor"] for c in info["noise_floor"]] == [c.floor for c in rec.classes]
    assert info["noise_floor"][0]["min_detectable"] == pytest.approx(2 * rec.classes[0].floor)


def test_system_info_without_a_floor_says_not_calibrated(store, capsys):
    from mlprof.cli import main

    assert main(["system-info"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["noise_floor"] == NOT_CALIBRATED_SHORT == \
        "not calibrated: law run CalibrateNoise"


def test_nightly_requires_the_floor_unless_told_not_to(tmp_path):
    from mlprof.tasks.nightly import Nightly
    from mlprof.tasks.noise import CalibrateNoise

    exps = tmp_path / "experiments"
    exps.mkdir()
    night = Nightly(version="n1", experiments=str(exps))
    noise = night.requires()["noise"]
    assert isinstance(noise, CalibrateNoise)
    assert f"/fp-{fingerprint_id()}/aa1/" in noise.output().path
    assert noise.priority > 10  # before the experiments
    assert "noise" not in Nightly(version="n1", experiments=str(exps),
                                  calibrate_noise=False).requires()


@pytest.mark.slow  # a real night: the calibration, one experiment point, the dashboard
def test_a_night_calibrates_a_new_fingerprint_and_records_its_floor(store):
    exps = store.parent / "experiments"
    exps.mkdir()
    (exps / "one.yaml").write_text(f"model_files: [{DNN}]\nbatch_sizes: [1]\n"
                                   "settings: {n_calls: 10, min_duration: 0}\n")
    r = law_run("Nightly", "--version", "n1", "--experiments", str(exps), store=store,
                timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    # calibrated first, so that the whole night is judged by the floor
    assert 0 <= r.stdout.find("calibrating the noise floor") < r.stdout.find("experiment 'one'")
    (noise,) = [p for p in files_in(store) if p.name == "noise.json"]
    (night,) = store.glob("Nightly/*/n1/nightly.json")
    used = json.loads(night.read_text())["noise_floor"]
    rec = read_noise(str(noise))
    assert used["calibrated"] is True and used["file"] == str(noise)
    assert used["fingerprint_id"] == fingerprint_id() == rec.fingerprint_id
    assert [c["floor"] for c in used["classes"]] == [c.floor for c in rec.classes]
    assert [c["min_detectable"] for c in used["classes"]] == [2 * c.floor for c in rec.classes]
    # without calibrating, on a store without a floor: the night says so
    other = store.parent / "other"
    r = law_run("Nightly", "--version", "n1", "--experiments", str(exps),
                "--calibrate-noise", "False", store=other, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert not [p for p in files_in(other) if p.name == "noise.json"]
    (night,) = other.glob("Nightly/*/n1/nightly.json")
    used = json.loads(night.read_text())["noise_floor"]
    assert used == {"fingerprint_id": fingerprint_id(), "calibrated": False,
                    "note": "this host's noise floor is not measured (law run CalibrateNoise)"}
