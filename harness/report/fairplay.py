"""The fair-play parts of the published board: the teams (who never shares a table, and
what that costs in seat balance) and the collusion report (what each pair's discards gave
each other, and the pairs flagged), in Markdown for leaderboard.md and stats.md."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

COLLUSION_METHOD = (
    "A pair is flagged when the Wilds one entrant passed the other (discarded with the other next to draw) are "
    "more than its Wild discards to whoever drew next explain: the hypergeometric upper tail, Bonferroni-"
    "adjusted over both ways of every pair that met, below 0.01. An honest field gets a flag with a chance of at "
    "most 1 % by construction (measured by simulating honest fields: see the method in the documentation). The "
    "other figures are evidence, not tests: the discards taken, the Skips aimed, and each one's results with the "
    "other at the table and just after it. The chance holds for one look at the board: a league's board, looked "
    "at round after round, may flag an honest pair more often.")


def team_note(board: Mapping[str, Any]) -> list[str]:
    """leaderboard.md's line on the teams (none without teams)."""
    teams = board.get("teams")
    if not teams:
        return []
    s = teams["seats"]
    groups = "; ".join(f"{t}: {', '.join(m)}" for t, m in sorted(teams["members"].items()))
    never = len(s["never_met"])
    return [f"Teams (entrants of one team never share a table): {groups}. Seat balance: {s['games_min']} to "
            f"{s['games_max']} games per entrant (an even share of the seats played: {s['even_share']:g}); "
            f"{never} pair{'s' if never != 1 else ''} of different teams never met.", ""]


def teams_stats(board: Mapping[str, Any]) -> list[str]:
    """stats.md's section on the teams."""
    teams = board.get("teams")
    if not teams:
        return []
    s = teams["seats"]
    out = ["", "## Teams", "", "Entrants of one team never share a table, in any format; what that costs:", "",
           f"- games per entrant: fewest {s['games_min']} ({', '.join(s['fewest'])}), most {s['games_max']} "
           f"({', '.join(s['most'])}); an even share of the seats played would be {s['even_share']:g};",
           f"- team mates (never at one table): {_pairs(s['team_mates'])};",
           f"- pairs of different teams that never met: {_pairs(s['never_met'])}.", "", "| team | entrants |",
           "|---|---|"]
    return out + [f"| {t} | {', '.join(m)} |" for t, m in sorted(teams["members"].items())]


def _pairs(pairs: Sequence[Sequence[str]]) -> str:
    return ", ".join(f"{a}–{b}" for a, b in pairs) if pairs else "none"


def _way(name: str, f: Mapping[str, Any], res: Mapping[str, Any]) -> str:
    """One way of a pair as a table row's cells: A>B, Wilds, taken, Skips, B's results."""
    rate = "" if f["taken_rate"] is None else f"{f['taken_rate']:.2f}"
    others = "" if f["others_take_rate"] is None else f"{f['others_take_rate']:.2f}"
    after = "" if res["after"] is None else f"{res['after']:.2f}"
    not_after = "" if res["not_after"] is None else f"{res['not_after']:.2f}"
    return (f"| {name} | {f['wilds']} ({f['wilds_expected']:g}) | {f['p_wilds']:.3g} | {f['taken']}/{f['offered']} "
            f"({rate}; others {others}) | {f['skips_at']} ({f['skips_even_share']:g}) | {after} / {not_after} |")


def _rows(report: Sequence[Mapping[str, Any]]) -> list[str]:
    out = ["| pair | flagged | p (adjusted) | way | Wilds passed (expected) | p | discards taken (rate; others "
           "take) | Skips aimed (even share) | receiver's result just after / not |", "|---|---|---|---|---|---|---|---|---|"]
    for r in report:
        a, b = r["pair"]
        for k, (x, y) in enumerate(((a, b), (b, a))):
            way = _way(f"{x} > {y}", r["feeds"][f"{x}>{y}"], r["results"][y])
            head = f"| {a} – {b} | {'**yes**' if r['flagged'] else 'no'} | {r['p']:.3g} " if not k else "| | | "
            out.append(head + way)
    return out


def collusion_lines(board: Mapping[str, Any]) -> list[str]:
    """leaderboard.md's collusion section: the flagged pairs with their evidence."""
    report = board.get("collusion")
    if report is None:
        return []
    flagged = [r for r in report if r["flagged"]]
    out = ["", "## Collusion", ""]
    if not flagged:
        return out + [f"No pair flagged ({_met(board)}). {COLLUSION_METHOD} The pairs are in stats.md and "
                      "leaderboard.json (collusion)."]
    names = ", ".join(f"{a} and {b}" for a, b in (r["pair"] for r in flagged))
    return out + [f"**Flagged: {names}.** {COLLUSION_METHOD}", ""] + _rows(flagged)


def collusion_stats(board: Mapping[str, Any], limit: int) -> list[str]:
    """stats.md's collusion section: every pair that met (the first `limit` by p)."""
    report = board.get("collusion")
    if not report:
        return []
    out = ["", "## Collusion", "", COLLUSION_METHOD, "",
           "Wilds passed: the Wilds one entrant discarded with the other next to draw, and how many its Wild "
           "discards to whoever drew next would give the other by its share of them. Discards taken: of its "
           "discards offered to the other, those the other took; others take: the same entrant's discards taken "
           "by the others. Skips aimed, and the even share (its Skips in games with the other, over the others at "
           "those tables). The receiver's result (share of the others it placed ahead of) when it sat just after "
           "the other, and in its other games with it.", ""]
    more = len(report) - limit
    out += [f"{_met(board)}.", ""] + _rows(report[:limit])
    return out + (["", f"{more} more pairs in leaderboard.json (collusion)."] if more > 0 else [])


def team_cell(row: Mapping[str, Any]) -> str:
    """A row's team, for a table cell (empty without one)."""
    return str(row.get("team") or "")


def collusion_notes(board: Mapping[str, Any]) -> list[str]:
    """The site's lines on collusion: each flagged pair with its evidence, then the method
    (none for a board without a collusion report)."""
    report = board.get("collusion")
    if report is None:
        return []
    out = []
    for r in report:
        if not r["flagged"]:
            continue
        a, b = r["pair"]
        ways = []
        for x, y in ((a, b), (b, a)):
            f, res = r["feeds"][f"{x}>{y}"], r["results"][y]
            ways.append(f"{x} passed {y} {f['wilds']} Wilds (expected {f['wilds_expected']:g}), {f['taken']} of "
                        f"{f['offered']} discards taken; {y} placed ahead of {_pct(res['after'])} of the others "
                        f"just after {x}, {_pct(res['not_after'])} otherwise")
        out.append(f"Flagged: {a} and {b} (p = {r['p']:.3g}): " + "; ".join(ways) + ".")
    if not out:
        out.append(f"No pair flagged ({_met(board)}).")
    return out + [COLLUSION_METHOD]


def _met(board: Mapping[str, Any]) -> str:
    """'28 pairs met', or '3,000 pairs met, the 500 with the smallest p listed'."""
    listed = len(board.get("collusion") or [])
    pairs = board.get("collusion_pairs", listed)
    return f"{pairs:,} pairs met" + (f", the {listed:,} with the smallest p listed" if listed < pairs else "")


def _pct(share: float | None) -> str:
    return "—" if share is None else f"{100 * share:.0f} %"
