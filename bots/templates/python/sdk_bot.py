#!/usr/bin/env python3
"""The smallest complete p10/1 bot in Python, on the harness SDK. Copy it and improve it.

It draws from the deck, lays its phase when it can (the referee's options.lay, or the
SDK's phase finder), discards its highest-penalty card and, if that is a Skip, names the
first player who may be named. Print debugging to stderr: stdout carries the protocol.
"""

import sys

from harness.sdk import Bot, find_lay, run


class MyBot(Bot):
    name = "my-bot"
    version = "1.0"

    def on_game_start(self, msg):
        print(f"{self.name}: game {msg.get('game')}, seat {msg.get('seat')}", file=sys.stderr)  # the log

    def draw(self, state):
        return "deck"  # or "discard" (when state.can_take_discard)

    def play(self, state, options):
        lay = None
        if not state.laid:
            lay = options.lay if options else find_lay(state.cards, state.phase)
        hand = list(state.cards)
        for meld in lay or []:
            for card in meld:
                hand.remove(card)
        discard = max(hand, key=lambda card: card.points) if hand else None  # None: went out
        return self.reply(lay=lay, discard=discard, skip=state.skip_target(discard))


if __name__ == "__main__":
    run(MyBot())
