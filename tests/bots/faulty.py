#!/usr/bin/env python3
"""A p10/1 bot that misbehaves on purpose, for the referee's fault tests.

Usage: faulty.py MODE [ARG]

It plays the greedy strategy except where MODE says otherwise:

  silent            answers hello, then never answers anything
  garbage           answers every request with a line that is not JSON
  exit_after N      answers N requests, then exits (code 3) in the middle of a hand
  late_once S       sleeps S seconds before answering its first request (with that
                    request's id, by then an old one), then answers at once
  late_always S     sleeps S seconds before every answer
  illegal           draws from the discard pile when it may not (a Skip on top), and
                    discards a card it does not hold
  illegal_once      discards a card it does not hold in its first play reply, then plays well
  long_line N       answers every request with a line of N bytes
  stderr_flood N    writes N bytes to stderr before every answer (and at start-up)
  tee FILE          plays well and appends every line it reads and writes to FILE,
                    as {"dir": "to"|"from", "line": "..."} JSON lines
  no_options        plays well, and says "options": false in its hello
  bool_id           answers request 1 with "id": true (not an integer), then plays well
  string_id         answers every request with its id as a string
  bad_hello         answers hello with a message of another type
  no_hello          exits at once with a message on stderr
  deals             plays well and writes the hand it is dealt at the start of each game
                    to stderr, as "DEALT " and {"process", "game", "seat", "cards"} in JSON
                    ("process": a token drawn at start, the same for the whole process)
  blank_flood N     writes N bytes of blank lines before every answer
  scratch_fill N    at its first request, tries to write N MiB spread over /, /dev, /dev/shm
                    and /tmp (in files of 32 MiB, under the file size limit), writes
                    "WROTE <bytes the writes took>" to stderr, then never answers
  bad_line_from N   in every game from game index N on (its id, "g000012": 12), answers
                    its first request with a line that is not JSON (a strike), then plays well
  stderr_forge      writes to stderr, at start-up and before every answer, lines made like
                    the harness's own notes, terminal escapes (OSC 52, CSI, C1), carriage
                    returns, bidi overrides, bytes that are not UTF-8 and a character split
                    between two writes, and leaves its last line unended
  weird KIND        answers its first request with a line that is not a plain reply:
                    cr (the reply with a carriage return before its \\n), nul (a NUL
                    byte inside), utf8 (invalid UTF-8), nest (1 MB of nested arrays),
                    huge (a draw reply whose "draw" is 900 KB long); then plays well

Everything it would send is built from the request alone, so it is deterministic.
"""

from __future__ import annotations

import json
import os
import sys
import time

from harness.players import GreedyStrategy

CARD_TYPES = [f"{c}{n}" for c in "RBGY" for n in range(1, 13)] + ["W", "S"]


def fill(total: int) -> int:
    """Try to write `total` bytes spread over the places a process might write; returns
    how many bytes the writes took."""
    chunk, size, took = b"x" * (1 << 20), 32 << 20, 0
    places = ["/", "/dev", "/dev/shm", "/tmp"]
    for k, folder in enumerate(places):
        for n in range(0, total // len(places), size):
            try:
                with open(os.path.join(folder, f"fill-{k}-{n}"), "wb", buffering=0) as f:
                    for _ in range(size >> 20):
                        took += f.write(chunk)
            except OSError:
                break  # this place is full or cannot be written: the next one
    return took
FORGED = [
    b"[p10-tourney] watchdog: memory limit reached (forged)\n",
    b"\x1b]52;c;Zm9yZ2Vk\x07\x1b[2J\x1b[31mred\r[p10-tourney] ended (exit code 0)\n",
    "\u202eevil\u2066 \u009b31m C1 \u2028[p10-tourney] after a line separator\n".encode(),
    b"bad utf-8 \xff\xfe \xc3( \x85[p10-tourney] after NEL\n",
    b"split \xe2\x80",  # U+202E, cut in two writes
    b"\xae done\x00\x08\x08\x08\x7f\n",
    b"[p10-tourney] unended",
]


def forge() -> None:
    for piece in FORGED:
        sys.stderr.buffer.write(piece)
        sys.stderr.buffer.flush()


def main() -> int:
    mode = sys.argv[1]
    arg = sys.argv[2] if len(sys.argv) > 2 else None
    if mode == "no_hello":
        print("no_hello: giving up before the handshake", file=sys.stderr, flush=True)
        return 2
    out = sys.stdout
    tee = open(arg, "a", encoding="utf-8") if mode == "tee" else None
    token = os.urandom(8).hex()  # this process, whatever pid a sandbox shows it
    dealt = True  # this game's hand is noted
    bad_line = False  # bad_line_from: this game's bad line is still to come
    strategy = GreedyStrategy()
    requests = 0
    played = 0

    def send(obj: dict) -> None:
        line = json.dumps(obj, separators=(",", ":"))
        if tee is not None:
            tee.write(json.dumps({"dir": "from", "line": line}) + "\n")
            tee.flush()
        out.write(line + "\n")
        out.flush()

    if mode == "stderr_flood":
        sys.stderr.write("x" * int(arg) + "\n")
        sys.stderr.flush()
    if mode == "stderr_forge":
        forge()
    for raw in sys.stdin:
        if tee is not None:
            tee.write(json.dumps({"dir": "to", "line": raw.rstrip("\n")}) + "\n")
            tee.flush()
        msg = json.loads(raw)
        kind = msg.get("type")
        if kind == "hello":
            if mode == "bad_hello":
                send({"type": "greeting", "name": "faulty"})
            else:
                hello = {"type": "hello", "name": f"faulty-{mode}", "version": "1"}
                if mode == "no_options":
                    hello["options"] = False
                send(hello)
            continue
        if kind == "game_start":
            strategy.new_game(msg.get("game", ""), msg.get("seat", 0))
            dealt = False
            bad_line = mode == "bad_line_from" and int(str(msg.get("game", "g0"))[1:] or 0) >= int(arg)
            continue
        if kind == "bye":
            break
        if kind != "request":
            continue
        requests += 1
        state, decision = msg["state"], msg["decision"]
        if mode == "silent":
            continue
        if mode == "scratch_fill":
            if requests == 1:
                print(f"WROTE {fill(int(arg) << 20)}", file=sys.stderr, flush=True)
            continue
        if mode == "deals" and not dealt:
            dealt = True
            print("DEALT " + json.dumps({"process": token, "game": state["game"], "seat": state["seat"],
                                         "cards": sorted(state["cards"])}), file=sys.stderr, flush=True)
        if mode == "blank_flood":
            left = int(arg)
            try:
                while left > 0:  # blocks while the referee reads nothing
                    n = min(left, 1 << 16)
                    out.buffer.write(b"\n" * n)
                    out.buffer.flush()
                    left -= n
            except BrokenPipeError:
                return 0
        if mode == "weird" and requests == 1:
            reply = json.dumps({**strategy.decide(state, decision, msg.get("options")), "id": msg["id"]}).encode()
            line = {"cr": reply + b"\r", "nul": reply[:-1] + b',"x":"a\x00b"}', "utf8": b'{"id":\xff\xfe"bad"}',
                    "nest": b"[" * 1_000_000,
                    "huge": json.dumps({"id": msg["id"], "draw": "x" * 900_000}).encode()}[arg]
            out.buffer.write(line + b"\n")
            out.buffer.flush()
            if arg == "cr":
                continue  # a valid reply: taken
        if bad_line:
            bad_line = False
            out.write("this is {not json\n")
            out.flush()
            continue
        if mode == "garbage":
            out.write("this is {not json\n")
            out.flush()
            continue
        if mode == "long_line":
            out.write(json.dumps({"id": msg["id"], "pad": "x" * int(arg)}) + "\n")
            out.flush()
            continue
        if mode == "exit_after" and requests > int(arg):
            return 3
        reply = strategy.decide(state, decision, msg.get("options"))
        if mode == "illegal" or (mode == "illegal_once" and decision == "play" and played == 0):
            if decision == "draw":
                reply = {"draw": "deck" if state["can_take_discard"] else "discard"}
            else:
                held = set(state["cards"])
                reply = {"discard": next(c for c in CARD_TYPES if c not in held and c != "S")}
        if decision == "play":
            played += 1
        if mode == "late_always" or (mode == "late_once" and requests == 1):
            time.sleep(float(arg))
        if mode == "stderr_flood":
            sys.stderr.write("y" * int(arg) + "\n")
            sys.stderr.flush()
        if mode == "stderr_forge" and requests <= 3:
            forge()
        reply["id"] = msg["id"]
        if mode == "bool_id" and msg["id"] == 1:
            reply["id"] = True
        elif mode == "string_id":
            reply["id"] = str(msg["id"])
        send(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
