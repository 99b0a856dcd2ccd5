"""Strong: the greedy player's plan with better choices where greedy leaves strength on the
table, from the seat's view alone (deterministic).

What it changes, and how it was measured (figures in BENCHMARKS.md, "The strong and
expert bots"): the discards before laying were chosen on a paired measurement with no
opponent's luck in it — the same shuffled decks played alone until the phase can be laid —
where they lay sooner than greedy's on most phases. The two rules that matter most were
measured in duplicate games against the same player without them: keeping from the next
seat a card it could hit, and shedding points once the phase is out of reach (together,
62.8 % of 1,000 two-player games; each settled above the player without it at 3-player
tables). Laying spare Wilds and hitting a Wild where a held card can follow are moves that
are never worse. The other changes are the ones Phase 10 players make by hand; they were
not measured one by one.

- **Discard before laying**: the card whose loss leaves the fewest cards missing for the
  phase, and among those the one that keeps the most *outs* — unseen copies (not in hand,
  on the table or on top of the discard pile) of cards that would bring the phase one card
  closer — then the higher penalty. Greedy picks by a count of "partners" in hand and
  ignores which cards can still come.
- **Denial**: before laying, when the seat that draws next has laid, a card it could take
  and hit on the table counts as one card more missing (so it goes only where every other
  choice costs the phase a card too).
- **Shedding**: before laying, once another seat has laid and the phase still misses 3
  cards or more, the highest penalty goes first: the hand will most likely end first,
  and what is left in hand is scored (R8.2), which breaks ties at the end (R9.2, R9.4).
- **Laying**: the phase with the fewest Wilds and every spare natural card that fits
  (the finder's), and then the spare Wilds too: a hit cannot reach a meld laid this turn
  (R3.4), so a Wild kept back would wait a turn.
- **Hits**: a Wild goes to the run end where a card held can follow it.
- **Discard once laid**: a card that can never be hit later first (no meld end or set or
  colour it could ever join), then the highest penalty.
- **Taking the discard**: also when it keeps the missing count but adds outs (it is then
  a better card than the average deck card).
- **Skips**: on the seat most likely to go out soon (laid, fewest cards), then the phase
  race (most phases completed).

The same decisions are exposed as functions on engine cards and melds (`draw_choice`,
`play_choice`, `rank_discards`, `skip_choice`); the expert player uses the last three as
its prior (its rollouts play a faster, greedy-like policy with the same Skips and hits).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ..engine import CARD_TYPES, Card, Meld, Phase, find_lay, missing
from ..engine.cards import COPIES
from .base import Strategy, TableModel, cards_of, phase_from_view
from .greedy import skip_targets

# The cards an out can be: the naturals (a Wild helps every hand alike, so it is not
# counted).
_NATURALS = [c for c in CARD_TYPES if c.number]
_BY_NUMBER = _NATURALS[:12]  # one card per number (the red ones)


# Per phase, hands as bytes: bytes are not tracked by the garbage collector, so a large
# memo adds nothing to the collector's full passes (tuples holding a phase object would).
_MEMO: dict[Phase, dict[bytes, int]] = {}
_MEMO_MAX = 300_000


def memo_missing(hand: Sequence[Card], phase: Phase) -> int:
    """`missing(hand, phase)`, remembered. Without a colour meld in the phase only how many
    cards of each number the hand holds matters (and its Wilds), so hands that differ only
    in colours share one entry; a strategy asks about the same few hands over and over
    (each candidate discard, each card that might come), turn after turn."""
    colour = phase._memo.get("colour")
    if colour is None:
        colour = phase._memo["colour"] = any(m.kind == "color" for m in phase.melds)
    if colour:
        key = bytes(sorted(c.index for c in hand))
    else:
        counts = [0] * 14
        for c in hand:
            counts[c.number] += 1  # Wilds and Skips count under 0: set just below
        counts[0] = sum(1 for c in hand if c.is_wild)
        key = bytes(counts)
    memo = _MEMO.get(phase)
    if memo is None:
        memo = _MEMO[phase] = {}
    got = memo.get(key)
    if got is None:
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        got = memo[key] = missing(hand, phase)
    return got


def unseen_counts(hand: Sequence[Card], table: Sequence[Meld], top: Card | None,
                  extra_seen: Sequence[Card] = ()) -> list[int]:
    """Copies of each card type (by index) that this seat has not seen: the deck less its
    hand, the table, the top discard and `extra_seen`."""
    left = [COPIES[c] for c in CARD_TYPES]
    for c in hand:
        left[c.index] -= 1
    for m in table:
        for c in m.cards:
            left[c.index] -= 1
    if top is not None:
        left[top.index] -= 1
    for c in extra_seen:
        left[c.index] -= 1
    return [max(0, k) for k in left]


def closer(hand: list[Card], phase: Phase, card: Card, need: int) -> bool:
    """Whether `card` would leave `hand` fewer than `need` cards missing for `phase`
    (`hand` is left as it was)."""
    hand.append(card)
    fewer = memo_missing(hand, phase) < need
    hand.pop()
    return fewer


def outs(hand: list[Card], phase: Phase, need: int, unseen: Sequence[int]) -> int:
    """Unseen natural copies that would bring `hand` below `need` missing cards. Without a
    colour meld in the phase a card's colour does not matter, so one card of each number
    stands for all four colours (12 searches, not 48)."""
    total = 0
    colour = any(m.kind == "color" for m in phase.melds)
    for c in (_NATURALS if colour else _BY_NUMBER):
        k = unseen[c.index] if colour else sum(unseen[c.number - 1 + 12 * i] for i in range(4))
        if not k:
            continue
        if closer(hand, phase, c, need):
            total += k
    return total


def can_ever_join(card: Card, table: Sequence[Meld]) -> bool:
    """Whether a natural `card` could be hit on some meld now or after other hits."""
    for m in table:
        if m.kind == "set":
            if card.number == m.number:
                return True
        elif m.kind == "color":
            if card.color == m.color:
                return True
        elif card.number < m.low or card.number > m.high:
            return True
    return False


def rank_discards(hand: Sequence[Card], phase: Phase, laid: bool, table: Sequence[Meld],
                  unseen: Sequence[int], stop: Callable[[], bool] | None = None,
                  deny: bool = False, shed: bool = False, deny_weight: float = 1.0) -> list[Card]:
    """The distinct cards of `hand` as discards, best first (a Skip first of all; a Wild
    last). With `stop`, outs are counted only until it returns true (the cards left are
    ranked as if they kept none): for a player with a time limit. Before this seat has
    laid: with `deny` (the seat that may take the discard next has laid, so it can hit it)
    a card that fits a meld of `table` counts as `deny_weight` cards more missing (0: it
    only breaks ties); with `shed` (the phase is out of reach this hand) the highest
    penalty goes first."""
    distinct = sorted(set(hand), key=lambda c: c.index)
    skips = [c for c in distinct if c.is_skip]
    wilds = [c for c in distinct if c.is_wild]
    naturals = [c for c in distinct if c.number]
    if laid:
        fits = TableModel.__new__(TableModel)
        fits.melds = list(table)

        def key_laid(c: Card) -> tuple:
            return (bool(fits.fits(c)), can_ever_join(c, table), -c.points, -unseen[c.index], c.index)

        return skips + sorted(naturals, key=key_laid) + wilds
    work = list(hand)
    needs = []
    given = []  # 1 where the next seat could hit the card
    for c in naturals:
        work.remove(c)
        needs.append(memo_missing(work, phase))
        work.append(c)
        given.append(int(deny and any(m.can_hit(c) for m in table)))
    best = min((n + deny_weight * g for n, g in zip(needs, given)), default=0)
    scored = []
    for c, need, g in zip(naturals, needs, given):
        n_outs = 0
        if need + deny_weight * g == best and not (stop is not None and stop()):
            work.remove(c)
            n_outs = outs(work, phase, need, unseen)
            work.append(c)
        scored.append((-c.points if shed else 0, need + deny_weight * g, g, -n_outs, -c.points, c.index, c))
    scored.sort(key=lambda t: t[:6])
    return skips + [t[-1] for t in scored] + wilds


SHED_MISSING = 3
"""Cards missing at which a seat that has not laid, once another has, sheds penalty points
instead of building its phase: the hand will likely end before it lays."""


def discard_context(state: Mapping[str, Any], rest: Sequence[Card], phase: Phase, laid: bool,
                    shed_missing: int = SHED_MISSING) -> tuple[bool, bool]:
    """`deny` and `shed` for `rank_discards` from the seat's view: whether the seat that
    draws next (after any that lose their turn to a Skip, R6.4) has laid, and whether
    another seat has laid while this one still misses `shed_missing` cards or more."""
    if laid:
        return False, False
    me = state["seat"]
    nxt = next_seat(state)
    deny = nxt is not None and bool(nxt["laid"])
    shed = any(p["laid"] for p in state["players"] if p["seat"] != me) and memo_missing(rest, phase) >= shed_missing
    return deny, shed


def next_seat(state: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The player of the view who draws next (after any who lose their turn to a Skip,
    R6.4), or None."""
    me = state["seat"]
    by_seat = {p["seat"]: p for p in state["players"]}
    n = len(by_seat)
    for k in range(1, n):
        p = by_seat[(me + k) % n]
        if p.get("active", True) and not p["skip_pending"]:
            return p
    return None


def draw_choice(hand: list[Card], phase: Phase, laid: bool, table: Sequence[Meld], top: Card | None,
                can_take: bool, unseen: Sequence[int]) -> bool:
    """True to take the top discard."""
    if not can_take or top is None:
        return False
    if top.is_wild:
        return True
    if laid:
        return any(m.can_hit(top) for m in table)
    need = memo_missing(hand, phase)
    hand.append(top)
    try:
        with_top = memo_missing(hand, phase)
        if with_top < need:
            return True
        if with_top > need or need == 0:
            return False
        # Equal missing count: take it if, with the best discard made after, the hand has
        # more outs than it has now.
        now = outs(hand[:-1], phase, need, unseen)
        best = rank_discards(hand, phase, False, table, unseen)[0]
        if best is top or best.is_skip:
            return False
        hand.remove(best)
        after = outs(hand, phase, need, unseen) if memo_missing(hand, phase) == need else -1
        hand.append(best)
        return after > now
    finally:
        hand.remove(top)


def skip_choice(players: Sequence[Mapping[str, Any]], targets: Sequence[int]) -> int | None:
    """The seat to name with a Skip: laid with the fewest cards first (about to go out),
    then the phase race (most phases completed), then fewer cards, lower score."""
    if not targets:
        return None
    by_seat = {p["seat"]: p for p in players}

    def threat(s: int) -> tuple:
        p = by_seat[s]
        return (p["laid"], -p["cards"] if p["laid"] else 0, p.get("completed", 0), -p["cards"], -p["score"], -s)

    return max(targets, key=threat)


def hit_cards(hand: list[Card], melds: list[Meld]) -> list[tuple[Card, int, str | None]]:
    """Hit every card of `hand` that fits (in rounds: a hit may open a place for the next),
    Wilds last; `melds` (a list of table melds, by position) is updated and the hit cards
    leave `hand`. Returns (card, meld position, end) per hit, in order."""
    out: list[tuple[Card, int, str | None]] = []
    while hand:
        hit = None
        for card in sorted(set(hand), key=lambda c: (c.is_wild, -c.points, c.index)):
            if not card.is_skip:
                hit = _one_hit(card, hand, melds)
                if hit is not None:
                    break
        if hit is None:
            break
        i, end = hit
        kind = melds[i].kind
        melds[i], used = melds[i].hit(card, end)
        out.append((card, i, used if kind == "run" and card.is_wild else None))
        hand.remove(card)
    return out


def _one_hit(card: Card, hand: list[Card], melds: list[Meld]) -> tuple[int, str | None] | None:
    """Where `card` goes first (meld position, end), or None: a Wild where a card held can
    follow it (`_bridge`), else the first meld that takes it (a Wild at a run's last end)."""
    if card.is_wild:
        bridge = _bridge(hand, melds)
        if bridge is not None:
            return bridge
    for i, m in enumerate(melds):
        ends = m.can_hit(card)
        if ends:
            return i, ends[-1] if card.is_wild else ends[0]
    return None


def lay_spare_wilds(lay: list[list[Card]], rest: list[Card], phase: Phase) -> None:
    """Lay the Wilds left in `rest` with `lay` (longer melds, R5.4), so that they leave the
    hand now: once the phase is down a Wild is only ever hit, and a hit cannot reach a meld
    laid this turn (R3.4), so a Wild kept back costs a turn when the table is otherwise
    empty, and 25 points if the hand ends first. Sets and colour melds take them first (a
    Wild at a run's end would take the place of a natural card); then a run's high end,
    then its low end. `lay` (melds in the phase's order) and `rest` are changed."""
    kinds = [r.kind for r in phase.melds]
    for w in [c for c in rest if c.is_wild]:
        meld = next((m for m, k in zip(lay, kinds) if k != "run"), None)
        if meld is not None:
            meld.append(w)
        else:
            for m in lay:
                first = next(i for i, c in enumerate(m) if c.number)
                low = m[first].number - first
                if low + len(m) - 1 < 12:
                    m.append(w)
                    break
                if low > 1:
                    m.insert(0, w)
                    break
            else:
                continue  # every run spans 1..12 already
        rest.remove(w)


def _bridge(hand: Sequence[Card], melds: Sequence[Meld]) -> tuple[int, str] | None:
    """A run end where a Wild would let a natural card of `hand` follow it (a run of 3..7
    takes a Wild at its high end, then the 9 held): (meld position, end), or None."""
    numbers = {c.number for c in hand if c.number}
    for i, m in enumerate(melds):
        if m.kind != "run":
            continue
        if m.high < 11 and m.high + 2 in numbers:
            return i, "high"
        if m.low > 2 and m.low - 2 in numbers:
            return i, "low"
    return None


def play_choice(hand: list[Card], phase: Phase, laid: bool, table: Sequence[Meld],
                unseen: Sequence[int]) -> tuple[list[list[Card]] | None, list[tuple[Card, int, str | None]], list[Card]]:
    """The lay (or None) and hits the strong player makes, and the cards left in hand
    after them (the discard candidates). `hand` is not changed."""
    rest = list(hand)
    lay = None
    if not laid:
        lay = find_lay(rest, phase)
        if lay:
            for m in lay:
                for c in m:
                    rest.remove(c)
            lay_spare_wilds(lay, rest, phase)
            laid = True
    hits: list[tuple[Card, int, str | None]] = []
    if laid and table:
        hits = hit_cards(rest, list(table))
    return lay, hits, rest


class StrongStrategy(Strategy):
    """The strong heuristic player (deterministic)."""

    name = "strong"

    def decide(self, state: dict[str, Any], decision: str, options: dict[str, Any] | None) -> dict[str, Any]:
        hand = cards_of(state["cards"])
        phase = phase_from_view(state["phase"])
        table = TableModel(state["table"]).melds
        top = Card.parse(state["discard_top"]) if state["discard_top"] else None
        unseen = unseen_counts(hand, table, top)
        if decision == "draw":
            take = draw_choice(hand, phase, state["laid"], table, top, state["can_take_discard"], unseen)
            return {"draw": "discard" if take else "deck"}
        lay, hits, rest = play_choice(hand, phase, state["laid"], table, unseen)
        reply: dict[str, Any] = {}
        if lay:
            reply["lay"] = [[c.text for c in m] for m in lay]
        if hits:
            reply["hits"] = [hit_json(table, card, i, end) for card, i, end in hits]
        if rest:
            laid = state["laid"] or lay is not None
            after_table = after_hits(table, hits)
            deny, shed = discard_context(state, rest, phase, laid)
            card = rank_discards(rest, phase, laid, after_table, unseen, deny=deny, shed=shed)[0]
            reply["discard"] = card.text
            if card.is_skip:
                reply["skip"] = skip_choice(state["players"], skip_targets(state))
        return reply


def hit_json(table: Sequence[Meld], card: Card, i: int, end: str | None) -> dict[str, Any]:
    """The protocol form of a hit of `card` on the meld at position `i` of `table`."""
    h: dict[str, Any] = {"card": card.text, "meld": table[i].id}
    if end is not None:
        h["end"] = end
    return h


def after_hits(table: Sequence[Meld], hits: Sequence[tuple[Card, int, str | None]]) -> list[Meld]:
    """The table melds once `hits` (as `hit_cards` returns them) are made."""
    melds = list(table)
    for card, i, end in hits:
        melds[i], _ = melds[i].hit(card, end)
    return melds
