"""progress.json: a run's state for `p10-tourney serve`, and its heartbeat.

The runner tells `Heartbeat` its state (games done, total, running) as games land; a
thread writes it again, with a fresh ``updated`` time, every ``heartbeat_s`` seconds while
the run lives. A run that died without a word (``kill -9``, the machine lost) stops the
heartbeat, so a reader that finds ``running`` with an ``updated`` older than
`stale_after(heartbeat_s)` knows the run is gone and since when (`run_state`).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from ..report.files import write_whole

HEARTBEAT_S = 5.0
"""Seconds between two heartbeats of a run, by default (`run --heartbeat`)."""


def stale_after(heartbeat_s: float) -> float:
    """Seconds without a heartbeat after which a run counts as gone: three beats missed,
    and two seconds for a loaded machine (17 s by default)."""
    return 3 * heartbeat_s + 2.0


def run_state(progress: Mapping[str, Any], now: float | None = None) -> dict[str, Any]:
    """What a reader of progress.json `progress` may say of the run at `now` (time.time()):
    ``state`` "playing", "stopped" (no heartbeat: the run is gone), "finished" or "idle"
    (no run yet), with ``since`` (the last heartbeat, Unix seconds) and ``silent_s``."""
    now = time.time() if now is None else now
    updated = progress.get("updated")
    if not isinstance(updated, (int, float)) or isinstance(updated, bool):
        return {"state": "idle", "since": None, "silent_s": None}
    every = progress.get("heartbeat_s")
    every = float(every) if isinstance(every, (int, float)) and not isinstance(every, bool) and every > 0 \
        else HEARTBEAT_S
    silent = max(0.0, now - float(updated))
    if progress.get("running"):
        state = "stopped" if silent > stale_after(every) else "playing"
    else:
        state = "finished"
    return {"state": state, "since": float(updated), "silent_s": round(silent, 1)}


class Heartbeat:
    """Writes `path` (progress.json) when the state changes (at most twice a second unless
    forced) and every `every` seconds from a thread, until `stop`."""

    def __init__(self, path: Path, every: float = HEARTBEAT_S) -> None:
        if not every > 0:
            raise ValueError(f"heartbeat interval must be > 0 seconds, got {every}")
        self.path = Path(path)
        self.every = float(every)
        self.state: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.shown = 0.0
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    def _write(self) -> None:
        with self.lock:
            body = dict(self.state, heartbeat_s=self.every, updated=round(time.time(), 3))
            write_whole(self.path, json.dumps(body) + "\n")

    def set(self, state: Mapping[str, Any], force: bool = False) -> None:
        """The run's state now; written at once if forced or half a second after the last."""
        now = time.monotonic()
        self.state = dict(state)
        if force or now - self.shown >= 0.5:
            self.shown = now
            self._write()

    def _beat(self) -> None:
        while not self.done.wait(self.every):
            if self.state.get("running"):
                self._write()

    def start(self) -> "Heartbeat":
        """Start the thread (a daemon: it dies with the run)."""
        self.thread = threading.Thread(target=self._beat, name="p10-heartbeat", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread (the last state written stays)."""
        self.done.set()
        if self.thread is not None:
            self.thread.join()
