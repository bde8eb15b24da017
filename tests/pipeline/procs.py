"""Process helpers of the fault and cluster tests (Linux /proc; no psutil): find the
processes a test started - and only those - to kill or stop them."""
from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(ppid, pgid, sid) of ``pid``, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[2]), int(fields[3])


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def alive(pid: int) -> bool:
    st = Path(f"/proc/{pid}/status")
    try:
        return "State:\tZ" not in st.read_text()
    except OSError:
        return False


def descendants(root: int) -> list[int]:
    """Every live process whose parent chain reaches ``root``."""
    parent = {}
    for pid in _pids():
        s = _stat(pid)
        if s is not None:
            parent[pid] = s[0]
    out = []
    for pid in parent:
        p, seen = parent.get(pid), 0
        while p and p != 1 and seen < 64:
            if p == root:
                out.append(pid)
                break
            p, seen = parent.get(p), seen + 1
    return [p for p in out if alive(p)]


def in_session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (a child started with start_new_session)."""
    out = []
    for pid in _pids():
        s = _stat(pid)
        if s is not None and s[2] == sid and alive(pid):
            out.append(pid)
    return out


def ray_task_workers(root: int, func: str = "simulate_run") -> list[int]:
    """Ray workers under ``root`` that are executing ``func`` right now (Ray sets the
    process title to ``ray::<function>`` while a task runs, ``ray::IDLE`` between)."""
    return [p for p in descendants(root) if cmdline(p).startswith(f"ray::{func}")]


def kill_all(pids, sig=signal.SIGKILL) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            pass


def stop_session(sid: int, grace_s: float = 3.0) -> list[int]:
    """SIGTERM every process of session ``sid``, SIGKILL what is left after
    ``grace_s``; returns the pids that needed SIGKILL."""
    kill_all(in_session(sid), signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and in_session(sid):
        time.sleep(0.2)
    left = in_session(sid)
    kill_all(left, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and in_session(sid):
        time.sleep(0.1)
    return left


def free_ports(n: int) -> list[int]:
    """``n`` distinct TCP ports that are free right now (kept open until all are found)."""
    socks, ports = [], []
    try:
        while len(ports) < n:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def wait_for(cond, timeout_s: float, step_s: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step_s)
    raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")
