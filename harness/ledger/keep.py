"""Which games' replays a tournament keeps (`replays:`), one rule for the run and for
`verify`, whatever plays the games and in whatever order they finish.

- `none`: no game's; `all`: every game's;
- `failed`: every game with a fault;
- `sample` (the default): the first `SAMPLE_PER_ENTRANT` games of every entrant (in
  schedule order: `GameSpec.sample`), and each entrant's first `FAULT_REPLAYS` games
  (by game index) in which it had a fault of its own. So a bot that faults in every game
  keeps a few replays, not one a game; another bot's faults never use up its share.

Whether a game is among an entrant's first games with a fault depends on the games
before it: the run decides it once every game of lower index is in (`Deferred`), so the
same games keep their replays with any `parallel`, any executor and on resume."""

from __future__ import annotations

import heapq
from bisect import insort
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..model import PlayedGame

FAULT_REPLAYS = 3
"""With `replays: sample`, each entrant's games with a fault of its own whose replays are
kept: its first this many, by game index."""


def at_fault(rec: Mapping[str, Any]) -> list[str]:
    """The entrants with a fault in game record `rec`, in seat order, each once."""
    faults = rec.get("faults") or ()
    return list(dict.fromkeys(str(f.get("entrant")) for f in faults if isinstance(f, Mapping)))


def keeps(mode: str, sample: bool, faulted: bool, first_fault: bool) -> bool:
    """Whether a game's replay is kept under `replays: mode`: `sample`, the game is one of
    an entrant's first games in the schedule; `faulted`, it has a fault; `first_fault`, it
    is among the first `FAULT_REPLAYS` games with a fault of one of the entrants at fault."""
    if mode == "all":
        return True
    if mode == "failed":
        return faulted
    if mode == "sample":
        return sample or (faulted and first_fault)
    return False


def may_keep(mode: str, sample: bool, faulted: bool) -> bool:
    """Whether a game's replay may be kept, before the games before it are known (a
    worker sends it to the run, which decides)."""
    return keeps(mode, sample, faulted, True)


class FirstFaults:
    """Each entrant's first `FAULT_REPLAYS` games with a fault of its own, by game index,
    from game records added in any order (what is kept is `FAULT_REPLAYS` indexes an
    entrant)."""

    def __init__(self, k: int = FAULT_REPLAYS) -> None:
        self.k = k
        self.first: dict[str, list[int]] = {}

    def add(self, rec: Mapping[str, Any]) -> None:
        """Count game record `rec`."""
        i = rec["id"]
        for e in at_fault(rec):
            got = self.first.setdefault(e, [])
            if i not in got and (len(got) < self.k or i < got[-1]):
                insort(got, i)
                del got[self.k:]

    def among(self, index: int, entrants: Sequence[str]) -> bool:
        """Whether game `index` is among the first `k` games with a fault of one of
        `entrants`, as far as the games added say: final once every game below `index`
        is added, and a `False` is final at once."""
        return any(sum(1 for i in self.first.get(e, ()) if i < index) < self.k for e in entrants)


class Deferred:
    """The run's side of the rule. `feed` each finished game's result as it comes (in any
    order); what it yields are results whose replay (`res["replay"]`) is settled: kept, or
    dropped (None). A game whose replay depends on games of lower index still being
    played waits for them (at most `FAULT_REPLAYS` of an entrant's games at a time, plus
    those that finished out of order); `unfinished` are the indexes of the games handed
    out or waiting to be, lowest first, as `track` and `feed` see them."""

    def __init__(self, mode: str, firsts: FirstFaults) -> None:
        self.mode = mode
        self.firsts = firsts
        self._unfinished: list[int] = []  # a heap; finished ones are dropped lazily
        self._finished: set[int] = set()
        self.waiting: list[tuple[int, PlayedGame, bool]] = []  # (index, result, sample)

    def track(self, specs: Iterable[Any]) -> Iterator[Any]:
        """`specs` (GameSpecs in index order), noting each as unfinished when read."""
        for s in specs:
            heapq.heappush(self._unfinished, s.index)
            yield s

    def _floor(self) -> int | None:
        """The lowest index of a game not finished (None: none)."""
        while self._unfinished and self._unfinished[0] in self._finished:
            self._finished.discard(heapq.heappop(self._unfinished))
        return self._unfinished[0] if self._unfinished else None

    def feed(self, res: PlayedGame, sample: bool) -> Iterator[PlayedGame]:
        """Take one finished game's result (`sample`: its spec's flag); yield the results
        settled now."""
        rec = res["record"]
        i = rec["id"]
        self._finished.add(i)
        self.firsts.add(rec)
        self.waiting.append((i, res, sample))
        floor = self._floor()
        still: list[tuple[int, PlayedGame, bool]] = []
        for j, r, s in sorted(self.waiting, key=lambda w: w[0]):
            faulted = at_fault(r["record"])
            if self.mode != "sample" or s or not faulted:
                kept = keeps(self.mode, s, bool(faulted), bool(faulted))
            elif (floor is None or j < floor) or not self.firsts.among(j, faulted):
                kept = self.firsts.among(j, faulted)
            else:
                still.append((j, r, s))
                continue
            if not kept:
                r["replay"] = None
            yield r
        self.waiting = still
