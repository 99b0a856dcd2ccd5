#!/usr/bin/env python3
"""A small complete p10/1 bot in Python, standard library only. Copy it and improve it.

It draws from the deck, lays its phase when the referee's options.lay offers one, makes
the offered hits that cannot conflict (at most one per run), and discards a Skip if it
holds one (naming the first seat that may be named), else its highest-penalty card that
is not a Wild. stdout carries the protocol, one JSON object per line; stderr is the log.

The two functions to make smarter first: choose_draw and choose_discard. (sdk_bot.py is
the same idea on the harness SDK, which parses cards and finds phases for you.)
"""

import json
import sys

NAME, VERSION = "python-template", "1.0"


def log(text):
    print(f"{NAME}: {text}", file=sys.stderr, flush=True)


def send(reply):
    """Write one reply as one line and flush: the referee waits for it."""
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def penalty(card):
    """R1.3: the points a card costs when it is left in hand."""
    if card == "W":
        return 25
    if card == "S":
        return 15
    return 10 if int(card[1:]) >= 10 else 5


def choose_draw(state):
    """"deck" or "discard" (allowed only when state["can_take_discard"] is true)."""
    return "deck"


def choose_discard(hand):
    """A Skip if we hold one, else the highest-penalty card that is not a Wild, else a Wild."""
    if "S" in hand:
        return "S"
    others = [card for card in hand if card != "W"]
    return max(others, key=penalty) if others else hand[0]


def skip_target(state):
    """R6: the first seat after ours that is playing this hand (active is false for a seat
    sitting out a tie-break hand) and has no skip pending; None (null) if there is none."""
    players, me = state["players"], state["seat"]
    for k in range(1, len(players)):
        p = players[(me + k) % len(players)]
        if not p["skip_pending"] and p.get("active", True):
            return p["seat"]
    return None


def play(msg):
    state, options = msg["state"], msg.get("options") or {}
    hand, reply = list(state["cards"]), {"id": msg["id"]}
    if options.get("lay"):
        # options.lay is one legal way to lay the whole phase: send it as it is.
        reply["lay"] = options["lay"]
        for meld in options["lay"]:
            for card in meld:
                hand.remove(card)
    elif options.get("hits"):
        # Each offered hit is legal alone; two on one run may conflict, so one per run.
        runs = {m["id"] for m in state["table"] if m["kind"] == "run"}
        runs_hit, chosen = set(), []
        for hit in options["hits"]:
            if hit["meld"] in runs_hit or hit["card"] not in hand:
                continue
            hand.remove(hit["card"])
            if hit["meld"] in runs:
                runs_hit.add(hit["meld"])
            chosen.append(hit)  # keeps "end" where it is needed
        if chosen:
            reply["hits"] = chosen
    if hand:  # an empty hand went out without a discard (R3.5)
        reply["discard"] = choose_discard(hand)
        if reply["discard"] == "S":
            reply["skip"] = skip_target(state)
    return reply


def main():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            log("ignoring a line that is not JSON")
            continue
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "hello", "name": NAME, "version": VERSION})
        elif kind == "request" and msg["decision"] == "draw":
            send({"id": msg["id"], "draw": choose_draw(msg["state"])})
        elif kind == "request":
            send(play(msg))
        elif kind == "game_start":
            log(f"game {msg.get('game')}, seat {msg.get('seat')}")
        elif kind == "error":
            log(f"error on request {msg.get('id')}: {msg.get('reason')}")  # names the rule broken
        elif kind == "bye":
            break
        # hand_end, game_end and unknown types need no answer.


if __name__ == "__main__":
    main()
