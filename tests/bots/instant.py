#!/usr/bin/env python3
"""A bot that thinks not at all: it answers each request with the next reply of a list
precomputed for its seat, for measuring the referee's own cost per decision.

Usage: instant.py REPLIES [--no-options]

REPLIES is a JSON-lines file of replies without ids, one per request this seat gets in a
game, in order. The list starts over at every game_start, so the same game can be played
again and again. With --no-options the hello reply says "options": false. Any message
is read with orjson, as a real bot would have to; the reply is the next one with the
request's id added.
"""

import sys

import orjson


def main() -> None:
    with open(sys.argv[1], "rb") as f:
        replies = [orjson.loads(line) for line in f if line.strip()]
    hello = {"type": "hello", "name": "instant", "version": "1"}
    if "--no-options" in sys.argv[2:]:
        hello["options"] = False
    inp = sys.stdin.buffer
    out = sys.stdout.buffer
    i = 0
    for line in inp:
        msg = orjson.loads(line)
        kind = msg.get("type")
        if kind == "request":
            reply = replies[i % len(replies)]
            i += 1
            reply["id"] = msg["id"]
            out.write(orjson.dumps(reply) + b"\n")
            out.flush()
        elif kind == "game_start":
            i = 0
        elif kind == "hello":
            out.write(orjson.dumps(hello) + b"\n")
            out.flush()
        elif kind == "bye":
            break


if __name__ == "__main__":
    main()
