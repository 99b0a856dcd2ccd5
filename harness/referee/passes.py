"""What each seat's discards gave the others, counted from a game's public events: the
compact per-game counts the collusion report reads (`ratings.collusion`), recorded with
every game so that no replay is needed.

Recorded as rows ``[i, j, offered, taken, wilds, skips]``, one for each ordered pair of
seats (i the discarder, j the other) with a count that is not 0, in seat order, where:

- ``offered[i][j]``: discards of i (not Skips, which nobody may take, R3.2) that j was
  the next to draw after;
- ``taken[i][j]``: of those, the ones j took (R3.1);
- ``wilds[i][j]``: of those offered, the Wilds;
- ``skips[i][j]``: Skips i discarded naming j (R6.1).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

KINDS = ("offered", "taken", "wilds", "skips")


class PassCounter:
    """Counts `KINDS` from the events of one game, fed in order (`add`)."""

    def __init__(self, seats: int) -> None:
        self.counts = {k: [[0] * seats for _ in range(seats)] for k in KINDS}
        self._last: tuple[int, bool] | None = None  # the discard on offer: (seat, a Wild?)

    def add(self, ev: Mapping[str, Any]) -> None:
        """One public event (`deal`, `draw`, `discard`, `hand_end`, ...)."""
        kind = ev.get("e")
        if kind == "discard":
            seat, card = ev["seat"], ev["card"]
            if ev.get("skip") is not None:
                self.counts["skips"][seat][ev["skip"]] += 1
            self._last = None if card == "S" else (seat, card == "W")
        elif kind == "draw":
            if self._last is not None:
                i, wild = self._last
                j = ev["seat"]
                self.counts["offered"][i][j] += 1
                self.counts["taken"][i][j] += ev.get("from") == "discard"
                self.counts["wilds"][i][j] += wild
            self._last = None
        elif kind in ("deal", "out", "hand_end"):
            self._last = None

    def extend(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Several events, in order."""
        for ev in events:
            self.add(ev)

    def to_record(self) -> list[list[int]]:
        """The counts as a game record's `passes`: [i, j, offered, taken, wilds, skips] rows."""
        c = [self.counts[k] for k in KINDS]
        n = len(c[0])
        return [[i, j, *(m[i][j] for m in c)] for i in range(n) for j in range(n) if any(m[i][j] for m in c)]


def count_passes(seats: int, events: Iterable[Mapping[str, Any]]) -> list[list[int]]:
    """The `passes` of a game of `seats` seats from its public events."""
    counter = PassCounter(seats)
    counter.extend(events)
    return counter.to_record()
