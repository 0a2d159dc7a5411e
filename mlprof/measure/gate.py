"""The gate of a measurement server started early: preloaded between the light libraries and
the runtimes (:func:`mlprof.measure.forkserver.start_early`).

``law run`` of a model script starts the server before law has even been imported, so that its
light imports (:mod:`mlprof.measure.child_light`, 0.2 s) overlap with law's own start-up
(0.3 s). Whether the command line is good is known only later, so the server stops here, before
onnxruntime and torch, until the run asks for it: ``GO`` (SIGUSR1) from the process that started
it, sent where a server would otherwise have been started (:func:`mlprof.measure.forkserver
.release_early`): a task construction that discovers the script, or luigi's scheduling at the
first task it finds incomplete (:func:`mlprof.tasks.framework.hooks._prestart_after_checks`). A
bad parameter, an unknown task or a rerun with nothing to do never sends it: the server
leaves when that process has exited (checked every 50 ms), having imported no runtime.

``GO`` is blocked in the server from its start (the starting process blocks it around the
spawn and the mask is inherited through ``exec``), so a ``GO`` sent before this module waits
stays pending instead of killing the server (SIGUSR1's default action). After the gate the
server ignores ``GO`` (a second one is harmless); its measurement children restore the
default (:func:`mlprof.measure.isolate._worker_main`).
"""

from __future__ import annotations

import os
import signal

#: the starting process's pid, in the gated server's environment only
GATE_ENV = "MLP_SERVER_GATE"
#: the signal that opens the gate
GO = signal.SIGUSR1
#: how often the gate looks whether the starting process is gone, in seconds
POLL_S = 0.05


def wait() -> None:
    """In the server, while it preloads: return once ``GO`` has arrived; exit (status 0, no
    clean-up: there is nothing to clean) when the starting process is gone first."""
    value = os.environ.pop(GATE_ENV, None)
    if value is None:
        return  # not started behind a gate
    starter = int(value)
    signal.pthread_sigmask(signal.SIG_BLOCK, {GO})
    while signal.sigtimedwait({GO}, POLL_S) is None:
        if os.getppid() != starter:
            os._exit(0)
    signal.signal(GO, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {GO})


wait()
