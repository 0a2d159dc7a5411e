"""What a model script finds while mlprof runs it: TurnkeyML's parser, and no network.

:func:`script_sandbox` is entered around a model script (discovery, export, torch measurement;
always in a child process of :func:`~mlprof.measure.isolate.run_isolated`):

- ``turnkeyml`` and ``turnkeyml.parser`` import as mlprof's parser (:mod:`mlprof.parser`, same
  parameter names and defaults), unless a real ``turnkeyml`` is importable: the shim's finder
  comes last on ``sys.meta_path``, so TurnkeyML's scripts run unchanged.
- No network: ``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE`` and ``HF_DATASETS_OFFLINE`` are set,
  and name look-ups and connections to hosts other than this machine fail at once
  (:class:`NetworkBlocked`) instead of waiting for a time-out.

How the network is blocked, in two layers (issue 22):

1. **The operating system** (Linux, in a measurement worker of
   :func:`~mlprof.measure.isolate.run_isolated` only): the worker moves into a network
   namespace of its own (``unshare(CLONE_NEWNET)``; as non-root with a user namespace,
   ``CLONE_NEWUSER``, this user mapped to itself) with only the loopback interface, up. This
   blocks everything: ``socket.connect``, name resolution (``getaddrinfo``,
   ``gethostbyname``), ``_socket.socket`` used directly, UDP ``sendto``, ``ctypes`` calls into
   libc and any subprocess (``curl``, ``pip``), which inherits the namespace; the loopback
   interface still works (a script may talk to a server it starts). The namespace lasts for the
   rest of that worker (it ends with the measurement). Measured on the CI machine: root and
   ``nobody`` (``setpriv``) both get it; it is *not* available where the kernel forbids user
   namespaces to non-root users (``kernel.unprivileged_userns_clone=0``, AppArmor's
   ``apparmor_restrict_unprivileged_userns``), in a process that already runs threads (a user
   namespace needs a single thread), or in a container without ``CAP_SYS_ADMIN`` whose seccomp
   profile refuses ``unshare``. :func:`network_isolation` says which one a worker has.
2. **Python** (always, and the only layer outside a worker or where the namespace is not
   available): ``socket.getaddrinfo``, ``gethostbyname``, ``gethostbyname_ex``,
   ``create_connection`` and ``socket.socket``'s ``connect``, ``connect_ex``, ``sendto`` and
   ``sendmsg`` refuse non-local hosts with :class:`NetworkBlocked` (which names the host for
   the ``needs-network`` message). Without the namespace, this layer does **not** block
   ``_socket.socket`` used directly, ``ctypes``/C extensions calling libc's ``connect`` or
   ``getaddrinfo`` (e.g. a native HTTP client), nor subprocesses: a script that uses those
   reaches the network.

:func:`classify` turns what the script raised into a :class:`~mlprof.errors.MeasurementFailed`
with status ``needs-network`` (naming the host, URL or hub repository) or ``needs-package``
(naming the missing package), or None for other errors.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.abc
import importlib.machinery
import importlib.util
import ipaddress
import os
import re
import socket
import sys
import types
from collections.abc import Iterator
from typing import Any

import mlprof.parser as parser
from mlprof.errors import MeasurementFailed

#: hub libraries' offline switches, set while a script runs
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


class NetworkBlocked(ConnectionRefusedError):
    """A script tried to reach another machine while mlprof ran it."""


def _is_local(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host).strip("[]").lower()
    if host in _LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        addr = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return addr.is_loopback or addr.is_unspecified


_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1

#: how this process is cut off from the network: "" (not yet), "namespace" or "python"
_isolation = ""


def network_isolation() -> str:
    """``"namespace"`` when this process runs in a network namespace of its own (everything
    blocked, see the module docstring), ``"python"`` when only the Python layer blocks, ``""``
    when no script ran here yet."""
    return _isolation


def _loopback_up() -> None:
    """Bring up ``lo`` in a fresh network namespace (it starts down: even 127.0.0.1 would be
    unreachable)."""
    import fcntl
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, ifreq))[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter_network_namespace() -> bool:
    """Move this process (for good) into a network namespace of its own with only loopback;
    True when it worked. Only for a disposable process (a measurement worker): there is no way
    back. Root: ``CLONE_NEWNET``; others: with ``CLONE_NEWUSER``, this user and group mapped to
    themselves (files keep their owners)."""
    global _isolation
    if _isolation == "namespace":
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        uid, gid = os.geteuid(), os.getegid()
        flags = _CLONE_NEWNET if uid == 0 else _CLONE_NEWNET | _CLONE_NEWUSER
        if libc.unshare(flags) != 0:
            return False
        if uid != 0:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        _loopback_up()
    except (OSError, AttributeError):
        return False  # the namespace may exist without loopback: local servers then fail
    _isolation = "namespace"
    return True


class _NetworkGuard:
    """Patches ``socket`` so that only local addresses are reachable; remembers the rest."""

    #: what the guard replaces while installed: (owner, attribute)
    _PATCHED = ((socket, "getaddrinfo"), (socket, "create_connection"),
                (socket.socket, "connect"), (socket.socket, "connect_ex"),
                (socket, "gethostbyname"), (socket, "gethostbyname_ex"),
                (socket.socket, "sendto"), (socket.socket, "sendmsg"))

    def __init__(self) -> None:
        self.blocked: list[str] = []

    def _block(self, host: Any, port: Any = None) -> NetworkBlocked:
        where = f"{host}:{port}" if port not in (None, 0, "") else str(host)
        if where not in self.blocked:
            self.blocked.append(where)
        return NetworkBlocked(errno.ECONNREFUSED, f"mlprof: no network while a model script "
                              f"runs (tried to reach {where})")

    def install(self) -> None:
        self._orig = tuple(getattr(owner, name) for owner, name in self._PATCHED)
        (getaddrinfo, create_connection, connect, connect_ex, gethostbyname, gethostbyname_ex,
         sendto, sendmsg) = self._orig
        guard = self

        def guarded_getaddrinfo(host, port, *args, **kwargs):
            if not _is_local(host):
                raise guard._block(host, port)
            return getaddrinfo(host, port, *args, **kwargs)

        def guarded_create_connection(address, *args, **kwargs):
            host, port = address[0], address[1]
            if not _is_local(host):
                raise guard._block(host, port)
            return create_connection(address, *args, **kwargs)

        def _check(sock, address):
            if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple) \
                    and not _is_local(address[0]):
                raise guard._block(address[0], address[1] if len(address) > 1 else None)

        def guarded_connect(sock, address):
            _check(sock, address)
            return connect(sock, address)

        def guarded_connect_ex(sock, address):
            _check(sock, address)
            return connect_ex(sock, address)

        def guarded_gethostbyname(host):
            if not _is_local(host):
                raise guard._block(host)
            return gethostbyname(host)

        def guarded_gethostbyname_ex(host):
            if not _is_local(host):
                raise guard._block(host)
            return gethostbyname_ex(host)

        def guarded_sendto(sock, data, *args):
            # sendto(data, address) or sendto(data, flags, address)
            if args:
                _check(sock, args[-1])
            return sendto(sock, data, *args)

        def guarded_sendmsg(sock, buffers, ancdata=(), flags=0, address=None):
            if address is not None:
                _check(sock, address)
                return sendmsg(sock, buffers, ancdata, flags, address)
            return sendmsg(sock, buffers, ancdata, flags)

        guarded = (guarded_getaddrinfo, guarded_create_connection, guarded_connect,
                   guarded_connect_ex, guarded_gethostbyname, guarded_gethostbyname_ex,
                   guarded_sendto, guarded_sendmsg)
        for (owner, name), function in zip(self._PATCHED, guarded, strict=True):
            setattr(owner, name, function)

    def uninstall(self) -> None:
        for (owner, name), function in zip(self._PATCHED, self._orig, strict=True):
            setattr(owner, name, function)


class _TurnkeyFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``turnkeyml`` and ``turnkeyml.parser`` as mlprof's parser (last on ``sys.meta_path``)."""

    NAMES = ("turnkeyml", "turnkeyml.parser")

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.NAMES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self,
                                              is_package=fullname == "turnkeyml")

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ == "turnkeyml":
            module.__doc__ = "mlprof's stand-in for TurnkeyML (only turnkeyml.parser)"
            return
        module.__doc__ = "mlprof's stand-in for turnkeyml.parser: see mlprof.parser"

        def parse(valid_args, argv=None):
            # looked up at call time: mlprof records what the script asked for
            return parser.parse(valid_args, argv)

        vars(module).update(parse=parse, Arg=parser.Arg, supported_args=parser.ARGS)


def _in_worker() -> bool:
    """Whether this process is a measurement worker (disposable: see
    :func:`enter_network_namespace`)."""
    isolate = sys.modules.get("mlprof.measure.isolate")
    return bool(getattr(isolate, "IN_WORKER", False))


@contextlib.contextmanager
def script_sandbox() -> Iterator[_NetworkGuard]:
    """TurnkeyML's parser and no network while a model script runs (see the module docstring).

    Yields the network guard, whose ``blocked`` lists the hosts the script tried to reach. In a
    measurement worker, the process first enters a network namespace of its own (for good).
    """
    global _isolation
    if not (_in_worker() and enter_network_namespace()) and _isolation != "namespace":
        _isolation = "python"
    finder = None
    if "turnkeyml" not in sys.modules and importlib.util.find_spec("turnkeyml") is None:
        finder = _TurnkeyFinder()
        sys.meta_path.append(finder)
    old_env = {k: os.environ.get(k) for k in OFFLINE_ENV}
    os.environ.update(OFFLINE_ENV)
    # read at import: set it too (Any: a module attribute mypy cannot know)
    hub_consts: Any = sys.modules.get("huggingface_hub.constants")
    old_hub = getattr(hub_consts, "HF_HUB_OFFLINE", None)
    if hub_consts is not None:
        hub_consts.HF_HUB_OFFLINE = True
    guard = _NetworkGuard()
    guard.install()
    try:
        yield guard
    finally:
        guard.uninstall()
        if hub_consts is not None:
            hub_consts.HF_HUB_OFFLINE = old_hub
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if finder is not None:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(finder)
            for name in _TurnkeyFinder.NAMES:
                mod = sys.modules.get(name)
                if mod is not None and isinstance(getattr(mod, "__loader__", None),
                                                  _TurnkeyFinder):
                    del sys.modules[name]


def _no_route(exc: BaseException) -> bool:
    """An error the network namespace gives: no route (ENETUNREACH) or no name server
    (``gaierror`` EAI_AGAIN)."""
    if isinstance(exc, socket.gaierror):
        return exc.errno == socket.EAI_AGAIN
    return isinstance(exc, OSError) and exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling."""
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in out and len(out) < 20:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


_REPO_RE = re.compile(r"['\"`]([\w.-]+/[\w.-]+|[\w.-]+)['\"`]")
_HUB_TEXT = ("offline", "hf_hub_offline", "huggingface.co", "outgoing traffic has been disabled",
             "couldn't connect to", "local_files_only")


def _hub_repo(exc: BaseException) -> str | None:
    """The hub repository id an offline error names, or the one the hub library was asked for
    (a ``repo_id`` in the failed calls' frames), if any."""
    for e in _chain(exc):
        value = getattr(e, "repo_id", None)
        if isinstance(value, str) and value:
            return value
    for e in _chain(exc):
        tb = e.__traceback__
        while tb is not None:
            names = tb.tb_frame.f_locals
            for key in ("repo_id", "path_or_repo_id", "pretrained_model_name_or_path"):
                value = names.get(key)
                if isinstance(value, str) and value and not os.path.exists(value):
                    return value
            tb = tb.tb_next
    for e in _chain(exc):
        text = str(e)
        for m in _REPO_RE.finditer(text):
            cand = m.group(1)
            if "/" in cand and not cand.startswith(("http", ".", "/")) and "huggingface.co" \
                    not in cand:
                return cand
    return None


def classify(exc: BaseException, path: str, guard: _NetworkGuard | None = None
             ) -> MeasurementFailed | None:
    """``needs-network`` or ``needs-package`` for what a script raised; None otherwise."""
    chain = _chain(exc)
    if _isolation == "namespace" and not (guard is not None and guard.blocked) and any(
            _no_route(e) for e in chain):
        return MeasurementFailed("needs-network: the script tried to reach the network (mlprof "
                                 "runs scripts without network: the network namespace refused "
                                 f"it; {type(exc).__name__})", path, status="needs-network")
    if guard is not None and guard.blocked or any(isinstance(e, NetworkBlocked) for e in chain):
        hosts = ", ".join(guard.blocked) if guard is not None and guard.blocked else "a host"
        return MeasurementFailed(f"needs-network: the script tried to reach {hosts} (mlprof "
                                 f"runs scripts without network; {type(exc).__name__})", path,
                                 status="needs-network")
    for e in chain:
        if isinstance(e, ModuleNotFoundError) and e.name:
            top = e.name.split(".")[0]
            try:
                missing = importlib.util.find_spec(top) is None
            except (ImportError, ValueError):
                missing = True
            if missing:
                return MeasurementFailed(f"needs-package: {top} (the script imports "
                                         f"{e.name}, which is not installed)", path,
                                         status="needs-package")
    names = {f"{type(e).__module__}.{type(e).__name__}" for e in chain}
    text = " ".join(str(e) for e in chain).lower()
    hub_error = any(n.startswith("huggingface_hub.") and ("Offline" in n or "LocalEntryNotFound"
                                                          in n) for n in names)
    if hub_error or any(t in text for t in _HUB_TEXT):
        repo = _hub_repo(exc)
        what = f"the hub repository {repo}" if repo else "the Hugging Face hub"
        return MeasurementFailed(f"needs-network: the script loads {what} (mlprof runs "
                                 f"scripts without network; {type(exc).__name__})", path,
                                 status="needs-network")
    return None
