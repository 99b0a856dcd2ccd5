"""Property tests of the rules engine: whole random games, checked after every action.

Hypothesis draws the game (seed, variant, phase list, 2..6 seats, a mixture of greedy and
random players, sometimes tiny turn and hand limits so that R8.4 and R9.5 fire) and the
game is driven action by action. After every action:

- all 108 cards are accounted for (R1.1): hands + draw pile + discard pile + table melds;
- every table meld is still a valid meld (R4) and never holds a Skip (R4.6);
- scores never fall (R8.2) and completed phases never go back (R8.3);
- the game stays within its limits: hand number <= hand limit (R9.5), turns in a hand
  <= turn limit (R8.4), and the number of actions is bounded;
- the view handed to the seat to move shows its own hand exactly and no hidden card of
  anybody else (R11.2).

The same seed and the same decisions give the same event transcript, and random (mostly
illegal) actions thrown at the engine either apply or raise `IllegalMove` /
`MalformedAction` and then leave the state exactly as it was.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from harness.engine import (
    CARD_TYPES,
    DECK,
    Game,
    IllegalMove,
    MalformedAction,
    Rules,
    action_from_json,
)
from harness.engine.melds import check_group
from harness.engine.phases import MeldReq
from harness.engine.game import _shuffle
from harness.players import GreedyStrategy, RandomStrategy, play_local

DECK_COUNT = Counter(DECK)
CARD_TEXTS = {c.text for c in CARD_TYPES}
MIN_SIZE = {"set": 2, "run": 2, "color": 1}
CUSTOM = {"melds": [{"kind": "run", "size": 5}, {"kind": "color", "size": 3}]}

# Small enough that the whole file runs well under a minute on 2 cores.
GAME_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# ----- what is drawn ---------------------------------------------------------------------


@st.composite
def rules_dicts(draw: st.DrawFn, long_games: bool) -> dict[str, Any]:
    """Rules of every variant of R10, with limits sometimes small enough to bite."""
    kind = draw(st.sampled_from(["standard", "fixed", "first_to", "even", "extra", "chosen", "custom"]))
    d: dict[str, Any] = {}
    if kind == "fixed":
        d["variant"] = "fixed"
    elif kind == "even":
        d["phases"] = [2, 4, 6, 8, 10]
    elif kind == "extra":
        d["phases"] = list(range(11, 21))
    elif kind == "chosen":
        d["phases"] = draw(st.lists(st.sampled_from(range(1, 21)), min_size=1, max_size=5))
    elif kind == "custom":
        d["phases"] = draw(
            st.sampled_from([[CUSTOM], [1, CUSTOM], [CUSTOM, 8, 14]])
        )
    n_phases = len(d.get("phases", range(10)))
    if kind == "first_to":
        d["first_to"] = draw(st.sampled_from(range(1, n_phases + 1)))
    # Random players rarely lay: keep their games short, or they take 60 x 300 turns.
    # Small limits make R8.4 (stalled hands) and R9.5 (hand limit) fire.
    if long_games:
        d["turn_limit"] = draw(st.sampled_from([2, 3, 5, 8, 15, 30, 300, 300, 300, 300]))
        d["hand_limit"] = draw(st.sampled_from([1, 2, 3, 5, 60, 60, 60, 60]))
    else:
        d["turn_limit"] = draw(st.sampled_from([2, 3, 5, 8, 15, 30, 80]))
        d["hand_limit"] = draw(st.sampled_from([1, 2, 3, 4, 6]))
    return d


@st.composite
def games(draw: st.DrawFn) -> tuple[dict[str, Any], list[int | None], int]:
    """(rules dict, per seat None = greedy or a random player's seed, game seed)."""
    n = draw(st.integers(2, 6))
    mix = draw(st.sampled_from(["greedy", "greedy", "mixed", "mixed", "random"]))
    seeds = st.integers(0, 2**16)
    if mix == "greedy":
        kinds: list[int | None] = [None] * n
    elif mix == "random":
        kinds = draw(st.lists(seeds, min_size=n, max_size=n))
    else:
        kinds = draw(st.lists(st.one_of(st.none(), seeds), min_size=n, max_size=n))
    # A greedy player ends hands by going out; random players alone rarely do.
    rules = draw(rules_dicts(long_games=None in kinds))
    seed = draw(st.integers(0, 2**32 - 1))
    return rules, kinds, seed


def make_players(kinds: list[int | None]) -> list[Any]:
    return [GreedyStrategy() if k is None else RandomStrategy(k) for k in kinds]


# ----- the checks ------------------------------------------------------------------------


def texts(cards: Any) -> list[str]:
    return [c.text for c in cards]


def all_cards(game: Game) -> Counter:
    c: Counter = Counter()
    for p in game.players:
        c.update(p.hand)
    c.update(game.draw_pile)
    c.update(game.discard_pile)
    for m in game.table:
        c.update(m.cards)
    return c


def check_state(game: Game, prev: dict[str, Any]) -> None:
    """Invariants of the whole state; `prev` holds the last scores and phases."""
    assert all_cards(game) == DECK_COUNT, "R1.1: cards were created or lost"
    for m in game.table:
        assert not any(c.is_skip for c in m.cards), f"R4.6: {m.describe()}"
        kind, number, color, low, high = check_group(m.cards, MeldReq(m.kind, MIN_SIZE[m.kind]))
        assert (kind, number, color, low, high) == (m.kind, m.number, m.color, m.low, m.high), m.describe()
    scores = [p.score for p in game.players]
    completed = [p.completed for p in game.players]
    if prev:
        assert all(a >= b for a, b in zip(scores, prev["scores"])), f"R8.2: scores fell {prev['scores']} -> {scores}"
        assert all(a >= b for a, b in zip(completed, prev["completed"])), (
            f"R8.3: phases went back {prev['completed']} -> {completed}"
        )
    prev["scores"], prev["completed"] = scores, completed
    rules = game.rules
    assert 1 <= game.hand_no <= rules.hand_limit, f"R9.5: hand {game.hand_no} > limit {rules.hand_limit}"
    assert 0 <= game.hand_turns <= rules.turn_limit, f"R8.4: {game.hand_turns} turns > {rules.turn_limit}"
    assert all(p.completed <= max(rules.goal, len(rules.phases)) for p in game.players)


def card_strings(obj: Any, path: tuple = ()) -> list[tuple[tuple, str]]:
    """Every string in a JSON value that names a card, with its path."""
    out: list[tuple[tuple, str]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(card_strings(v, path + (k,)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(card_strings(v, path + (i,)))
    elif isinstance(obj, str) and obj in CARD_TEXTS:
        out.append((path, obj))
    return out


def check_view(game: Game, seat: int, view: dict[str, Any]) -> None:
    """R11: the view shows the seat's own hand exactly and nobody's hidden cards."""
    view = json.loads(json.dumps(view))  # it is JSON, and we look at the JSON
    assert view["seat"] == seat
    assert Counter(view["cards"]) == Counter(texts(game.players[seat].hand)), "R11.2: own hand wrong"
    # Lists of cards appear only as the own hand and as table melds.
    for path, _ in card_strings(view):
        allowed = (
            (len(path) == 2 and path[0] == "cards")
            or (len(path) == 4 and path[0] == "table" and path[2] == "cards")
            or path == ("discard_top",)
        )
        assert allowed, f"R11.2: a card appears at {path} of seat {seat}'s view"
    for q in view["players"]:
        assert isinstance(q["cards"], int), "other hands are shown as sizes only"
    # The view keeps seats' public dicts between calls: they must be what the state says now.
    assert view["players"] == json.loads(json.dumps(game.public_players())), "a stale public dict in the view"
    assert [q["cards"] for q in view["players"]] == [len(p.hand) for p in game.players]
    # And as a multiset: nothing beyond own hand + table + the top discard.
    public = Counter(texts(game.players[seat].hand))
    for m in game.table:
        public.update(texts(m.cards))
    if game.discard_pile:
        public[game.discard_pile[-1].text] += 1
    shown = Counter(s for _, s in card_strings(view))
    assert not shown - public, f"R11.2: seat {seat}'s view shows hidden cards {shown - public}"
    assert view["draw_size"] == len(game.draw_pile)


def check_events(events: list[dict[str, Any]]) -> None:
    for e in events:
        if e["e"] == "draw" and e["from"] == "deck":
            assert "card" not in e, "R11.2: a card drawn from the deck was made public"


class TurnCounter:
    """Counts turns per hand from the actions and events (independent of the engine's
    own counter): a play ends a turn, so does a skipped turn (R6.4)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.turns = 0
        self.hands = 0

    def feed(self, events: list[dict[str, Any]], played: bool) -> None:
        if played:
            self.turns += 1
        for e in events:
            if e["e"] == "deal":
                self.turns = 0
                self.hands += 1
                assert self.hands <= self.rules.hand_limit, "R9.5"
            elif e["e"] == "skipped":
                self.turns += 1
            elif e["e"] == "hand_end":
                assert self.turns <= self.rules.turn_limit, f"R8.4: hand {e['hand']} had {self.turns} turns"
                if e["winner"] is None:
                    assert e["stalled"]
                else:
                    assert e["hands"][e["winner"]] == []
            assert self.turns <= self.rules.turn_limit, "R8.4"


def play_checked(rules: Rules, kinds: list[int | None], seed: int, all_views: bool = False) -> tuple[Game, list]:
    """Play one game action by action, checking every invariant; returns (game, events)."""
    players = make_players(kinds)
    game = Game(rules, len(players), seed, game_id="g0", names=[p.name for p in players])
    for seat, p in enumerate(players):
        p.new_game("g0", seat)
    counter = TurnCounter(rules)
    prev: dict[str, Any] = {}
    transcript = game.start()
    counter.feed(transcript, False)
    check_events(transcript)
    check_state(game, prev)
    bound = rules.hand_limit * rules.turn_limit * 2 + 10
    actions = 0
    while game.decision is not None:
        actions += 1
        assert actions <= bound, "the game did not end within its limits"
        seat, decision = game.current, game.decision
        view = game.view(seat)
        check_view(game, seat, view)
        if all_views:
            for s in range(game.n):
                check_view(game, s, game.view(s))
        opts = None
        if decision == "draw":  # what the referee works out while a bot decides its draw
            before = (game.snapshot(), list(game.draw_pile), game.rng.getstate())
            preview = game.preview_deck_draw()
            assert (game.snapshot(), game.draw_pile, game.rng.getstate()) == before, "a preview changed the game"
        else:  # and while it decides its play
            game.prepare_deal()
            opts = game.options(seat)
        reply = players[seat].decide(view, decision, opts)
        events = game.apply(action_from_json(reply, decision), seat)
        if decision == "draw" and reply["draw"] == "deck" and preview is not None:
            assert preview == (events, game.view(seat), game.options(seat)), "a stale preview"
        counter.feed(events, decision == "play")
        check_events(events)
        check_state(game, prev)
        transcript.extend(events)
    assert transcript[-1]["e"] == "game_end"
    assert sum(1 for e in transcript if e["e"] == "game_end") == 1
    assert game.hand_no <= rules.hand_limit
    return game, transcript


# ----- the tests -------------------------------------------------------------------------


@GAME_SETTINGS
@given(games())
# Four greedy players, first to two phases: two of them tie and play on alone (R9.3).
@example(({"first_to": 2}, [None] * 4, 1))
# A full standard game of six greedy players.
@example(({}, [None] * 6, 2024))
def test_random_games_keep_every_invariant(g: tuple[dict[str, Any], list[int | None], int]) -> None:
    """R1.1, R4, R8.2-R8.4, R9.5, R11.2 after every action of random games of every variant."""
    rules_d, kinds, seed = g
    rules = Rules.from_dict(rules_d)
    game, transcript = play_checked(rules, kinds, seed)
    end = transcript[-1]
    assert end["reason"] in ("finished", "tiebreak", "fixed_hands", "hand_limit")
    if end["reason"] == "hand_limit":
        assert game.hand_no == rules.hand_limit
    if rules.variant == "fixed":
        assert game.hand_no == min(len(rules.phases), rules.hand_limit)
    assert sorted(end["places"])[0] == 1
    event(f"end: {end['reason']}")
    event(f"players: {'all greedy' if all(k is None for k in kinds) else 'all random' if None not in kinds else 'mixed'}")
    event(f"hands: {'1' if game.hand_no == 1 else '2-5' if game.hand_no <= 5 else '6+'}")
    event(f"stalled hands: {'none' if not game.stalled_hands else 'some'}")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_same_seed_same_decisions_same_transcript(g: tuple[dict[str, Any], list[int | None], int]) -> None:
    """Randomness comes from the seed alone: a replay gives the identical transcript, both
    through the checked loop and through `play_local`."""
    rules_d, kinds, seed = g
    rules = Rules.from_dict(rules_d)
    _, first = play_checked(rules, kinds, seed)
    second: list[dict[str, Any]] = []
    play_local(rules, make_players(kinds), seed, game_id="g0", on_events=second.extend)
    assert json.dumps(first) == json.dumps(second)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.integers(2, 40))
def test_no_view_shows_hidden_cards(n: int, seed: int, turn_limit: int) -> None:
    """R11.2 for the views of every seat (not only the one to move), after every action."""
    kinds: list[int | None] = [None if s % 2 == 0 else s for s in range(n)]
    play_checked(Rules(turn_limit=turn_limit, hand_limit=4), kinds, seed, all_views=True)


# ----- random actions thrown at the engine ----------------------------------------------


def fingerprint(game: Game) -> Any:
    """Everything that `apply` may change, hidden parts and the random state included."""
    return (
        [texts(p.hand) for p in game.players],
        [(p.completed, p.score, p.laid, p.skip_pending, p.active) for p in game.players],
        texts(game.draw_pile),
        texts(game.discard_pile),
        [m.to_dict() for m in game.table],
        game.decision, game.current, game.hand_no, game.turn, game.hand_turns, game.dealer,
        game.winner, game.end_reason, game.tiebreak, game.stalled_hands,
        game.rng.getstate(),
    )


JUNK = [None, 5, "X9", "R13", "", [], {}, True, 1.5, "w", "r5"]


def random_reply(rng: random.Random, game: Game, opts: dict[str, Any]) -> Any:
    """A reply built from random parts: mostly illegal, sometimes malformed, now and then
    legal (parts of the options are mixed in)."""
    seat = game.current
    hand = texts(game.players[seat].hand)
    pool = hand + hand + [c.text for c in rng.sample(CARD_TYPES, 6)]

    def card() -> Any:
        return rng.choice(JUNK) if rng.random() < 0.03 else rng.choice(pool)

    r = rng.random()
    if r < 0.35 and game.decision == "play":
        return near_legal(rng, game, card)
    if r < 0.04:
        return rng.choice(JUNK + [[], "draw", {"draw": rng.choice(JUNK)}])
    if game.decision == "draw" or r < 0.1:
        return {"draw": rng.choice(["deck", "discard", "deck", "discard", "both", None, 0])}
    reply: dict[str, Any] = {}
    if rng.random() < 0.4:
        if opts.get("lay") and rng.random() < 0.5:
            reply["lay"] = [list(m) for m in opts["lay"]]
            if rng.random() < 0.5:  # damage it a little
                m = rng.choice(reply["lay"])
                m[rng.randrange(len(m))] = card()
        else:
            reply["lay"] = [[card() for _ in range(rng.randint(0, 6))] for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.4:
        hits = []
        for _ in range(rng.randint(0, 3)):
            if opts.get("hits") and rng.random() < 0.5:
                hits.append(dict(rng.choice(opts["hits"])))
            else:
                h: dict[str, Any] = {"card": card(), "meld": rng.randint(-1, len(game.table) + 2)}
                if rng.random() < 0.4:
                    h["end"] = rng.choice(["low", "high", "middle", None])
                hits.append(h)
        reply["hits"] = hits
    if rng.random() < 0.9:
        reply["discard"] = card()
    if rng.random() < 0.3:
        reply["skip"] = rng.choice([None, -1, 0, 1, 2, 3, 5, 6, seat, "1"])
    return reply


def near_legal(rng: random.Random, game: Game, card: Any) -> dict[str, Any]:
    """The greedy player's (legal) play, often with one part changed."""
    seat = game.current
    reply = json.loads(json.dumps(GreedyStrategy().decide(game.view(seat), "play", game.options(seat))))
    change = rng.randrange(9)
    if change == 0 and reply.get("lay"):
        m = rng.choice(reply["lay"])
        m.pop(rng.randrange(len(m)))  # one card short, or a run with a gap
    elif change == 1 and reply.get("lay"):
        rng.choice(reply["lay"]).append(card())  # one card more
    elif change == 2 and reply.get("lay"):
        reply["lay"].append([card() for _ in range(rng.randint(1, 3))])  # a meld too many (R5.4)
    elif change == 3:
        h: dict[str, Any] = {"card": card(), "meld": rng.randint(0, len(game.table))}
        if rng.random() < 0.5:
            h["end"] = rng.choice(["low", "high"])
        reply.setdefault("hits", []).append(h)
    elif change == 4 and reply.get("hits"):
        reply["hits"].append(dict(rng.choice(reply["hits"])))  # the same card hit twice
    elif change == 5:
        if "discard" in reply:
            del reply["discard"]
        else:
            reply["discard"] = card()
    elif change == 6:
        reply["discard"] = card()
    elif change == 7:
        reply["skip"] = rng.randint(-1, game.n)
    return reply


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.randoms(use_true_random=False),
       st.sampled_from([None, [2, 4, 6, 8, 10], list(range(11, 21)), [CUSTOM, 1]]))
def test_random_actions_apply_or_raise_and_change_nothing(
    n: int, seed: int, rng: random.Random, phases: Any
) -> None:
    """Random actions either apply (and keep the invariants) or raise IllegalMove /
    MalformedAction and leave the state exactly as it was (all or nothing)."""
    rules = Rules.from_dict({"phases": phases, "turn_limit": 40, "hand_limit": 3})
    game = Game(rules, n, seed)
    game.start()
    greedy = GreedyStrategy()
    prev: dict[str, Any] = {}
    check_state(game, prev)
    applied = rejected = 0
    for _ in range(250):
        if game.decision is None:
            break
        seat, decision = game.current, game.decision
        opts = game.options(seat) if decision == "play" else {}
        reply = random_reply(rng, game, opts)
        as_seat = seat if rng.random() < 0.9 else rng.randrange(n)
        before = fingerprint(game)
        try:
            events = game.apply(action_from_json(reply, decision), as_seat)
        except (IllegalMove, MalformedAction):
            rejected += 1
            assert fingerprint(game) == before, f"a rejected action changed the state: {reply!r}"
            # Go on with a legal move, so the game moves through its phases and hands.
            reply = greedy.decide(game.view(seat), decision, game.options(seat) if decision == "play" else None)
            events = game.apply(action_from_json(reply, decision), seat)
        else:
            applied += 1
            if isinstance(reply, dict) and (reply.get("lay") or reply.get("hits")):
                event("a random lay or hit was legal")
        check_events(events)
        check_state(game, prev)
    assert rejected > 0
    event(f"applied random actions: {'none' if not applied else '1-5' if applied <= 5 else '6+'}")
    event(f"hands reached: {game.hand_no}")


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=2**64), st.integers(min_value=0, max_value=120))
def test_deals_shuffle_as_python_does(seed: int, n: int) -> None:
    """The engine's own Fisher-Yates (pinned so no Python release can change the deals)
    gives what `random.shuffle` gives on the Pythons this project supports."""
    a, b = list(range(n)), list(range(n))
    random.Random(seed).shuffle(a)
    _shuffle(random.Random(seed), b)
    assert a == b
