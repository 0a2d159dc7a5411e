"""THE precision table (:mod:`mlprof.runtimes.precisions`) against every place that offers,
checks or lists a precision: the registry, the parameters, the layout, QuantizeModel,
ExportOnnx, the model library, the settings, the dashboard and the documentation. A precision
added to the table and not to one of them (or the other way round) fails here, naming it."""

from __future__ import annotations

import re

import pytest

from mlprof.errors import MLProfError
from mlprof.runtimes.precisions import (
    BY_NAME,
    CALIBRATED_PRECISIONS,
    CONVERTED_PRECISIONS,
    DEFAULT_PRECISION,
    EXPORT_PRECISIONS,
    NATIVE_ISA,
    PRECISIONS,
    TABLE,
    runtime_precisions,
)
from tests.helpers import REPO


def test_the_table_is_consistent():
    assert PRECISIONS[0] == DEFAULT_PRECISION == "fp32"
    assert len(set(PRECISIONS)) == len(PRECISIONS)
    assert CALIBRATED_PRECISIONS == ("int8-static",) and EXPORT_PRECISIONS == ("fp32", "fp16")
    assert CONVERTED_PRECISIONS == ("fp16", "int8-dynamic", "int8-static")
    assert NATIVE_ISA == {"bf16": ("avx512_bf16", "amx_bf16")}


def test_the_registry_derives_from_the_table():
    import mlprof.runtimes as rts

    assert rts.PRECISIONS == PRECISIONS and rts.DEFAULT_PRECISION == DEFAULT_PRECISION
    assert rts.DEFAULT_CALIBRATION_BATCHES == BY_NAME["int8-static"].calibration_default
    named = {r for p in TABLE for r in p.runtimes}
    assert named <= set(rts.runtime_names()), named - set(rts.runtime_names())
    for name in rts.runtime_names():
        info = rts.runtime_info(name)
        want = runtime_precisions(name)
        assert (info.precisions, info.converted_precisions, info.native_precisions) == (
            want["precisions"], want["converted_precisions"], want["native_precisions"]), name
    # the names people type still lead to the table's names
    with pytest.raises(MLProfError, match="did you mean int8-dynamic or int8-static"):
        rts.check_precision("int8")
    for p in TABLE:
        for typed in p.typed:
            with pytest.raises(MLProfError, match=f"did you mean {p.name}"):
                rts.check_precision(typed)


def test_each_runtime_accepts_exactly_the_table_s_precisions():
    from mlprof.model.precision import check_runtime_precision, converted
    from mlprof.runtimes import runtime_names

    every_isa = frozenset(f for p in TABLE for f in p.isa)
    for runtime in runtime_names():
        for p in TABLE:
            runs = p.name == DEFAULT_PRECISION or runtime in p.runtimes
            if runs:
                assert check_runtime_precision(runtime, p.name, every_isa) == p.name
            else:
                with pytest.raises(MLProfError):
                    check_runtime_precision(runtime, p.name, every_isa)
            assert converted(runtime, p.name) == (runtime in p.converted_on), (runtime, p.name)
            if runtime in p.native_on:
                with pytest.raises(MLProfError, match="only on CPUs with"):
                    check_runtime_precision(runtime, p.name, frozenset())


def test_the_layout_takes_every_precision_and_nothing_else():
    from mlprof.results import layout

    for p in TABLE:
        key = layout.PrecisionKey(p.name, p.calibration_default)
        assert layout.parse_precision_segment(layout.precision_segment(key)) == key
    joined = layout.PrecisionKey("+".join(PRECISIONS), 16)
    assert layout.parse_precision_segment(layout.precision_segment(joined)) == joined
    for bad in ("prec-int8", "prec-fp64", "prec-fp32+int4"):
        with pytest.raises(ValueError):
            layout.parse_precision_segment(bad)


def test_the_tasks_offer_the_table_s_choices():
    from mlprof.tasks.export import ExportOnnx
    from mlprof.tasks.framework.mixins import PrecisionMixin, PrecisionsMixin
    from mlprof.tasks.framework.parameters import PrecisionsParameter
    from mlprof.tasks.quantize import CONVERTED, QuantizeModel

    assert set(ExportOnnx.precision._choices) == set(EXPORT_PRECISIONS)
    assert CONVERTED == CONVERTED_PRECISIONS
    assert PrecisionsParameter().normalize(tuple(reversed(PRECISIONS))) == tuple(
        reversed(PRECISIONS))
    texts = {"--precision": PrecisionMixin.precision.description,
             "--precisions": PrecisionsMixin.precisions.description}
    for flag, text in texts.items():
        assert re.findall(r"fp\d+|bf\d+|int8-\w+", text.split(";")[0]) == list(PRECISIONS), flag
    assert PrecisionMixin.precision._default == PrecisionsMixin.precisions._default[0] == \
        DEFAULT_PRECISION
    quantize = QuantizeModel.precision.description.split(";")[0]
    assert re.findall(r"fp\d+|bf\d+|int8-\w+", quantize) == list(CONVERTED_PRECISIONS)
    calibration = PrecisionMixin.calibration_batches.description.split(":")[0]
    assert calibration == " or ".join(CALIBRATED_PRECISIONS) + " only"


def test_the_library_derives_from_the_table():
    from mlprof.measure.settings import MeasureSettings, setting
    from mlprof.model import precision
    from mlprof.model.export import TOLERANCES

    assert precision.NATIVE_ISA == NATIVE_ISA
    assert precision.DEFAULT_CALIBRATION_BATCHES == BY_NAME["int8-static"].calibration_default
    assert tuple(TOLERANCES) == EXPORT_PRECISIONS  # an export's tolerance per precision
    assert MeasureSettings(batch_size=1).precision == DEFAULT_PRECISION
    text = setting("precision").help
    assert re.findall(r"fp\d+|bf\d+|int8-\w+", text) == list(PRECISIONS)


def test_the_dashboard_orders_precisions_as_the_table():
    from mlprof.report.site.precision import current_precisions

    rows = [{"model": "m", "runtime": "openvino", "batch_size": 1, "precision": p,
             "median_ms": 1.0, "speedup": 1.0, "ci_low": 1.0, "ci_high": 1.0}
            for p in sorted(PRECISIONS)]
    assert [r["precision"] for r in current_precisions(rows)] == list(PRECISIONS[1:])


def test_the_documentation_s_table_is_the_table():
    """docs/precision.md's table: a row per precision in the table's order, and "no" exactly
    where a runtime does not measure at it."""
    text = (REPO / "docs" / "precision.md").read_text()
    head = "| precision | what it is | ONNX Runtime | OpenVINO | PyTorch (`torch`) |"
    lines = text.split(head, 1)[1].strip().splitlines()[1:]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines
            if line.startswith("|")]
    assert [r[0].strip("`") for r in rows] == list(PRECISIONS)
    for r in rows:
        p = BY_NAME[r[0].strip("`")]
        for cell, runtime in zip(r[2:], ("onnxruntime", "openvino", "torch"), strict=True):
            runs = p.name == DEFAULT_PRECISION or runtime in p.runtimes
            assert (not cell.startswith("no")) == runs, (p.name, runtime, cell)
