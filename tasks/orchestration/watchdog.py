"""Prefect's temporary API server dies with the run that started it, even when that run is killed
with SIGKILL and has no chance to stop it.

Prefect starts the server (uvicorn) as a child process and stops it from an exit hook, which a
killed process never runs; the server then lives on, re-parented to init. :func:`stop_with_parent`
starts a watchdog beside it: a bare Python process (no site packages, a few MB) that polls five
times a second. When its parent (the run) is gone, which it sees as a changed parent pid, it sends
the server SIGTERM, then SIGKILL after five seconds, and exits; it also exits once the server is
gone. It ignores SIGINT, so a Ctrl-C to the terminal's process group leaves the stopping to the
run's own handler (which stops every child, the watchdog included). POSIX only: elsewhere it is
not started.
"""

from __future__ import annotations

import os
import subprocess
import sys

_WATCH = """
import os, signal, sys, time
parent, server = int(sys.argv[1]), int(sys.argv[2])
signal.signal(signal.SIGINT, signal.SIG_IGN)

def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (stopped, not yet reaped) counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True

while alive(server):
    if os.getppid() != parent:
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
            try:
                os.kill(server, sig)
            except ProcessLookupError:
                break
            end = time.monotonic() + wait
            while alive(server) and time.monotonic() < end:
                time.sleep(0.1)
            if not alive(server):
                break
        break
    time.sleep(0.2)
"""


_WATCHED: dict[int, subprocess.Popen] = {}


def stop_with_parent(server_pid: int) -> subprocess.Popen | None:
    """Start the watchdog for ``server_pid`` (this process is the parent it watches), once per server."""
    if os.name != "posix":
        return None
    if server_pid in _WATCHED and _WATCHED[server_pid].poll() is None:
        return _WATCHED[server_pid]
    _WATCHED[server_pid] = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCH, str(os.getpid()), str(server_pid)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            close_fds=True)
    return _WATCHED[server_pid]
