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

The fit is one: `Likelihood.maximum`, Newton steps on θ, for the board, early stopping and
every bootstrap refit. Its stages come in one of two layouts: a table of risk sets (each
kind of game once, times how often it was played) where the games are of few kinds, or
every game's stages streamed a chunk at a time where they are not (`exact_kinds` decides).
"""

from __future__ import annotations

import contextlib
import math
from functools import lru_cache
from itertools import combinations
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Sequence

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


@lru_cache(maxsize=65536)
def merged_stages(seats: tuple[int, ...],
                  places: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], tuple[float, ...]], ...]:
    """The stages of one game as rows of a `_merge` table (the same games recur: cached)."""
    table: dict[tuple[int, ...], list[float]] = {}
    _merge(game_stages(seats, places), table)
    return tuple((k, tuple(v)) for k, v in table.items())


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


class Stages(NamedTuple):
    """Stages with risk sets of one size m, as the fit reads them: members (R×m), weight
    (R), chosen weight of each member (R×m), and the members' indices into θ (R·m) and
    into the n×n Hessian (R·m·m), flattened."""

    who: np.ndarray
    weight: np.ndarray
    chosen: np.ndarray
    flat: np.ndarray
    pairs: np.ndarray

    @classmethod
    def of(cls, who: np.ndarray, weight: np.ndarray, chosen: np.ndarray, n: int) -> "Stages":
        """The stages of `who` with their index arrays worked out."""
        return cls(who, weight, chosen, who.ravel(), (who[:, :, None] * n + who[:, None, :]).ravel())


class RiskSets:
    """A table of risk sets laid out in a flat vector (per set, from its slot in `sets_at`:
    its weight, then the chosen weight of each member), grouped by size: the stages of any
    vector of that layout (the games' sums, or a bootstrap resample's) without working out
    indices again."""

    def __init__(self, sets_at: Sequence[tuple[tuple[int, ...], int]], n: int) -> None:
        by_size: dict[int, list[tuple[tuple[int, ...], int]]] = {}
        for members, at in sets_at:
            by_size.setdefault(len(members), []).append((members, at))
        # per size m: the stages with the slots of their weights (S) and chosen weights (S×m)
        self.sizes: list[Stages] = []
        for m, items in sorted(by_size.items()):
            who = np.array([mem for mem, _ in items], dtype=np.intp)
            slot = np.array([b for _, b in items], dtype=np.intp)
            self.sizes.append(Stages.of(who, slot, slot[:, None] + 1 + np.arange(m), n))

    def stages(self, acc: np.ndarray) -> list[Stages]:
        """The stages whose weights `acc` holds."""
        return [s._replace(weight=acc[s.weight], chosen=acc[s.chosen]) for s in self.sizes]


class GameStages:
    """Every game's stages (`game_blocks`), read again each time they are iterated, a chunk
    of games at a time: for games of too many kinds to add up in a table."""

    def __init__(self, arr: GameArrays) -> None:
        self.arr = arr
        self.n = len(arr.entrants)

    def __iter__(self) -> Iterator[Stages]:
        for lo in range(0, self.arr.games, games.CHUNK):
            for who, w, chosen, _, _ in game_blocks(self.arr, lo, min(lo + games.CHUNK, self.arr.games)):
                yield Stages.of(who, w, chosen, self.n)


class Likelihood:
    """The Plackett–Luce log-likelihood of `stages` (anything that can be iterated more than
    once), the prior's virtual games included, and its maximum. The one fit of θ: the
    board's, early stopping's and every bootstrap refit."""

    def __init__(self, stages: Iterable[Stages], n: int, prior: float = PRIOR) -> None:
        self.stages, self.n, self.prior = stages, n, prior
        self.wins = np.full(n, prior)  # chosen weight of each entrant, its virtual win included
        for s in stages:
            self.wins += np.bincount(s.flat, weights=s.chosen.ravel(), minlength=n)

    def derivatives(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The gradient at θ and minus the Hessian (n×n, positive definite)."""
        n, prior = self.n, self.prior
        diag = slice(None, None, n + 1)  # the diagonal of a flat n×n matrix
        s = 1.0 / (1.0 + np.exp(-theta))
        grad = self.wins - 2.0 * prior * s
        hess = np.zeros(n * n)
        hess[diag] += 2.0 * prior * s * (1.0 - s)
        for who, w, _, flat, pairs in self.stages:
            x = theta[who]
            e = np.exp(x - x.max(axis=1, keepdims=True))
            q = e / e.sum(axis=1, keepdims=True)  # P(i chosen first from the set)
            pa = w[:, None] * q
            first = np.bincount(flat, weights=pa.ravel(), minlength=n)
            grad -= first
            hess[diag] += first
            hess -= np.bincount(pairs, weights=(pa[:, :, None] * q[:, None, :]).ravel(), minlength=n * n)
        return grad, hess.reshape(n, n)

    def loglik(self, theta: np.ndarray) -> float:
        """The log-likelihood at θ."""
        ll = float((self.prior * (theta - 2.0 * np.logaddexp(0.0, theta))).sum())
        for who, w, chosen, *_ in self.stages:
            x = theta[who]
            top = x.max(axis=1)
            lse = top + np.log(np.exp(x - top[:, None]).sum(axis=1))
            ll += float((chosen * x).sum() - (w * lse).sum())
        return ll

    def maximum(self, start: np.ndarray | None = None, tol: float = 1e-9, max_iter: int = 100) -> np.ndarray:
        """θ where the likelihood is greatest, by Newton steps from `start` (θ = 0 if None).
        A step longer than 1 is halved until the likelihood does not fall; it stops after a
        step shorter than `tol` (the error left is about its square: ~1e-4 for 1e-2, which
        a bootstrap refit from the fit of all games uses). The likelihood is strictly
        concave, so there is one maximum."""
        theta = np.zeros(self.n) if start is None else np.array(start, dtype=float)
        for _ in range(max_iter):
            grad, hess = self.derivatives(theta)
            step = np.linalg.solve(hess, grad)
            big = float(np.abs(step).max()) if len(step) else 0.0
            if big > 1.0:
                ll, t = self.loglik(theta), 1.0
                while t > 1e-6:
                    cand = theta + t * step
                    if self.loglik(cand) >= ll:
                        break
                    t /= 2
                theta = cand
            else:
                theta = theta + step
            if big < tol:
                break
        return theta


def one_blas_thread() -> Any:
    """BLAS held to one thread: the refits solve many small systems, where OpenBLAS's
    threads cost more in handing work over (and in spinning, on a busy machine) than they
    save (21 s against 4.4 s for 100 entrants' bootstrap on 2 cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; without it BLAS keeps its threads
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


EXACT_LIMIT = 250_000
"""Kinds of game (distinct seats and places) times the widest table squared, beyond which
the games are not added up per risk set: the fit streams every game's stages, and the
bootstrap is taken in its normal approximation (`bootstrap.NormalBootstrap`). A table
costs time and memory per kind, and with tables of 3 or more and a large field nearly
every game is a kind of its own."""


def exact_kinds(arr: GameArrays) -> tuple[np.ndarray, np.ndarray] | None:
    """`kind_counts` of the games where they are few enough kinds to be fitted as one table
    of risk sets (`EXACT_LIMIT`); None where every game's stages must be streamed instead."""
    return kind_counts(arr, EXACT_LIMIT // arr.seats.shape[1] ** 2)


def fit_games(arr: GameArrays, prior: float = PRIOR) -> np.ndarray:
    """θ of `arr`'s entrants: the maximum of the likelihood of every game, the stages added
    up per risk set where the games are of few kinds (`exact_kinds`: each kind once, times
    how often it was played), otherwise every game's stages streamed a chunk at a time.
    The same maximum either way, up to rounding."""
    n = len(arr.entrants)
    counted = exact_kinds(arr)
    if counted is None:
        stages: Iterable[Stages] = GameStages(arr)
    else:
        table: dict[tuple[int, ...], list[float]] = {}
        for k, c in zip(counted[0].tolist(), counted[1].tolist()):
            w = int(arr.size[k])
            for key, add in merged_stages(tuple(arr.seats[k, :w].tolist()), tuple(arr.places[k, :w].tolist())):
                row = table.get(key)
                if row is None:
                    row = table[key] = [0.0] * len(add)
                for j, x in enumerate(add):
                    row[j] += c * x
        stages = table_stages(table, n)
    with one_blas_thread():
        return Likelihood(stages, n, prior).maximum()


def table_stages(table: Mapping[tuple[int, ...], Sequence[float]], n: int) -> list[Stages]:
    """The stages of a `_merge` table (risk set → [weight, chosen of each])."""
    sets_at: list[tuple[tuple[int, ...], int]] = []
    flat: list[float] = []
    for key, row in table.items():
        sets_at.append((key, len(flat)))
        flat.extend(row)
    return RiskSets(sets_at, n).stages(np.array(flat, dtype=float))


def pl_theta(records: Iterable[Mapping[str, Any]] | GameArrays, entrants: Sequence[str],
             prior: float = PRIOR) -> tuple[dict[str, float], dict[str, int]]:
    """θ of every entrant (`fit_games`) and its games."""
    names = list(entrants)
    arr = as_arrays(records, names)
    return dict(zip(names, fit_games(arr, prior).tolist())), dict(zip(names, arr.games_of()))


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
