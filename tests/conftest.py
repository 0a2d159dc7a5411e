"""Shared fixtures: a fresh store per test and the browser; the helpers are in
``tests/helpers.py``."""

from __future__ import annotations

import os
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
