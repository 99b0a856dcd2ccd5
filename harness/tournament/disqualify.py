"""Disqualification, decided the same way whatever plays the games.

The schedule is cut into rounds of `check_every` games by game index. Before round `b`
(at *boundary* `b`) each entrant still in is judged from its games of rounds `0..b-1`
alone: it is disqualified when it failed to start in `startup_failures` of them, or
forfeited more than `forfeit_share` of the ones played (once it has played `min_games`).
From round `b` on, its games are played without it.

An entrant whose `build:` failed at the start of a run is disqualified with the build's
reason from the first game after every game recorded then (`build_disqualification`):
every game of its not played yet is played without it, and the record of each carries the
failure (`BUILD_KEY`), so that it is read back from the games like every other verdict.
It stands whatever its games say (no later run builds it again).

A game of round `r` may start once every entrant at its table has been judged at every
boundary up to `r`. That needs its earlier games only as far as they could change the
verdict: an entrant with a clean record is judged "stays in" while some of its games
are still running, if even losing them all by forfeit could not disqualify it. A
disqualification itself waits for all the games it is judged from. So the verdicts,
the games they lead to, and the records are the same for any `parallel`, any executor,
any finishing order, and on resume (the gate is rebuilt from games.jsonl).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .config import DisqualifyPolicy
from .schedule import GameSpec, game_id
from ..spill import Column, empty
from ..model import NOT_PLAYED, FaultKind, played


@dataclass(frozen=True)
class Disqualification:
    """An entrant taken out: why, and the first game index of the rounds played without it."""

    entrant: str
    reason: str
    from_index: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form (disqualified.json, leaderboard.json)."""
        return {"entrant": self.entrant, "reason": self.reason, "from_index": self.from_index,
                "from_game": game_id(self.from_index)}


BUILD_KEY: Final = "build_failed"
"""The key of a game record that lists the failed builds of entrants left out of the game:
[{"entrant", "reason", "from_index"}] (see `build_disqualification`)."""


def build_disqualification(entrant: str, why: str, from_index: int) -> Disqualification:
    """The disqualification of an entrant whose build failed (`why`: the build's error),
    from game index `from_index`."""
    return Disqualification(entrant, why[:500], from_index)


def failed_builds(rec: Mapping[str, Any]) -> Iterator[Disqualification]:
    """The failed builds a game record carries (`BUILD_KEY`), each as its disqualification."""
    for d in rec.get(BUILD_KEY) or ():
        if isinstance(d, Mapping):
            e, why, i = d.get("entrant"), d.get("reason"), d.get("from_index")
            if isinstance(e, str) and isinstance(why, str) and isinstance(i, int) and not isinstance(i, bool):
                yield Disqualification(e, why, i)


def build_record(d: Disqualification) -> dict[str, Any]:
    """A failed build as a game record carries it (`BUILD_KEY`)."""
    return {"entrant": d.entrant, "reason": d.reason, "from_index": d.from_index}


def earlier(a: Disqualification, b: Disqualification) -> Disqualification:
    """Of two failed builds of one entrant (records a run never writes), the one that counts."""
    return min(a, b, key=lambda d: (d.from_index, d.reason))


def judges(policy: DisqualifyPolicy) -> bool:
    """Whether `policy` judges entrants by their games at all (failed builds disqualify
    whatever it says)."""
    return policy.startup_failures is not None or policy.forfeit_share is not None


class _Tally:
    """One entrant's games before the boundary being judged."""

    __slots__ = ("games", "cursor", "unknown", "played", "forfeits", "startups", "last_startup")

    def __init__(self, games: np.ndarray) -> None:
        self.games = games  # its scheduled game indices, ascending (8 bytes each)
        self.cursor = 0  # games[:cursor] are counted (or waiting in `unknown`)
        self.unknown: set[int] = set()
        self.played = 0
        self.forfeits = 0
        self.startups = 0
        self.last_startup: tuple[int, str] | None = None

    def count(self, entrant: str, rec: Mapping[str, Any]) -> None:
        if not played(rec):
            return
        seats = rec.get("seats", [])
        if entrant not in seats:
            return
        seat = seats.index(entrant)
        self.played += 1
        self.forfeits += seat in rec.get("forfeits", [])
        for f in rec.get("faults", []):
            if f.get("entrant") == entrant and f.get("kind") == FaultKind.STARTUP:
                self.startups += 1
                if self.last_startup is None or rec["id"] > self.last_startup[0]:
                    self.last_startup = (rec["id"], str(f.get("reason", "")))
                break


class DisqualificationGate:
    """Judges entrants between rounds and says which games may start.

    Feed it every finished record (`add`); hand out a game only when `ready(spec)`; play
    it without the entrants in `excluded`.

    What it keeps: nothing when disqualification is off (`specs` is not even read); else
    each entrant's scheduled game indices (8 bytes a seat) and a finished game's slim
    record (seats, forfeits, failed starts) only until every entrant at its table has
    counted it. `specs` and `records` may be iterables read once (a streamed schedule).
    `builds`: failed builds known besides those the records carry (`failed_builds`).
    """

    def __init__(self, specs: Iterable[GameSpec], entrants: Sequence[str], policy: DisqualifyPolicy,
                 records: Mapping[int, Mapping[str, Any]] | Iterable[Mapping[str, Any]] | None = None,
                 builds: Iterable[Disqualification] = ()) -> None:
        self.policy = policy
        self.size = policy.check_every
        self.entrants = list(entrants)
        self.enabled = judges(policy)
        # Finished games not yet counted for every entrant at their table (then dropped),
        # with how many entrants still have to count each; `_stored`: games ever stored.
        self.records: dict[int, Mapping[str, Any]] = {}
        self._left: dict[int, int] = {}
        self._stored = bytearray()
        games, top = _games_by_entrant(specs if self.enabled else (), self.entrants)
        self.last_round = top // self.size
        self.tally = {e: _Tally(g) for e, g in games.items()}
        self.judged = {e: 0 for e in games}  # boundaries 1..judged[e] judged "stays in"
        self.disqualified: dict[str, Disqualification] = {}
        self.builds: dict[str, Disqualification] = {}  # the disqualified whose build failed
        for rec in (records.values() if isinstance(records, Mapping) else records or ()):
            self._store(rec)
        for d in builds:
            self.build_failed(d)
        for e in self.entrants:
            self._advance(e)

    # ----- what the runner asks ------------------------------------------------------------

    @property
    def excluded(self) -> set[str]:
        """Entrants disqualified so far."""
        return set(self.disqualified)

    def ready(self, spec: GameSpec) -> bool:
        """Whether `spec` may start now: every entrant at its table is judged up to its round."""
        return self.blocker(spec) is None

    def blocker(self, spec: GameSpec) -> str | None:
        """The first entrant at `spec`'s table not yet judged up to its round (None: the
        game may start now)."""
        if not self.enabled:
            return None
        r = spec.index // self.size
        for e in spec.seats:
            if not self.cleared(e, r):
                return e
        return None

    def cleared(self, entrant: str, r: int) -> bool:
        """Whether `entrant` no longer holds up a game of round `r`: it is judged up to `r`,
        or disqualified (an entrant the gate does not know never holds a game up)."""
        return entrant in self.disqualified or self.judged.get(entrant, r) >= r

    def round_of(self, spec: GameSpec) -> int:
        """The round of `spec` (its index // `check_every`)."""
        return spec.index // self.size

    def horizon(self) -> int:
        """No game of a later round than this may start now (every table holds an entrant
        still in; none of them is judged further than this)."""
        if not self.enabled:
            return 1 << 62  # every game may start
        inside = [j for e, j in self.judged.items() if e not in self.disqualified]
        return max(inside) if inside else self.last_round

    def build_failed(self, d: Disqualification) -> None:
        """An entrant whose build failed (`build_disqualification`) is out from
        `d.from_index`, whatever its games say (of two failures, the `earlier`)."""
        old = self.builds.get(d.entrant)
        self.builds[d.entrant] = self.disqualified[d.entrant] = d if old is None else earlier(old, d)

    def add(self, rec: Mapping[str, Any]) -> list[Disqualification]:
        """Count a finished game; returns the disqualifications it completes."""
        known = dict(self.builds)
        self._store(rec)
        new = [d for e, d in self.builds.items() if known.get(e) != d]
        if not self.enabled:
            return new
        for e in dict.fromkeys(rec.get("seats", [])):
            if e in self.tally and e not in self.disqualified:
                self._advance(e)
                if e in self.disqualified:
                    new.append(self.disqualified[e])
        return new

    def in_order(self) -> list[Disqualification]:
        """The disqualifications by round, then entrant order."""
        order = {e: i for i, e in enumerate(self.entrants)}
        return sorted(self.disqualified.values(), key=lambda d: (d.from_index, order.get(d.entrant, 0)))

    # ----- judging -------------------------------------------------------------------------

    def _store(self, rec: Mapping[str, Any]) -> None:
        for d in failed_builds(rec):
            self.build_failed(d)
        if not self.enabled:
            return
        i = rec["id"]
        byte = i >> 3
        if byte < len(self._stored) and self._stored[byte] >> (i & 7) & 1:
            return
        if byte >= len(self._stored):
            self._stored.extend(bytes(max(byte + 1 - len(self._stored), len(self._stored))))
        self._stored[byte] |= 1 << (i & 7)
        rec = _slim(rec)
        self.records[i] = rec
        self._left[i] = sum(1 for e in dict.fromkeys(rec.get("seats", [])) if e in self.tally)
        for e in dict.fromkeys(rec.get("seats", [])):
            t = self.tally.get(e)
            if t is not None and i in t.unknown:
                t.unknown.discard(i)
                self._count(e, t, rec)
        if self._left.get(i) == 0:
            self._done(i)

    def _count(self, e: str, t: _Tally, rec: Mapping[str, Any]) -> None:
        """Count `rec` for `e`; a record every entrant at its table has counted is dropped."""
        t.count(e, rec)
        i = rec["id"]
        self._left[i] -= 1
        if not self._left[i]:
            self._done(i)

    def _done(self, i: int) -> None:
        del self._left[i]
        self.records.pop(i, None)

    def _advance(self, e: str) -> None:
        if not self.enabled:
            return
        t = self.tally[e]
        while e not in self.disqualified and self.judged[e] < self.last_round:
            b = self.judged[e] + 1
            end = int(np.searchsorted(t.games, b * self.size))
            for i in t.games[t.cursor:end].tolist():
                rec = self.records.get(i)
                if rec is None:
                    t.unknown.add(i)
                else:
                    self._count(e, t, rec)
            t.cursor = max(t.cursor, end)
            verdict = self._judge(e, t, b)
            if verdict is None:
                return  # not yet known
            if not isinstance(verdict, bool):
                self.disqualified[e] = verdict
                return
            self.judged[e] = b

    def _judge(self, e: str, t: _Tally, b: int) -> Disqualification | bool | None:
        """True: stays in; a Disqualification; None: depends on games still running."""
        p = self.policy
        u = len(t.unknown)
        if u:
            # Could the running games still disqualify it? Worst case: all lost at start-up.
            could = (p.startup_failures is not None and t.startups + u >= p.startup_failures) or (
                p.forfeit_share is not None and t.played + u >= p.min_games
                and t.forfeits + u > p.forfeit_share * (t.played + u))
            return None if could else True
        if p.startup_failures is not None and t.startups >= p.startup_failures:
            last = t.last_startup[1] if t.last_startup else ""
            return Disqualification(
                e, f"failed to start in {t.startups} games (the limit is {p.startup_failures}); last: {last}"[:500],
                b * self.size)
        if p.forfeit_share is not None and t.played >= p.min_games and t.forfeits > p.forfeit_share * t.played:
            return Disqualification(
                e, f"forfeited {t.forfeits} of its {t.played} games, more than the {p.forfeit_share:.0%} allowed",
                b * self.size)
        return True


def _games_by_entrant(specs: Iterable[GameSpec], entrants: Sequence[str]) -> tuple[dict[str, np.ndarray], int]:
    """Each entrant's scheduled game indices, ascending (the entrants given, then any other
    seated, in the order met), as views of one array that a long schedule keeps in a file
    (`spill`); and the highest index (0 if none)."""
    number: dict[str, int] = {}
    for e in entrants:  # numbered by first occurrence
        number.setdefault(e, len(number))
    who, index = Column(np.int32), Column(np.int64)  # a row per (game, entrant at its table)
    top = 0
    for s in specs:
        top = max(top, s.index)
        for e in dict.fromkeys(s.seats):
            who.append(number.setdefault(e, len(number)))
            index.append(s.index)
    w, ix, n = who.view(), index.view(), len(number)
    step = 1 << 16
    counts = np.zeros(n, dtype=np.int64)
    for lo in range(0, len(w), step):
        counts += np.bincount(w[lo:lo + step], minlength=n)
    ends = np.cumsum(counts)
    starts = ends - counts
    out = empty(len(w), np.int64)
    fill = starts.copy()
    for lo in range(0, len(w), step):  # each row to its entrant's place, a chunk at a time, order kept
        wc = w[lo:lo + step].astype(np.int64)
        order = np.argsort(wc, kind="stable")
        cnt = np.bincount(wc, minlength=n)
        first = np.cumsum(cnt) - cnt
        ws = wc[order]
        out[fill[ws] + np.arange(len(ws)) - first[ws]] = ix[lo:lo + step][order]
        fill += cnt
    games: dict[str, np.ndarray] = {}
    for e, k in number.items():
        g = out[starts[k]:ends[k]]
        if len(g) > 1 and not bool((g[1:] > g[:-1]).all()):
            g[:] = np.sort(g, kind="stable")
        games[e] = g
    return games, top


def _slim(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    """What judging reads of a record: its index, seats, forfeits, failed starts, and
    whether it was played."""
    faults = [f for f in rec.get("faults", []) if f.get("kind") == FaultKind.STARTUP]
    out = {"id": rec["id"], "seats": rec.get("seats", []), "forfeits": rec.get("forfeits", []), "faults": faults}
    if not played(rec):
        out["reason"] = NOT_PLAYED
    return out


def disqualifications(specs: Iterable[GameSpec], entrants: Sequence[str], policy: DisqualifyPolicy,
                      records: Mapping[int, Mapping[str, Any]] | Iterable[Mapping[str, Any]],
                      builds: Iterable[Disqualification] = ()) -> list[Disqualification]:
    """The disqualifications that the finished games `records` decide (recomputed, as on
    resume), with the failed `builds` known besides those the records carry. An iterable
    is read one record at a time (the verdicts do not depend on the order games are added
    in), so records that have been counted are not all held."""
    if isinstance(records, Mapping):
        return DisqualificationGate(specs, entrants, policy, records, builds).in_order()
    gate = DisqualificationGate(specs, entrants, policy, builds=builds)
    for r in records:
        gate.add(r)
    return gate.in_order()
