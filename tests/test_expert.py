"""The strong and expert players: legal whole games in every variant, reproducible play,
decisions that depend on the seat's view (and the public events) alone, the public
knowledge the expert keeps from the events, and the bundled bots behind the protocol.

Kept small for the default run (the expert at a few milliseconds or a fixed few samples
per decision). The strength measurements and the long no-fault run are in
tests/benchmarks/test_bench_expert.py.
"""

from __future__ import annotations

import random as _random
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.bots import STRONG_ARGV, expert_argv
import harness.players.expert as expert_module
from harness.bots.expert import DEFAULT_WALL_MS, make_bot, parse_args
from harness.engine import PHASES, Card, Deck, Game, Meld, Rules, action_from_json, missing, parse_cards
from harness.players import GreedyStrategy, RandomStrategy, StrongStrategy, make_strategy, play_local
from harness.players.base import cards_of
from harness.players.expert import DEFAULT_MS, ExpertStrategy, _Tracker
from harness.players.strong import discard_context, hit_cards, memo_missing, play_choice, rank_discards, unseen_counts
from harness.referee import TimeControl, play_game

ROOT = Path(__file__).resolve().parent.parent
GREEDY = (sys.executable, str(ROOT / "bots" / "python" / "greedy.py"))
TC = TimeControl(move_ms=5000, startup_ms=20000)

VARIANTS = [
    Rules(),
    Rules.from_dict({"variant": "fixed", "hand_limit": 10}),
    Rules.from_dict({"phases": [8, 4, 11, 14, 18], "hand_limit": 12}),
    Rules.from_dict({"phases": [{"melds": [{"kind": "run", "size": 5}, {"kind": "color", "size": 3}]}, 1],
                     "hand_limit": 12}),
]


@pytest.mark.parametrize("rules", VARIANTS, ids=["standard", "fixed", "extra-phases", "custom"])
def test_strong_plays_legal_games_in_every_variant(rules: Rules) -> None:
    """Every reply of the strong player is legal (play_local raises on an illegal one)."""
    for seed in (1, 2):
        g = play_local(rules, [StrongStrategy(), GreedyStrategy(), StrongStrategy(), RandomStrategy(seed)], seed)
        assert g.over and g.end_reason in ("finished", "tiebreak", "hand_limit", "fixed_hands")


@pytest.mark.parametrize("rules", VARIANTS, ids=["standard", "fixed", "extra-phases", "custom"])
def test_expert_plays_legal_games_in_every_variant(rules: Rules) -> None:
    """The expert at 2 samples per decision plays whole legal games, its searches done."""
    searched: list[int] = []

    class Watched(ExpertStrategy):
        def decide(self, *a: Any) -> dict[str, Any]:
            reply = super().decide(*a)
            searched.append(self.last_samples)
            return reply

    g = play_local(rules, [Watched(ms=10_000, seed=3, rollouts=2), GreedyStrategy(), RandomStrategy(4)], seed=5)
    assert g.over
    assert max(searched) == 2  # some decisions were searched, with exactly the samples asked for


def test_expert_is_reproducible_with_fixed_samples() -> None:
    """Same seed and sample count: the same game, move for move."""
    def one() -> list[Any]:
        moves: list[Any] = []
        g = play_local(Rules(hand_limit=4), [ExpertStrategy(seed=9, rollouts=3, ms=10_000), GreedyStrategy()], seed=17,
                       on_events=moves.extend)
        return [moves, g.places(), [p.score for p in g.players]]

    assert one() == one()


def _deck(others: list[list[str]], draw: list[str]) -> Deck:
    """Seat 1 (first to play) always holds the same cards and sees the same up-card."""
    mine = "R3 B3 G3 Y7 R7 W B9 G11 Y12 S".split()
    hands = [others[0], mine, others[1]]
    return Deck.from_dict({"deals": [{"hands": hands, "discard": "G7", "draw": draw}]})


@pytest.mark.parametrize("rollouts", [1, 6])
def test_expert_decides_from_its_view_alone(rollouts: int) -> None:
    """The same view, events and seed with different hidden cards elsewhere (the other
    hands, the draw pile below the card drawn) give the same decisions: the draw (take G7
    or not) and the play after drawing from the deck."""
    worlds = [
        _deck([["R1", "R2", "B4", "B5", "G6", "G8", "Y9", "Y10", "R11", "B12"],
               ["W", "W", "Y1", "Y2", "G4", "G5", "R6", "R8", "B10", "B11"]], ["G12"]),
        _deck([["W", "W", "W", "S", "S", "Y3", "B7", "R9", "Y11", "G12"],
               ["B1", "G1", "Y4", "R4", "B6", "Y6", "G9", "R10", "Y10", "B8"]], ["G12", "W", "W", "R3"]),
    ]
    seen: list[tuple[Any, ...]] = []
    for k, deck in enumerate(worlds):
        game = Game(Rules(), 3, seed=100 + k, deck=deck, game_id="g1")
        events = game.start()
        assert game.current == 1 and game.decision == "draw"
        expert = ExpertStrategy(ms=60_000, seed=5, rollouts=rollouts)
        expert.new_game("g1", 1)
        expert.observe(events)
        view = game.view(1)
        draw = expert.decide(view, "draw", None)
        game.apply(action_from_json({"draw": "deck"}), 1)
        view2 = game.view(1)
        play = expert.decide(view2, "play", game.options(1))
        seen.append((view, draw, view2, play))
    a, b = seen
    assert a[0] == b[0] and a[2] == b[2]  # the views are the same
    assert a[1] == b[1] and a[3] == b[3]  # and so are the decisions
    assert worlds[0].deals[0].hands[0] != worlds[1].deals[0].hands[0]


def test_tracker_follows_the_discard_pile_and_the_cards_taken() -> None:
    tr = _Tracker()
    tr.events([
        {"e": "deal", "hand": 2, "dealer": 0, "discard_top": "R5"},
        {"e": "draw", "seat": 1, "from": "discard", "card": "R5"},
        {"e": "discard", "seat": 1, "card": "B9", "skip": None},
        {"e": "draw", "seat": 2, "from": "deck"},
        {"e": "discard", "seat": 2, "card": "G1", "skip": None},
        {"e": "draw", "seat": 0, "from": "discard", "card": "G1"},
        {"e": "discard", "seat": 0, "card": "Y4", "skip": None},
    ])
    assert [c.text for c in tr.pile] == ["B9", "Y4"]
    assert tr.known[1][Card.parse("R5")] == 1 and tr.known[0][Card.parse("G1")] == 1
    tr.events([{"e": "hit", "seat": 1, "card": "R5", "meld": 0, "end": None},
               {"e": "reshuffle", "draw_size": 40}])
    assert tr.known[1][Card.parse("R5")] == 0
    assert [c.text for c in tr.pile] == ["Y4"]
    tr.events([{"e": "deal", "hand": 3, "dealer": 1, "discard_top": "S"}])
    assert [c.text for c in tr.pile] == ["S"] and not tr.known


def test_tracker_keeps_the_naturals_each_seat_let_go_this_hand() -> None:
    """A draw from the deck passes the natural on top of the pile; a discard lets its card
    go; Skips and Wilds are not evidence of anything; a new deal starts afresh."""
    tr = _Tracker()
    tr.events([
        {"e": "deal", "hand": 1, "dealer": 0, "discard_top": "R5"},
        {"e": "draw", "seat": 1, "from": "deck"},
        {"e": "discard", "seat": 1, "card": "S", "skip": 0},
        {"e": "draw", "seat": 1, "from": "deck"},
        {"e": "discard", "seat": 1, "card": "B9", "skip": None},
        {"e": "draw", "seat": 0, "from": "discard", "card": "B9"},
        {"e": "discard", "seat": 0, "card": "W", "skip": None},
        {"e": "draw", "seat": 1, "from": "deck"},
    ])
    assert [(c.text, passed) for c, passed in tr.declined[1]] == [("R5", True), ("B9", False)]
    assert 0 not in tr.declined  # it took B9 and let a Wild go
    tr.events([{"e": "deal", "hand": 2, "dealer": 1, "discard_top": "G3"}])
    assert not tr.declined


def test_a_sampled_hand_counts_less_for_each_card_its_seat_let_go_that_it_needed() -> None:
    """Phase 1 (two sets of 3): a hand with a pair of 2s would have taken the 2 it let go, so
    it counts a fifth; one that also needed the 8 it let go, a twenty-fifth; a hand that
    needs neither counts whole."""
    expert = ExpertStrategy(rollouts=1)
    let_go = parse_cards(["R2", "B8"])
    pairs = parse_cards("R2 B2 G8 Y8 R5 B6 G7 Y9 R10 B11".split())
    one_pair = parse_cards("R2 B2 G4 Y3 R5 B6 G7 Y9 R10 B11".split())
    neither = parse_cards("R1 B1 G4 Y3 R5 B6 G7 Y9 R10 B11".split())
    weight = [expert._hand_weight(let_go, h, PHASES[1], memo_missing(h, PHASES[1])) for h in (pairs, one_pair, neither)]
    assert weight == pytest.approx([0.04, 0.2, 1.0])
    assert len(pairs) == 10  # left as it was
    assert ExpertStrategy(rollouts=1, evidence=None)._let_go(1) == []


def test_the_next_seat_is_thought_less_likely_to_take_a_number_it_passed() -> None:
    """The next seat drew from the deck with B2 on the pile: among its sampled hands, those
    that a 2 would have helped count a fifth, so it is thought to take Y2 less often than
    when every sample counts alike, and G7 about as often."""
    game, log = _after_the_next_seat_took("B2", take=False)
    view = game.view(0)
    hand = cards_of(view["cards"])
    cards = parse_cards(["Y2", "G7"])
    share = {}
    for evidence in (0.2, None):
        expert = ExpertStrategy(rollouts=1, evidence=evidence, feed_samples=400)
        expert.new_game("g1", 0)
        expert.observe(log)
        pile = expert._pile(view, Card.parse(view["discard_top"]))
        taken, total = expert._taken(view, hand, pile, 1, PHASES[1], cards, _random.Random(1))
        share[evidence] = [k / total for k in taken]
    assert share[0.2][0] < 0.5 * share[None][0]
    assert share[0.2][1] == pytest.approx(share[None][1], abs=0.1)


def test_strong_discards_keep_outs_and_never_a_wild_first() -> None:
    """Before laying phase 1 (two sets of 3) from R3 B3 G7 Y7 W B1 G9 Y12: the lone cards
    go first, the highest penalty among equals (Y12); the Wild last."""
    hand = parse_cards("R3 B3 G7 Y7 W B1 G9 Y12".split())
    ranked = rank_discards(hand, PHASES[1], False, [], unseen_counts(hand, [], None))
    assert ranked[0] is Card.parse("Y12")
    assert ranked[-1] is Card.parse("W")
    assert set(ranked[:3]) == set(parse_cards(["B1", "G9", "Y12"]))


def _view(seat: int, laid: list[bool], skip_pending: list[bool] | None = None) -> dict[str, Any]:
    return {"seat": seat, "players": [{"seat": s, "laid": x, "skip_pending": (skip_pending or [False] * len(laid))[s],
                                       "cards": 8, "score": 0} for s, x in enumerate(laid)]}


def test_strong_does_not_discard_what_the_next_seat_can_hit() -> None:
    """Before laying phase 1 from R3 B3 G7 Y7 B1 G9 Y12 R5: the lone cards go first. With
    a set of 12s on the table, laid by the seat that draws next, Y12 would let that seat
    take it and hit it (R3.1, R7.1): it counts as a card the phase needs, so it goes after
    the other lone cards, and after a card of the pairs as well (either costs one card,
    and that one helps nobody)."""
    hand = parse_cards("R3 B3 G7 Y7 B1 G9 Y12 R5".split())
    twelves = Meld(0, 1, "set", tuple(parse_cards(["R12", "B12", "G12"])), number=12)
    unseen = unseen_counts(hand, [twelves], None)
    plain = rank_discards(hand, PHASES[1], False, [twelves], unseen)
    assert plain[0] is Card.parse("Y12")
    denied = rank_discards(hand, PHASES[1], False, [twelves], unseen, deny=True)
    assert set(denied[:3]) == set(parse_cards(["B1", "G9", "R5"])) and denied[-1] is Card.parse("Y12")


def test_strong_sheds_points_when_its_phase_is_out_of_reach() -> None:
    """Phase 1 from R3 B3 R11 B11 G5 B7 W: the lone G5 and B7 go first; with `shed` a
    10-point card goes first (R1.3, R8.2: what is left in hand counts against the seat),
    even one the phase needs. The Wild stays last."""
    hand = parse_cards("R3 B3 R11 B11 G5 B7 W".split())
    unseen = unseen_counts(hand, [], None)
    assert {c.text for c in rank_discards(hand, PHASES[1], False, [], unseen)[:2]} == {"G5", "B7"}
    ranked = rank_discards(hand, PHASES[1], False, [], unseen, shed=True)
    assert {c.text for c in ranked[:2]} == {"R11", "B11"} and ranked[-1] is Card.parse("W")


def test_discard_context_looks_at_the_seat_that_draws_next() -> None:
    """`deny` follows the next seat to draw: past one that loses its turn to a Skip (R6.4);
    `shed` once another seat has laid and the phase misses 3 cards or more."""
    far = parse_cards("R1 B3 G5 Y7 R9 B11".split())  # phase 1: 4 cards missing
    near = parse_cards("R3 B3 G3 Y7 R7 B11".split())  # 1 missing
    assert discard_context(_view(0, [False, True, False]), far, PHASES[1], False) == (True, True)
    assert discard_context(_view(0, [False, True, False], [False, True, False]), far, PHASES[1], False) == (False, True)
    assert discard_context(_view(0, [False, False, True]), near, PHASES[1], False) == (False, False)
    assert discard_context(_view(0, [False, True, False]), near, PHASES[1], True) == (False, False)


def test_strong_lays_its_spare_wilds_with_its_phase() -> None:
    """R3.4, R5.4: a hit cannot reach a meld laid this turn, so a Wild kept back after the
    lay waits a turn. Phase 1 from R3 B3 G3 R7 B7 G7 W Y12: the Wild goes into a set and
    only Y12 stays in hand. The engine takes the lay."""
    hand = parse_cards("R3 B3 G3 R7 B7 G7 W Y12".split())
    lay, hits, rest = play_choice(hand, PHASES[1], False, [], unseen_counts(hand, [], None))
    assert lay is not None and sum(len(m) for m in lay) == 7 and any(c.is_wild for m in lay for c in m)
    assert rest == [Card.parse("Y12")] and not hits
    g = Game(Rules(), 2, seed=0)
    g.start()
    p = g.players[g.current]
    p.hand = list(hand)
    g.apply(action_from_json({"draw": "deck"}, "draw"))
    drawn = p.hand[-1]
    g.apply(action_from_json({"lay": [[c.text for c in m] for m in lay], "discard": drawn.text}, "play"))
    assert p.laid and sorted(c.text for c in p.hand) == ["Y12"]


def test_strong_lays_spare_wilds_at_a_runs_open_end() -> None:
    """Phase 4 (a run of 7) from 1..7 and a Wild: the run takes the Wild at its high end (8)."""
    hand = parse_cards("R1 B2 G3 Y4 R5 B6 G7 W".split())
    lay, _, rest = play_choice(hand, PHASES[4], False, [], unseen_counts(hand, [], None))
    assert lay is not None and [c.text for c in lay[0]] == "R1 B2 G3 Y4 R5 B6 G7 W".split() and rest == []


def test_a_hit_wild_bridges_to_a_natural_card_held() -> None:
    """R7.3: on a run of 5..8 with G3 and a Wild in hand, the Wild goes on the low end (4)
    so that G3 can follow; on 3..7 with B9 it goes on the high end."""
    for run, held, end in [("R5 B6 G7 Y8", "G3", "low"), ("R3 B4 G5 Y6 R7", "B9", "high")]:
        cards = parse_cards(run.split())
        meld = Meld(0, 1, "run", tuple(cards), low=cards[0].number, high=cards[-1].number)
        hand = parse_cards(["W", held])
        done = hit_cards(hand, [meld])
        assert [(c.text, i, e) for c, i, e in done] == [("W", 0, end), (held, 0, None)] and hand == []


def test_memo_missing_agrees_with_the_finder() -> None:
    for text, number in [("R3 B3 G7 Y7 B1 G9", 1), ("R1 B2 G3 Y5 W S", 4), ("R1 R5 R9 W B2 G3 Y4", 8),
                         ("R1 B1 G1 Y1 R2 R2 W W", 9)]:
        hand = parse_cards(text.split())
        assert memo_missing(hand, PHASES[number]) == missing(hand, PHASES[number])
        assert memo_missing(hand, PHASES[number]) == missing(hand, PHASES[number])  # remembered


def test_make_strategy_names() -> None:
    assert isinstance(make_strategy("strong"), StrongStrategy)
    e = make_strategy("expert@40", seed=2)
    assert isinstance(e, ExpertStrategy) and e.ms == 40 and e.seed == 2
    e = make_strategy("expert@r12", seed=3)
    assert isinstance(e, ExpertStrategy) and e.rollouts == 12 and e.seed == 3
    with pytest.raises(ValueError, match="unknown strategy"):
        make_strategy("grandmaster")
    with pytest.raises(ValueError, match="ms must be positive"):
        ExpertStrategy(ms=0)


def test_expert_command_line() -> None:
    args = parse_args(["--ms", "80", "--seed", "4"])
    assert (args.ms, args.seed, args.rollouts, args.clock, args.wall_ms) == (80, 4, None, "cpu", DEFAULT_WALL_MS)
    assert parse_args(["--clock", "wall", "--wall-ms", "90"]).wall_ms == 90
    for bad in (["--ms", "-1"], ["--wall-ms", "0"], ["--clock", "sundial"]):
        with pytest.raises(SystemExit):
            parse_args(bad)
    bot = make_bot(parse_args([]))
    assert isinstance(bot.strategy, ExpertStrategy)
    assert bot.strategy.clock is time.process_time and bot.strategy.ms == DEFAULT_MS


class _Clocks:
    """A fake CPU clock and wall clock, moved by hand."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.wall = 100.0


def _fake_clocks(monkeypatch: pytest.MonkeyPatch, s: ExpertStrategy) -> _Clocks:
    c = _Clocks()
    s.clock = lambda: c.cpu
    monkeypatch.setattr(expert_module.time, "monotonic", lambda: c.wall)
    return c


def test_cpu_budget_is_not_charged_for_time_without_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the CPU clock, wall-clock time in which the bot does not run (other processes
    busy) costs it nothing of its budget while it gets at least half of the time as CPU;
    its own CPU time ends the decision."""
    s = ExpertStrategy(ms=150, clock="cpu", wall_ms=400)
    c = _fake_clocks(monkeypatch, s)
    over = s._timer(s._budget_start(), 1.0)
    c.wall += 0.14  # 140 ms waited for a core, no CPU used: not yet judged
    assert not over()
    c.cpu += 0.12
    c.wall += 0.06  # 120 ms of CPU in 200 ms
    assert not over()
    c.cpu += 0.029
    c.wall += 0.05
    assert not over()
    c.cpu += 0.002  # 151 ms of its own CPU time
    assert over()


def test_a_starved_decision_ends_after_its_budget_of_wall_clock_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Less than half of the wall-clock time as CPU once `ms` of it have passed: the
    machine is starving the bot, and the decision ends (as the wall clock would end it)."""
    s = ExpertStrategy(ms=150, clock="cpu", wall_ms=400)
    c = _fake_clocks(monkeypatch, s)
    over = s._timer(s._budget_start(), 1.0)
    half = s._timer(s._budget_start(), 0.5)  # a draw's share: half of both
    c.cpu += 0.02
    c.wall += 0.076
    assert half() and not over()
    c.wall += 0.075
    assert over()


def test_wall_clock_cap_ends_a_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    s = ExpertStrategy(ms=1000, clock="cpu", wall_ms=400)
    c = _fake_clocks(monkeypatch, s)
    over = s._timer(s._budget_start(), 1.0)
    c.cpu += 0.39
    c.wall += 0.399
    assert not over()
    c.wall += 0.002
    assert over()


def test_wall_clock_budget_takes_the_earlier_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the wall clock, the budget and the cap are one clock: the lesser counts."""
    s = ExpertStrategy(ms=500, clock="wall", wall_ms=100)
    c = _fake_clocks(monkeypatch, s)
    s.clock = expert_module.time.monotonic  # the wall clock, faked
    over = s._timer(s._budget_start(), 1.0)
    c.wall += 0.099
    assert not over()
    c.wall += 0.002
    assert over()
    with pytest.raises(ValueError, match="wall_ms must be positive"):
        ExpertStrategy(wall_ms=0)


def test_expert_bot_keeps_its_cap_inside_the_games_time_limit() -> None:
    """The wall-clock cap is the lesser of --wall-ms and 40 % of the announced move_ms."""
    bot = make_bot(parse_args(["--wall-ms", "400"]))
    strategy = bot.strategy
    assert isinstance(strategy, ExpertStrategy)
    bot.on_game_start({"type": "game_start", "game": "g", "seat": 0, "time": {"move_ms": 500, "game_ms": None}})
    assert strategy.wall_ms == pytest.approx(200)
    bot.on_game_start({"type": "game_start", "game": "g", "seat": 0, "time": {"move_ms": 5000, "game_ms": None}})
    assert strategy.wall_ms == 400
    bot.on_game_start({"type": "game_start", "game": "g", "seat": 0})
    assert strategy.wall_ms == 400


def test_strong_and_expert_bots_over_the_protocol(start) -> None:
    """The bundled bots as processes: a clean game, no faults, under a generous limit."""
    bots = [start("expert", expert_argv(ms=15, seed=1)), start("strong", STRONG_ARGV), start("greedy", GREEDY)]
    res = play_game(bots, ["expert", "strong", "greedy"], Rules(hand_limit=6), seed=3, game_id="g-ex",
                    time_control=TC)
    assert res.faults == [] and res.forfeits == [] and res.stale_replies == 0
    assert res.decisions > 0 and min(res.places) == 1


def test_the_seat_screen_pairs_games_and_its_knowing_players_see_what_they_say() -> None:
    """tests/benchmarks/seat_screen.py: the two games of a pair are the same deal and
    opponents (the same player twice places the same), and its yardsticks that cheat
    search the true deal: `knows-all` the other hands and the draw pile as they are,
    `knows-hands` the hands with the pile shuffled, `knows-deck` the pile with the hands
    dealt again."""
    import random as _random

    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    try:
        import seat_screen
    finally:
        sys.path.pop(0)
    _, _, ((pa, _), (pb, _)) = seat_screen.play_pair(("strong", "strong", 3, 1, 5, ["greedy", "greedy"]))
    assert pa == pb
    _, _, ((pa, _), _) = seat_screen.play_pair(("knows-all@r2", "greedy", 0, 0, 5, ["greedy"]))
    assert pa in (1, 2)
    g = Game(Rules(), 3, seed=9)
    g.start()
    state = g.view(g.current)
    seat = g.current
    for spec, hands, deck in (("knows-all@r2", True, True), ("knows-hands@r2", True, False),
                              ("knows-deck@r2", False, True)):
        p = seat_screen.make(spec, seed=1)
        p.truth = g
        w = p._sample(state, "draw", list(g.players[seat].hand), [], _random.Random(2))
        others = [s for s in range(3) if s != seat]
        assert (w.draw_pile == g.draw_pile) is deck, spec
        assert sorted(w.draw_pile, key=str) == sorted(g.draw_pile, key=str)
        assert all(w.players[s].hand == g.players[s].hand for s in others) is hands, spec
        assert sorted((c for s in others for c in w.players[s].hand), key=str) == \
            sorted((c for s in others for c in g.players[s].hand), key=str)
        assert w.players[seat].hand == g.players[seat].hand


def _after_the_next_seat_took(top: str, take: bool = True) -> tuple[Game, list[dict[str, Any]]]:
    """Heads-up, phase 1: seat 1 takes `top` from the discard pile and discards B12 (or,
    not `take`, draws G1 from the deck, passing `top`, and discards G1); seat 0 draws Y11
    from the deck and holds R3 B3 G5 Y5 R9 B9 G7 Y2 R11 B11 Y11 (its set of 11s down to
    one card missing, whichever single it lets go)."""
    mine = "R3 B3 G5 Y5 R9 B9 G7 Y2 R11 B11".split()
    theirs = "R1 B4 G6 Y8 R10 B12 G12 Y6 R2 B5".split()
    draw = ["Y11", "G1"] if take else ["G1", "Y11"]
    deck = Deck.from_dict({"deals": [{"hands": [mine, theirs], "discard": top, "draw": draw}]})
    game = Game(Rules(), 2, seed=3, deck=deck, game_id="g1")
    log = list(game.start())
    log += game.apply(action_from_json({"draw": "discard" if take else "deck"}, "draw"), 1)
    log += game.apply(action_from_json({"discard": "B12" if take else "G1"}, "play"), 1)
    log += game.apply(action_from_json({"draw": "deck"}, "draw"), 0)
    return game, log


def test_expert_keeps_from_the_next_seat_the_number_it_was_seen_to_take() -> None:
    """The strong player lets G7 go (a single, as good as Y2 for its phase and first by
    its order); the expert, having seen the next seat take R7, gives it another card."""
    game, log = _after_the_next_seat_took("R7")
    view = game.view(0)
    expert = ExpertStrategy(ms=60_000, seed=5, rollouts=1)
    expert.new_game("g1", 0)
    expert.observe(log)
    assert Card.parse(expert.decide(view, "play", None)["discard"]).number != 7
    assert StrongStrategy().decide(view, "play", None) == {"discard": "G7"}
    plain = ExpertStrategy(ms=60_000, seed=5, rollouts=1, feed=None)
    plain.new_game("g1", 0)
    plain.observe(log)
    assert plain.decide(view, "play", None) == {"discard": "G7"}  # the prior alone: strong's discard
