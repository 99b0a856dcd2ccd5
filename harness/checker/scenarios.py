"""The games of the conformance suite: rules and stacked deals that make each scenario
certain. Seat 0 moves first when `first_dealer` is the last seat (R2.3).

Opponents' hands are "junk": cards of distinct numbers, no Wilds and no Skips, so they
cannot lay or go out before the bot under test has made the moves a scenario is about.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ..engine import DECK, Deck, Rules


@dataclass(frozen=True)
class Scenario:
    """One game: players, the bot's seat, rules, seed and (optionally) stacked deals."""

    label: str
    players: int
    seat: int
    rules: dict[str, Any]
    seed: int
    deck: dict[str, Any] | None = None

    def make_rules(self) -> Rules:
        """The engine rules."""
        return Rules.from_dict(self.rules)

    def make_deck(self) -> Deck | None:
        """The engine deck (None: shuffled from the seed)."""
        return Deck.from_dict(self.deck) if self.deck else None


def _h(text: str) -> list[str]:
    return text.split()


# Junk hands: ten distinct numbers, no Wild, no Skip.
JUNK_A = _h("R2 B3 G5 Y6 R8 B9 G11 R12 Y10 G1")
JUNK_B = _h("R3 B5 G6 Y8 R9 B10 G11 R12 Y10 G1")
JUNK_C = _h("R1 B2 G3 Y4 R5 B6 G8 Y9 R10 B11")
JUNK_D = _h("R1 B2 G3 Y4 R6 B7 G8 Y10 R11 B12")  # no 5s, no 9s
JUNK_E = _h("G1 Y2 R3 B4 G6 Y7 R8 B10 G11 Y12")  # no 5s, no 9s

# --- takes options.lay (or finds a lay itself) ------------------------------------------
# Hand 1: the bot moves first holding phase 1 (two sets of 3). Hand 2: it is on phase 2
# and holds a set of 3 and a run of 4 with a Wild inside (R3 W B5 G6 = 3..6).
OPTIONS_LAY = Scenario(
    "options-lay", 2, 0,
    {"phases": [1, 2], "first_dealer": 1, "turn_limit": 30, "hand_limit": 2},
    seed=3,
    deck={"deals": [
        {"hands": [_h("R3 B3 G3 R7 B7 G7 Y1 B10 G12 R11"), JUNK_A], "discard": "G9", "draw": ["B12"]},
        {"hands": [_h("G9 Y9 R9 R3 W B5 G6 Y11 B12 R1"), JUNK_B], "discard": "G2", "draw": ["Y3", "R12"]},
    ]},
)

# --- survives an error (played by the checker itself, not the referee) -------------------
ERRORS = Scenario(
    "errors", 2, 0,
    {"phases": [1], "first_dealer": 1, "turn_limit": 8, "hand_limit": 1},
    seed=4,
    deck={"deals": [{"hands": [_h("R1 B3 G5 Y7 R9 B11 G2 Y4 R6 B8"), _h("G1 Y3 R5 B7 G9 Y11 R2 B4 G6 Y8")],
                     "discard": "R12"}]},
)

# --- Skips --------------------------------------------------------------------------------
# Hand 1: the up-card is a Skip, so seat 2 (first to move) loses its turn (R2.4); the bot
# then draws with a Skip on the discard pile, which it may not take (R3.2). It holds two
# sets of five but one card, draws it, lays both and has only a Skip left: it must discard
# it and name a seat (R6.1). Hand 2: the up-card is a Skip and the bot moves first, so it
# is skipped (R2.4) and asked again only a round later.
SKIPS = Scenario(
    "skips", 3, 0,
    {"phases": [{"number": 21, "melds": [{"kind": "set", "size": 5}, {"kind": "set", "size": 5}]}, 1],
     "first_dealer": 1, "turn_limit": 24, "hand_limit": 2},
    seed=5,
    deck={"deals": [
        {"hands": [_h("R5 B5 G5 Y5 R5 R9 B9 G9 Y9 S"), JUNK_D, JUNK_E], "discard": "S", "draw": ["B9"]},
        {"hands": [_h("R4 B4 G4 Y8 B8 G8 S W Y11 B12"), JUNK_B, JUNK_C], "discard": "S"},
    ]},
)


def _reshuffle_deck(players: int = 6, seed: int = 10) -> dict[str, Any]:
    """Every card named: no Wild in any hand, the eight Wilds at the bottom of the draw pile,
    so nobody can lay a set of 10 before the draw pile has run out."""
    non_wild = [c.text for c in DECK if not c.is_wild]
    random.Random(seed).shuffle(non_wild)
    hands = [non_wild[i * 10:(i + 1) * 10] for i in range(players)]
    rest = non_wild[players * 10:]
    up = next(c for c in rest if c != "S")
    rest.remove(up)
    return {"deals": [{"hands": hands, "discard": up, "draw": rest + ["W"] * 8}]}


# --- reshuffle (R3.7), at a table of 6 -----------------------------------------------------
# 47 cards in the draw pile; the pile runs out around turn 60 and is reshuffled.
RESHUFFLE = Scenario(
    "reshuffle", 6, 3,
    {"phases": [{"number": 23, "melds": [{"kind": "set", "size": 10}]}], "turn_limit": 100, "hand_limit": 1},
    seed=9,
    deck=_reshuffle_deck(),
)

# --- tables of 2 and of 6 ------------------------------------------------------------------
PLAYERS = (
    Scenario("players-2", 2, 1, {"phases": [1, 2, 3], "hand_limit": 3}, seed=21),
    Scenario("players-6", 6, 5, {"phases": [1, 2, 3], "hand_limit": 3}, seed=22),
)

# --- the variants (R10) -------------------------------------------------------------------
VARIANTS = (
    # R10.1 fixed hands: hand 1 is phase 4 (run of 7) for everyone, hand 2 phase 8 (7 of one
    # colour). The bot holds each from the deal.
    Scenario(
        "variant-fixed", 2, 0,
        {"variant": "fixed", "phases": [4, 8], "first_dealer": 1, "turn_limit": 20},
        seed=31,
        deck={"deals": [
            {"hands": [_h("R2 B3 W Y5 G6 R7 B8 G11 G12 Y1"), _h("R10 B10 G10 Y10 R12 B12 Y12 R11 B11 Y11")],
             "discard": "G9", "draw": ["Y9"]},
            {"hands": [_h("G1 G3 G5 G7 G9 G11 G12 R2 B4 Y6"), _h("R10 B10 Y10 R12 B12 Y12 R11 B11 Y11 R9")],
             "discard": "Y3", "draw": ["B1", "Y4"]},
        ]},
    ),
    # R10.2 a shorter game: the first to complete 2 phases ends it.
    Scenario("variant-first-to", 3, 2, {"first_to": 2, "turn_limit": 40, "hand_limit": 4}, seed=32),
    # R10.3/R10.4 extra phases 11 (4 sets of 2) and 14 (run of 4 + 4 of one colour), then a
    # custom phase 22 (3 of one colour + run of 5). The bot holds each from the deal.
    Scenario(
        "variant-phases", 2, 0,
        {"phases": [11, 14, {"number": 22, "melds": [{"kind": "color", "size": 3}, {"kind": "run", "size": 5}]}],
         "first_dealer": 1, "turn_limit": 30, "hand_limit": 3},
        seed=33,
        deck={"deals": [
            {"hands": [_h("R1 B1 R4 G4 Y7 B7 G10 W Y12 B2"), JUNK_A], "discard": "B6", "draw": ["Y9"]},
            {"hands": [_h("R2 B3 G4 Y5 B7 B9 B11 B1 G12 Y9"), JUNK_B], "discard": "Y2", "draw": ["R6", "G8"]},
            {"hands": [_h("Y1 Y3 Y8 R4 B5 W G7 R8 B12 G11"), JUNK_C], "discard": "G2", "draw": ["R12"]},
        ]},
    ),
)

# --- several games in one process -----------------------------------------------------------
SEVERAL = tuple(
    Scenario(f"several-{i + 1}", 2, i % 2, {"phases": [1], "turn_limit": 10, "hand_limit": 1}, seed=41 + i)
    for i in range(3)
)

# --- a whole standard game ------------------------------------------------------------------
FULL = Scenario("full-game", 4, 1, {}, seed=7)

# --- a Wild hit on a run open at both ends (R7.3) --------------------------------------------
# The bot moves first holding phase 5 (a run of 8, 3..10) and two Wilds. Once its run is on
# the table, a Wild it hits on it must say which end ("end": "low" or "high"): both are open
# (unless it laid the Wilds at the ends itself). The opponent holds only 1s and 12s: it can
# neither lay nor go out, and the cards drawn (12s) fit no end of the bot's run.
WILD_END = Scenario(
    "wild-end", 2, 0,
    {"phases": [5], "first_dealer": 1, "turn_limit": 8, "hand_limit": 1},
    seed=51,
    deck={"deals": [{"hands": [_h("R3 B4 G5 Y6 R7 B8 G9 Y10 W W"), _h("R1 B1 G1 Y1 R12 B12 G12 Y12 R1 B1")],
                     "discard": "Y1", "draw": ["G12", "R12", "Y12", "B12"]}]},
)

# --- naming a seat with a skip pending (R6.2) -------------------------------------------------
# Seat 1 lays phase 1 and seat 2 discards a Skip naming it (the greedy player names the seat
# that has laid); then the bot, holding a Skip and nothing better to discard, may name only
# seat 2: seat 1, the next seat, has a skip pending.
SKIP_PENDING = Scenario(
    "skip-pending", 3, 0,
    {"phases": [1], "first_dealer": 0, "turn_limit": 6, "hand_limit": 1},
    seed=52,
    deck={"deals": [{"hands": [_h("S R1 B2 G5 Y7 R8 B9 G10 Y11 R12"), _h("R3 B3 G3 R4 B4 G4 Y6 R7 B8 G9"),
                               _h("S Y1 R2 B5 G6 Y8 R9 B10 G11 Y12")],
                     "discard": "Y3", "draw": ["R5", "B6", "G7"]}]},
)

# --- a tie-break hand with a seat left out (R9.3, R10.6) ----------------------------------------
# Hand 1 (3 turns, then stalled): seat 0 and the bot (seat 1) lay phase 1 and keep four
# 5-point cards each, seat 2 cannot lay: seats 0 and 1 tie on 20 points, so hand 2 is a
# tie-break between them and seat 2 is not playing ("active": false, no cards). The bot
# moves first in hand 2 holding a Skip and no better discard: it may name only seat 0 —
# not seat 2, the seat after it.
TIE_BREAK = Scenario(
    "tie-break", 3, 1,
    {"phases": [1], "first_dealer": 2, "turn_limit": 3, "hand_limit": 3},
    seed=53,
    deck={"deals": [
        {"hands": [_h("R3 B3 G3 R4 B4 G4 Y6 R7 B8 G9"), _h("R1 B1 G1 R2 B2 G2 Y7 R6 B5 G8"),
                   _h("Y3 Y4 Y8 Y9 R10 B11 G12 Y1 Y2 G6")],
         "discard": "Y5", "draw": ["R5", "B6", "G7"]},
        {"hands": [_h("R1 B2 G3 Y4 R6 B7 G8 Y9 R10 B11"), _h("S Y1 R2 B3 G4 Y5 R7 B8 G9 Y11"),
                   _h("G1 Y2 R3 B4 G5 Y6 R8 B9 G10 Y12")],
         "discard": "B1", "draw": ["G11"]},
    ]},
)
