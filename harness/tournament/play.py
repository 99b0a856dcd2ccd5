"""Handing games to an executor: only those the disqualification gate lets start, a
bounded window of them at a time, and each result checked to be a game handed out."""

from __future__ import annotations

import heapq
import itertools
import threading
from typing import Any, Iterable, Iterator

from ..ledger.keep import Deferred
from ..model import PlayedGame
from .config import TournamentConfig
from .disqualify import Disqualification, DisqualificationGate, judges
from .results import ResultsError
from .schedule import GameSpec, played_as
from .stop_rule import history_specs
from .tally import GameTally

WINDOW = 1024
"""Games handed to the executor and not finished, at most (without a stop event): the
run reads its schedule as games are handed out, so what it holds of it is bounded."""

HELD = 4096
"""Games read from the schedule and waiting for the disqualification gate, at most
(beyond them the next games are read once these are handed out)."""

class _Waiting:
    """The games not handed out yet, read from `todo` (in index order) as they are
    wanted, and taken as soon as `gate` lets them start, lowest index first.

    A game the gate holds up waits with the entrant that holds it up (`gate.blocker`),
    and is looked at again only once that entrant is cleared for its round: each take
    costs the games it hands out and the entrants that hold games up, not every game held
    (which was some 3,000 `ready` calls a game with 100 entrants)."""

    def __init__(self, todo: Iterable[GameSpec], gate: DisqualificationGate) -> None:
        self.gate = gate
        self.src = iter(todo)
        self.next: GameSpec | None = next(self.src, None)
        self.candidates: list[tuple[int, GameSpec]] = []  # heap by index: not known to be held up
        self.blocked: dict[str, list[tuple[int, int, GameSpec]]] = {}  # entrant -> heap of (round, index, game)
        self.held = 0

    def __bool__(self) -> bool:
        return self.held > 0 or self.next is not None

    def take(self, want: int) -> list[GameSpec]:
        """Up to `want` waiting games that may start now, in index order; they stop
        waiting. Only rounds up to the gate's horizon are looked at (and read from the
        schedule), so a long schedule costs little."""
        gate = self.gate
        limit = gate.horizon()
        while self.next is not None and self.held < want + HELD and gate.round_of(self.next) <= limit:
            heapq.heappush(self.candidates, (self.next.index, self.next))
            self.held += 1
            self.next = next(self.src, None)
        for e in list(self.blocked):  # games whose entrant has been cleared for their round
            q = self.blocked[e]
            while q and gate.cleared(e, q[0][0]):
                _, i, s = heapq.heappop(q)
                heapq.heappush(self.candidates, (i, s))
            if not q:
                del self.blocked[e]
        out: list[GameSpec] = []
        while self.candidates and len(out) < want:
            i, s = self.candidates[0]
            if gate.round_of(s) > limit:
                break
            heapq.heappop(self.candidates)
            who = gate.blocker(s)
            if who is None:
                out.append(s)
            else:
                heapq.heappush(self.blocked.setdefault(who, []), (gate.round_of(s), i, s))
        self.held -= len(out)
        return out

    def head(self) -> list[str]:
        """A few waiting games' ids (for an error message)."""
        held = sorted([(i, s) for i, s in self.candidates] + [(i, s) for q in self.blocked.values() for _, i, s in q],
                      key=lambda x: x[0])[:5]
        return [s.game for _, s in held] or ([self.next.game] if self.next is not None else [])


def play_games(executor: Any, todo: Iterable[GameSpec], gate: DisqualificationGate, excluded: set[str],
              stop: threading.Event | None = None, parallel: int = 1,
              deferred: Deferred | None = None) -> Iterator[PlayedGame]:
    """Run `todo` on `executor`, handing out only the games that `gate` lets start. The
    executor asks for more after each result, once the caller has added that result to
    the gate, so a game starts as soon as the verdicts it waits for are known: there is
    no pause between rounds while the last game of one is still being played. At most
    `WINDOW` games are handed out and not finished at a time.

    With `stop`, the executor is handed only as many games as it plays at once (two per
    worker), one more as each ends, and none once `stop` is set: the games in flight
    then finish and the run ends.

    With `deferred`, a result comes once its replay is settled (`keep.Deferred`): a game
    whose replay depends on games before it that are still to finish comes after them (a
    stop leaves it out, to be played again by the next run)."""
    waiting = _Waiting(deferred.track(todo) if deferred is not None else todo, gate)
    window = 2 * max(1, parallel) if stop is not None else max(WINDOW, 4 * parallel)
    out = 0  # handed out and not finished
    handed: dict[int, GameSpec] = {}  # what a result must be the game of

    def hand(k: int) -> list[GameSpec]:
        nonlocal out
        if stop is not None and stop.is_set():
            return []
        given = waiting.take(k)
        out += len(given)
        handed.update((g.index, g) for g in given)
        return given

    def more() -> list[GameSpec]:
        nonlocal out
        out -= 1
        return hand(window - out)

    first = hand(window)
    if not first and waiting and not (stop is not None and stop.is_set()):
        # cannot happen: the first game not played is always ready (a stop asked for
        # between two rounds of a league hands out nothing, and ends the run)
        raise RuntimeError(f"no game can start; waiting: {waiting.head()}")
    for res in executor.run(first, excluded, more=more):
        rec = res["record"]
        spec = handed.pop(rec.get("id"), None) if isinstance(rec.get("id"), int) else None
        if spec is None or not played_as(spec, rec):  # (disqualified entrants play no more)
            # A worker (a machine of the cluster) answered with a game it was not given.
            raise ResultsError(f"a worker returned a result for game {str(rec.get('game'))[:40]!r} (id "
                               f"{str(rec.get('id'))[:20]}) that is not a game handed out, or not as scheduled: "
                               "the result is not recorded")
        if deferred is not None:
            yield from deferred.feed(res, spec.sample)
        else:
            yield res
    if stop is not None and stop.is_set():
        return
    if waiting:  # cannot happen: every finished game lets later ones start
        raise RuntimeError(f"games never became ready to start: {waiting.head()}")


def gate_of(cfg: TournamentConfig, tally: GameTally, specs: Iterable[GameSpec], below: int | None,
          builds: Iterable[Disqualification] = ()) -> DisqualificationGate:
    """The disqualification gate of a run: the games of `tally` below `below` (all if
    None) as history, then `specs`, judged from every game of `tally`, with the failed
    builds its games carry and `builds` (this run's). No game is read when
    disqualification is off."""
    pol = cfg.disqualify
    failed = tally.build_failures() + list(builds)
    if not judges(pol):
        return DisqualificationGate((), cfg.standing, pol, builds=failed)
    return DisqualificationGate(itertools.chain(history_specs(tally, below), specs), cfg.standing, pol,
                                tally.disqualification_records(), failed)
