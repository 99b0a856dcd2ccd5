"""One game of Phase 10: state, actions applied by the rules, and per-seat views (R11).

The state is changed only by `Game.apply`, which checks the whole action first (all or
nothing) and returns the public events it caused. Randomness comes only from the game's
seed. Events are protocol-ready dicts; two of them are not sent inside `request.events`
but as messages of their own: `hand_end` and `game_end`.

>>> from harness.engine import Game, Rules, Draw
>>> g = Game(Rules(), 3, seed=7)
>>> [e["e"] for e in g.start()]
['deal']
>>> g.to_move, g.decision
(1, 'draw')
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, Mapping, Sequence

from .actions import Action, Draw, Hit, Play
from .cards import CARD_TYPES, DECK, LETTER_OF_COLOR, Card, CardError
from .deals import Deck
from .errors import IllegalMove
from .finder import find_lay, legal_hits
from .melds import Meld, match_lay
from .phases import Phase, PhaseError
from .rules import Rules

Event = dict[str, Any]


def _shuffle(rng: random.Random, x: list[Any]) -> None:
    """Shuffle `x` in place: Fisher-Yates with `getrandbits`, written out. It is the very
    algorithm of `random.shuffle` in CPython 3.10-3.13 (so the same seed deals the same
    cards), twice as fast, and pinned here so no Python version can change the deals."""
    getrandbits = rng.getrandbits
    for i in range(len(x) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        x[i], x[j] = x[j], x[i]


def _names(cards: Sequence[Card]) -> str:
    return "[" + " ".join(c.text for c in cards) + "]"


def _parts(laid: int, hit: int, discard: Card | None) -> str:
    """Where a play uses cards: "2 laid, 1 hit, 1 discarded" (the parts that use any)."""
    out = [f"{laid} laid" if laid else "", f"{hit} hit" if hit else "", "1 discarded" if discard is not None else ""]
    return ", ".join(x for x in out if x)


class Player:
    """One seat's state. `completed` counts phases laid (R5.3, R9.4)."""

    __slots__ = ("seat", "hand", "completed", "score", "laid", "skip_pending", "active")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.hand: list[Card] = []
        self.completed = 0
        self.score = 0
        self.laid = False
        self.skip_pending = False
        self.active = True


class Game:
    """The state of one game and the rules that change it.

    `decision` is "draw", "play" or None once the game is over; `to_move` is the seat
    that must decide.
    """

    def __init__(
        self,
        rules: Rules,
        players: int,
        seed: int,
        deck: Deck | None = None,
        game_id: str = "",
        names: Sequence[str] | None = None,
        hand_snapshots: bool = False,
    ) -> None:
        if not 2 <= players <= 6:
            raise ValueError(f"R2.1: a game has 2..6 players, not {players}")
        if not 0 <= rules.first_dealer < players:
            raise ValueError(f"R2.3: first dealer {rules.first_dealer} is not a seat of {players} players")
        if deck is not None:
            for i, deal in enumerate(deck.deals):
                if len(deal.hands) != players:
                    raise ValueError(f"deal {i + 1} of the deck has {len(deal.hands)} hands for {players} players")
        self.rules = rules
        self.n = players
        self.seed = seed
        self.game_id = game_id
        self.names = list(names) if names is not None else [f"seat{s}" for s in range(players)]
        self.deck = deck
        self.rng = random.Random(seed)
        self.players = [Player(s) for s in range(players)]
        self.draw_pile: list[Card] = []  # top is the end
        self.discard_pile: list[Card] = []  # top is the end
        self.table: list[Meld] = []
        self.dealer = (rules.first_dealer - 1) % players  # moved on at the first deal
        self.hand_no = 0
        self.turn = 0
        self.hand_turns = 0
        self.current = 0
        self.decision: str | None = None
        self.tiebreak = False
        self.winner: int | None = None
        self.end_reason: str | None = None
        self.stalled_hands = 0
        self.started = False
        # With `hand_snapshots`, the whole state at the end of each hand (before the next
        # deal) is kept in `last_hand_snapshot`, for replay viewers.
        self.hand_snapshots = hand_snapshots
        self.last_hand_snapshot: dict[str, Any] | None = None
        self._phase_cache: list[Phase] | None = None  # phases only change between hands
        self._public_cache: list[tuple[tuple, dict[str, Any]] | None] = [None] * players
        # A shuffle worked out ahead by `prepare_deal`: (hand number, its rng after it, cards).
        self._next_deal: tuple[int, random.Random, list[Card]] | None = None

    # ----- queries -------------------------------------------------------------------

    @property
    def to_move(self) -> int:
        """The seat that must decide now."""
        return self.current

    @property
    def over(self) -> bool:
        """True once the game has ended."""
        return self.decision is None and self.started

    def phase_of(self, seat: int) -> Phase:
        """The phase `seat` works on this hand."""
        cache = self._phase_cache
        if cache is not None:
            return cache[seat]
        return self._phase_now(seat)

    def _phase_now(self, seat: int) -> Phase:
        if self.rules.variant == "fixed":
            return self.rules.phases[max(0, min(self.hand_no, len(self.rules.phases)) - 1)]
        return self.rules.phase_at(self.players[seat].completed)

    def _next_active(self, seat: int) -> int:
        for k in range(1, self.n + 1):
            s = (seat + k) % self.n
            if self.players[s].active:
                return s
        raise AssertionError("no active seat")  # pragma: no cover

    def skip_targets(self, seat: int) -> list[int]:
        """Seats a Skip discarded by `seat` may name (R6.1, R6.2), in seat order after it."""
        out = []
        for k in range(1, self.n):
            s = (seat + k) % self.n
            p = self.players[s]
            if p.active and not p.skip_pending:
                out.append(s)
        return out

    def can_draw_from_discard(self) -> bool:
        """R3.1, R3.2: the top discard exists and is not a Skip."""
        return bool(self.discard_pile) and not self.discard_pile[-1].is_skip

    # ----- the flow of a hand ----------------------------------------------------------

    def start(self) -> list[Event]:
        """Deal the first hand; returns its events."""
        if self.started:
            raise RuntimeError("the game has already started")
        self.started = True
        events: list[Event] = []
        self._deal(events)
        return events

    def _deal(self, events: list[Event]) -> None:
        self.hand_no += 1
        self._phase_cache = [self._phase_now(s) for s in range(self.n)]
        self.hand_turns = 0
        self.table = []
        self.dealer = self._next_active(self.dealer)
        active = [p for p in self.players if p.active]
        for p in self.players:
            p.hand = []
            p.laid = False
            p.skip_pending = False
        stacked = None
        if self.deck is not None and self.hand_no <= len(self.deck.deals):
            stacked = self.deck.deals[self.hand_no - 1]
        # Each hand's shuffle has its own stream from the seed, so hand h is dealt alike
        # whatever happened in earlier hands (duplicate deals replay it for every seat).
        ahead = self._next_deal
        self._next_deal = None
        if stacked is None:
            if ahead is not None and ahead[0] == self.hand_no:
                _, self.rng, cards = ahead
            else:
                self.rng, cards = self._shuffled(self.hand_no)
            order = [self._next_active(self.dealer)]
            while len(order) < len(active):
                order.append(self._next_active(order[-1]))
            for i in range(10):
                for s in order:
                    self.players[s].hand.append(cards.pop())
            self.discard_pile = [cards.pop()]
            self.draw_pile = cards
        else:
            self.rng = self._hand_rng(self.hand_no)
            rest = Counter(DECK)
            for p in active:
                p.hand = list(stacked.hands[p.seat])
                rest.subtract(p.hand)
            named = list(stacked.draw) + ([stacked.discard] if stacked.discard else [])
            rest.subtract(named)
            pool = [c for c in rest for _ in range(max(0, rest[c]))]
            _shuffle(self.rng, pool)
            discard = stacked.discard if stacked.discard is not None else pool.pop()
            self.discard_pile = [discard]
            self.draw_pile = pool + list(reversed(stacked.draw))
        up = self.discard_pile[-1]
        events.append({"e": "deal", "hand": self.hand_no, "dealer": self.dealer, "discard_top": up.text})
        self.current = self._next_active(self.dealer)
        if up.is_skip:
            self.players[self.current].skip_pending = True  # R2.4
        self._begin_turn(events)

    def _hand_rng(self, hand_no: int) -> random.Random:
        return random.Random(f"p10:{self.seed}:{hand_no}")

    def _shuffled(self, hand_no: int) -> tuple[random.Random, list[Card]]:
        """Hand `hand_no`'s shuffled deck, and its random stream after the shuffle (later
        reshuffles of that hand draw from it)."""
        rng = self._hand_rng(hand_no)
        cards = list(DECK)
        _shuffle(rng, cards)
        return rng, cards

    def prepare_deal(self) -> None:
        """While a bot thinks, shuffle the next hand's deck (it depends on the seed and the
        hand number alone), so that the deal at the end of this hand does not wait for it.
        Does nothing if it is shuffled already or the next hand is a stacked deal."""
        nxt = self.hand_no + 1
        if (self._next_deal is not None and self._next_deal[0] == nxt) or self.decision is None:
            return
        if self.deck is not None and nxt <= len(self.deck.deals):
            return
        self._next_deal = (nxt, *self._shuffled(nxt))

    def _begin_turn(self, events: list[Event]) -> None:
        """Serve skips (R6.4), stall checks (R8.4), then wait for the current seat's draw."""
        while True:
            p = self.players[self.current]
            if p.skip_pending:
                p.skip_pending = False
                events.append({"e": "skipped", "seat": self.current})
                if self._end_turn(events):
                    return
                continue
            if not self.draw_pile and len(self.discard_pile) <= 1 and not self.can_draw_from_discard():
                # No card can be drawn at all: the hand cannot go on (R3.7, R8.4).
                self._end_hand(None, events, stalled=True)
                return
            self.decision = "draw"
            return

    def _end_turn(self, events: list[Event]) -> bool:
        """Count the turn; stall the hand at the limit. True if the hand ended."""
        self.turn += 1
        self.hand_turns += 1
        if self.hand_turns >= self.rules.turn_limit:
            self._end_hand(None, events, stalled=True)
            return True
        self.current = self._next_active(self.current)
        return False

    def _end_hand(self, winner: int | None, events: list[Event], stalled: bool = False) -> None:
        rules = self.rules
        self._phase_cache = None
        if stalled:
            self.stalled_hands += 1
        points = [0] * self.n
        completed = []
        for p in self.players:
            if not p.active:
                continue
            if p.seat != winner:
                points[p.seat] = sum(c.points for c in p.hand)
                p.score += points[p.seat]  # R8.2
            if p.laid:
                completed.append(p.seat)
                if rules.variant == "fixed" or p.completed < rules.goal:
                    p.completed += 1  # R8.3
        hand_no = self.hand_no
        game_over = False
        if rules.variant == "fixed":
            game_over = hand_no >= len(rules.phases)
            if game_over:
                self._finish("fixed_hands", events_winner=None)
        elif self.tiebreak:
            if winner is not None:
                self.winner = winner  # R9.3: the first tied player to go out wins
                game_over = True
                self.end_reason = "tiebreak"
        else:
            finishers = [s for s in completed if self.players[s].completed >= rules.goal]
            if finishers:
                best = min(self.players[s].score for s in finishers)
                tied = [s for s in finishers if self.players[s].score == best]
                if len(tied) == 1:
                    self.winner = tied[0]  # R9.2
                    game_over = True
                    self.end_reason = "finished"
                else:
                    self.tiebreak = True  # R9.3
                    for p in self.players:
                        p.active = p.seat in tied
        if not game_over and hand_no >= rules.hand_limit:
            game_over = True
            self.end_reason = "hand_limit"  # R9.5
        events.append(
            {
                "e": "hand_end",
                "hand": hand_no,
                "winner": winner,
                "stalled": stalled,
                "hands": [[c.text for c in p.hand] for p in self.players],
                "points": points,
                "scores": [p.score for p in self.players],
                "phases": [self._next_phase_number(p.seat, game_over) for p in self.players],
                "completed": completed,
            }
        )
        if self.hand_snapshots:
            self.last_hand_snapshot = self.snapshot()
        if game_over:
            self.decision = None
            if self.winner is None and self.end_reason != "fixed_hands":
                self._finish(self.end_reason or "hand_limit", events_winner=None)
            events.append(self._game_end_event())
            return
        self._deal(events)

    def _next_phase_number(self, seat: int, game_over: bool) -> int | None:
        """`seat`'s phase for the next hand (hand_end.phases); None for a seat that plays
        no further hand: every seat once the game is over, and the seats left out of the
        tie-break hands (R10.6)."""
        rules = self.rules
        p = self.players[seat]
        if game_over or not p.active:
            return None
        if rules.variant == "fixed":
            return rules.phases[self.hand_no].number  # hand_no < len(phases): not over
        return rules.phase_at(min(p.completed, rules.goal - 1)).number

    def _finish(self, reason: str, events_winner: int | None) -> None:
        """End without an R9.2/R9.3 winner: the winner is a lone first place, if any."""
        self.end_reason = reason
        places = self.places()
        firsts = [s for s, pl in enumerate(places) if pl == 1]
        self.winner = firsts[0] if len(firsts) == 1 else events_winner

    def places(self, forfeited: Sequence[int] = ()) -> list[int]:
        """Places per seat (R9.4): 1 = first; equal keys share a place; the R9.2/R9.3 winner is
        first; `forfeited` seats come last, tied among themselves."""
        fixed = self.rules.variant == "fixed"
        forfeit = set(forfeited)

        def key(s: int) -> tuple:
            p = self.players[s]
            if s in forfeit:
                return (2, 0, 0)
            if s == self.winner and self.end_reason in ("finished", "tiebreak"):
                return (0, 0, 0)
            return (1, 0 if fixed else -p.completed, p.score)

        keys = [key(s) for s in range(self.n)]
        return [1 + sum(1 for k in keys if k < keys[s]) for s in range(self.n)]

    def _game_end_event(self) -> Event:
        return {
            "e": "game_end",
            "places": self.places(),
            "scores": [p.score for p in self.players],
            "phases_completed": [p.completed for p in self.players],
            "winner": self.winner,
            "reason": self.end_reason,
        }

    # ----- actions ---------------------------------------------------------------------

    def apply(self, action: Action, seat: int | None = None) -> list[Event]:
        """Check and apply `action` for the seat to move; returns the events it caused.

        Raises `IllegalMove` (and changes nothing) if any part of it breaks a rule.
        """
        if seat is not None and seat != self.current:
            raise IllegalMove("R2.1", f"it is seat {self.current}'s turn, not seat {seat}'s")
        if self.decision is None:
            raise IllegalMove("R9.1", "the game is over" if self.started else "the game has not started")
        if type(action) is Draw:
            return self._draw(action)
        if type(action) is Play:
            return self._play(action)
        raise TypeError(f"not an action: {action!r}")

    def _draw(self, action: Draw) -> list[Event]:
        if self.decision != "draw":
            raise IllegalMove("R3.1", f"seat {self.current} has drawn already this turn and must now play and discard")
        p = self.players[self.current]
        events: list[Event] = []
        if action.source == "discard":
            if not self.discard_pile:
                raise IllegalMove("R3.1", "the discard pile is empty")
            top = self.discard_pile[-1]
            if top.is_skip:
                raise IllegalMove("R3.2", "the top discard is a Skip, which can never be taken")
            self.discard_pile.pop()
            p.hand.append(top)
            events.append({"e": "draw", "seat": self.current, "from": "discard", "card": top.text})
        elif action.source == "deck":
            if not self.draw_pile:
                if len(self.discard_pile) <= 1:
                    raise IllegalMove("R3.7", "the draw pile is empty and no discards are left to reshuffle")
                top = self.discard_pile.pop()
                self.draw_pile = self.discard_pile
                _shuffle(self.rng, self.draw_pile)
                self.discard_pile = [top]
                events.append({"e": "reshuffle", "draw_size": len(self.draw_pile)})
            p.hand.append(self.draw_pile.pop())
            events.append({"e": "draw", "seat": self.current, "from": "deck"})
        else:
            raise IllegalMove("R3.1", f"draw from 'deck' or 'discard', not {action.source!r}")
        self.decision = "play"
        return events

    def _play(self, action: Play) -> list[Event]:
        if self.decision != "play":
            raise IllegalMove("R3.1", f"seat {self.current} must draw first")
        seat = self.current
        p = self.players[seat]
        discard = action.discard
        if action.lay is None and not action.hits and discard is not None and discard in p.hand:
            # The common turn, a plain discard: nothing else to check or apply.
            target = self._skip_target(seat, action)
            p.hand.remove(discard)
            return self._end_play(seat, p, discard, target, [])
        # A play naming more cards than the hand holds is refused before any meld is
        # looked at: what follows then works on a hand's worth of cards at most.
        laid = sum(len(g) for g in action.lay or ())
        named = laid + len(action.hits) + (discard is not None)
        if named > len(p.hand):
            # R3.3 where the lay alone names more than the hand holds; else the hits and the
            # discard take what is not there (R3.5)
            raise IllegalMove("R3.3" if laid > len(p.hand) else "R3.5",
                              f"the play uses {named} cards ({_parts(laid, len(action.hits), discard)}) but seat "
                              f"{seat}'s hand holds {len(p.hand)}")
        # The cards the play uses, counted by card index (ints hash in C; cards would call
        # their own __hash__), in the order they come.
        used: dict[int, int] = {}
        new_melds = self._checked_lay(seat, p, action, used)
        changed, hit_events = self._checked_hits(seat, p, action, len(new_melds), used)
        remaining = len(p.hand) - sum(used.values())
        if discard is not None:
            used[discard.index] = used.get(discard.index, 0) + 1
        self._check_held(seat, p, action, used)
        # (A discard from a hand that laying and hitting emptied was refused just above:
        # the play would use more cards than the hand holds, R3.5.)
        if remaining and discard is None:
            raise IllegalMove("R3.5", f"a turn ends with a discard; {remaining} card(s) stay in hand")
        target = self._skip_target(seat, action)

        # Everything checked: apply.
        events: list[Event] = []
        hand = p.hand
        for i, k in used.items():
            card = CARD_TYPES[i]
            for _ in range(k):
                hand.remove(card)
        if new_melds:
            self.table.extend(new_melds)
            p.laid = True
            events.append(
                {"e": "lay", "seat": seat, "melds": [m.id for m in new_melds],
                 "cards": [[c.text for c in m.cards] for m in new_melds]}
            )
        for mid, meld in changed.items():
            self.table[mid] = meld
        events.extend(hit_events)
        return self._end_play(seat, p, discard, target, events)

    def _checked_lay(self, seat: int, p: Player, action: Play, used: dict[int, int]) -> list[Meld]:
        """The melds a play lays (R3.3, R5), checked and not applied; their cards counted
        into `used`."""
        if action.lay is None:
            return []
        phase = self.phase_of(seat)
        if p.laid:
            raise IllegalMove("R3.3", f"seat {seat} has laid phase {phase.number} already this hand")
        try:
            formed = match_lay(action.lay, phase)
        except IllegalMove:
            self._other_phase(seat, action.lay, phase)
            raise
        for group in action.lay:
            for c in group:
                used[c.index] = used.get(c.index, 0) + 1
        next_id = len(self.table)
        return [Meld(next_id + i, seat, kind, tuple(group), number, color, low, high)
                for i, (group, (kind, number, color, low, high)) in enumerate(zip(action.lay, formed))]

    def _checked_hits(self, seat: int, p: Player, action: Play, laying: int,
                      used: dict[int, int]) -> tuple[dict[int, Meld], list[Event]]:
        """The melds a play's hits change (R7, R3.4), checked and not applied, with their
        events; their cards counted into `used`. `laying`: the melds the same play lays."""
        changed: dict[int, Meld] = {}
        events: list[Event] = []
        if not action.hits:
            return changed, events
        if not (p.laid or action.lay is not None):
            raise IllegalMove("R7.2", f"seat {seat} may hit only once phase {self.phase_of(seat).number} is on the "
                                      "table this hand")
        n_table = len(self.table)
        for h in action.hits:
            if not 0 <= h.meld < n_table:
                if n_table <= h.meld < n_table + laying:
                    raise IllegalMove("R3.4", f"meld {h.meld} is laid in this same reply, and a hit names a meld "
                                              "that was on the table when the play began: lay it longer instead")
                raise IllegalMove("R7.1", f"there is no meld {h.meld} on the table (its ids are 0..{n_table - 1})"
                                  if n_table else f"there is no meld {h.meld}: the table is empty")
            meld = changed.get(h.meld) or self.table[h.meld]
            changed[h.meld], end = meld.hit(h.card, h.end)
            used[h.card.index] = used.get(h.card.index, 0) + 1
            events.append({"e": "hit", "seat": seat, "card": h.card.text, "meld": h.meld, "end": end})
        return changed, events

    @staticmethod
    def _check_held(seat: int, p: Player, action: Play, used: Mapping[int, int]) -> None:
        """Every card a play uses (`used`, by card index) is in the hand as often (R3.3, R3.5)."""
        hand_count = [0] * len(CARD_TYPES)
        for c in p.hand:
            hand_count[c.index] += 1
        for i, k in used.items():
            if hand_count[i] < k:
                laid = sum(c.index == i for g in action.lay or () for c in g)
                hit = sum(h.card.index == i for h in action.hits)
                gone = action.discard is not None and action.discard.index == i
                raise IllegalMove(
                    "R3.3" if laid > hand_count[i] else "R3.5",
                    f"the play uses {k} × {CARD_TYPES[i]} ({_parts(laid, hit, action.discard if gone else None)}) "
                    f"but seat {seat}'s hand {_names(sorted(p.hand))} holds {hand_count[i]}",
                )

    def _other_phase(self, seat: int, lay: tuple[tuple[Card, ...], ...], phase: Phase) -> None:
        """Raise R5.3 if a lay that is not `seat`'s phase is another phase of the game."""
        for other in self.rules.phases:
            if other == phase:
                continue
            try:
                match_lay(lay, other)
            except IllegalMove:
                continue
            raise IllegalMove(
                "R5.3", f"the melds laid make phase {other.number} ({other.describe()}), but seat {seat} works on "
                        f"phase {phase.number} ({phase.describe()}): only the current phase may be laid")

    def _skip_target(self, seat: int, action: Play) -> int | None:
        """The seat a Skip discard names, checked (R6.1-R6.3); None for other discards."""
        discard = action.discard
        if discard is not None and discard.is_skip:
            targets = self.skip_targets(seat)
            if action.skip is None:
                if targets:
                    raise IllegalMove("R6.1", f"a Skip must name a player to skip: add \"skip\" with one of "
                                              f"seats {targets}")
            elif action.skip not in targets:
                may = f"name one of seats {targets}" if targets else "send \"skip\": null (R6.3: no seat may be named)"
                if action.skip == seat or not 0 <= action.skip < self.n:
                    rule, why = "R6.1", f"a Skip names another player, not seat {action.skip}"
                elif self.players[action.skip].skip_pending:
                    rule, why = "R6.2", f"seat {action.skip} already has a skip pending (players[].skip_pending)"
                else:
                    rule, why = "R10.6", (f"seat {action.skip} is not playing this tie-break hand "
                                          "(players[].active is false)")
                raise IllegalMove(rule, f"{why}; {may}")
            return action.skip
        if action.skip is not None:
            raise IllegalMove("R6.1", f"only a Skip discard names a player; the discard is {discard}: "
                                      "leave \"skip\" out (or null)")
        return None

    def _end_play(self, seat: int, p: Player, discard: Card | None, target: int | None,
                  events: list[Event]) -> list[Event]:
        """Discard (the cards played are out of the hand already), then go out or pass the turn."""
        if discard is not None:
            self.discard_pile.append(discard)
            if target is not None:
                self.players[target].skip_pending = True
            events.append({"e": "discard", "seat": seat, "card": discard.text, "skip": target})
        if not p.hand:
            events.append({"e": "out", "seat": seat})
            self.turn += 1
            self.hand_turns += 1
            self._end_hand(seat, events)  # R8.1
            return events
        if not self._end_turn(events):
            self._begin_turn(events)
        return events

    # ----- views -------------------------------------------------------------------------

    def view(self, seat: int) -> dict[str, Any]:
        """What `seat` may know (R11), in the protocol's `state` form. Parts of it are
        shared with other views (the phase, the melds, the seats' public dicts): read-only."""
        p = self.players[seat]
        disc = self.discard_pile
        top = disc[-1] if disc else None
        return {
            "game": self.game_id,
            "hand": self.hand_no,
            "turn": self.turn,
            "seat": seat,
            "dealer": self.dealer,
            "cards": [c.text for c in p.hand],
            "phase": self.phase_of(seat).to_dict(),
            "laid": p.laid,
            "discard_top": top.text if top is not None else None,
            "can_take_discard": top is not None and not top.is_skip,
            "draw_size": len(self.draw_pile),
            "players": self._public_view(),
            "table": [m.to_dict() for m in self.table],
        }

    def _public_view(self) -> list[dict[str, Any]]:
        """`public_players()` for views, made faster by keeping each seat's dict until
        something in it changes (every request carries all seats; a move changes one or
        two). The dicts are shared between views: read-only."""
        cache = self._public_cache
        hand_no = self.hand_no
        out = []
        for q in self.players:
            key = (hand_no, len(q.hand), q.laid, q.score, q.skip_pending, q.completed, q.active)
            kept = cache[q.seat]
            if kept is not None and kept[0] == key:
                out.append(kept[1])
            else:
                d = self._public(q)
                cache[q.seat] = (key, d)
                out.append(d)
        return out

    def _public(self, q: Player) -> dict[str, Any]:
        return {
            "seat": q.seat,
            "name": self.names[q.seat],
            "phase": self.phase_of(q.seat).number,
            "completed": q.completed,
            "laid": q.laid,
            "cards": len(q.hand),
            "score": q.score,
            "skip_pending": q.skip_pending,
            "active": q.active,
        }

    def public_players(self) -> list[dict[str, Any]]:
        """What everyone knows of every seat (R11.1), in the protocol's `players` form."""
        return [self._public(q) for q in self.players]

    def options(self, seat: int) -> dict[str, Any]:
        """Help for a `play` decision: one legal lay (or None) and every single legal hit."""
        p = self.players[seat]
        lay = None
        if not p.laid:
            found = find_lay(p.hand, self.phase_of(seat))
            if found is not None:
                lay = [[c.text for c in m] for m in found]
        hits = []
        if p.laid:
            for card, meld, end in legal_hits(p.hand, self.table):
                h: dict[str, Any] = {"card": card.text, "meld": meld}
                if end is not None:
                    h["end"] = end
                hits.append(h)
        return {"lay": lay, "hits": hits}

    def preview_deck_draw(self, options: bool = True) -> tuple[list[Event], dict[str, Any], dict[str, Any] | None] | None:
        """What a draw from the deck by the seat to move will bring, without drawing: its
        events, then that seat's view and (with `options`) its options for the play
        decision. For work ahead while the seat decides (most draws are from the deck).
        None outside a draw decision, or when the draw pile is empty (it is reshuffled at
        the draw, and the shuffle is not to be known before)."""
        if self.decision != "draw" or not self.draw_pile:
            return None
        seat = self.current
        hand = self.players[seat].hand
        events = self._draw(Draw("deck"))
        try:
            return events, self.view(seat), self.options(seat) if options else None
        finally:  # put the card back: the state is as it was
            self.draw_pile.append(hand.pop())
            self.decision = "draw"

    def fallback(self) -> Action:
        """The move played for a seat that cannot or did not answer (protocol, Faults): draw
        from the deck; discard the highest-penalty card, a Skip naming the next seat that
        may be named."""
        if self.decision == "draw":
            if not self.draw_pile and len(self.discard_pile) <= 1:
                return Draw("discard")
            return Draw("deck")
        hand = self.players[self.current].hand
        card = max(hand, key=lambda c: (c.points, c.index))
        skip = None
        if card.is_skip:
            targets = self.skip_targets(self.current)
            skip = targets[0] if targets else None
        return Play(None, (), card, skip)

    @classmethod
    def from_view(cls, view: dict[str, Any], decision: str, rules: Rules | None = None) -> "Game":
        """A game consistent with one seat's view (a request's `state`, R11): that seat's
        hand, phase and decision, the table, the top discard and every seat's public facts.
        The hidden cards (other hands, the draw pile) are the deck's cards not in view, in
        no particular order: what a seat may legally do does not depend on them. For
        judging one reply to one request. Raises ValueError for a view that cannot be."""
        try:
            players = view["players"]
            seat = view["seat"]
            phase = Phase.custom(view["phase"]["number"], view["phase"]["melds"])
            game = cls(rules or Rules(), len(players), 0, game_id=str(view.get("game", "")),
                       names=[str(p.get("name", "")) for p in players])
            hand = [Card.parse(c) for c in view["cards"]]
            table = []
            for m in view["table"]:
                color = LETTER_OF_COLOR.get(m["color"]) if m["kind"] == "color" else None
                table.append(Meld(m["id"], m["owner"], m["kind"], tuple(Card.parse(c) for c in m["cards"]),
                                  m.get("number", 0), color, m.get("low", 0), m.get("high", 0)))
            top = view.get("discard_top")
            discard = [Card.parse(top)] if top else []
            hidden = Counter(DECK)
            hidden.subtract(hand + [c for m in table for c in m.cards] + discard)
            if any(k < 0 for k in hidden.values()):
                raise ValueError("the view shows more copies of a card than the deck holds (R1.1)")
            pool = [c for c in CARD_TYPES for _ in range(hidden[c])]
            for p in players:
                q = game.players[p["seat"]]
                q.completed, q.score, q.laid = int(p.get("completed", 0)), int(p["score"]), bool(p["laid"])
                q.skip_pending, q.active = bool(p["skip_pending"]), p.get("active", True) is not False
                if p["seat"] == seat:
                    q.hand = hand
                else:
                    q.hand, pool = pool[:p["cards"]], pool[p["cards"]:]
            if len(pool) < view["draw_size"]:
                raise ValueError("the view's hands and draw pile need more cards than the deck holds")
            game.draw_pile = pool[:view["draw_size"]]
            game.discard_pile = pool[view["draw_size"]:] + discard if discard else []
            game.table = table
            game.hand_no, game.turn, game.dealer = view["hand"], view["turn"], view["dealer"]
            game.current, game.decision, game.started = seat, decision, True
            game.players[seat].laid = bool(view["laid"])
            game._phase_cache = [phase if s == seat else game.rules.phase_at(game.players[s].completed)
                                 for s in range(game.n)]
        except (KeyError, TypeError, IndexError, AttributeError, CardError, PhaseError) as e:
            raise ValueError(f"not a request's state: {type(e).__name__}: {e}") from None
        if decision not in ("draw", "play"):
            raise ValueError(f"the decision is \"draw\" or \"play\", not {decision!r}")
        return game

    def snapshot(self) -> dict[str, Any]:
        """The whole state, hidden cards included: for replays and viewers, never for bots."""
        return {
            "hand": self.hand_no,
            "turn": self.turn,
            "dealer": self.dealer,
            "to_move": self.current if self.decision else None,
            "decision": self.decision,
            "hands": [[c.text for c in p.hand] for p in self.players],
            "draw_size": len(self.draw_pile),
            "discard": [c.text for c in self.discard_pile],
            "table": [m.to_dict() for m in self.table],
            "players": self.public_players(),
        }


__all__ = ["Game", "Player", "Event", "Hit"]
