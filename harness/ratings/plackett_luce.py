"""The batch Plackett–Luce rating θ of every entrant, fitted on all games at once.

A game is read as the first place being chosen from everyone at the table with probability
proportional to strength γ, the second from the rest, and so on; θ = ln γ, so between two
entrants P(a ahead of b) = 1 / (1 + e^(θb − θa)). The rating does not depend on the order
the games were played in (unlike TrueSkill).

Shared places: the likelihood of a game with a tie is averaged (in log terms) over every
order of the tied entrants, so two entrants who share a place each count half a win over
the other (the usual Bradley–Terry convention for ties).

Prior: each entrant also plays one virtual win and one virtual loss against an anchor of
strength γ = 1 (θ = 0), weight ``prior`` (default 1). This keeps every θ finite, makes
θ = 0 mean "as strong as the anchor", fixes the scale, and makes the likelihood strictly
concave, so it has one maximum.
"""

from __future__ import annotations

import contextlib
import math
from functools import lru_cache
from itertools import combinations
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from . import games
from .games import GameArrays, as_arrays, kind_counts

PRIOR = 1.0

# A stage of a game: (entrants in the risk set, weight, chosen weight of each of them).
Stage = tuple[tuple[int, ...], float, tuple[float, ...]]


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


EXACT_LIMIT = 250_000
"""Kinds of game (distinct seats and places) times the widest table squared, beyond which
the bootstrap's distribution is taken in its normal approximation (`NormalBootstrap`):
the exact resampling costs time and memory per kind, and with tables of 3 or more and a
large field nearly every game is a kind of its own."""


def exact_kinds(arr: GameArrays) -> tuple[np.ndarray, np.ndarray] | None:
    """`kind_counts` of the games where they are few enough kinds to be fitted as one table
    of risk sets (`EXACT_LIMIT`); None where every game's stages must be streamed instead."""
    return kind_counts(arr, EXACT_LIMIT // arr.seats.shape[1] ** 2)


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


def game_blocks(arr: GameArrays, lo: int, hi: int) -> Iterator[Block]:
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
    step, all_tied = max(1, games.CHUNK // 16), np.flatnonzero(tied)
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
        for lo in range(0, self.arr.games, games.CHUNK):
            yield from game_blocks(self.arr, lo, min(lo + games.CHUNK, self.arr.games))

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


TIE_DIGITS = 9
"""θ are compared to this many decimals when ordering: entrants with the same games (equal
θ in exact arithmetic) are ordered by name, not by the last bits of the fit."""


def rank_order(theta: Mapping[str, float], games: Mapping[str, int], among: Iterable[str] | None = None) -> list[str]:
    """Entrants with games, strongest first by θ (then by name)."""
    names = [e for e in (among if among is not None else theta) if games.get(e)]
    return sorted(names, key=lambda e: (-round(theta[e], TIE_DIGITS), e))


def board_order(theta: Mapping[str, float], games: Mapping[str, int], last: Iterable[str] = ()) -> list[str]:
    """Every entrant in the leaderboard's order: by θ, strongest first, those in `last`
    (disqualified) after the rest and entrants without games at the end; ties by name."""
    out = set(last)
    return sorted(theta, key=lambda e: (e in out, not games.get(e), -round(theta[e], TIE_DIGITS), e))


def pl_theta(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str],
             prior: float = PRIOR) -> tuple[dict[str, float], dict[str, int]]:
    """θ of every entrant (the same fit as `DealBootstrap.theta`, without the bootstrap's
    tables: Newton steps from θ = 0, the likelihood being strictly concave) and its games."""
    names = list(entrants)
    arr = as_arrays(records, names)
    table: dict[tuple[int, ...], list[float]] = {}
    counted = exact_kinds(arr)
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
