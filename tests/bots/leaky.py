#!/usr/bin/env python3
"""A bot that quotes the value of its environment variable K in its first request, in a
way MODE says, then plays the greedy strategy (for the tests of what is published).

  notjson   a line that is not JSON, the value crossing its 80th byte (a fault quotes 80)
  field     a reply with an unknown field named by the value (a fault quotes 40 characters)
  drawval   a draw reply whose "draw" is the value (a fault quotes it as Python's repr)
  longraw   a line that is not JSON, the value at its 4,090th byte (a replay keeps 4,096)
  environ   its whole environment on stdout, as Python prints a dict
  crash     raises an exception naming the value (its stderr is quoted)
"""

import json
import os
import sys

from harness.players import GreedyStrategy

mode = sys.argv[1]
S = os.environ.get("K", "")
strategy = GreedyStrategy()
n = 0


def send(obj: object = None, raw: str | None = None) -> None:
    sys.stdout.write((raw if raw is not None else json.dumps(obj)) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "name": "leak-" + S, "version": S})
    elif kind == "game_start":
        strategy.new_game(msg.get("game", ""), msg.get("seat", 0))
    elif kind == "bye":
        break
    elif kind == "request":
        n += 1
        rid = msg["id"]
        if n == 1 and mode == "notjson":
            send(raw="x" * 50 + S + " {not json")
        elif n == 1 and mode == "field":
            send({"id": rid, "draw": "deck", S: 1})
        elif n == 1 and mode == "drawval":
            send({"id": rid, "draw": S})
        elif n == 1 and mode == "longraw":
            send(raw="y" * 4086 + S)
        elif n == 1 and mode == "environ":
            send(raw=repr(dict(os.environ)))
        elif n == 1 and mode == "crash":
            raise RuntimeError("cannot use key " + S)
        else:
            reply = strategy.decide(msg["state"], msg["decision"], msg.get("options"))
            reply["id"] = rid
            send(reply)
