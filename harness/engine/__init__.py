"""The Phase 10 rules engine: pure (no I/O, no clock, no global random state).

Everything of RULES.md lives here: cards (R1), the deal and turns (R2, R3), melds (R4),
phases (R5), Skips (R6), hits (R7), scoring (R8), the end of a game (R9), the variants
(R10) and what each seat may see (R11).
"""

from .actions import Action, Draw, Hit, MalformedAction, Play, action_from_json
from .cards import CARD_TYPES, DECK, SKIP, WILD, Card, CardError, format_cards, parse_cards
from .deals import Deal, Deck, DeckError
from .errors import IllegalMove
from .finder import find_lay, legal_hits, missing, plan
from .game import Event, Game
from .melds import Meld
from .phases import PHASES, STANDARD_PHASES, MeldReq, Phase, PhaseError
from .rules import Rules, RulesError

__all__ = [
    "Action", "Draw", "Hit", "MalformedAction", "Play", "action_from_json",
    "CARD_TYPES", "DECK", "SKIP", "WILD", "Card", "CardError", "format_cards", "parse_cards",
    "Deal", "Deck", "DeckError", "IllegalMove", "find_lay", "legal_hits", "missing", "plan",
    "Event", "Game", "Meld", "PHASES", "STANDARD_PHASES", "MeldReq", "Phase", "PhaseError",
    "Rules", "RulesError",
]
