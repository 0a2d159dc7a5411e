"""One-line errors for ``law run``'s command line: unknown options and bad parameter values.

``law run Task --params`` hands the parameters to luigi's
:class:`luigi.cmdline_parser.CmdlineParser` (argparse, abbreviations on). Left alone, a typo gives
~70 lines of usage (an unknown option), a Python traceback (a value that a parameter cannot
parse, a missing required parameter) or silently another option (``--bs`` taken as
``--bs-normalized``). :func:`install` patches two methods of that class, in place and once, the
way :mod:`law.patches` patches it too (a subclass would not do: luigi and law reach the class
through several module-level names and keep the current instance on the class itself):

``_build_parser``
    The parser gets ``allow_abbrev=False`` (only exact option names) and this module's error
    handling (:class:`OneLineParser`): an unknown option gives one line with the closest option
    names (``unknown option --bs; did you mean --bs-normalized?``), any other argparse error
    (``--version`` without a value) one line naming the option. These errors happen before luigi
    catches anything, so they are logged here and the process exits with luigi's
    ``unhandled_exception`` code (40, ``[luigi_retcode]`` in ``law.cfg``).

``get_task_obj``
    Before the root task is built, every value given on the command line (the root task's
    options and every ``--Task-param`` or luigi option) is parsed and normalized by its
    parameter; the first bad one raises :class:`MLProfError` naming the option and the value
    (``--batch-sizes: expected comma-separated integers, got '1,two'``), as does a required
    parameter without a value (``--version: missing (required)``). luigi's own handling then
    logs it (one line, through :class:`mlprof.tasks.framework.base.OneLineErrors`) and exits with
    the same code; nothing is scheduled and nothing is written. Errors raised by the tasks' own
    checks in ``__init__`` take the same way.

Both kinds of line read ``mlprof error: <field>: <message>`` after law's log prefix.
"""

from __future__ import annotations

import argparse
import functools
import logging
import sys
from collections.abc import Iterator
from typing import Any, NoReturn

import law
import luigi
import luigi.cmdline_parser
from luigi.task_register import Register

from mlprof.errors import MLProfError
from mlprof.util import close_options, did_you_mean

logger = logging.getLogger("luigi-interface")

#: what a value of a scalar parameter type must look like (the first class that matches)
_EXPECTED = (
    (luigi.BoolParameter, "True or False", "True or False values"),
    (luigi.IntParameter, "an integer", "integers"),
    (luigi.FloatParameter, "a number", "numbers"),
    (law.DurationParameter, "a duration (e.g. 30s, 5min, 2h)", "durations"),
    (luigi.DateParameter, "a date (YYYY-MM-DD)", "dates"),
)


def _expected(param: luigi.Parameter, plural: bool = False) -> str | None:
    for cls, one, many in _EXPECTED:
        if isinstance(param, cls):
            return many if plural else one
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _choice_text(choices, value: str) -> str:
    names = sorted(map(str, choices))
    hint = did_you_mean(value, names)
    return f"must be one of {', '.join(names)}, got {value!r}{hint}"


def bad_value_message(param: luigi.Parameter, value: Any, exc: BaseException) -> str:
    """One line on why ``value`` (as given on the command line) is not a value of ``param``."""
    text = _text(value)
    if isinstance(param, law.CSVParameter):
        inner = param._inst
        elems = [e.strip() for e in text.split(",")] if isinstance(value, str) else []
        bad = []
        for e in elems:
            try:
                inner.parse(e)
            except Exception:  # noqa: BLE001  (any failure of the element's own parser)
                bad.append(e)
        if bad:
            choices = getattr(inner, "_choices", None)
            if isinstance(inner, luigi.ChoiceParameter) and choices:
                return (f"expected comma-separated values from "
                        f"{', '.join(sorted(map(str, choices)))}, got {text!r}")
            what = _expected(inner, plural=True) or "values"
            return f"expected comma-separated {what}, got {text!r}"
        if param._choices:
            unknown = [e for e in elems if e and e not in map(str, param._choices)]
            hint = did_you_mean(unknown[0], param._choices) if len(unknown) == 1 else ""
            return (f"expected comma-separated values from "
                    f"{', '.join(map(str, param._choices))}, got {text!r}{hint}")
        return f"invalid value {text!r}: {' '.join(str(exc).split())}"
    if isinstance(param, luigi.ChoiceParameter):
        return _choice_text(param._choices, text)
    if isinstance(param, luigi.EnumParameter):
        return _choice_text([m.name for m in param._enum], text)
    what = _expected(param)
    if what:
        return f"expected {what}, got {text!r}"
    return f"invalid value {text!r}: {' '.join(str(exc).split()) or type(exc).__name__}"


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _given(cp: luigi.cmdline_parser.CmdlineParser
           ) -> Iterator[tuple[str, luigi.Parameter, Any, bool]]:
    """``(flag, parameter, value, local)`` of every value given on the command line (local:
    the root task's own option)."""
    args = cp.known_args
    root = args.root_task
    for task_name, without_section, name, param in Register.get_all_params():
        dest = param._parser_global_dest(name, task_name)
        value = getattr(args, dest, None)
        if value is not None:
            yield _flag(name if without_section else f"{task_name}_{name}"), param, value, False
        if task_name == root:
            value = getattr(args, name, None)
            # what law's patched CmdlineParser._get_task_kwargs passes on (empty: the default)
            if value is not None and (value or getattr(param, "parse_empty", False)):
                yield _flag(name), param, value, True


def check_values(cp: luigi.cmdline_parser.CmdlineParser) -> None:
    """Parse and normalize every value given on the command line with its parameter, and
    check that the root task's required parameters have one; raises :class:`MLProfError`
    naming the option (the one the user typed) and the value."""
    root = cp.known_args.root_task
    given_local = set()
    for flag, param, value, local in _given(cp):
        if local:
            given_local.add(flag)
        if getattr(param, "is_version", False) and isinstance(value, str):
            # a version the user gives: not one of mlprof's own (``<night>.confirm``) either
            from mlprof.results.layout import check_version

            check_version(value, flag, given=True)
        try:
            param.normalize(param.parse(value))
        except MLProfError as e:
            # the parameter's own check: keep its message, name the option the user typed
            field = flag if e.field is None or e.field.startswith("--") else e.field
            raise MLProfError(e.message, e.file, field) from None
        except Exception as e:  # noqa: BLE001  (a parameter's parse or normalize failed)
            raise MLProfError(bad_value_message(param, value, e), field=flag) from None
    if not root:
        return
    # an empty value (an unset $VARIABLE in a cron job) must not silently become the default;
    # where the default is empty itself, empty is simply that default
    for name, param in Register.get_task_cls(root).get_params():
        if getattr(cp.known_args, name, None) == "" and param._default not in ("", (), None) \
                and not getattr(param, "parse_empty", False):
            raise MLProfError("must not be empty (an unset variable?); leave the option out for "
                              "its default", field=_flag(name))
    missing = [
        name for name, param in Register.get_task_cls(root).get_params()
        if _flag(name) not in given_local and not param.has_task_value(root, name)
    ]
    empty = [n for n in missing if getattr(cp.known_args, n, None) == ""]
    if empty:  # law passes an empty value on as no value
        raise MLProfError("must not be empty (required)", field=_flag(empty[0]))
    if missing:
        raise MLProfError("missing (required)", field=", ".join(map(_flag, missing)))


def _unset_flag(param: luigi.Parameter, value: Any) -> bool:
    """Whether ``value`` is argparse's default of a flag that was not given: luigi's implicit
    boolean options (``store_true``) are ``False`` when absent, not ``None``. Taken as given,
    the 9 of luigi's own tasks (``--RangeDaily-reverse``, ...) made every ``law run`` build the
    root's whole dependency graph in :func:`check_upstream_options` (and start the measurement
    server from MeasureRuntime's ``workflow_requires``) even for a no-op rerun."""
    return (value is False and isinstance(param, luigi.BoolParameter)
            and param.parsing == luigi.BoolParameter.IMPLICIT_PARSING)


def _upstream_given(cp: luigi.cmdline_parser.CmdlineParser
                    ) -> list[tuple[str, str, str, Any]]:
    """``(flag, task family, parameter, value)`` of every ``--<Task>-<param>`` given for a task
    other than the root task (the value parsed and normalized as its parameter does)."""
    args = cp.known_args
    out = []
    for task_name, without_section, name, param in Register.get_all_params():
        if without_section or task_name == args.root_task:
            continue
        value = getattr(args, param._parser_global_dest(name, task_name), None)
        if value is not None and not _unset_flag(param, value):
            out.append((_flag(f"{task_name}_{name}"), task_name, name,
                        param.normalize(param.parse(value))))
    return out


def check_upstream_options(cp: luigi.cmdline_parser.CmdlineParser, root: luigi.Task) -> None:
    """Refuse a ``--<Task>-<param>`` option that would be silently ignored.

    luigi applies ``--MeasureRuntime-n-calls`` to a MeasureRuntime only where the task that
    requires it does not pass ``n_calls`` itself; law's ``req()`` passes every parameter the
    two tasks share, so under ``law run MergeRuntimes`` the option was type-checked and then
    dropped, and the result answered another question than the one asked. Every task of the
    root's dependency graph of the named class is built (only when such an option is given)
    and compared: a value that did not arrive is one line naming the option and the option to
    use instead. Options for parameters no upstream task passes on (``--MeasureRuntime-workflow
    slurm``) arrive and stay allowed.
    """
    given = _upstream_given(cp)
    if not given:
        return
    from luigi.task import flatten

    families = {fam for _, fam, _, _ in given}
    root_params = dict(type(root).get_params())
    seen: set[str] = set()
    stack: list[tuple[luigi.Task, luigi.Task | None]] = [(root, None)]
    while stack:
        task, parent = stack.pop()
        if task.task_id in seen:
            continue
        seen.add(task.task_id)
        if task.task_family in families and parent is not None:
            for flag, fam, name, value in given:
                if fam != task.task_family or getattr(task, name, value) == value:
                    continue
                instead = (_flag(name) if name in root_params and
                           name not in getattr(root, "exclude_params_req", ())
                           else _flag(f"{parent.task_family}_{name}"))
                raise MLProfError(
                    f"not applied: {parent.task_family} passes its own {name} "
                    f"({getattr(task, name)!r}) to {fam}; give {instead} instead", field=flag)
        stack.extend((dep, task) for dep in reversed(flatten(task.requires())))


def _parameter_error(exc: luigi.parameter.ParameterException) -> MLProfError:
    """luigi's own parameter errors as one line, without its ``Task[args=..]:`` prefix."""
    text = " ".join(str(exc).split())
    if "]: " in text:
        text = text.split("]: ", 1)[1]
    return MLProfError(text)


# ---- the parser ---------------------------------------------------------------------------


def retcode() -> int:
    """The exit code of an error before anything ran (``[luigi_retcode] unhandled_exception``)."""
    import luigi.retcodes

    try:
        return int(luigi.retcodes.retcode().unhandled_exception)
    except Exception:  # noqa: BLE001  (a broken config must not hide the user's error)
        return 40


def fail(err: MLProfError) -> NoReturn:
    """Log ``err`` as one line (as luigi logs the errors it catches) and exit with
    :func:`retcode`."""
    logger.error("mlprof error: %s", err)
    for h in logger.handlers:
        h.flush()
    sys.exit(retcode())


def _program() -> str:
    prog = sys.argv[0] if sys.argv else ""
    return "law run" if prog.endswith(" run") or "law" in prog.rsplit("/", 1)[-1] else "luigi"


class OneLineParser(argparse.ArgumentParser):
    """luigi's command-line parser with one-line errors: :func:`install` turns the parsers that
    luigi builds into this class (and switches abbreviations off)."""

    mlprof_root_task: str | None = None

    def suggest(self, option: str) -> list[str]:
        """The options ``option`` was probably meant to be: those it begins (abbreviations are
        off; the root task's and luigi's documented options first), else the closest names."""
        option = option.split("=", 1)[0]
        everything = list(self._option_string_actions)
        shown = [o for o, a in self._option_string_actions.items()
                 if a.help != argparse.SUPPRESS]
        if any(o.startswith(option) for o in shown):
            return close_options(option, shown)
        return close_options(option, everything)

    def unknown(self, extras: list[str]) -> MLProfError:
        """One line for arguments that no option takes."""
        root = self.mlprof_root_task
        where = f" ({_program()} {root} --help lists them)" if root else ""
        options = [a for a in extras if a.startswith("-") and len(a) > 1]
        if options:
            opt = options[0]
            names = self.suggest(opt)
            hint = f"; did you mean {' or '.join(names)}?" if names else ""
            return MLProfError(f"unknown option {opt.split('=', 1)[0]}{hint}{where}")
        return MLProfError(f"unexpected argument {extras[0]!r} (an option takes one value: "
                           "quote values with spaces, separate list items by commas)")

    def parse_args(self, args=None, namespace=None):
        known, extras = self.parse_known_args(args, namespace)
        if extras:
            fail(self.unknown(extras))
        return known

    def error(self, message: str) -> NoReturn:
        # argparse's "argument --version: expected one argument" and the like
        field = None
        if message.startswith("argument "):
            head, sep, rest = message[len("argument "):].partition(": ")
            if sep:
                field, message = head.split("/", 1)[0], rest
        fail(MLProfError(message, field=field))


# ---- installation -------------------------------------------------------------------------


def install() -> None:
    """Patch luigi's :class:`~luigi.cmdline_parser.CmdlineParser` (once per process)."""
    cls = luigi.cmdline_parser.CmdlineParser
    if getattr(cls.get_task_obj, "_mlprof", False):
        return

    build_orig = cls._build_parser  # a staticmethod: the plain function
    # luigi builds its parser 3 times per CmdlineParser, and `law run` makes 3 of them: 9
    # argparse parsers of every task's every parameter (7,146 add_argument calls), 0.84 s of
    # the 1.23 s an already-complete PlotRuntimes took in a warm process. A parser depends only
    # on the registered tasks, the root task and --help-all, and parsing does not change it,
    # so each is built once per process (9 -> 2 builds: -0.65 s per `law run` here)
    parsers: dict[tuple[Any, bool, int], argparse.ArgumentParser] = {}

    @functools.wraps(build_orig)
    def _build_parser(root_task=None, help_all=False):
        key = (root_task, bool(help_all), len(Register._reg))  # a new task: a new parser
        parser = parsers.get(key)
        if parser is None:
            parser = build_orig(root_task=root_task, help_all=help_all)
            parser.__class__ = OneLineParser  # same state, this class's parse_args and error
            parser.allow_abbrev = False
            parser.mlprof_root_task = root_task
            parsers[key] = parser
        return parser

    get_task_obj_orig = cls.get_task_obj

    @functools.wraps(get_task_obj_orig)
    def get_task_obj(self):
        check_values(self)
        from mlprof.progress import end_run, run_phase
        from mlprof.tasks.framework.preflight import inspects_only, mark_inspecting, preflight

        mark_inspecting(inspects_only(self.known_args))
        if inspects_only(self.known_args):  # law prints what it finds from here on
            end_run()
        else:  # --print-status of a read-only store works
            run_phase("checking the parameters")
            preflight()  # a read-only or full store, an unusable lock: once, before anything
        try:
            task = get_task_obj_orig(self)
        except luigi.parameter.ParameterException as e:
            raise _parameter_error(e) from None
        check_upstream_options(self, task)
        return task

    get_task_obj._mlprof = True  # type: ignore[attr-defined]
    cls._build_parser = staticmethod(_build_parser)
    cls.get_task_obj = get_task_obj
