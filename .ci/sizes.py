#!/usr/bin/env python3
"""Function and module sizes in mlprof/, against a baseline that can only shrink.

The package grew 41 % in one turn (19,798 -> 27,998 lines) and its functions over 80 lines went
from 12 to 19 (issue 39): nothing counted them. This check does, as .ci/mypy_baseline.py counts
mypy's errors. It fails (exit 1) when

- a function (or method) of ``mlprof/`` is over :data:`FUNCTION_LIMIT` (80) lines and the
  baseline (.ci/size-baseline.txt) does not list it, or it is longer than the baseline says;
- a function is over :data:`FUNCTION_HARD` (120) lines, or a module over :data:`MODULE_HARD`
  (700), whatever the baseline says (it listed such while other branches' splits were pending:
  ``--update`` never adds one).

A function's length is its ``def`` line to its last line (decorators and docstring included:
what a reader scrolls through), found with ``ast``; its name is ``path:Class.method``.
Shorter than the baseline passes, with a note to lower it (``--update`` rewrites the baseline
from the current sizes; it refuses when anything grew or a new entry would be over a hard
limit).

    python .ci/sizes.py            # check
    python .ci/sizes.py --update   # after splitting a function: write the lower sizes
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mlprof"
BASELINE = ROOT / ".ci" / "size-baseline.txt"

#: functions longer than this are counted (each needs a baseline line, which only shrinks)
FUNCTION_LIMIT = 80
#: no function longer than this (issue 39's acceptance)
FUNCTION_HARD = 120
#: no module longer than this (issue 39's acceptance)
MODULE_HARD = 700

_HEADER = """\
# sizes that may remain in mlprof/ (python .ci/sizes.py checks; it fails when one grows or a
# function over 80 lines, or a module over 700, is not listed here). Lower a size when you
# shorten it (--update); never raise one or add a line. Nothing over 120 lines (functions) or
# 700 (modules) is listed since issue 39: split it instead.
"""


def function_sizes(root: Path = PACKAGE) -> dict[str, int]:
    """``{"mlprof/x.py:Class.func": lines}`` of every function and method under ``root``."""
    sizes: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

        def visit(node: ast.AST, prefix: str, rel: str = rel) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    name = prefix + child.name
                    start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    sizes[f"{rel}:{name}"] = (child.end_lineno or child.lineno) - start + 1
                    visit(child, name + ".")
                elif isinstance(child, ast.ClassDef):
                    visit(child, prefix + child.name + ".")
                else:
                    visit(child, prefix)

        visit(tree, "")
    return sizes


def module_sizes(root: Path = PACKAGE) -> dict[str, int]:
    """``{"mlprof/x.py": lines}`` of every module under ``root``."""
    return {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
            for p in sorted(root.rglob("*.py"))}


def current() -> dict[str, int]:
    """What the baseline must cover now: functions over :data:`FUNCTION_LIMIT` lines and
    modules over :data:`MODULE_HARD`, ``{"function <name>" | "module <path>": lines}``."""
    out = {f"function {n}": s for n, s in function_sizes().items() if s > FUNCTION_LIMIT}
    out.update({f"module {p}": s for p, s in module_sizes().items() if s > MODULE_HARD})
    return out


def read_baseline(path: Path = BASELINE) -> dict[str, int]:
    """``{"function <name>" | "module <path>": allowed lines}`` (``<lines> <kind> <name>``)."""
    allowed: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                size, key = line.split(maxsplit=1)
                allowed[key] = int(size)
    return allowed


def _hard(key: str) -> int:
    return FUNCTION_HARD if key.startswith("function ") else MODULE_HARD


def compare(now: dict[str, int], allowed: dict[str, int]) -> tuple[list[str], list[str]]:
    """(problems, improvements): sizes beyond the baseline, and entries below it."""
    problems, better = [], []
    for key, size in sorted(now.items()):
        limit = allowed.get(key)
        if limit is None:
            why = (f"over the hard limit of {_hard(key)}" if size > _hard(key) else
                   f"over {FUNCTION_LIMIT} lines and not in the baseline")
            problems.append(f"{key}: {size} lines ({why}: split it)")
        elif size > _hard(key):  # issue 39: the hard limits hold, a baseline line or not
            problems.append(f"{key}: {size} lines (over the hard limit of {_hard(key)}: "
                            "split it; the baseline may not list it)")
        elif size > limit:
            problems.append(f"{key}: {size} lines, baseline {limit}")
    for key, limit in sorted(allowed.items()):
        size = now.get(key, 0)
        if size < limit:
            now_text = f"{size} lines" if size else "no longer over the limit"
            better.append(f"{key}: {now_text}, baseline {limit}")
    return problems, better


def main(argv: list[str] | None = None) -> int:
    """Check (or with ``--update`` rewrite) the baseline; 0 when nothing grew."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true",
                    help="write the current sizes as the baseline (only ever lower them)")
    args = ap.parse_args(argv)
    now, allowed = current(), read_baseline()
    problems, better = compare(now, allowed)
    if args.update:
        if problems:
            print("not updating:\n  " + "\n  ".join(problems), file=sys.stderr)
            return 1
        lines = [f"{size} {key}" for key, size in sorted(now.items())]
        BASELINE.write_text(_HEADER + "\n".join(lines) + "\n")
        print(f"wrote {BASELINE.relative_to(ROOT)}: {len(lines)} entries")
        return 0
    if problems:
        print("sizes: more than .ci/size-baseline.txt allows:\n  " + "\n  ".join(problems),
              file=sys.stderr)
        return 1
    n_func = sum(k.startswith("function ") for k in now)
    print(f"sizes: {n_func} functions over {FUNCTION_LIMIT} lines, "
          f"{len(now) - n_func} modules over {MODULE_HARD}, within the baseline")
    if better:
        print("smaller than the baseline, lower it (python .ci/sizes.py --update):\n  "
              + "\n  ".join(better))
    return 0


if __name__ == "__main__":
    sys.exit(main())
