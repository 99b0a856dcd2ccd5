"""The sequential probability ratio test of early stopping (``stop_when: sprt``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .paired import PairedDeals


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
