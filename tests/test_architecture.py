"""docs/architecture.md cannot go stale: it is checked against the package and the import contract.

The README's old module map fell behind twice (26 modules missing the second time) because
nothing read it. Here every module of ``mlprof/`` must have a row in the page's module tables
(a package by its ``__init__``), every row must be a module that exists, and the page's layer
table and rules must be the ones ``tests/test_imports.py`` enforces (``LAYERS``,
``RESULTS_MAY_IMPORT``, ``TASK_LIBRARIES``). Fast: it reads files, imports nothing of mlprof.
"""

from __future__ import annotations

import re

from tests.helpers import REPO
from tests.test_imports import LAYERS, RESULTS_MAY_IMPORT, TASK_LIBRARIES, modules

PAGE = REPO / "docs" / "architecture.md"

_ROW = re.compile(r"^\|\s*`(mlprof(?:\.\w+)*)`\s*\|", re.M)
_LAYER_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*$", re.M)
_MEMBER = re.compile(r"`(mlprof(?:\.\w+)*)`(\s*\*\(`__init__` only\)\*)?")


def _section(text: str, title: str) -> str:
    """The body of the ``## title`` section (up to the next ``## `` heading)."""
    body = text.split(f"\n## {title}\n", 1)[1]
    return re.split(r"\n## ", body, maxsplit=1)[0]


def page_modules(text: str) -> list[str]:
    """The modules the page's module tables name (first cell of each row), in order."""
    return _ROW.findall(_section(text, "Modules"))


def page_layers(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The page's layer table as :data:`tests.test_imports.LAYERS` spells it (exact: ``=``)."""
    layers = []
    for number, name, cell in _LAYER_ROW.findall(_section(text, "Layers")):
        members = tuple(("=" if exact else "") + mod for mod, exact in _MEMBER.findall(cell))
        assert int(number) == len(layers), f"layer {number} ({name}) out of order"
        layers.append((name, members))
    return layers


def test_every_module_is_on_the_page_and_every_row_exists():
    named = page_modules(PAGE.read_text(encoding="utf-8"))
    have = set(modules())
    assert len(have) > 50  # the package was found at all
    missing = sorted(have - set(named))
    assert not missing, f"modules not on docs/architecture.md (add a row each): {missing}"
    unknown = sorted(set(named) - have)
    assert not unknown, f"docs/architecture.md names modules that do not exist: {unknown}"
    doubles = sorted({m for m in named if named.count(m) > 1})
    assert not doubles, f"docs/architecture.md has a row twice: {doubles}"


def test_the_layers_on_the_page_are_the_import_contract():
    text = PAGE.read_text(encoding="utf-8")
    assert page_layers(text) == [(name, tuple(members)) for name, members in LAYERS]
    rules = _section(text, "Layers")
    may = re.search(r"`results` may import only the layers ([\w ,]+)\.", rules)
    assert may, "the page states which layers results may import"
    assert tuple(s.strip() for s in may.group(1).split(",")) == RESULTS_MAY_IMPORT
    libs = re.search(r"^- ([\w, ]+) are imported only from the layer (\w+) up", rules, re.M)
    assert libs, "the page states where law and luigi may be imported"
    assert tuple(s.strip() for s in libs.group(1).split(",")) == TASK_LIBRARIES
    assert libs.group(2) == "tasks"


def test_the_checks_see_a_missing_module_and_a_changed_layer():
    """The parsers above find what they should (else the tests pass on an empty page)."""
    text = PAGE.read_text(encoding="utf-8")
    row = "| `mlprof.measure.lock` |"
    assert row in text
    without = "\n".join(ln for ln in text.splitlines() if not ln.startswith(row))
    assert "mlprof.measure.lock" not in page_modules(without)
    assert "mlprof.measure.lock" in page_modules(text)
    moved = text.replace("| 8 | experiments | `mlprof.experiments` |",
                         "| 8 | experiments | `mlprof.experiments`, `mlprof.corpus` |")
    assert moved != text and page_layers(moved) != page_layers(text)
