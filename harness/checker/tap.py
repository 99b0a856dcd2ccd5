"""A bot process that keeps a transcript of every line both ways, so a failed check can
show the exchange that failed."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..referee import BotDied, BotProcess, BotSpec, BotTimeout, LineTooLong

MAX_KEPT = 1 << 16  # characters of one line kept in the transcript


@dataclass
class Entry:
    """One transcript line: `dir` is "to" (referee → bot), "from" (bot → referee) or
    "note" (what happened, in words); `t` is time.monotonic()."""

    dir: str
    t: float
    text: str
    msg: Any = field(default=None, repr=False)  # the parsed JSON, if it parsed

    @property
    def type(self) -> str | None:
        """The message's `type` field (None for replies and notes)."""
        return self.msg.get("type") if isinstance(self.msg, dict) else None

    def to_dict(self, t0: float) -> dict[str, Any]:
        """JSON form: times in seconds since `t0`."""
        return {"dir": self.dir, "t": round(self.t - t0, 4), "text": self.text}


def _entry(direction: str, data: bytes) -> Entry:
    line = data.rstrip(b"\n")
    text = line[:MAX_KEPT].decode("utf-8", "replace")
    try:
        msg = orjson.loads(line)
    except orjson.JSONDecodeError:
        msg = None
    return Entry(direction, time.monotonic(), text, msg)


class TappedProcess(BotProcess):
    """A `BotProcess` that appends every line sent and read, and every timeout, death and
    over-long line, to `tap`."""

    def __init__(self, spec: BotSpec, tap: list[Entry], **kw: Any) -> None:
        super().__init__(spec, **kw)
        self.tap = tap

    def note(self, text: str) -> None:
        """Add a note to the transcript."""
        self.tap.append(Entry("note", time.monotonic(), text))

    def start(self) -> None:
        super().start()
        self.note(f"process started (pid {self.pid})")

    def stop(self, grace: float = 0.5) -> int | None:
        running = self.proc is not None and self.proc.poll() is None
        code = super().stop(grace)
        if code is not None:
            self.note(f"process {'stopped' if running else 'had ended'} (exit code {code})")
        return code

    def send(self, data: bytes) -> None:
        self.tap.append(_entry("to", data))
        try:
            super().send(data)
        except BotDied as e:
            self.note(f"could not send: {e}")
            raise

    def read_line(self, deadline: float) -> bytes:
        waited_from = self._last_sent()
        try:
            line = super().read_line(deadline)
        except BotTimeout:
            ms = round((time.monotonic() - waited_from) * 1000)
            self.note(f"no reply within {ms} ms")
            raise
        except LineTooLong as e:
            self.note(f"over-long line: {e}")
            raise
        except BotDied as e:
            self.note(f"the bot is gone: {e}")
            raise
        self.tap.append(_entry("from", line))
        return line

    def _last_sent(self) -> float:
        for e in reversed(self.tap):
            if e.dir == "to":
                return e.t
        return time.monotonic()
