"""How sure the order is: the tests of paired deal outcomes (`paired`) behind the settled marks.

With equal entrants every informative deal goes either way with probability ½ (duplicate
deals: exactly, by the seat rotation; plain deals: on average over the seats, which only
makes the tests below more careful), so:

- fixed size: the exact two-sided sign test (binomial, p = ½) of the informative deals,
  with its Clopper–Pearson interval for the share of them the upper entrant did better on;
- sequential: the same outcomes as a running test (Robbins' 1970 beta-binomial mixture
  martingale; Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform, nonparametric,
  nonasymptotic confidence sequences"): its running maximum M stays below 1/α with
  probability ≥ 1 − α over every deal for ever (Ville's inequality), so the p-value
  1 / max M may be looked at as often as one likes;
- several pairs: Holm's step-down correction over every pair of entrants that met, so the
  chance that any "settled" on a board is wrong is at most 1 − confidence (family-wise,
  whatever the true strengths).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Sequence

import numpy as np

from . import games
from .games import changes
from .paired import PairedDeals

CONFIDENCE = 0.95
MIXTURE = 4.0  # the Beta(a, a) mixing prior of the sequential test: tuned to tens-hundreds of deals
NO_EVIDENCE_Z = 1.0  # a difference is "plausible" when the upper entrant leads by ≥ 1 standard error


def _special() -> Any:
    """`scipy.special`, imported where first used: a third of a second that a run need not
    spend before its games start (see `tournament.warmup`)."""
    from scipy import special
    return special


def log_mixture(k: Any, m: Any, a: float = MIXTURE) -> Any:
    """ln M: the beta-binomial mixture martingale of `k` successes in `m` fair coin flips,
    2^m · B(a + k, a + m − k) / B(a, a) (Robbins 1970): its expectation is 1 under p = ½."""
    k, m = np.asarray(k, dtype=float), np.asarray(m, dtype=float)
    return m * math.log(2.0) + _special().betaln(a + k, a + m - k) - _special().betaln(a, a)


def running_max_mixture(deals: PairedDeals, a: float = MIXTURE) -> np.ndarray:
    """n×n (symmetric): the largest log mixture martingale over every prefix of each
    pair's informative deals, in game order (0 for pairs without one). Whole pairs
    a chunk of rows at a time."""
    n = len(deals.entrants)
    out = np.zeros((n, n))
    if not len(deals.pair):
        return out
    bounds = np.r_[0, changes(deals.pair), len(deals.pair)]
    lo = 0
    while lo < len(deals.pair):
        hi = int(bounds[min(int(np.searchsorted(bounds, lo + games.CHUNK * 4)), len(bounds) - 1)])
        keep = deals.sign[lo:hi] != 0
        if keep.any():
            pid = deals.pair[lo:hi][keep]
            s = (deals.sign[lo:hi][keep] > 0).astype(float)
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


def sign_test(wins: Any, losses: Any) -> np.ndarray:
    """The exact two-sided sign test's p-value: 2·P(Bin(n, ½) ≤ min(wins, losses)), at most 1."""
    w, l = np.atleast_1d(np.asarray(wins, dtype=int)), np.atleast_1d(np.asarray(losses, dtype=int))
    return np.minimum(1.0, 2.0 * _special().bdtr(np.minimum(w, l), w + l, 0.5))


def clopper_pearson(k: Any, n: Any, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact (Clopper–Pearson) interval of a binomial share, k successes of n: the q
    where P(X ≥ k | q) and P(X ≤ k | q) are (1 − confidence)/2, the quantiles of
    Beta(k, n − k + 1) and Beta(k + 1, n − k); [0, 1] for n = 0."""
    half = (1 - confidence) / 2
    ks, ns = np.atleast_1d(np.asarray(k, dtype=int)), np.atleast_1d(np.asarray(n, dtype=int))
    lo = np.where(ks > 0, _special().betaincinv(np.maximum(ks, 1), np.maximum(ns - ks + 1, 1), half), 0.0)
    hi = np.where(ks < ns, _special().betaincinv(ks + 1, np.maximum(ns - ks, 1), 1 - half), 1.0)
    return lo, hi


def mixture_interval(k: Any, m: Any, confidence: float, a: float = MIXTURE) -> tuple[np.ndarray, np.ndarray]:
    """The anytime-valid interval of the share (the confidence sequence of the same mixture):
    the q with B(a+k, a+m−k)/B(a, a) / (q^k (1−q)^(m−k)) < 1/(1 − confidence), by bisection."""
    k, m = np.atleast_1d(np.asarray(k, dtype=float)), np.atleast_1d(np.asarray(m, dtype=float))
    bound = math.log(1 / (1 - confidence)) - (_special().betaln(a + k, a + m - k) - _special().betaln(a, a))
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
        top = running_max_mixture(deals, a)
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
