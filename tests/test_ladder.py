"""The strength ladder: each heads-up pair judged on its own games, the ladder file played
heads-up and at 4-player tables, and the tables written into a document's ladder block."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.ratings.pairwise import heads_up, wilson
from harness.tournament.config import ConfigError, load_config
from harness.tournament.ladder import BEGIN, END, ladder_plan, replace_block

ROOT = Path(__file__).resolve().parent.parent
LADDER = ROOT / "tournaments" / "ladder.yaml"


def _group(i: int, a: str, b: str, a_wins: int) -> list[dict]:
    """A duplicate deal group of two games (a in each seat); `a` wins the first `a_wins`."""
    return [{"id": 2 * i + r, "group": i, "seats": [a, b][::1 if r == 0 else -1],
             "places": ([1, 2] if (r < a_wins) == (r == 0) else [2, 1]), "scores": [0, 0], "phases": [0, 0]}
            for r in range(2)]


def test_each_heads_up_pair_is_judged_on_its_own_games() -> None:
    """A beats B in every game of 30 deals: settled, A first, its share 100 % with the Wilson
    interval; B and C split every deal: not settled; a 4-player game is no pair's."""
    recs: list[dict] = []
    for i in range(30):
        recs += _group(i, "A", "B", 2)
    for i in range(30, 60):
        recs += _group(i, "C", "B", 1)
    recs.append({"id": 500, "group": 250, "seats": ["A", "B", "C", "D"], "places": [4, 3, 2, 1],
                 "scores": [0] * 4, "phases": [0] * 4})
    pairs = {(p.upper, p.lower): p for p in heads_up(recs, ["A", "B", "C", "D"])}
    ab = pairs[("A", "B")]
    assert ab.games == 60 and ab.upper_wins == 60 and ab.settled and ab.verdict == "settled"
    assert (ab.low, ab.high) == pytest.approx(wilson(60, 60), abs=1e-4)
    bc = next(p for k, p in pairs.items() if set(k) == {"B", "C"})
    assert bc.games == 60 and bc.upper_wins == 30 and not bc.settled and bc.low < 0.5 < bc.high
    assert len(pairs) == 2  # A and C never met heads-up; D played only at four


def test_wilson_interval() -> None:
    lo, hi = wilson(13, 20)
    assert lo < 0.65 < hi and wilson(0, 0) == (0.0, 1.0)
    assert wilson(240, 400)[0] > 0.55


def test_the_ladder_file_plays_heads_up_and_at_four() -> None:
    """The file itself is the heads-up round-robin (`p10-tourney run` plays that part);
    the plan adds its 4-player tables, or the expert's gauntlet with --challenger."""
    plain = load_config(LADDER)
    assert plain.table_size == 2 and plain.format == "round-robin" and plain.games_per_table >= 40
    plan = ladder_plan(LADDER)
    names = [b.name for b in plan.heads_up.bots]
    assert plan.heads_up.table_size == 2 and plan.heads_up.format == "round-robin" and len(names) == 5
    assert plan.four is not None and plan.four.table_size == 4 and plan.four.name == "ladder-4"
    assert str(plan.four.output) == str(plan.heads_up.output) + "-4"
    gauntlet = ladder_plan(LADDER, games=400, games4=0, bots=["py-expert", "py-strong", "py-greedy", "js-greedy"],
                           challenger="py-expert")
    assert gauntlet.four is None and gauntlet.heads_up.format == "gauntlet"
    assert gauntlet.heads_up.challengers == ("py-expert",) and gauntlet.heads_up.games_per_table == 400
    with pytest.raises(ConfigError, match="no bot named 'nobody'"):
        ladder_plan(LADDER, bots=["py-expert", "nobody"])


def test_replace_block_keeps_the_rest_of_the_document() -> None:
    doc = f"# Title\n\nbefore\n{BEGIN}\nold table\n{END}\nafter\n"
    out = replace_block(doc, "| new |\n")
    assert out == f"# Title\n\nbefore\n{BEGIN}\n\n| new |\n\n{END}\nafter\n"
    assert replace_block(out, "| new |\n") == out
    with pytest.raises(ValueError, match="no ladder block"):
        replace_block("no markers here", "x")


def test_ladder_command_plays_real_bots_and_writes_the_readme_block(tmp_path: Path) -> None:
    """tools/ladder.py on two real bots, 2 games, no 4-player tables: the pair's row is
    printed and written into the document's block."""
    doc = tmp_path / "README.md"
    doc.write_text(f"intro\n{BEGIN}\n{END}\n")
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "ladder.py"), "--bots", "py-random,py-greedy",
                          "--games", "2", "--games4", "0", "--output", str(tmp_path / "out"), "--parallel", "1",
                          "--readme", str(doc)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "| py-greedy – py-random | 2 | 2 |" in res.stdout and "load average" in res.stdout
    assert "| py-greedy – py-random | 2 | 2 |" in doc.read_text() and doc.read_text().startswith("intro\n")
    bad = subprocess.run([sys.executable, str(ROOT / "tools" / "ladder.py"), "--bots", "nobody"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("Error: ") and bad.stderr.count("\n") == 1


def test_ladder_tables_gather_pairs_from_other_heads_up_folders(tmp_path: Path) -> None:
    """A ladder played as several runs is tabulated as one: --also adds another results
    folder's pairs to the table; a pair found in two folders (or one the run would play),
    or a folder without games, is refused in one line, before anything is played."""
    tool = [sys.executable, str(ROOT / "tools" / "ladder.py"), "--bots", "py-random,py-greedy", "--games4", "0"]
    played = subprocess.run([*tool, "--games", "2", "--output", str(tmp_path / "a"), "--parallel", "1"],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert played.returncode == 0, played.stderr
    doc = tmp_path / "README.md"
    doc.write_text(f"{BEGIN}\n{END}\n")
    gathered = subprocess.run([*tool, "--output", str(tmp_path / "b"), "--also", str(tmp_path / "a"), "--tables-only",
                               "--readme", str(doc)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert gathered.returncode == 0, gathered.stderr
    assert "| py-greedy – py-random | 2 | 2 |" in doc.read_text()
    assert not (tmp_path / "b").exists()  # tabulating plays nothing
    for args, says in ((["--output", str(tmp_path / "a"), "--also", str(tmp_path / "a"), "--tables-only"],
                        "is in two results folders"),
                       (["--output", str(tmp_path / "b"), "--also", str(tmp_path / "c"), "--tables-only"],
                        "no results folder"),
                       (["--games", "2", "--output", str(tmp_path / "d"), "--also", str(tmp_path / "a")],
                        "(to be played) and")):
        bad = subprocess.run([*tool, *args], capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert bad.returncode == 2 and says in bad.stderr and bad.stderr.count("\n") == 1, bad.stderr
    assert not (tmp_path / "d").exists()  # refused before anything is played
