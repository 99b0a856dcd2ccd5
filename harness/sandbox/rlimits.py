"""Resource limits that a bot cannot raise: each one's hard limit lowered to its soft limit.

A process may raise its soft limit up to its hard limit, and only a process with
CAP_SYS_RESOURCE (root, outside a user namespace) may raise a hard limit. Systems leave
some hard limits open (`RLIMIT_CORE` and `RLIMIT_STACK` are unlimited on most), so a bot
started with only the limits the harness sets could raise those. `pin` runs in a bot's
first process (and a build's) just before its command, after the harness's own limits
are set, and closes every limit the kernel knows, including those Python has no name for
(`RLIMIT_LOCKS`).
"""

from __future__ import annotations

import resource


def known() -> dict[int, str]:
    """Every resource limit of this kernel as Python numbers it: {number: name}, with
    "RLIMIT_<n>" for a number Python has no name for (on Linux: 0 to 15)."""
    names = {getattr(resource, n): n for n in dir(resource) if n.startswith("RLIMIT_") and n != "RLIMIT_OFILE"}
    out: dict[int, str] = {}
    for which in range(64):
        try:
            resource.getrlimit(which)
        except (ValueError, OSError):
            break  # past the last one Python was built to know
        out[which] = names.get(which, f"RLIMIT_{which}")
    return out


def pin() -> None:
    """Lower the hard limit of every resource limit of this process to its soft limit
    (runs in the child, before exec; what cannot be set is left as it is)."""
    for which in known():
        try:
            soft, hard = resource.getrlimit(which)
            if soft != hard:
                resource.setrlimit(which, (soft, soft))
        except (ValueError, OSError):
            pass
