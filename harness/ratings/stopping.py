"""Early stopping's question (is the order settled yet?) and the sentences that say where it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .games import GameArrays, as_arrays
from .paired import paired_deals
from .plackett_luce import PRIOR, pl_theta, rank_order
from .significance import CONFIDENCE, neighbour_tests


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
