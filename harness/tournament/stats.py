"""How sure the standings are: a batch Plackett–Luce rating with bootstrap intervals over
deals, which neighbours' order is settled (paired deal tests), the luck share of the
variance, how many more games would settle the rest, and the SPRT of early stopping.

Pure functions of game records (the dicts of games.jsonl: ``id``, ``group``, ``seats``,
``places``, ...); records whose ``reason`` is ``not_played`` and games of fewer than two
seats are left out. Everything is deterministic: records are taken in game-index order and
the bootstrap draws from ``numpy.random.default_rng(seed)``.

The rating
    Plackett–Luce on places: a game is read as the first place being chosen from everyone
    at the table with probability proportional to strength γ, the second from the rest,
    and so on. The strengths of all games at once are fitted by the MM algorithm of Hunter
    (2004, "MM algorithms for generalized Bradley–Terry models", §5), finished with Newton
    steps (MM is sure but slow near the top), so the rating does not depend on the order
    the games were played in (unlike TrueSkill). It is reported as θ = ln γ: between two
    entrants, P(a ahead of b) = 1 / (1 + e^(θb − θa)).

    Shared places: the likelihood of a game with a tie is averaged (in log terms) over every
    order of the tied entrants, so two entrants who share a place each count half a win
    over the other (the usual Bradley–Terry convention for ties).

    Prior: each entrant also plays one virtual win and one virtual loss against an anchor
    of strength γ = 1 (θ = 0), weight ``prior`` (default 1). This keeps every θ finite
    (an entrant that always wins would otherwise have γ = ∞), makes θ = 0 mean "as strong
    as the anchor", and fixes the scale without a normalisation step.

The confidence
    A bootstrap over deals: a resample draws as many duplicate groups (the games sharing
    ``group``: one deal in every seat rotation) as there are, with replacement, and refits
    θ. Whole groups are drawn, never single games, so the luck that a duplicate deal
    cancels stays cancelled in every resample; with plain deals every game is its own
    group. The interval of an entrant is the percentile interval of its θ over the
    resamples. These intervals describe the rating; they do not decide the marks.

    A resample is refitted exactly while the games are of few kinds (seats and places;
    `EXACT_LIMIT`). Beyond that (tables of three or more in a large field, where nearly
    every game is a kind of its own and an exact resample costs time and memory per game)
    resamples are drawn from the normal distribution the resampling converges to: θ̂ plus
    N(0, H⁻¹ M H⁻¹), H minus the Hessian of the log-likelihood at θ̂ and M the covariance
    of the deal groups' score vectors (the cluster-robust sandwich, `NormalBootstrap`).
    The leaderboard says which (``statistics.method.intervals``).

How sure the order is
    From paired deal outcomes (see "paired deal outcomes" below): a pair of neighbours is
    *settled* when a two-sided test of "equally strong" on the deals both played rejects at
    the confidence after Holm's correction over every pair, by an exact sign test for a
    board of fixed size, by an anytime-valid test for early stopping (`stop_when`).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations
from statistics import NormalDist
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import numpy as np

from .. import spill

RESAMPLES = 1000
CONFIDENCE = 0.95
PRIOR = 1.0

# A stage of a game: (entrants in the risk set, weight, chosen weight of each of them).
Stage = tuple[tuple[int, ...], float, tuple[float, ...]]


def played(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records that count for statistics, in game-index order."""
    return sorted((r for r in records if r.get("reason") != "not_played" and len(r["seats"]) >= 2),
                  key=lambda r: r["id"])


@dataclass
class GameArrays:
    """The played games as compact arrays, what the statistics read of them, in game-index
    order: about 30 bytes a game where a record in memory is some 2 KB. Built from records
    (`from_records`) or kept up as games finish (`tournament.tally.GameTally`)."""

    entrants: list[str]
    ids: np.ndarray  # int64, ascending
    group: np.ndarray  # int64: ordinal of the game's deal group, by the group's first game
    size: np.ndarray  # int8: seats at the table (2 or more)
    seats: np.ndarray  # int32 (games × widest table): entrant index by seat, −1 past `size`
    places: np.ndarray  # int16, the same shape: place by seat, 0 past `size`

    @property
    def games(self) -> int:
        """The number of games."""
        return len(self.ids)

    @property
    def groups(self) -> int:
        """The number of deal groups."""
        return int(self.group.max()) + 1 if len(self.group) else 0

    def groups_in_order(self) -> bool:
        """Whether each deal group's games are consecutive (the group ordinals never go
        down), as a schedule deals them."""
        return _never_down(self.group)

    @classmethod
    def build(cls, entrants: Sequence[str], ids: Any, keys: Any, seats: Any, places: Any) -> "GameArrays":
        """From parallel arrays in any order: game indices, deal group keys (int64: games
        with the same key are one deal group; a game's key −1 − its index marks a game of
        its own group), seats and places (−1 / 0 past the table). Arrays already in index
        order are taken as they are (not copied)."""
        ids = np.asarray(ids, dtype=np.int64)
        keys = np.asarray(keys, dtype=np.int64)
        seats, places = np.asarray(seats, dtype=np.int32), np.asarray(places, dtype=np.int16)
        width = seats.shape[-1] if seats.ndim == 2 else 2
        seats, places = seats.reshape(len(ids), width), places.reshape(len(ids), width)
        if len(ids) > 1 and not _never_down(ids):  # games as they finished: put in index order
            order = _index_order(ids)
            ids, keys, seats, places = (_gathered(a, order) for a in (ids, keys, seats, places))
            del order
        group = _group_ordinals(ids, keys)
        size = spill.empty(len(ids), np.int8)
        for lo in range(0, len(ids), CHUNK):
            size[lo:lo + CHUNK] = (seats[lo:lo + CHUNK] >= 0).sum(axis=1)
        return cls(list(entrants), ids, group, size, seats, places)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], entrants: Sequence[str]) -> "GameArrays":
        """The played games of `records` (`played`) whose seats are all entrants."""
        index = {e: i for i, e in enumerate(entrants)}
        recs = [r for r in played(records) if all(s in index for s in r["seats"])]
        width = max((len(r["seats"]) for r in recs), default=2)
        seats = np.full((len(recs), width), -1, dtype=np.int32)
        places = np.zeros((len(recs), width), dtype=np.int16)
        codes: dict[Any, int] = {}
        keys = np.empty(len(recs), dtype=np.int64)
        for k, r in enumerate(recs):
            key = r.get("group")
            keys[k] = -1 - r["id"] if key is None and r["id"] >= 0 else codes.setdefault(
                ("game", r["id"]) if key is None else key, len(codes))
            seats[k, : len(r["seats"])] = [index[s] for s in r["seats"]]
            places[k, : len(r["places"])] = r["places"]
        return cls.build(entrants, [r["id"] for r in recs], keys, seats, places)

    def select(self, mask: Any) -> "GameArrays":
        """The games where `mask` (a boolean array over the games) holds."""
        m = np.asarray(mask, dtype=bool)
        return GameArrays.build(self.entrants, rows_where(self.ids, m), rows_where(self.group, m),
                                rows_where(self.seats, m), rows_where(self.places, m))

    def restrict(self, entrants: Sequence[str]) -> "GameArrays":
        """The games whose seats are all of `entrants`, as games of them (entrant indices
        into `entrants`): what `from_records(records, entrants)` gives of the same games.
        A chunk of games at a time."""
        names = list(entrants)
        where = {e: i for i, e in enumerate(self.entrants)}
        to = np.full(len(self.entrants) + 1, -1, dtype=np.int32)  # old index -> new (-1: not among them)
        for k, e in enumerate(names):
            if e in where:
                to[where[e]] = k
        keep = spill.empty(self.games, bool)
        new = spill.empty(self.seats.shape, np.int32)
        for lo in range(0, self.games, CHUNK):
            s = self.seats[lo:lo + CHUNK]
            inside = s >= 0
            n = np.where(inside, to[np.where(inside, s, len(self.entrants))], -1)
            keep[lo:lo + CHUNK] = ((n >= 0) | ~inside).all(axis=1)
            new[lo:lo + CHUNK] = n
        return GameArrays.build(names, rows_where(self.ids, keep), rows_where(self.group, keep),
                                rows_where(new, keep), rows_where(self.places, keep))

    def games_of(self) -> list[int]:
        """The games each entrant played."""
        s = self.seats[self.seats >= 0]
        return np.bincount(s, minlength=len(self.entrants)).tolist()


def _index_order(ids: np.ndarray) -> np.ndarray:
    """The positions of `ids` in ascending order, stable (`np.argsort(ids, kind="stable")`),
    made by `spill.empty`. Distinct indices from 0 (a run's games) are placed by index in a
    slot array, a chunk at a time, with no sort and no private array of a game's size;
    anything else is sorted."""
    n = len(ids)
    lo_id = min(int(ids[a:a + CHUNK].min()) for a in range(0, n, CHUNK))
    top = max(int(ids[a:a + CHUNK].max()) for a in range(0, n, CHUNK))
    if lo_id >= 0 and top < 4 * n + CHUNK:
        slot = spill.empty(top + 1, np.int64)
        slot -= 1  # −1: no game with this index
        for a in range(0, n, CHUNK):
            part = ids[a:a + CHUNK]
            if bool((slot[part] >= 0).any()) or len(np.unique(part)) < len(part):
                break  # an index twice: sorted below
            slot[part] = np.arange(a, a + len(part))
        else:
            order = spill.empty(n, np.int64)
            at = 0
            for a in range(0, top + 1, CHUNK):
                s = slot[a:a + CHUNK]
                s = s[s >= 0]
                order[at:at + len(s)] = s
                at += len(s)
            return order
    return _copied(np.argsort(ids, kind="stable"))


def _gathered(a: np.ndarray, order: np.ndarray) -> np.ndarray:
    """`a[order]`, made by `spill.empty` a chunk at a time."""
    out = spill.empty(a.shape, a.dtype)
    for lo in range(0, len(order), CHUNK):
        out[lo:lo + CHUNK] = a[order[lo:lo + CHUNK]]
    return out


def rows_where(a: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The rows of `a` where `mask` holds (`a[mask]`), made by `spill.empty` a chunk at a time."""
    if len(mask) != len(a):
        raise IndexError(f"a mask of {len(mask)} for {len(a)} rows")
    out = spill.empty((int(np.count_nonzero(mask)),) + a.shape[1:], a.dtype)
    at = 0
    for lo in range(0, len(a), CHUNK):
        part = a[lo:lo + CHUNK][mask[lo:lo + CHUNK]]
        out[at:at + len(part)] = part
        at += len(part)
    return out


def as_arrays(records: "Iterable[Mapping[str, Any]] | GameArrays", entrants: Sequence[str]) -> GameArrays:
    """`records` as `GameArrays` of `entrants` (already arrays: as they are)."""
    if isinstance(records, GameArrays):
        if list(records.entrants) != list(entrants):
            raise ValueError(f"games of entrants {records.entrants[:5]}… asked for as entrants {list(entrants)[:5]}…")
        return records
    return GameArrays.from_records(records, entrants)


def _group_ordinals(ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Each game's deal group numbered in the order of the groups' first games (`ids` in
    ascending order). A game whose key is −1 − its index is a group of its own: with plain
    deals that is every game, and no sort is needed."""
    n = len(ids)
    if not n:
        return np.zeros(0, dtype=np.int64)
    own = spill.empty(n, bool)
    for lo in range(0, n, CHUNK):  # a chunk at a time: no temporary of 8 bytes a game
        i = ids[lo:lo + CHUNK]
        own[lo:lo + CHUNK] = (keys[lo:lo + CHUNK] == -1 - i) & (i >= 0)
    if own.all():
        return spill.arange(n)
    if not own.any() and _never_down(keys):
        # keys that never go down (a schedule's deal groups, numbered as dealt): a group's
        # games are consecutive and groups come in the order of their keys, no sort needed
        group = spill.empty(n, np.int64)
        last = 0
        for lo in range(1, n, CHUNK):
            hi = min(n, lo + CHUNK)
            np.cumsum(keys[lo:hi] != keys[lo - 1:hi - 1], out=group[lo:hi])
            group[lo:hi] += last
            last = int(group[hi - 1])
        return group
    shared = np.flatnonzero(~own)
    kind, first = _ordinal_first(keys[shared])
    is_first = own
    is_first[shared[first]] = True
    number = np.cumsum(is_first, dtype=np.int64) - 1
    group = number  # a game of its own group: its own number
    group[shared] = number[shared[first]][kind]
    return group


def _changes(a: np.ndarray) -> np.ndarray:
    """The positions k ≥ 1 where a[k] != a[k − 1], found a chunk at a time."""
    parts = [np.zeros(0, dtype=np.int64)]
    for lo in range(1, len(a), 4 * CHUNK):
        hi = min(len(a), lo + 4 * CHUNK)
        parts.append(lo + np.flatnonzero(a[lo:hi] != a[lo - 1:hi - 1]))
    return np.concatenate(parts)


def _never_down(a: np.ndarray) -> bool:
    """Whether `a` never goes down, read a chunk at a time."""
    n = len(a)
    for lo in range(0, n - 1, CHUNK):
        hi = min(n - 1, lo + CHUNK)
        if not bool((a[lo + 1:hi + 1] >= a[lo:hi]).all()):
            return False
    return True


def _ordinal_first(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each key's number in the order keys first occur (0, 1, …), and where each number
    first occurs."""
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int64)
    rank[by_first] = np.arange(len(first))
    return rank[inv.ravel()], first[by_first]


def deal_groups(records: Iterable[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The records grouped by deal (``group``; a record without one is its own group), in
    the order of each group's first game."""
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for r in played(records):
        key = r.get("group")
        groups.setdefault(("game", r["id"]) if key is None else key, []).append(r)
    return list(groups.values())


def game_stages(seats: Sequence[int], places: Sequence[int]) -> list[Stage]:
    """The Plackett–Luce stages of one game (entrants as indices).

    Untied, a game a > b > c is two stages: a chosen from {a, b, c}, then b from {b, c}.
    A block of k tied entrants is averaged over its k! orders: the remaining members U of
    the block (any subset, with probability 1 / C(k, |U|)) and everyone placed below form
    a risk set, and each member of U is the one chosen with probability 1 / |U|. Stages of
    a single entrant say nothing and are left out.

    >>> game_stages([0, 1, 2], [2, 1, 3])
    [((1, 0, 2), 1.0, (1.0, 0.0, 0.0)), ((0, 2), 1.0, (1.0, 0.0))]
    >>> game_stages([0, 1], [1, 1])  # a shared place: half a win each
    [((0, 1), 1.0, (0.5, 0.5))]
    """
    order = sorted(range(len(seats)), key=lambda s: places[s])
    blocks: list[list[int]] = []
    for s in order:
        if blocks and places[blocks[-1][0]] == places[s]:
            blocks[-1].append(s)
        else:
            blocks.append([s])
    stages: list[Stage] = []
    for b, block in enumerate(blocks):
        below = [seats[s] for blk in blocks[b + 1:] for s in blk]
        members = [seats[s] for s in block]
        k = len(members)
        for m in range(k, 0, -1):
            w = 1.0 / math.comb(k, m)
            for u in combinations(members, m):
                risk = tuple(u) + tuple(below)
                if len(risk) < 2:
                    continue
                chosen = tuple([w / m] * m + [0.0] * len(below))
                stages.append((risk, w, chosen))
    return stages


def _merge(stages: Iterable[Stage], into: dict[tuple[int, ...], list[float]]) -> None:
    """Add stages to a table of risk sets (sorted members) → [weight, chosen of each]."""
    for risk, w, chosen in stages:
        pairs = sorted(zip(risk, chosen))
        key = tuple(p[0] for p in pairs)
        row = into.get(key)
        if row is None:
            row = into[key] = [0.0] * (len(key) + 1)
        row[0] += w
        for j, (_, c) in enumerate(pairs):
            row[j + 1] += c


def fit_pl(
    sets: Sequence[tuple[Sequence[int], float, Sequence[float]]], n: int, prior: float = PRIOR,
    start: Sequence[float] | None = None, tol: float = 1e-9, max_iter: int = 10000,
) -> list[float]:
    """Plackett–Luce strengths γ of `n` entrants by Hunter's MM iteration.

    `sets` are aggregated stages: (members, weight, chosen weight of each member). Each
    step sets γ_i = w_i / Σ_stages (weight · [i in risk set] / Σ_{k in risk set} γ_k), with
    the virtual games against the anchor (see the module doc) in both sums.
    """
    if not n:
        return []
    wins = [prior] * n
    for members, _, chosen in sets:
        for i, c in zip(members, chosen):
            wins[i] += c
    gamma = list(start) if start is not None else [1.0] * n
    for _ in range(max_iter):
        denom = [2.0 * prior / (g + 1.0) for g in gamma]
        for members, w, _ in sets:
            q = w / sum([gamma[i] for i in members])
            for i in members:
                denom[i] += q
        new = [wins[i] / denom[i] if denom[i] > 0 else 1.0 for i in range(n)]
        change = max(abs(math.log(a / b)) for a, b in zip(new, gamma))
        gamma = new
        if change < tol:
            break
    return gamma


def loglik(sets: Sequence[tuple[Sequence[int], float, Sequence[float]]], theta: Sequence[float],
           prior: float = PRIOR) -> float:
    """The log-likelihood of θ (= ln γ) for aggregated stages, virtual games included."""
    ll = 0.0
    for members, w, chosen in sets:
        m = max(theta[i] for i in members)
        lse = m + math.log(sum(math.exp(theta[i] - m) for i in members))
        ll += sum(c * theta[i] for i, c in zip(members, chosen)) - w * lse
    for t in theta:
        ll += prior * (t - 2.0 * _log1pexp(t))
    return ll


def _log1pexp(t: float) -> float:
    return t + math.log1p(math.exp(-t)) if t > 0 else math.log1p(math.exp(t))


def newton_pl(
    sets: Sequence[tuple[Sequence[int], float, Sequence[float]]], n: int, start: Sequence[float],
    prior: float = PRIOR, tol: float = 1e-2, max_iter: int = 50,
) -> list[float]:
    """The same maximum as `fit_pl`, found by Newton steps on θ = ln γ from `start` (a θ
    near the answer, e.g. the fit of all games): quadratic convergence makes the bootstrap
    refits cheap. It stops after a step shorter than `tol` (the error left is about its
    square: ~1e-4 for the default). A step longer than 1 is halved while it would lower
    the likelihood; the prior makes the likelihood strictly concave, so the maximum is
    unique."""
    theta = list(start)
    if not n:
        return theta
    wins = [prior] * n
    for members, _, chosen in sets:
        for i, c in zip(members, chosen):
            wins[i] += c
    exp = math.exp
    for _ in range(max_iter):
        grad = list(wins)
        hess = [[0.0] * n for _ in range(n)]  # minus the Hessian: positive definite
        for i, t in enumerate(theta):
            s = 1.0 / (1.0 + exp(-t))
            grad[i] -= 2.0 * prior * s
            hess[i][i] += 2.0 * prior * s * (1.0 - s)
        for members, w, _ in sets:
            if len(members) == 2:  # two at a table: the logistic case, written out
                i, j = members
                pi = 1.0 / (1.0 + exp(theta[j] - theta[i]))
                wp = w * pi
                h = wp * (1.0 - pi)
                grad[i] -= wp
                grad[j] -= w - wp
                hess[i][i] += h
                hess[j][j] += h
                hess[i][j] -= h
                hess[j][i] -= h
                continue
            m = max([theta[i] for i in members])
            e = [exp(theta[i] - m) for i in members]
            f = 1.0 / sum(e)
            q = [x * f for x in e]  # P(i chosen first from the set)
            for a, i in enumerate(members):
                pa = w * q[a]
                grad[i] -= pa
                row = hess[i]
                row[i] += pa
                for b, j in enumerate(members):
                    row[j] -= pa * q[b]
        step = _solve(hess, grad)
        big = max(abs(d) for d in step)
        if big > 1.0:
            ll, t = loglik(sets, theta, prior), 1.0
            while t > 1e-6:
                cand = [x + t * d for x, d in zip(theta, step)]
                if loglik(sets, cand, prior) >= ll:
                    break
                t /= 2
            theta = cand
        else:
            theta = [x + d for x, d in zip(theta, step)]
        if big < tol:
            break
    return theta


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """x with a·x = b for a symmetric positive definite `a` (small), by Gaussian
    elimination (no pivoting needed); `a` and `b` are overwritten."""
    n = len(b)
    for c in range(n):
        rc = a[c]
        d = rc[c]
        for r in range(c + 1, n):
            rr = a[r]
            f = rr[c] / d
            if f:
                for k in range(c + 1, n):
                    rr[k] -= f * rc[k]
                b[r] -= f * b[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        rr = a[r]
        x[r] = (b[r] - sum([rr[k] * x[k] for k in range(r + 1, n)])) / rr[r]
    return x


def _one_blas_thread() -> Any:
    """BLAS held to one thread: the refits solve many small systems, where OpenBLAS's
    threads cost more in handing work over (and in spinning, on a busy machine) than they
    save (21 s against 4.4 s for 100 entrants' bootstrap on 2 cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; without it BLAS keeps its threads
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


class _Refits:
    """`newton_pl` for the bootstrap's refits, on whole arrays: the risk sets, grouped by
    size, as index arrays into the flat vector a resample adds up (see `DealBootstrap`).
    The same Newton steps, stopping rule and step halving as `newton_pl`; the sums run in
    numpy, so a large field (thousands of risk sets) refits in milliseconds."""

    def __init__(self, sets_at: Sequence[tuple[tuple[int, ...], int]], n: int, prior: float) -> None:
        self.n = n
        self.prior = prior
        by_size: dict[int, list[tuple[tuple[int, ...], int]]] = {}
        for members, base in sets_at:
            by_size.setdefault(len(members), []).append((members, base))
        # Per size m: members (S×m), weight slots (S), chosen slots (S×m), and the flat
        # indices of the members and of their pairs in the n×n Hessian.
        self.sizes: list[tuple[np.ndarray, ...]] = []
        for m, items in sorted(by_size.items()):
            who = np.array([mem for mem, _ in items], dtype=np.intp)
            weight = np.array([b for _, b in items], dtype=np.intp)
            self.sizes.append((who, weight, weight[:, None] + 1 + np.arange(m),
                               who.ravel(), (who[:, :, None] * n + who[:, None, :]).ravel()))

    def fit(self, acc: np.ndarray, start: np.ndarray, tol: float = 1e-2, max_iter: int = 50) -> np.ndarray:
        """θ maximising the likelihood of the sets added up in `acc`, from `start`."""
        n, prior = self.n, self.prior
        data: list[tuple[np.ndarray, ...]] = [
            (who, acc[weight], acc[chosen], flat, pairs) for who, weight, chosen, flat, pairs in self.sizes]
        wins = np.full(n, prior)
        for _, _, chosen_w, flat, _ in data:
            wins += np.bincount(flat, weights=chosen_w.ravel(), minlength=n)
        diag = slice(None, None, n + 1)  # the diagonal of a flat n×n matrix

        def derivatives(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            s = 1.0 / (1.0 + np.exp(-theta))
            grad = wins - 2.0 * prior * s
            hess = np.zeros(n * n)  # minus the Hessian: positive definite
            hess[diag] += 2.0 * prior * s * (1.0 - s)
            for who, w, _, flat, pairs in data:
                x = theta[who]
                e = np.exp(x - x.max(axis=1, keepdims=True))
                q = e / e.sum(axis=1, keepdims=True)  # P(i chosen first from the set)
                pa = w[:, None] * q
                first = np.bincount(flat, weights=pa.ravel(), minlength=n)
                grad -= first
                hess[diag] += first
                hess -= np.bincount(pairs, weights=(pa[:, :, None] * q[:, None, :]).ravel(), minlength=n * n)
            return grad, hess.reshape(n, n)

        return _newton(np.array(start, dtype=float), derivatives, lambda th: _stage_loglik(data, th, prior), tol,
                       max_iter)


def _newton(theta: np.ndarray, derivatives: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
            loglik: Callable[[np.ndarray], float], tol: float, max_iter: int) -> np.ndarray:
    """`newton_pl`'s steps on arrays from `theta`: a step longer than 1 is halved until the
    likelihood does not fall; stop when the step is shorter than `tol`."""
    for _ in range(max_iter):
        grad, hess = derivatives(theta)
        step = np.linalg.solve(hess, grad)
        big = float(np.abs(step).max()) if len(step) else 0.0
        if big > 1.0:
            ll, t = loglik(theta), 1.0
            while t > 1e-6:
                cand = theta + t * step
                if loglik(cand) >= ll:
                    break
                t /= 2
            theta = cand
        else:
            theta = theta + step
        if big < tol:
            break
    return theta


def _stage_loglik(blocks: Iterable[tuple[np.ndarray, ...]], theta: np.ndarray, prior: float) -> float:
    """The log-likelihood at θ of stages given as blocks (members, weight, chosen weight of
    each member, …), the prior's virtual games included."""
    ll = float((prior * (theta - 2.0 * np.logaddexp(0.0, theta))).sum())
    for who, w, chosen, *_ in blocks:
        x = theta[who]
        top = x.max(axis=1)
        lse = top + np.log(np.exp(x - top[:, None]).sum(axis=1))
        ll += float((chosen * x).sum() - (w * lse).sum())
    return ll


class DealBootstrap:
    """The games of `entrants` prepared for fitting and resampling by deal group.

    Everything a resample adds up lives in one flat vector: per risk set its weight and the
    chosen weight of each member, then per entrant its sum of places and its games. A group
    is a list of (slot, value); groups with the same list are one type, so a resample only
    counts how often it drew each type. `counted`: `_kind_counts` of the games, where
    already worked out.
    """

    method = "bootstrap"

    def __init__(self, records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str],
                 prior: float = PRIOR, counted: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.entrants = list(entrants)
        self.prior = prior
        n = self.n = len(self.entrants)
        arr = as_arrays(records, self.entrants)
        self.groups = arr.groups
        self.games = arr.games
        base: dict[tuple[int, ...], int] = {}
        size = 0
        # Games of the same kind (seats and places) recur: each kind's part of a group's row
        # is worked out once, kinds numbered in the order they first occur.
        plain = arr.groups == arr.games  # every group one game: a type is a kind, only their counts matter
        if plain:
            counted = counted if counted is not None else _kind_counts(arr)  # the kinds, if not counted already
            assert counted is not None  # no limit was given
            first, kind_count = counted
            kind = np.zeros(0, dtype=np.int64)  # not needed: no game's kind is looked up
        else:
            kind, first = _game_kinds(arr)
        del counted
        part: list[list[tuple[int, float]]] = []
        for k in first.tolist():
            key = arr.seats[k, : arr.size[k]].tolist(), arr.places[k, : arr.size[k]].tolist()
            table: dict[tuple[int, ...], list[float]] = {}
            _merge(game_stages(*key), table)
            items: list[tuple[int, float]] = []
            for risk, row in table.items():
                if risk not in base:
                    base[risk] = size
                    size += len(row)
                items += [(base[risk] + j, x) for j, x in enumerate(row)]
            for i, p in zip(*key):  # places: negative slots until the sets are numbered
                items += [(-2 * i - 1, float(p)), (-2 * i - 2, 1.0)]
            part.append(items)
        types: dict[tuple[tuple[int, float], ...], int] = {}  # a group's row (slot, value) → its type
        if plain:  # plain deals: every group one game, in game order
            kind_type = np.array([types.setdefault(tuple(sorted(p)), len(types)) for p in part], dtype=np.intp)
            group_type = None
            type_count = np.zeros(len(types), dtype=np.int64)
            np.add.at(type_count, kind_type, kind_count)
            del kind_type, kind_count
        else:
            order = np.argsort(arr.group, kind="stable")  # by group, each group's games in index order
            bounds = np.flatnonzero(np.r_[True, arr.group[order][1:] != arr.group[order][:-1], True])
            lone = np.diff(bounds) == 1
            group_type = np.empty(len(bounds) - 1, dtype=np.intp)
            # Groups of one game: the type of their game's kind.
            lone_kind = kind[order[bounds[:-1][lone]]]
            kind_type = np.full(len(part), -1, dtype=np.intp)
            for k in np.unique(lone_kind).tolist():
                kind_type[k] = types.setdefault(tuple(sorted(part[k])), len(types))
            group_type[lone] = kind_type[lone_kind]
            del lone_kind, kind_type
            for g in np.flatnonzero(~lone).tolist():  # the rest, a group at a time
                flat: dict[int, float] = defaultdict(float)
                for k in kind[order[bounds[g]:bounds[g + 1]]].tolist():
                    for slot, x in part[k]:
                        flat[slot] += x
                group_type[g] = types.setdefault(tuple(sorted(flat.items())), len(types))
            del order, bounds
        del part, kind
        self._place_slot = place_slot = size
        self._size = size + 2 * n
        self._type_rows: list[tuple[tuple[int, float], ...]] = [
            tuple((k if k >= 0 else place_slot - k - 1, v) for k, v in sig) for sig in types]
        del types
        self._sets_at = list(base.items())
        # The type rows as flat arrays, for adding up a resample in numpy.
        self._row_type = np.array([t for t, row in enumerate(self._type_rows) for _ in row], dtype=np.intp)
        self._row_slot = np.array([slot for row in self._type_rows for slot, _ in row], dtype=np.intp)
        self._row_value = np.array([v for row in self._type_rows for _, v in row], dtype=float)
        self._refits = _Refits(self._sets_at, n, prior)
        if group_type is not None:
            type_count = np.bincount(group_type, minlength=len(self._type_rows))
        self._type_count = type_count
        del group_type, type_count
        full = self._total(dict(enumerate(self._type_count.tolist())))
        # Newton steps from θ = 0 on arrays (the likelihood is strictly concave, so they find
        # the one maximum `fit_pl` climbs to; tests/test_stats.py checks they agree).
        with _one_blas_thread():
            self.theta = self._refits.fit(np.array(full), np.zeros(n), tol=1e-9).tolist()
        self.mean_place = self._places(full[place_slot:])
        self.entrant_games = [int(full[place_slot + 2 * i + 1]) for i in range(n)]

    def _total(self, counts: Mapping[int, int]) -> list[float]:
        acc = [0.0] * self._size
        rows = self._type_rows
        for t, c in counts.items():
            for slot, v in rows[t]:
                acc[slot] += c * v
        return acc

    def _sets(self, acc: Sequence[float]) -> list[tuple[tuple[int, ...], float, Sequence[float]]]:
        return [(m, acc[b], acc[b + 1:b + 1 + len(m)]) for m, b in self._sets_at if acc[b] > 0]

    def _places(self, tail: Sequence[float]) -> list[float | None]:
        """Mean places from the end of a flat vector (from `_place_slot` on)."""
        return [tail[2 * i] / tail[2 * i + 1] if tail[2 * i + 1] else None for i in range(self.n)]

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """How many times one resample draws each type of deal group: G groups drawn
        uniformly with replacement, counted by type, is a multinomial draw of G with each
        type's share of the groups as its probability (one draw per type, not per group,
        so a resample costs the same at a thousand games as at a million)."""
        return rng.multinomial(self.groups, self._type_count / self.groups)

    def resamples(self, count: int, seed: int) -> Iterator[tuple[list[float], list[float | None]]]:
        """`count` bootstrap resamples: (θ of each entrant, mean place of each entrant or
        None), drawn from `numpy.random.default_rng(seed)` (none when there are no games)."""
        if not self.groups:
            return
        rng = np.random.default_rng(seed)
        start = np.array(self.theta)
        ps = self._place_slot
        with _one_blas_thread():
            for _ in range(count):
                drawn = self.draw(rng)
                acc = np.bincount(self._row_slot, weights=self._row_value * drawn[self._row_type],
                                  minlength=self._size)
                yield self._refits.fit(acc, start).tolist(), self._places(acc[ps:].tolist())


EXACT_LIMIT = 250_000
"""Kinds of game (distinct seats and places) times the widest table squared, beyond which
the bootstrap's distribution is taken in its normal approximation (`NormalBootstrap`):
the exact resampling costs time and memory per kind, and with tables of 3 or more and a
large field nearly every game is a kind of its own."""


EXACT_GROUPS = 100_000
"""Deal groups of more than one game beyond which the bootstrap is taken in its normal
approximation too: the exact one works out each such group's row one at a time."""


def _ranked(arr: GameArrays, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Games `lo`…`hi` − 1 of `arr` with their seats in order of place: the entrants, the
    seats, and for each position in that order whether it shares its place with the next."""
    last = np.iinfo(np.int32).max
    key = np.where(arr.seats[lo:hi] >= 0, arr.places[lo:hi].astype(np.int32), last)
    order = np.argsort(key, axis=1, kind="stable")
    ranked = np.take_along_axis(arr.seats[lo:hi], order, axis=1).astype(np.int64)
    key = np.take_along_axis(key, order, axis=1)
    return ranked, order, (key[:, 1:] == key[:, :-1]) & (key[:, 1:] != last)


Block = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Stages of games with risk sets of one size m: members (R×m), weight (R), chosen weight
of each member (R×m), the game each stage is of (R, an index into the games) and each
member's seat at it (R×m)."""


def _game_blocks(arr: GameArrays, lo: int, hi: int) -> Iterator[Block]:
    """The Plackett–Luce stages (`game_stages`) of the games `lo`…`hi` − 1 of `arr`, as
    `Block`s. A game's stages depend only on its table size and which neighbours in place
    order share a place (its pattern): untied games take their stages straight from the
    place order; each pattern with shared places has its stages worked out once, as
    positions in place order, and taken for all its games at once, a slice of those games
    at a time (such a game has up to 57 stages: six seats, all tied)."""
    ranked, order, same = _ranked(arr, lo, hi)
    tied = same.any(axis=1)
    size = arr.size[lo:hi]
    for t in np.unique(size).tolist():
        rows = np.flatnonzero((size == t) & ~tied)
        if not len(rows):
            continue
        for r in range(t - 1):
            chosen = np.zeros((len(rows), t - r))
            chosen[:, 0] = 1.0
            yield ranked[rows, r:t], np.ones(len(rows)), chosen, rows + lo, order[rows, r:t]
    step, all_tied = max(1, CHUNK // 16), np.flatnonzero(tied)
    for a in range(0, len(all_tied), step):
        rows = all_tied[a:a + step]
        code = size[rows].astype(np.int64)
        for c in range(same.shape[1]):  # the pattern as one number: the size, then a bit per neighbour pair
            code = code * 2 + same[rows, c]
        for pat in np.unique(code).tolist():
            these = rows[code == pat]
            flags, t = [], pat
            for _ in range(same.shape[1]):
                flags.append(bool(t & 1))
                t >>= 1
            for positions, w, share in _pattern_stages(t, tuple(reversed(flags))):
                at = list(positions)
                yield (ranked[these][:, at], np.full(len(these), w), np.tile(np.array(share), (len(these), 1)),
                       these + lo, order[these][:, at])


@lru_cache(maxsize=4096)
def _pattern_stages(size: int, same: tuple[bool, ...]) -> tuple[tuple[tuple[int, ...], float, tuple[float, ...]], ...]:
    """`game_stages` of a game of `size` seats in place order (position k is the k-th
    placed), where `same[k]` says positions k and k + 1 share a place: the stages as
    positions, weight and chosen weights."""
    places, p = [1], 1
    for k in range(size - 1):
        p += 0 if same[k] else 1
        places.append(p)
    return tuple((risk, w, chosen) for risk, w, chosen in game_stages(list(range(size)), places))


def _group_chunks(arr: GameArrays) -> Iterator[GameArrays]:
    """The games of `arr` in chunks of whole deal groups (about `CHUNK` games each; a
    group is never split), each as `GameArrays` of its own (groups numbered within it)."""
    if arr.groups_in_order():  # a group's games consecutive (a schedule's, plain deals too): slices
        group, lo = arr.group, 0
        while lo < arr.games:
            hi = min(lo + CHUNK, arr.games)
            if hi < arr.games:  # back to the start of the group the chunk would cut; past it if that is lo
                cut = int(np.searchsorted(group, group[hi], side="left"))
                hi = cut if cut > lo else int(np.searchsorted(group, group[hi], side="right"))
            g = group[lo:hi]
            yield GameArrays(arr.entrants, arr.ids[lo:hi], g - g[0], arr.size[lo:hi], arr.seats[lo:hi],
                             arr.places[lo:hi])
            lo = hi
        return
    order = np.argsort(arr.group, kind="stable")
    ends = np.flatnonzero(np.r_[arr.group[order][1:] != arr.group[order][:-1], True]) + 1
    lo = 0
    while lo < arr.games:
        hi = int(ends[min(int(np.searchsorted(ends, lo + CHUNK)), len(ends) - 1)])
        take = order[lo:hi]
        g = arr.group[take]
        yield GameArrays(arr.entrants, arr.ids[take], g - g.min(), arr.size[take], arr.seats[take], arr.places[take])
        lo = hi


class _StageFit:
    """The Plackett–Luce fit over every game's stages on arrays (`newton_pl`'s steps,
    stopping rule and step halving, its prior), a chunk of games at a time: for games of
    too many kinds to add up per risk set."""

    def __init__(self, arr: GameArrays, n: int, prior: float) -> None:
        self.arr, self.n, self.prior = arr, n, prior

    def fit(self) -> np.ndarray:
        """θ maximising the likelihood, by Newton steps from θ = 0."""
        return _newton(np.zeros(self.n), self.derivatives, self.loglik, 1e-9, 100)

    def blocks(self) -> Iterator[Block]:
        """Every game's stages, a chunk of games at a time."""
        for lo in range(0, self.arr.games, CHUNK):
            yield from _game_blocks(self.arr, lo, min(lo + CHUNK, self.arr.games))

    def derivatives(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The gradient of the log-likelihood and minus its Hessian (n×n) at θ."""
        n, prior = self.n, self.prior
        s = 1.0 / (1.0 + np.exp(-theta))
        grad = np.full(n, prior) - 2.0 * prior * s
        hess = np.zeros(n * n)
        hess[:: n + 1] += 2.0 * prior * s * (1.0 - s)
        for who, w, chosen, _, _ in self.blocks():
            x = theta[who]
            e = np.exp(x - x.max(axis=1, keepdims=True))
            q = e / e.sum(axis=1, keepdims=True)
            pa = w[:, None] * q
            grad += np.bincount(who.ravel(), weights=(chosen - pa).ravel(), minlength=n)
            hess[:: n + 1] += np.bincount(who.ravel(), weights=pa.ravel(), minlength=n)
            pairs = (who[:, :, None] * n + who[:, None, :]).ravel()
            hess -= np.bincount(pairs, weights=(pa[:, :, None] * q[:, None, :]).ravel(), minlength=n * n)
        return grad, hess.reshape(n, n)

    def loglik(self, theta: np.ndarray) -> float:
        """The log-likelihood at θ, the prior's virtual games included."""
        return _stage_loglik(self.blocks(), theta, self.prior)


def _entrant_places(arr: GameArrays, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each entrant's games and the sum of its places, a chunk of games at a time."""
    games, sums = np.zeros(n, dtype=np.int64), np.zeros(n)
    for lo in range(0, arr.games, CHUNK):
        seats, places = arr.seats[lo:lo + CHUNK], arr.places[lo:lo + CHUNK]
        taken = seats >= 0
        games += np.bincount(seats[taken], minlength=n)
        sums += np.bincount(seats[taken], weights=places[taken], minlength=n)
    return games, sums


class NormalBootstrap:
    """The deal-group bootstrap of `DealBootstrap` in its normal approximation, for games
    too many and too varied to resample exactly: the fit is the same (every game's stages,
    the same prior), and a resample's θ is drawn from the normal distribution the
    resampling converges to, θ̂ + N(0, H⁻¹ M H⁻¹), where H is minus the Hessian of the
    log-likelihood at θ̂ and M the covariance of the deal groups' score vectors (the
    cluster-robust "sandwich"); an entrant's mean place likewise, with the variance of its
    groups' place sums about its mean. Time and memory grow with the games, a chunk at a
    time, not with the kinds of game."""

    method = "normal"

    def __init__(self, arr: GameArrays, entrants: Sequence[str], prior: float = PRIOR) -> None:
        self.entrants = list(entrants)
        self.prior = prior
        n = self.n = len(self.entrants)
        self.groups, self.games = arr.groups, arr.games
        stages = _StageFit(arr, n, prior)
        games, sums = _entrant_places(arr, n)
        self.entrant_games = games.tolist()
        self.mean_place = [float(sums[i] / games[i]) if games[i] else None for i in range(n)]
        with _one_blas_thread():
            theta = stages.fit()
            self.theta = theta.tolist()
            _, hess = stages.derivatives(theta)
            meat, place_ss = self._group_spread(arr, theta, np.where(games > 0, sums / np.maximum(games, 1), 0.0))
            inv = np.linalg.inv(hess)
            cov = inv @ meat @ inv
        vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
        # Scores of a game add up to nothing, so M, and with it the covariance, has a null
        # direction: its eigenvalue is rounding noise (±1e-15), taken as 0, so the draws do
        # not depend on the order of the sums.
        vals[vals < 1e-12 * max(float(vals.max(initial=0.0)), 1e-300)] = 0.0
        # The symmetric square root V √Λ Vᵀ: it does not depend on the signs (or, for equal
        # eigenvalues, the basis) eigh picks for the eigenvectors, which rounding in the sums
        # can flip; with V √Λ alone such a flip would change every draw of the same seed.
        self._root = (vecs * np.sqrt(vals)) @ vecs.T
        self._place_sd = np.sqrt(place_ss / np.maximum(games, 1) ** 2)

    def _group_spread(self, arr: GameArrays, theta: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """M, the covariance of the deal groups' score vectors at θ (as a resample of
        groups spreads their sum), and per entrant the sum over groups of the squared
        deviation of its place sum there from its games there times `mean` (its mean
        place); whole groups a chunk at a time."""
        n = self.n
        meat, total, place_ss = np.zeros(n * n), np.zeros(n), np.zeros(n)
        for sub in _group_chunks(arr):
            width = sub.seats.shape[1]
            score = np.zeros((sub.games, width))  # per game and seat: its part of the score
            for who, w, chosen, game, seat in _game_blocks(sub, 0, sub.games):
                x = theta[who]
                e = np.exp(x - x.max(axis=1, keepdims=True))
                np.add.at(score, (game[:, None], seat), chosen - w[:, None] * e / e.sum(axis=1, keepdims=True))
            valid = sub.seats >= 0
            ent = np.where(valid, sub.seats, -1).astype(np.int64)
            dev = np.where(valid, sub.places - mean[np.maximum(ent, 0)], 0.0)
            if sub.groups < sub.games:  # add up each group's games, entrant by entrant
                at = np.flatnonzero(valid.ravel())
                u, inv = np.unique(sub.group[at // width] * n + ent.ravel()[at], return_inverse=True)
                sc = np.bincount(inv.ravel(), weights=score.ravel()[at])
                dv = np.bincount(inv.ravel(), weights=dev.ravel()[at])
                grp, who_ = np.divmod(u, n)
                starts = np.flatnonzero(np.r_[True, grp[1:] != grp[:-1]])
                count = np.diff(np.r_[starts, len(grp)])
                row, pos = np.repeat(np.arange(len(starts)), count), np.arange(len(grp)) - np.repeat(starts, count)
                score, dev = np.zeros((len(starts), int(count.max()))), np.zeros((len(starts), int(count.max())))
                ent = np.full((len(starts), int(count.max())), -1, dtype=np.int64)
                score[row, pos], dev[row, pos], ent[row, pos] = sc, dv, who_
            for a in range(ent.shape[1]):
                ok = ent[:, a] >= 0
                total += np.bincount(ent[ok, a], weights=score[ok, a], minlength=n)
                place_ss += np.bincount(ent[ok, a], weights=dev[ok, a] ** 2, minlength=n)
                for b in range(ent.shape[1]):
                    both = ok & (ent[:, b] >= 0)
                    meat += np.bincount(ent[both, a] * n + ent[both, b], weights=score[both, a] * score[both, b],
                                        minlength=n * n)
        meat = meat.reshape(n, n) - np.outer(total, total) / max(arr.groups, 1)
        return meat, place_ss

    def resamples(self, count: int, seed: int) -> Iterator[tuple[list[float], list[float | None]]]:
        """`count` draws of (θ of each entrant, mean place of each entrant or None) from
        the normal approximation, from `numpy.random.default_rng(seed)`."""
        if not self.groups:
            return
        rng = np.random.default_rng(seed)
        theta = np.array(self.theta)
        mean = np.array([m if m is not None else 0.0 for m in self.mean_place])
        for _ in range(count):
            th = theta + self._root @ rng.standard_normal(self.n)
            pl = mean + self._place_sd * rng.standard_normal(self.n)
            yield th.tolist(), [float(p) if m is not None else None for p, m in zip(pl, self.mean_place)]


def bootstrap_of(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str],
                 prior: float = PRIOR) -> "DealBootstrap | NormalBootstrap":
    """The deal-group bootstrap of the games: resampled exactly (`DealBootstrap`) up to
    `EXACT_LIMIT` and `EXACT_GROUPS`, beyond them in its normal approximation
    (`NormalBootstrap`)."""
    arr = as_arrays(records, entrants)
    shared = int((np.bincount(arr.group) > 1).sum()) if arr.groups < arr.games else 0  # groups of more than one game
    counted = None if shared > EXACT_GROUPS else _kind_counts(arr, EXACT_LIMIT // arr.seats.shape[1] ** 2)
    if counted is None:
        return NormalBootstrap(arr, entrants, prior)
    return DealBootstrap(arr, entrants, prior, counted)


@dataclass
class Analysis:
    """What `analyse` finds. θ, intervals and shares are per entrant / per pair of names."""

    entrants: list[str]
    games: int
    groups: int
    resamples: int
    confidence: float
    seed: int
    theta: dict[str, float]
    ci: dict[str, tuple[float, float] | None]
    place_ci: dict[str, tuple[float, float] | None]
    mean_place: dict[str, float | None]
    entrant_games: dict[str, int]
    samples: list[list[float]] = field(repr=False, default_factory=list)
    method: str = "bootstrap"  # how the resamples were drawn: "bootstrap", or "normal" (its approximation)

    def above_share(self, a: str, b: str) -> float:
        """The share of resamples in which `a` rates above `b` (equal θ counts half)."""
        if not self.samples:
            return 0.5
        i, j = self.entrants.index(a), self.entrants.index(b)
        return sum(_above(th[i], th[j]) for th in self.samples) / len(self.samples)

    def diff_se(self, a: str, b: str) -> float:
        """The bootstrap standard error of θa − θb."""
        i, j = self.entrants.index(a), self.entrants.index(b)
        d = [th[i] - th[j] for th in self.samples]
        if len(d) < 2:
            return float("inf")
        m = sum(d) / len(d)
        return math.sqrt(sum((x - m) ** 2 for x in d) / (len(d) - 1))

    def order(self, among: Iterable[str] | None = None) -> list[str]:
        """Entrants with games, strongest first by θ (then by name)."""
        return rank_order(self.theta, self.entrant_games, among)


def _above(a: float, b: float) -> float:
    return 1.0 if a > b else 0.5 if a == b else 0.0


TIE_DIGITS = 9
"""θ are compared to this many decimals when ordering: entrants with the same games (equal
θ in exact arithmetic) are ordered by name, not by the last bits of the fit."""


def rank_order(theta: Mapping[str, float], games: Mapping[str, int], among: Iterable[str] | None = None) -> list[str]:
    """Entrants with games, strongest first by θ (then by name)."""
    names = [e for e in (among if among is not None else theta) if games.get(e)]
    return sorted(names, key=lambda e: (-round(theta[e], TIE_DIGITS), e))


def analyse(
    records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str], resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE, seed: int = 0, prior: float = PRIOR,
) -> Analysis:
    """Fit θ on all games and bootstrap it (and mean place) over deal groups."""
    data = bootstrap_of(records, entrants, prior)
    names = data.entrants
    samples: list[list[float]] = []
    place_samples: list[list[float | None]] = []
    for th, pl in data.resamples(resamples, seed):
        samples.append(th)
        place_samples.append(pl)
    lo_q, hi_q = (1 - confidence) / 2, (1 + confidence) / 2
    ci: dict[str, tuple[float, float] | None] = {}
    pci: dict[str, tuple[float, float] | None] = {}
    for i, e in enumerate(names):
        if not data.entrant_games[i] or not samples:
            ci[e] = pci[e] = None
            continue
        ci[e] = (_quantile([s[i] for s in samples], lo_q), _quantile([s[i] for s in samples], hi_q))
        ps = [p[i] for p in place_samples if p[i] is not None]
        pci[e] = (_quantile(ps, lo_q), _quantile(ps, hi_q)) if ps else None  # type: ignore[arg-type]
    return Analysis(
        entrants=names, games=data.games, groups=data.groups, resamples=len(samples),
        confidence=confidence, seed=seed, theta=dict(zip(names, data.theta)), ci=ci, place_ci=pci,
        mean_place=dict(zip(names, data.mean_place)), entrant_games=dict(zip(names, data.entrant_games)),
        samples=samples, method=data.method,
    )


def pl_theta(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str],
             prior: float = PRIOR) -> tuple[dict[str, float], dict[str, int]]:
    """θ of every entrant (the same fit as `DealBootstrap.theta`, without the bootstrap's
    tables: Newton steps from θ = 0, the likelihood being strictly concave) and its games."""
    names = list(entrants)
    arr = as_arrays(records, names)
    table: dict[tuple[int, ...], list[float]] = {}
    counted = _kind_counts(arr, EXACT_LIMIT // arr.seats.shape[1] ** 2)
    if counted is None:  # too many kinds to add up per risk set
        with _one_blas_thread():
            return dict(zip(names, _StageFit(arr, len(names), prior).fit().tolist())), dict(zip(names, arr.games_of()))
    first, counts = counted[0], counted[1].tolist()
    del counted
    for k, c in zip(first.tolist(), counts):  # each kind of game once, times how often it was played
        w = int(arr.size[k])
        for key, add in _merged(tuple(arr.seats[k, :w].tolist()), tuple(arr.places[k, :w].tolist())):
            row = table.get(key)
            if row is None:
                row = table[key] = [0.0] * len(add)
            for j, x in enumerate(add):
                row[j] += c * x
    theta = _fit_table(table, len(names), prior)
    return dict(zip(names, theta)), dict(zip(names, arr.games_of()))


def _fit_table(table: Mapping[tuple[int, ...], Sequence[float]], n: int, prior: float) -> list[float]:
    """θ maximising the likelihood of a `_merge` table (risk set → [weight, chosen of each]):
    `newton_pl`'s steps from θ = 0, on arrays."""
    sets_at: list[tuple[tuple[int, ...], int]] = []
    flat: list[float] = []
    size = 0
    for key, row in table.items():
        sets_at.append((key, size))
        flat.extend(row)
        size += len(row)
    with _one_blas_thread():
        return _Refits(sets_at, n, prior).fit(np.array(flat, dtype=float), np.zeros(n), tol=1e-9).tolist()


@lru_cache(maxsize=65536)
def _merged(seats: tuple[int, ...], places: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], tuple[float, ...]], ...]:
    """The stages of one game as rows of a `_merge` table (the same games recur: cached)."""
    table: dict[tuple[int, ...], list[float]] = {}
    _merge(game_stages(seats, places), table)
    return tuple((k, tuple(v)) for k, v in table.items())


@dataclass
class SettledCheck:
    """The answer of `check_settled`."""

    settled: bool
    order: list[str]
    pairs: list[tuple[str, str]]
    tests: list[dict[str, Any]] = field(default_factory=list)


def check_settled(
    records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str], top: int | None = None,
    confidence: float = CONFIDENCE, prior: float = PRIOR, among: Sequence[str] | None = None,
) -> SettledCheck:
    """Whether the order by θ is settled at `confidence` for early stopping: every adjacent
    pair among the first `top` + 1 entrants (all of them when `top` is None) is settled by
    the anytime-valid test of `neighbour_tests` (sequential), Holm-corrected over every pair
    of the entrants in the order. Its error rate holds however often it is asked. `among`
    limits the order to some entrants (e.g. those not disqualified); all games are fitted
    either way."""
    arr = as_arrays(records, entrants)
    theta, games = pl_theta(arr, entrants, prior)
    order = rank_order(theta, games, among)
    k = len(order) - 1 if top is None else min(top, len(order) - 1)
    pairs = list(zip(order[:k], order[1:k + 1]))
    if not pairs:
        return SettledCheck(False, order, pairs)
    tests = neighbour_tests(paired_deals(arr, entrants), order[:k + 1], confidence, sequential=True, among=order,
                            intervals=False)
    return SettledCheck(all(t["settled"] for t in tests), order, pairs, tests)


CHUNK = 1 << 16
"""Games taken at a time where a sum over games is worked out in chunks."""

SPARSE_ABOVE = 20
"""With more entrants than this, per-pair tables list only the pairs that met."""


def met_matrix(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str]) -> np.ndarray:
    """n×n (symmetric): how many games each pair of entrants played at the same table."""
    arr = as_arrays(records, entrants)
    n = len(entrants)
    out = np.zeros(n * n, dtype=np.int64)
    for at in range(0, arr.games, CHUNK):  # a chunk of games at a time: bounded working memory
        seats = arr.seats[at:at + CHUNK]
        for i, j in combinations(range(seats.shape[1]), 2):
            a, b = seats[:, i].astype(np.int64), seats[:, j].astype(np.int64)
            ok = (a >= 0) & (b >= 0) & (a != b)
            out += np.bincount(a[ok] * n + b[ok], minlength=n * n)
    m = out.reshape(n, n)
    return m + m.T


def pairs_met(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str],
              sparse: bool = False) -> dict[str, dict[str, int]]:
    """How many games each pair of entrants played at the same table: every pair, or with
    `sparse` only the pairs that met (≥ 1 game)."""
    names = list(entrants)
    m = met_matrix(records, names).tolist()
    return {a: {b: m[i][j] for j, b in enumerate(names) if j != i and (m[i][j] or not sparse)}
            for i, a in enumerate(names)}


def luck_share(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str]) -> dict[str, Any]:
    """The share of the variance of place that a duplicate deal cancels.

    For an entrant, its games are taken table by table (a table = the same set of
    entrants, so the same opponents) and deal group by deal group, using the groups that
    hold its usual number k ≥ 2 of games. V_game is the variance of its place in one game
    around its mean at that table; V_deal the variance of its group-averaged place around
    the same mean (both pooled over tables, each with its own degrees of freedom). If the
    k games of a deal were independent, V_deal would be V_game / k; a shared deal makes the
    good and the bad hand take turns, so the group average varies less. The luck share is
    1 − k · V_deal / V_game: the part of the per-game variance that cancels within a deal
    (0 = none, 1 = all; below 0 when the games of a deal go the same way). 1 / (1 − share)
    is how many plain-deal games one duplicate game is worth for the precision of a mean
    place. With plain deals (k = 1) nothing is replayed and the share is None.
    """
    names = list(entrants)
    arr = as_arrays(records, names)
    per: dict[str, Any] = {e: None for e in names}
    if arr.groups == arr.games:  # no deal was replayed (plain deals): k = 1 for everyone
        return {"share": None, "efficiency": None, "by_entrant": per}
    n = len(names)
    width = arr.seats.shape[1]
    k_of = np.zeros(n, dtype=np.int64)
    e_ss_game, e_ss_deal = np.zeros(n), np.zeros(n)
    e_df_game, e_df_deal, e_tables = (np.zeros(n, dtype=np.int64) for _ in range(3))
    for ent, at in _seats_by_entrant(arr, n):  # an entrant at a time: working memory of its games only
        k_of[ent], e_ss_game[ent], e_ss_deal[ent], e_df_game[ent], e_df_deal[ent], e_tables[ent] = \
            _luck_of(arr, at // width, at % width)
    num = den = 0.0
    for i, name in enumerate(names):
        k = int(k_of[i])
        if k < 2 or not e_df_deal[i] or not e_ss_game[i]:
            continue
        v_game, v_deal = e_ss_game[i] / e_df_game[i], e_ss_deal[i] / e_df_deal[i]
        share = 1 - k * v_deal / v_game
        per[name] = {"k": k, "games": int(e_df_game[i] + e_tables[i]), "v_game": round(float(v_game), 5),
                     "v_deal": round(float(v_deal), 5), "share": round(float(share), 4)}
        num += e_df_game[i] * k * v_deal
        den += e_df_game[i] * v_game
    total = None if not den else float(1 - num / den)
    return {
        "share": None if total is None else round(total, 4),
        "efficiency": None if total is None or total >= 1 else round(1 / (1 - total), 3),
        "by_entrant": per,
    }


def _seats_by_entrant(arr: GameArrays, n: int) -> Iterator[tuple[int, np.ndarray]]:
    """(entrant, the positions of its seats in `arr.seats` flattened, in game order) for
    every entrant with games. Entrants are taken in blocks holding about `4 · CHUNK` seats,
    each block found by one pass over the seats a chunk at a time: working memory of a
    block's seats, not of every game's."""
    flat = arr.seats.reshape(-1)
    per = np.zeros(n, dtype=np.int64)
    for lo in range(0, len(flat), 4 * CHUNK):
        s = flat[lo:lo + 4 * CHUNK]
        per += np.bincount(s[s >= 0], minlength=n)
    a = 0
    while a < n:
        b, held = a, 0
        while b < n and (b == a or held + per[b] <= 4 * CHUNK):
            held += int(per[b])
            b += 1
        parts = []
        for lo in range(0, len(flat), 4 * CHUNK):
            s = flat[lo:lo + 4 * CHUNK]
            hit = np.flatnonzero((s >= a) & (s < b))
            parts.append(np.stack([s[hit].astype(np.int64), hit + lo]))
        both = np.concatenate(parts, axis=1)
        del parts
        both = both[:, np.argsort(both[0], kind="stable")]
        ends = np.searchsorted(both[0], np.arange(a, b + 1), side="left")
        for ent in range(a, b):
            if ends[ent - a + 1] > ends[ent - a]:
                yield ent, both[1, ends[ent - a]:ends[ent - a + 1]]
        a = b


def _luck_of(arr: GameArrays, gi: np.ndarray, si: np.ndarray) -> tuple[int, float, float, int, int, int]:
    """`luck_share`'s sums for one entrant, from its seats (games `gi`, seats `si`, in game
    order): its usual group size k, the sums of squares per game and per deal, their
    degrees of freedom, and its number of tables."""
    p = arr.places[gi, si].astype(float)
    big = np.iinfo(np.int32).max
    seats = arr.seats[gi]
    table = np.unique(np.sort(np.where(seats >= 0, seats, big), axis=1), axis=0, return_inverse=True)[1].ravel()
    del seats
    # cells: tables (the same opponents); groups: (table, deal group); numbered in order of first row
    cell = _ordinal(table)
    grp = _ordinal(cell * (arr.groups + 1) + arr.group[gi])
    n_grp, n_cell = int(grp.max()) + 1, int(cell.max()) + 1
    g_first = np.full(n_grp, len(grp))
    np.minimum.at(g_first, grp, np.arange(len(grp)))
    g_size = np.bincount(grp)
    g_cell = cell[g_first]
    # k: the most usual group size (ties: the size met first, by table then group)
    c_first = np.full(n_cell, len(cell))
    np.minimum.at(c_first, cell, np.arange(len(cell)))
    k = Counter(g_size[np.lexsort((g_first, c_first[g_cell]))].tolist()).most_common(1)[0][0]
    full_g = g_size == k
    n_full = np.bincount(g_cell[full_g], minlength=n_cell)
    use = full_g[grp] & (n_full[cell] >= 2)  # rows in the full groups of cells with 2 or more of them
    cnt = np.bincount(cell[use], minlength=n_cell)
    mean = np.bincount(cell[use], weights=p[use], minlength=n_cell) / np.maximum(cnt, 1)
    ss_game = np.bincount(cell[use], weights=(p[use] - mean[cell[use]]) ** 2, minlength=n_cell)
    gmean = np.bincount(grp[use], weights=p[use], minlength=n_grp) / np.maximum(g_size, 1)
    ug = full_g & (n_full[g_cell] >= 2)
    ss_deal = np.bincount(g_cell[ug], weights=(gmean[ug] - mean[g_cell[ug]]) ** 2, minlength=n_cell)
    used = n_full >= 2
    one = np.zeros(int(used.sum()), dtype=np.int64)  # sums in cell order, as one bin of bincount adds them

    def total(x: np.ndarray) -> float:
        return float(np.bincount(one, weights=x[used], minlength=1)[0])

    return (int(k), total(ss_game), total(ss_deal), int(total((cnt - 1).astype(float))),
            int(total((n_full - 1).astype(float))), n_cell)


def _ordinal(keys: np.ndarray) -> np.ndarray:
    """Each key's number in the order keys first occur (0, 1, …)."""
    return _ordinal_first(keys)[0]


def _game_kinds(arr: GameArrays) -> tuple[np.ndarray, np.ndarray]:
    """Games of the same kind (seats and places) numbered in the order kinds first occur,
    and each kind's first game. A game's row is packed into one int64 where it fits (every
    table of up to 6 seats and up to ~1,000 entrants), so the sort is of 8 bytes a game."""
    if not arr.games:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    bits = _kind_bits(arr)
    if bits is None:
        return _ordinal_first(np.unique(np.hstack([arr.seats, arr.places]), axis=0, return_inverse=True)[1].ravel())
    return _ordinal_first(_packed_kinds(arr, 0, arr.games, *bits))


def _kind_bits(arr: GameArrays) -> tuple[int, int] | None:
    """Bits a seat and a place take in a game's packed row, or None where a row does not fit
    in an int64."""
    seat_bits = max(1, int(arr.seats.max()) + 2).bit_length()
    place_bits = max(1, int(arr.places.max()) + 1).bit_length()
    if arr.seats.shape[1] * (seat_bits + place_bits) > 62 or int(arr.places.min()) < 0:
        return None
    return seat_bits, place_bits


def _packed_kinds(arr: GameArrays, lo: int, hi: int, seat_bits: int, place_bits: int) -> np.ndarray:
    """The rows of games lo…hi − 1, seats and places, each packed into one int64."""
    packed = np.zeros(hi - lo, dtype=np.int64)
    for c in range(arr.seats.shape[1]):
        packed <<= seat_bits
        packed |= arr.seats[lo:hi, c] + 1
        packed <<= place_bits
        packed |= arr.places[lo:hi, c]
    return packed


def _kind_counts(arr: GameArrays, limit: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Each kind of game's first game and how many games are of it, kinds in the order they
    first occur (`_game_kinds` without the kind of every game), or None if the games are of
    more than `limit` kinds: worked out a chunk of games at a time, with the kinds seen so
    far as the only state, and given up as soon as the limit is passed (so the working
    memory is bounded by the limit, not by the games)."""
    bits = _kind_bits(arr) if arr.games else None
    if bits is None:
        kind, first = _game_kinds(arr)
        return None if limit is not None and len(first) > limit else (
            first, np.bincount(kind, minlength=len(first)).astype(np.int64))
    keys, first, count = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    for lo in range(0, arr.games, CHUNK):
        u, at, c = np.unique(_packed_kinds(arr, lo, min(lo + CHUNK, arr.games), *bits),
                             return_index=True, return_counts=True)
        keys, where = np.unique(np.concatenate([keys, u]), return_inverse=True)
        if limit is not None and len(keys) > limit:
            return None
        where = where.ravel()
        old, new = where[: len(first)], where[len(first):]
        f = np.full(len(keys), np.iinfo(np.int64).max, dtype=np.int64)
        f[old] = first
        np.minimum.at(f, new, at + lo)
        n_ = np.zeros(len(keys), dtype=np.int64)
        n_[old] = count
        np.add.at(n_, new, c)
        first, count = f, n_
    order = np.argsort(first, kind="stable")
    return first[order], count[order]


def _var(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def _quantile(xs: Sequence[float], q: float) -> float:
    """The q-quantile by linear interpolation between order statistics."""
    s = sorted(xs)
    if not s:
        return float("nan")
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def bootstrap_seed(seed: int | None) -> int:
    """The bootstrap's seed for a tournament seed (the same as ``derive_seed(seed,
    "bootstrap")`` of the schedule)."""
    text = f"{0 if seed is None else seed}:bootstrap"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def board_order(theta: Mapping[str, float], games: Mapping[str, int], last: Iterable[str] = ()) -> list[str]:
    """Every entrant in the leaderboard's order: by θ, strongest first, those in `last`
    (disqualified) after the rest and entrants without games at the end; ties by name."""
    out = set(last)
    return sorted(theta, key=lambda e: (e in out, not games.get(e), -round(theta[e], TIE_DIGITS), e))


def report(
    records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str], resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE, seed: int = 0, prior: float = PRIOR, last: Iterable[str] = (),
    sequential: bool = False,
) -> tuple[Analysis, dict[str, Any]]:
    """The analysis and the ``statistics`` section of a leaderboard: the board's order
    (`board_order`: by θ, `last` after the rest); per entrant θ with its interval and mean
    place with its interval; for each pair of neighbours in that order the paired deal test (`neighbour_tests`,
    the anytime-valid one with `sequential`, as a board of early stopping must use) and
    about how many more games would settle it; the games each pair met; the luck share.
    Numbers are rounded for publishing."""
    arr = as_arrays(records, entrants)
    a = analyse(arr, entrants, resamples, confidence, seed, prior)
    shown = board_order(a.theta, a.entrant_games, last)
    deals = paired_deals(arr, entrants)
    neighbours = neighbour_tests(deals, shown, confidence, sequential)
    for nb in neighbours:
        nb["diff"] = round(a.theta[nb["upper"]] - a.theta[nb["lower"]], 4)
        inf = nb["upper_better"] + nb["lower_better"]
        nb["games_to_settle"] = (0 if nb["settled"] else None if nb["more_deals"] is None or not inf
                                 else math.ceil(nb["more_deals"] * a.games / inf))
    ents = {}
    for e in entrants:
        ci, pci = a.ci[e], a.place_ci[e]
        mp = a.mean_place[e]
        ents[e] = {
            "pl_strength": round(a.theta[e], 4), "ci_low": _r(ci and ci[0]), "ci_high": _r(ci and ci[1]),
            "games": a.entrant_games[e], "mean_place": _r(mp), "place_ci_low": _r(pci and pci[0]),
            "place_ci_high": _r(pci and pci[1]),
        }
    test = ("anytime-valid: Robbins' beta-binomial mixture martingale (Beta(4, 4) mixing; Howard, Ramdas, "
            "McAuliffe and Sekhon 2021), p = 1 / its running maximum, valid however often it is looked at"
            if sequential else "exact two-sided sign test (binomial, p = 1/2)")
    section = {
        "method": {
            "rating": "Plackett-Luce on places, fitted on all games at once (MM, Hunter 2004); "
                      "pl_strength = ln(strength); a shared place counts as every order of the tied "
                      f"entrants equally; prior: {prior:g} virtual win and loss per entrant against a "
                      "reference of strength 0; the leaderboard's order",
            "bootstrap": "intervals of pl_strength and mean place: resamples of whole deal groups (the games "
                         "of one duplicate deal; with plain deals single games), with replacement; percentiles"
                         + ("" if a.method == "bootstrap" else
                            "; with this many kinds of game the resamples are drawn from the normal distribution "
                            "the resampling converges to: the fitted pl_strength plus N(0, H^-1 M H^-1), H minus "
                            "the Hessian of the log-likelihood, M the covariance of the deal groups' score "
                            "vectors (cluster-robust sandwich); mean place with the variance of its groups' "
                            "place sums"),
            "intervals": a.method,
            "deals": "for two entrants and a deal group where both played, the one placed ahead more often "
                     "in the group's games did better; level deals say nothing and are left out",
            "settled": f"{test} of the informative deals of the two neighbours, Holm-corrected over every pair "
                       "of ranked entrants that met; settled when the adjusted p-value is at most "
                       "1 - confidence and the upper did better more often: the chance that any settled mark "
                       "on the board is wrong is at most 1 - confidence",
            "share": "the share of the informative deals the upper did better on, with its "
                     + ("anytime-valid (confidence sequence)" if sequential else "exact Clopper-Pearson")
                     + " interval (1/2: no difference)",
            "too_few_deals": f"fewer than {min_informative(confidence, sequential)} informative deals: no "
                             "result could settle the pair",
            "games_to_settle": "only where a difference is plausible (the upper did better by at least one "
                               "standard error): the informative deals needed at the share seen so far, as "
                               "games of the tournament played as so far; otherwise: no evidence of a difference",
        },
        "confidence": confidence,
        "test": "sequential" if sequential else "fixed",
        "resamples": a.resamples,
        "seed": seed,
        "games": a.games,
        "deal_groups": a.groups,
        "order": shown,
        "entrants": ents,
        "neighbours": neighbours,
        "pairs_met": pairs_met(arr, entrants, sparse=len(entrants) > SPARSE_ABOVE),
        "luck": luck_share(arr, entrants),
    }
    return a, section


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(x, nd)


# ----- early stopping ----------------------------------------------------------------------

T = TypeVar("T")


def plan_rounds(specs: Sequence[T], round_games: int) -> list[list[T]]:
    """The schedule cut into rounds: consecutive games, at least `round_games` of them per
    round, never splitting a deal group (a round ends only where the next game starts
    another ``group``); the last round takes what is left. Works on anything with a
    ``group`` attribute (`GameSpec`)."""
    rounds: list[list[T]] = []
    cur: list[T] = []
    for spec in specs:
        if len(cur) >= round_games and getattr(spec, "group") != getattr(cur[-1], "group"):
            rounds.append(cur)
            cur = []
        cur.append(spec)
    if cur:
        rounds.append(cur)
    return rounds


def progress_text(state: Mapping[str, Any] | None) -> str:
    """Early stopping's state for a progress display: the SPRT's log-likelihood ratio and
    its bounds, or whether the order is settled yet ("" before the first look)."""
    if not state:
        return ""
    t = state.get("sprt")
    if t is not None:
        verdict = {"accepted": " H1 accepted", "rejected": " H0 accepted"}.get(state.get("reason", ""), "")
        return f"LLR {t['llr']:.2f} [{t['lower']:.2f}, {t['upper']:.2f}]{verdict}"
    return "settled" if state.get("reason") == "settled" else "not settled yet"


def stop_note(reason: str, games: int, budget: int, state: Mapping[str, Any] | None = None) -> str:
    """The sentence a report gives for why the games stopped (or where early stopping is)."""
    t = (state or {}).get("sprt")
    if t is not None:
        who = f"{state['candidate']} vs {state['baseline'] or 'the field'}"  # type: ignore[index]
        llr = f"LLR {t['llr']:.2f} in [{t['lower']:.2f}, {t['upper']:.2f}]"
        est = "" if t.get("elo") is None else f", {t['elo']:+.0f} Elo over {t['deals']} deals"
        if reason == "accepted":
            return (f"SPRT {who}: H1 accepted (stronger by {t['elo1']:g} Elo rather than {t['elo0']:g}) after "
                    f"{games} games; {llr}{est}")
        if reason == "rejected":
            return f"SPRT {who}: H0 accepted (not stronger by {t['elo1']:g} Elo) after {games} games; {llr}{est}"
        if reason == "budget":
            return f"SPRT {who}: no decision, budget of {budget} games reached; {llr}{est}"
        return f"SPRT {who}: {llr}{est} after {games} of {budget} games"
    if reason == "settled":
        return f"settled after {games} games (budget {budget})"
    if reason == "budget":
        return f"budget of {budget} games reached"
    return f"stopped after {games} of {budget} games ({reason})"


# ----- paired deal outcomes: the tests behind the marks -------------------------------------
#
# For two entrants and one deal group where both played, the deal says who did better: the
# sum over the group's games (where both sat) of +1 when the first placed ahead of the
# second, −1 when behind, 0 when level. A positive sum is a deal the first did better on, a
# negative one a deal the second did better on, zero a level deal (it says nothing about
# which is stronger and is left out). With equal entrants every informative deal goes either
# way with probability ½ (duplicate deals: exactly, by the seat rotation; plain deals: on
# average over the seats, which only makes the tests below more careful), so:
#
# - fixed size: the exact two-sided sign test (binomial, p = ½) of the informative deals,
#   with its Clopper–Pearson interval for the share of them the upper entrant did better on;
# - sequential: the same outcomes as a running test (Robbins' 1970 beta-binomial mixture
#   martingale; Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform, nonparametric,
#   nonasymptotic confidence sequences"): its running maximum M stays below 1/α with
#   probability ≥ 1 − α over every deal for ever (Ville's inequality), so the p-value
#   1 / max M may be looked at as often as one likes;
# - several pairs: Holm's step-down correction over every pair of entrants that met, so the
#   chance that any "settled" on a board is wrong is at most 1 − confidence (family-wise,
#   whatever the true strengths).

MIXTURE = 4.0  # the Beta(a, a) mixing prior of the sequential test: tuned to tens-hundreds of deals
NO_EVIDENCE_Z = 1.0  # a difference is "plausible" when the upper entrant leads by ≥ 1 standard error


@dataclass
class PairedDeals:
    """Every (deal group, pair of entrants) where both played: who did better. Compact
    arrays, one row per pair and group (about 9 bytes), sorted by pair then group (game
    order)."""

    entrants: list[str]
    games: int
    groups: int
    pair: np.ndarray  # lo · n + hi for the pair's entrant indices lo < hi (int32 below 46,341 entrants)
    group: np.ndarray  # int32: ordinal of the deal group (by its first game)
    sign: np.ndarray  # int8: +1: lo did better, −1: hi did better, 0: level

    @property
    def lo(self) -> np.ndarray:
        """The lower entrant index of each row's pair."""
        return self.pair // len(self.entrants)

    @property
    def hi(self) -> np.ndarray:
        """The higher entrant index of each row's pair."""
        return self.pair % len(self.entrants)

    def counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """n×n matrices: deals row did better than column, deals level, deals both played."""
        n = len(self.entrants)
        sums = np.zeros((3, n * n), dtype=np.int64)  # lo better, hi better, level
        for lo in range(0, len(self.pair), 4 * CHUNK):  # a chunk of rows at a time
            p, s = self.pair[lo:lo + 4 * CHUNK], self.sign[lo:lo + 4 * CHUNK]
            sums[0] += np.bincount(p[s > 0], minlength=n * n)
            sums[1] += np.bincount(p[s < 0], minlength=n * n)
            sums[2] += np.bincount(p[s == 0], minlength=n * n)
        plus, minus, level = (x.reshape(n, n) for x in sums)
        better = plus + minus.T
        level = level + level.T
        return better, level, better + better.T + level

    def running_max_mixture(self, a: float = MIXTURE) -> np.ndarray:
        """n×n (symmetric): the largest log mixture martingale over every prefix of each
        pair's informative deals, in game order (0 for pairs without one). Whole pairs
        a chunk of rows at a time."""
        n = len(self.entrants)
        out = np.zeros((n, n))
        if not len(self.pair):
            return out
        bounds = np.r_[0, _changes(self.pair), len(self.pair)]
        lo = 0
        while lo < len(self.pair):
            hi = int(bounds[min(int(np.searchsorted(bounds, lo + CHUNK * 4)), len(bounds) - 1)])
            keep = self.sign[lo:hi] != 0
            if keep.any():
                pid = self.pair[lo:hi][keep]
                s = (self.sign[lo:hi][keep] > 0).astype(float)
                first = np.flatnonzero(np.r_[True, pid[1:] != pid[:-1]])
                seg = np.cumsum(np.r_[False, pid[1:] != pid[:-1]])
                cs, cm = np.cumsum(s), np.arange(1, len(s) + 1, dtype=float)
                k = cs - (cs - s)[first][seg]  # per-pair running counts
                m = cm - (cm - 1)[first][seg]
                del cs, cm, seg, s
                best = np.maximum(np.maximum.reduceat(log_mixture(k, m, a), first), 0.0)
                p = pid[first]
                out.flat[p] = best
                out.T.flat[p] = best
            lo = hi
        return out


def paired_deals(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str]) -> PairedDeals:
    """The paired deal outcomes of `records` (see above). Where the deal groups come in
    game order (a schedule's) rows are placed by counting (`_paired_in_order`); otherwise
    each (pair, deal group) row is one int64 key with the game's sign in its lowest bits,
    made a chunk of games at a time and sorted in place: the working memory is some 10
    bytes a row beyond the result."""
    names = list(entrants)
    arr = as_arrays(records, names)
    n = len(names)
    if n * n <= PAIRS_COUNTED and arr.groups_in_order():
        return PairedDeals(names, arr.games, arr.groups, *_paired_in_order(arr, n))
    span = arr.groups + 1
    sizes = np.bincount(arr.size.astype(np.int64)).tolist() if arr.games else []
    keys = np.empty(sum(c * t * (t - 1) // 2 for t, c in enumerate(sizes)), dtype=np.int64)
    at = 0
    for lo in range(0, arr.games, CHUNK):
        hi = min(lo + CHUNK, arr.games)
        size = arr.size[lo:hi]
        for t in np.unique(size).tolist():
            rows = np.flatnonzero(size == t) + lo
            for i, j in combinations(range(t), 2):
                a, b = arr.seats[rows, i].astype(np.int64), arr.seats[rows, j].astype(np.int64)
                key = (np.minimum(a, b) * n + np.maximum(a, b)) * span + arr.group[rows]
                # sign + 1 (0, 1, 2: lo behind, level, lo ahead); seat i is lo when a < b
                ahead = np.sign(arr.places[rows, j].astype(np.int64) - arr.places[rows, i])
                ahead[a > b] *= -1
                keys[at:at + len(rows)] = (key << 2) + ahead + 1
                at += len(rows)
    keys.sort()
    sign = (keys & 3).astype(np.int8)
    sign -= 1
    keys >>= 2  # (pair, group)
    if len(keys) > 1 and bool((keys[1:] == keys[:-1]).any()):  # a deal group's games at one table: signs added up
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        sign = np.sign(np.add.reduceat(sign, starts, dtype=np.int64)).astype(np.int8)
        keys = keys[starts]
        del starts
    group = np.empty(len(keys), dtype=np.int32)
    pair = np.empty(len(keys), dtype=np.int32 if n * n < 2 ** 31 else np.int64)
    for lo in range(0, len(keys), CHUNK):
        group[lo:lo + CHUNK] = keys[lo:lo + CHUNK] % span
        pair[lo:lo + CHUNK] = keys[lo:lo + CHUNK] // span
    return PairedDeals(names, arr.games, arr.groups, pair, group, sign)


PAIRS_COUNTED = 1 << 22
"""Pairs of entrants (n²) up to which `paired_deals` places each row by counting (no sort
of every row): fields of up to 2,048 entrants."""


def _pair_rows(arr: GameArrays, lo: int, hi: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (pair, game, sign) rows of the games lo…hi − 1: every pair of seats at a table,
    sorted by pair and then game."""
    size = arr.size[lo:hi]
    ps, gs, ss = [], [], []
    for t in np.unique(size).tolist():
        rows = np.flatnonzero(size == t) + lo
        for i, j in combinations(range(t), 2):
            a, b = arr.seats[rows, i].astype(np.int64), arr.seats[rows, j].astype(np.int64)
            ahead = np.sign(arr.places[rows, j].astype(np.int64) - arr.places[rows, i])  # +1: seat i ahead
            ahead[a > b] *= -1  # as the lower entrant of the pair sees it
            ps.append(np.minimum(a, b) * n + np.maximum(a, b))
            gs.append(rows)
            ss.append(ahead.astype(np.int8))
    p, g, sg = np.concatenate(ps), np.concatenate(gs), np.concatenate(ss)
    order = np.lexsort((g, p))
    return p[order], g[order], sg[order]


def _paired_in_order(arr: GameArrays, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`paired_deals`' rows (pair, group, sign) where the games' deal groups never go down
    in game order: each row is put in its place by counting the rows of each pair first,
    a chunk of games at a time, so that no sort key is held beside the rows (one per game
    and pair until the rows of one pair and group, a deal's games at one table, are added
    up in place; then one per group and pair)."""
    width = arr.seats.shape[1]
    step = max(1, CHUNK // max(1, width * (width - 1) // 2))  # games whose rows make about a CHUNK
    per = np.zeros(n * n, dtype=np.int64)
    for lo in range(0, arr.games, step):
        per += np.bincount(_pair_rows(arr, lo, min(lo + step, arr.games), n)[0], minlength=n * n)
    total = int(per.sum())
    cursor = np.cumsum(per) - per
    del per
    pair = spill.empty(total, np.int32 if n * n < 2 ** 31 else np.int64)
    group = spill.empty(total, np.int32)
    sign = spill.empty(total, np.int8)
    for lo in range(0, arr.games, step):
        p, g, sg = _pair_rows(arr, lo, min(lo + step, arr.games), n)
        if not len(p):
            continue
        first = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
        count = np.diff(np.r_[first, len(p)])
        at = cursor[p] + np.arange(len(p)) - np.repeat(first, count)
        pair[at], group[at], sign[at] = p, arr.group[g], sg
        cursor[p[first]] += count
    del cursor
    w = lo = 0
    while lo < total:  # one row per (pair, group): a chunk at a time, never splitting a run
        hi = min(lo + 4 * CHUNK, total)
        while hi < total and pair[hi] == pair[hi - 1] and group[hi] == group[hi - 1]:
            hi += 1
        p, g = pair[lo:hi], group[lo:hi]
        starts = np.flatnonzero(np.r_[True, (p[1:] != p[:-1]) | (g[1:] != g[:-1])])
        k = len(starts)
        if k < hi - lo or w < lo:
            merged = np.sign(np.add.reduceat(sign[lo:hi], starts, dtype=np.int64)).astype(np.int8)
            pair[w:w + k], group[w:w + k], sign[w:w + k] = p[starts], g[starts], merged
        w, lo = w + k, hi
    if w < total:
        pair, group, sign = _copied(pair[:w]), _copied(group[:w]), _copied(sign[:w])
    return pair, group, sign


def _copied(a: np.ndarray) -> np.ndarray:
    """A copy of `a` (made by `spill.empty`), a chunk at a time."""
    out = spill.empty(a.shape, a.dtype)
    for lo in range(0, len(a), 4 * CHUNK):
        out[lo:lo + 4 * CHUNK] = a[lo:lo + 4 * CHUNK]
    return out


_lgamma_each = np.frompyfunc(math.lgamma, 1, 1)


def _lgamma(x: Any) -> np.ndarray:
    """math.lgamma elementwise (float64; the same values). A long array is worked out once
    per distinct value: counts recur, and an array of Python floats costs 32 bytes each."""
    x = np.asarray(x, dtype=float)
    if x.size < 4096:
        return np.asarray(_lgamma_each(x), dtype=float)
    u, inv = np.unique(x, return_inverse=True)
    return np.asarray(_lgamma_each(u), dtype=float)[inv].reshape(x.shape)


def _betaln(x: Any, y: Any) -> np.ndarray:
    """ln B(x, y), elementwise."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return _lgamma(x) + _lgamma(y) - _lgamma(x + y)


def log_mixture(k: Any, m: Any, a: float = MIXTURE) -> Any:
    """ln M: the beta-binomial mixture martingale of `k` successes in `m` fair coin flips,
    2^m · B(a + k, a + m − k) / B(a, a) (Robbins 1970): its expectation is 1 under p = ½."""
    k, m = np.asarray(k, dtype=float), np.asarray(m, dtype=float)
    return m * math.log(2.0) + _betaln(a + k, a + m - k) - _betaln(a, a)


_LN_FACTORIAL = np.zeros(1)  # ln i! for i = 0, 1, …: math.lgamma(i + 1), grown as needed


def _ln_factorial(upto: int) -> np.ndarray:
    """ln i! for i = 0..upto (the values of math.lgamma, kept: sign tests of many pairs
    of many deals ask for the same ones again and again)."""
    global _LN_FACTORIAL
    if len(_LN_FACTORIAL) <= upto:
        _LN_FACTORIAL = np.asarray(_lgamma_each(np.arange(1, max(upto + 1, 2 * len(_LN_FACTORIAL)) + 1, dtype=float)),
                                   dtype=float)
    return _LN_FACTORIAL[: upto + 1]


def _log_binom_terms(n: int, q: float) -> np.ndarray:
    """ln P(X = i) for i = 0..n, X ~ Bin(n, q), 0 < q < 1."""
    i = np.arange(n + 1, dtype=float)
    lf = _ln_factorial(n)
    return (math.lgamma(n + 1) - lf - lf[::-1]
            + i * math.log(q) + (n - i) * math.log1p(-q))


def _tail(n: int, k: int, q: float, upper: bool) -> float:
    """P(X ≥ k) (`upper`) or P(X ≤ k) for X ~ Bin(n, q)."""
    t = _log_binom_terms(n, q)
    t = t[k:] if upper else t[: k + 1]
    if not len(t):
        return 0.0
    top = t.max()
    return float(min(1.0, math.exp(top) * np.exp(t - top).sum()))


def sign_test(wins: Any, losses: Any) -> np.ndarray:
    """The exact two-sided sign test's p-value: 2·P(Bin(n, ½) ≤ min(wins, losses)), at most 1."""
    w, l = np.atleast_1d(np.asarray(wins, dtype=int)), np.atleast_1d(np.asarray(losses, dtype=int))
    return np.array([_sign_p(int(a + b), int(min(a, b))) for a, b in zip(w, l)], dtype=float)


@lru_cache(maxsize=65536)
def _sign_p(n: int, k: int) -> float:
    """`sign_test` of k of n against n − k (pairs with the same counts recur: cached)."""
    return min(1.0, 2.0 * _tail(n, k, 0.5, False)) if n else 1.0


def clopper_pearson(k: Any, n: Any, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact (Clopper–Pearson) interval of a binomial share, k successes of n: the q
    where P(X ≥ k | q) and P(X ≤ k | q) are (1 − confidence)/2, by bisection."""
    half = (1 - confidence) / 2
    ks, ns = np.atleast_1d(np.asarray(k, dtype=int)), np.atleast_1d(np.asarray(n, dtype=int))
    los, his = [], []
    for kk, nn in zip(ks, ns):
        kk, nn = int(kk), int(nn)
        lo, hi = 0.0, 1.0
        if nn and kk > 0:  # the smallest q with P(X ≥ k | q) ≥ half
            a, b = 0.0, kk / nn
            for _ in range(60):
                c = (a + b) / 2
                a, b = (c, b) if _tail(nn, kk, c, True) < half else (a, c)
            lo = b
        if nn and kk < nn:  # the largest q with P(X ≤ k | q) ≥ half
            a, b = kk / nn, 1.0
            for _ in range(60):
                c = (a + b) / 2
                a, b = (c, b) if _tail(nn, kk, c, False) >= half else (a, c)
            hi = a
        los.append(lo)
        his.append(hi)
    return np.array(los), np.array(his)


def mixture_interval(k: Any, m: Any, confidence: float, a: float = MIXTURE) -> tuple[np.ndarray, np.ndarray]:
    """The anytime-valid interval of the share (the confidence sequence of the same mixture):
    the q with B(a+k, a+m−k)/B(a, a) / (q^k (1−q)^(m−k)) < 1/(1 − confidence), by bisection."""
    k, m = np.atleast_1d(np.asarray(k, dtype=float)), np.atleast_1d(np.asarray(m, dtype=float))
    bound = math.log(1 / (1 - confidence)) - (_betaln(a + k, a + m - k) - _betaln(a, a))
    mid = (k + a) / (m + 2 * a)

    def inside(q: np.ndarray) -> np.ndarray:
        return -(k * np.log(q) + (m - k) * np.log1p(-q)) < bound

    ends = []
    for target in (1e-12, 1 - 1e-12):
        a_, b_ = mid.copy(), np.full_like(mid, target)  # a_ inside, b_ outside (or the end)
        for _ in range(50):
            c = (a_ + b_) / 2
            ok = inside(c)
            a_ = np.where(ok, c, a_)
            b_ = np.where(ok, b_, c)
        ends.append(np.where(inside(np.full_like(mid, target)), target, a_))
    lo, hi = np.where(m > 0, ends[0], 0.0), np.where(m > 0, ends[1], 1.0)
    return np.clip(lo, 0, 1), np.clip(hi, 0, 1)


def holm(pvalues: Any) -> np.ndarray:
    """Holm's step-down adjusted p-values (reject where adjusted ≤ α: family-wise error ≤ α)."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    if not m:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def min_informative(confidence: float, sequential: bool = False, a: float = MIXTURE) -> int:
    """The fewest informative deals that can settle a pair at `confidence` (even all one
    way): 2·2^−n ≤ 1 − confidence for the sign test (6 at 95 %), the mixture reaching
    1/(1 − confidence) for the sequential test (11 at 95 % with a = 4)."""
    alpha = 1 - confidence
    if not sequential:
        return max(1, math.ceil(math.log2(2 / alpha)))
    n = 1
    while float(log_mixture(n, n, a)) < math.log(1 / alpha):
        n += 1
    return n


def neighbour_tests(
    deals: PairedDeals, order: Sequence[str], confidence: float = CONFIDENCE, sequential: bool = False,
    among: Sequence[str] | None = None, a: float = MIXTURE, intervals: bool = True,
) -> list[dict[str, Any]]:
    """For each pair of neighbours in `order` (upper first): the deals both played, the
    informative ones each did better on, the share of them the upper did better on with its
    interval, the p-value (sign test, or anytime-valid with `sequential`), Holm's adjusted
    p-value over every pair among `among` (default `order`) with informative deals, and the
    verdict: "settled" (adjusted p ≤ 1 − confidence and the upper did better more often),
    "too few deals", "open" (a difference is plausible: the upper leads by at least one
    standard error; `more_deals` informative deals more at the same share would settle it)
    or "no evidence of a difference". Without `intervals` the interval is left at [0, 1]."""
    alpha = 1 - confidence
    idx = {e: i for i, e in enumerate(deals.entrants)}
    better, level, both = deals.counts()
    fam = [idx[e] for e in (among if among is not None else order) if e in idx]
    pairs = [(min(i, j), max(i, j)) for x, i in enumerate(fam) for j in fam[x + 1:]
             if better[i, j] + better[j, i] > 0]
    if sequential:
        top = deals.running_max_mixture(a)
        raw = np.array([min(1.0, math.exp(-top[i, j])) for i, j in pairs])
    else:
        raw = sign_test([better[i, j] for i, j in pairs], [better[j, i] for i, j in pairs])
    adj = dict(zip(pairs, holm(raw)))
    raw_of = dict(zip(pairs, raw))
    rejected = sum(1 for pr in pairs if adj[pr] <= alpha)
    least = min_informative(confidence, sequential, a)
    interval = mixture_interval if sequential else clopper_pearson
    out = []
    for u, l in zip(order, order[1:]):
        i, j = idx[u], idx[l]
        w, lose, lv = int(better[i, j]), int(better[j, i]), int(level[i, j])
        n = w + lose
        key = (min(i, j), max(i, j))
        p_adj = float(adj.get(key, 1.0))
        lo_ci, hi_ci = (float(x[0]) for x in interval(w, n, confidence)) if n and intervals else (0.0, 1.0)
        settled = bool(n and p_adj <= alpha and w > lose)
        z = (w - lose) / math.sqrt(n) if n else 0.0
        more = None
        if settled:
            verdict = "settled"
        elif n < least:
            verdict = "too few deals"
        elif z >= NO_EVIDENCE_Z:
            verdict = "open"
            # the level Holm would test this pair at next: α over the pairs not rejected
            more = _more_deals(w, n, alpha / max(1, len(pairs) - rejected), sequential, a)
        else:
            verdict = "no evidence of a difference"
        out.append({
            "upper": u, "lower": l, "deals": int(both[i, j]), "upper_better": w, "lower_better": lose,
            "level": lv, "share": None if not n else round(w / n, 4), "share_low": round(lo_ci, 4),
            "share_high": round(hi_ci, 4), "p_value": round(float(raw_of.get(key, 1.0)), 6),
            "p_adjusted": round(p_adj, 6), "settled": settled, "verdict": verdict, "more_deals": more,
        })
    return out


def _more_deals(w: int, n: int, alpha: float, sequential: bool, a: float) -> int:
    """About how many more informative deals, at the share seen so far, would settle a pair
    at level `alpha`: the normal approximation of the sign test, n* = (z / (2p − 1))², or the
    first n where the mixture at that share reaches 1/alpha."""
    p = w / n
    if p <= 0.5:
        return 0
    if not sequential:
        z = NormalDist().inv_cdf(1 - alpha / 2)
        return max(1, math.ceil((z / (2 * p - 1)) ** 2) - n)
    target = math.log(1 / alpha)
    hi = max(n, 1)
    while float(log_mixture(p * hi, hi, a)) < target:
        hi *= 2
        if hi > 10 ** 9:
            return hi
    lo = n
    while lo < hi:
        mid = (lo + hi) // 2
        if float(log_mixture(p * mid, mid, a)) >= target:
            hi = mid
        else:
            lo = mid + 1
    return max(1, hi - n)


# ----- the sequential probability ratio test (stop_when: sprt) -------------------------------


def elo_to_score(elo: float) -> float:
    """The expected score (1 win, ½ level, 0 loss) of a logistic Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_to_elo(score: float) -> float:
    """The logistic Elo difference of an expected score (±inf at 1 and 0)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def deal_scores(deals: PairedDeals, candidate: str, baseline: str | None = None) -> np.ndarray:
    """The candidate's score on each deal group, in game order: against `baseline`, 1 when
    it did better, ½ level, 0 worse (groups where both played); against the field (no
    baseline), the mean of those scores over the opponents it met in the group."""
    idx = {e: i for i, e in enumerate(deals.entrants)}
    c = idx[candidate]
    mine = (deals.lo == c) | (deals.hi == c)
    if baseline is not None:
        b = idx[baseline]
        mine &= (deals.lo == b) | (deals.hi == b)
    s = np.where(deals.lo[mine] == c, deals.sign[mine], -deals.sign[mine])
    g = deals.group[mine]
    if not len(g):
        return np.zeros(0)
    _, inv = np.unique(g, return_inverse=True)
    tot = np.bincount(inv.ravel(), weights=(1.0 + s) / 2.0)
    return tot / np.bincount(inv.ravel())


def _mle_with_mean(values: np.ndarray, probs: np.ndarray, s: float) -> np.ndarray:
    """The distribution on `values` nearest to `probs` (maximum likelihood) with mean `s`:
    q_i = p_i / (1 + x (a_i − s)), x solving Σ q_i (a_i − s) = 0 (bisection; the sum falls
    with x). Requires min(values) < s < max(values)."""
    d = values - s
    lo_x, hi_x = -1.0 / d.max() + 1e-12, 1.0 / -d.min() - 1e-12
    x = 0.0
    for _ in range(100):
        x = (lo_x + hi_x) / 2
        if float((probs * d / (1 + x * d)).sum()) > 0:
            lo_x = x
        else:
            hi_x = x
    q = probs / (1 + x * d)
    return q / q.sum()


def sprt(scores: Any, elo0: float, elo1: float, alpha: float, beta: float) -> dict[str, Any]:
    """The generalised sequential probability ratio test of H0: strength difference elo0
    against H1: elo1 on per-deal scores, as fishtest runs it on game pairs (the GSPRT of
    Van den Bergh's LLRcalc: the log-likelihood ratio of the two maximum-likelihood
    distributions of the observed scores with the expected scores of elo0 and elo1), with
    Wald's conservative bounds ln β and ln(1 / α): for a likelihood ratio they keep the two
    error rates at most α and β however often the test is looked at (Ville's inequality),
    where fishtest's ln(β / (1 − α)) and ln((1 − β) / α) only approximate them. Scores seen
    are multiples of 1/k; a thousandth of a pseudo-deal at 0 and at 1 keeps both expected
    scores inside them."""
    lower, upper = math.log(beta), math.log(1 / alpha)
    x = np.asarray(scores, dtype=float)
    n = len(x)
    out: dict[str, Any] = {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta, "deals": n,
                           "lower": round(lower, 4), "upper": round(upper, 4)}
    if not n:
        return out | {"llr": 0.0, "score": None, "elo": None, "decision": None}
    vals, cnt = np.unique(np.r_[x, 0.0, 1.0], return_counts=True)
    cnt = cnt.astype(float)
    cnt[0] -= 1 - 1e-3
    cnt[-1] -= 1 - 1e-3
    probs = cnt / cnt.sum()
    q0 = _mle_with_mean(vals, probs, elo_to_score(elo0))
    q1 = _mle_with_mean(vals, probs, elo_to_score(elo1))
    llr = float(cnt.sum() * (probs * np.log(q1 / q0)).sum())
    mean = float(x.mean())
    decision = "H1" if llr >= upper else "H0" if llr <= lower else None
    elo = score_to_elo(mean)
    return out | {"llr": round(llr, 4), "score": round(mean, 4),
                  "elo": None if not math.isfinite(elo) else round(elo, 1), "decision": decision}
