"""Leaderboards written as Markdown, JSON and CSV, and shown in the terminal."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any, Mapping

from ..text import REORDERING
from .columns import COLUMNS, STATS_COLUMNS
from .fairplay import collusion_lines, collusion_stats, team_cell, team_note, teams_stats

MARKS = {"settled": "✓", "open": "≈", "no evidence of a difference": "≈", "too few deals": "·"}
MATRIX_MAX = 20
"""Entrants up to which leaderboard.md and stats.md show every pair as a matrix; beyond,
the pairs are in head_to_head.csv and leaderboard.json only (the Markdown stays O(entrants))."""


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}".rstrip("0").rstrip(".") if v != int(v) or abs(v) < 1e15 else str(v)
    return str(v)


def _pct(c: float) -> str:
    return f"{100 * c:g} %"


def _interval(row: Mapping[str, Any]) -> str:
    """'1.23 [0.80, 1.70]': the batch rating and its interval."""
    if row.get("pl_strength") is None:
        return ""
    if row.get("ci_low") is None:
        return f"{row['pl_strength']:.2f}"
    return f"{row['pl_strength']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"


def _next(row: Mapping[str, Any]) -> str:
    """The verdict on this row's place above the next: settled, open (more games could
    settle it), no evidence of a difference, too few deals."""
    v = row.get("settled_above")
    if v is None:
        return ""
    return row.get("next") or ("settled" if v else "not settled")


ORDER_KEY = "(> settled; ≈ not settled; · too few deals to tell)"


def order_line(board: Mapping[str, Any]) -> str | None:
    """'a > b ≈ c > d': the ranking, with > where the order of neighbours is settled, ≈
    where it is not and · where there were too few informative deals to tell (None for a
    board without statistics)."""
    rows = board["entrants"]
    if not rows or "settled_above" not in rows[0]:
        return None
    out = rows[0]["entrant"]
    for row, nxt in zip(rows, rows[1:]):
        sign = ">" if row.get("settled_above") else "·" if row.get("next") == "too few deals" else "≈"
        out += f" {sign} " + nxt["entrant"]
    return out


def promise(board: Mapping[str, Any]) -> str:
    """What the marks promise, in one sentence."""
    st = board.get("statistics") or {}
    conf = _pct(st.get("confidence", 0.95))
    err = _pct(round(1 - st.get("confidence", 0.95), 6))
    how = ("an anytime-valid test, so stopping early does not spoil it" if st.get("test") == "sequential"
           else "an exact sign test")
    return (f"A settled mark (✓, >) means the two neighbours' deals reject \"equally strong\" at {conf}, by {how} on "
            f"the deals both played, Holm-corrected over every pair: the chance that any settled mark on this board "
            f"is wrong is at most {err}.")


def stop_line(board: Mapping[str, Any]) -> str | None:
    """Why the games stopped, for a tournament with early stopping."""
    st = board.get("stopping")
    if not st:
        return None
    if st.get("rule") == "sprt":
        return f"Early stopping (SPRT): {st['note']}."
    what = "the whole order" if st.get("top") is None else f"the top {st['top']}"
    return f"Early stopping ({what} at {_pct(st['confidence'])}): {st['note']}."


def seed_text(board: Mapping[str, Any]) -> str:
    """'seed 42', or 'secret seed' while a secret seed is not revealed."""
    return "secret seed" if board.get("seed") is None and board.get("seed_mode") == "secret" else f"seed {board['seed']}"


def seed_note(board: Mapping[str, Any]) -> str | None:
    """Whether the deals could be foreseen, and how to check the seed (None for a board
    without seed fields)."""
    mode, sha, seed = board.get("seed_mode"), board.get("seed_sha256"), board.get("seed")
    if mode == "fixed":
        return f"Seed {seed}, fixed in the tournament file: the deals were predictable to anyone who knew it."
    if mode != "secret":
        return None
    if seed is None:
        return (f"The seed is secret until the tournament ends; its SHA-256 is {sha}. The seed is published "
                "then, so anyone can check that the deals were fixed before play.")
    return (f"Seed {seed}, secret until the end; its SHA-256 {sha} was published from the first game on. "
            "Check: `p10-tourney verify RESULTS`, or `printf %s SEED | sha256sum`.")


def digest_line(board: Mapping[str, Any]) -> str | None:
    """The digest of the games the board is computed from."""
    d = board.get("results_sha256")
    return None if not d else f"Games digest (SHA-256 of games.jsonl's records in game order, without durations): {d}."


def sandbox_line(board: Mapping[str, Any]) -> str | None:
    """What the results say about containment when the bots were not (all) sandboxed, or
    some limits held per process only: "Bots ran without a sandbox; ..."."""
    box = board.get("sandbox")
    if not isinstance(box, dict) or not box.get("note"):
        return None
    note = str(box["note"])
    return f"{note[:1].upper()}{note[1:]}."


_MD_PUNCT = {c: "\\" + chr(c) for c in b"\\`*_{}[]()<>#+-.!|~&:\"'=$%^@/;,?"}
_MD_SPACE = {c: " " for c in [*range(0x00, 0x20), 0x7f, *range(0x80, 0xa0), *REORDERING]}


def md_text(text: str) -> str:
    """`text` (a bot's words, such as the stderr line in a disqualification) safe in a
    Markdown table cell: on one line, with every ASCII punctuation mark backslash-escaped,
    so that it can make no cell, link, emphasis or HTML of its own."""
    return " ".join(text.translate(_MD_SPACE).split()).translate(_MD_PUNCT)


def fault_kinds_text(row: Mapping[str, Any]) -> str:
    """An entrant's faults by kind: "illegal × 3, timeout × 1" ("" for none)."""
    return ", ".join(f"{k} × {n}" for k, n in (row.get("fault_kinds") or {}).items())


def first_fault_text(row: Mapping[str, Any]) -> str:
    """An entrant's first fault: "g000004, illegal: R3.5: …" ("" for none)."""
    f = row.get("first_fault")
    return f"{f['game']}, {f['kind']}: {f['reason']}" if isinstance(f, Mapping) else ""


def faults_section(board: Mapping[str, Any]) -> list[str]:
    """leaderboard.md's and stats.md's faults: per entrant with any, its faults by kind and
    its first one (no lines where no entrant faulted)."""
    rows = [r for r in board["entrants"] if r.get("faults")]
    if not rows:
        return []
    out = ["", "## Faults", "", "Per entrant with faults: how many of each kind, and the first one (its game, kind "
           "and reason).", "",
           "| entrant | faults | by kind | first fault |", "|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['entrant']} | {r['faults']} | {fault_kinds_text(r)} | {md_text(first_fault_text(r))} |")
    return out


def to_markdown(board: Mapping[str, Any]) -> str:
    """The leaderboard and the head-to-head table as Markdown."""
    st = board.get("statistics")
    ranked = ("Ranked by PL, the Plackett–Luce strength from all games at once (independent of game order); "
              "TrueSkill (μ, σ, μ − 3σ) is the other rating, shown beside it.") if st else "Ranked by TrueSkill μ − 3σ."
    out = [f"# Leaderboard: {board['name']}", "", f"{board['games']} games, {seed_text(board)}. {ranked}", ""]
    if board.get("trusted"):
        out[-1:] = [f"Trusted (one process may play every seat rotation of a deal): {', '.join(board['trusted'])}.", ""]
    if st:
        conf = _pct(st["confidence"])
        out[-1:] = ["", f"PL [CI]: the rating with its {conf} interval from {st['resamples']} bootstrap resamples of "
                    "whole deals. Next: this entrant against the next one on the deals both played: settled, "
                    "open (a difference is plausible; more games may settle it), no evidence of a difference, or "
                    f"too few deals. {promise(board)} More in stats.md.", ""]
    for line in (seed_note(board), digest_line(board)):
        if line:
            out += [line, ""]
    stop = stop_line(board)
    if stop:
        out += [stop, ""]
    box = sandbox_line(board)
    if box:
        out += [f"**{box}**", ""]
    out += team_note(board)
    with_stats = bool(board["entrants"]) and "settled_above" in board["entrants"][0]
    teams = bool(board.get("teams"))
    head = ["rank", "entrant"] + (["team"] if teams else []) + ["TrueSkill μ", "σ", "μ − 3σ", "games", "wins", "win rate", "mean place",
            "mean score", "mean phases", "faults"] + (["PL [CI]", "next"] if with_stats else [])
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for row in board["entrants"]:
        name = row["entrant"] + (f" (disqualified: {md_text(row['disqualified'])})" if row.get("disqualified") else "") + (
            " (retired)" if row.get("retired") else "")
        vals = [row["rank"], name] + ([team_cell(row)] if teams else []) + [row[k] for k in COLUMNS[2:]]
        cells = [_fmt(v) for v in vals] + ([_interval(row), _next(row)] if with_stats else [])
        out.append("| " + " | ".join(cells) + " |")
    line = order_line(board)
    if line:
        out += ["", f"Order: {line}  {ORDER_KEY}"]
    out += collusion_lines(board) + faults_section(board)
    names = [row["entrant"] for row in board["entrants"]]
    out += ["", "## Head to head", ""]
    if len(names) > MATRIX_MAX:
        return "\n".join(out + [f"{len(names)} entrants: the games each pair played, and who placed ahead, are in "
                                 "head_to_head.csv (the pairs that met) and leaderboard.json."]) + "\n"
    out += ["Row entrant placed ahead / behind / level with column entrant.", ""]
    out.append("| | " + " | ".join(names) + " |")
    out.append("|" + "---|" * (len(names) + 1))
    h2h = board["head_to_head"]
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append("—")
            else:
                h = h2h.get(a, {}).get(b)
                cells.append(f"{h['ahead']}/{h['behind']}/{h['tied']}" if h and h["games"] else "")
        out.append(f"| {a} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def to_csv(board: Mapping[str, Any]) -> str:
    """The leaderboard as CSV: the columns of `COLUMNS`, then those of `STATS_COLUMNS`
    (empty where a value is missing; settled_above is true/false)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    box = board.get("sandbox") if isinstance(board.get("sandbox"), dict) else None
    retired = "retired" in board  # a league's entrants no longer in the field
    teams = "teams" in board
    w.writerow(COLUMNS + STATS_COLUMNS + (["sandbox"] if box else []) + (["retired"] if retired else [])
               + (["team"] if teams else []))
    for row in board["entrants"]:
        extra = [row.get(k) for k in STATS_COLUMNS]
        cells = [row[k] for k in COLUMNS] + ["" if v is None else str(v).lower() if isinstance(v, bool) else v
                                             for v in extra]
        if box:  # how this entrant ran: "bwrap", or "none: bots ran without a sandbox"
            mode = (box.get("bots") or {}).get(row["entrant"], box.get("mode"))
            cells.append("bwrap" if mode == "bwrap" else f"{mode}: bots ran without a sandbox")
        if retired:
            cells.append("true" if row.get("retired") else "false")
        if teams:
            cells.append(team_cell(row))
        w.writerow(cells)
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


def _stats_ratings(board: Mapping[str, Any], conf: str) -> list[str]:
    """stats.md's ratings: each entrant's PL strength and mean place, with their intervals."""
    out = ["## Ratings", "",
           "PL strength: ln of the Plackett–Luce strength, fitted on all games at once; between two "
           "entrants, P(a ahead of b) = 1 / (1 + e^(b − a)); it orders the leaderboard. Intervals: percentiles "
           "of the bootstrap resamples of whole deals (they describe the rating; the marks come from the "
           "paired deal tests below).", "",
           f"| entrant | games | PL strength | {conf} interval | mean place | {conf} interval |", "|---|---|---|---|---|---|"]
    ents = board["statistics"]["entrants"]
    for row in board["entrants"]:
        e = ents[row["entrant"]]
        ci = "" if e["ci_low"] is None else f"[{e['ci_low']:.3f}, {e['ci_high']:.3f}]"
        pci = "" if e["place_ci_low"] is None else f"[{e['place_ci_low']:.3f}, {e['place_ci_high']:.3f}]"
        mp = "" if e["mean_place"] is None else f"{e['mean_place']:.3f}"
        out.append(f"| {row['entrant']} | {e['games']} | {e['pl_strength']:.3f} | {ci} | {mp} | {pci} |")
    return out


def _stats_neighbours(board: Mapping[str, Any], conf: str) -> list[str]:
    """stats.md's neighbours: each entrant against the next one, and the order line."""
    seq = board["statistics"].get("test") == "sequential"
    out = ["", "## Neighbours", "",
           "Each entrant against the next one in the leaderboard's order, on the deal groups both played: "
           "the deals the upper and the lower did better on (placed ahead more often in the deal's games) and "
           "the level ones, the share of the informative deals the upper did better on with its "
           f"{conf} interval (½: no difference), the p-value of \"equally strong\" "
           + ("(anytime-valid: it may be looked at after every round)" if seq else "(exact two-sided sign test)")
           + " and Holm's adjusted p-value over every pair, the verdict and, where a difference is plausible, "
           "about how many more games (played as so far) would settle it. "
           f"{promise(board)}", "",
           "| upper | lower | PL diff | deals | upper better | lower better | level | share [interval] | p | "
           "p (Holm) | verdict | more games to settle |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for nb in board["statistics"]["neighbours"]:
        share = "" if nb["share"] is None else f"{nb['share']:.3f} [{nb['share_low']:.3f}, {nb['share_high']:.3f}]"
        more = "0" if nb["settled"] else "" if nb["games_to_settle"] is None else f"≈ {nb['games_to_settle']}"
        out.append(f"| {nb['upper']} | {nb['lower']} | {_fmt(nb['diff'])} | {nb['deals']} | {nb['upper_better']} | "
                   f"{nb['lower_better']} | {nb['level']} | {share} | {nb['p_value']:.4g} | {nb['p_adjusted']:.4g} | "
                   f"{nb['verdict']} | {more} |")
    line = order_line(board)
    return out + (["", f"Order: {line}  {ORDER_KEY}"] if line else [])


def _stats_pairs_met(names: list[str], met: Mapping[str, Mapping[str, int]]) -> list[str]:
    """stats.md's games each pair met: a matrix up to MATRIX_MAX entrants, else a summary."""
    out = ["", "## Games each pair met", ""]
    if len(names) > MATRIX_MAX:
        counts = sorted(v for a in names for v in met.get(a, {}).values() if v)
        pairs = len(names) * (len(names) - 1)
        spread = (f"; games per pair that met: {counts[0]} to {counts[-1]}, median {counts[len(counts) // 2]}"
                  if counts else "")
        return out + [f"{len(names)} entrants: {len(counts) // 2} of {pairs // 2} pairs met{spread}. Every pair that "
                      "met is in leaderboard.json (statistics.pairs_met) and head_to_head.csv."]
    out += ["| | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
    for a in names:
        out.append(f"| {a} | " + " | ".join("—" if a == b else str(met[a].get(b, 0)) for b in names) + " |")
    return out


def _stats_luck(names: list[str], luck: Mapping[str, Any]) -> list[str]:
    """stats.md's luck: how much of the variance of a place a duplicate deal cancels."""
    out = ["", "## Luck", "",
           "How much of the variance of an entrant's place a duplicate deal cancels. Per entrant, at each "
           "table (the same opponents) and over its deal groups of k games each: V_game is the variance of "
           "its place in one game, V_deal the variance of its place averaged over a group's k games. If the "
           "k games of a deal were independent, V_deal would be V_game / k; the luck share is "
           "1 − k · V_deal / V_game, the part of the per-game variance that cancels within a deal (0: none, "
           "1: all; negative: the games of a deal go the same way). Efficiency 1 / (1 − share) is how many "
           "plain-deal games one duplicate game is worth for the precision of a mean place.", ""]
    if luck["share"] is None:
        return out + ["Not measured: no deal was replayed (plain deals), so deal luck cannot be told apart from "
                      "the rest of the variance."]
    out += [f"Luck share (all entrants): **{luck['share']:.3f}**; efficiency {luck['efficiency']}.", "",
            "| entrant | k | games | V_game | V_deal | luck share |", "|---|---|---|---|---|---|"]
    for e in names:
        b = luck["by_entrant"].get(e)
        out.append(f"| {e} | {b['k']} | {b['games']} | {b['v_game']} | {b['v_deal']} | {b['share']:.3f} |" if b
                   else f"| {e} | | | | | |")
    return out


def to_stats_markdown(board: Mapping[str, Any]) -> str:
    """The board's `statistics` section as Markdown (stats.md)."""
    st = board["statistics"]
    conf = _pct(st["confidence"])
    out = [f"# Statistics: {board['name']}", "",
           f"{st['games']} games in {st['deal_groups']} deal groups; {st['resamples']} bootstrap resamples "
           f"(seed {st['seed']}); confidence {conf}.", ""]
    stop = stop_line(board)
    if stop:
        out += [stop, ""]
    names = [row["entrant"] for row in board["entrants"]]
    out += _stats_ratings(board, conf) + _stats_neighbours(board, conf)
    out += _stats_pairs_met(names, st["pairs_met"]) + _stats_luck(names, st["luck"])
    out += teams_stats(board) + collusion_stats(board, MATRIX_MAX * (MATRIX_MAX - 1) // 2) + faults_section(board)
    out += ["", "## Method", ""] + [f"- {k.replace('_', ' ')}: {v}." for k, v in st["method"].items()]
    return "\n".join(out) + "\n"


_LEAF = re.compile(r"[\[{]\n[^\[\]{}]*\n *[\]}]")
_BREAK = re.compile(r"\n *")


def board_json(board: Mapping[str, Any]) -> str:
    """leaderboard.json's text: indented, with every innermost object or list (a row's
    counts, a head-to-head cell, a history point) on one line. The same JSON as before,
    about half the bytes for a large field."""
    text = json.dumps(board, indent=1, sort_keys=False)
    return _LEAF.sub(lambda m: _BREAK.sub(" ", m.group(0)).replace("{ ", "{").replace("[ ", "[")
                     .replace(" }", "}").replace(" ]", "]"), text) + "\n"


def write_leaderboard(out: Path, board: Mapping[str, Any]) -> None:
    """Write leaderboard.md/.json/.csv, head_to_head.csv and (with statistics) stats.md
    into `out`."""
    (out / "leaderboard.json").write_text(board_json(board))
    (out / "leaderboard.md").write_text(to_markdown(board))
    (out / "leaderboard.csv").write_text(to_csv(board))
    (out / "head_to_head.csv").write_text(head_to_head_csv(board))
    if board.get("statistics"):
        (out / "stats.md").write_text(to_stats_markdown(board))


def print_leaderboard(board: Mapping[str, Any], console: Any = None) -> None:
    """Show the leaderboard as a terminal table."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    if not console.is_terminal:
        console.width = max(console.width, 130)
    with_stats = bool(board["entrants"]) and "settled_above" in board["entrants"][0]
    caption = []
    if with_stats:
        conf = _pct(board["statistics"]["confidence"]) if board.get("statistics") else "95 %"
        caption.append(f"Ranked by PL [CI]: batch Plackett–Luce strength, {conf} interval; TrueSkill μ, σ, μ−3σ "
                       f"beside it. next: ✓ order against the next row settled at {conf}, ≈ not settled, · too few "
                       "deals")
    stop = stop_line(board)
    if stop:
        caption.append(stop)
    box = sandbox_line(board)
    if box:
        caption.append(box)
    note = seed_note(board)
    if note:
        caption.append(note)
    caption += [line for line in team_note(board) if line]
    flagged = [" and ".join(r["pair"]) for r in board.get("collusion") or [] if r["flagged"]]
    if flagged:
        caption.append(f"Collusion flagged: {'; '.join(flagged)} (leaderboard.md, stats.md).")
    t = Table(title=f"{board['name']}: {board['games']} games ({seed_text(board)})",
              caption="\n".join(caption) or None)
    heads = ["#", "entrant", "TS μ", "σ", "μ−3σ", "games", "wins", "win %", "place", "score", "phases", "faults"]
    for h in heads + (["PL [CI]", "next"] if with_stats else []):
        t.add_column(h, justify="left" if h in ("entrant", "PL [CI]") else "right")
    for row in board["entrants"]:
        name = row["entrant"] + (" [red](DQ)[/red]" if row.get("disqualified") else "") + (
            " [dim](retired)[/dim]" if row.get("retired") else "")
        cells = [str(row["rank"]), name, f"{row['mu']:.2f}", f"{row['sigma']:.2f}", f"{row['conservative']:.2f}",
                 str(row["games"]), str(row["wins"]), f"{100 * row['win_rate']:.1f}", f"{row['mean_place']:.2f}",
                 f"{row['mean_score']:.1f}", f"{row['mean_phases']:.2f}", str(row["faults"])]
        if with_stats:
            v = row.get("settled_above")
            mark = MARKS.get(row.get("next") or "", "✓" if v else "≈")
            cells += [_interval(row), "" if v is None else f"[green]{mark}[/green]" if v else f"[yellow]{mark}[/yellow]"]
        t.add_row(*cells)
    console.print(t)
    line = order_line(board)
    if line:
        console.print(f"Order: {line}  {ORDER_KEY}")
