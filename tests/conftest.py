"""Shared fixtures: a fresh store per test and the browser; the helpers are in
``tests/helpers.py``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.helpers import _chromium


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty $MLP_STORE for this test."""
    path = tmp_path / "store"
    monkeypatch.setenv("MLP_STORE", str(path))
    return path


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (tests marked ``browser``); skips where it is
    missing, fails instead under ``MLP_REQUIRE_BROWSER=1`` (.ci/run)."""
    exe = _chromium()
    required = os.environ.get("MLP_REQUIRE_BROWSER") == "1"  # set by .ci/run: never skip there
    if exe is None:
        if required:
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("Debian chromium is not installed (.ci/run installs it)")
    if required:
        from playwright import sync_api
    else:
        sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-sync"])
        yield b
        b.close()


# -- tiers: the suite runs the fast tests first and reports each tier's result -------------------

#: the tiers, in the order of the summary; a test with several of these markers is in the
#: last of them (a slow browser test is a browser test), without any it is "fast"
TIERS = ("fast", "slow", "browser", "slurm", "htcondor")


def tier_of(item: pytest.Item) -> str:
    """The tier of a test: ``slurm``/``htcondor`` (a cluster), ``browser`` (Chromium), ``slow``
    (real pipelines), else ``fast``. A cluster or browser test that is also slow counts there."""
    names = {m.name for m in item.iter_markers()}
    for tier in reversed(TIERS[1:]):
        if tier in names:
            return tier
    return "fast"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--all``: every tier (what CI runs)."""
    parser.addoption(
        "--all", action="store_true", default=False, dest="mlp_all_tiers",
        help="run every tier: fast, slow, browser and the clusters (.ci/run does). Without it, "
             "a bare `pytest` runs the fast tier only; named test files or -m/-k select as usual")


def fast_tier_only(config: pytest.Config) -> bool:
    """Whether this run is the fast tier alone: a bare ``pytest`` (no test paths, no ``-m``,
    no ``-k``, no ``--all``). Naming a file or a marker runs what it names, in every tier."""
    return (not config.getoption("mlp_all_tiers")
            and config.args_source != pytest.Config.ArgsSource.ARGS
            and not config.getoption("markexpr") and not config.getoption("keyword"))


_LEFT_OUT: list[int] = []


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """A bare ``pytest`` keeps the fast tier only (5 minutes, not 50: the slow, browser and
    cluster tiers run with ``--all``, as in CI). Then run the fast tier first (a broken unit
    shows in minutes, not after 40 minutes of pipelines), then the slow and browser tests
    together in pytest's order, then the clusters (a stable sort). Slow and browser share a
    rank because they share module fixtures: apart, test_nightly's four nights were measured
    twice (41 s and 40 s in CI)."""
    if fast_tier_only(config):
        left_out = [item for item in items if tier_of(item) != "fast"]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if tier_of(item) == "fast"]
            _LEFT_OUT.append(len(left_out))
    rank = {"fast": 0, "slow": 1, "browser": 1, "slurm": 2, "htcondor": 3}
    items.sort(key=lambda item: rank[tier_of(item)])


_TIER_RESULTS: dict[str, dict[str, float]] = {}
_FAST_SECONDS: dict[str, float] = {}
#: a fast-tier test takes less than this on a quiet 2-core machine (setup, call and teardown);
#: a longer one is marked ``slow``, so that the fast tier stays within 5 minutes
FAST_TEST_SECONDS = 3.0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each test's outcome and time in its tier (the call phase decides the outcome; a
    setup or teardown error counts as an error)."""
    tier = getattr(report, "mlp_tier", None)
    if tier is None:
        return
    counts = _TIER_RESULTS.setdefault(tier, {})
    counts["seconds"] = counts.get("seconds", 0.0) + report.duration
    if tier == "fast":
        _FAST_SECONDS[report.nodeid] = _FAST_SECONDS.get(report.nodeid, 0.0) + report.duration
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = ("error" if report.when == "setup" and report.failed else report.outcome)
        counts[outcome] = counts.get(outcome, 0) + 1
    elif report.when == "teardown" and report.failed:
        counts["error"] = counts.get("error", 0) + 1


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # type: ignore[no-untyped-def]
    """Label each report with its test's tier (read by the summary below)."""
    outcome = yield
    outcome.get_result().mlp_tier = tier_of(item)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    """One line per tier: ``tier fast: 812 passed, 3 skipped in 241 s`` (``.ci/run`` shows these
    lines as its per-step result)."""
    if not _TIER_RESULTS:
        return
    terminalreporter.section("tiers")
    for tier in TIERS:
        counts = _TIER_RESULTS.get(tier)
        if not counts:
            continue
        parts = [f"{int(counts[k])} {k}" for k in ("passed", "failed", "error", "skipped")
                 if counts.get(k)]
        verdict = "FAILED" if counts.get("failed") or counts.get("error") else "ok"
        terminalreporter.write_line(
            f"tier {tier}: {verdict}: {', '.join(parts) or 'nothing ran'} in "
            f"{counts['seconds']:.0f} s")
    over = sorted(((t, n) for n, t in _FAST_SECONDS.items() if t >= FAST_TEST_SECONDS),
                  reverse=True)
    if over:  # a hint, not a failure: under load every test is slower
        terminalreporter.write_line(
            f"fast tests over {FAST_TEST_SECONDS:.0f} s: {len(over)} (the slowest: {over[0][1]}, "
            f"{over[0][0]:.1f} s); on a quiet machine such a test belongs in the slow tier")
    if _LEFT_OUT:
        terminalreporter.write_line(
            f"the fast tier only: {_LEFT_OUT[0]} slow, browser and cluster tests were not run; "
            "`pytest --all` runs every tier (CI does)")


class _DynamoBeforeTensorFlow:
    """A meta-path finder that imports torch._dynamo right before TensorFlow's first import in
    the pytest process. With TensorFlow loaded first, ``import torch._dynamo`` (triton) dies
    with a segmentation fault (``python -c "import tensorflow; import torch._dynamo"``: exit
    139; the other order works) and ends the whole suite. Tests load TensorFlow in-process
    through ``TensorFlowRuntime.resolve`` (a SavedModel's signature: test_tf_openvino) and
    torch._dynamo through in-process exports (test_export_fallback, the API tests); the tiers
    run them in either order."""

    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name == "tensorflow":
            sys.meta_path.remove(self)
            import importlib.util

            if importlib.util.find_spec("torch") is not None:
                import torch._dynamo  # noqa: F401
        return None  # the normal finders import TensorFlow


if not any(isinstance(f, _DynamoBeforeTensorFlow) for f in sys.meta_path):
    sys.meta_path.insert(0, _DynamoBeforeTensorFlow())
