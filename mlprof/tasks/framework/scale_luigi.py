"""luigi's share of the scale patches (:mod:`mlprof.tasks.framework.scale`, which applies them
and records their status): a task class's parameters kept per class, its config lookup
skipping absent sections, a new task's argument description and parameter values computed
once, its instance-cache key hashed once, and one argparse parser per ``law run``.

Each patch is applied only when the code it replaces is there (:func:`_names` reads the names a
function uses from its byte code), and each is tested against luigi's own answers
(``tests/test_scale.py``); the figures are in each docstring and in
:mod:`mlprof.tasks.framework.scale`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any


def _names(func: Any) -> set[str]:
    """Names (attributes, globals, methods) used by ``func`` and the functions nested in it.

    Read from the byte code: ``inspect.getsource`` would read and tokenize the module's file on
    every ``law run`` (~7 ms here).
    """
    names: set[str] = set()
    stack = [getattr(func, "__code__", None)]
    while stack:
        code = stack.pop()
        if code is None:
            continue
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return names


#: each task class's ``get_params()`` (luigi computes it anew from ``dir(cls)`` on every call)
_PARAMS: dict[type, tuple] = {}
#: the names of the parameters in :data:`_PARAMS`: setting or deleting one on a class empties it
_PARAM_NAMES: set[str] = set()


def _patch_get_params() -> bool:
    """Keep luigi's ``Task.get_params()`` per class instead of rebuilding it on every call.

    luigi's ``get_params`` walks ``dir(cls)`` (~700 names on a task class of mlprof), takes
    every attribute and sorts the parameters, and it is called ~14 times per task instance
    (``__init__``, ``to_str_params``, law's ``req_params``/``common_task_params``, the
    workflow's parameter resolution, ...): 4,108 calls for 300 branches, 40 % of the profiled
    CPU time of scheduling them. The parameters of a class are its class attributes, so the
    result only changes when a parameter is set on or deleted from a task class (luigi's
    comment: "no room to extend classes dynamically" otherwise): the metaclass's
    ``__setattr__``/``__delattr__`` empty the cache then. Callers get a new list each time
    (as before: some sort or extend it).
    """
    import luigi.parameter
    import luigi.task
    from luigi.task_register import Register

    entry = luigi.task.Task.__dict__.get("get_params")
    if not isinstance(entry, classmethod):
        return False
    orig = entry.__func__
    if getattr(orig, "_mlprof_scale", False):
        return True
    if "dir" not in _names(orig):  # luigi keeps it some other way: leave it alone
        return False
    parameter = luigi.parameter.Parameter

    def get_params(cls):
        params = _PARAMS.get(cls)
        if params is None:
            params = tuple(orig(cls))
            _PARAMS[cls] = params
            _PARAM_NAMES.update(name for name, _ in params)
        return list(params)

    get_params.__doc__ = orig.__doc__
    get_params._mlprof_scale = True  # type: ignore[attr-defined]
    setattr_prev = Register.__setattr__
    delattr_prev = Register.__delattr__

    def __setattr__(cls, name, value):
        setattr_prev(cls, name, value)
        if name in _PARAM_NAMES or isinstance(value, parameter):
            _PARAMS.clear()

    def __delattr__(cls, name):
        delattr_prev(cls, name)
        _PARAMS.clear()

    setattr(Register, "__setattr__", __setattr__)  # noqa: B010  (mypy: no method-assign)
    setattr(Register, "__delattr__", __delattr__)  # noqa: B010
    setattr(luigi.task.Task, "get_params", classmethod(get_params))  # noqa: B010
    return True


def _patch_config_sections() -> bool:
    """Answer luigi's per-parameter config lookup without configparser for an absent section.

    Every parameter a task is made without (its default) is looked up in the config first,
    ``[TaskFamily] name`` (``Parameter._get_value_from_config``): ~105 lookups per task of
    mlprof, each through configparser's interpolation machinery, which raises
    ``NoSectionError`` when there is no such section (there is none for nearly every task
    family). Checking ``has_section`` first gives the same ``_no_value`` (configparser's
    ``get`` raises for a missing section, underscore and dash spelling alike) for a dict lookup:
    ~12 % of the profiled scheduling time. Only for luigi's configparser-based config.
    """
    import configparser

    import luigi.configuration
    import luigi.parameter

    orig = luigi.parameter.Parameter._get_value_from_config
    if getattr(orig, "_mlprof_scale", False):
        return True
    no_value = getattr(luigi.parameter, "_no_value", None)
    if no_value is None or "get_config" not in _names(orig):
        return False

    @functools.wraps(orig)
    def _get_value_from_config(self, section, name):
        conf = luigi.configuration.get_config()
        if isinstance(conf, configparser.RawConfigParser) and isinstance(section, str) \
                and section != conf.default_section and not conf.has_section(section):
            return no_value
        return orig(self, section, name)

    _get_value_from_config._mlprof_scale = True  # type: ignore[attr-defined]
    setattr(luigi.parameter.Parameter, "_get_value_from_config",  # noqa: B010
            _get_value_from_config)
    return True


class _ShortReprDict(dict):
    """The keyword arguments of a task, with a constant ``repr`` (see :func:`_patch_exc_desc`)."""

    def __repr__(self) -> str:
        return "{...}"

    __str__ = __repr__


class _ShortReprTuple(tuple):
    """The positional arguments of a task, with a constant ``repr``."""

    def __repr__(self) -> str:
        return "(...)"

    __str__ = __repr__


def _patch_exc_desc() -> bool:
    """Let luigi's ``Task.get_param_values`` skip the ``repr`` of all arguments unless it fails.

    luigi formats ``exc_desc = "%s[args=%s, kwargs=%s]" % (family, args, kwargs)`` on every
    call, only for its error messages: the ``repr`` of every argument a new task gets, and
    every branch of ``MeasureRuntime --batch-sizes 1,...,N`` gets all N batch sizes. At N =
    1,000 that ``repr`` took 114 us per branch (10.6 us at N = 100, timeit here), O(N) per task
    and O(N^2) for the sweep: the largest part of what grew from 100 to 1,000 branches
    (benchmarks/scheduling.py). Here luigi's function gets the same arguments in a dict and a
    tuple whose ``repr`` is constant; when it raises, it is called again with the arguments as
    given, so every error carries luigi's own message. Its other work (normalize, defaults,
    the unconsumed-parameter warning, kept per class) is the same.
    """
    import luigi.task

    entry = luigi.task.Task.__dict__.get("get_param_values")
    if not isinstance(entry, classmethod):
        return False
    orig = entry.__func__
    if getattr(orig, "_mlprof_scale", False):
        return True
    if "exc_desc" not in orig.__code__.co_varnames:  # no eager description: leave it alone
        return False

    def get_param_values(cls, params, args, kwargs):
        try:
            return orig(cls, params, _ShortReprTuple(args), _ShortReprDict(kwargs))
        except Exception:  # noqa: BLE001  (luigi's own error, with its own message)
            return orig(cls, params, args, kwargs)

    get_param_values.__doc__ = orig.__doc__
    get_param_values._mlprof_scale = True  # type: ignore[attr-defined]
    setattr(luigi.task.Task, "get_param_values", classmethod(get_param_values))  # noqa: B010
    return True


class _HashedKey(tuple):
    """An instance-cache key, ``(cls, values)``, that hashes its values once.

    A tuple computes its hash anew on every dict operation, and the values of a branch hold all
    N batch sizes of its workflow: ``__call__`` below needs the hash three or four times per
    task (4.7 us each at N = 1,000, timeit here). Equal to, and hashed like, the plain tuple
    (luigi's own key), so either finds the other in the cache. Raises ``TypeError`` for
    unhashable values, like ``hash``.
    """

    def __init__(self, items: Iterable) -> None:
        self._hash = tuple.__hash__(self)

    def __hash__(self) -> int:
        return self._hash


#: parameter values luigi's ``Register.__call__`` computed for the instance it is creating
_MAKING: list[tuple[type, tuple, dict, list]] = []


def _patch_param_values_once() -> bool:
    """Compute a new task's parameter values once, not twice.

    luigi's ``Register.__call__`` computes a task's parameter values (law's and mlprof's
    ``modify_param_values`` included) for its instance cache key, and a new instance's
    ``Task.__init__`` computes them again from the same arguments: ~35 % of the profiled CPU
    time per branch after the patches above. Here ``__call__`` keeps what it computed while it
    creates the instance, and the ``get_param_values`` of that ``__init__`` (same class, the
    very same argument objects: checked by identity, not equality) takes it. Any other call
    computes as before; a disabled instance cache goes luigi's way.
    """
    import law.task.base
    from luigi.task_register import Register

    call_orig = Register.__dict__.get("__call__")
    entry = law.task.base.BaseTask.__dict__.get("get_param_values")
    if call_orig is None or not isinstance(entry, classmethod) \
            or not hasattr(Register, "_Register__instance_cache"):
        return False
    if getattr(call_orig, "_mlprof_scale", False):
        return True
    if "get_param_values" not in _names(call_orig):
        return False
    values_orig = entry.__func__

    @functools.wraps(call_orig)
    def __call__(cls, *args, **kwargs):
        cache = cls._Register__instance_cache
        if cache is None:
            return call_orig(cls, *args, **kwargs)
        values = cls.get_param_values(cls.get_params(), args, kwargs)
        try:
            key = _HashedKey((cls, tuple(values)))
        except TypeError:
            return call_orig(cls, *args, **kwargs)  # luigi's way: no cache, computed again
        if key not in cache:
            _MAKING.append((cls, args, kwargs, values))
            try:
                cache[key] = super(Register, cls).__call__(*args, **kwargs)
            finally:
                _MAKING.pop()
        return cache[key]

    def get_param_values(cls, params, args, kwargs):
        if _MAKING:
            made, margs, mkwargs, values = _MAKING[-1]
            if made is cls and len(args) == len(margs) and kwargs.keys() == mkwargs.keys() \
                    and all(a is b for a, b in zip(args, margs, strict=True)) \
                    and all(kwargs[k] is mkwargs[k] for k in kwargs):
                _MAKING[-1] = (None, (), {}, values)  # taken: a second call computes
                return list(values)
        return values_orig(cls, params, args, kwargs)

    get_param_values.__doc__ = values_orig.__doc__
    get_param_values._mlprof_scale = True  # type: ignore[attr-defined]
    __call__._mlprof_scale = True  # type: ignore[attr-defined]
    setattr(Register, "__call__", __call__)  # noqa: B010
    setattr(law.task.base.BaseTask, "get_param_values", classmethod(get_param_values))  # noqa
    return True


def _patch_parse_once() -> bool:
    """Let luigi's ``CmdlineParser`` build one argparse parser instead of two (start-up).

    luigi's ``CmdlineParser.__init__`` builds a parser of every registered task's every parameter
    without a root task (only to find the root task and ``--module``), parses, builds it again for
    the root task and parses twice more. :mod:`mlprof.tasks.framework.cmdline` already keeps each
    built parser, but the two builds stay: 2 x ~860 ``add_argument`` calls, ~24 ms each here, 0.05
    of the ~0.45 s a no-op ``law run PlotRuntimes`` takes (issue 38). Under ``law run`` the first
    argument is the task family (``law/cli/run.py``), so when it names a registered task the root
    task's parser answers the first parse as well: the same root task, the same ``--module`` and
    ``--help`` values (the root parser only knows more flags). Anything else (no task first,
    ``--module``, ``--help-all``, another root task found) goes the original way, unchanged.
    """
    import luigi.cmdline_parser as lcp
    from luigi.task_register import Register

    cls = lcp.CmdlineParser
    init_prev = cls.__init__
    if getattr(init_prev, "_mlprof_scale", False):
        return True
    needed = ("_build_parser", "_attempt_load_module", "_possibly_exit_with_help")
    if not all(hasattr(cls, name) for name in needed):
        return False

    @functools.wraps(init_prev)
    def __init__(self, cmdline_args):
        args = list(cmdline_args)
        root = args[0] if args and isinstance(args[0], str) and not args[0].startswith("-") \
            else None
        try:
            registered = root is not None and Register.get_task_cls(root) is not None
        except Exception:  # noqa: BLE001  (unknown or ambiguous: luigi's own way says so)
            registered = False
        if not registered:
            return init_prev(self, cmdline_args)
        parser = self._build_parser(root_task=root, help_all=False)
        known, _ = parser.parse_known_args(args=args)
        if known.root_task != root or known.core_module or known.core_help_all:
            return init_prev(self, cmdline_args)
        self._possibly_exit_with_help(parser, known)
        self.known_args = parser.parse_args(args=args)
        self.cmdline_args = cmdline_args  # what law's own patch of __init__ adds
        return None

    __init__._mlprof_scale = True  # type: ignore[attr-defined]
    setattr(cls, "__init__", __init__)  # noqa: B010
    return True
