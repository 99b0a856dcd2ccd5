"""What a bot process did wrong, as exceptions (one per kind of fault), and a death in
words: its exit code, the last line of its stderr, and the limit it probably ran into."""

from __future__ import annotations

import signal
from typing import Callable

from ..model import FaultKind
from ..text import printable
from .spec import Limits


def stderr_gist(stderr_tail: bytes, redact: Callable[[str], str] | None = None) -> str:
    """The line of a bot's last stderr output that says what went wrong: the last one
    naming an error or exception, else the last line (a runtime such as Node ends with
    its version after the error). `redact` (a `Redactor`'s `text`) masks the host's
    secrets and folders in the whole tail first, before anything is cut."""
    text = stderr_tail.decode("utf-8", "replace")
    lines = [t.strip() for t in (redact(text) if redact else text).splitlines() if t.strip()]
    if not lines:
        return ""
    return printable(next((t for t in reversed(lines) if "rror" in t or "xception" in t), lines[-1]))[:200]


class BotError(Exception):
    """Something a bot process did wrong; `kind` is the fault it counts as."""

    kind = FaultKind.CRASH


class BotTimeout(BotError):
    """No reply within the time allowed."""

    kind = FaultKind.TIMEOUT


class BotDied(BotError):
    """The process exited or closed its stdout."""

    kind = FaultKind.CRASH


class LineTooLong(BotError):
    """A line longer than the cap: a protocol fault."""

    kind = FaultKind.MALFORMED


class BotStartError(BotError):
    """The process could not be started or did not complete the handshake."""

    kind = FaultKind.STARTUP


class LimitExceeded(BotDied):
    """The bot's processes went over a resource limit; the watchdog ended them."""

    kind = FaultKind.CRASH



# How runtimes say they ran out of memory (Python, C/C++, Node, the JVM, Go, Rust, libc).
MEMORY_WORDS = ("MemoryError", "out of memory", "Out of memory", "bad_alloc", "Cannot allocate memory",
                "heap limit", "OutOfMemoryError", "cannot allocate", "Could not reserve enough space",
                "memory allocation of", "Insufficient memory", "insufficient memory", "failed to reserve",
                "JavaScript heap", "There is insufficient memory")
_MEMORY_WORDS = MEMORY_WORDS


def says_out_of_memory(text: str) -> bool:
    """Whether a runtime's own words (stdout or stderr) say it ran out of memory."""
    return any(w in text for w in MEMORY_WORDS)


def memory_limit_text(limits: Limits) -> str:
    """The fault reason's words for the memory limit: "memory limit of 512 MB reached"."""
    return f"memory limit of {limits.memory_mb} MB reached"


def describe_exit(code: int, limits: Limits, stderr_tail: bytes = b"", limit_hit: str | None = None,
                  memory_known: bool = False, redact: Callable[[str], str] | None = None) -> str:
    """An exit code in words ("exit code 1", "killed by SIGXCPU"), the last line of stderr,
    and the limit the process ran into: `limit_hit` when the kernel said so (a cgroup's
    counters), else the limit it probably ran into."""
    tail = stderr_gist(stderr_tail, redact)
    if limit_hit is not None and code != 0:
        text = f"{limit_hit} ({'exit code ' + str(code) if code >= 0 else _signame(-code)})"
        if tail:
            text += f"; its stderr says: {tail}"
        return text
    if code < 0:
        text = _signame(-code)
        if -code == getattr(signal, "SIGXCPU", -1):
            text += f": its CPU time limit ({limits.cpu_s} s per game) was reached" if limits.cpu_s else ""
        elif -code == signal.SIGKILL and limits.cpu_s and memory_known:
            # Not the memory cgroup (it counts its kills): RLIMIT_CPU, whose hard limit
            # (= the soft one) the kernel enforces with SIGKILL.
            text += f": its CPU time limit ({limits.cpu_s} s per game) was reached"
        elif limits.memory_mb and -code in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
            text += f" (perhaps at its memory limit of {limits.memory_mb} MiB"
            text += f" or its CPU time limit of {limits.cpu_s} s per game)" if limits.cpu_s and -code == signal.SIGKILL else ")"
    else:
        text = f"exit code {code}"
    if tail:
        text += f"; its stderr says: {tail}"
        if limits.memory_mb and says_out_of_memory(tail):
            text = f"{memory_limit_text(limits)}: {text}"
    return text


def _signame(sig: int) -> str:
    try:
        return f"killed by {signal.Signals(sig).name}"
    except ValueError:
        return f"killed by signal {sig}"

