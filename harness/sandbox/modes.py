"""Which containment runs here: whether bubblewrap can make a sandbox, the mode a
configured one resolves to, and what the results record about it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Iterable

from .box import MODES, SANDBOX_GID, SANDBOX_UID, SYSTEM_PATHS, SandboxError

_PROBE: dict[str, tuple[bool, str]] = {}


def bwrap_available() -> tuple[bool, str]:
    """Whether bubblewrap can make a sandbox on this machine, and if not why (cached)."""
    if "bwrap" in _PROBE:
        return _PROBE["bwrap"]
    if not sys.platform.startswith("linux"):
        res = (False, f"bubblewrap needs Linux (this is {sys.platform})")
    elif shutil.which("bwrap") is None:
        res = (False, "bubblewrap is not installed (the 'bwrap' command; Debian/Ubuntu: apt-get install bubblewrap)")
    else:
        argv = ["bwrap", "--unshare-all", "--die-with-parent", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID)]
        argv += system_binds() + ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "true"]
        try:
            p = subprocess.run(argv, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
            err = p.stderr.decode("utf-8", "replace").strip().splitlines()
            res = (p.returncode == 0, "" if p.returncode == 0 else
                   f"bubblewrap cannot make a sandbox here: {err[-1] if err else f'exit code {p.returncode}'}")
        except (OSError, subprocess.TimeoutExpired) as e:
            res = (False, f"bubblewrap cannot make a sandbox here: {e}")
    _PROBE["bwrap"] = res
    return res


def resolve_mode(mode: str) -> str:
    """"bwrap" or "none" for a configured mode; raises `SandboxError` for "bwrap" where
    bubblewrap cannot run."""
    if mode not in MODES:
        raise SandboxError(f"sandbox must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "none":
        return "none"
    ok, why = bwrap_available()
    if ok:
        return "bwrap"
    if mode == "bwrap":
        raise SandboxError(f"sandbox: bwrap was asked for, but {why}")
    return "none"


# ----- the bwrap command line ---------------------------------------------------------------


def system_binds() -> list[str]:
    """Read-only binds of the system's program folders, kept as symlinks where they are
    (a merged-/usr system has /bin -> usr/bin)."""
    out: list[str] = []
    for p in SYSTEM_PATHS:
        if not os.path.lexists(p):
            continue
        if os.path.islink(p):
            if p.count("/") == 1:  # a top-level link such as /lib -> usr/lib
                out += ["--symlink", os.readlink(p), p]
            continue
        if p != "/usr" and p.startswith("/usr/"):
            continue  # inside /usr, bound already
        out += ["--ro-bind", p, p]
    return out


# ----- what a run had -------------------------------------------------------------------------

PER_PROCESS_ONLY = ("memory_mb", "processes")


def describe(modes: Iterable[str], cgroup_kind: str | None, cgroup_why: str = "") -> dict[str, object]:
    """What the results record about containment: {"mode": "bwrap"|"none"|"mixed",
    "cgroups": "v2"|"v1"|None, "per_process_only": [limits], "note": text}."""
    modes = sorted(set(modes)) or ["none"]
    mode = modes[0] if len(modes) == 1 else "mixed"
    per_process = [] if cgroup_kind else list(PER_PROCESS_ONLY)
    notes: list[str] = []
    if mode != "bwrap":
        notes.append("bots ran without a sandbox" if mode == "none" else "some bots ran without a sandbox")
    if per_process:
        notes.append("limits held per process only: " + ", ".join(per_process)
                     + (f" ({cgroup_why})" if cgroup_why else ""))
    return {"mode": mode, "cgroups": cgroup_kind, "per_process_only": per_process, "note": "; ".join(notes)}
