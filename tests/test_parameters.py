"""Parameters and the store layout, on task instances built in-process (nothing runs)."""

from __future__ import annotations

import pytest

from mlprof.errors import MLProfError
from mlprof.results.layout import batch_sizes_tag
from mlprof.tasks.framework.parameters import BatchSizesParameter, PathsParameter
from mlprof.tasks.plotting import PlotMultiRuntimes, PlotRuntimes
from mlprof.tasks.runtime import MeasureRuntime, MergeRuntimes
from tests.helpers import DNN, REPO


def test_model_files_take_braces_and_globs():
    p = PathsParameter()
    braces = p.normalize(p.parse("examples/dnn/model_onnx_l{10,20}u128.yaml"))
    assert [x.rsplit("/", 1)[1] for x in braces] == ["model_onnx_l10u128.yaml",
                                                     "model_onnx_l20u128.yaml"]
    globbed = p.normalize(p.parse(f"{REPO}/examples/dnn/model_onnx_*u128.yaml"))
    assert globbed == braces
    with pytest.raises(MLProfError, match="no file matches"):
        p.normalize(p.parse("examples/nothing/*.yaml"))


def test_batch_sizes_are_sorted_unique_and_positive():
    p = BatchSizesParameter()
    assert p.normalize(p.parse("8,1,2,8")) == (1, 2, 8)
    with pytest.raises(MLProfError, match="--batch-sizes"):
        p.normalize(p.parse("-1,2"))


def test_batch_sizes_passed_once_pass_again_as_the_same_object_and_others_are_checked():
    """Every branch of a sweep normalizes its workflow's tuple of all N sizes again: the very
    tuple that passed passes again untested (same object back); an equal but other tuple, and
    any value that did not pass, are tested as before."""
    p = BatchSizesParameter()
    sizes = p.normalize(p.parse(",".join(map(str, range(1, 1001)))))
    assert p.normalize(sizes) is sizes
    assert p.normalize(tuple(sizes)) == sizes
    for bad in ((0, 2), (1, 10**9), (1, "2", 3), (1, True), ()):
        with pytest.raises(MLProfError, match="batch size"):
            p.normalize(bad)
        with pytest.raises(MLProfError, match="batch size"):  # a failure is not remembered
            p.normalize(bad)


def test_batch_sizes_tag_is_short_and_unique():
    assert batch_sizes_tag((1, 2, 4)) == "bs_1_2_4"
    long = tuple(2 ** i for i in range(11))
    tag = batch_sizes_tag(long)
    assert tag.startswith("bs_1-1024_n11_")
    assert tag != batch_sizes_tag(long[:-1] + (2048,))


def test_same_store_order_for_every_task(store):
    common = dict(version="v", model_file=str(DNN), batch_sizes=(1, 2))
    dirs = [
        MeasureRuntime(branch=0, **common).local_path(),
        MergeRuntimes(**common).local_path(),
        PlotRuntimes(**common).local_path(),
    ]
    tails = {d.split("/", len(str(store).split("/")) + 1)[-1] for d in dirs}
    assert len(tails) == 1, dirs
    parts = dirs[0][len(str(store)) + 1:].split("/")
    assert parts[0] == "MeasureRuntime" and parts[1].startswith("dnn_l10u128__")
    assert parts[2].startswith("onnxruntime-") and parts[2].endswith("__cpu")
    assert parts[3] == "calls100_events1_warmup10_mindur0p5_threads1_input-random"
    assert parts[4] == "v"


@pytest.mark.parametrize("change, segment", [
    ({"n_calls": 50}, 3), ({"threads": 2}, 3), ({"n_events": 3}, 3), ({"warmup": 0}, 3),
    ({"min_duration": 2.0}, 3), ({"input_data": "zeros"}, 3),
    ({"model_name": "other"}, 1), ({"runtime": "ort"}, None),
])
def test_every_significant_parameter_is_in_the_path(store, change, segment):
    base = MergeRuntimes(version="v", model_file=str(DNN))
    other = MergeRuntimes(version="v", model_file=str(DNN), **change)
    if segment is None:  # an alias: same task, same path
        assert other.local_path() == base.local_path()
    else:
        a = base.local_path().split("/")
        b = other.local_path().split("/")
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        assert diff == [len(str(store).split("/")) + segment], (a, b)


def test_plot_options_are_in_the_file_name(store):
    kw = dict(version="v", model_file=str(DNN), batch_sizes=(1, 2))
    default = PlotRuntimes(**kw).output()["pdf"].path
    assert default.endswith("/runtimes_bs_1_2.pdf")
    assert PlotRuntimes(y_log=True, error_style="bars", **kw).output()["pdf"].path.endswith(
        "runtimes_bs_1_2__ylog_bars.pdf")
    assert PlotRuntimes(x_log=False, plot_postfix="talk", **kw).output()["pdf"].path.endswith(
        "runtimes_bs_1_2__xlin_talk.pdf")
    assert PlotRuntimes(bs_normalized=False, **kw).output()["pdf"].path != default


def test_multi_plot_names_only_what_varies(store):
    one = PlotMultiRuntimes(version="v", model_files=(str(DNN),), batch_sizes=(1,))
    assert one.output()["pdf"].path.endswith("/runtimes_bs_1.pdf")
    many = PlotMultiRuntimes(version="v", batch_sizes=(1,), model_files=tuple(
        str(REPO / f"examples/dnn/model_onnx_l{n}u{u}.yaml") for n in (10, 20) for u in (128, 256)))
    name = many.output()["pdf"].path.rsplit("/", 1)[1]
    assert name.startswith("runtimes_") and len(name) < 100
    model_dir = many.local_path().split("/")[len(str(store).split("/")) + 1]
    assert model_dir.startswith("4x_") and len(model_dir) < 60


def test_model_names_and_labels_must_match_the_files(store):
    with pytest.raises(MLProfError, match="--model-labels"):
        PlotMultiRuntimes(version="v", model_files=(str(DNN),), model_labels=("a", "b"))
