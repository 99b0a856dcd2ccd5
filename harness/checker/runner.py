"""Run the conformance suite against one bot command and collect a report."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .checks import CHECKS, Check
from .context import CheckFailed, CheckNotExercised, Context
from ..referee import DEFAULT_MOVE_MS
from ..sandbox.box import Sandbox
from .tap import Entry

NAMES = tuple(c.name for c in CHECKS)


@dataclass
class CheckResult:
    """One check's outcome. `status` is "pass", "fail", "skip" (not run: the handshake
    failed; or run, but what it looks at never happened) or "error" (check-bot itself
    failed; not the bot's fault)."""

    name: str
    title: str
    status: str
    message: str
    exchange: list[Entry] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def passed(self) -> bool:
        """True if the check passed."""
        return self.status == "pass"


@dataclass
class Report:
    """The outcome of a whole run."""

    command: list[str]
    move_ms: int
    startup_ms: int
    results: list[CheckResult]
    duration_s: float
    schemas: str
    t0: float = 0.0

    @property
    def ok(self) -> bool:
        """True if no check failed (a check is skipped only after one failed, the handshake,
        or where the bot never did what it looks at)."""
        return all(r.status in ("pass", "skip") for r in self.results)

    @property
    def exit_code(self) -> int:
        """0: no check failed; 1: a check failed; 2: check-bot itself failed."""
        if any(r.status == "error" for r in self.results):
            return 2
        return 0 if self.ok else 1

    def counts(self) -> dict[str, int]:
        """How many checks per status."""
        out = {"pass": 0, "fail": 0, "skip": 0, "error": 0}
        for r in self.results:
            out[r.status] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """The --json form."""
        return {
            "command": self.command,
            "ok": self.ok,
            "exit_code": self.exit_code,
            "move_ms": self.move_ms,
            "startup_ms": self.startup_ms,
            "schemas": self.schemas,
            "duration_s": round(self.duration_s, 3),
            "summary": self.counts(),
            "checks": [
                {"name": r.name, "title": r.title, "status": r.status, "passed": r.passed, "message": r.message,
                 "duration_s": round(r.duration_s, 3), "exchange": [e.to_dict(self.t0) for e in r.exchange]}
                for r in self.results
            ],
        }


def select(only: Sequence[str] | None) -> list[Check]:
    """The checks to run: all, or those named in `only` (the handshake always runs first).
    Raises ValueError for an unknown name."""
    names = [n.strip() for item in (only or ()) for n in item.split(",") if n.strip()]
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise ValueError(f"no check named {', '.join(map(repr, unknown))}; the checks are: {', '.join(NAMES)}")
    return [c for c in CHECKS if not names or c.name in names or c.name == "handshake"]


def run_checks(
    argv: Sequence[str],
    move_ms: int = DEFAULT_MOVE_MS,
    startup_ms: int = 10000,
    only: Sequence[str] | None = None,
    cwd: str | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    sandbox: Sandbox | None = None,
) -> Report:
    """Run the suite (or the checks in `only`) against the bot started by `argv`, contained
    as `sandbox` says (default: auto; its greedy opponents run in the same mode)."""
    checks = select(only)
    ctx = Context(argv, move_ms=move_ms, startup_ms=startup_ms, cwd=cwd, sandbox=sandbox)
    results: list[CheckResult] = []
    t0 = time.monotonic()
    try:
        for check in checks:
            t = time.monotonic()
            if check.name != "handshake" and not ctx.handshake_ok:
                result = CheckResult(check.name, check.title, "skip", "not run: the handshake failed")
            else:
                try:
                    result = CheckResult(check.name, check.title, "pass", check.run(ctx))
                except CheckFailed as e:
                    result = CheckResult(check.name, check.title, "fail", e.message, e.exchange)
                except CheckNotExercised as e:
                    result = CheckResult(check.name, check.title, "skip", str(e))
                except Exception as e:  # noqa: BLE001 - a bug of check-bot, reported as such
                    tb = traceback.format_exc(limit=4)
                    result = CheckResult(check.name, check.title, "error",
                                         f"check-bot itself failed ({type(e).__name__}: {e}); this is not the "
                                         f"bot's fault. Please report it.\n{tb}")
            result.duration_s = time.monotonic() - t
            results.append(result)
            if on_result:
                on_result(result)
    finally:
        ctx.close()
    schemas = "protocol/schemas" if ctx.schemas.available else f"not checked: {ctx.schemas.why_not}"
    return Report(list(argv), move_ms, startup_ms, results, time.monotonic() - t0, schemas, ctx.t0)
