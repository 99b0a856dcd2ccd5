"""Teams: entrants of one author (`team: NAME` on a bot in the config) never share a
table, in any format. An entrant without a team is a team of its own.

A team only decides who may sit together: a round-robin or gauntlet leaves out the
tables that would seat two of a team, a random tournament draws and a league matches
its tables among the entrants of other teams. What that costs in seat balance (an entrant
of a large team plays fewer games; team mates never meet) is published with the board
(`seat_balance`)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..model import Board

__all__ = ["apart", "fits", "mark_teams", "seat_balance", "team_of", "team_problem"]


def team_of(teams: Mapping[str, str], entrant: str) -> str:
    """The team of `entrant` (one of its own, named after it with a mark no team name
    has, if it has none)."""
    return teams.get(entrant) or "\x00" + entrant


def fits(entrant: str, table: Iterable[str], teams: Mapping[str, str]) -> bool:
    """Whether `entrant` may join `table`: no entrant of its team sits there."""
    if not teams:
        return True
    mine = team_of(teams, entrant)
    return all(team_of(teams, x) != mine for x in table if x != entrant)


def apart(table: Sequence[str], teams: Mapping[str, str]) -> bool:
    """Whether no two entrants of `table` are of one team."""
    return not teams or len({team_of(teams, x) for x in table}) == len(table)


def team_problem(entrants: Sequence[str], challengers: Sequence[str], table_size: int, fmt: str,
                 teams: Mapping[str, str]) -> str | None:
    """Why the teams make the format impossible (a table of `table_size` entrants of
    different teams cannot be made), or None."""
    if not teams:
        return None
    if fmt != "gauntlet":
        n = len({team_of(teams, e) for e in entrants})
        if n < table_size:
            return (f"is {table_size} but the bots form only {n} teams (entrants of one team never share a table; "
                    "a bot without a team is a team of its own)")
        return None
    field = [e for e in entrants if e not in challengers]
    for c in challengers:
        n = len({team_of(teams, e) for e in field if team_of(teams, e) != team_of(teams, c)})
        if n < table_size - 1:
            return (f"is {table_size} but challenger {c!r} meets only {n} teams of the field besides its own "
                    f"(a table needs {table_size - 1}; entrants of one team never share a table)")
    return None


def seat_balance(games: Mapping[str, int], met: Mapping[str, Mapping[str, int]],
                 teams: Mapping[str, str], table_size: int) -> dict[str, object]:
    """What teams cost the board's games: the games per entrant (fewest, most, and the
    even share of the seats played), and the pairs of entrants of different teams that
    never met (team mates never do)."""
    names = sorted(games)
    played = {e: games[e] for e in names}
    seats = sum(played.values())
    lo = min(played.values(), default=0)
    hi = max(played.values(), default=0)
    never = [[a, b] for i, a in enumerate(names) for b in names[i + 1:]
             if team_of(teams, a) != team_of(teams, b) and not met.get(a, {}).get(b)]
    return {"games_min": lo, "fewest": [e for e in names if played[e] == lo],
            "games_max": hi, "most": [e for e in names if played[e] == hi],
            "even_share": round(seats / len(names), 2) if names else 0, "never_met": never,
            "team_mates": [[a, b] for i, a in enumerate(names) for b in names[i + 1:]
                           if a in teams and teams.get(b) == teams[a]]}


def mark_teams(board: Board, teams: Mapping[str, str], table_size: int) -> None:
    """Show the teams on a board: each row's `team` (where it has one) and `teams`: the
    members of each team and what the teams cost in seat balance (`seat_balance`)."""
    if not teams:
        return
    for row in board["entrants"]:
        if row["entrant"] in teams:
            row["team"] = teams[row["entrant"]]
    games = {row["entrant"]: row["games"] for row in board["entrants"]}
    met = {a: {b: h["games"] for b, h in row.items()} for a, row in board["head_to_head"].items()}
    members: dict[str, list[str]] = {}
    for e, t in teams.items():
        if e in games:
            members.setdefault(t, []).append(e)
    board["teams"] = {"members": members, "seats": seat_balance(games, met, teams, table_size)}
