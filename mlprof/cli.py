"""The ``mlprof`` command: one-liners around the law tasks.

::

    mlprof benchmark models/selftest/*.py --runtimes ort,torch --batch-sizes 1,8
    mlprof benchmark --generate --prompt-lengths 16,128 --new-tokens 32   # a decoder generating
    mlprof corpus                               # the whole models/ corpus at batch size 1
    mlprof corpus models/ --labels author::timm --runtimes ort,torch   # a part of it
    mlprof corpus ../turnkeyml/models/selftest  # TurnkeyML's corpus, scripts unedited
    mlprof system-info                          # CPU, threads, libraries, checks
    mlprof models                               # where the model corpus is
    mlprof store list|clean|delete [--version V] [--model M] [--dry-run]   # manage results
    mlprof version
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from mlprof.errors import MLProfError
from mlprof.measure.settings import SETTINGS, check_batch_sizes, cli_settings
from mlprof.util import close_options, did_you_mean

#: exit code for a bad option or value, as ``law run``'s (``[luigi_retcode]`` in law.cfg)
EXIT_BAD_INPUT = 40


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _labels(values: Sequence[str] | None) -> dict[str, list[str]] | None:
    if not values:
        return None
    out: dict[str, list[str]] = {}
    for item in values:
        key, sep, vals = item.partition("::")
        if not sep or not key or not vals:
            raise MLProfError(f"expected key::value[,value...], got {item!r}", field="--labels")
        out.setdefault(key, []).extend(_csv(vals))
    return out


def _arg_type(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type: ``convert(text)``, its :class:`MLProfError` reported by argparse."""
    def arg_type(text: str) -> Any:
        try:
            return convert(text)
        except MLProfError as e:
            raise argparse.ArgumentTypeError(": ".join(filter(None, (e.file, e.message)))
                                             ) from None

    return arg_type


def _version(text: str) -> str:
    from mlprof.results.layout import check_version

    return check_version(text, "--version", given=True)


def _batch_sizes(text: str) -> tuple[int, ...]:
    return check_batch_sizes(SETTINGS["batch_size"].parse(b) for b in _csv(text))


def _runtimes(text: str) -> str:
    """Comma-separated runtime names or aliases, checked now (the text is kept)."""
    from mlprof.runtimes import canonical_runtime

    for name in _csv(text):
        canonical_runtime(name)
    return text


def _runtime(text: str) -> str:
    from mlprof.runtimes import canonical_runtime

    canonical_runtime(text)
    return text


#: the most --workers: each is a luigi worker process (100-300 MB with its imports), and
#: measurements run one at a time under the machine-wide lock, so workers beyond a few per CPU
#: only add memory (``--workers 99999999`` would fork until memory runs out)
MAX_WORKERS = 64


def _workers(text: str) -> int:
    from mlprof.ingest import ascii_int

    try:
        n = ascii_int(text, "--workers")  # int() alone takes Arabic-Indic digits and 1_0
    except MLProfError:
        raise MLProfError(f"expected an integer, got {text!r}") from None
    if n < 1:
        raise MLProfError(f"must be >= 1, got {n}")
    if n > MAX_WORKERS:
        raise MLProfError(f"must be <= {MAX_WORKERS}, got {n}")
    return n


def _default_workers() -> int:
    """Tasks at once for a corpus: one per core, at most 4 (measurements never overlap)."""
    return max(1, min(4, len(os.sched_getaffinity(0))))


def _measure_args(p: argparse.ArgumentParser, runtime_alias: bool = False) -> None:
    """The measurement options; names, types, defaults, checks and help of the measurement
    settings come from :mod:`mlprof.measure.settings`. ``runtime_alias``: ``--runtime`` is
    another name of ``--runtimes`` (``mlprof corpus`` had it first)."""
    names = ("--runtimes", "--runtime") if runtime_alias else ("--runtimes",)
    p.add_argument(*names, dest="runtimes", type=_arg_type(_runtimes),
                   default=SETTINGS["runtime"].default,
                   help="comma-separated runtimes (default: %(default)s)")
    p.add_argument("--batch-sizes", type=_arg_type(_batch_sizes), default="1",
                   help="comma-separated batch sizes (default: %(default)s)")
    p.add_argument("--version", default="cli", type=_arg_type(_version),
                   help="version of the outputs (default: cli)")
    for s in cli_settings():
        p.add_argument(s.flag, dest=s.name, type=_arg_type(s.parse), default=s.default,
                       help=f"{s.help} (default: %(default)s)")
    p.add_argument("--script-args", default="", help="arguments for model scripts")
    p.add_argument("--labels", nargs="*", help="only scripts with these labels (key::value)")
    p.add_argument("--workers", type=_arg_type(_workers), default=1,
                   help="tasks run in parallel (default: %(default)s)")


def _settings(a: argparse.Namespace) -> dict:
    return {**{s.name: getattr(a, s.name) for s in cli_settings()},
            "script_args": a.script_args}


def expand_inputs(items: Sequence[str]) -> list[str]:
    """Files, globs, and ``.txt`` lists of files (one per line, ``#`` comments)."""
    out: list[str] = []
    for item in items:
        path, sep, hashes = item.partition("::")
        if path.endswith(".txt") and not sep:
            base = os.path.dirname(os.path.abspath(path))
            with open(path) as f:
                lines = [ln.split("#", 1)[0].strip() for ln in f]
            out.extend(expand_inputs([ln if os.path.isabs(ln) else os.path.join(base, ln)
                                      for ln in lines if ln]))
        elif any(c in path for c in "*?[") and not sep:
            matches = sorted(glob.glob(path))
            if not matches:
                raise MLProfError(f"no file matches {path!r}", field="files")
            out.extend(matches)
        else:
            out.append(os.path.abspath(path) + sep + hashes)
    return out


def _table(rows: list[dict], cols: list[str]) -> str:
    widths = {c: max([len(c)] + [len(str(r.get(c, ""))) for r in rows]) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols),
             "  ".join("-" * widths[c] for c in cols)]
    lines += ["  ".join(str(r.get(c, "")).ljust(widths[c]) for c in cols) for r in rows]
    return "\n".join(ln.rstrip() for ln in lines)


def _rate(value: float) -> str:
    """A throughput as people read it: ``1,234,567`` (``12.3`` below 100), no e-notation."""
    import math

    v = float(value)
    if not math.isfinite(v):
        return "-"
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def cmd_benchmark(a: argparse.Namespace) -> int:
    """Benchmark files; print one row per model, runtime and batch size."""
    from mlprof.api import benchmark_files

    files = expand_inputs(a.files)
    results = benchmark_files(files, runtimes=_csv(a.runtimes),
                              batch_sizes=a.batch_sizes,
                              version=a.version, labels=_labels(a.labels), workers=a.workers,
                              raise_on_failure=False, **_settings(a))
    from mlprof.measure.trust import marked, with_legend

    rows, shown = [], []
    for r in results:
        for s in r.stats.to_dict("records"):
            # an unstable or contended median carries its marker (mlprof.measure.trust)
            shown.append(s["flags"])
            rows.append({"model": r.model, "runtime": r.runtime, "batch": s["batch_size"],
                         "median_ms": marked(f"{s['median_ms']:.4f}", s["flags"]),
                         "p84_ms": f"{s['p84_ms']:.4f}", "events/s": _rate(s["throughput"])})
    # throughput: events per second at the median latency (mlprof.measure.stats.throughput)
    print(with_legend(_table(rows, ["model", "runtime", "batch", "median_ms", "p84_ms",
                                    "events/s"]), shown))
    return 0 if results else 1


def _generation_type(name: str) -> Callable[[str], Any]:
    """The command-line type of generation option ``name``, from its field's type in
    :class:`~mlprof.measure.generation.settings.GenerationSettings` (its bounds are checked
    when the settings are made)."""
    from typing import get_type_hints

    from mlprof.ingest import ascii_float, ascii_int
    from mlprof.measure.generation.settings import GENERATION_FIELDS, GenerationSettings

    kind = get_type_hints(GenerationSettings)[name]
    flag = GENERATION_FIELDS[name].metadata["flag"]
    if kind == tuple[int, ...]:
        return lambda text: tuple(ascii_int(v, flag) for v in _csv(text))
    if kind == tuple[str, ...]:
        return lambda text: tuple(_csv(text))
    if kind is int:
        return lambda text: ascii_int(text, flag)
    if kind is float:
        return lambda text: ascii_float(text, flag)
    if kind is str:
        return str
    raise TypeError(f"no command-line type for generation option {name} of type {kind}")


def _generation_args(p: argparse.ArgumentParser) -> None:
    """``mlprof benchmark --generate``'s options: one per field of
    :class:`~mlprof.measure.generation.settings.GenerationSettings` (its flag, help and
    choices; unset ones keep the field's default), as MeasureGeneration's law parameters are
    made (:mod:`mlprof.tasks.generation`)."""
    from mlprof.measure.generation.settings import GENERATION_FIELDS

    p.add_argument("--generate", action="store_true", required=True,
                   help="measure decoders generating (TTFT, TPOT, tokens/s)")
    p.add_argument("--version", default="cli", type=_arg_type(_version),
                   help="version of the outputs (default: cli)")
    p.add_argument("--workers", type=_arg_type(_workers), default=1,
                   help="tasks run in parallel (default: %(default)s)")
    for name, f in GENERATION_FIELDS.items():
        meta = f.metadata
        p.add_argument(meta["flag"], dest=name, default=None,
                       type=_arg_type(_generation_type(name)),
                       choices=list(meta["choices"]) or None, help=meta["help"])


def _generate_parser() -> _Parser:
    """The parser of ``mlprof benchmark --generate`` (a mode of ``benchmark`` with the options
    of MeasureGeneration instead of MeasureRuntime's: both have --runtimes, --batch-sizes,
    --threads with other meanings and defaults)."""
    p = _Parser(prog="mlprof benchmark --generate",
                description="Measure decoders generating on several runtimes: time to first "
                "token, time per output token and tokens/s per (prompt length, batch size), "
                "the tokens checked against the reference runtime; the table of law run "
                "PlotGeneration.")
    p.add_argument("files", nargs="*", help="decoders: Python scripts that build a Hugging "
                   "Face causal LM, or save_pretrained directories (default: the bundled tiny "
                   "Llama, models/generation/tiny_llama.py)")
    _generation_args(p)
    return p


def cmd_generate(a: argparse.Namespace) -> int:
    """``mlprof benchmark --generate``: each decoder's table (PlotGeneration's)."""
    from mlprof.api import benchmark_generation
    from mlprof.measure.generation.settings import GENERATION_FIELDS

    settings = {n: getattr(a, n) for n in GENERATION_FIELDS if getattr(a, n) is not None}
    files = expand_inputs(a.files) if a.files else [None]
    for i, f in enumerate(files):
        r = benchmark_generation(f, version=a.version, workers=a.workers, **settings)
        print(("\n" if i else "") + f"{r.model}\n{r.text}"
              + f"records: {os.path.dirname(r.files[0])}")
    return 0


def corpus_dir() -> str:
    """The models corpus of this checkout."""
    base = os.environ.get("MLP_BASE") or os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    return os.path.join(base, "models")


def cmd_corpus(a: argparse.Namespace) -> int:
    """Every script of the corpora: a line per finished script, then what was measured per
    corpus and the failures grouped by cause (see :mod:`mlprof.corpus`)."""
    from mlprof.corpus import collect_scripts, results_table, run_corpus
    from mlprof.measure.trust import with_legend
    from mlprof.report.causes import NEEDS, format_summary, format_table
    from mlprof.results.layout import store_base

    if a.models_dir:
        root = os.path.abspath(a.models_dir)
        if not os.path.isdir(root):
            raise MLProfError("not a directory", root, "--models-dir")
        paths = [os.path.join(root, c) for c in _csv(a.corpora)] or [root]
    else:
        paths = list(a.paths) or ([os.path.join(corpus_dir(), c) for c in _csv(a.corpora)]
                                  or [corpus_dir()])
    scripts = collect_scripts(paths, _labels(a.labels))
    from mlprof.measure.quiet import verbose

    if not verbose():  # a line per script is enough; warnings and progress lines stay
        import mlprof.tasks  # noqa: F401 - law sets up its loggers ([logging]) when imported
        from mlprof.progress import warnings_and_progress_only

        warnings_and_progress_only()
    t0 = time.monotonic()
    rows = run_corpus(scripts, runtimes=_csv(a.runtimes), batch_sizes=a.batch_sizes,
                      version=a.version, workers=a.workers, **_settings(a))
    wall = time.monotonic() - t0
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        print("\nnot measured\n" + format_table(bad, ["script", "runtime", "status", "cause",
                                                    "detail", "reason"]))
    print("\n" + format_summary(rows))
    results, cols, shown = results_table(rows)
    if results:
        print("\nresults: median latency per call (ms) at each batch size\n"
              + with_legend(_table(results, cols), shown))
    n_ok = sum(r["status"] == "ok" for r in rows)
    print(f"\n{n_ok} of {len(rows)} measured ({100 * n_ok / max(len(rows), 1):.1f} %) in "
          f"{wall:.0f} s ({', '.join(_csv(a.runtimes))}, batch size(s) "
          f"{','.join(map(str, a.batch_sizes))}, {a.workers} workers)")
    stats = [p for r in rows for p in r.get("stats") or ()]
    if stats:
        print(f"full results (every statistic, the samples, the provenance): {len(stats)} "
              f"statistics file(s), one per model and runtime, under {store_base()}/"
              f"MergeRuntimes/ (version {a.version}), e.g. {stats[0]}; one table of them all: "
              f"law run Report --version {a.version} (report.csv)")
    # what the scripts need from outside (network, a package) is not mlprof's failure
    return 0 if all(r["status"] in ("ok", "skipped", *NEEDS) for r in rows) else 1


def system_info() -> dict:
    """CPU, threads, library versions, ``checks``: warnings about frequency scaling, turbo
    and SMT (:func:`mlprof.measure.contention.system_checks`), the host's fingerprint id and
    its noise floor per class when the store has one (else ``not calibrated``)."""
    from mlprof.sysinfo import system_info as sysinfo
    from mlprof.util import dist_version, git_commit
    from mlprof.version import __version__

    info = {"mlprof": __version__, "git_commit": git_commit(), **sysinfo()}
    from mlprof.runtimes import runtime_info, runtime_names, runtime_packages, runtime_version

    info["libraries"] = {d: dist_version(d) for d in dict.fromkeys((
        *runtime_packages(), "onnx", "torchvision", "numpy", "law", "luigi", "timm",
        "transformers"))}
    info["runtimes"] = {n: {"version": runtime_version(n), "aliases": list(runtime_info(n).aliases),
                            "measures": list(runtime_info(n).model_kinds)}
                        for n in runtime_names()}
    from mlprof.measure.contention import system_checks

    # what makes this machine measure less reproducibly (pyperf system show's checks)
    info["checks"] = system_checks()
    # which noise floor this machine's measurements are judged by (CalibrateNoise)
    from mlprof.measure.noise import NOT_CALIBRATED_SHORT, find_floor, floor_summary
    from mlprof.sysinfo import fingerprint_id, host_fingerprint

    info["host_fingerprint"] = fingerprint_id()
    info["fingerprint"] = host_fingerprint()
    record = find_floor()
    info["noise_floor"] = NOT_CALIBRATED_SHORT if record is None else floor_summary(record)
    return info


def _store_args(sub) -> None:
    """The ``store`` subcommand: list, clean and delete results."""
    s = sub.add_parser("store", help="list, clean (drop large artifacts) or delete results")
    s.add_argument("action", choices=("list", "clean", "delete"))
    s.add_argument("--store", default=None, help="store directory (default: $MLP_STORE)")
    for opt, what in (("--version", "versions"), ("--model", "model names"),
                      ("--task", "tasks"), ("--runtime", "runtimes")):
        s.add_argument(opt, action="append", default=[], help=f"only these {what} (globs; "
                       "repeat or comma-separate)")
    s.add_argument("--plots", action="store_true", help="clean: remove plots too")
    s.add_argument("--dry-run", action="store_true", help="show what would be removed")
    s.add_argument("--all", action="store_true", help="delete: allow no selector (everything)")
    s.add_argument("--json", action="store_true", help="print JSON")


def cmd_store(a: argparse.Namespace) -> int:
    """``mlprof store list|clean|delete``: see :mod:`mlprof.results.store`."""
    from mlprof.results import store as st

    sel = {k: [v for item in getattr(a, k) for v in _csv(item)]
           for k in ("version", "model", "task", "runtime")}
    if a.action == "delete" and not any(sel.values()) and not a.all:
        raise MLProfError("delete needs a selector (--version, --model, --task, --runtime) "
                          "or --all", field="--all")
    scanned = st.scan(a.store)
    entries = st.select(scanned.entries, versions=sel["version"], models=sel["model"],
                        tasks=sel["task"], runtimes=sel["runtime"])
    from mlprof.ingest import printable

    for link in scanned.skipped_links:
        print(f"not followed: symbolic link {printable(link)}", file=sys.stderr)
    for mount in scanned.skipped_mounts:
        print(f"not followed: another file system mounted at {printable(mount)}",
              file=sys.stderr)
    if a.action == "list":
        print(json.dumps({"store": scanned.store, "totals": st.totals(entries), "entries": [
            e.to_dict() for e in entries]}, indent=2) if a.json else
            st.format_entries(entries, scanned.store))
        return 0
    if a.action == "clean":
        removed = st.clean(entries, scanned.store, dry_run=a.dry_run, plots=a.plots)
    else:
        removed = st.delete(entries, scanned.store, dry_run=a.dry_run)
    print(json.dumps({"store": scanned.store, "dry_run": a.dry_run, "bytes": sum(
        r.size for r in removed), "removed": [r.to_dict() for r in removed]}, indent=2)
        if a.json else st.format_removals(removed, scanned.store, a.dry_run))
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with exact option names only and errors as :class:`MLProfError` (one line,
    no usage), for :func:`main` to print."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        if message.startswith("the following arguments are required: "):
            missing = message.rsplit(": ", 1)[1]
            if missing == "cmd":
                raise MLProfError(f"give a command: {', '.join(self._subcommands())} "
                                  "(mlprof --help)")
            raise MLProfError("missing (required)", field=missing)
        field = None
        if message.startswith("argument "):
            field, _, message = message[len("argument "):].partition(": ")
            field = field.split("/", 1)[0]
        if message.startswith("invalid choice: "):
            # "invalid choice: 'bench' (choose from 'benchmark', 'corpus', ...)"
            given, _, rest = message[len("invalid choice: "):].partition(" (choose from ")
            given = given.strip("'")
            names = [n.strip().strip("'") for n in rest.rstrip(")").split(",")]
            hint = did_you_mean(given, names, n=1)
            if field == "cmd":
                raise MLProfError(f"unknown command {given!r}{hint} (commands: "
                                  f"{', '.join(names)})")
            raise MLProfError(f"must be one of {', '.join(names)}, got {given!r}{hint}",
                              field=field)
        raise MLProfError(message, field=field)

    def _subcommands(self) -> dict[str, argparse.ArgumentParser]:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):  # argparse's only handle on them
                return dict(action.choices)
        return {}

    def unknown(self, extras: list[str], cmd: str | None) -> MLProfError:
        """One line for arguments that no option of ``cmd`` takes."""
        parser = self._subcommands().get(cmd, self) if cmd else self
        prog = f"mlprof {cmd}" if cmd else self.prog
        options = [a for a in extras if a.startswith("-") and len(a) > 1]
        if not options:
            return MLProfError(f"unexpected argument {extras[0]!r} ({prog} --help lists the "
                               "arguments)")
        opt = options[0].split("=", 1)[0]
        names = close_options(opt, list(parser._option_string_actions))
        hint = f"; did you mean {' or '.join(names)}?" if names else ""
        return MLProfError(f"unknown option {opt}{hint} ({prog} --help lists them)")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The ``mlprof`` command line; raises :class:`MLProfError` (one line) for unknown
    options and bad values (``--help`` exits as usual)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["benchmark"] and "--generate" in argv[1:]:
        gp = _generate_parser()
        a, extras = gp.parse_known_args(argv[1:])
        if extras:
            raise gp.unknown(extras, None)
        a.cmd = "benchmark"
        return a
    ap = build_parser()
    a, extras = ap.parse_known_args(argv)
    if extras:
        raise ap.unknown(extras, getattr(a, "cmd", None))
    return a


def build_parser() -> argparse.ArgumentParser:
    """The ``mlprof`` command's parser (exact option names only, one-line errors)."""
    ap = _Parser(prog="mlprof", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("benchmark", help="benchmark model files (YAML, ONNX, scripts)")
    b.add_argument("files", nargs="+", help="files, globs, script.py::HASH or .txt lists")
    b.add_argument("--generate", action="store_true", help="measure decoders generating "
                   "instead (TTFT, TPOT, tokens/s; other options: mlprof benchmark --generate "
                   "--help)")
    _measure_args(b)
    c = sub.add_parser("corpus", help="run whole corpora of model scripts and summarize")
    c.add_argument("paths", nargs="*", help="directories of corpora (TurnkeyML's models/), "
                   "corpus directories, scripts or globs (default: this checkout's models/)")
    c.add_argument("--corpora", default="", help="comma-separated corpora of --models-dir (or "
                   "of this checkout's models/)")
    c.add_argument("--models-dir", default="", help="a directory of corpora (e.g. a TurnkeyML "
                   "checkout's models/); same as giving it as PATH")
    _measure_args(c, runtime_alias=True)
    c.set_defaults(n_calls=20, min_duration=0.0, version="corpus", workers=_default_workers())
    sub.add_parser("system-info", help="CPU, threads, library versions, warnings about "
                   "frequency scaling, turbo and SMT, and this host's noise floor (JSON)")
    sub.add_parser("models", help="print the location of the models corpus")
    sub.add_parser("version", help="print mlprof's version")
    _store_args(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mlprof`` command."""
    try:
        a = parse_args(argv)
    except MLProfError as e:  # a bad option or value: nothing ran
        print(f"mlprof error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if a.cmd == "benchmark":  # watched as law run is: its imports, scheduling, own work
        from mlprof.progress import watch_run

        watch_run("mlprof benchmark", "importing law, luigi and the task modules", builds=True)
    try:
        if a.cmd in ("benchmark", "corpus"):  # they run law tasks in this process
            from mlprof.tasks.framework.hooks import install_run_hooks

            install_run_hooks()
        if a.cmd == "benchmark":
            return cmd_generate(a) if getattr(a, "generate", False) else cmd_benchmark(a)
        if a.cmd == "corpus":
            return cmd_corpus(a)
        if a.cmd == "store":
            return cmd_store(a)
        if a.cmd == "system-info":
            print(json.dumps(system_info(), indent=2))
        elif a.cmd == "models":
            print(corpus_dir())
        elif a.cmd == "version":
            from mlprof.version import __version__

            print(__version__)
        return 0
    except MLProfError as e:  # bad input found by a command (a model file, a store): nothing ran
        print(f"mlprof error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        from mlprof.errors import EXIT_INTERRUPTED, INTERRUPTED

        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        from mlprof.progress import end_run

        end_run()


if __name__ == "__main__":
    sys.exit(main())
