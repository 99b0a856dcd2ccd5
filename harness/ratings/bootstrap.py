"""Intervals of θ and of mean place: a bootstrap over deal groups.

A resample draws as many deal groups (the games sharing ``group``: one deal in every seat
rotation) as there are, with replacement, and refits θ. Whole groups are drawn, never
single games, so the luck that a duplicate deal cancels stays cancelled in every
resample; with plain deals every game is its own group. The interval of an entrant is the
percentile interval of its θ over the resamples. Resamples come from
``numpy.random.default_rng(seed)``.

A resample is refitted exactly while the games are of few kinds (seats and places;
`plackett_luce.EXACT_LIMIT`) and few shared groups (`EXACT_GROUPS`). Beyond that
resamples are drawn from the normal distribution the resampling converges to: θ̂ plus
N(0, H⁻¹ M H⁻¹), H minus the Hessian of the log-likelihood at θ̂ and M the covariance of
the deal groups' score vectors (the cluster-robust sandwich, `NormalBootstrap`). The
leaderboard says which (``statistics.method.intervals``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..seeds import derive_seed
from . import games
from .games import GameArrays, as_arrays, game_kinds, kind_counts
from .plackett_luce import (PRIOR, GameStages, Likelihood, RiskSets, exact_kinds, game_blocks, merged_stages,
                            one_blas_thread, rank_order)
from .significance import CONFIDENCE

RESAMPLES = 1000


class DealBootstrap:
    """The games of `entrants` prepared for fitting and resampling by deal group.

    Everything a resample adds up lives in one flat vector: per risk set its weight and the
    chosen weight of each member, then per entrant its sum of places and its games. A group
    is a list of (slot, value); groups with the same list are one type, so a resample only
    counts how often it drew each type. `counted`: `kind_counts` of the games, where
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
        # Games of the same kind (seats and places) recur: each kind's part of a group's row
        # is worked out once, kinds numbered in the order they first occur.
        kind: np.ndarray | None = None
        kind_count: np.ndarray | None = None
        if arr.groups == arr.games:  # every group one game: a type is a kind, only their counts matter
            counted = counted if counted is not None else kind_counts(arr)  # the kinds, if not counted already
            assert counted is not None  # no limit was given
            first, kind_count = counted
        else:
            kind, first = game_kinds(arr)
        del counted
        part, self._sets_at, size = _kind_rows(arr, first)
        types, self._type_count = _group_types(arr, part, kind, kind_count)
        del part, kind, kind_count
        self._place_slot = place_slot = size
        self._size = size + 2 * n
        self._type_rows: list[tuple[tuple[int, float], ...]] = [
            tuple((k if k >= 0 else place_slot - k - 1, v) for k, v in sig) for sig in types]
        del types
        # The type rows as flat arrays, for adding up a resample in numpy.
        self._row_type = np.array([t for t, row in enumerate(self._type_rows) for _ in row], dtype=np.intp)
        self._row_slot = np.array([slot for row in self._type_rows for slot, _ in row], dtype=np.intp)
        self._row_value = np.array([v for row in self._type_rows for _, v in row], dtype=float)
        self._sets = RiskSets(self._sets_at, n)
        full = self._total(dict(enumerate(self._type_count.tolist())))
        with one_blas_thread():
            self.theta = Likelihood(self._sets.stages(np.array(full)), n, prior).maximum().tolist()
        self.mean_place = self._places(full[place_slot:])
        self.entrant_games = [int(full[place_slot + 2 * i + 1]) for i in range(n)]

    def refit(self, acc: np.ndarray, start: np.ndarray, tol: float = 1e-2, max_iter: int = 50) -> np.ndarray:
        """θ of the games added up in `acc` (a resample), by Newton steps from `start`."""
        return Likelihood(self._sets.stages(acc), self.n, self.prior).maximum(start, tol, max_iter)

    def _total(self, counts: Mapping[int, int]) -> list[float]:
        acc = [0.0] * self._size
        rows = self._type_rows
        for t, c in counts.items():
            for slot, v in rows[t]:
                acc[slot] += c * v
        return acc

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
        with one_blas_thread():
            for _ in range(count):
                drawn = self.draw(rng)
                acc = np.bincount(self._row_slot, weights=self._row_value * drawn[self._row_type],
                                  minlength=self._size)
                yield self.refit(acc, start).tolist(), self._places(acc[ps:].tolist())


Row = list[tuple[int, float]]
"""A group's (or one game's) part of the flat vector a resample adds up: (slot, value)."""


def _kind_rows(arr: GameArrays, first: np.ndarray) -> tuple[list[Row], list[tuple[tuple[int, ...], int]], int]:
    """Each kind of game's row (its first game `first[k]`): its stages' weights, the risk
    sets numbered as first met, and its places and games at negative slots −2i − 1 and
    −2i − 2 for entrant i (placed after the sets once they are counted); the risk sets with
    their slots, and the slots they take."""
    base: dict[tuple[int, ...], int] = {}
    size = 0
    part: list[Row] = []
    for k in first.tolist():
        seats, places = arr.seats[k, : arr.size[k]].tolist(), arr.places[k, : arr.size[k]].tolist()
        items: Row = []
        for risk, row in merged_stages(tuple(seats), tuple(places)):
            if risk not in base:
                base[risk] = size
                size += len(row)
            items += [(base[risk] + j, x) for j, x in enumerate(row)]
        for i, p in zip(seats, places):
            items += [(-2 * i - 1, float(p)), (-2 * i - 2, 1.0)]
        part.append(items)
    return part, list(base.items()), size


def _group_types(arr: GameArrays, part: list[Row], kind: np.ndarray | None,
                 kind_count: np.ndarray | None) -> tuple[dict[tuple[tuple[int, float], ...], int], np.ndarray]:
    """The types of deal group (a group's row, sorted → its number, in the order first met)
    and how many groups are of each. `kind`: each game's kind; None with plain deals, where
    every group is one game and `kind_count` says how many games are of each kind."""
    types: dict[tuple[tuple[int, float], ...], int] = {}
    if kind is None:
        assert kind_count is not None
        kind_type = np.array([types.setdefault(tuple(sorted(p)), len(types)) for p in part], dtype=np.intp)
        type_count = np.zeros(len(types), dtype=np.int64)
        np.add.at(type_count, kind_type, kind_count)
        return types, type_count
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
    return types, np.bincount(group_type, minlength=len(types))


EXACT_GROUPS = 100_000
"""Deal groups of more than one game beyond which the bootstrap is taken in its normal
approximation too: the exact one works out each such group's row one at a time."""


def _group_chunks(arr: GameArrays) -> Iterator[GameArrays]:
    """The games of `arr` in chunks of whole deal groups (about `games.CHUNK` games each; a
    group is never split), each as `GameArrays` of its own (groups numbered within it)."""
    if arr.groups_in_order():  # a group's games consecutive (a schedule's, plain deals too): slices
        group, lo = arr.group, 0
        while lo < arr.games:
            hi = min(lo + games.CHUNK, arr.games)
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
        hi = int(ends[min(int(np.searchsorted(ends, lo + games.CHUNK)), len(ends) - 1)])
        take = order[lo:hi]
        g = arr.group[take]
        yield GameArrays(arr.entrants, arr.ids[take], g - g.min(), arr.size[take], arr.seats[take], arr.places[take])
        lo = hi


def _entrant_places(arr: GameArrays, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each entrant's games and the sum of its places, a chunk of games at a time."""
    count, sums = np.zeros(n, dtype=np.int64), np.zeros(n)
    for lo in range(0, arr.games, games.CHUNK):
        seats, places = arr.seats[lo:lo + games.CHUNK], arr.places[lo:lo + games.CHUNK]
        taken = seats >= 0
        count += np.bincount(seats[taken], minlength=n)
        sums += np.bincount(seats[taken], weights=places[taken], minlength=n)
    return count, sums


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
        likelihood = Likelihood(GameStages(arr), n, prior)
        games, sums = _entrant_places(arr, n)
        self.entrant_games = games.tolist()
        self.mean_place = [float(sums[i] / games[i]) if games[i] else None for i in range(n)]
        with one_blas_thread():
            theta = likelihood.maximum()
            self.theta = theta.tolist()
            _, hess = likelihood.derivatives(theta)
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
            for who, w, chosen, game, seat in game_blocks(sub, 0, sub.games):
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
    `plackett_luce.EXACT_LIMIT` and `EXACT_GROUPS`, beyond them in its normal approximation
    (`NormalBootstrap`)."""
    arr = as_arrays(records, entrants)
    shared = int((np.bincount(arr.group) > 1).sum()) if arr.groups < arr.games else 0  # groups of more than one game
    counted = None if shared > EXACT_GROUPS else exact_kinds(arr)
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
    """The bootstrap's seed for a tournament seed (0 if there is none)."""
    return derive_seed(0 if seed is None else seed, "bootstrap")
