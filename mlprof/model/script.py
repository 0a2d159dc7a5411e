"""Model scripts: find the PyTorch models a Python script calls, and get them back.

How discovery works (TurnkeyML's idea, made reproducible):

1. The script runs as ``__main__`` (``runpy``) with ``sys.argv = [script, *script_args]``, in
   a child process, with two hooks on ``torch.nn.Module``: ``__init__`` remembers where each
   module was created in the script (file and line), ``__call__`` records every call of a module
   at a depth <= ``max_depth`` (0 = modules called from the script itself, 1 = their direct
   sub-modules, ...): its class, parameter count and size, and the names, shapes and dtypes of
   the inputs of its first call.
2. Each model gets a hash of its architecture (``repr(module)``: layer types and settings, no
   weights), its class and its input shapes and dtypes: the same on every run and machine, and
   different when the inputs change shape.
3. The manifest (JSON) lists the models; later steps pick one by hash.

How a model is rebuilt (:func:`capture`): the script runs again, the same way, and when the
module with the wanted hash is called for the first time, the module and its inputs are taken
and the script is stopped right there. No pickling of models and no guessing of constructor
arguments: what is measured is exactly what the script builds, with the inputs it uses.

The batch dimension: when the script called ``mlprof.parser.parse`` with ``batch_size``, tensor
inputs whose first dimension equals that batch size are batched. Otherwise the first dimension
of inputs with >= 2 dimensions is the batch when they all agree. Other inputs (scalars, 1-d
vectors, ...) keep their shape at every batch size, and a model with no batched input at all is
measured at its own shapes (the manifest says so).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re
import runpy
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import mlprof.parser as parser
from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.model.sandbox import classify, script_sandbox

LABELS_RE = re.compile(r"^#\s*labels:\s*(.*)$")
SKIP_RE = re.compile(r"^#\s*mlprof-skip:\s*(.*)$")


def split_model_file(value: str) -> tuple[str, tuple[str, ...]]:
    """``script.py::h1,h2`` -> (``script.py``, (``h1``, ``h2``)); plain paths give ()."""
    path, sep, hashes = str(value).partition("::")
    if not sep:
        return path, ()
    hs = tuple(h.strip().lower() for h in hashes.split(",") if h.strip())
    bad = [h for h in hs if not re.fullmatch(r"[0-9a-f]{8}", h)]
    if not hs or bad:
        raise MLProfError(f"expected 8-hex model hashes after '::', got {hashes!r}", path,
                          "--model-file")
    return path, hs


def is_script(path: str) -> bool:
    """Whether ``path`` (optionally with ``::HASH``) names a Python model script."""
    return split_model_file(path)[0].lower().endswith(".py")


def read_labels(path: str) -> dict[str, list[str]]:
    """Labels from the script's first line: ``# labels: key::v1,v2 key2::v``."""
    first = ingest.read_source(path).partition("\n")[0]
    m = LABELS_RE.match(first.strip())
    if not m:
        return {}
    labels: dict[str, list[str]] = {}
    for item in m.group(1).split():
        key, sep, values = item.partition("::")
        if not sep or not key:
            raise MLProfError(f"label {item!r} is not key::value[,value...]", path, "labels")
        labels.setdefault(key, []).extend(v for v in values.split(",") if v)
    return labels


def read_skip(path: str) -> str | None:
    """The reason in a ``# mlprof-skip: reason`` line among the first lines, if any.

    Read through :func:`mlprof.ingest.read_source` (a regular file of at most
    :data:`~mlprof.ingest.MAX_SCRIPT_BYTES`, decoded as Python decodes it): a script with a
    latin-1 coding cookie is read, a FIFO or a device is one line, never a hang."""
    for line in ingest.read_source(path).splitlines()[:10]:
        m = SKIP_RE.match(line.strip())
        if m:
            return m.group(1).strip() or "no reason given"
    return None


def script_hash(path: str, script_args: tuple[str, ...] = ()) -> str:
    """sha256 of the script's content and its arguments (the content read through
    :func:`mlprof.ingest.read_bytes`: a regular file of a script's size, never a hang)."""
    h = hashlib.sha256()
    h.update(ingest.read_bytes(path, ingest.MAX_SCRIPT_BYTES, what="a model script"))
    for a in script_args:
        h.update(b"\0" + a.encode())
    return h.hexdigest()


@dataclass
class _Record:
    module: Any
    depth: int
    args: tuple
    kwargs: dict
    calls: int = 0
    created: tuple[str, int] | None = None
    parent: int | None = None
    hash: str = ""  # at its first call: capture() stops at that call, so it must match


class _Stop(BaseException):
    """Raised inside the script to stop it once the wanted model was captured."""


@dataclass
class _Hooks:
    script: str
    max_depth: int = 0
    want: str | None = None       # capture mode: the hash to stop at
    records: dict[int, _Record] = field(default_factory=dict)
    captured: tuple | None = None
    local: threading.local = field(default_factory=threading.local)
    #: while installed: the wrappers record what they see
    active: bool = False

    def install(self):
        import torch

        nn = torch.nn.Module
        self._orig_init, self._orig_call = nn.__init__, nn.__call__
        self._modules_before = set(sys.modules)  # (see _give_back)
        hooks = self
        script = os.path.realpath(self.script)

        def __init__(mod, *args, **kwargs):
            hooks._orig_init(mod, *args, **kwargs)
            if "_mlprof_created" not in mod.__dict__:
                frame = sys._getframe(1)
                while frame is not None:
                    if os.path.realpath(frame.f_code.co_filename) == script:
                        object.__setattr__(mod, "_mlprof_created",
                                           (script, frame.f_lineno))
                        break
                    frame = frame.f_back

        def __call__(mod, *args, **kwargs):
            depth = getattr(hooks.local, "depth", 0)
            if depth <= hooks.max_depth and hooks.active:
                hooks._seen(mod, depth, args, kwargs)
            hooks.local.depth = depth + 1
            try:
                return hooks._orig_call(mod, *args, **kwargs)
            finally:
                hooks.local.depth = depth

        nn.__init__ = __init__
        nn.__call__ = __call__
        self._wrappers = {id(__init__): (__init__, self._orig_init),
                          id(__call__): (__call__, self._orig_call)}
        self.active = True

    def uninstall(self):
        """Put ``nn.Module``'s own ``__init__`` and ``__call__`` back, also where a module
        imported while the script ran saved them as "the unpatched ones" (see
        :func:`_give_back`)."""
        import torch

        self.active = False
        torch.nn.Module.__init__ = self._orig_init
        torch.nn.Module.__call__ = self._orig_call
        _give_back(self._wrappers, [m for name, m in list(sys.modules.items())
                                    if name not in self._modules_before])

    def _seen(self, mod, depth, args, kwargs):
        rec = self.records.get(id(mod))
        if rec is None:
            # hashed before the call: a model may change itself when first called
            # (transformers' BigBird switches its attention type, which its repr shows)
            rec = _Record(mod, depth, args, kwargs,
                          created=mod.__dict__.get("_mlprof_created"),
                          hash=model_hash(mod, args, kwargs))
            self.records[id(mod)] = rec
            if self.want is not None and rec.hash == self.want:
                self.captured = (mod, args, kwargs)
                raise _Stop()
        rec.calls += 1


def _tensor_info(x: Any) -> dict | None:
    import torch

    if isinstance(x, torch.Tensor):
        return {"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")}
    return None


def bind_inputs(module: Any, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
    """The call's inputs as (name, value) in forward()'s parameter order."""
    try:
        sig = inspect.signature(module.forward)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [(f"input_{i}", a) for i, a in enumerate(args)] + list(kwargs.items())
    items: list[tuple[str, Any]] = []
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind == inspect.Parameter.VAR_POSITIONAL:
            items.extend((f"*{name}_{i}", v) for i, v in enumerate(value))
        elif kind == inspect.Parameter.VAR_KEYWORD:
            items.extend(value.items())
        else:
            items.append((name, value))
    return items


def positional_ok(module: Any, names: list[str]) -> bool:
    """Whether ``names`` are exactly the first positional parameters of ``forward()``.

    Only then may the inputs be passed positionally; otherwise they go by keyword (a model
    such as GPT-2 has ``past_key_values`` between ``input_ids`` and ``attention_mask``).
    """
    try:
        params = [p.name for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return True
    plain = [n for n in names if not n.startswith("*")]
    if len(plain) < len(names):  # *args: everything goes positionally
        return params == plain
    return params[:len(names)] == list(names)


def keyword_wrapper(module: Any, items: list[tuple[str, Any]]) -> Any:
    """A module whose ``forward(*tensors)`` calls ``module`` with the tensors by keyword.

    Non-tensor arguments are fixed. Exporters fill unused parameters positionally, which
    breaks models whose ``forward()`` takes many optional arguments (transformers); this
    wrapper passes exactly what the script passed, by name.
    """
    import torch

    names = [n for n, v in items if isinstance(v, torch.Tensor)]
    consts = {n: v for n, v in items if not isinstance(v, torch.Tensor)}

    class KeywordCall(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = module

        def forward(self, *tensors):
            return self.inner(**dict(zip(names, tensors, strict=True)), **consts)

    wrapper = KeywordCall()
    wrapper.train(module.training)
    return wrapper


def model_hash(module: Any, args: tuple, kwargs: dict) -> str:
    """8 hex digits over the architecture, the class and the input shapes and dtypes."""
    h = hashlib.sha256()
    cls = type(module)
    h.update(f"{cls.__module__}.{cls.__qualname__}\n".encode())
    h.update(repr(module).encode())
    for name, value in bind_inputs(module, args, kwargs):
        info = _tensor_info(value)
        h.update(f"\n{name}:{info if info is not None else type(value).__name__}".encode())
    return h.hexdigest()[:8]


def _give_back(wrappers: dict[int, tuple[Any, Any]], modules: list[Any]) -> None:
    """Replace every reference to one of the hooks' wrappers in the globals of ``modules``
    (those imported while the script ran) with the function it wrapped (``wrappers``:
    ``{id(wrapper): (wrapper, original)}``).

    Why: modules that PyTorch imports lazily save ``nn.Module.__call__`` and ``__init__`` as
    "the unpatched ones" when first imported (``torch._dynamo.utils.unpatched_nn_module_call``,
    ``torch._dynamo.mutation_guard.unpatched_nn_module_init``, ``torch.fx._symbolic_trace
    ._orig_module_call``). Imported while a script ran (torchvision's models import dynamo),
    they kept mlprof's wrappers for the rest of the process: dynamo took every module for one
    with a ``__call__`` of its own, and the wrappers held the hooks' records, so the script's
    models stayed in memory for the rest of the process (after a run of torchvision's resnet18
    its ResNet was still reachable from ``unpatched_nn_module_call``).

    Only the modules imported while the script ran: a module loaded before it saved the
    originals. Scanning all of them took 5 ms in a process of its own and 39-46 ms in a
    measurement server's child, where reading each of the ~56,000 globals writes its
    reference count and so copies the server's memory page by page (the discovery of the
    10x128 example in such a child: 41-44 ms, 15-16 ms with the new modules only)."""
    for module in modules:
        try:
            names = vars(module)
        except TypeError:  # not a module (sys.modules may hold anything)
            continue
        for name, value in list(names.items()):
            hit = wrappers.get(id(value))
            if hit is not None and value is hit[0]:
                names[name] = hit[1]


def _run_script(path: str, script_args: tuple[str, ...], hooks: _Hooks) -> dict:
    """Run the script under ``hooks``; return what mlprof.parser saw.

    The script runs in :func:`~mlprof.model.sandbox.script_sandbox` (``turnkeyml.parser`` is
    mlprof's parser, no network); errors that mean a missing network or package raise
    :class:`~mlprof.errors.MeasurementFailed` with status ``needs-network`` / ``needs-package``.
    """

    seen: dict[str, Any] = {}
    orig_parse = parser.parse

    def parse(names, argv=None):
        values = orig_parse(names, argv)
        seen.update(zip(names, values, strict=True))
        return values

    parser.parse = parse
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [path, *script_args]
    sys.path.insert(0, os.path.dirname(path))
    hooks.install()
    sandbox = script_sandbox()
    guard = sandbox.__enter__()
    try:
        runpy.run_path(path, run_name="__main__")
    except _Stop:
        pass
    except SystemExit as e:
        if e.code not in (None, 0):
            raise classify(e, path, guard) or MLProfError(
                f"the script exited with code {e.code}", path) from None
    except MLProfError:
        raise
    except Exception as e:
        raise classify(e, path, guard) or MLProfError(
            f"the script raised {type(e).__name__}: {e}", path) from None
    finally:
        sandbox.__exit__(None, None, None)
        hooks.uninstall()
        sys.argv, sys.path[:] = old_argv, old_path
        parser.parse = orig_parse
    return seen


def batch_flags(items: list[tuple[str, Any]], batch_size: int | None) -> list[bool]:
    """Which inputs carry the batch dimension (see the module docstring)."""
    infos = [_tensor_info(v) for _, v in items]
    if batch_size is not None:
        return [bool(i and i["shape"] and i["shape"][0] == batch_size) for i in infos]
    firsts = {i["shape"][0] for i in infos if i and len(i["shape"]) >= 2}
    if len(firsts) == 1:
        (b,) = firsts
        return [bool(i and len(i["shape"]) >= 2 and i["shape"][0] == b) for i in infos]
    return [False] * len(items)


def discover(path: str, script_args: tuple[str, ...] = (), max_depth: int = 0,
             progress: Any = None) -> dict:
    """Run ``path`` and return its manifest: the models it calls (see the module docstring)."""
    import torch

    from mlprof.progress import Progress

    path = os.path.abspath(path)
    # a FIFO, a device or an undecodable file is one line here, before the script runs
    ingest.read_source(path)
    # one thread: on a busy 2-core machine, 2 threads made a batch-1 Linear 500x slower
    torch.set_num_threads(1)
    labels = read_labels(path)
    hooks = _Hooks(path, max_depth=max_depth)
    with Progress(progress) as rep:  # a slow script still says what it does
        rep.phase("running the script")
        seen = _run_script(path, tuple(script_args), hooks)
    batch_size = seen.get("batch_size")
    models: dict[str, dict] = {}
    parts = _parts_called_alone(list(hooks.records.values()))
    for rec in hooks.records.values():
        if id(rec) in parts:
            continue
        mod = rec.module
        hsh = rec.hash
        if hsh in models:  # the same architecture on the same shapes: one model
            models[hsh]["calls"] += rec.calls
            continue
        items = bind_inputs(mod, rec.args, rec.kwargs)
        flags = batch_flags(items, batch_size)
        inputs = []
        for (name, value), batched in zip(items, flags, strict=True):
            info = _tensor_info(value)
            entry = {"name": name, "tensor": info is not None}
            if info is not None:
                entry.update(shape=info["shape"], dtype=info["dtype"], batched=batched)
            else:
                entry.update(value=repr(value)[:200])
            inputs.append(entry)
        n_params = sum(p.numel() for p in mod.parameters())
        size = sum(p.numel() * p.element_size() for p in mod.parameters())
        size += sum(b.numel() * b.element_size() for b in mod.buffers())
        cls = type(mod)
        models[hsh] = {
            "hash": hsh,
            "class": f"{cls.__module__}.{cls.__qualname__}",
            "file": rec.created[0] if rec.created else None,
            "line": rec.created[1] if rec.created else None,
            "depth": rec.depth,
            "parameters": int(n_params),
            "size_bytes": int(size),
            "inputs": inputs,
            "batched": any(flags),
            "calls": rec.calls,
        }
    if not models:
        raise MLProfError("no torch.nn.Module is called in this script (run with the same "
                          "--script-args to check it works standalone)", path)
    ordered = sorted(models.values(), key=lambda m: (m["depth"], m["line"] or 0, m["hash"]))
    return {
        "script": path,
        "script_sha256": script_hash(path),
        "script_args": list(script_args),
        "max_depth": max_depth,
        "labels": labels,
        "batch_size": batch_size,
        "parsed": {k: v for k, v in seen.items()},
        "torch_version": str(torch.__version__),
        "models": ordered,
    }


#: imported by the discovery's process once it has sent the manifest, while it waits for the
#: export that runs in it next (see mlprof.tasks.export.ExportOnnx): 20-35 ms there
discover.imports_next = ("torch.onnx",)  # type: ignore[attr-defined]


def _parts_called_alone(records: list[_Record]) -> set[int]:
    """The ids of the depth-0 records whose module is a part of another called model.

    Models often call a part of themselves while they are built, before it is attached to
    them: torchvision's SSD runs its backbone on a dummy image to learn its output channels,
    wav2vec2-like models and timm's hybrid ViTs do the same. Called from the script's code,
    such a part looks like a model of its own; it is not one the script calls (TurnkeyML's
    corpus has ten such scripts), so it is left out. Measured: a few ms for a model of 800
    modules.
    """
    top = [r for r in records if r.depth == 0]
    if len(top) < 2:
        return set()
    inside: set[int] = set()
    for r in top:
        subs = {id(m) for m in r.module.modules()} - {id(r.module)}
        inside |= subs
    return {id(r) for r in top if id(r.module) in inside}


def select(manifest: dict, hashes: tuple[str, ...] = (), single: bool = False) -> list[dict]:
    """The manifest's models with ``hashes`` (all if none); ``single`` demands exactly one."""
    models = manifest["models"]
    if hashes:
        known = {m["hash"]: m for m in models}
        missing = [h for h in hashes if h not in known]
        if missing:
            raise MLProfError(f"no model with hash {', '.join(missing)} in the script; it has "
                              f"{_listing(models)}", manifest["script"], "--model-file")
        models = [known[h] for h in hashes]
    if single and len(models) != 1:
        raise MLProfError(f"the script has {len(models)} models, pick one with "
                          f"'{os.path.basename(manifest['script'])}::HASH': {_listing(models)}",
                          manifest["script"], "--model-file")
    return models


def _listing(models: list[dict]) -> str:
    return "; ".join(f"{m['hash']} ({m['class'].rsplit('.', 1)[-1]}, line {m['line']})"
                     for m in models)


def capture(path: str, want: str, script_args: tuple[str, ...] = (),
            max_depth: int = 0) -> tuple[Any, list[tuple[str, Any]], list[bool]]:
    """Run the script until the model with hash ``want`` is first called.

    Returns the module, its inputs as (name, value) in forward()'s order, and which of them
    carry the batch dimension.
    """
    hooks = _Hooks(os.path.abspath(path), max_depth=max_depth, want=want)
    seen = _run_script(os.path.abspath(path), tuple(script_args), hooks)
    if hooks.captured is None:
        raise MLProfError(f"model {want} was not called when the script ran again (different "
                          "--script-args, or a script that is not deterministic?)", path,
                          "--model-file")
    mod, args, kwargs = hooks.captured
    items = normal_tensors(mod, bind_inputs(mod, args, kwargs))
    return mod, items, batch_flags(items, seen.get("batch_size"))


def normal_tensors(module: Any, items: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Make the captured model and inputs normal tensors; returns the inputs (the module is
    changed in place).

    A script that builds, feeds or calls its model under ``torch.inference_mode()`` (also as a
    decorator) hands over *inference tensors*: its inputs, and the parameters, buffers and tensor
    attributes of a model built in that mode. They serve inference, but no code that autograd
    records may use them outside inference mode, as the ONNX exporter's tracing does ("Inference
    tensors cannot be saved for backward"). Each is replaced by a copy made outside inference
    mode, which is a normal tensor; a tensor held in several places (tied weights) stays one.
    Inputs in lists, tuples and dicts are copied too; normal tensors are left alone.
    """
    import torch

    copies: dict[int, tuple[Any, Any]] = {}  # id -> (original, kept alive; copy)

    def normal(value: Any) -> Any:
        if type(value) in (list, tuple):
            return type(value)(normal(v) for v in value)
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
            return type(value)(*(normal(v) for v in value))
        if type(value) is dict:
            return {k: normal(v) for k, v in value.items()}
        if not isinstance(value, torch.Tensor) or not value.is_inference():
            return value
        if id(value) not in copies:
            with torch.inference_mode(False), torch.no_grad():
                copy = value.clone()
            if isinstance(value, torch.nn.Parameter):
                copy = torch.nn.Parameter(copy, requires_grad=value.requires_grad)
            copies[id(value)] = (value, copy)
        return copies[id(value)][1]

    for mod in module.modules():
        for table in (mod._parameters, mod._buffers):
            for name, value in table.items():
                if value is not None:
                    table[name] = normal(value)
        for name, value in list(vars(mod).items()):  # plain tensor attributes
            if isinstance(value, torch.Tensor):
                object.__setattr__(mod, name, normal(value))
    return [(name, normal(value)) for name, value in items]


def resize_batch(value: Any, batch_size: int) -> Any:
    """``value`` (a tensor whose first dimension is the batch) tiled/cut to ``batch_size``."""
    import torch

    b0 = value.shape[0]
    if b0 == batch_size:
        return value
    reps = -(-batch_size // b0)
    return torch.cat([value] * reps, dim=0)[:batch_size].contiguous()
