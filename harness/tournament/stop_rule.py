"""The one rule of stopping and finishing, the runner's and `verify`'s: the early-stopping
decision after a round (`stop_check`), whether it ends the tournament (`stops`), and
whether a tournament is finished (`is_finished`)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..model import StopDecision
from ..ratings.paired import paired_deals
from ..ratings.sprt import deal_scores, sprt
from ..ratings.stopping import check_settled, stop_note
from .config import TournamentConfig
from .disqualify import disqualifications, judges
from .schedule import GameSpec, game_id, spec_of
from .tally import GameTally

def stops(decision: Mapping[str, Any] | None) -> bool:
    """Whether an early-stopping decision (`stop_check`) ends the tournament: its order
    settled, or its SPRT accepted or rejected."""
    return decision is not None and bool(decision.get("stop"))


def is_finished(decision: Mapping[str, Any] | None, done: int, scheduled: int) -> bool:
    """The one rule of a finished (not league) tournament, the runner's and `verify`'s: an
    early stop decided it (`stops`), or all `scheduled` games are `done`."""
    return stops(decision) or done == scheduled


def stop_check(cfg: TournamentConfig, rounds: Sequence[Sequence[GameSpec]], r: int,
                records: Mapping[int, Mapping[str, Any]] | GameTally,
                specs: Callable[[], Iterable[GameSpec]] | None = None) -> StopDecision:
    """The early-stopping decision after round `r` (0-based), from the games of rounds
    0..r only (and those of the fields before). `settled`: is the order of the entrants
    still in (not disqualified by those games) settled by the anytime-valid test? `sprt`:
    has the log-likelihood ratio of the candidate's deal scores crossed a bound? A
    boundary that an earlier run already went past (a later round has games) did not
    stop that run, so it is not asked again (same games, same answer).

    `rounds`: the current field's schedule in rounds (consecutive game indices);
    `records`: the games by index, or the runner's `GameTally`; `specs`: with a tally,
    the tournament's games as far as known (for disqualifications)."""
    budget = sum(len(x) for x in rounds)
    base = rounds[0][0].index if rounds and rounds[0] else 0
    end = rounds[r][-1].index + 1 if rounds[r] else base  # rounds 0..r: the games below this
    games = sum(len(x) for x in rounds[: r + 1])
    last = r == len(rounds) - 1
    tally = records if isinstance(records, GameTally) else None
    top = tally.top if tally is not None else max(records.keys(), default=-1)  # type: ignore[union-attr]
    passed = r + 1 < len(rounds) and len(rounds[r + 1]) > 0 and top >= rounds[r + 1][0].index
    upto: Any = (tally.arrays(below=end, among=cfg.entrants) if tally is not None
                 else [rec for i, rec in records.items() if i < end])  # type: ignore[union-attr]
    looked = games >= cfg.stop.min_games and not passed
    st = cfg.stop
    out: StopDecision = {"rule": str(cfg.stop_when), "games": games, "budget": budget, "round": r + 1,
                           "rounds": len(rounds)}
    if cfg.stop_when == "sprt":
        assert st.candidate is not None
        test = sprt(deal_scores(paired_deals(upto, cfg.entrants), st.candidate, st.baseline),
                    st.elo0, st.elo1, st.alpha, st.beta)
        decision = test["decision"] if looked else None
        reason = {"H1": "accepted", "H0": "rejected"}.get(decision or "", "budget" if last else "playing")
        out |= {"candidate": st.candidate, "baseline": st.baseline, "sprt": test}
    else:
        settled = False
        if looked:
            pol = cfg.disqualify
            if tally is not None:
                assert specs is not None
                dqs = disqualifications(specs() if judges(pol) else (), cfg.standing, pol,
                                        tally.disqualification_records(below=end) if judges(pol) else (),
                                        tally.build_failures(below=end))
            else:
                dqs = disqualifications([spec_of(rec) for rec in sorted(upto, key=lambda x: x["id"])
                                         if rec["id"] < base] + [s for x in rounds for s in x] if judges(pol) else (),
                                        cfg.standing, pol, upto)
            dq = {d.entrant for d in dqs}
            settled = check_settled(upto, cfg.entrants, top=st.top, confidence=st.confidence,
                                    among=[e for e in cfg.entrants if e not in dq]).settled
        reason = "settled" if settled else "budget" if last else "playing"
        out |= {"top": st.top, "confidence": st.confidence}
    out |= {"reason": reason, "stop": reason in ("settled", "accepted", "rejected")}
    out["note"] = stop_note(reason, games, budget, out)
    return out


def history_specs(tally: GameTally, below: int | None = None) -> Iterator[GameSpec]:
    """The games of `tally` (with an index below `below`) as disqualification reads their
    specs: index and seats."""
    for r in tally.disqualification_records(below=below):
        yield GameSpec(r["id"], game_id(r["id"]), tuple(r["seats"]), 0, r["id"])
