"""mlprof's layers, as a contract that the imports must keep, and no import circle.

Every module of ``mlprof/`` belongs to one layer; a module may import its own layer and the
layers below it, never one above. Bottom to top:

=====  ==================  ==============================================================
layer  name                modules
=====  ==================  ==============================================================
0      base                ``errors``, ``util``, ``version``, ``parser``, ``ingest``,
                           ``progress``
1      runtime registry    ``runtimes`` (its ``__init__``), ``runtimes.base``,
                           ``runtimes.batching``, ``runtimes.precisions``
2      machine             ``sysinfo`` (the CPU, its flags, the cgroup's quota, the host's
                           fingerprint)
3      results             ``results`` (the store layout, records, store operations)
4      model               ``model``
5      library             ``measure``, the runtime implementations
                           (``runtimes.onnxruntime``, ``runtimes.torch``, ...)
6      plotting            ``plotting``
7      report              ``report``
8      experiments         ``experiments``
9      tasks               ``tasks`` (law tasks)
10     drivers             ``api``, ``corpus``
11     entry points        ``cli``, the package facade ``mlprof`` (its ``__init__``)
=====  ==================  ==============================================================

Further rules: ``results`` imports only layers 0 and 1 (errors, util and the runtime registry);
law and luigi are imported only from the tasks layer up (``tasks``, and ``api``/``corpus``, which
run tasks in this process); and no module imports itself back through other modules (a circle),
whatever layer.

Where this differs from the order first planned (``errors, util < runtimes < results < measure,
model < report, plotting < api, corpus, experiments, parser < tasks < cli``), the code says why:

- ``parser`` is at the bottom: it imports nothing of mlprof, and the script sandbox
  (``model.sandbox``, ``model.script``) hands it to model scripts;
- ``runtimes`` is two layers: the registry (names, aliases, devices, batching rules; layer 1,
  read by ``results``) and the runtime implementations, which load models through ``model``
  (layer 3, beside ``measure``, which runs them);
- ``experiments`` is below ``tasks`` (``tasks.nightly`` reads experiment files), while ``api`` and
  ``corpus`` are above it: they build and run the law tasks in this process (hence their
  luigi imports);
- ``model`` is below ``measure`` (issue 39): the measurements load models, a model never
  measures; what both need (``progress``, ``sysinfo``) lies below both, and QuantizeModel's
  child, which calibrates on the measurement's inputs, is ``measure.quantize``;
- ``plotting`` is below ``report`` (issue 39): the dashboard draws history plots, a plot never
  reads a report module; the helpers both use (a history panel's scale, a load configuration's
  label) are ``plotting.scales`` and ``plotting.labels``;
- ``version`` holds ``__version__`` so that the measurements can record it without importing the
  facade ``mlprof``, which reaches ``mlprof.api`` (its ``__getattr__``).

Imports are read from the source (``ast``), at module level and inside functions ("lazy"
imports) alike. ``from package import name`` counts as an import of ``package.name`` when that is
a module, else of ``package``. Imports under ``if TYPE_CHECKING:`` count for the layers (a type
is a dependency too) but not for circles (they never run). An import of ``a.b.c`` runs
``a/__init__`` and ``a/b/__init__`` too; that implicit step is not an edge (as in import-linter):
a package ``__init__`` that imports its modules is fine, a module that imports its package back
explicitly (``from mlprof.measure import measure``) is counted.

Besides the layers, no two packages import each other
(:func:`test_no_two_packages_import_each_other`; a package here is a subpackage of ``mlprof`` or
a top-level module, the runtime registry apart from the runtime implementations): module-level,
lazy and ``TYPE_CHECKING`` imports all count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mlprof"

#: bottom to top: (name, modules); a module is in the layer of its longest listed prefix, an
#: exact name ("=mlprof.runtimes") matches that module only
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("mlprof.errors", "mlprof.util", "mlprof.version", "mlprof.parser",
              "mlprof.ingest", "mlprof.progress")),
    ("runtime registry", ("=mlprof.runtimes", "mlprof.runtimes.base",
                          "mlprof.runtimes.batching", "mlprof.runtimes.precisions")),
    ("machine", ("mlprof.sysinfo",)),
    ("results", ("mlprof.results",)),
    ("model", ("mlprof.model",)),
    ("library", ("mlprof.measure", "mlprof.runtimes")),
    ("plotting", ("mlprof.plotting",)),
    ("report", ("mlprof.report",)),
    ("experiments", ("mlprof.experiments",)),
    ("tasks", ("mlprof.tasks",)),
    ("drivers", ("mlprof.api", "mlprof.corpus")),
    ("entry points", ("mlprof.cli", "mlprof.lawcli", "=mlprof")),
]

#: the only layers that ``results`` may import (besides itself)
RESULTS_MAY_IMPORT = ("base", "runtime registry")

#: third-party packages of the task layer: imported from the layer ``tasks`` up only
TASK_LIBRARIES = ("law", "luigi")


@dataclass(frozen=True)
class Import:
    """One import statement's target, as found in ``module``'s source."""

    module: str       # the importing module (dotted)
    target: str       # the imported module (dotted; for mlprof, a module that exists)
    line: int
    lazy: bool        # inside a function
    typing_only: bool  # under ``if TYPE_CHECKING:``

    def __str__(self) -> str:
        kind = "lazy " if self.lazy else ""
        kind += "type-only " if self.typing_only else ""
        return f"{self.module} -> {self.target} ({kind}import, line {self.line})"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (packages by their ``__init__``)."""
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
             known: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    for alias in node.names:
        candidate = f"{source}.{alias.name}"
        yield candidate if candidate in known else source


def imports() -> list[Import]:
    """Every import statement of every module, module-level and inside functions."""
    known = modules()
    found: list[Import] = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"

        def visit(node: ast.AST, lazy: bool, typing_only: bool, module: str = module,
                  is_package: bool = is_package) -> None:
            for child in ast.iter_child_nodes(node):
                child_lazy = lazy or isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                child_typing = typing_only or (
                    isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for target in _targets(child, module, is_package, known):
                        if target.split(".")[0] == "mlprof":
                            while target not in known and "." in target:
                                target = target.rsplit(".", 1)[0]
                        found.append(Import(module, target, child.lineno, lazy, typing_only))
                visit(child, child_lazy, child_typing)

        visit(tree, False, False)
    return found


def internal_imports() -> list[Import]:
    """The imports of one mlprof module by another."""
    found = [i for i in imports() if i.target.split(".")[0] == "mlprof" and i.target != i.module]
    return list(dict.fromkeys(found))  # `from a import b, c` is one import of a


def layer_of(module: str) -> int:
    """The index of ``module``'s layer in :data:`LAYERS` (an exact name first, then the
    longest package prefix); raises :class:`LookupError` for a module of no layer."""
    best, best_len = -1, -1
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if member.startswith("="):
                if module == member[1:]:
                    return index
            elif (module == member or module.startswith(member + ".")) and \
                    len(member) > best_len:
                best, best_len = index, len(member)
    if best < 0:
        raise LookupError(module)
    return best


def cycles(edges: list[Import]) -> list[list[str]]:
    """The import circles among ``edges``: strongly connected components of two or more
    modules, or a module importing itself (Tarjan's algorithm, iterative)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.module, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_has_a_layer() -> None:
    missing = []
    for module in modules():
        try:
            layer_of(module)
        except LookupError:
            missing.append(module)
    assert not missing, f"modules of no layer (add them to LAYERS in {__file__}): {missing}"


def test_no_lower_layer_imports_an_upper_one() -> None:
    names = [name for name, _ in LAYERS]
    bad = [f"{i}: layer {names[layer_of(i.module)]!r} imports layer "
           f"{names[layer_of(i.target)]!r}"
           for i in internal_imports() if layer_of(i.target) > layer_of(i.module)]
    assert not bad, "imports against the layers (tests/test_imports.py):\n" + "\n".join(bad)


def test_results_imports_only_errors_util_and_the_runtime_registry() -> None:
    allowed = {names for names, _ in LAYERS if names in RESULTS_MAY_IMPORT}
    names = [name for name, _ in LAYERS]
    bad = [str(i) for i in internal_imports()
           if names[layer_of(i.module)] == "results" and names[layer_of(i.target)] != "results"
           and names[layer_of(i.target)] not in allowed]
    assert not bad, "results imports more than errors, util and the registry:\n" + "\n".join(bad)


def test_law_and_luigi_only_from_the_task_layer_up() -> None:
    tasks = [name for name, _ in LAYERS].index("tasks")
    bad = [str(i) for i in imports()
           if i.target.split(".")[0] in TASK_LIBRARIES and layer_of(i.module) < tasks]
    assert not bad, "law/luigi imported below the tasks layer:\n" + "\n".join(bad)


#: the runtime registry's modules: one package for the pair test, apart from the runtime
#: implementations (the registry is read by ``results``, the implementations write to it)
_REGISTRY = dict(LAYERS)["runtime registry"]

#: pairs of packages that still import each other, to be gone when issue 39's branches merge
#: (the merger empties this): none now. Were ``report`` to import ``plotting`` and back again,
#: the pair would be named here with the lines that must change.
KNOWN_TWO_WAY: set[frozenset[str]] = set()


def package_of(module: str) -> str:
    """The package of ``module`` for :func:`test_no_two_packages_import_each_other`:
    ``mlprof.<sub>`` (a subpackage or a top-level module), ``mlprof.runtimes`` for the
    registry and ``mlprof.runtimes.<impl>`` apart from it, ``mlprof`` for the facade."""
    if any(module == m[1:] if m.startswith("=") else module == m or module.startswith(m + ".")
           for m in _REGISTRY):
        return "mlprof.runtimes"
    parts = module.split(".")
    if parts[:2] == ["mlprof", "runtimes"]:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def two_way_pairs(edges: list[Import]) -> dict[frozenset[str], list[Import]]:
    """``{pair of packages: the imports between them}`` for every pair that imports both ways."""
    between: dict[tuple[str, str], list[Import]] = {}
    for e in edges:
        a, b = package_of(e.module), package_of(e.target)
        if a != b:
            between.setdefault((a, b), []).append(e)
    return {frozenset((a, b)): between[(a, b)] + between[(b, a)]
            for (a, b) in between if (b, a) in between and a < b}


def test_no_two_packages_import_each_other() -> None:
    # module-level, lazy and TYPE_CHECKING imports alike: a type is a dependency too
    found = {p: e for p, e in two_way_pairs(internal_imports()).items() if p not in KNOWN_TWO_WAY}
    lines = []
    for pair, edges in sorted(found.items(), key=lambda x: sorted(x[0])):
        lines.append(" <-> ".join(sorted(pair)))
        lines += [f"    {e}" for e in edges]
    assert not found, "packages importing each other (one must sit below the other):\n" + \
        "\n".join(lines)


def test_two_way_pairs_finds_pairs() -> None:
    edges = [Import("mlprof.a.x", "mlprof.b.y", 1, False, False),
             Import("mlprof.b.z", "mlprof.a", 2, True, False),
             Import("mlprof.c", "mlprof.a.x", 3, False, True)]
    assert list(two_way_pairs(edges)) == [frozenset(("mlprof.a", "mlprof.b"))]
    assert package_of("mlprof.runtimes.precisions") == "mlprof.runtimes"
    assert package_of("mlprof.runtimes.torch") == "mlprof.runtimes.torch"


def test_no_import_circle() -> None:
    edges = [i for i in internal_imports() if not i.typing_only]
    found = cycles(edges)
    lines = []
    for component in found:
        members = set(component)
        lines.append(" <-> ".join(component))
        lines += [f"    {e}" for e in edges if e.module in members and e.target in members]
    assert not found, "import circles (lazy imports included):\n" + "\n".join(lines)


@pytest.mark.parametrize("source, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_cycles_finds_circles(source: dict[str, set[str]], expected: list[list[str]]) -> None:
    edges = [Import(m, t, 1, False, False) for m, ts in source.items() for t in ts]
    assert cycles(edges) == expected


#: compares what law run's hooks change (tasks/framework/hooks.py), before and after a statement,
#: in a fresh interpreter (law itself patches luigi when imported: that is law's, imported first)
_HOOK_STATE = r"""
import atexit, logging, sys
import law, law.parameter, law.task.base, law.task.proxy, law.util
import luigi.cmdline_parser, luigi.interface, luigi.parameter, luigi.task, luigi.task_register
import luigi.worker

def state():
    parser = luigi.cmdline_parser.CmdlineParser
    return {"excepthook": sys.excepthook, "get_task_obj": parser.get_task_obj,
            "build_parser": parser._build_parser, "schedule": luigi.interface._schedule_and_run,
            "worker": luigi.worker.Worker.__init__, "make_unique": law.util.make_unique,
            "param_make_unique": law.parameter.make_unique, "atexit": atexit._ncallbacks(),
            "filters": list(logging.getLogger("luigi-interface").filters),
            "parser_init": parser.__init__, "get_params": luigi.task.Task.get_params.__func__,
            "register_setattr": luigi.task_register.Register.__setattr__,
            "multi_match": law.util.multi_match,
            "config_lookup": luigi.parameter.Parameter._get_value_from_config,
            "csv_serialize": law.parameter.CSVParameter.serialize,
            "proxy_getattr": law.task.proxy.ProxyAttributeTask.__getattribute__,
            "register_call": luigi.task_register.Register.__call__,
            "param_values": law.task.base.BaseTask.get_param_values.__func__}

before = state()
exec(STATEMENT)
after = state()
print(sorted(k for k in before if before[k] != after[k]))
"""


def _changed_by(statement: str, argv: tuple[str, ...] = ("-c",)) -> list[str]:
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(ROOT), MLP_BASE=str(ROOT),
               LAW_CONFIG_FILE=str(ROOT / "law.cfg"), LAW_HOME=str(ROOT / ".law"))
    env.pop("MLP_NO_SCALE_PATCH", None)
    code = f"import sys\nsys.argv = {list(argv)!r}\nSTATEMENT = {statement!r}\n" + _HOOK_STATE
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return ast.literal_eval(proc.stdout.strip().splitlines()[-1])


def test_importing_the_tasks_patches_nothing() -> None:
    # every task module of law.cfg, as an API user or a notebook imports them
    statement = ("import mlprof.tasks, mlprof.tasks.runtime, mlprof.tasks.nightly, "
                 "mlprof.tasks.dashboard, mlprof.tasks.compare, mlprof.tasks.profile, "
                 "mlprof.tasks.peak, mlprof.tasks.report, mlprof.tasks.history, mlprof.api")
    assert _changed_by(statement) == []


def test_the_run_hooks_patch_law_luigi_and_the_excepthook() -> None:
    changed = _changed_by("from mlprof.tasks import install_run_hooks; install_run_hooks()")
    assert changed == sorted(["excepthook", "get_task_obj", "build_parser", "schedule", "worker",
                              "make_unique", "param_make_unique", "atexit", "filters",
                              "parser_init", "get_params", "register_setattr", "multi_match",
                              "config_lookup", "csv_serialize", "proxy_getattr",
                              "register_call", "param_values"])
    # law run: the import of the tasks installs them (law has no start-up hook of its own)
    law_run = ("/venv/bin/law", "run", "MeasureRuntime", "--version", "v")
    assert _changed_by("import mlprof.tasks.runtime", argv=law_run) == changed
