"""The ``statistics`` section of a leaderboard: every number of how sure the standings are,
with the sentences that say how each was worked out."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

from .bootstrap import RESAMPLES, Analysis, analyse
from .games import GameArrays, as_arrays
from .luck import luck_share
from .paired import SPARSE_ABOVE, paired_deals, pairs_met
from .plackett_luce import PRIOR, board_order
from .significance import CONFIDENCE, min_informative, neighbour_tests


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
            "rating": "Plackett-Luce on places, fitted on all games at once (maximum likelihood by Newton's method); "
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
