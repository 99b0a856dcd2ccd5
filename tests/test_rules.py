"""One or more tests for every rule line of protocol/RULES.md (R1.1 ... R11.2).

Each test is named after the rule it checks (``test_r6_2_...``), so a failure points at a
line of RULES.md. Almost every test plays a stacked deal (the protocol's "Test deals"):
the cards in every hand, the first up-card and the top of the draw pile are written out,
and the moves are replies in protocol form. Illegal moves must raise `IllegalMove` whose
message starts with the rule number, and must leave the whole state (hidden cards and the
order of the draw pile included) unchanged.

Two players, first dealer seat 0: seat 1 moves first, then seat 0, then seat 1 ...
Three players: seat 1, seat 2, seat 0, ...
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from harness.engine import (
    CARD_TYPES,
    DECK,
    PHASES,
    STANDARD_PHASES,
    Card,
    CardError,
    Deck,
    DeckError,
    Draw,
    Game,
    Hit,
    IllegalMove,
    MalformedAction,
    Meld,
    Play,
    Rules,
    RulesError,
    action_from_json,
    parse_cards,
)

# ---------------------------------------------------------------------------------------
# Helpers: stacked deals, replies, and "illegal and nothing changed".
# ---------------------------------------------------------------------------------------


def deal(hands: list[str], discard: str | None = "Y12", draw: str = "") -> dict[str, Any]:
    """One stacked deal: a space-separated string of 10 cards per seat, the up-card, and the
    top of the draw pile (first card drawn first)."""
    d: dict[str, Any] = {"hands": [h.split() for h in hands], "draw": draw.split()}
    if discard is not None:
        d["discard"] = discard
    return d


def new_game(*deals: dict[str, Any], rules: Rules | None = None, seed: int = 1, **rules_kw: Any) -> Game:
    """A started game dealt from `deals` (then shuffled from `seed`); the start events are
    kept in `game.start_events`."""
    deck = Deck.from_dict({"deals": list(deals)})
    game = Game(rules if rules is not None else Rules(**rules_kw), len(deals[0]["hands"]), seed, deck)
    game.start_events = game.start()  # type: ignore[attr-defined]
    return game


def cards(text: str) -> list[Card]:
    return parse_cards(text.split())


def hand(game: Game, seat: int) -> Counter:
    return Counter(c.text for c in game.players[seat].hand)


def draw(game: Game, source: str = "deck") -> list[dict[str, Any]]:
    return game.apply(action_from_json({"draw": source}))


def play(game: Game, **reply: Any) -> list[dict[str, Any]]:
    return game.apply(action_from_json(reply))


def turn(game: Game, source: str = "deck", **reply: Any) -> list[dict[str, Any]]:
    """Draw, then play `reply` (protocol form: lay=[[...]], hits=[{...}], discard=..., skip=...)."""
    return draw(game, source) + play(game, **reply)


def pass_turn(game: Game) -> list[dict[str, Any]]:
    """Draw from the deck and discard the card drawn (a Skip names the first seat it may)."""
    seat = game.to_move
    events = draw(game)
    card = game.players[seat].hand[-1]
    reply: dict[str, Any] = {"discard": card.text}
    if card.is_skip:
        targets = game.skip_targets(seat)
        reply["skip"] = targets[0] if targets else None
    return events + play(game, **reply)


def full_state(game: Game) -> Any:
    """Everything, hidden cards and the draw pile's order included."""
    return (
        game.snapshot(),
        [c.text for c in game.draw_pile],
        [c.text for c in game.discard_pile],
        [[c.text for c in p.hand] for p in game.players],
        [m.to_dict() for m in game.table],
        game.to_move,
        game.decision,
        game.winner,
        game.end_reason,
    )


def assert_illegal(game: Game, action: Any, *rules: str) -> IllegalMove:
    """`action` (an Action or a protocol dict) raises IllegalMove naming one of `rules`
    first in its message, and changes nothing."""
    if isinstance(action, dict):
        action = action_from_json(action)
    before = full_state(game)
    pattern = "^(" + "|".join(re.escape(r) for r in rules) + "):"
    with pytest.raises(IllegalMove, match=pattern) as info:
        game.apply(action)
    assert info.value.rule in rules
    assert full_state(game) == before
    return info.value


def events_of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["e"] == kind]


def the(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = events_of(events, kind)
    assert len(found) == 1, (kind, events)
    return found[0]


def points(text: str) -> int:
    return sum(c.points for c in cards(text))


ONE = Rules(phases=(PHASES[1],))  # a one-phase game: laying phase 1 completes the game

# A hand that lays phase 1 whole (two sets of 5) and goes out by discarding the card drawn.
OUT_1 = "R1 B1 G1 Y1 W R2 B2 G2 Y2 W"
OUT_1_LAY = [["R1", "B1", "G1", "Y1", "W"], ["R2", "B2", "G2", "Y2", "W"]]


# ---------------------------------------------------------------------------------------
# R1 Cards
# ---------------------------------------------------------------------------------------


def test_r1_1_deck_has_108_cards_two_of_each_number_eight_wilds_four_skips():
    assert len(DECK) == 108
    counts = Counter(c.text for c in DECK)
    for colour in "RBGY":
        for number in range(1, 13):
            assert counts[f"{colour}{number}"] == 2
    assert counts["W"] == 8
    assert counts["S"] == 4
    assert len(counts) == 50 == len(CARD_TYPES)
    assert sum(1 for c in DECK if c.is_natural) == 96


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_r1_1_a_shuffled_hand_is_dealt_from_exactly_the_108_cards(players):
    game = Game(Rules(), players, seed=players * 11)
    game.start()
    everything = [c for p in game.players for c in p.hand] + game.discard_pile + game.draw_pile
    assert Counter(everything) == Counter(DECK)


def test_r1_1_a_stacked_hand_is_completed_from_the_rest_of_the_108_cards():
    game = new_game(deal([OUT_1, "R3 R3 B3 B3 G3 G3 Y3 Y3 S S"], "W", "W W W S"))
    everything = [c for p in game.players for c in p.hand] + game.discard_pile + game.draw_pile
    assert Counter(everything) == Counter(DECK)


@pytest.mark.parametrize(
    "hands,discard,draw_",
    [
        (["R5 R5 B1 B2 B3 B4 B6 B7 B8 B9", "R5 G1 G2 G3 G4 G6 G7 G8 G9 G10"], "Y1", ""),  # 3 × R5
        (["W W W W W B2 B3 B4 B6 B7", "W W W G2 G3 G4 G6 G7 G8 G9"], "W", ""),  # 9 Wilds
        (["S S S B2 B3 B4 B6 B7 B8 B9", "S G2 G3 G4 G6 G7 G8 G9 G10 G11"], "Y1", "S"),  # 5 Skips
        (["R5 B1 B2 B3 B4 B6 B7 B8 B9 B10", "R5 G1 G2 G3 G4 G6 G7 G8 G9 G10"], "R5", ""),  # up-card
    ],
)
def test_r1_1_deck_file_naming_too_many_copies_is_rejected(hands, discard, draw_):
    with pytest.raises(DeckError, match=r"R1\.1"):
        Deck.from_dict({"deals": [deal(hands, discard, draw_)]})


def test_r1_1_deck_file_limits_copies_per_deal_not_per_game():
    one = deal(["R5 R5 B1 B2 B3 B4 B6 B7 B8 B9", "G1 G2 G3 G4 G6 G7 G8 G9 G10 G11"])
    deck = Deck.from_dict({"deals": [one, one]})  # two R5s in each hand of the game: fine
    assert len(deck.deals) == 2


def test_r1_2_notation_round_trips_for_every_card():
    for card in CARD_TYPES:
        assert Card.parse(str(card)) is card
        assert Card.parse(card.text).text == card.text
    assert [str(Card.parse(t)) for t in ("R5", "B12", "G1", "Y7", "W", "S")] == ["R5", "B12", "G1", "Y7", "W", "S"]
    red5 = Card.parse("R5")
    assert (red5.color, red5.number, red5.color_name) == ("R", 5, "red")
    assert Card.parse("W").is_wild and Card.parse("S").is_skip


@pytest.mark.parametrize("bad", ["R0", "R13", "X5", "r5", "", "W1", "S2", "5", "RR5", " R5", "R5 ", "Wild", None, 5])
def test_r1_2_bad_cards_are_rejected(bad):
    with pytest.raises(CardError, match=r"^R1\.2"):
        Card.parse(bad)


def test_r1_2_bad_card_in_a_deck_file_or_a_reply_is_rejected():
    with pytest.raises(DeckError, match=r"R1\.2"):
        Deck.from_dict({"deals": [deal(["R13 B1 B2 B3 B4 B6 B7 B8 B9 B10", "G1 G2 G3 G4 G6 G7 G8 G9 G10 G11"])]})
    with pytest.raises(MalformedAction, match=r"R1\.2"):
        action_from_json({"discard": "R0"})
    with pytest.raises(MalformedAction, match=r"R1\.2"):
        action_from_json({"lay": [["R1", "Q1", "W"]], "discard": "R2"})


def test_r1_2_identical_cards_are_interchangeable():
    assert Card.parse("R5") is Card.parse("R5") and Card.parse("R5") == Card.parse("R5")
    game = new_game(deal(["R5 R5 B1 B2 B3 B4 B6 B7 B8 B9", "G1 G2 G3 G4 G6 G7 G8 G9 G10 G11"], "Y1", "Y2 Y3"))
    pass_turn(game)  # seat 1
    turn(game, discard="R5")  # seat 0 discards one of its two Red 5s: either one
    assert hand(game, 0)["R5"] == 1
    assert game.discard_pile[-1] is Card.parse("R5")


@pytest.mark.parametrize(
    "text,pts",
    [("R1", 5), ("B5", 5), ("G9", 5), ("Y9", 5), ("R10", 10), ("B11", 10), ("G12", 10), ("S", 15), ("W", 25)],
)
def test_r1_3_penalty_points(text, pts):
    assert Card.parse(text).points == pts


def test_r1_3_penalty_points_of_every_card():
    for c in CARD_TYPES:
        expected = 25 if c.is_wild else 15 if c.is_skip else 5 if c.number <= 9 else 10
        assert c.points == expected


# ---------------------------------------------------------------------------------------
# R2 Players, deal, turn order
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [0, 1, 7, 8])
def test_r2_1_fewer_than_two_or_more_than_six_players_are_refused(players):
    with pytest.raises(ValueError, match=r"^R2\.1"):
        Game(Rules(), players, seed=1)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_r2_1_two_to_six_players_play(players):
    game = Game(Rules(), players, seed=5)
    game.start()
    assert len(game.players) == players
    assert [p.seat for p in game.players] == list(range(players))


def test_r2_1_play_goes_to_the_next_seat():
    game = Game(Rules(), 4, seed=2)
    game.start()
    seen = []
    for _ in range(9):
        seen.append(game.to_move)
        seat = game.to_move
        draw(game)
        card = game.players[seat].hand[-1]
        if card.is_skip:  # keep the order plain: discard something else
            card = next(c for c in game.players[seat].hand if not c.is_skip)
        play(game, discard=card.text)
    assert seen == [1, 2, 3, 0, 1, 2, 3, 0, 1]


def test_r2_1_only_the_seat_to_move_may_act():
    game = new_game(deal(["R5 R6 B1 B2 B3 B4 B6 B7 B8 B9", "G1 G2 G3 G4 G6 G7 G8 G9 G10 G11"], "Y1", "Y2"))
    assert game.to_move == 1
    before = full_state(game)
    with pytest.raises(IllegalMove, match=r"^R2\.1"):
        game.apply(Draw("deck"), seat=0)
    assert full_state(game) == before
    game.apply(Draw("deck"), seat=1)
    assert game.to_move == 1 and game.decision == "play"


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_r2_2_each_player_gets_ten_cards_and_one_up_card_starts_the_discards(players):
    game = Game(Rules(), players, seed=40 + players)
    events = game.start()
    assert all(len(p.hand) == 10 for p in game.players)
    assert len(game.discard_pile) == 1
    assert len(game.draw_pile) == 108 - 10 * players - 1
    deal_event = the(events, "deal")
    assert deal_event["hand"] == 1
    assert deal_event["discard_top"] == game.discard_pile[-1].text
    assert game.view(1)["draw_size"] == 108 - 10 * players - 1


def test_r2_2_stacked_deal_is_dealt_as_written_with_the_draw_pile_top_first():
    hands = ["R5 R6 B1 B2 B3 B4 B6 B7 B8 B9", "G1 G2 G3 G4 G6 G7 G8 G9 G10 G11"]
    game = new_game(deal(hands, "Y4", "W S Y2"))
    assert [[c.text for c in p.hand] for p in game.players] == [h.split() for h in hands]
    assert game.view(1)["discard_top"] == "Y4"
    assert the(game.start_events, "deal")["discard_top"] == "Y4"
    draw(game)  # seat 1 gets the top of the draw pile: W
    assert game.players[1].hand[-1].text == "W"
    play(game, discard="G1")
    draw(game)  # then S
    assert game.players[0].hand[-1].text == "S"
    play(game, discard="R5")
    draw(game)  # then Y2
    assert game.players[1].hand[-1].text == "Y2"


def test_r2_2_every_hand_is_dealt_afresh_from_all_108_cards():
    game = new_game(deal(["R5 R6 B1 B2 B3 B4 B6 B7 B8 B9", "G1 G2 G3 G4 G6 G7 G8 G9 G10 G11"], "Y1"), turn_limit=2)
    pass_turn(game)
    events = pass_turn(game)  # the second turn stalls hand 1 (R8.4); hand 2 is dealt
    assert the(events, "hand_end")["hand"] == 1
    assert the(events, "deal")["hand"] == 2
    assert game.hand_no == 2 and game.table == []
    assert all(len(p.hand) == 10 for p in game.players)
    everything = [c for p in game.players for c in p.hand] + game.discard_pile + game.draw_pile
    assert Counter(everything) == Counter(DECK)


def test_r2_3_player_after_the_dealer_starts_and_the_dealer_moves_on():
    game = Game(Rules(turn_limit=3), 3, seed=9)
    events = game.start()
    dealers, firsts = [], []
    for hand_no in range(1, 5):
        deal_event = the(events, "deal")
        assert deal_event["hand"] == hand_no
        dealers.append(deal_event["dealer"])
        skipped = [e["seat"] for e in events_of(events, "skipped")]
        firsts.append(skipped[0] if skipped else game.to_move)
        events = []
        while not events_of(events, "hand_end"):
            events += pass_turn(game)
        events = events[events.index(the(events, "hand_end")) + 1:]
    assert dealers == [0, 1, 2, 0]
    assert firsts == [1, 2, 0, 1]


def test_r2_3_first_dealer_may_be_set_by_the_game():
    game = new_game(
        deal(["R5 R6 B1 B2 B3 B4 B6 B7 B8 B9", "G1 G2 G3 G4 G6 G7 G8 G9 G10 G11", "Y3 Y4 Y5 Y6 Y7 Y8 Y9 Y10 Y11 R12"], "Y1"),
        first_dealer=2,
    )
    assert game.dealer == 2 and game.view(0)["dealer"] == 2
    assert game.to_move == 0
    with pytest.raises(ValueError, match=r"^R2\.3"):
        Game(Rules(first_dealer=3), 3, seed=1)


HANDS_3 = [
    "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10",
    "B1 B2 B3 B4 B5 B6 B7 B8 B9 B10",
    "G1 G2 G3 G4 G5 G6 G7 G8 G9 G10",
]


def test_r2_4_skip_up_card_makes_the_first_player_lose_that_turn():
    game = new_game(deal(HANDS_3, "S", "Y1 Y2"))
    assert [e["e"] for e in game.start_events] == ["deal", "skipped"]
    assert the(game.start_events, "skipped")["seat"] == 1
    assert game.to_move == 2 and game.decision == "draw"
    assert len(game.players[1].hand) == 10  # nothing drawn (R6.4)
    assert game.players[1].skip_pending is False  # served
    draw(game)
    assert game.players[2].hand[-1].text == "Y1"


def test_r2_4_skip_up_card_with_two_players_gives_the_turn_to_the_dealer():
    game = new_game(deal(HANDS_3[:2], "S"))
    assert the(game.start_events, "skipped")["seat"] == 1
    assert game.to_move == 0


def test_r2_5_wild_up_card_may_be_taken_like_any_discard():
    game = new_game(deal(HANDS_3[:2], "W"))
    assert game.view(1)["can_take_discard"] is True
    events = draw(game, "discard")
    assert events == [{"e": "draw", "seat": 1, "from": "discard", "card": "W"}]
    assert hand(game, 1)["W"] == 1 and len(game.players[1].hand) == 11
    assert game.view(1)["discard_top"] is None


def test_r2_5_wild_up_card_may_also_be_left():
    game = new_game(deal(HANDS_3[:2], "W", "Y5"))
    draw(game, "deck")
    assert game.players[1].hand[-1].text == "Y5"
    assert game.discard_pile[-1].text == "W"


# ---------------------------------------------------------------------------------------
# R3 A turn
# ---------------------------------------------------------------------------------------


def test_r3_1_draw_from_the_deck_takes_the_top_card_of_the_draw_pile():
    game = new_game(deal(HANDS_3[:2], "Y1", "Y7 Y8"))
    size = len(game.draw_pile)
    events = draw(game, "deck")
    assert events == [{"e": "draw", "seat": 1, "from": "deck"}]
    assert game.players[1].hand[-1].text == "Y7"
    assert len(game.draw_pile) == size - 1
    assert game.discard_pile[-1].text == "Y1"


def test_r3_1_only_the_top_discard_may_be_taken():
    game = new_game(deal(HANDS_3[:2], "Y1", "Y7 Y8"))
    turn(game, discard="B3")  # seat 1: the discard pile is now Y1, B3
    events = draw(game, "discard")
    assert events == [{"e": "draw", "seat": 0, "from": "discard", "card": "B3"}]
    assert hand(game, 0)["B3"] == 1 and hand(game, 0)["Y1"] == 0
    assert [c.text for c in game.discard_pile] == ["Y1"]


def test_r3_1_exactly_one_card_is_drawn_each_turn():
    game = new_game(deal(HANDS_3[:2], "Y1", "Y7 Y8"))
    assert_illegal(game, {"discard": "B1"}, "R3.1")  # must draw first
    draw(game)
    assert_illegal(game, Draw("deck"), "R3.1")  # not a second card
    assert_illegal(game, Draw("discard"), "R3.1")
    assert len(game.players[1].hand) == 11


def test_r3_2_a_skip_can_never_be_taken_from_the_discard_pile():
    game = new_game(deal([HANDS_3[0], "B1 B2 B3 B4 B5 B6 B7 B8 B9 S", HANDS_3[2]], "Y1", "Y7 Y8"))
    turn(game, discard="S", skip=0)
    assert game.view(2)["can_take_discard"] is False
    assert game.view(2)["discard_top"] == "S"
    assert_illegal(game, Draw("discard"), "R3.2")
    draw(game, "deck")  # the deck is fine


def test_r3_2_a_skip_up_card_cannot_be_taken_either():
    game = new_game(deal(HANDS_3, "S"))
    assert game.to_move == 2
    assert_illegal(game, Draw("discard"), "R3.2")


SET_RULES = Rules.from_dict({"phases": [{"melds": [{"kind": "set", "size": 2}]}], "turn_limit": 50})


def test_r3_3_the_phase_is_laid_at_most_once_per_hand():
    # Custom phase "1 set of 2" so that a second lay would otherwise be possible.
    game = new_game(deal([HANDS_3[2], "R3 B3 R7 B7 G7 Y7 Y1 Y2 Y4 Y5"], "Y12", "R12 G12 B12"), rules=SET_RULES)
    turn(game, lay=[["R3", "B3"]], discard="R12")
    assert game.players[1].laid
    pass_turn(game)
    draw(game)
    assert_illegal(game, {"lay": [["R7", "B7", "G7"]], "discard": "Y1"}, "R3.3")
    play(game, discard="Y1")  # without the lay it is fine


def test_r3_3_laying_is_optional():
    game = new_game(deal([HANDS_3[2], OUT_1], "Y12", "R12"))
    events = turn(game, discard="R12")
    assert not game.players[1].laid and game.table == []
    assert not events_of(events, "lay")


def test_r3_3_laid_cards_must_come_from_the_hand():
    game = new_game(deal([HANDS_3[2], "R1 B1 G1 R2 B2 Y5 Y6 Y7 Y8 Y9"], "Y12", "R12"))
    draw(game)
    assert_illegal(game, {"lay": [["R1", "B1", "G1"], ["R2", "B2", "G2"]], "discard": "R12"}, "R3.3")


# Seat 1 lays 3s and 7s; seat 0 lays 5s and 9s and may hit the 3s and 7s.
LAY_HIT = deal(
    ["R5 B5 G5 R9 B9 G9 Y3 Y7 Y11 Y12", "R3 B3 G3 R7 B7 G7 Y1 Y2 B11 G3"],
    "B12",
    "R12 G12 B7 R10",
)


def test_r3_4_no_hits_before_the_own_phase_is_on_the_table():
    game = new_game(LAY_HIT)
    turn(game, lay=[["R3", "B3", "G3"], ["R7", "B7", "G7"]], discard="R12")
    draw(game)  # seat 0 has not laid
    assert_illegal(game, {"hits": [{"card": "Y3", "meld": 0}], "discard": "G12"}, "R3.4", "R7.2")


def test_r3_4_lay_and_hit_in_the_same_turn():
    game = new_game(LAY_HIT)
    turn(game, lay=[["R3", "B3", "G3"], ["R7", "B7", "G7"]], discard="R12")
    events = turn(
        game,
        lay=[["R5", "B5", "G5"], ["R9", "B9", "G9"]],
        hits=[{"card": "Y3", "meld": 0}, {"card": "Y7", "meld": 1}],
        discard="G12",
    )
    assert [e["e"] for e in events] == ["draw", "lay", "hit", "hit", "discard"]
    assert the(events, "lay")["melds"] == [2, 3]
    assert [(e["card"], e["meld"]) for e in events_of(events, "hit")] == [("Y3", 0), ("Y7", 1)]
    assert game.view(0)["table"][0]["cards"] == ["R3", "B3", "G3", "Y3"]
    assert game.view(0)["table"][1]["cards"] == ["R7", "B7", "G7", "Y7"]
    assert game.table[0].owner == 1 and game.table[2].owner == 0
    assert hand(game, 0) == Counter(["Y11", "Y12"])


def test_r3_4_hits_on_a_later_turn_on_own_melds():
    game = new_game(LAY_HIT)
    turn(game, lay=[["R3", "B3", "G3"], ["R7", "B7", "G7"]], discard="R12")
    pass_turn(game)
    events = turn(game, hits=[{"card": "G3", "meld": 0}, {"card": "B7", "meld": 1}], discard="Y1")
    assert [e["e"] for e in events] == ["draw", "hit", "hit", "discard"]
    assert game.table[0].cards == tuple(cards("R3 B3 G3 G3"))
    assert game.table[1].cards == tuple(cards("R7 B7 G7 B7"))


def test_r3_4_melds_laid_in_the_same_reply_are_laid_longer_not_hit():
    game = new_game(LAY_HIT)
    draw(game)
    assert_illegal(
        game,
        {"lay": [["R3", "B3", "G3"], ["R7", "B7", "G7"]], "hits": [{"card": "G3", "meld": 0}], "discard": "R12"},
        "R3.4",
    )
    play(game, lay=[["R3", "B3", "G3", "G3"], ["R7", "B7", "G7"]], discard="R12")
    assert len(game.table[0].cards) == 4


def test_r3_5_a_turn_ends_with_exactly_one_discard_from_the_hand():
    game = new_game(LAY_HIT)
    draw(game)
    assert_illegal(game, {}, "R3.5")  # no discard
    assert_illegal(game, {"lay": [["R3", "B3", "G3"], ["R7", "B7", "G7"]]}, "R3.5")
    assert_illegal(game, {"discard": "Y12"}, "R3.5")  # not in hand
    events = play(game, discard="R12")
    assert the(events, "discard") == {"e": "discard", "seat": 1, "card": "R12", "skip": None}
    assert len(game.players[1].hand) == 10 and game.discard_pile[-1].text == "R12"
    assert game.to_move == 0


def test_r3_5_a_card_hit_and_discarded_breaks_r3_5_even_with_a_lay():
    """The lay is fine; the hit and the discard use one Y3 twice: the discard is what the
    hand cannot give (R3.5), with or without the lay."""
    game = new_game(LAY_HIT)
    turn(game, lay=[["R3", "B3", "G3"], ["R7", "B7", "G7"]], discard="R12")
    draw(game)
    with_lay = {"lay": [["R5", "B5", "G5"], ["R9", "B9", "G9"]], "hits": [{"card": "Y3", "meld": 0}], "discard": "Y3"}
    e = assert_illegal(game, with_lay, "R3.5")
    assert "2 × Y3 (1 hit, 1 discarded)" in str(e) and "holds 1" in str(e)
    # a lay that names a card the hand lacks is still the lay's fault
    assert_illegal(game, {"lay": [["R5", "B5", "G5"], ["R9", "B9", "Y9"]], "discard": "Y3"}, "R3.3")


# Seat 1 lays two sets of 3 and goes out by hitting every card it has left.
OUT_BY_HIT = deal([HANDS_3[2], "R1 B1 G1 R2 B2 G2 Y1 Y2 W W"], "Y12", "R12 G12 W")


def test_r3_5_going_out_by_hits_needs_no_discard():
    game = new_game(OUT_BY_HIT)
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")
    pass_turn(game)
    draw(game)
    hits = [
        {"card": "Y1", "meld": 0}, {"card": "W", "meld": 0},
        {"card": "Y2", "meld": 1}, {"card": "W", "meld": 1}, {"card": "W", "meld": 1},
    ]
    events = play(game, hits=hits)
    assert [e["e"] for e in events[:7]] == ["hit"] * 5 + ["out", "hand_end"]
    assert the(events, "hand_end")["winner"] == 1


def test_r3_5_a_discard_with_an_empty_hand_is_rejected():
    game = new_game(OUT_BY_HIT)
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")
    pass_turn(game)
    draw(game)
    hits = [
        {"card": "Y1", "meld": 0}, {"card": "W", "meld": 0},
        {"card": "Y2", "meld": 1}, {"card": "W", "meld": 1}, {"card": "W", "meld": 1},
    ]
    for extra in ("W", "Y1", "R12"):
        assert_illegal(game, {"hits": hits, "discard": extra}, "R3.5")


def test_r3_5_a_play_naming_more_cards_than_the_hand_holds_is_refused_before_its_melds():
    """A play that names more cards (laid, hit and discarded) than the hand holds is
    refused at once, whatever its melds: 40,000 hits of one Wild on a set (each would copy
    the growing meld) cost no more than one."""
    game = _hits_game()
    pass_turn(game)
    draw(game)  # seat 1 holds Y8 W S R3
    e = assert_illegal(game, {"hits": [{"card": "W", "meld": 0}] * 40_000, "discard": "S", "skip": 0}, "R3.5")
    assert "40001 cards" in str(e) and "holds 4" in str(e)
    e = assert_illegal(game, {"lay": [["W"] * 5_000], "discard": "S", "skip": 0}, "R3.3")
    assert "5001 cards" in str(e)


def test_r3_5_going_out_by_laying_needs_no_discard():
    # 10 cards plus the one drawn, all laid in two long sets: nothing is left to discard.
    game = new_game(deal([HANDS_3[2], "R1 B1 G1 Y1 W R2 B2 G2 Y2 W"], "Y12", "R1"))
    draw(game)
    events = play(game, lay=[["R1", "B1", "G1", "Y1", "W", "R1"], ["R2", "B2", "G2", "Y2", "W"]])
    assert [e["e"] for e in events[:3]] == ["lay", "out", "hand_end"]


def test_r3_6_laying_and_hitting_only_on_own_turn_between_draw_and_discard():
    game = new_game(LAY_HIT)
    lay = Play(lay=(tuple(cards("R3 B3 G3")), tuple(cards("R7 B7 G7"))), discard=Card.parse("R12"))
    # Before the draw: not yet.
    assert_illegal(game, lay, "R3.1", "R3.6")
    draw(game)
    # Not seat 0's turn: seat 0 may not lay or hit now.
    before = full_state(game)
    other = Play(lay=(tuple(cards("R5 B5 G5")), tuple(cards("R9 B9 G9"))), discard=Card.parse("Y12"))
    with pytest.raises(IllegalMove, match=r"^(R2\.1|R3\.6):"):
        game.apply(other, seat=0)
    assert full_state(game) == before
    game.apply(lay, seat=1)
    # After the discard the turn is over: seat 1 cannot hit until its next turn.
    after = full_state(game)
    with pytest.raises(IllegalMove, match=r"^(R2\.1|R3\.6):"):
        game.apply(Play(hits=(Hit(Card.parse("G3"), 0),), discard=Card.parse("Y1")), seat=1)
    assert full_state(game) == after


def test_r3_7_discards_but_the_top_are_reshuffled_when_the_draw_pile_is_empty():
    game = Game(Rules(), 2, seed=4)
    game.start()
    while game.draw_pile:
        pass_turn(game)
    assert game.hand_no == 1 and game.decision == "draw"
    discards = list(game.discard_pile)
    assert len(discards) == 108 - 20
    events = draw(game, "deck")
    assert events[0] == {"e": "reshuffle", "draw_size": len(discards) - 1}
    assert events[1]["e"] == "draw" and events[1]["from"] == "deck"
    assert game.discard_pile == [discards[-1]]  # the top one stays
    drawn = game.players[game.to_move].hand[-1]
    assert Counter(game.draw_pile + [drawn]) == Counter(discards[:-1])
    assert game.view(0)["draw_size"] == len(discards) - 2


def test_r3_7_with_no_discards_to_reshuffle_only_the_top_discard_can_be_drawn():
    game = new_game(deal(HANDS_3[:2], "Y1"))
    # A state only reachable by manipulation: the draw pile is empty and the discard pile
    # holds just its top card.
    game.draw_pile.clear()
    assert_illegal(game, Draw("deck"), "R3.7")
    draw(game, "discard")


# ---------------------------------------------------------------------------------------
# R4 Melds
# ---------------------------------------------------------------------------------------


def test_r4_1_a_set_is_cards_of_one_number_any_colours():
    game = new_game(deal([HANDS_3[2], "R4 B4 G4 Y4 R8 R8 Y8 W Y1 Y2"], "Y12", "R12"))
    draw(game)
    assert_illegal(game, {"lay": [["R4", "B4", "G4"], ["R8", "Y8", "Y1"]], "discard": "R12"}, "R4.1")
    events = play(game, lay=[["R4", "B4", "G4", "Y4"], ["R8", "R8", "Y8", "W"]], discard="R12")
    assert [m["number"] for m in game.view(0)["table"]] == [4, 8]
    assert [m["kind"] for m in game.view(0)["table"]] == ["set", "set"]
    assert the(events, "lay")["cards"] == [["R4", "B4", "G4", "Y4"], ["R8", "R8", "Y8", "W"]]


RUN_RULES = Rules(phases=(PHASES[2], PHASES[3]))  # 1 set of 3 + 1 run of 4


def test_r4_2_a_run_is_four_or_more_consecutive_numbers_any_colours():
    game = new_game(deal([HANDS_3[2], "R9 B9 G9 R4 B5 G6 Y7 Y8 Y1 Y2"], "Y12", "R12"), rules=RUN_RULES)
    draw(game)
    assert_illegal(game, {"lay": [["R9", "B9", "G9"], ["R4", "B5", "G6"]], "discard": "R12"}, "R5.2")  # 3 only
    assert_illegal(game, {"lay": [["R9", "B9", "G9"], ["R4", "B5", "Y7", "Y8"]], "discard": "R12"}, "R4.2")  # gap
    play(game, lay=[["R9", "B9", "G9"], ["R4", "B5", "G6", "Y7", "Y8"]], discard="R12")
    run = game.view(0)["table"][1]
    assert (run["kind"], run["low"], run["high"]) == ("run", 4, 8)


def test_r4_2_a_run_stays_within_1_to_12_and_does_not_wrap():
    game = new_game(deal([HANDS_3[2], "R9 B9 G9 R11 B12 G1 G2 W W Y1"], "Y12", "R12"), rules=RUN_RULES)
    draw(game)
    assert_illegal(game, {"lay": [["R9", "B9", "G9"], ["R11", "B12", "G1", "G2"]], "discard": "R12"}, "R4.2")
    assert_illegal(game, {"lay": [["R9", "B9", "G9"], ["R11", "B12", "W", "W"]], "discard": "R12"}, "R4.2")
    assert_illegal(game, {"lay": [["R9", "B9", "G9"], ["W", "W", "G1", "G2"]], "discard": "R12"}, "R4.2")
    assert_illegal(game, {"lay": [["R9", "B9", "G9"], ["W", "G1", "G2", "W"]], "discard": "R12"}, "R4.2")
    play(game, lay=[["R9", "B9", "G9"], ["W", "W", "R11", "B12"]], discard="R12")
    run = game.table[1]
    assert (run.low, run.high) == (9, 12)


def test_r4_3_a_colour_meld_is_cards_of_one_colour():
    game = new_game(deal([HANDS_3[2], "R1 R3 R5 R7 R9 R11 B2 R2 W S"], "Y12", "G6"), rules=Rules(phases=(PHASES[8],)))
    draw(game)
    assert_illegal(game, {"lay": [["R1", "R3", "R5", "R7", "R9", "R11", "B2"]], "discard": "G6"}, "R4.3")
    play(game, lay=[["R1", "R3", "R5", "R7", "R9", "R11", "R2"]], discard="G6")
    meld = game.view(0)["table"][0]
    assert (meld["kind"], meld["color"]) == ("color", "red")


def test_r4_4_wilds_stand_for_any_card_several_in_one_meld():
    game = new_game(deal([HANDS_3[2], "R9 W W R4 W W Y7 Y8 Y1 Y2"], "Y12", "R12"), rules=RUN_RULES)
    draw(game)
    play(game, lay=[["R9", "W", "W"], ["R4", "W", "W", "Y7", "Y8"]], discard="R12")
    s, r = game.view(0)["table"]
    assert s["number"] == 9 and s["cards"] == ["R9", "W", "W"]
    # The run's Wilds take the numbers of their places: 5 and 6.
    assert (r["low"], r["high"], r["cards"]) == (4, 8, ["R4", "W", "W", "Y7", "Y8"])


def test_r4_4_a_run_may_start_or_end_with_wilds():
    game = new_game(deal([HANDS_3[2], "R9 B9 G9 W W R3 B4 Y1 Y2 G11"], "Y12", "R12"), rules=RUN_RULES)
    draw(game)
    play(game, lay=[["R9", "B9", "G9"], ["W", "R3", "B4", "W"]], discard="R12")
    assert (game.table[1].low, game.table[1].high) == (2, 5)


def test_r4_5_a_meld_must_hold_a_natural_card():
    game = new_game(deal([HANDS_3[2], "R9 B9 G9 W W W W Y7 Y1 Y2"], "Y12", "R12"), rules=RUN_RULES)
    draw(game)
    assert_illegal(game, {"lay": [["R9", "B9", "G9"], ["W", "W", "W", "W"]], "discard": "R12"}, "R4.5")
    game2 = new_game(deal([HANDS_3[2], "W W W R3 B3 G3 Y7 Y8 Y1 Y2"], "Y12", "R12"))
    draw(game2)
    assert_illegal(game2, {"lay": [["W", "W", "W"], ["R3", "B3", "G3"]], "discard": "R12"}, "R4.5")


def test_r4_6_a_skip_is_never_part_of_a_meld():
    game = new_game(deal([HANDS_3[2], "R3 B3 S R7 B7 G7 Y7 Y8 Y1 Y2"], "Y12", "R12"))
    draw(game)
    assert_illegal(game, {"lay": [["R3", "B3", "S"], ["R7", "B7", "G7"]], "discard": "R12"}, "R4.6")


def test_r4_6_a_skip_can_never_be_hit():
    game = _hits_game()  # seat 1 laid a set of 9s and a run 4..7 and holds a Skip
    pass_turn(game)
    draw(game)
    assert_illegal(game, {"hits": [{"card": "S", "meld": 0}], "discard": "R3"}, "R4.6")
    assert_illegal(game, {"hits": [{"card": "S", "meld": 1, "end": "low"}], "discard": "R3"}, "R4.6")
    assert game.table[0].can_hit(Card.parse("S")) == []


def test_r4_7_a_wild_on_the_table_stays_where_it_is():
    game = new_game(deal([HANDS_3[2], "R9 B9 G9 R4 W B6 Y7 B5 Y1 Y2"], "Y12", "R12 G12 Y5"), rules=RUN_RULES)
    turn(game, lay=[["R9", "B9", "G9"], ["R4", "W", "B6", "Y7"]], discard="R12")
    pass_turn(game)
    draw(game)  # Y5
    # A natural 5 cannot take the Wild's place (nor be added beside it): the run takes 3 or 8.
    err = assert_illegal(game, {"hits": [{"card": "B5", "meld": 1}], "discard": "Y1"}, "R4.7")
    assert "stands for 5" in str(err) and "takes 3 or 8" in str(err)
    assert_illegal(game, {"hits": [{"card": "Y5", "meld": 1, "end": "low"}], "discard": "Y1"}, "R4.7")
    play(game, discard="Y1")
    assert game.table[1].cards == tuple(cards("R4 W B6 Y7"))
    assert (game.table[1].low, game.table[1].high) == (4, 7)


def test_r4_7_a_wild_keeps_its_place_as_the_run_grows():
    meld = Meld(0, 0, "run", tuple(cards("R4 W B6 Y7")), low=4, high=7)
    meld, _ = meld.hit(Card.parse("G8"))
    meld, _ = meld.hit(Card.parse("W"), "low")
    meld, _ = meld.hit(Card.parse("R2"))
    assert [c.text for c in meld.cards] == ["R2", "W", "R4", "W", "B6", "Y7", "G8"]
    assert (meld.low, meld.high) == (2, 8)


# ---------------------------------------------------------------------------------------
# R5 Phases
# ---------------------------------------------------------------------------------------


def test_r5_1_the_ten_phases_in_order():
    expected = {
        1: [("set", 3), ("set", 3)],
        2: [("set", 3), ("run", 4)],
        3: [("set", 4), ("run", 4)],
        4: [("run", 7)],
        5: [("run", 8)],
        6: [("run", 9)],
        7: [("set", 4), ("set", 4)],
        8: [("color", 7)],
        9: [("set", 5), ("set", 2)],
        10: [("set", 5), ("set", 3)],
    }
    assert [p.number for p in STANDARD_PHASES] == list(range(1, 11))
    for p in STANDARD_PHASES:
        assert [(m.kind, m.size) for m in p.melds] == expected[p.number]
    assert Rules().phases == STANDARD_PHASES
    assert PHASES[1].describe() == "2 sets of 3" and PHASES[8].describe() == "7 cards of one colour"


def test_r5_1_everyone_starts_on_phase_1_and_moves_through_the_phases_in_order():
    game = new_game(
        deal([HANDS_3[2], OUT_1], "Y12", "R12"),
        deal([HANDS_3[2], "R5 B5 G5 R6 B7 G8 Y9 W W W"], "Y12", "R12"),
    )
    assert [game.view(s)["phase"]["number"] for s in (0, 1)] == [1, 1]
    events = turn(game, lay=OUT_1_LAY, discard="R12")
    assert the(events, "hand_end")["phases"] == [1, 2]
    assert game.view(1)["phase"] == {"number": 2, "melds": [{"kind": "set", "size": 3}, {"kind": "run", "size": 4}]}
    assert game.view(0)["phase"]["number"] == 1


def test_r5_2_a_phase_is_laid_whole_not_in_part():
    game = new_game(deal([HANDS_3[2], "R3 B3 G3 R7 B7 Y1 Y2 Y4 Y5 Y6"], "Y12", "R12"))
    draw(game)
    assert_illegal(game, {"lay": [["R3", "B3", "G3"]], "discard": "R12"}, "R5.2")  # one set of two
    assert_illegal(game, {"lay": [["R3", "B3", "G3"], ["R7", "B7"]], "discard": "R12"}, "R5.2")  # too short
    assert_illegal(game, {"lay": [], "discard": "R12"}, "R5.2")
    assert game.table == [] and not game.players[1].laid


def test_r5_3_only_the_current_phase_may_be_laid():
    game = new_game(deal([HANDS_3[2], "R1 B2 G3 Y4 R5 B6 G7 Y1 Y2 Y3"], "Y12", "R12"))
    draw(game)  # seat 1 is on phase 1; a run of 7 is phase 4
    err = assert_illegal(game, {"lay": [["R1", "B2", "G3", "Y4", "R5", "B6", "G7"]], "discard": "R12"}, "R5.3")
    assert "phase 4" in str(err) and "works on phase 1" in str(err)


def test_r5_3_a_phase_laid_counts_for_that_phase_only():
    rules = Rules.from_dict({"phases": [4, 5, 6]})
    game = new_game(deal([HANDS_3[2], "R1 B2 G3 Y4 R5 B6 G7 Y8 R9 W"], "Y12", "R12"), rules=rules)
    assert game.view(1)["phase"]["number"] == 4
    draw(game)
    # A run of 10 (1..10) laid for phase 4 (run of 7) ...
    events = play(game, lay=[["R1", "B2", "G3", "Y4", "R5", "B6", "G7", "Y8", "R9", "W"]], discard="R12")
    # ... does not also do phase 5 or 6.
    assert the(events, "hand_end")["phases"] == [4, 5]
    assert game.players[1].completed == 1


def test_r5_4_a_meld_may_be_laid_longer_than_its_minimum():
    game = new_game(deal([HANDS_3[2], "R3 B3 G3 Y3 W R7 B7 G7 Y1 Y2"], "Y12", "R12"))
    draw(game)
    play(game, lay=[["R3", "B3", "G3", "Y3", "W"], ["R7", "B7", "G7"]], discard="R12")
    assert [len(m.cards) for m in game.table] == [5, 3]


def test_r5_4_no_meld_beyond_those_the_phase_names():
    game = new_game(deal([HANDS_3[2], "R3 B3 G3 R7 B7 G7 R9 B9 G9 Y1"], "Y12", "R12"))
    draw(game)
    assert_illegal(
        game, {"lay": [["R3", "B3", "G3"], ["R7", "B7", "G7"], ["R9", "B9", "G9"]], "discard": "R12"}, "R5.4"
    )
    play(game, lay=[["R3", "B3", "G3"], ["R7", "B7", "G7"]], discard="R12")


def test_r5_4_the_melds_of_a_phase_are_disjoint():
    game = new_game(deal([HANDS_3[2], "R3 B3 G3 W R7 B7 Y1 Y2 Y4 Y5"], "Y12", "R12"))
    draw(game)
    # The same Wild cannot serve in both sets.
    assert_illegal(game, {"lay": [["R3", "B3", "W"], ["R7", "B7", "W"]], "discard": "R12"}, "R3.3", "R5.4")


def test_r5_4_the_melds_may_be_listed_in_any_order():
    game = new_game(deal([HANDS_3[2], "R9 B9 G9 R4 B5 G6 Y7 Y8 Y1 Y2"], "Y12", "R12"), rules=RUN_RULES)
    draw(game)
    play(game, lay=[["R4", "B5", "G6", "Y7"], ["R9", "B9", "G9"]], discard="R12")
    assert [m.kind for m in game.table] == ["run", "set"]


def test_r5_5_two_sets_of_a_phase_may_be_of_the_same_number():
    game = new_game(deal([HANDS_3[2], "R3 B3 G3 Y3 R3 W Y1 Y2 Y4 Y5"], "Y12", "R12"))
    draw(game)
    play(game, lay=[["R3", "B3", "G3"], ["Y3", "R3", "W"]], discard="R12")
    assert [m.number for m in game.table] == [3, 3]


def test_r5_6_the_extra_phases_11_to_20():
    expected = {
        11: [("set", 2)] * 4,
        12: [("set", 4), ("run", 5)],
        13: [("set", 5), ("run", 5)],
        14: [("run", 4), ("color", 4)],
        15: [("set", 5), ("color", 4)],
        16: [("run", 10)],
        17: [("set", 4), ("set", 5)],
        18: [("color", 9)],
        19: [("set", 6), ("set", 2)],
        20: [("set", 6), ("set", 3)],
    }
    for number, melds in expected.items():
        assert [(m.kind, m.size) for m in PHASES[number].melds] == melds
    assert sorted(PHASES) == list(range(1, 21))


def test_r5_6_an_extra_phase_is_played_like_the_others():
    rules = Rules.from_dict({"phases": [14, 11]})
    game = new_game(deal([HANDS_3[2], "R1 B2 G3 Y4 G5 G7 G9 G11 Y1 Y2"], "Y12", "R12"), rules=rules)
    assert game.view(1)["phase"]["number"] == 14
    draw(game)
    assert_illegal(game, {"lay": [["R1", "B2", "G3", "Y4"], ["G5", "G7", "G9", "Y1"]], "discard": "R12"}, "R4.3")
    play(game, lay=[["R1", "B2", "G3", "Y4"], ["G5", "G7", "G9", "G11"]], discard="R12")
    assert [m.kind for m in game.table] == ["run", "color"]


# ---------------------------------------------------------------------------------------
# R6 Skips
# ---------------------------------------------------------------------------------------

SKIPS_3 = deal(
    ["R1 R2 R3 R4 R5 R6 R7 R8 R9 S", "B1 B2 B3 B4 B5 B6 B7 B8 S S", "G1 G2 G3 G4 G5 G6 G7 G8 G9 S"],
    "Y12",
    "Y1 Y2 Y3 Y4 Y5 Y6 Y7 Y8",
)


def test_r6_1_a_skip_discard_names_another_player_who_loses_the_next_turn():
    game = new_game(SKIPS_3)
    events = turn(game, discard="S", skip=0)  # seat 1 names seat 0
    assert the(events, "discard") == {"e": "discard", "seat": 1, "card": "S", "skip": 0}
    assert game.players[0].skip_pending and game.view(2)["players"][0]["skip_pending"] is True
    assert game.to_move == 2
    events = pass_turn(game)  # seat 2; then seat 0 loses its turn
    assert the(events, "skipped") == {"e": "skipped", "seat": 0}
    assert game.to_move == 1 and not game.players[0].skip_pending


def test_r6_1_a_skip_must_name_one_other_player():
    game = new_game(SKIPS_3)
    draw(game)
    assert_illegal(game, {"discard": "S"}, "R6.1")  # naming no one while others may be named
    assert_illegal(game, {"discard": "S", "skip": 1}, "R6.1")  # not oneself
    assert_illegal(game, {"discard": "S", "skip": 3}, "R6.1")  # not a seat
    assert_illegal(game, {"discard": "S", "skip": -1}, "R6.1")
    play(game, discard="S", skip=2)


def test_r6_1_a_skip_is_played_only_as_a_discard():
    game = new_game(SKIPS_3)
    draw(game)
    assert_illegal(game, {"discard": "B1", "skip": 2}, "R6.1")  # only a Skip discard names a player


def test_r6_1_with_two_players_the_skipper_plays_again():
    game = new_game(deal(HANDS_3[:1] + ["B1 B2 B3 B4 B5 B6 B7 B8 B9 S"], "Y12", "Y1 Y2"))
    events = turn(game, discard="S", skip=0)
    assert the(events, "skipped")["seat"] == 0
    assert game.to_move == 1 and game.decision == "draw"


def test_r6_2_cannot_skip_a_player_twice():
    game = new_game(SKIPS_3)
    turn(game, discard="S", skip=0)  # seat 1 names seat 0
    draw(game)  # seat 2
    err = assert_illegal(game, {"discard": "S", "skip": 0}, "R6.2")
    assert "pending" in str(err)
    assert game.skip_targets(2) == [1]
    events = play(game, discard="S", skip=1)
    # seat 0 serves its skip, then seat 1 serves its own: seat 2 plays again.
    assert [e["seat"] for e in events_of(events, "skipped")] == [0, 1]
    assert game.to_move == 2


def test_r6_2_a_served_skip_may_be_given_again():
    game = new_game(SKIPS_3)
    turn(game, discard="S", skip=0)
    pass_turn(game)  # seat 2; seat 0 serves its skip
    assert game.to_move == 1
    turn(game, discard="S", skip=0)  # seat 1's second Skip
    assert game.players[0].skip_pending


def test_r6_2_pending_skips_are_cleared_when_a_hand_ends():
    # Three players, turn limit 2: seat 1 names seat 0 (whose turn comes after seat 2's),
    # and seat 2's turn stalls the hand before seat 0's skip is served.
    game = new_game(
        deal(["R3 R4 R5 R6 R7 R8 R9 R10 R11 B3", "R1 B1 G1 R2 B2 G2 S Y1 Y2 Y3", "G3 G4 G5 G6 G7 G8 G9 G10 G11 B9"],
             "Y12", "W"),
        rules=Rules(phases=(PHASES[1],), turn_limit=2, hand_limit=2),
    )
    turn(game, discard="S", skip=0)
    assert game.players[0].skip_pending
    events = pass_turn(game)  # seat 2: the hand stalls
    assert the(events, "hand_end")["stalled"] is True
    assert not events_of(events, "skipped")
    assert [p.skip_pending for p in game.players] == [False, False, False]
    assert all(not p["skip_pending"] for p in game.view(1)["players"])


def test_r6_3_if_every_other_player_has_a_skip_pending_a_skip_names_no_one():
    game = new_game(SKIPS_3)
    draw(game)  # seat 1
    # The rule's situation, set up directly (ordinary play serves a skip before the
    # player to move can discard again).
    game.players[0].skip_pending = True
    game.players[2].skip_pending = True
    assert game.skip_targets(1) == []
    assert_illegal(game, {"discard": "S", "skip": 0}, "R6.2")
    assert_illegal(game, {"discard": "S", "skip": 2}, "R6.2")
    events = play(game, discard="S")
    assert the(events, "discard")["skip"] is None
    # No effect beyond the skips already pending: seat 2 and seat 0 serve those.
    assert [e["seat"] for e in events_of(events, "skipped")] == [2, 0]
    assert game.to_move == 1


def test_r6_3_a_skip_that_can_name_someone_must_name_them():
    game = new_game(SKIPS_3)
    draw(game)
    game.players[0].skip_pending = True
    assert game.skip_targets(1) == [2]
    assert_illegal(game, {"discard": "S"}, "R6.1")


def test_r6_4_losing_a_turn_means_drawing_laying_hitting_and_discarding_nothing():
    game = new_game(SKIPS_3)
    before_hand = hand(game, 0)
    turn(game, discard="S", skip=0)
    draw_size = len(game.draw_pile)
    discard_top = game.discard_pile[-1]
    events = pass_turn(game)  # seat 2 draws 1 and discards it; seat 0 is skipped
    assert [e["e"] for e in events] == ["draw", "discard", "skipped"]
    assert hand(game, 0) == before_hand
    assert len(game.draw_pile) == draw_size - 1
    assert game.discard_pile[-2] is discard_top
    assert game.to_move == 1


# ---------------------------------------------------------------------------------------
# R7 Hitting
# ---------------------------------------------------------------------------------------

# Seat 1 lays a set of 9s (meld 0) and a run 4..7 (meld 1) and keeps Y8 W S for hits.
HITS = deal(
    ["R5 B5 G5 R2 B3 G4 Y5 R11 B11 G3", "R9 B9 G9 R4 B5 G6 Y7 Y8 W S"],
    "Y12",
    "G12 R12 R3 Y9 B2",
)


def _hits_game() -> Game:
    game = new_game(HITS, rules=RUN_RULES)
    turn(game, lay=[["R9", "B9", "G9"], ["R4", "B5", "G6", "Y7"]], discard="G12")
    return game


def test_r7_1_hits_on_own_melds_set_takes_its_number_run_takes_either_end():
    game = _hits_game()
    pass_turn(game)  # seat 0 draws R12 and discards it
    draw(game)  # seat 1 draws R3
    assert_illegal(game, {"hits": [{"card": "R3", "meld": 0}], "discard": "S", "skip": 0}, "R7.1")  # set of 9s
    assert_illegal(game, {"hits": [{"card": "Y8", "meld": 0}], "discard": "S", "skip": 0}, "R7.1")
    assert_illegal(game, {"hits": [{"card": "Y8", "meld": 7}], "discard": "S", "skip": 0}, "R7.1")  # no meld 7
    events = play(game, hits=[{"card": "Y8", "meld": 1}, {"card": "R3", "meld": 1}], discard="S", skip=0)
    assert [(e["card"], e["meld"], e["end"]) for e in events_of(events, "hit")] == [("Y8", 1, "high"), ("R3", 1, "low")]
    assert (game.table[1].low, game.table[1].high) == (3, 8)
    assert [c.text for c in game.table[1].cards] == ["R3", "R4", "B5", "G6", "Y7", "Y8"]


def test_r7_1_hits_on_another_players_melds_and_in_list_order():
    game = _hits_game()
    draw(game)  # seat 0 draws R12
    events = play(
        game,
        lay=[["R5", "B5", "G5"], ["R2", "B3", "G4", "Y5"]],
        hits=[{"card": "G3", "meld": 1}],
        discard="R12",
    )
    assert the(events, "hit") == {"e": "hit", "seat": 0, "card": "G3", "meld": 1, "end": "low"}
    assert game.table[1].owner == 1 and (game.table[1].low, game.table[1].high) == (3, 7)
    pass_turn(game)  # seat 1 draws R3... and discards it
    draw(game)  # seat 0 draws Y9 (then B2 is next)
    # Y9 fits the set of 9s (seat 1's); R11 fits nothing; order matters within a reply.
    assert_illegal(game, {"hits": [{"card": "R11", "meld": 0}], "discard": "B11"}, "R7.1")
    play(game, hits=[{"card": "Y9", "meld": 0}], discard="R11")
    assert [c.text for c in game.table[0].cards] == ["R9", "B9", "G9", "Y9"]


def test_r7_1_hits_apply_in_list_order():
    game = _hits_game()
    pass_turn(game)
    draw(game)  # seat 1 draws R3; has Y8 W S R3
    # W on the high end makes 8, so Y8 no longer fits there; in the other order it does.
    assert_illegal(
        game,
        {"hits": [{"card": "W", "meld": 1, "end": "high"}, {"card": "Y8", "meld": 1}], "discard": "R3"},
        "R4.7",
    )
    play(game, hits=[{"card": "Y8", "meld": 1}, {"card": "W", "meld": 1, "end": "high"}], discard="R3")
    assert (game.table[1].low, game.table[1].high) == (4, 9)


def test_r7_1_a_colour_meld_takes_its_colour_and_every_meld_takes_a_wild():
    game = new_game(
        deal([HANDS_3[2], "R1 R3 R5 R7 R9 R11 R2 B4 W S"], "Y12", "G6 Y6 R12"), rules=Rules(phases=(PHASES[8],))
    )
    turn(game, lay=[["R1", "R3", "R5", "R7", "R9", "R11", "R2"]], discard="G6")
    pass_turn(game)
    draw(game)  # R12
    assert_illegal(game, {"hits": [{"card": "B4", "meld": 0}], "discard": "S", "skip": 0}, "R7.1")
    assert_illegal(game, {"hits": [{"card": "W", "meld": 0, "end": "low"}], "discard": "S", "skip": 0}, "R7.3")
    events = play(game, hits=[{"card": "R12", "meld": 0}, {"card": "W", "meld": 0}], discard="B4")
    assert [e["end"] for e in events_of(events, "hit")] == [None, None]
    assert [c.text for c in game.table[0].cards][-2:] == ["R12", "W"]


def test_r7_1_a_set_takes_a_wild():
    game = _hits_game()
    pass_turn(game)
    draw(game)
    play(game, hits=[{"card": "W", "meld": 0}], discard="R3")
    assert [c.text for c in game.table[0].cards] == ["R9", "B9", "G9", "W"]


def test_r7_1_a_run_takes_nothing_past_1_or_12():
    top = Meld(0, 0, "run", tuple(cards("R9 B10 G11 Y12")), low=9, high=12)
    bottom = Meld(1, 0, "run", tuple(cards("R1 B2 G3 Y4")), low=1, high=4)
    assert top.can_hit(Card.parse("R1")) == [] and bottom.can_hit(Card.parse("Y12")) == []
    with pytest.raises(IllegalMove, match=r"^R7\.1"):
        top.hit(Card.parse("R1"))  # no wrap past 12
    with pytest.raises(IllegalMove, match=r"^R4\.2"):
        top.hit(Card.parse("W"), "high")
    with pytest.raises(IllegalMove, match=r"^R4\.2"):
        bottom.hit(Card.parse("W"), "low")
    full = Meld(2, 0, "run", tuple(cards("R1 B2 G3 Y4 R5 B6 G7 Y8 R9 B10 G11 Y12")), low=1, high=12)
    assert full.can_hit(Card.parse("W")) == []
    with pytest.raises(IllegalMove, match=r"^R4\.2"):
        full.hit(Card.parse("W"))


def test_r7_2_only_a_player_whose_phase_is_on_the_table_may_hit():
    game = _hits_game()
    draw(game)  # seat 0 has not laid
    assert_illegal(game, {"hits": [{"card": "G3", "meld": 1}], "discard": "R12"}, "R7.2")
    assert_illegal(game, {"hits": [{"card": "R11", "meld": 0}], "discard": "R12"}, "R7.2")  # even a wrong one


def test_r7_2_the_right_to_hit_lasts_for_this_hand_only():
    game = new_game(
        deal([HANDS_3[2], OUT_1], "Y12", "R12"),
        deal(["R3 B3 G3 R7 B7 G7 Y3 Y7 Y11 G11", "R4 R5 R6 R8 R9 B4 B5 B6 B8 B9"], "Y12", "R12 B3"),
    )
    turn(game, lay=OUT_1_LAY, discard="R12")  # seat 1 completes phase 1 and goes out
    assert game.hand_no == 2 and not game.players[1].laid
    turn(game, lay=[["R3", "B3", "G3"], ["R7", "B7", "G7"]], discard="Y11")  # seat 0 (first in hand 2)
    draw(game)  # seat 1 draws B3, has not laid this hand
    assert_illegal(game, {"hits": [{"card": "B3", "meld": 0}], "discard": "R4"}, "R7.2")


# Seat 1 lays two runs of 4: meld 0 is 1..4, meld 1 is 9..12, and keeps two Wilds.
TWO_RUNS = Rules.from_dict({"phases": [{"melds": [{"kind": "run", "size": 4}, {"kind": "run", "size": 4}]}]})
RUNS_DEAL = deal([HANDS_3[2], "R1 B2 G3 Y4 R9 B10 G11 Y12 W W"], "B12", "G6 Y6 W R5")


def test_r7_3_a_wild_on_a_run_with_one_open_end_takes_that_end():
    game = new_game(RUNS_DEAL, rules=TWO_RUNS)
    turn(game, lay=[["R1", "B2", "G3", "Y4"], ["R9", "B10", "G11", "Y12"]], discard="G6")
    pass_turn(game)
    draw(game)  # W
    assert_illegal(game, {"hits": [{"card": "W", "meld": 0, "end": "low"}], "discard": "W"}, "R4.2")
    assert_illegal(game, {"hits": [{"card": "W", "meld": 1, "end": "high"}], "discard": "W"}, "R4.2")
    events = play(game, hits=[{"card": "W", "meld": 0}, {"card": "W", "meld": 1}, {"card": "W", "meld": 0, "end": "high"}])
    assert [e["end"] for e in events_of(events, "hit")] == ["high", "low", "high"]
    assert (game.table[0].low, game.table[0].high) == (1, 6)
    assert (game.table[1].low, game.table[1].high) == (8, 12)
    assert the(events, "out")["seat"] == 1  # and seat 1 went out by hitting (R8.1)


def test_r7_3_a_wild_on_a_run_open_at_both_ends_must_say_which_end():
    game = _hits_game()
    pass_turn(game)
    draw(game)  # seat 1: Y8 W S R3
    err = assert_illegal(game, {"hits": [{"card": "W", "meld": 1}], "discard": "R3"}, "R7.3")
    assert "low" in str(err) and "high" in str(err)
    assert_illegal(game, Play(hits=(Hit(Card.parse("W"), 1, "middle"),), discard=Card.parse("R3")), "R7.3")
    events = play(game, hits=[{"card": "W", "meld": 1, "end": "low"}], discard="R3")
    assert the(events, "hit")["end"] == "low"
    assert [c.text for c in game.table[1].cards] == ["W", "R4", "B5", "G6", "Y7"]
    assert (game.table[1].low, game.table[1].high) == (3, 7)


def test_r7_3_a_natural_card_goes_where_it_fits_and_end_applies_to_runs_only():
    game = _hits_game()
    pass_turn(game)
    draw(game)  # R3
    assert_illegal(game, {"hits": [{"card": "Y8", "meld": 1, "end": "low"}], "discard": "R3"}, "R7.3")
    assert_illegal(game, {"hits": [{"card": "W", "meld": 0, "end": "low"}], "discard": "R3"}, "R7.3")
    play(game, hits=[{"card": "Y8", "meld": 1, "end": "high"}, {"card": "R3", "meld": 1}], discard="W")


# ---------------------------------------------------------------------------------------
# R8 End of a hand, scoring, advancing
# ---------------------------------------------------------------------------------------

LEFT_0 = "R3 B4 G10 Y11 S W R5 B6 G7 Y8"  # 5+5+10+10+15+25+5+5+5+5 = 90


def test_r8_1_the_hand_ends_when_a_player_goes_out_by_discarding():
    game = new_game(deal([LEFT_0, OUT_1], "Y12", "R12"))
    events = turn(game, lay=OUT_1_LAY, discard="R12")
    assert [e["e"] for e in events][:6] == ["draw", "lay", "discard", "out", "hand_end", "deal"]
    end = the(events, "hand_end")
    assert (end["hand"], end["winner"], end["stalled"]) == (1, 1, False)
    assert game.hand_no == 2 and not game.over


def test_r8_1_the_hand_ends_when_a_player_goes_out_by_hitting():
    game = new_game(OUT_BY_HIT)
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")
    pass_turn(game)
    events = turn(
        game,
        hits=[
            {"card": "Y1", "meld": 0}, {"card": "W", "meld": 0},
            {"card": "Y2", "meld": 1}, {"card": "W", "meld": 1}, {"card": "W", "meld": 1},
        ],
    )
    assert the(events, "out") == {"e": "out", "seat": 1}
    assert not events_of(events, "discard")
    assert the(events, "hand_end")["winner"] == 1
    assert game.hand_no == 2


def test_r8_2_others_score_the_penalty_points_of_their_cards():
    game = new_game(deal([LEFT_0, OUT_1], "Y12", "R12"))
    events = turn(game, lay=OUT_1_LAY, discard="R12")
    end = the(events, "hand_end")
    assert end["points"] == [points(LEFT_0), 0] == [90, 0]
    assert end["scores"] == [90, 0]
    assert end["hands"] == [LEFT_0.split(), []]
    assert [p.score for p in game.players] == [90, 0]


def test_r8_2_cards_laid_or_hit_score_nothing_and_scores_add_up():
    # Hand 1: seat 1 lays (keeps W W S S = 80), seat 0 goes out.
    # Hand 2: seat 0 (first now) lays (keeps Y1 Y2 Y3 = 15), seat 1 goes out.
    game = new_game(*R9_2_DEALS, rules=Rules(phases=(PHASES[1], PHASES[2], PHASES[3])))
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")
    events = turn(game, lay=[["R3", "B3", "G3", "Y3", "W"], ["R4", "B4", "G4", "Y4", "W"]], discard="G12")
    assert the(events, "hand_end")["points"] == [0, 80]
    turn(game, lay=[["R5", "B5", "G5"], ["R6", "B7", "G8", "Y9"]], discard="R12")
    events = turn(game, lay=[["R11", "B11", "G11", "Y11", "W"], ["R7", "B8", "G9", "Y10", "W"]], discard="G12")
    end = the(events, "hand_end")
    assert end["points"] == [15, 0]
    assert end["scores"] == [15, 80]


def test_r8_3_those_who_laid_advance_the_others_repeat():
    # Seat 1 lays and keeps four cards; seat 2 does not lay; seat 0 lays and goes out.
    game = new_game(
        deal([OUT_1, "R3 B3 G3 R7 B7 G7 Y4 Y5 Y6 Y8", "B9 B10 B11 B12 G9 G10 G11 G12 R9 R10"], "Y12", "R12 Y9 Y10"),
        deal([HANDS_3[0], HANDS_3[1], HANDS_3[2]], "Y12", "Y1 Y2 Y3"),
    )
    turn(game, lay=[["R3", "B3", "G3"], ["R7", "B7", "G7"]], discard="R12")
    pass_turn(game)
    events = turn(game, lay=OUT_1_LAY, discard="Y10")
    end = the(events, "hand_end")
    assert end["winner"] == 0 and end["completed"] == [0, 1]
    assert end["phases"] == [2, 2, 1]
    assert [p.completed for p in game.players] == [1, 1, 0]
    assert [game.view(s)["phase"]["number"] for s in range(3)] == [2, 2, 1]
    assert not any(p.laid for p in game.players)  # a new hand: nothing laid yet


def test_r8_4_a_stalled_hand_ends_with_no_winner_and_still_scores_and_advances():
    game = new_game(
        deal(["R3 B3 G3 Y4 Y5 Y6 Y7 Y8 Y9 Y10", "R1 B1 G1 R2 B2 G2 W W S S"], "Y12", "R12 G12 B12 R11"),
        rules=Rules(turn_limit=4),
    )
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")  # turn 1
    pass_turn(game)  # turn 2
    pass_turn(game)  # turn 3
    events = pass_turn(game)  # turn 4: the limit
    end = the(events, "hand_end")
    assert end["stalled"] is True and end["winner"] is None
    assert end["points"] == [points("R3 B3 G3 Y4 Y5 Y6 Y7 Y8 Y9 Y10"), 80]
    assert end["completed"] == [1]
    assert end["phases"] == [1, 2]  # R8.3 applies
    assert [p.score for p in game.players] == end["scores"] == end["points"]
    assert game.stalled_hands == 1
    assert the(events, "deal")["hand"] == 2 and not game.over
    assert not events_of(events, "out")


def test_r8_4_turn_limit_counts_skipped_turns_too():
    game = new_game(deal(HANDS_3, "S", "Y1 Y2 Y3"), rules=Rules(turn_limit=3))
    # turn 1: seat 1 skipped by the up-card; turns 2 and 3: seats 2 and 0.
    pass_turn(game)
    events = pass_turn(game)
    assert the(events, "hand_end")["stalled"] is True


# ---------------------------------------------------------------------------------------
# R9 End of the game
# ---------------------------------------------------------------------------------------


def test_r9_1_the_game_ends_after_a_hand_in_which_someone_completed_the_last_phase():
    game = new_game(deal([LEFT_0, OUT_1], "Y12", "R12"), rules=ONE)
    events = turn(game, lay=OUT_1_LAY, discard="R12")
    assert [e["e"] for e in events][-2:] == ["hand_end", "game_end"]
    end = the(events, "game_end")
    assert end["winner"] == 1 and end["reason"] == "finished"
    assert end["phases_completed"] == [0, 1] and end["places"] == [2, 1]
    assert game.over and game.decision is None and game.winner == 1 and game.end_reason == "finished"
    assert_illegal(game, Draw("deck"), "R9.1")


def test_r9_1_the_game_goes_on_while_nobody_has_completed_the_last_phase():
    game = new_game(deal([LEFT_0, OUT_1], "Y12", "R12"), rules=Rules(phases=(PHASES[1], PHASES[2])))
    events = turn(game, lay=OUT_1_LAY, discard="R12")
    assert not events_of(events, "game_end")
    assert not game.over and game.winner is None and game.hand_no == 2


def test_r9_1_a_stalled_hand_in_which_the_last_phase_was_laid_ends_the_game():
    game = new_game(deal([LEFT_0, "R1 B1 G1 R2 B2 G2 W W S S"], "Y12", "R12 G12"), rules=Rules(phases=(PHASES[1],), turn_limit=2))
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")
    events = pass_turn(game)
    assert the(events, "hand_end")["stalled"] is True
    assert the(events, "game_end")["winner"] == 1 and game.end_reason == "finished"


# Two hands. Hand 1 (dealer 0): seat 1 lays keeping W W S S (80); seat 0 goes out.
# Hand 2 (dealer 1): seat 0 lays keeping Y1 Y2 Y3 (15); seat 1 goes out.
R9_2_DEALS = (
    deal(["R3 B3 G3 Y3 W R4 B4 G4 Y4 W", "R1 B1 G1 R2 B2 G2 W W S S"], "Y12", "R12 G12"),
    deal(["R5 B5 G5 R6 B7 G8 Y9 Y1 Y2 Y3", "R11 B11 G11 Y11 W R7 B8 G9 Y10 W"], "Y12", "R12 G12"),
)


def test_r9_2_among_those_who_completed_the_last_phase_the_lowest_total_wins():
    game = new_game(*R9_2_DEALS, rules=Rules(phases=(PHASES[1], PHASES[2])))
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")
    turn(game, lay=[["R3", "B3", "G3", "Y3", "W"], ["R4", "B4", "G4", "Y4", "W"]], discard="G12")
    assert game.hand_no == 2 and game.to_move == 0
    turn(game, lay=[["R5", "B5", "G5"], ["R6", "B7", "G8", "Y9"]], discard="R12")
    events = turn(game, lay=[["R11", "B11", "G11", "Y11", "W"], ["R7", "B8", "G9", "Y10", "W"]], discard="G12")
    # Seat 1 went out, but both completed phase 2 and seat 0 has the lower total.
    assert the(events, "hand_end")["winner"] == 1
    end = the(events, "game_end")
    assert end["scores"] == [15, 80] and end["phases_completed"] == [2, 2]
    assert end["winner"] == 0 and end["places"] == [1, 2]
    assert game.winner == 0 and game.end_reason == "finished"


def test_r9_2_a_player_who_did_not_complete_the_last_phase_cannot_win():
    # Seat 0 has the lower score but has not completed phase 2; seat 1 completes it.
    hand1 = deal(["R3 B3 G3 Y3 W R4 B4 G4 Y4 W", "R1 B1 G1 R2 B2 G2 W W S S"], "Y12", "R12 G12")
    hand2 = deal(["R5 B5 G5 R6 B7 G8 Y1 Y2 Y3 Y4", "R11 B11 G11 Y11 W R7 B8 G9 Y10 W"], "Y12", "R12 G12")
    game = new_game(hand1, hand2, rules=Rules(phases=(PHASES[1], PHASES[2])))
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")
    turn(game, lay=[["R3", "B3", "G3", "Y3", "W"], ["R4", "B4", "G4", "Y4", "W"]], discard="G12")
    turn(game, discard="R12")  # seat 0 cannot lay phase 2 (no run)
    events = turn(game, lay=[["R11", "B11", "G11", "Y11", "W"], ["R7", "B8", "G9", "Y10", "W"]], discard="G12")
    end = the(events, "game_end")
    assert end["scores"][0] < end["scores"][1]
    assert end["winner"] == 1 and end["places"] == [2, 1]


# Three players, one phase, hand 1 stalls after 3 turns with seats 1 and 2 both laid and
# both holding 20 points: a tie. Hand 2 is the tie-break between seats 1 and 2 alone.
TIE_DEALS = (
    deal(
        ["R9 B9 G9 R10 B10 G10 Y9 Y10 R11 B11", "R1 B1 G1 R2 B2 G2 Y5 Y6 Y7 Y8", "R3 B3 G3 R4 B4 G4 B5 B6 B7 B8"],
        "Y12",
        "R12 G12 B12",
    ),
    deal(
        ["R9 B9 G9 R10 B10 G10 Y9 Y10 R11 B11", OUT_1, "R3 B3 G3 R4 B4 G4 B5 B6 B7 S"],
        "Y12",
        "R12 G12 B12",
    ),
)


def _tied_game() -> tuple[Game, list[dict[str, Any]]]:
    game = new_game(*TIE_DEALS, rules=Rules(phases=(PHASES[1],), turn_limit=3))
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")
    turn(game, lay=[["R3", "B3", "G3"], ["R4", "B4", "G4"]], discard="G12")
    events = pass_turn(game)  # seat 0: the third turn stalls the hand
    return game, events


def test_r9_3_a_tie_is_broken_by_further_hands_among_the_tied_players_alone():
    game, events = _tied_game()
    end = the(events, "hand_end")
    assert end["stalled"] is True and end["completed"] == [1, 2]
    assert end["points"][1] == end["points"][2] == 20
    assert not events_of(events, "game_end") and not game.over
    assert game.tiebreak
    assert [p.active for p in game.players] == [False, True, True]
    assert game.players[0].hand == []  # not dealt in
    assert the(events, "deal")["hand"] == 2
    # The tied players play on the last phase.
    assert game.view(1)["phase"]["number"] == 1 and game.view(2)["phase"]["number"] == 1
    assert game.view(1)["players"][0]["active"] is False
    # Seat 0 no longer takes turns: the dealer is seat 1, seat 2 starts, then seat 1.
    assert game.dealer == 1 and game.to_move == 2
    draw(game)
    assert game.skip_targets(2) == [1]
    assert_illegal(game, {"discard": "S", "skip": 0}, "R10.6")
    events = play(game, discard="S", skip=1)
    assert the(events, "skipped")["seat"] == 1
    assert game.to_move == 2 and game.hand_no == 2


def test_r9_3_the_first_tied_player_to_go_out_wins():
    game, _ = _tied_game()
    pass_turn(game)  # seat 2
    assert game.to_move == 1
    events = turn(game, lay=OUT_1_LAY, discard="G12")
    assert the(events, "hand_end")["winner"] == 1
    end = the(events, "game_end")
    assert end["winner"] == 1 and game.winner == 1 and game.end_reason == "tiebreak"
    assert end["places"][1] == 1
    assert end["places"] == [3, 1, 2]  # seat 2 completed more phases than seat 0
    assert end["phases_completed"] == [0, 1, 1]


def test_r9_3_a_stalled_tie_break_hand_is_followed_by_another():
    game, _ = _tied_game()
    pass_turn(game)  # seat 2
    pass_turn(game)  # seat 1
    events = pass_turn(game)  # seat 2: the turn limit stalls the tie-break hand
    assert the(events, "hand_end")["stalled"] is True
    assert not events_of(events, "game_end") and game.winner is None
    assert game.hand_no == 3 and game.tiebreak
    assert [p.active for p in game.players] == [False, True, True]
    assert game.dealer == 2 and game.to_move == 1
    assert [game.view(s)["phase"]["number"] for s in (1, 2)] == [1, 1]


def test_r9_4_more_phases_rank_higher_then_lower_score_then_shared_places():
    # Hand limit 1: seat 1 lays phase 1 (keeps four Wilds: 100 points); seats 0 and 2 do
    # not lay and keep 50 points each. Stalled after 3 turns, then the game ends (R9.5).
    game = new_game(
        deal(["R1 R2 R3 R4 R5 R6 R7 R8 R9 B1", "R10 B10 G10 R11 B11 G11 W W W W", "G1 G2 G3 G4 G5 G6 G7 G8 G9 B2"],
             "Y12", "R12 G12 B12"),
        rules=Rules(turn_limit=3, hand_limit=1),
    )
    turn(game, lay=[["R10", "B10", "G10"], ["R11", "B11", "G11"]], discard="R12")
    pass_turn(game)
    events = pass_turn(game)
    end = the(events, "game_end")
    assert end["scores"] == [50, 100, 50]
    assert end["phases_completed"] == [0, 1, 0]
    assert end["places"] == [2, 1, 2] == game.places()
    assert end["winner"] == 1 and end["reason"] == "hand_limit"


def test_r9_4_lower_score_ranks_higher_among_equal_phases():
    game = Game(Rules(), 4, seed=3)
    game.start()
    for p, (completed, score) in zip(game.players, [(2, 30), (2, 10), (3, 90), (2, 30)]):
        p.completed, p.score = completed, score
    assert game.places() == [3, 2, 1, 3]


def test_r9_4_the_r9_3_winner_is_first():  # (an R9.2 winner is also first: see test_r9_2_*)
    game, _ = _tied_game()
    pass_turn(game)  # seat 2
    draw(game)
    play(game, lay=OUT_1_LAY, discard=game.players[1].hand[-1].text)
    assert game.places()[1] == 1
    # First by R9.3 whatever the totals say.
    game.players[1].score = 10_000
    assert game.places() == [3, 1, 2]


def test_r9_5_the_game_ends_at_the_hand_limit_and_is_ranked_by_r9_4():
    game = Game(Rules(turn_limit=2, hand_limit=3), 2, seed=8)
    events = game.start()
    while not game.over:
        events += pass_turn(game)
    assert len(events_of(events, "hand_end")) == 3
    end = the(events, "game_end")
    assert end["reason"] == "hand_limit" and game.end_reason == "hand_limit"
    assert all(e["stalled"] for e in events_of(events, "hand_end"))
    scores = end["scores"]
    expected = [1 + sum(1 for t in scores if t < s) for s in scores]
    assert end["places"] == expected
    assert end["winner"] == (scores.index(min(scores)) if scores.count(min(scores)) == 1 else None)


def test_r9_5_a_tie_at_the_hand_limit_is_a_shared_place_with_no_winner():
    same = "R1 R2 R3 R4 R5 R6 R7 R8 R9 B1"
    game = new_game(deal([same, "B2 B3 B4 B5 B6 B7 B8 B9 G1 G2"], "Y12", "R12 G12"), rules=Rules(turn_limit=2, hand_limit=1))
    pass_turn(game)
    events = pass_turn(game)
    end = the(events, "game_end")
    assert end["scores"] == [50, 50] and end["places"] == [1, 1] and end["winner"] is None


# ---------------------------------------------------------------------------------------
# R10 Variants
# ---------------------------------------------------------------------------------------

FIXED = Rules(variant="fixed", phases=(PHASES[1], PHASES[2]), turn_limit=2)
FIXED_DEALS = (
    # Hand 1 (phase 1 for all): seat 1 lays, keeps W W W W (100); seat 0 keeps 50.
    deal(["R3 R4 R5 R6 R7 B3 B4 B5 B6 B7", "R1 B1 G1 R2 B2 G2 W W W W"], "Y12", "R12 G12"),
    # Hand 2 (phase 2 for all): seat 0 lays phase 2 without having done phase 1 (keeps 15);
    # seat 1 lays too (keeps W W W: 75).
    deal(["R5 B5 G5 R6 B7 G8 Y9 Y1 Y2 Y3", "R10 B10 G10 R1 B2 G3 Y4 W W W"], "Y12", "R12 G12"),
)


def test_r10_1_fixed_hands_everyone_attempts_phase_i_in_hand_i():
    game = new_game(*FIXED_DEALS, rules=FIXED)
    assert [game.view(s)["phase"]["number"] for s in (0, 1)] == [1, 1]
    turn(game, lay=[["R1", "B1", "G1"], ["R2", "B2", "G2"]], discard="R12")
    events = pass_turn(game)
    assert the(events, "hand_end")["phases"] == [2, 2]
    assert game.hand_no == 2
    assert [game.view(s)["phase"]["number"] for s in (0, 1)] == [2, 2]
    turn(game, lay=[["R5", "B5", "G5"], ["R6", "B7", "G8", "Y9"]], discard="R12")
    events = turn(game, lay=[["R10", "B10", "G10"], ["R1", "B2", "G3", "Y4"]], discard="G12")
    end = the(events, "game_end")
    # Exactly as many hands as phases; lowest total wins whatever the phases completed.
    assert end["reason"] == "fixed_hands" and game.hand_no == 2
    assert end["scores"] == [50 + 15, 100 + 75]
    assert end["phases_completed"] == [1, 2]
    assert end["places"] == [1, 2] and end["winner"] == 0


def test_r10_1_fixed_hands_rank_by_score_alone():
    game = Game(Rules(variant="fixed"), 3, seed=1)
    game.start()
    for p, (completed, score) in zip(game.players, [(5, 40), (1, 20), (9, 40)]):
        p.completed, p.score = completed, score
    assert game.places() == [2, 1, 2]


def test_r10_1_fixed_hands_end_after_len_phases_even_if_nobody_lays():
    game = Game(Rules(variant="fixed", phases=(PHASES[3], PHASES[7], PHASES[9]), turn_limit=2), 3, seed=6)
    events = game.start()
    while not game.over:
        events += pass_turn(game)
    assert len(events_of(events, "hand_end")) == 3
    assert the(events, "game_end")["reason"] == "fixed_hands"
    with pytest.raises(RulesError, match=r"^R10\.1"):
        Rules(variant="fixed", first_to=2)


def test_r10_2_first_to_n_phases_wins():
    game = new_game(deal([LEFT_0, OUT_1], "Y12", "R12"), rules=Rules(first_to=1))
    events = turn(game, lay=OUT_1_LAY, discard="R12")
    end = the(events, "game_end")
    assert end["winner"] == 1 and end["reason"] == "finished"
    assert Rules(first_to=3).goal == 3 and Rules().goal == 10
    with pytest.raises(RulesError, match=r"^R10\.2"):
        Rules(first_to=11)


def test_r10_2_completing_fewer_than_n_phases_does_not_end_the_game():
    game = new_game(deal([LEFT_0, OUT_1], "Y12", "R12"), rules=Rules.from_dict({"first_to": 2}))
    events = turn(game, lay=OUT_1_LAY, discard="R12")
    assert not events_of(events, "game_end") and not game.over
    assert game.view(1)["phase"]["number"] == 2


def test_r10_3_chosen_phases_even_ones_only():
    rules = Rules.from_dict({"phases": [2, 4, 6, 8, 10]})
    assert [p.number for p in rules.phases] == [2, 4, 6, 8, 10]
    game = new_game(deal([LEFT_0, "R5 B5 G5 Y5 W R6 B7 G8 Y9 W"], "Y12", "R12"), rules=rules)
    assert game.view(0)["phase"]["number"] == 2
    events = turn(game, lay=[["R5", "B5", "G5", "Y5", "W"], ["R6", "B7", "G8", "Y9", "W"]], discard="R12")
    assert the(events, "hand_end")["phases"] == [2, 4]
    assert game.view(1)["phase"]["number"] == 4


def test_r10_3_chosen_phases_extra_ones():
    rules = Rules.from_dict({"phases": [11, 16, 20]})
    game = new_game(deal([LEFT_0, "R1 B1 R2 B2 R3 B3 R4 B4 Y5 Y6"], "Y12", "R12"), rules=rules)
    assert game.view(1)["phase"] == {"number": 11, "melds": [{"kind": "set", "size": 2}] * 4}
    draw(game)
    assert_illegal(game, {"lay": [["R1", "B1"], ["R2", "B2"], ["R3", "B3"]], "discard": "R12"}, "R5.2")
    events = play(game, lay=[["R1", "B1"], ["R2", "B2"], ["R3", "B3"], ["R4", "B4"]], discard="R12")
    assert len(the(events, "lay")["melds"]) == 4
    for bad in ([0], [21], ["x"], [True], "2,4", []):
        with pytest.raises(RulesError, match=r"^R10\.3"):
            Rules.from_dict({"phases": bad})


def test_r10_4_custom_phases_are_lists_of_melds():
    rules = Rules.from_dict(
        {"phases": [{"number": 31, "melds": [{"kind": "run", "size": 5}, {"kind": "color", "size": 3}]}, 1]}
    )
    assert rules.phases[0].describe() == "1 run of 5 + 3 cards of one colour"
    game = new_game(deal([LEFT_0, "R1 B2 G3 Y4 R5 G7 G9 G11 Y9 Y10"], "Y12", "R12"), rules=rules)
    assert game.view(1)["phase"] == {"number": 31, "melds": [{"kind": "run", "size": 5}, {"kind": "color", "size": 3}]}
    draw(game)
    assert_illegal(game, {"lay": [["R1", "B2", "G3", "Y4"], ["G7", "G9", "G11"]], "discard": "R12"}, "R5.2")
    play(game, lay=[["G7", "G9", "G11"], ["R1", "B2", "G3", "Y4", "R5"]], discard="R12")
    assert [m.kind for m in game.table] == ["color", "run"]
    assert Rules.from_dict(rules.to_dict()) == rules  # the protocol form reads back


@pytest.mark.parametrize(
    "phases",
    [
        [{"melds": []}],
        [{"melds": [{"kind": "pair", "size": 2}]}],
        [{"melds": [{"kind": "set", "size": 1}]}],
        [{"melds": [{"kind": "run", "size": 13}]}],
        [{"melds": [{"kind": "set", "size": 6}, {"kind": "set", "size": 6}]}],  # 12 cards
        [{"melds": [{"kind": "set"}]}],
        [{"melds": "set of 3"}],
    ],
)
def test_r10_4_unplayable_custom_phases_are_refused(phases):
    with pytest.raises(RulesError, match=r"^R10\.4"):
        Rules.from_dict({"phases": phases})


ELEVEN = Rules.from_dict(
    {"phases": [{"number": 41, "melds": [{"kind": "set", "size": 5}, {"kind": "run", "size": 6}]}]}
)


def test_r10_4_a_custom_phase_may_need_11_cards_and_laying_all_11_goes_out_with_no_discard():
    assert ELEVEN.phases[0].size == 11
    game = new_game(deal([LEFT_0, "R2 B2 G2 Y2 R3 B4 G5 Y6 R7 B8"], "Y12", "W"), rules=ELEVEN)
    draw(game)  # the 11th card: a Wild for the set
    laid = [["R2", "B2", "G2", "Y2", "W"], ["R3", "B4", "G5", "Y6", "R7", "B8"]]
    # Nothing is left to discard: a discard is refused ...
    assert_illegal(game, {"lay": laid, "discard": "B8"}, "R3.3", "R3.5")
    # ... and the lay alone goes out (R3.5).
    events = play(game, lay=laid)
    assert [e["e"] for e in events][:3] == ["lay", "out", "hand_end"]
    assert not events_of(events, "discard")
    end = the(events, "game_end")
    assert end["winner"] == 1 and end["phases_completed"] == [0, 1]


def test_r10_4_the_options_offer_an_11_card_lay():
    game = new_game(deal([LEFT_0, "R2 B2 G2 Y2 R3 B4 G5 Y6 R7 B8"], "Y12", "W"), rules=ELEVEN)
    draw(game)
    lay = game.options(1)["lay"]
    assert lay is not None and sum(len(m) for m in lay) == 11
    events = play(game, lay=lay)
    assert the(events, "out")["seat"] == 1


def test_r10_4_a_custom_phase_of_12_cards_is_refused():
    with pytest.raises(RulesError, match=r"^R10\.4: phase 42 needs 12 cards .* at most 11"):
        Rules.from_dict({"phases": [{"number": 42, "melds": [{"kind": "run", "size": 12}]}]})


def test_r10_5_a_hand_in_which_no_card_can_be_drawn_is_stalled_at_once():
    # Seat 1 draws the last card of the draw pile and discards a Skip naming seat 0: the
    # draw pile is empty, nothing is left to reshuffle and a Skip cannot be taken (R3.2).
    hands = ["R1 R2 R3 R4 R5 R6 R7 R8 R9 R10", "B1 B2 B3 B4 B5 B6 B7 B8 B9 S"]
    game = new_game(deal(hands, "Y12"))
    game.draw_pile[:] = [Card.parse("G1")]  # a state a long hand reaches, set up directly
    game.discard_pile[:] = []
    events = turn(game, discard="S", skip=0)
    assert the(events, "skipped")["seat"] == 0  # seat 0 loses its turn; then seat 1 cannot draw
    end = the(events, "hand_end")
    assert end["stalled"] is True and end["winner"] is None
    assert game.stalled_hands == 1 and game.hand_no == 2


def test_r10_6_tie_break_hands_are_dealt_to_the_tied_players_only():
    game, events = _tied_game()
    assert [len(p.hand) for p in game.players] == [0, 10, 10]
    assert the(events, "hand_end")["phases"] == [None, 1, 1]  # seat 0 plays no further hand
    assert [p["active"] for p in game.view(1)["players"]] == [False, True, True]


def test_r10_6_the_dealer_moves_on_among_the_tied_players():
    game, _ = _tied_game()
    assert game.dealer == 1 and game.to_move == 2
    pass_turn(game)  # seat 2
    pass_turn(game)  # seat 1
    pass_turn(game)  # seat 2: stalled at the turn limit; the next tie-break hand
    assert game.hand_no == 3 and game.dealer == 2 and game.to_move == 1  # seat 0 is passed over


def test_r10_6_a_skip_may_name_only_a_player_in_the_hand():
    game, _ = _tied_game()
    draw(game)  # seat 2 holds a Skip
    assert game.skip_targets(2) == [1]
    err = assert_illegal(game, {"discard": "S", "skip": 0}, "R10.6")
    assert "not playing this tie-break hand" in str(err) and "name one of seats [1]" in str(err)
    events = play(game, discard="S", skip=1)
    assert the(events, "discard")["skip"] == 1


def test_r10_7_with_fixed_hands_a_tie_for_the_lowest_score_is_a_shared_first_place():
    rules = Rules(variant="fixed", phases=(PHASES[1],), turn_limit=2)
    same = "R1 R2 R3 R4 R5 R6 R7 R8 R9 B1"
    game = new_game(deal([same, "B2 B3 B4 B5 B6 B7 B8 B9 G1 G2"], "Y12", "R12 G12"), rules=rules)
    pass_turn(game)
    events = pass_turn(game)
    end = the(events, "game_end")
    assert end["reason"] == "fixed_hands"
    assert end["scores"] == [50, 50] and end["places"] == [1, 1] and end["winner"] is None
    assert the(events, "hand_end")["phases"] == [None, None]


# ---------------------------------------------------------------------------------------
# R11 What each player may know
# ---------------------------------------------------------------------------------------


def _string_lists(x: Any) -> list[list[str]]:
    """Every list of strings anywhere inside a view."""
    out = []
    if isinstance(x, dict):
        for v in x.values():
            out += _string_lists(v)
    elif isinstance(x, list):
        if x and all(isinstance(v, str) for v in x):
            out.append(x)
        for v in x:
            out += _string_lists(v)
    return out


def _assert_view_private(game: Game, seat: int) -> None:
    view = game.view(seat)
    assert view["seat"] == seat
    assert Counter(view["cards"]) == hand(game, seat)
    allowed = [view["cards"]] + [m["cards"] for m in view["table"]]
    for lst in _string_lists(view):
        assert lst in allowed, lst
    for entry in view["players"]:
        assert isinstance(entry["cards"], int)  # other hands: a count only
    assert isinstance(view["draw_size"], int)
    texts = _string_lists(view)
    assert [c.text for c in game.draw_pile] not in texts
    assert [c.text for c in reversed(game.draw_pile)] not in texts
    for s, p in enumerate(game.players):
        if s != seat and p.hand and Counter(c.text for c in p.hand) != hand(game, seat):
            assert [c.text for c in p.hand] not in _string_lists(view)


def test_r11_1_public_facts_are_in_every_view():
    game = _hits_game()  # seat 1 laid a set and a run
    draw(game, "discard")  # seat 0 takes G12 from the discard pile
    events = play(game, discard="R11")
    for seat in (0, 1):
        view = game.view(seat)
        assert [m["cards"] for m in view["table"]] == [["R9", "B9", "G9"], ["R4", "B5", "G6", "Y7"]]
        assert view["discard_top"] == "R11"
        assert view["draw_size"] == len(game.draw_pile)
        assert [p["cards"] for p in view["players"]] == [10, 3]
        assert [p["phase"] for p in view["players"]] == [2, 2]
        assert [p["laid"] for p in view["players"]] == [False, True]
        assert [p["score"] for p in view["players"]] == [0, 0]
        assert [p["skip_pending"] for p in view["players"]] == [False, False]
    assert the(events, "discard")["card"] == "R11"


def test_r11_1_draws_say_the_pile_and_the_card_only_from_the_discard_pile():
    game = new_game(deal(HANDS_3[:2], "Y1", "Y7 Y8"))
    assert draw(game, "deck") == [{"e": "draw", "seat": 1, "from": "deck"}]
    play(game, discard="B1")
    assert draw(game, "discard") == [{"e": "draw", "seat": 0, "from": "discard", "card": "B1"}]


def test_r11_1_every_hand_is_shown_at_the_end_of_a_hand():
    game = new_game(deal([LEFT_0, OUT_1], "Y12", "R12"))
    events = turn(game, lay=OUT_1_LAY, discard="R12")
    assert the(events, "hand_end")["hands"] == [LEFT_0.split(), []]


def test_r11_2_a_view_holds_the_own_hand_and_no_other_hidden_card():
    game = Game(Rules(), 4, seed=12)
    game.start()
    for _ in range(6):
        for seat in range(4):
            _assert_view_private(game, seat)
        pass_turn(game)
    game2 = _hits_game()
    for seat in (0, 1):
        _assert_view_private(game2, seat)


def test_r11_2_the_draw_pile_order_is_not_in_any_view_or_event():
    game = new_game(deal(HANDS_3, "Y12", "W S Y1 Y2 Y3"))
    for seat in range(3):
        view = game.view(seat)
        assert "draw" not in view and "draw_pile" not in view
        assert set(view) >= {"cards", "draw_size"}
    events = draw(game)
    assert "card" not in events[0]
    # The events of a deck draw are the same whatever card was drawn.
    other = new_game(deal(HANDS_3, "Y12", "Y3 S Y1 Y2 W"))
    assert draw(other) == events
