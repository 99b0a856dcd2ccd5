"""The bundled strategies play real games: the greedy player finishes its games, rarely
stalls a hand (R8.4), and clearly beats the random player.

Seeds are fixed, so these figures are reproducible; the stall share is printed (run with
-s) and recorded in BENCHMARKS.md.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.engine import Rules
from harness.players import GreedyStrategy, RandomStrategy, play_local

GREEDY_GAMES = 60
GREEDY_SEEDS = range(1000, 1000 + GREEDY_GAMES)
VERSUS_GAMES = 30


@pytest.fixture(scope="module")
def greedy_games() -> list[Any]:
    """60 games of 4 greedy players, standard rules, 300 turns per hand at most."""
    rules = Rules(turn_limit=300)
    return [play_local(rules, [GreedyStrategy() for _ in range(4)], seed=s) for s in GREEDY_SEEDS]


def test_greedy_rarely_stalls(greedy_games: list[Any]) -> None:
    """R8.4: fewer than 1 % of hands among 4 greedy players reach the 300-turn limit."""
    hands = sum(g.hand_no for g in greedy_games)
    stalled = sum(g.stalled_hands for g in greedy_games)
    share = stalled / hands
    print(f"\nstall share: {stalled}/{hands} hands = {100 * share:.2f} % over {len(greedy_games)} games "
          f"of 4 greedy players (turn limit 300)")
    assert share < 0.01


def test_greedy_finishes_games(greedy_games: list[Any]) -> None:
    """R9.1-R9.3: every game ends because someone completed phase 10, not at the hand limit."""
    reasons = {g.end_reason for g in greedy_games}
    assert reasons <= {"finished", "tiebreak"}, reasons
    for g in greedy_games:
        assert g.winner is not None
        assert g.players[g.winner].completed == 10
        assert g.hand_no < g.rules.hand_limit


@pytest.mark.parametrize("n", [2, 3, 5, 6])
def test_greedy_finishes_games_at_every_table_size(n: int) -> None:
    for seed in range(3):
        g = play_local(Rules(), [GreedyStrategy() for _ in range(n)], seed=seed)
        assert g.end_reason in ("finished", "tiebreak")
        assert g.stalled_hands == 0


def test_greedy_beats_random() -> None:
    """Over 30 two-player games (seats alternating), greedy wins clearly."""
    wins = 0
    greedy_phases = random_phases = 0
    for i in range(VERSUS_GAMES):
        g_seat = i % 2
        players: list[Any] = [GreedyStrategy(), RandomStrategy(i)]
        if g_seat:
            players.reverse()
        game = play_local(Rules(), players, seed=2000 + i)
        places = game.places()
        wins += places[g_seat] == 1 and places[1 - g_seat] == 2
        greedy_phases += game.players[g_seat].completed
        random_phases += game.players[1 - g_seat].completed
    print(f"\ngreedy won {wins}/{VERSUS_GAMES} games against random; phases completed "
          f"{greedy_phases} vs {random_phases}")
    assert wins >= 0.9 * VERSUS_GAMES
    assert greedy_phases >= 1.5 * random_phases


@pytest.mark.parametrize("strategy", [GreedyStrategy, lambda: RandomStrategy(3)], ids=["greedy", "random"])
def test_players_go_out_by_laying_an_11_card_custom_phase(strategy) -> None:
    """R10.4: a custom phase of 11 cards, held after the draw, is laid whole and goes out
    with no discard; the players (and their options) know it."""
    from harness.engine import Deck, Game, Rules, action_from_json

    rules = Rules.from_dict({"phases": [{"number": 41, "melds": [{"kind": "set", "size": 5},
                                                                  {"kind": "run", "size": 6}]}]})
    deck = Deck.from_dict({"deals": [{"hands": [["R3", "B4", "G10", "Y11", "S", "W", "R5", "B6", "G7", "Y8"],
                                                ["R2", "B2", "G2", "Y2", "R3", "B4", "G5", "Y6", "R7", "B8"]],
                                      "discard": "Y12", "draw": ["W"]}]})
    game = Game(rules, 2, 1, deck)
    game.start()
    player = strategy()
    for decision in ("draw", "play"):
        state = game.view(1)
        reply = player.decide(state, decision, game.options(1) if decision == "play" else None)
        if decision == "play":
            assert "discard" not in reply and sum(len(m) for m in reply["lay"]) == 11
        events = game.apply(action_from_json(reply, decision))
    assert [e["e"] for e in events][:3] == ["lay", "out", "hand_end"]
