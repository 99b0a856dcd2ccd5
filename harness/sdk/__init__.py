"""The Python SDK for bot authors: the message loop, a typed view of the state, reply
helpers and the phase finder.

A complete bot::

    from harness.sdk import Bot, run, find_lay

    class MyBot(Bot):
        name = "my-bot"

        def draw(self, state):
            return "deck"

        def play(self, state, options):
            lay = options.lay if options else find_lay(state.cards, state.phase)
            hand = list(state.cards)
            for meld in lay or []:
                for card in meld:
                    hand.remove(card)
            discard = max(hand, key=lambda c: c.points) if hand else None
            return self.reply(lay=lay, discard=discard, skip=state.skip_target(discard))

    if __name__ == "__main__":
        run(MyBot())
"""

from .bot import Bot, Options, PlayerInfo, State, StrategyBot, run
from ..engine import Card, Meld, Phase, find_lay, legal_hits, missing, plan

__all__ = [
    "Bot", "Options", "PlayerInfo", "State", "StrategyBot", "run",
    "Card", "Meld", "Phase", "find_lay", "legal_hits", "missing", "plan",
]
