"""The check-bot report for people: one line per check, the failing exchange, a summary."""

from __future__ import annotations

import json
import click

from ..text import printable
from .context import brief
from .runner import CheckResult, Report
from .tap import Entry

LINE_CAP = 600

_STYLE = {"pass": ("PASS", "green"), "fail": ("FAIL", "red"), "skip": ("SKIP", "yellow"), "error": ("ERROR", "magenta")}


def _clip(text: str, cap: int = LINE_CAP) -> str:
    return text if len(text) <= cap else text[:cap] + f" … ({len(text) - cap} more characters; --json shows all)"


def entry_line(e: Entry) -> str:
    """One transcript line: → to the bot, ← from the bot, · a note."""
    if e.dir == "note":
        return f"  · {printable(e.text)}"
    arrow = "→ bot" if e.dir == "to" else "← bot"
    text = e.text
    if e.dir == "to" and e.type == "request":
        text = json.dumps(brief(e.msg), separators=(",", ":"))
    return f"  {arrow}  {printable(_clip(text))}"  # the bot's words move no cursor


def result_lines(r: CheckResult, color: bool = True) -> list[str]:
    """The lines of one check in the text report."""
    word, fg = _STYLE[r.status]
    tag = click.style(f"{word:<5}", fg=fg, bold=True) if color else f"{word:<5}"
    out = [f"{tag} {r.name:<14} {r.title}"]
    if r.message:
        body = r.message.rstrip().splitlines()
        indent = " " * 6
        out.extend(f"{indent}{printable(line)}" for line in body)
    if r.exchange and r.status != "pass":
        out.append("      the exchange (→ to the bot, ← from the bot; requests shortened):")
        out.extend("    " + entry_line(e) for e in r.exchange)
    return out


def header(command: list[str], move_ms: int) -> str:
    """The first line of the report."""
    import shlex

    return f"check-bot: {shlex.join(command)}  (move_ms {move_ms})"


def summary(report: Report, color: bool = True) -> str:
    """The last line: counts and time."""
    c = report.counts()
    parts = [f"{c['pass']} passed"]
    for k, word in (("fail", "failed"), ("skip", "skipped"), ("error", "check-bot errors")):
        if c[k]:
            parts.append(f"{c[k]} {word}")
    text = f"{len(report.results)} checks: {', '.join(parts)} in {report.duration_s:.1f} s"
    if report.schemas != "protocol/schemas":
        text += f" (schemas {report.schemas})"
    if not color:
        return text
    return click.style(text, fg="green" if report.ok else "red", bold=True)


def to_json(report: Report) -> str:
    """The --json report."""
    return json.dumps(report.to_dict(), indent=1)


__all__ = ["entry_line", "result_lines", "header", "summary", "to_json"]
