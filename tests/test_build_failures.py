"""A bot whose `build:` fails is disqualified with the build's reason and the others play
all their games: one entrant cannot stop a tournament. Nothing a failed build made is
left in the bot's folder, which is exactly as it was before the build."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from harness.cli import main
from harness.sandbox.box import BuildError, Sandbox
from harness.sandbox.build import run_build
from harness.sandbox.modes import bwrap_available
from harness.tournament.config import load_config
from harness.tournament import runner
from harness.tournament.runner import run_tournament
from harness.tournament.schedule import schedule

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "bots/templates/python/bot.py"  # standard library only: runs in any sandbox
OK, WHY = bwrap_available()
needs_bwrap = pytest.mark.skipif(not OK, reason=f"bubblewrap unavailable: {WHY}")

FAILS = """\
echo made > made.txt
echo changed >> bot.py
chmod 600 keep.txt
rm -f gone.txt
mkdir -p out/deep && echo x > out/deep/obj.o
echo compiling; echo 'main.c:3: error: expected ;'; exit 1
"""
"""A build that makes, changes and removes files, then fails."""

LINKS_OUT = """\
echo made > made.txt
echo changed >> bot.py
ln -s /usr sys
ln -s sys/../etc data
"""
"""A build that succeeds, but leaves a link that leads (through `sys`) to the host's /etc."""


def tree(folder: Path) -> dict[str, Any]:
    """Everything of a folder a build could change: each entry's type, mode, owner, times,
    contents or target (links not followed)."""
    out: dict[str, Any] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            st = p.lstat()
            what = (os.readlink(p) if stat.S_ISLNK(st.st_mode) else p.read_bytes() if stat.S_ISREG(st.st_mode)
                    else None)
            out[str(p.relative_to(folder))] = (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, what)
    st = folder.stat()
    out["."] = (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns)
    return out


def entrant(tmp: Path, name: str, build: str | None = None) -> dict[str, Any]:
    folder = tmp / name
    folder.mkdir()
    shutil.copy(BOT, folder / "bot.py")
    (folder / "keep.txt").write_text("the author's\n")
    (folder / "gone.txt").write_text("the author's\n")
    os.utime(folder / "keep.txt", ns=(10**18, 10**18))
    entry: dict[str, Any] = {"name": name, "cmd": "python bot.py", "cwd": name}
    if build is not None:
        (folder / "build.sh").write_text(build)
        entry["build"] = "sh build.sh"
    os.chmod(folder, 0o755)
    return entry


def tournament(tmp: Path, out: str = "out", **over: Any) -> Path:
    """Two honest entrants, one whose build fails, one whose build links out of its folder."""
    if not (tmp / "a").exists():
        entrant(tmp, "a"), entrant(tmp, "b"), entrant(tmp, "fails", FAILS), entrant(tmp, "links", LINKS_OUT)
    data = {"name": "builds", "seed": 7, "base_dir": str(tmp), "output": str(tmp / out),
            "bots": [{"name": n, "cmd": "python bot.py", "cwd": n} | ({"build": "sh build.sh"} if n in ("fails", "links")
                                                                      else {}) for n in ("a", "fails", "b", "links")],
            "table_size": 3, "games_per_table": 3, "rules": {"phases": [1], "hand_limit": 10},
            "time": {"move_ms": 5000, "startup_ms": 20000}, **over}
    path = tmp / f"{out}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def games(out: Path) -> list[dict[str, Any]]:
    recs = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    for r in recs:
        for k in ("duration_s", "chain", "replay_sha256"):
            r.pop(k, None)
    return sorted(recs, key=lambda r: r["id"])


def check_played(cfg_path: Path, out: Path) -> None:
    """Every scheduled game is recorded; the failed entrants sit in none; each game of two or
    more honest entrants is played without a fault; the failed builds are disqualified from
    the first game, with their reasons, in every published file."""
    recs = games(out)
    specs = schedule(load_config(cfg_path))
    assert [r["id"] for r in recs] == [s.index for s in specs]
    failed = {"fails", "links"}
    for r, s in zip(recs, specs):
        left = [e for e in s.seats if e in failed]
        assert r["seats"] == [e for e in s.seats if e not in failed] and r.get("disqualified", []) == left
        assert [d["entrant"] for d in r.get("build_failed", [])] == left
        if len(r["seats"]) >= 2:
            assert r["reason"] != "not_played" and not r["faults"], r
    dq = {d["entrant"]: d for d in json.loads((out / "disqualified.json").read_text())["disqualified"]}
    assert set(dq) == failed and all(d["from_index"] == 0 for d in dq.values())
    assert "exit code 1" in dq["fails"]["reason"] and "main.c:3: error: expected ;" in dq["fails"]["reason"]
    assert "'data'" in dq["links"]["reason"] and "/etc" in dq["links"]["reason"], dq["links"]
    board = json.loads((out / "leaderboard.json").read_text())
    assert [d["entrant"] for d in board["disqualified"]] == ["fails", "links"]
    assert "fails (disqualified: " in (out / "leaderboard.md").read_text()


@needs_bwrap
def test_an_entrant_whose_build_fails_is_disqualified_and_the_others_play(tmp_path: Path) -> None:
    """The tournament completes with -j1 and -j2 alike (the same games and leaderboards,
    byte for byte), `verify` agrees, and the failed builds left nothing in their folders:
    not what the failing one made, changed or removed, not the link out of the folder."""
    path = tournament(tmp_path)
    before = {n: tree(tmp_path / n) for n in ("fails", "links")}
    res = CliRunner().invoke(main, ["run", str(path), "--no-site", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "disqualified: fails from game g000000: build 'sh build.sh' failed (exit code 1)" in res.output
    check_played(path, tmp_path / "out")
    for n in ("fails", "links"):
        assert tree(tmp_path / n) == before[n], n
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "out")])
    assert res.exit_code == 0 and "verified" in res.output, res.output
    assert CliRunner().invoke(main, ["report", str(tmp_path / "out")]).exit_code == 0
    site = (tmp_path / "out" / "site" / "index.html").read_text()
    why = "build &#39;sh build.sh&#39; failed (exit code 1)"
    assert f'<span class="hint bad" title="{why}; its output ends: ' in site  # on the board, the reason on it
    page = (tmp_path / "out" / "site" / "entrants" / "fails.html").read_text()
    assert f"disqualified: {why}" in page  # and on the entrant's own page

    path2 = tournament(tmp_path, "out2", parallel=2)
    assert CliRunner().invoke(main, ["run", str(path2), "--no-site", "--no-progress"]).exit_code == 0
    assert games(tmp_path / "out") == games(tmp_path / "out2")
    for name in ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "disqualified.json"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes(), name


@needs_bwrap
def test_a_failed_build_stays_failed_on_resume_and_a_built_bot_resumes(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A run stopped after a few games goes on where it stopped: the failed entrant is not
    built again (it stays out, from the same game), an entrant whose build made its program
    is the same bot when the run goes on, and the folder verifies, while its seed is secret
    (the failed builds are read from the games) and once it is revealed."""
    path = tournament(tmp_path, seed="secret")
    made = entrant(tmp_path, "made", "cp bot.py built.py\n")
    made["cmd"] = "python built.py"
    data = yaml.safe_load(path.read_text())
    data["bots"].append(made)
    data["table_size"] = 2
    data["games_per_table"] = 2
    path.write_text(yaml.safe_dump(data))

    def stop_after_6(p: Any) -> None:
        if p.done >= 6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(load_config(path), on_progress=stop_after_6, build_site=False)
    assert any(r.get("build_failed") for r in games(tmp_path / "out")), "no game of the failed entrants yet"
    public = tmp_path / "public"  # what may be published while the seed is secret: all but seed.secret
    shutil.copytree(tmp_path / "out", public, ignore=shutil.ignore_patterns("seed.secret"))
    res = CliRunner().invoke(main, ["verify", str(public)])
    assert res.exit_code == 0 and "2 claimed (fails from game g000000; links from game g000000)" in res.output, \
        res.output
    built: list[str] = []
    real = runner.run_build

    def counted(name: str, *args: Any, **kw: Any) -> str:
        built.append(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(runner, "run_build", counted)
    outcome = run_tournament(load_config(path), build_site=False)
    assert built == ["made"]
    assert outcome.finished and set(outcome.disqualified) == {"fails", "links"}
    dq = json.loads((tmp_path / "out" / "disqualified.json").read_text())["disqualified"]
    assert [d["from_index"] for d in dq] == [0, 0]
    recs = games(tmp_path / "out")
    assert all(not r["faults"] for r in recs) and any("made" in r["seats"] and len(r["seats"]) == 2 for r in recs)
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "out")])
    assert res.exit_code == 0 and "verified" in res.output, res.output


@needs_bwrap
def test_a_failed_build_disqualifies_with_disqualification_off(tmp_path: Path) -> None:
    """`faults: {disqualify: false}` turns off judging entrants by their games; a failed
    build still takes its entrant out (it cannot play at all)."""
    path = tournament(tmp_path, faults={"disqualify": False})
    res = CliRunner().invoke(main, ["run", str(path), "--no-site", "--no-progress"])
    assert res.exit_code == 0, res.output
    check_played(path, tmp_path / "out")
    assert CliRunner().invoke(main, ["verify", str(tmp_path / "out")]).exit_code == 0


@needs_bwrap
def test_a_league_entrant_added_later_whose_build_fails(tmp_path: Path) -> None:
    """A league played by two entrants takes a third in its next run; its build fails: it
    is matched into that round (the rounds follow from the games before), left out of its
    games, and out of every round after; the league verifies."""
    for n in ("a", "b"):
        entrant(tmp_path, n)
    late = entrant(tmp_path, "late", FAILS)
    data = {"name": "league", "seed": 3, "base_dir": str(tmp_path), "output": str(tmp_path / "out"),
            "format": "league", "games": 8, "league": {"round_games": 4, "min_games": 2},
            "bots": [{"name": n, "cmd": "python bot.py", "cwd": n} for n in ("a", "b")],
            "rules": {"phases": [1], "hand_limit": 10}, "time": {"move_ms": 5000, "startup_ms": 20000}}
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump(data))
    assert run_tournament(load_config(path), build_site=False).played == 8
    data["bots"].append(late)
    data["games"] = 24
    path.write_text(yaml.safe_dump(data))
    outcome = run_tournament(load_config(path), build_site=False)
    assert list(outcome.disqualified) == ["late"] and "exit code 1" in outcome.disqualified["late"]
    recs = games(tmp_path / "out")
    assert all("late" not in r["seats"] for r in recs)
    left_out = [r["id"] for r in recs if "late" in r.get("disqualified", [])]
    assert left_out and min(left_out) >= 8 and max(left_out) < 12  # matched in its first round only
    assert all(r["reason"] != "not_played" for r in recs if len(r["seats"]) == 2)
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "out")])
    assert res.exit_code == 0 and "verified" in res.output, res.output


@needs_bwrap
def test_a_build_that_fails_after_it_ran_leaves_its_folder_exactly_as_it_was(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """What a build made comes back all or nothing. It replaced files, a folder by a file
    and a file by a folder, and a link; then it left a link out of its folder, or made more
    than may be copied back (found when part of it is back): the folder holds what it held
    (names, contents, modes, owners, times), and nothing is set aside in it."""
    from harness.sandbox import tree as sandbox

    own = tmp_path / "own"
    (own / "dir").mkdir(parents=True)
    (own / "dir" / "in.txt").write_text("in\n")
    (own / "file").write_text("file\n")
    (own / "to_dir").write_text("to be a folder\n")
    (own / "to_file").mkdir()
    (own / "to_file" / "x").write_text("x\n")
    (own / "link").symlink_to("file")
    os.chmod(own / "file", 0o640)
    os.chmod(own, 0o755)
    for p in (own / "dir", own / "to_file", own):
        os.utime(p, ns=(10**18, 10**18))
    (own / "build.sh").write_text(
        "echo more >> file && echo new > dir/new.txt && rm -rf to_file && echo f > to_file && rm to_dir && "
        "mkdir -p to_dir/a/b && echo y > to_dir/a/b/y && rm link && ln -s dir link && mkdir aa && "
        "head -c 3000000 /dev/zero > aa/big && ln -s /usr sys && ln -s sys/../etc data\n")
    before = tree(own)
    box = Sandbox(mode="bwrap", own=str(own))
    with pytest.raises(BuildError, match="'data' that leads to '/etc'"):
        run_build("b", ("sh", "build.sh"), str(own), {}, box, "bwrap")
    assert tree(own) == before
    (own / "build.sh").write_text((own / "build.sh").read_text().replace(" && ln -s sys/../etc data", ""))
    before = tree(own)
    monkeypatch.setattr(sandbox, "BUILD_COPY_MB", 2)  # aa/big comes back last (files first, folders last first)
    with pytest.raises(BuildError, match="more than 2 MB"):
        run_build("b", ("sh", "build.sh"), str(own), {}, box, "bwrap")
    assert tree(own) == before
