"""The phase finder: a legal lay of a phase from a hand, fewest Wilds first, and the legal hits.

The search never enumerates subsets of the hand. It works on counts of the 48 natural
cards and tries, meld by meld, the few ways a meld can use them: a set is a number and how
many of its cards; a run is a starting number and, per place, a natural or a Wild; a colour
meld is a colour. The last meld of the search is filled greedily, and branches that
already need more Wilds than the best lay so far are cut.

>>> from harness.engine.cards import parse_cards
>>> from harness.engine.phases import PHASES
>>> [" ".join(map(str, m)) for m in find_lay(parse_cards("R3 B3 W G7 Y7 R7 B1 G9".split()), PHASES[1])]
['R3 B3 W', 'R7 G7 Y7']
>>> missing(parse_cards("R3 B3 G7 Y7 B1 G9".split()), PHASES[1])
2
"""

from __future__ import annotations

from itertools import combinations
from typing import Iterator, Sequence

from .cards import CARD_TYPES, COLOR_LETTERS, WILD, Card
from .melds import Meld
from .phases import MeldReq, Phase

_INF = 1 << 30
# CARD_TYPES[i] for i < 48 is colour i // 12, number i % 12 + 1.
_NUMBER_TYPES = [[c * 12 + n - 1 for c in range(4)] for n in range(13)]  # by number (index 0 unused)
_COLOR_TYPES = [[c * 12 + n for n in range(12)] for c in range(4)]


def _multisets(types: list[int], avail: list[int], k: int) -> Iterator[list[int]]:
    """Distinct multisets of k cards drawn from `types` within `avail`."""
    pool = [t for t in types for _ in range(avail[t])]
    seen: set[tuple[int, ...]] = set()
    for combo in combinations(pool, k):
        if combo not in seen:
            seen.add(combo)
            yield list(combo)


def _pick(types: list[int], avail: list[int], k: int) -> list[int | None]:
    """Any k cards of `types` (in order) within `avail`."""
    picked: list[int | None] = []
    for t in types:
        take = min(avail[t], k - len(picked))
        picked.extend([t] * take)
        if len(picked) == k:
            break
    return picked


def _windows(ncount: Sequence[int], size: int) -> list[tuple[int, int]]:
    """For each run of `size` numbers (by its first number), how many of its numbers are
    held: a window slid along the numbers 1..12 (`ncount[13]` is always 0)."""
    has = [1 if k else 0 for k in ncount]
    present = sum(has[1:size])
    out = []
    for start in range(1, 14 - size):
        present += has[start + size - 1] - has[start - 1]
        out.append((start, present))
    return out


class _Search:
    """One search for the cheapest way to lay a phase (cost = Wild places).

    With no colour meld in the phase, colours do not matter and the search works on counts
    per number (12 of them); otherwise on counts per card (48). Each generator yields only
    candidates within `budget`, the Wild places still affordable, so hopeless branches are
    never built.
    """

    __slots__ = ("avail", "ncount", "wilds", "order", "virtual", "colour_matters", "best_cost", "best", "chosen")

    def __init__(self, hand: Sequence[Card], phase: Phase, virtual: bool) -> None:
        avail = [0] * 48
        ncount = [0] * 14
        wilds = 0
        for c in hand:
            if c.number:
                avail[c.index] += 1
                ncount[c.number] += 1
            elif c.is_wild:
                wilds += 1
        self.avail = avail
        self.ncount = ncount
        self.wilds = wilds
        self.virtual = virtual
        plan: tuple[list[tuple[int, MeldReq]], bool] | None = phase._memo.get("search")
        if plan is None:
            # Sets first (cheap to branch), then runs, colour melds last (filled greedily).
            rank = {"set": 0, "run": 1, "color": 2}
            order = sorted(enumerate(phase.melds), key=lambda ir: (rank[ir[1].kind], -ir[1].size))
            plan = phase._memo["search"] = (order, any(r.kind == "color" for r in phase.melds))
        self.order, self.colour_matters = plan
        self.best_cost = _INF
        self.best: list[tuple[int, MeldReq, list[int | None]]] | None = None
        self.chosen: list[tuple[int, MeldReq, list[int | None]]] = []

    # Candidates are (cards, wild places). In number mode, cards are numbers (ints); in
    # card mode, natural card type indexes; None marks a Wild place in a run.
    def _sets(self, size: int, last: bool, budget: int) -> Iterator[tuple[list[int | None], int]]:
        kmin = max(1, size - budget)
        if not self.colour_matters:
            ncount = self.ncount
            for n in range(1, 13):
                c = ncount[n]
                if c < kmin:
                    continue
                kmax = c if c < size else size
                for k in ((kmax,) if last else range(kmax, kmin - 1, -1)):
                    yield [n] * k, size - k
            return
        yield from self._groups(_NUMBER_TYPES[1:13], size, last, kmin)

    def _runs(self, size: int, last: bool, budget: int) -> Iterator[tuple[list[int | None], int]]:
        number_mode = not self.colour_matters
        ncount = self.ncount
        avail = self.avail
        for start, present in _windows(ncount, size):
            numbers = range(start, start + size)
            wild_places = size - present
            if present == 0 or wild_places > budget:
                continue
            if number_mode:
                if last:
                    yield [n if ncount[n] else None for n in numbers], wild_places
                    continue
                options: list[list[int | None]] = [[n, None] if ncount[n] else [None] for n in numbers]
            else:
                options = []
                for n in numbers:
                    types: list[int | None] = [t for t in _NUMBER_TYPES[n] if avail[t]]
                    options.append(types + [None] if types else [None])
            yield from self._product(options, 0, [], size, budget)

    def _product(
        self, options: list[list[int | None]], i: int, acc: list[int | None], size: int, budget: int
    ) -> Iterator[tuple[list[int | None], int]]:
        if i == len(options):
            wild_places = acc.count(None)
            if wild_places < size:
                yield list(acc), wild_places
            return
        wilds_so_far = acc.count(None)
        for o in options[i]:
            if o is None and wilds_so_far >= budget:
                continue
            acc.append(o)
            yield from self._product(options, i + 1, acc, size, budget)
            acc.pop()

    def _colours(self, size: int, last: bool, budget: int) -> Iterator[tuple[list[int | None], int]]:
        yield from self._groups(_COLOR_TYPES, size, last, max(1, size - budget))

    def _groups(
        self, families: list[list[int]], size: int, last: bool, kmin: int
    ) -> Iterator[tuple[list[int | None], int]]:
        """Melds drawn from one family of cards (a number's, or a colour's), card by card:
        at least `kmin` naturals; the last meld of the search takes as many as it can."""
        avail = self.avail
        for family in families:
            types = [t for t in family if avail[t]]
            if not types:
                continue
            total = sum(avail[t] for t in types)
            if total < kmin:
                continue
            kmax = min(total, size)
            if last:
                yield _pick(types, avail, kmax), size - kmax
                continue
            for k in range(kmax, kmin - 1, -1):
                for combo in _multisets(types, avail, k):
                    yield combo, size - k  # type: ignore[misc]

    def run(self) -> None:
        self._solve(0, 0, 0)

    def _take(self, cards: list[int | None], sign: int) -> None:
        if self.colour_matters:
            avail = self.avail
            for t in cards:
                if t is not None:
                    avail[t] -= sign
                    self.ncount[t % 12 + 1] -= sign
        else:
            ncount = self.ncount
            for n in cards:
                if n is not None:
                    ncount[n] -= sign

    def _solve(self, i: int, places: int, empties: int) -> None:
        """Place meld `i` of the order. `places`: Wild places so far; `empties`: melds with
        no natural card yet (virtual mode only; each will need one natural, R4.5).

        Cost: Wild places (real mode, at most the Wilds in hand); in virtual mode the
        cards still missing, max(empties, places - wilds)."""
        order = self.order
        virtual = self.virtual
        if i == len(order):
            cost = max(empties, places - self.wilds) if virtual else places
            if cost < self.best_cost:
                self.best_cost = cost
                self.best = list(self.chosen)
            return
        pos, req = order[i]
        last = i == len(order) - 1
        if virtual:
            budget = self.best_cost - 1 + self.wilds - places
        else:
            budget = min(self.wilds, self.best_cost - 1) - places
        if budget < 0:
            return
        kind = req.kind
        if last and not virtual and not self.colour_matters:
            self._fill_last(pos, req, places, budget)
            return
        gen = (
            self._sets(req.size, last, budget) if kind == "set"
            else self._runs(req.size, last, budget) if kind == "run"
            else self._colours(req.size, last, budget)
        )
        for cards, wild_places in gen:
            self._take(cards, 1)
            self.chosen.append((pos, req, cards))
            self._solve(i + 1, places + wild_places, empties)
            self.chosen.pop()
            self._take(cards, -1)
            if self.best_cost == 0:
                return
        if virtual and empties + 1 < self.best_cost:
            # A meld with no natural card yet: every place still to be found.
            self.chosen.append((pos, req, []))
            self._solve(i + 1, places + req.size, empties + 1)
            self.chosen.pop()

    def _fill_last(self, pos: int, req: MeldReq, places: int, budget: int) -> None:
        """The last meld in number mode, real search: its cheapest candidate directly (the
        first of the cheapest, in the generators' order), with no generator or recursion."""
        size = req.size
        ncount = self.ncount
        best_places = budget + 1
        cards: list[int | None] = []
        if req.kind == "set":
            for n in range(1, 13):
                c = ncount[n]
                if c and size - c < best_places:
                    k = c if c < size else size
                    best_places = size - k
                    cards = [n] * k
                    if not best_places:
                        break
        else:
            for start, present in _windows(ncount, size):
                if present and size - present < best_places:
                    best_places = size - present
                    cards = [n if ncount[n] else None for n in range(start, start + size)]
                    if not best_places:
                        break
        if cards and places + best_places < self.best_cost:
            self.best_cost = places + best_places
            self.best = self.chosen + [(pos, req, cards)]

    def best_types(self) -> list[tuple[int, MeldReq, list[int | None]]] | None:
        """The best layout with card type indexes (number mode picks any colours)."""
        if self.best is None or self.colour_matters:
            return self.best
        left = list(self.avail)
        out = []
        for pos, req, numbers in self.best:
            cards: list[int | None] = []
            for n in numbers:
                if n is None:
                    cards.append(None)
                    continue
                t = next(t for t in _NUMBER_TYPES[n] if left[t])
                left[t] -= 1
                cards.append(t)
            out.append((pos, req, cards))
        return out


def find_lay(hand: Sequence[Card], phase: Phase, extend: bool = True) -> list[list[Card]] | None:
    """A legal lay of `phase` from `hand`, using the fewest Wilds, or None if there is none.

    Melds come in the phase's order; runs are listed low to high with Wilds where they
    stand. With `extend`, natural cards left over that fit a meld are laid with it
    (a longer meld is allowed, R5.4), so fewer cards stay in hand.
    """
    search = _Search(hand, phase, virtual=False)
    search.run()
    best = search.best_types()
    if best is None:
        return None
    avail = search.avail
    for _, _, cards in best:
        for t in cards:
            if t is not None:
                avail[t] -= 1
    melds: list[tuple[int, list[Card]]] = []
    for pos, req, cards in best:
        if req.kind == "run":
            out = [CARD_TYPES[t] if t is not None else WILD for t in cards]
        else:
            out = [CARD_TYPES[t] for t in cards if t is not None] + [WILD] * (req.size - len(cards))
        if extend:
            out = _extend(out, req.kind, avail)
        melds.append((pos, out))
    melds.sort(key=lambda pm: pm[0])
    return [m for _, m in melds]


def _extend(cards: list[Card], kind: str, avail: list[int]) -> list[Card]:
    """Add the natural cards left in hand that fit this meld."""
    natural = next(c for c in cards if c.number)
    if kind == "set":
        for t in _NUMBER_TYPES[natural.number]:
            while avail[t]:
                avail[t] -= 1
                cards.append(CARD_TYPES[t])
    elif kind == "color":
        for t in _COLOR_TYPES[COLOR_LETTERS.index(natural.color)]:  # type: ignore[arg-type]
            while avail[t]:
                avail[t] -= 1
                cards.append(CARD_TYPES[t])
    else:
        first = next(i for i, c in enumerate(cards) if c.number)
        low = natural.number - first
        high = low + len(cards) - 1
        while low > 1:
            found = next((t for t in _NUMBER_TYPES[low - 1] if avail[t]), None)
            if found is None:
                break
            avail[found] -= 1
            cards.insert(0, CARD_TYPES[found])
            low -= 1
        while high < 12:
            found = next((t for t in _NUMBER_TYPES[high + 1] if avail[t]), None)
            if found is None:
                break
            avail[found] -= 1
            cards.append(CARD_TYPES[found])
            high += 1
    return cards


def missing(hand: Sequence[Card], phase: Phase) -> int:
    """How many more cards `hand` needs, at fewest, to lay `phase` (0: it can lay now).

    Wilds in hand fill places; a meld must still hold a natural card to be laid, so 0
    means `find_lay` succeeds.
    """
    search = _Search(hand, phase, virtual=True)
    search.run()
    return search.best_cost


def plan(hand: Sequence[Card], phase: Phase) -> tuple[int, set[int]]:
    """(missing cards, indexes into `hand` of the cards the best partial layout uses).

    Cards outside the layout are the least useful for the phase: a player's natural
    discards.
    """
    search = _Search(hand, phase, virtual=True)
    search.run()
    used_types: dict[int, int] = {}
    wild_places = 0
    for _, req, cards in search.best_types() or []:
        wild_places += req.size - sum(1 for t in cards if t is not None)
        for t in cards:
            if t is not None:
                used_types[t] = used_types.get(t, 0) + 1
    used: set[int] = set()
    wilds_used = min(wild_places, search.wilds)
    for i, c in enumerate(hand):
        if c.number and used_types.get(c.index, 0) > 0:
            used_types[c.index] -= 1
            used.add(i)
        elif c.is_wild and wilds_used > 0:
            wilds_used -= 1
            used.add(i)
    return search.best_cost, used


def legal_hits(hand: Sequence[Card], table: Sequence[Meld]) -> list[tuple[Card, int, str | None]]:
    """Every single hit (card, meld id, end) that is legal now (R7.1); `end` is given for
    Wilds on runs ("low"/"high"), where a player with both ends open must say which (R7.3)."""
    # What each meld takes, worked out once: a set its number, a colour meld its colour,
    # a run the numbers just past its ends.
    sets: dict[int, list[int]] = {}
    colours: dict[str | None, list[int]] = {}
    run_ends: dict[int, list[tuple[int, str]]] = {}
    wild_places: list[tuple[int, str | None]] = []
    for m in table:
        if m.kind == "set":
            sets.setdefault(m.number, []).append(m.id)
            wild_places.append((m.id, None))
        elif m.kind == "color":
            colours.setdefault(m.color, []).append(m.id)
            wild_places.append((m.id, None))
        else:
            if m.low > 1:
                run_ends.setdefault(m.low - 1, []).append((m.id, "low"))
                wild_places.append((m.id, "low"))
            if m.high < 12:
                run_ends.setdefault(m.high + 1, []).append((m.id, "high"))
                wild_places.append((m.id, "high"))
    out: list[tuple[Card, int, str | None]] = []
    seen: set[int] = set()
    for card in hand:
        if card.index in seen or card.is_skip:
            continue
        seen.add(card.index)
        if card.is_wild:
            out.extend((card, mid, end) for mid, end in wild_places)
            continue
        # A natural card names no end: a run takes it at the only end it fits.
        found = sets.get(card.number, []) + colours.get(card.color, [])
        ends = run_ends.get(card.number)
        if ends:
            found += [mid for mid, _ in ends]
        if found:
            found.sort()
            out.extend((card, mid, None) for mid in found)
    return out
