"""Shared loop of the hostile zoo: a p10/1 bot that plays the greedy strategy, with hooks
where each zoo bot misbehaves. Standard library plus `harness.players` only.

A zoo bot is `python tests/zoo/<name>.py`; Python puts this folder on `sys.path`, so
`import _zoo` works from any working directory.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable

from harness.players import GreedyStrategy

Hook = Callable[[dict[str, Any], int], "dict[str, Any] | None"]


def log(text: str) -> None:
    """A line on stderr (the bot's log)."""
    try:
        sys.stderr.write(f"[zoo {os.path.basename(sys.argv[0])}] {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def send(obj: Any) -> None:
    """One JSON line on stdout."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def sleep_forever() -> None:
    """Never return (and never read stdin again)."""
    while True:
        time.sleep(3600)


def serve(on_request: Hook | None = None, on_hello: Callable[[dict[str, Any]], None] | None = None,
          on_game_start: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Answer hello, play greedy; `on_request(msg, n)` (n = requests seen by this process,
    from 1) may act and return the reply to send instead (None: play greedy)."""
    strategy = GreedyStrategy()
    n = 0
    for raw in sys.stdin:
        if not raw.strip():
            continue
        msg = json.loads(raw)
        kind = msg.get("type")
        if kind == "hello":
            if on_hello:
                on_hello(msg)
            send({"type": "hello", "name": os.path.basename(sys.argv[0]), "version": "zoo"})
        elif kind == "game_start":
            strategy.new_game(msg.get("game", ""), msg.get("seat", 0))
            if on_game_start:
                on_game_start(msg)
        elif kind == "request":
            n += 1
            reply = on_request(msg, n) if on_request else None
            if reply is None:
                reply = strategy.decide(msg["state"], msg["decision"], msg.get("options"))
                reply["id"] = msg["id"]
            send(reply)
        elif kind == "bye":
            return
