"""Expert: determinized Monte Carlo search over the strong player's candidate moves.

How it decides, from its seat's view and the public events alone:

1. **Candidates and prior.** The strong player (`harness.players.strong`) proposes the
   move; the lay and the hits are kept as it makes them (laying at once and hitting every
   card is what every bundled player does: holding back costs points and tempo), and the
   search chooses among the *discards* it ranks best (the first `width`, ranked with its
   denial of the next seat and its shedding of points; the ranking
   counts outs only within the first 30 % of the budget, so that it stays inside a time
   limit on a loaded machine), and between the deck and a discard that is not a Wild at
   the draw before this seat has laid (the prior there is greedy's rule: the strong
   player's outs count costs a hundred searches). A Wild on the discard pile is always
   taken, and once laid a discard that can be hit (none other); a decision with one
   candidate is answered at once. The prior's discard itself gives way to one the seat
   that draws next is less likely to take, while that seat has not laid (`feed`): its
   hand is sampled as in step 2 (with the cards it was seen to take), each sample
   weighed by what that seat let go this hand (a fifth for each card it passed at the
   draw or discarded that would have brought that hand closer to its phase: `evidence`),
   and among the discards that cost this seat no more than the prior's (cards missing
   for its phase; once laid, a card that may still be hit later), the first that the
   next seat's sampled hands would take least often (greedy's rule: it brings the phase
   closer) goes first, if the prior's is taken more often by more than a tenth of the
   samples' weight. Heads-up every discard is offered to the one opponent, and the strong
   player keeps from it only what it could hit once laid.
2. **Determinization.** The unseen cards — the deck less this seat's hand, the table and
   the discard pile as the events built it — are dealt at random to the other seats (each
   its number of cards, with the cards it was seen to take from the discard pile and has
   not laid, hit or discarded since) and to the draw pile. Without the events (a strategy
   asked from views only) the discard pile below its top is unknown and sampled too.
3. **Rollouts.** For each sample, every candidate is played and the hand is played out
   through the rules engine in-process by a fast policy (greedy's: one run of the phase
   finder per turn, where the strong player's discards need a dozen; with the strong
   player's Skips), the same sample and the same random stream for every candidate
   (common random numbers: the candidates are compared on the same luck, so the
   difference between them is not drowned by the luck of the deal).
4. **Outcome.** A hand's end is scored for this seat: its phase laid (1) against the
   others' (their mean), the difference of penalty points (/ 150), and ±3 when the game
   ends in the rollout and this seat wins or another does. Counting instead the best of
   the others (did any other seat lay its phase; the fewest points among them) or no
   other seat at all (`others="max"` / `"self"`) changes nothing at two players and was
   measured at four: in-process 4-player duplicate tables at 10 ms of CPU against strong
   and greedy, the mean placed 0.06 ± 0.19 places behind the best of the others (104
   games) and 0.19 ± 0.19 behind this seat's outcome alone (112 games): no difference
   shown, so the mean stays (BENCHMARKS.md).
5. **Race and choice.** After 8 samples, a candidate whose paired difference from the
   prior's move is settled — beyond 2.5 standard errors either way, or within 0.02 of
   nothing (3 penalty points) — is no longer played out, and the search stops as soon as
   every candidate is settled: `ms` is a cap, most decisions take a fraction of it. At
   the end the prior's move stands unless a candidate not settled below it beats it on
   the paired samples by more than one standard error, or two on fewer than 20 samples:
   with few samples (a small budget, a starved CPU) the prior is the better guess. A
   draw has half the budget.

Budget: `ms` milliseconds per decision at most (anytime: it samples until the time is up
or the race is over; wall-clock time, or with `clock="cpu"` the process's CPU time, which
other processes on a loaded machine do not eat into), and with `wall_ms` never more than
that many milliseconds of wall-clock time whatever the clock; on the CPU clock with such
a cap a decision also ends once it has waited `ms` of wall-clock time and got less than
half of it as CPU (the bot behind the referee runs on its CPU time so:
harness.bots.expert); or a fixed number of
samples (`rollouts`, for reproducible play whatever the machine's speed; the time limits
then only cap it). Its random numbers come from `seed`, the game, the seat and the turn, so the
same view, events and seed give the same samples.

Why this method, on measurement: a rollout to the end of the hand costs 0.3 ms of CPU at
2 players and 0.7 ms at 4 (hands are a few turns per seat), so the full default budget
buys some 180 samples of the candidates at 2 players and 60 at 4 on a free core. A game
asks the expert about 190 decisions (2 players, 10 hands); without the race every one of
them but the forced ones took the full budget (50.8 s of CPU for two games at 150 ms).
Replaying those searches' samples, the race stops after a third of them at 2 players and
half at 4, and keeps the full search's choice in 97.6 % and 98.6 % of the searches (the
full search's own one-standard-error rule is noisier than that). Once laid, taking a
discard that can be hit was overruled in 2 of 121 draws, so it is no longer searched;
the other draws were overruled in 1 of 10, and about as often on a fifth of the samples
as on all of them, so they have half the budget. Together: 51 ms of CPU per decision
where it was 132, about 11 s of CPU for a 2-player game instead of 25.
The search overrides the prior on about 3 in 10 of the discards it searches (25 of 81 and
20 of 68 in the games replayed) and 1 in 10 of the draws before laying (25 of 269).

A hand is decided mostly by which cards come, so sampled play-outs measure what a discard
really costs (a card the next seat takes, an out given up), which rules only guess; a
tree over information sets would spread the same few hundred play-outs over chance nodes
(every draw from the deck branches some 50 ways) and revisit almost none. What the budget buys in strength is in
BENCHMARKS.md ("The strong and expert bots").
"""

from __future__ import annotations

import math
import random
import time
import zlib
from collections import Counter
from typing import Any, Callable, Sequence

from ..engine import CARD_TYPES, PHASES, Card, Draw, Game, Hit, Meld, Phase, Play, Rules, find_lay, plan
from ..engine.cards import COPIES
from .base import Strategy, TableModel, cards_of, phase_from_view
from .greedy import _partners, skip_targets
from .strong import (SHED_MISSING, after_hits, can_ever_join, closer, discard_context, hit_cards, hit_json, lay_spare_wilds, memo_missing, next_seat, play_choice, rank_discards,
                     skip_choice, unseen_counts)

DEFAULT_MS = 150.0
"""Per decision by default: a seventh of the default `move_ms` (1000), so that a loaded
2-core machine running games in parallel still answers far inside the limit."""

WIDTH = 4
"""How many of the strong player's best discards the search compares."""

_PRIOR_SHARE = 0.3
"""The share of the budget the prior may spend counting outs to rank the discards; the
rest of the ranking then goes by missing cards and penalty alone."""

_CLOCKS = {"wall": time.monotonic, "cpu": time.process_time}
"""The budget's clock: wall-clock time (what a time limit counts), or this process's CPU
time (what a decision gets on a machine with a core to spare, whatever else runs: the
in-process strength measurements use it so that their figures do not depend on the load)."""

_MIN_CPU_SHARE = 0.5
"""On the CPU clock with a wall-clock cap: the share of the wall-clock time a decision
must get as CPU to go on past `ms` of wall-clock time (see `ExpertStrategy._timer`)."""

_MIN_SAMPLES = 8
"""Samples before a candidate's comparison with the prior may be settled early."""
_Z = 2.5
"""Standard errors by which a candidate must differ from the prior to be settled early."""
_EPS = 0.02
"""A difference from the prior that does not matter (3 penalty points, 2 % of a phase):
a candidate settled within it of the prior is no longer played out."""

_FEW = 20
_FEW_Z = 2.0
"""Below `_FEW` samples a candidate must beat the prior by `_FEW_Z` standard errors, not
one: replaying full searches, most of the prior's moves overruled on 4 to 10 samples at
one standard error were not the full search's choice (8 of 12 at 6 samples)."""

_DRAW_SHARE = 0.5
"""The share of the budget a draw may use: the search overruled the prior at about one
draw in ten, and about as often with a fifth of the samples as with all."""

FEED = 0.1
"""The share of its sampled hands by which the next seat must be less likely to take
another discard than the prior's for the prior's to give way (`ExpertStrategy._least_fed`)."""

FEED_SAMPLES = 32
"""How many hands of the next seat are sampled to judge what it would take."""

EVIDENCE = 0.2
"""The weight a sampled hand of the next seat keeps for each card that seat let go this
hand (passed at the draw or discarded) which would have brought that hand closer to its
phase: such a hand is unlikely, for a player that takes what brings it closer and lets go
what does not (`ExpertStrategy._least_fed`). Not 0: the hand has changed since."""

_OTHERS = ("mean", "max", "self")
"""How a rollout's outcome counts the other seats (`others`): their mean (the default),
the best of them, or not at all (this seat's own phase and points only)."""

_MAX_STEPS = 400  # decisions in one rollout before it is cut off (a stalled hand)


def _mean_se(d: Sequence[float]) -> tuple[float, float]:
    """The mean of `d` and its standard error (at least two values)."""
    n = len(d)
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1)
    return mean, math.sqrt(var / n)


class _SimGame(Game):
    """A game for rollouts: it stops at the end of the hand instead of dealing the next."""

    def _deal(self, events: list[dict[str, Any]]) -> None:
        if not self.started or self.hand_no == 0:  # pragma: no cover - rollouts start mid-hand
            super()._deal(events)
            return
        self.decision = None


# ----- the fast policy of rollouts ------------------------------------------------------------

def _threat_seat(g: Game, seat: int) -> int | None:
    targets = g.skip_targets(seat)
    if not targets:
        return None
    ps = g.players

    def threat(s: int) -> tuple:
        p = ps[s]
        return (p.laid, -len(p.hand) if p.laid else 0, p.completed, -len(p.hand), -p.score, -s)

    return max(targets, key=threat)


def _takes(hand: list[Card], phase: Phase, laid: bool, table: Sequence[Meld], top: Card) -> bool:
    """The prior at the draw (greedy's rule, one search: the strong player's count of outs
    costs a hundred, too many for a player with a time limit): take what can be hit once
    laid, or what brings the phase closer."""
    if laid:
        return any(m.can_hit(top) for m in table)
    return closer(hand, phase, top, memo_missing(hand, phase))


def _fast_draw(g: Game, seat: int) -> Draw:
    if not g.can_draw_from_discard():
        return _DECK
    top = g.discard_pile[-1]
    if top.is_wild:
        return _DISCARD
    p = g.players[seat]
    if p.laid:
        return _DISCARD if any(m.can_hit(top) for m in g.table) else _DECK
    hand = p.hand
    if not any(c.number == top.number or c.color == top.color or abs(c.number - top.number) <= 3
               for c in hand if c.number):
        return _DECK
    phase = g.phase_of(seat)
    return _DISCARD if closer(hand, phase, top, memo_missing(hand, phase)) else _DECK


def _fast_discard(rest: list[Card], laid: bool, table: Sequence[Meld], spare: set[int] | None) -> Card:
    """Greedy's discard: a Skip; once laid the highest card no meld takes; before, the
    card outside the best partial layout (`spare`: indexes into `rest`) with the fewest
    partners, the higher penalty first."""
    skip = next((c for c in rest if c.is_skip), None)
    if skip is not None:
        return skip
    naturals = [c for c in rest if c.number]
    if not naturals:
        return rest[0]
    if laid:
        return max(naturals, key=lambda c: (not any(m.can_hit(c) for m in table), c.points, c.index))
    pool = [c for i, c in enumerate(rest) if spare is not None and i in spare and c.number] or naturals
    return min(pool, key=lambda c: (_partners(c, rest), -c.points, c.index))


def _fast_play(g: Game, seat: int) -> Play:
    p = g.players[seat]
    rest = list(p.hand)
    lay = None
    laid = p.laid
    spare = None
    if not laid:
        phase = g.phase_of(seat)
        need, used = plan(rest, phase)
        if need == 0:
            found = find_lay(rest, phase)
            if found:
                for m in found:
                    for c in m:
                        rest.remove(c)
                lay_spare_wilds(found, rest, phase)
                lay = tuple(tuple(m) for m in found)
                laid = True
        else:
            spare = set(range(len(rest))) - used
    hits: tuple[Hit, ...] = ()
    table = g.table
    if laid and table:
        melds = list(table)
        done = hit_cards(rest, melds)
        if done:
            hits = tuple(Hit(card, table[i].id, end) for card, i, end in done)
            table = melds
    if not rest:
        return Play(lay, hits, None, None)
    card = _fast_discard(rest, laid, table, spare)
    return Play(lay, hits, card, _threat_seat(g, seat) if card.is_skip else None)


_DECK = Draw("deck")
_DISCARD = Draw("discard")


def rollout(g: Game, me: int, others: str = "mean", win: float = 3.0) -> float:
    """Play `g` to the end of its hand with the fast policy; the outcome for seat `me`."""
    end = None
    game_end = None
    steps = 0
    while g.decision is not None and steps < _MAX_STEPS:
        steps += 1
        seat = g.current
        act = _fast_draw(g, seat) if g.decision == "draw" else _fast_play(g, seat)
        for ev in g.apply(act):
            if ev["e"] == "hand_end":
                end = ev
            elif ev["e"] == "game_end":
                game_end = ev
    return outcome(g, me, end, game_end, others, win)


def outcome(g: Game, me: int, end: dict[str, Any] | None, game_end: dict[str, Any] | None,
            mode: str = "mean", win: float = 3.0) -> float:
    """A hand's end scored for `me` (see the module docstring); a hand cut off is scored
    by who has laid so far and the points in hand."""
    n_active = [p.seat for p in g.players if p.active]
    others = [s for s in n_active if s != me] or [s for s in range(g.n) if s != me]
    if end is not None:
        completed = set(end["completed"])
        points = end["points"]
    else:
        completed = {p.seat for p in g.players if p.laid}
        points = [sum(c.points for c in p.hand) for p in g.players]
    if mode == "self":
        u = float(me in completed) - points[me] / 150.0
    elif mode == "max":
        u = (me in completed) - max(s in completed for s in others)
        u += (min(points[s] for s in others) - points[me]) / 150.0
    else:
        u = (me in completed) - sum(s in completed for s in others) / len(others)
        u += (sum(points[s] for s in others) / len(others) - points[me]) / 150.0
    if game_end is not None and game_end.get("winner") is not None:
        u += win if game_end["winner"] == me else -win / len(others)
    return u


# ----- what the seat knows: the discard pile and the cards seen taken -----------------------------

class _Tracker:
    """Public knowledge of the hand from the events: the discard pile (all of it, while the
    events are followed from the deal) and the cards each seat took from it and still
    holds as far as anyone can tell."""

    def __init__(self) -> None:
        self.hand = -1
        self.pile: list[Card] = []
        self.known: dict[int, Counter] = {}
        self.declined: dict[int, list[tuple[Card, bool]]] = {}  # per seat: naturals it let go this hand (card, passed)
        self.whole = False  # followed since the deal of `hand`

    def events(self, events: Sequence[dict[str, Any]]) -> None:
        for ev in events:
            kind = ev.get("e")
            if kind == "deal":
                self.hand = ev["hand"]
                self.pile = [Card.parse(ev["discard_top"])]
                self.known = {}
                self.declined = {}
                self.whole = True
            elif not self.whole:
                continue
            elif kind == "draw":
                if ev.get("from") == "discard" and self.pile:
                    card = self.pile.pop()
                    self.known.setdefault(ev["seat"], Counter())[card] += 1
                elif self.pile and self.pile[-1].number:
                    self.declined.setdefault(ev["seat"], []).append((self.pile[-1], True))
            elif kind == "discard":
                card = Card.parse(ev["card"])
                self.pile.append(card)
                self._used(ev["seat"], [card])
                if card.number:
                    self.declined.setdefault(ev["seat"], []).append((card, False))
            elif kind == "hit":
                self._used(ev["seat"], [Card.parse(ev["card"])])
            elif kind == "lay":
                cards = ev.get("cards")
                if cards is None:
                    self.known.pop(ev["seat"], None)  # which cards went is in the table, not here
                else:
                    self._used(ev["seat"], [Card.parse(c) for m in cards for c in m])
            elif kind == "reshuffle":
                self.pile = self.pile[-1:]

    def _used(self, seat: int, cards: Sequence[Card]) -> None:
        known = self.known.get(seat)
        if known:
            for c in cards:
                if known[c] > 0:
                    known[c] -= 1


class ExpertStrategy(Strategy):
    """The determinized Monte Carlo player (see the module docstring). `others`, `win`,
    `few_z` and `draw_share` are the outcome's view of the other seats (`_OTHERS`), the
    weight of a game won in a rollout, the standard errors a move must beat the prior by
    on few samples, and a draw's share of the budget; `shed_missing` and `deny_weight`
    the prior's shedding and denial (`strong.discard_context`, `strong.rank_discards`);
    `evidence` and `evidence_discards` the weight of what the next seat let go in the
    discard rule (None: not weighed; without discards: only its passes at the draw)."""

    name = "expert"

    def __init__(self, ms: float | None = None, seed: int = 0, rollouts: int | None = None,
                 width: int = WIDTH, clock: str = "wall", wall_ms: float | None = None, others: str = "mean", win: float = 3.0,
                 few_z: float = _FEW_Z, draw_share: float = _DRAW_SHARE, feed: float | None = FEED,
                 feed_samples: int = FEED_SAMPLES, feed_laid: bool = True, shed_missing: int = SHED_MISSING,
                 deny_weight: float = 1.0, evidence: float | None = EVIDENCE,
                 evidence_discards: bool = True) -> None:
        if others not in _OTHERS:
            raise ValueError(f"others must be one of {', '.join(_OTHERS)}, not {others!r}")
        if clock not in _CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(_CLOCKS)}, not {clock!r}")
        self.clock = _CLOCKS[clock]
        if wall_ms is not None and wall_ms <= 0:
            raise ValueError(f"wall_ms must be positive, not {wall_ms!r}")
        self.wall_ms = None if wall_ms is None else float(wall_ms)
        self.ms = DEFAULT_MS if ms is None else float(ms)
        if self.ms <= 0:
            raise ValueError(f"ms must be positive, not {ms!r}")
        if rollouts is not None and rollouts < 1:
            raise ValueError(f"rollouts must be at least 1, not {rollouts!r}")
        self.seed = seed
        self.rollouts = rollouts
        self.width = int(width)
        self.others = others
        self.win = float(win)
        self.few_z = float(few_z)
        self.draw_share = float(draw_share)
        self.feed = None if feed is None else float(feed)
        self.feed_samples = int(feed_samples)
        self.feed_laid = feed_laid
        self.shed_missing = int(shed_missing)
        self.deny_weight = float(deny_weight)
        self.evidence = None if evidence is None else float(evidence)
        self.evidence_discards = evidence_discards
        self.game = ""
        self.seat = 0
        self.tracker = _Tracker()
        self.last_samples = 0  # samples behind the last decision (for benchmarks)

    def new_game(self, game: str, seat: int) -> None:
        self.game = game
        self.seat = seat
        self.tracker = _Tracker()

    def observe(self, events: Sequence[dict[str, Any]]) -> None:
        self.tracker.events(events)

    # ----- deciding -----------------------------------------------------------------------

    def decide(self, state: dict[str, Any], decision: str, options: dict[str, Any] | None) -> dict[str, Any]:
        t0 = self._budget_start()
        hand = cards_of(state["cards"])
        phase = phase_from_view(state["phase"])
        table = TableModel(state["table"]).melds
        top = Card.parse(state["discard_top"]) if state["discard_top"] else None
        pile = self._pile(state, top)
        unseen = unseen_counts(hand, table, None, pile)
        laid = state["laid"]
        self.last_samples = 0
        if decision == "draw":
            if not state["can_take_discard"] or top is None or top.is_wild:
                return {"draw": "discard" if state["can_take_discard"] and top is not None else "deck"}
            take = _takes(hand, phase, laid, table, top)
            if laid:  # a card that can be hit is a card less in hand: the search overruled this twice in 121 draws
                return {"draw": "discard" if take else "deck"}
            cands: list[Any] = [_DISCARD, _DECK] if take else [_DECK, _DISCARD]
            best = self._search(state, decision, hand, pile, cands, t0)
            return {"draw": best.source}
        lay, hits, rest = play_choice(hand, phase, laid, table, unseen)
        reply: dict[str, Any] = {}
        if lay:
            reply["lay"] = [[c.text for c in m] for m in lay]
        if hits:
            reply["hits"] = [hit_json(table, card, i, end) for card, i, end in hits]
        if not rest:
            return reply
        after = after_hits(table, hits)
        deny, shed = discard_context(state, rest, phase, laid or lay is not None, self.shed_missing)
        ranked = rank_discards(rest, phase, laid or lay is not None, after, unseen, self._timer(t0, _PRIOR_SHARE),
                               deny=deny, shed=shed, deny_weight=self.deny_weight)
        now_laid = laid or lay is not None
        if self.feed is not None and (self.feed_laid or not now_laid):
            ranked = self._least_fed(state, hand, pile, rest, ranked, phase, after if now_laid else None)
        skip_to = skip_choice(state["players"], skip_targets(state))
        first = ranked[0]
        if first.is_skip or len(rest) == 1 or len(ranked) == 1:
            chosen = first
        else:
            lay_t = tuple(tuple(m) for m in lay) if lay else None
            hit_t = tuple(Hit(card, table[i].id, end) for card, i, end in hits)
            cands = [Play(lay_t, hit_t, c, None) for c in ranked[: self.width] if not c.is_wild or c is ranked[0]]
            chosen = self._search(state, decision, hand, pile, cands, t0).discard
        reply["discard"] = chosen.text
        if chosen.is_skip:
            reply["skip"] = skip_to
        return reply

    def _budget_start(self) -> tuple[float, float]:
        """The start of a decision on the budget's clock and on the wall clock."""
        return self.clock(), time.monotonic()

    def _timer(self, t0: tuple[float, float], share: float) -> Callable[[], bool]:
        """A function that tells when `share` of the budget counted from `t0` is spent: `ms`
        on the budget's clock, or `wall_ms` (if set) on the wall clock, whichever comes
        first. On the CPU clock with a cap, a decision that has waited `share` × `ms` of
        wall-clock time and got less than half of it as CPU ends there too: the machine is
        starving it, and what it still has to do after its deadline would be as slow."""
        clock = self.clock
        end = t0[0] + share * self.ms / 1000.0
        if self.wall_ms is None:
            return lambda: clock() >= end
        monotonic = time.monotonic
        wall_end = t0[1] + share * self.wall_ms / 1000.0
        if clock is monotonic:
            end = min(end, wall_end)
            return lambda: monotonic() >= end
        c0, w0 = t0
        patience = share * min(self.ms, self.wall_ms) / 1000.0

        def over() -> bool:
            c, w = clock(), monotonic()
            if c >= end or w >= wall_end:
                return True
            waited = w - w0
            return waited >= patience and c - c0 < _MIN_CPU_SHARE * waited

        return over

    def _pile(self, state: dict[str, Any], top: Card | None) -> list[Card]:
        """The discard pile as the events built it, if they agree with the view."""
        tr = self.tracker
        if tr.whole and tr.hand == state["hand"] and tr.pile and top is not None and tr.pile[-1] is top:
            return list(tr.pile)
        return [top] if top is not None else []

    def _search(self, state: dict[str, Any], decision: str, hand: list[Card], pile: list[Card],
                cands: list[Any], t0: tuple[float, float]) -> Any:
        """The candidate with the best paired mean over sampled worlds; the first (the
        prior's) unless another beats it by more than a standard error. Anytime, with a
        race (step 5 of the module docstring)."""
        if len(cands) == 1:
            return cands[0]
        rng = random.Random(zlib.crc32(
            f"expert:{self.seed}:{self.game}:{state['seat']}:{state['hand']}:{state['turn']}:{decision}".encode()))
        over = self._timer(t0, self.draw_share if decision == "draw" else 1.0)
        limit = self.rollouts
        base: list[float] = []
        diffs: list[list[float]] = [[] for _ in cands[1:]]  # per alternative: its outcome less the prior's
        open_ = list(range(1, len(cands)))  # alternatives still played out
        better: set[int] = set()  # alternatives settled above the prior
        samples = 0
        while open_:
            if limit is not None and samples >= limit:
                break
            if (limit is None or samples > 0) and over():
                break
            world = self._sample(state, decision, hand, pile, rng)
            seed = rng.getrandbits(32)
            got = []
            for k in [0] + open_:
                if limit is None and samples and over():
                    break  # out of time in the middle of a sample: it does not count
                g = _clone(world, seed)
                g.apply(cands[k])
                got.append(rollout(g, state["seat"], self.others, self.win))
            if len(got) < len(open_) + 1:
                break
            base.append(got[0])
            for k, u in zip(open_, got[1:]):
                diffs[k - 1].append(u - got[0])
            samples += 1
            if samples >= _MIN_SAMPLES:
                for k in list(open_):
                    mean, se = _mean_se(diffs[k - 1])
                    if abs(mean) > _Z * se or abs(mean) + _Z * se < _EPS:
                        open_.remove(k)
                        if mean > _Z * se:
                            better.add(k)
        self.last_samples = samples
        if samples < 2:
            return cands[0]
        best, best_gain = 0, 0.0
        margin = 1.0 if samples >= _FEW else self.few_z  # standard errors a candidate must win by
        for k in range(1, len(cands)):
            if k not in open_ and k not in better:
                continue  # settled: no better than the prior
            mean, se = _mean_se(diffs[k - 1])
            if mean > margin * se and mean > best_gain:
                best, best_gain = k, mean
        return cands[best]

    def _sample(self, state: dict[str, Any], decision: str, hand: list[Card], pile: list[Card],
                rng: random.Random) -> _SimGame:
        """One world consistent with everything this seat knows."""
        me = state["seat"]
        players = state["players"]
        n = len(players)
        hands, pool = self._deal_hidden(state, hand, pile, rng)
        draw_size = state["draw_size"]
        draw = pool[:draw_size]
        buried = pool[draw_size:]  # the discard pile below its top, when the events are not known
        g = _SimGame(_RULES, n, seed=0)
        g.started = True
        g.hand_no = state["hand"]
        g.turn = state["turn"]
        g.dealer = state["dealer"]
        my_phase = phase_from_view(state["phase"])
        g._phase_cache = [my_phase if p["seat"] == me else PHASES.get(p["phase"], my_phase) for p in players]
        for p in players:
            q = g.players[p["seat"]]
            q.hand = list(hand) if p["seat"] == me else hands[p["seat"]]
            q.completed = p.get("completed", 0)
            q.score = p["score"]
            q.laid = p["laid"]
            q.skip_pending = p["skip_pending"]
            q.active = p.get("active", True)
        g.draw_pile = draw
        g.discard_pile = buried + pile
        g.table = [Meld(i, m.owner, m.kind, m.cards, m.number, m.color, m.low, m.high)
                   for i, m in enumerate(TableModel(state["table"]).melds)]
        g.current = me
        g.decision = decision
        return g

    def _deal_hidden(self, state: dict[str, Any], hand: list[Card], pile: list[Card],
                     rng: random.Random) -> tuple[dict[int, list[Card]], list[Card]]:
        """The other seats' hands, dealt at random from the cards this seat has not seen
        (each with the cards it was seen to take from the discard pile and still holds),
        and the rest of those cards, shuffled."""
        me = state["seat"]
        players = state["players"]
        left = [COPIES[c] for c in CARD_TYPES]
        for c in hand:
            left[c.index] -= 1
        for m in state["table"]:
            for t in m["cards"]:
                left[Card.parse(t).index] -= 1
        for c in pile:
            left[c.index] -= 1
        hands: dict[int, list[Card]] = {}
        for p in players:
            s = p["seat"]
            if s == me:
                continue
            got: list[Card] = []
            known = self.tracker.known.get(s) if self.tracker.whole else None
            if known:
                for c, k in known.items():
                    for _ in range(k):
                        if left[c.index] > 0 and len(got) < p["cards"]:
                            left[c.index] -= 1
                            got.append(c)
            hands[s] = got
        pool = [c for c in CARD_TYPES for _ in range(max(0, left[c.index]))]
        rng.shuffle(pool)
        for s, got in hands.items():
            need = players[s]["cards"] - len(got)
            got.extend(pool[len(pool) - need:] if need > 0 else [])
            if need > 0:
                del pool[len(pool) - need:]
        return hands, pool

    def _let_go(self, seat: int) -> list[Card]:
        """The natural cards `seat` let go this hand (passed at the draw, and discarded)."""
        if self.evidence is None or not self.tracker.whole:
            return []
        return [c for c, passed in self.tracker.declined.get(seat, ()) if passed or self.evidence_discards]

    def _hand_weight(self, let_go: Sequence[Card], theirs: list[Card], their: Phase, base: int) -> float:
        """`evidence` to the power of the cards of `let_go` that would bring `theirs` (`base`
        cards missing for `their` phase) closer; `theirs` is left as it was."""
        w = 1.0
        for c in let_go:
            if closer(theirs, their, c, base):
                w *= self.evidence or 0.0
        return w

    def _taken(self, state: dict[str, Any], hand: list[Card], pile: list[Card], seat: int, their: Phase,
               cards: Sequence[Card], rng: random.Random) -> tuple[list[float], float]:
        """How often `seat` (not laid, `their` phase) would take each of `cards`: its hand
        sampled `feed_samples` times as the search samples it, a card taken where it brings
        the hand closer to its phase (greedy's rule at the draw), each sample counted with
        its weight (`_hand_weight`). Returns the weight taking each card, and the total."""
        taken = [0.0] * len(cards)
        let_go = self._let_go(seat)
        total = 0.0
        for _ in range(self.feed_samples):
            theirs = self._deal_hidden(state, hand, pile, rng)[0][seat]
            base = memo_missing(theirs, their)
            weight = self._hand_weight(let_go, theirs, their, base)
            total += weight
            for i, c in enumerate(cards):
                if closer(theirs, their, c, base):
                    taken[i] += weight
        return taken, total

    def _least_fed(self, state: dict[str, Any], hand: list[Card], pile: list[Card], rest: list[Card],
                   ranked: list[Card], phase: Phase, after: list[Meld] | None) -> list[Card]:
        """`ranked` (the prior's discards, best first) with the first card the next seat is
        least likely to take put first, among the first `width` that cost this seat no
        more than the first does (before laying: cards missing for the phase; once laid,
        `after` the table: a card that may still be hit later is kept as the first keeps
        it). How often the next seat would take each is `_taken`'s. The first stays
        unless some card is taken less often by more than `feed` of the samples' weight;
        then the best ranked of those within `feed` of the least taken goes first. Only
        while the next seat has not laid: after that the prior's denial keeps from it
        what it could hit."""
        nxt = next_seat(state)
        their = None if nxt is None or nxt["laid"] else PHASES.get(nxt["phase"])
        if nxt is None or their is None or len(ranked) < 2 or not ranked[0].number:
            return ranked
        work = list(rest)

        def cost(c: Card) -> int:
            if after is not None:
                return int(can_ever_join(c, after))
            work.remove(c)
            k = memo_missing(work, phase)
            work.append(c)
            return k

        top = cost(ranked[0])
        tier = [c for c in ranked[: self.width] if c.number and cost(c) <= top]
        if len(tier) < 2:
            return ranked
        rng = random.Random(zlib.crc32(
            f"feed:{self.seed}:{self.game}:{state['seat']}:{state['hand']}:{state['turn']}".encode()))
        taken, total = self._taken(state, hand, pile, nxt["seat"], their, tier, rng)
        if total <= 0:
            return ranked
        margin = (self.feed or 0.0) * total
        least = min(taken)
        if taken[0] - least <= margin:
            return ranked
        first = next(c for c, k in zip(tier, taken) if k <= least + margin)
        return [first] + [c for c in ranked if c is not first]


_RULES = Rules()


def _clone(g: Game, seed: int) -> _SimGame:
    """A copy of a sampled world to play one candidate in, with its own random stream."""
    c = _SimGame.__new__(_SimGame)
    c.__dict__.update(g.__dict__)
    c.rng = random.Random(seed)
    c.players = []
    for p in g.players:
        q = type(p).__new__(type(p))
        for k in p.__slots__:
            setattr(q, k, getattr(p, k))
        q.hand = list(p.hand)
        c.players.append(q)
    c.draw_pile = list(g.draw_pile)
    c.discard_pile = list(g.discard_pile)
    c.table = list(g.table)
    c._public_cache = [None] * g.n
    return c
