"""Leaderboards written as Markdown, JSON and CSV, and shown in the terminal."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Mapping


COLUMNS = ["rank", "entrant", "mu", "sigma", "conservative", "games", "wins", "win_rate",
           "mean_place", "mean_score", "mean_phases", "faults"]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}".rstrip("0").rstrip(".") if v != int(v) or abs(v) < 1e15 else str(v)
    return str(v)


def to_markdown(board: Mapping[str, Any]) -> str:
    """The leaderboard and the head-to-head table as Markdown."""
    out = [f"# Leaderboard: {board['name']}", "", f"{board['games']} games, seed {board['seed']}. "
           "Ranked by TrueSkill μ − 3σ.", ""]
    head = ["rank", "entrant", "μ", "σ", "μ − 3σ", "games", "wins", "win rate", "mean place",
            "mean score", "mean phases", "faults"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for row in board["entrants"]:
        name = row["entrant"] + (f" (disqualified: {row['disqualified']})" if row.get("disqualified") else "")
        vals = [row["rank"], name] + [row[k] for k in COLUMNS[2:]]
        out.append("| " + " | ".join(_fmt(v) for v in vals) + " |")
    names = [row["entrant"] for row in board["entrants"]]
    out += ["", "## Head to head", "", "Row entrant placed ahead / behind / level with column entrant.", ""]
    out.append("| | " + " | ".join(names) + " |")
    out.append("|" + "---|" * (len(names) + 1))
    h2h = board["head_to_head"]
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append("—")
            else:
                h = h2h[a][b]
                cells.append(f"{h['ahead']}/{h['behind']}/{h['tied']}" if h["games"] else "")
        out.append(f"| {a} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def to_csv(board: Mapping[str, Any]) -> str:
    """The leaderboard as CSV with the columns of `COLUMNS`."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for row in board["entrants"]:
        w.writerow([row[k] for k in COLUMNS])
    return buf.getvalue()


def head_to_head_csv(board: Mapping[str, Any]) -> str:
    """Head-to-head counts as CSV: entrant, opponent, games, ahead, behind, tied."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["entrant", "opponent", "games", "ahead", "behind", "tied"])
    for a, row in board["head_to_head"].items():
        for b, h in row.items():
            w.writerow([a, b, h["games"], h["ahead"], h["behind"], h["tied"]])
    return buf.getvalue()


def write_leaderboard(out: Path, board: Mapping[str, Any]) -> None:
    """Write leaderboard.md/.json/.csv and head_to_head.csv into `out`."""
    (out / "leaderboard.json").write_text(json.dumps(board, indent=1, sort_keys=False) + "\n")
    (out / "leaderboard.md").write_text(to_markdown(board))
    (out / "leaderboard.csv").write_text(to_csv(board))
    (out / "head_to_head.csv").write_text(head_to_head_csv(board))


def print_leaderboard(board: Mapping[str, Any], console: Any = None) -> None:
    """Show the leaderboard as a terminal table."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    if not console.is_terminal:
        console.width = max(console.width, 130)
    t = Table(title=f"{board['name']}: {board['games']} games (seed {board['seed']})")
    for h in ["#", "entrant", "μ", "σ", "μ−3σ", "games", "wins", "win %", "place", "score", "phases", "faults"]:
        t.add_column(h, justify="left" if h == "entrant" else "right")
    for row in board["entrants"]:
        name = row["entrant"] + (" [red](DQ)[/red]" if row.get("disqualified") else "")
        t.add_row(str(row["rank"]), name, f"{row['mu']:.2f}", f"{row['sigma']:.2f}", f"{row['conservative']:.2f}",
                  str(row["games"]), str(row["wins"]), f"{100 * row['win_rate']:.1f}", f"{row['mean_place']:.2f}",
                  f"{row['mean_score']:.1f}", f"{row['mean_phases']:.2f}", str(row["faults"]))
    console.print(t)
