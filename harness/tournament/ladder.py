"""The strength ladder: every bot of a ladder file heads-up against every other (its own
2-player round-robin, as the file says) and the same bots at 4-player tables (the file
with `table_size: 4`), each with its intervals, as Markdown.

The heads-up results are judged pair by pair (`ratings.pairwise`: each pair's games, its
win share with a Wilson interval, and the board's mark for the pair); the 4-player
tables by their own board (Plackett–Luce θ with its interval, the neighbours' marks).
`run_ladder` plays both (continuing results folders already there) and returns the
Markdown; `replace_block` puts it into a document between two marker lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import yaml

from ..ledger.journal import read_journal
from ..ratings.pairwise import PairResult, heads_up
from ..report.files import read_json
from .config import ConfigError, TournamentConfig, load_config
from .schedule import tables_for

BEGIN = "<!-- ladder: begin (tools/ladder.py writes this block) -->"
END = "<!-- ladder: end -->"


@dataclass(frozen=True)
class LadderPlan:
    """The two tournaments of a ladder run."""

    heads_up: TournamentConfig
    four: TournamentConfig | None


def ladder_plan(path: Path, games: int | None = None, games4: int | None = None, bots: Sequence[str] = (),
                challenger: str | None = None, output: Path | None = None, parallel: int | None = None) -> LadderPlan:
    """The heads-up and 4-player tournaments of the ladder file `path`. `games` and
    `games4` replace the games per table (per pair heads-up; per table of four; 0 plays
    no 4-player tables); `bots` keeps only those bots (by name); with `challenger` the
    heads-up run is a gauntlet of that bot against each other one; `output` replaces
    the results folder (the 4-player one is beside it, its name ending in `-4`); `parallel`
    the worker processes."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or not isinstance(raw.get("bots"), list):
        raise ConfigError(f"{path}: a ladder file needs a list of bots")
    entries = [b for b in raw["bots"] if not bots or (isinstance(b, dict) and b.get("name") in bots)]
    missing = sorted(set(bots) - {b.get("name") for b in entries if isinstance(b, dict)})
    if missing:
        raise ConfigError(f"{path}: bots: no bot named {', '.join(map(repr, missing))}")
    out = Path(output) if output is not None else None
    two: dict[str, Any] = {"bots": entries, "table_size": 2, "games_per_table": games, "parallel": parallel}
    if out is not None:
        two["output"] = str(out.resolve())
    if challenger is not None:
        two |= {"format": "gauntlet", "challengers": [challenger]}
    heads = load_config(path, two)
    if games4 == 0 or len(entries) < 4:
        return LadderPlan(heads, None)
    four = load_config(path, {"bots": entries, "table_size": 4, "games_per_table": games4,
                              "name": f"{heads.name}-4", "output": str(Path(str(heads.output) + "-4")),
                              "parallel": parallel})
    return LadderPlan(heads, four)


def _records(out: Path) -> list[dict[str, Any]]:
    path = out / "games.jsonl"
    return sorted(read_journal(path).values(), key=lambda r: r["id"]) if path.exists() else []


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def heads_up_markdown(results: Sequence[PairResult]) -> str:
    """The heads-up table: a row per pair, the one ahead first."""
    lines = ["| pair (ahead first) | games | wins of the first | share [95 % Wilson] | board's mark |",
             "|---|---|---|---|---|"]
    for p in results:
        mark = "**settled**" if p.settled else p.verdict
        lines.append(f"| {p.upper} – {p.lower} | {p.games} | {p.upper_wins:g} | {_pct(p.share)} "
                     f"[{_pct(p.low)}, {_pct(p.high)}] | {mark} |")
    return "\n".join(lines)


def board_markdown(board: Mapping[str, Any]) -> str:
    """A 4-player board as a table: wins, mean place, θ with its interval, the mark."""
    lines = ["| rank | entrant | games | wins | mean place | PL θ [95 %] | above the next |",
             "|---|---|---|---|---|---|---|"]
    for row in board["entrants"]:
        ci = "" if row.get("ci_low") is None else f" [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}]"
        nxt = "" if row.get("settled_above") is None else ("**settled**" if row["settled_above"] else row["next"])
        lines.append(f"| {row['rank']} | {row['entrant']} | {row['games']} | {row['wins']:g} | "
                     f"{row['mean_place']:.2f} | {row['pl_strength']:+.2f}{ci} | {nxt} |")
    return "\n".join(lines)


def _own_pairs(plan: LadderPlan) -> list[PairResult]:
    return heads_up(_records(Path(plan.heads_up.output)), [b.name for b in plan.heads_up.bots])


def _also_pairs(plan: LadderPlan, also: Sequence[Path], own: Iterable[frozenset[str]],
                own_label: str = "") -> list[PairResult]:
    """The heads-up pairs of the results folders `also` (pairs played by other runs, e.g.
    one gauntlet per opponent). A folder without games, or a pair that is one of `own`
    (the pairs of the plan's folder, said as `own_label`) or in two folders, is refused:
    the same deals played twice are not twice the evidence."""
    names = [b.name for b in plan.heads_up.bots]
    where = {key: own_label or str(plan.heads_up.output) for key in own}
    pairs = []
    for folder in map(Path, also):
        if not (folder / "games.jsonl").is_file():
            raise ConfigError(f"no results folder (games.jsonl) at {folder}")
        for p in heads_up(_records(folder), names):
            key = frozenset((p.upper, p.lower))
            if key in where:
                raise ConfigError(f"the pair {p.upper} – {p.lower} is in two results folders, {where[key]} "
                                  f"and {folder}: tabulate one of them")
            where[key] = str(folder)
            pairs.append(p)
    return pairs


def _markdown(plan: LadderPlan, pairs: Sequence[PairResult]) -> str:
    parts = [f"Heads-up (`{plan.heads_up.name}`, 2-player duplicate games, each pair judged on its own games):",
             "", heads_up_markdown(pairs)]
    board = Path(plan.four.output) / "leaderboard.json" if plan.four is not None else None
    if plan.four is not None and board is not None and board.exists():
        parts += ["", f"4-player tables (`{plan.four.name}`, duplicate, every order round the table):", "",
                  board_markdown(read_json(board))]
    return "\n".join(parts) + "\n"


def ladder_markdown(plan: LadderPlan, also: Sequence[Path] = ()) -> str:
    """The ladder's Markdown from the results folders of `plan` (the heads-up games, and
    the 4-player board as its run published it, if there is one), with the pairs of the
    heads-up folders `also` after the plan's (`_also_pairs` says which are refused)."""
    own = _own_pairs(plan)
    return _markdown(plan, own + _also_pairs(plan, also, (frozenset((p.upper, p.lower)) for p in own)))


def run_ladder(plan: LadderPlan, play: Callable[[TournamentConfig], object], also: Sequence[Path] = ()) -> str:
    """Play the ladder's tournaments with `play` (the command line passes the runner;
    a results folder already there is continued) and return its Markdown, as
    `ladder_markdown`; the folders `also` are checked against the pairs the plan will
    play before anything is played."""
    extra = _also_pairs(plan, also, (frozenset(t) for t in tables_for(plan.heads_up)),
                        f"{plan.heads_up.output} (to be played)")
    play(plan.heads_up)
    if plan.four is not None:
        play(plan.four)
    return _markdown(plan, _own_pairs(plan) + extra)


def replace_block(text: str, block: str) -> str:
    """`text` with what lies between the ladder's marker lines replaced by `block`."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"no ladder block: the document needs the lines {BEGIN!r} and {END!r}, in that order")
    return text[:start + len(BEGIN)] + "\n\n" + block.strip("\n") + "\n\n" + text[end:]
