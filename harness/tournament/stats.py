"""How sure the standings are: a batch Plackett–Luce rating, bootstrap confidence over
deals, which neighbours' order is settled, the luck share of the variance, and how many
more games would settle the rest.

Pure functions of game records (the dicts of games.jsonl: ``id``, ``group``, ``seats``,
``places``, ...); records whose ``reason`` is ``not_played`` and games of fewer than two
seats are left out. Everything is deterministic: records are taken in game-index order and
the bootstrap draws from ``random.Random(seed)``.

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
    resamples; the order of two entrants is *settled* at confidence c when the one above
    stays above in at least a share c of the resamples (and there are enough deal groups
    to say anything at c at all: `min_groups`).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from statistics import NormalDist
from typing import Any, Iterable, Iterator, Mapping, Sequence, TypeVar

import numpy as np

RESAMPLES = 1000
CONFIDENCE = 0.95
PRIOR = 1.0

# A stage of a game: (entrants in the risk set, weight, chosen weight of each of them).
Stage = tuple[tuple[int, ...], float, tuple[float, ...]]


def played(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records that count for statistics, in game-index order."""
    return sorted((r for r in records if r.get("reason") != "not_played" and len(r["seats"]) >= 2),
                  key=lambda r: r["id"])


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
        theta = np.array(start, dtype=float)
        diag = slice(None, None, n + 1)  # the diagonal of a flat n×n matrix
        for _ in range(max_iter):
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
            step = np.linalg.solve(hess.reshape(n, n), grad)
            big = float(np.abs(step).max())
            if big > 1.0:
                ll, t = self._loglik(data, theta), 1.0
                while t > 1e-6:
                    cand = theta + t * step
                    if self._loglik(data, cand) >= ll:
                        break
                    t /= 2
                theta = cand
            else:
                theta = theta + step
            if big < tol:
                break
        return theta

    def _loglik(self, data: Sequence[tuple[np.ndarray, ...]], theta: np.ndarray) -> float:
        ll = float((self.prior * (theta - 2.0 * np.logaddexp(0.0, theta))).sum())
        for who, w, chosen_w, _, _ in data:
            x = theta[who]
            top = x.max(axis=1)
            lse = top + np.log(np.exp(x - top[:, None]).sum(axis=1))
            ll += float((chosen_w * x).sum() - (w * lse).sum())
        return ll


class DealBootstrap:
    """The games of `entrants` prepared for fitting and resampling by deal group.

    Everything a resample adds up lives in one flat vector: per risk set its weight and the
    chosen weight of each member, then per entrant its sum of places and its games. A group
    is a list of (slot, value); groups with the same list are one type, so a resample only
    counts how often it drew each type.
    """

    def __init__(self, records: Iterable[Mapping[str, Any]], entrants: Sequence[str], prior: float = PRIOR) -> None:
        self.entrants = list(entrants)
        self.prior = prior
        index = {e: i for i, e in enumerate(self.entrants)}
        n = self.n = len(self.entrants)
        groups = deal_groups(r for r in records if all(s in index for s in r["seats"]))
        self.groups = len(groups)
        self.games = sum(len(g) for g in groups)
        base: dict[tuple[int, ...], int] = {}
        size = 0
        g_rows: list[dict[int, float]] = []
        for grp in groups:
            table: dict[tuple[int, ...], list[float]] = {}
            flat: dict[int, float] = defaultdict(float)
            for r in grp:
                seats = [index[s] for s in r["seats"]]
                _merge(game_stages(seats, r["places"]), table)
                for i, p in zip(seats, r["places"]):
                    flat[-2 * i - 1] += p  # places: negative slots until the sets are numbered
                    flat[-2 * i - 2] += 1
            for key, row in table.items():
                if key not in base:
                    base[key] = size
                    size += len(row)
                for j, x in enumerate(row):
                    flat[base[key] + j] += x
            g_rows.append(flat)
        self._place_slot = place_slot = size
        self._size = size + 2 * n
        types: dict[tuple[tuple[int, float], ...], int] = {}
        self._type_rows: list[tuple[tuple[int, float], ...]] = []
        self._group_type: list[int] = []
        for flat in g_rows:
            sig = tuple(sorted((k if k >= 0 else place_slot - k - 1, v) for k, v in flat.items()))
            if sig not in types:
                types[sig] = len(self._type_rows)
                self._type_rows.append(sig)
            self._group_type.append(types[sig])
        self._sets_at = list(base.items())
        # The type rows as flat arrays, for adding up a resample in numpy.
        self._row_type = np.array([t for t, row in enumerate(self._type_rows) for _ in row], dtype=np.intp)
        self._row_slot = np.array([slot for row in self._type_rows for slot, _ in row], dtype=np.intp)
        self._row_value = np.array([v for row in self._type_rows for _, v in row], dtype=float)
        self._refits = _Refits(self._sets_at, n, prior)
        full = self._total(Counter(self._group_type))
        sets = self._sets(full)
        # Hunter's MM climbs surely but slowly near the top; Newton steps finish the job.
        rough = [math.log(g) for g in fit_pl(sets, n, prior, tol=1e-4, max_iter=2000)]
        self.theta = newton_pl(sets, n, rough, prior, tol=1e-9)
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

    def resamples(self, count: int, seed: int) -> Iterator[tuple[list[float], list[float | None]]]:
        """`count` bootstrap resamples: (θ of each entrant, mean place of each entrant or
        None), drawn from `random.Random(seed)` (none when there are no games)."""
        if not self.groups:
            return
        rng = random.Random(seed)
        G = self.groups
        types = len(self._type_rows)
        start = np.array(self.theta)
        ps = self._place_slot
        for _ in range(count):
            drawn = np.bincount(rng.choices(self._group_type, k=G), minlength=types)
            acc = np.bincount(self._row_slot, weights=self._row_value * drawn[self._row_type], minlength=self._size)
            yield self._refits.fit(acc, start).tolist(), self._places(acc[ps:].tolist())


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

    def settled(self, upper: str, lower: str) -> bool:
        """Whether `upper` stays above `lower` in at least a share `confidence` of resamples
        (never with fewer deal groups than `min_groups` asks)."""
        if not (self.entrant_games.get(upper) and self.entrant_games.get(lower)) or self.groups < min_groups(self.confidence):
            return False
        return self.above_share(upper, lower) >= self.confidence

    def games_to_settle(self, upper: str, lower: str) -> int | None:
        """About how many more games (of the tournament, played as so far) would settle
        `upper` above `lower`: the standard error of θu − θl shrinks as 1/√games, so
        games needed ≈ games × (z · se / diff)² with z the one-sided normal quantile of
        the confidence. 0 when settled; None when `upper` does not rate above `lower`."""
        if self.settled(upper, lower):
            return 0
        diff = self.theta[upper] - self.theta[lower]
        se = self.diff_se(upper, lower)
        if diff <= 0 or not math.isfinite(se) or self.games == 0:
            return None
        z = NormalDist().inv_cdf(self.confidence)
        return max(1, math.ceil(self.games * (z * se / diff) ** 2 - self.games))


def min_groups(confidence: float) -> int:
    """The fewest deal groups that can settle anything at `confidence`: a bootstrap of a
    few groups that all went one way puts every resample that way, though so few say
    little. As for a sign test, k groups all one way are needed for 2^-k <= 1 - confidence
    (5 at 95 %, 7 at 99 %)."""
    return max(1, math.ceil(math.log2(1 / (1 - confidence))))


def _above(a: float, b: float) -> float:
    return 1.0 if a > b else 0.5 if a == b else 0.0


def rank_order(theta: Mapping[str, float], games: Mapping[str, int], among: Iterable[str] | None = None) -> list[str]:
    """Entrants with games, strongest first by θ (then by name)."""
    names = [e for e in (among if among is not None else theta) if games.get(e)]
    return sorted(names, key=lambda e: (-theta[e], e))


def analyse(
    records: Iterable[Mapping[str, Any]], entrants: Sequence[str], resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE, seed: int = 0, prior: float = PRIOR,
) -> Analysis:
    """Fit θ on all games and bootstrap it (and mean place) over deal groups."""
    data = DealBootstrap(records, entrants, prior)
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
        samples=samples,
    )


@dataclass
class SettledCheck:
    """The answer of `check_settled`."""

    settled: bool
    order: list[str]
    pairs: list[tuple[str, str]]
    resamples_used: int


def check_settled(
    records: Iterable[Mapping[str, Any]], entrants: Sequence[str], top: int | None = None,
    confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = 0, prior: float = PRIOR,
    among: Sequence[str] | None = None,
) -> SettledCheck:
    """Whether the order by θ is settled at `confidence`: every adjacent pair among the
    first `top` + 1 entrants (all of them when `top` is None) stays in order in at least a
    share `confidence` of the `resamples` resamples. That is `Analysis.settled` for those
    pairs, with the same resamples, but the bootstrap stops as soon as the answer cannot
    change, which for an unsettled order is usually early. `among` limits the order to
    some entrants (e.g. those not disqualified); all games are fitted either way."""
    data = DealBootstrap(records, entrants, prior)
    order = rank_order(dict(zip(data.entrants, data.theta)), dict(zip(data.entrants, data.entrant_games)), among)
    k = len(order) - 1 if top is None else min(top, len(order) - 1)
    pairs = list(zip(order[:k], order[1:k + 1]))
    if not pairs or data.groups < min_groups(confidence):
        return SettledCheck(False, order, pairs, 0)
    idx = [(data.entrants.index(a), data.entrants.index(b)) for a, b in pairs]
    need = confidence * resamples  # a pair is settled when its successes reach this
    wins = [0.0] * len(pairs)
    used = 0
    for th, _ in data.resamples(resamples, seed):
        used += 1
        left = resamples - used
        for p, (i, j) in enumerate(idx):
            wins[p] += _above(th[i], th[j])
        if any(w + left < need for w in wins):
            return SettledCheck(False, order, pairs, used)
        if all(w >= need for w in wins):
            return SettledCheck(True, order, pairs, used)
    return SettledCheck(all(w >= need for w in wins), order, pairs, used)


def pairs_met(records: Iterable[Mapping[str, Any]], entrants: Sequence[str]) -> dict[str, dict[str, int]]:
    """How many games each pair of entrants played at the same table."""
    met = {a: {b: 0 for b in entrants if b != a} for a in entrants}
    for r in played(records):
        seats = [s for s in r["seats"] if s in met]
        for a in seats:
            for b in seats:
                if a != b:
                    met[a][b] += 1
    return met


def luck_share(records: Iterable[Mapping[str, Any]], entrants: Sequence[str]) -> dict[str, Any]:
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
    by: dict[str, dict[tuple[str, ...], dict[Any, list[int]]]] = {e: {} for e in entrants}
    for r in played(records):
        key = r.get("group", ("game", r["id"]))
        table = tuple(sorted(r["seats"]))
        for e, p in zip(r["seats"], r["places"]):
            if e in by:
                by[e].setdefault(table, {}).setdefault(key, []).append(p)
    per: dict[str, Any] = {}
    num = den = 0.0
    for e in entrants:
        sizes = Counter(len(g) for cell in by[e].values() for g in cell.values())
        if not sizes:
            per[e] = None
            continue
        k = sizes.most_common(1)[0][0]
        ss_game = ss_deal = 0.0
        df_game = df_deal = 0
        for cell in by[e].values():
            full = [g for g in cell.values() if len(g) == k]
            if len(full) < 2:
                continue
            xs = [p for g in full for p in g]
            m = sum(xs) / len(xs)
            ss_game += sum((x - m) ** 2 for x in xs)
            df_game += len(xs) - 1
            ss_deal += sum((sum(g) / k - m) ** 2 for g in full)
            df_deal += len(full) - 1
        if k < 2 or not df_deal or not ss_game:
            per[e] = None
            continue
        v_game, v_deal = ss_game / df_game, ss_deal / df_deal
        share = 1 - k * v_deal / v_game
        per[e] = {"k": k, "games": df_game + len(by[e]), "v_game": round(v_game, 5), "v_deal": round(v_deal, 5),
                  "share": round(share, 4)}
        num += df_game * k * v_deal
        den += df_game * v_game
    total = None if not den else 1 - num / den
    return {
        "share": None if total is None else round(total, 4),
        "efficiency": None if total is None or total >= 1 else round(1 / (1 - total), 3),
        "by_entrant": per,
    }


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


def report(
    records: Iterable[Mapping[str, Any]], entrants: Sequence[str], order: Sequence[str] | None = None,
    resamples: int = RESAMPLES, confidence: float = CONFIDENCE, seed: int = 0, prior: float = PRIOR,
) -> tuple[Analysis, dict[str, Any]]:
    """The analysis and the ``statistics`` section of a leaderboard: per entrant θ with
    its interval and mean place with its interval; for each pair of neighbours in `order`
    (the leaderboard's; default the order by θ) the share of resamples that keep it, whether
    it is settled and about how many more games would settle it; the games each pair met;
    the luck share. Numbers are rounded for publishing."""
    recs = played(records)
    a = analyse(recs, entrants, resamples, confidence, seed, prior)
    shown = list(order) if order is not None else a.order()
    neighbours = []
    for upper, lower in zip(shown, shown[1:]):
        share = a.above_share(upper, lower) if a.entrant_games[upper] and a.entrant_games[lower] else None
        more = a.games_to_settle(upper, lower) if share is not None else None
        se = a.diff_se(upper, lower) if share is not None else None
        neighbours.append({
            "upper": upper, "lower": lower,
            "diff": round(a.theta[upper] - a.theta[lower], 4),
            "se": None if se is None or not math.isfinite(se) else round(se, 4),
            "share": None if share is None else round(share, 4),
            "settled": a.settled(upper, lower),
            "games_to_settle": more,
        })
    pl = a.order()
    ents = {}
    for e in entrants:
        ci, pci = a.ci[e], a.place_ci[e]
        mp = a.mean_place[e]
        ents[e] = {
            "pl_strength": round(a.theta[e], 4), "ci_low": _r(ci and ci[0]), "ci_high": _r(ci and ci[1]),
            "games": a.entrant_games[e], "mean_place": _r(mp), "place_ci_low": _r(pci and pci[0]),
            "place_ci_high": _r(pci and pci[1]),
        }
    section = {
        "method": {
            "rating": "Plackett-Luce on places, fitted on all games at once (MM, Hunter 2004); "
                      "pl_strength = ln(strength); a shared place counts as every order of the tied "
                      f"entrants equally; prior: {prior:g} virtual win and loss per entrant against a "
                      "reference of strength 0",
            "bootstrap": "resamples of whole deal groups (the games of one duplicate deal; with plain "
                         "deals single games), with replacement; percentile intervals",
            "settled": "the upper entrant stays above the lower one in at least a share `confidence` "
                       f"of the resamples, with at least {min_groups(confidence)} deal groups played",
            "games_to_settle": "more games needed ~ games x (z x se / diff)^2 - games, z the one-sided "
                               "normal quantile of `confidence`, se the bootstrap standard error of the "
                               "difference of pl_strength",
        },
        "confidence": confidence,
        "resamples": a.resamples,
        "seed": seed,
        "games": a.games,
        "deal_groups": a.groups,
        "pl_order": pl,
        "pl_order_settled": [a.settled(u, l) for u, l in zip(pl, pl[1:])],
        "entrants": ents,
        "neighbours": neighbours,
        "pairs_met": pairs_met(recs, entrants),
        "luck": luck_share(recs, entrants),
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


def stop_note(reason: str, games: int, budget: int) -> str:
    """The sentence a report gives for why the games stopped."""
    if reason == "settled":
        return f"settled after {games} games (budget {budget})"
    if reason == "budget":
        return f"budget of {budget} games reached"
    return f"stopped after {games} of {budget} games ({reason})"
