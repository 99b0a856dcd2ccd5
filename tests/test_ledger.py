"""Fair play in the results: secret seeds published as a SHA-256 commitment before the end
and revealed after it; games.jsonl chained by hash, so that `run`, `report`,
`leaderboard` and `verify` refuse a journal edited after it was written; `verify`
recomputing the leaderboards and playing the replays again."""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.tournament.config import load_config
from harness.ledger.journal import ChainError, Journal, JournalError, chained_line, genesis, read_chain
from harness.ledger.marker import marker_genesis, read_marker
from harness.tournament.runner import ResultsError, run_tournament
from test_bad_input import invoke, one_error  # one `Error:` line, no traceback

ROOT = Path(__file__).resolve().parent.parent
GREEDY = [sys.executable, str(ROOT / "bots/python/greedy.py")]
RANDOM = [sys.executable, str(ROOT / "bots/python/random_bot.py")]


def write_config(tmp: Path, out: Path, **over) -> Path:
    cfg = {
        "name": "ledger",
        "bots": [{"name": "greedy", "cmd": GREEDY}, {"name": "random", "cmd": RANDOM + ["5"]},
                 {"name": "greedy2", "cmd": GREEDY}],
        "table_size": 2, "games_per_table": 2, "duplicate": True, "parallel": 1,
        "rules": {"phases": [1, 2], "hand_limit": 12},
        "time": {"move_ms": 5000, "startup_ms": 10000},
        "replays": "all", "output": str(out),
    }
    cfg.update(over)
    path = tmp / f"{out.name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def published_text(out: Path) -> str:
    """Everything in a results folder anyone may be shown, as text: all but seed.secret."""
    return "\n".join(p.read_text(errors="replace") for p in sorted(out.rglob("*"))
                     if p.is_file() and p.name != "seed.secret")


def records(out: Path) -> list[dict]:
    recs = sorted(read_chain(out / "games.jsonl", None, repair=False).games.values(), key=lambda r: r["id"])
    for r in recs:
        r.pop("duration_s")
        r.pop("replay_sha256", None)  # the replay holds its messages' times
    return recs


# ----- secret seeds: commit, then reveal ---------------------------------------------------------


def test_a_tournament_without_a_seed_publishes_its_hash_before_the_end_and_the_seed_after(tmp_path: Path) -> None:
    out = tmp_path / "secret"
    cfg_path = write_config(tmp_path, out)
    cfg = load_config(cfg_path)
    assert cfg.secret_seed and cfg.seed is None
    seen: list[dict] = []

    def after_each_game(p) -> None:
        if p.last is None:
            return
        seen.append(json.loads((out / "tournament.json").read_text()))
        if p.done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(cfg, on_progress=after_each_game)
    secret = (out / "seed.secret").read_text().strip()
    assert stat.S_IMODE((out / "seed.secret").stat().st_mode) == 0o600
    sha = hashlib.sha256(secret.encode()).hexdigest()
    # From the first game on: the commitment, never the seed.
    assert len(seen) == 3
    for meta in seen:
        assert meta["seed_mode"] == "secret" and meta["seed"] is None and meta["seed_sha256"] == sha
    assert int(secret).bit_length() > 64  # drawn from the OS, 128 bits
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["seed"] is None and board["seed_sha256"] == sha and board["seed_mode"] == "secret"
    assert sha in (out / "leaderboard.md").read_text() and "secret" in (out / "leaderboard.md").read_text()
    res = invoke("report", out)  # the site of an unfinished tournament
    assert res.exit_code == 0, res.output
    assert sha in (out / "site" / "index.html").read_text()
    assert secret not in published_text(out)
    assert "seed: secret" in (out / "config.resolved.yaml").read_text()
    res = invoke("verify", out)
    assert res.exit_code == 0, res.output
    assert "seed.secret here holds the seed of the published SHA-256" in res.output
    public = tmp_path / "public"  # what may be published mid-tournament: all but seed.secret
    shutil.copytree(out, public, ignore=shutil.ignore_patterns("seed.secret"))
    res = invoke("verify", public)
    assert res.exit_code == 0 and "not possible yet" in res.output, res.output
    board_line = [x for x in res.output.splitlines() if x.split()[1:2] == ["leaderboard"]]
    assert board_line[0].startswith("ok") and "given the disqualifications" in board_line[0], res.output
    assert "--   disqualified" in res.output and "checked once the seed is revealed" in res.output
    # Without the seed the standings are recomputed all the same: a forged one is found.
    forged = tmp_path / "forged"
    shutil.copytree(public, forged)
    board = json.loads((forged / "leaderboard.json").read_text())
    board["entrants"][0]["wins"] += 1
    (forged / "leaderboard.json").write_text(json.dumps(board, indent=1) + "\n")
    assert "leaderboard.json" in _fail_line(invoke("verify", forged))

    # Resumed: the same secret seed; at the end it is revealed and matches the commitment.
    outcome = run_tournament(load_config(cfg_path))
    assert outcome.finished and outcome.played == 3
    assert (out / "seed.secret").read_text().strip() == secret
    meta = json.loads((out / "tournament.json").read_text())
    assert meta["finished"] and meta["seed"] == int(secret) and meta["seed_sha256"] == sha
    assert hashlib.sha256(str(meta["seed"]).encode()).hexdigest() == sha
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["seed"] == int(secret) and board["seed_sha256"] == sha
    assert secret in (out / "leaderboard.md").read_text() and secret in (out / "site" / "index.html").read_text()
    res = invoke("verify", out)
    assert res.exit_code == 0, res.output
    assert "the revealed seed hashes to the SHA-256 published from the start" in res.output
    assert "follow from the tournament's seed" in res.output

    # The deals were fixed by that seed: the file with it written in plays the same games.
    again = tmp_path / "again"
    run_tournament(load_config(write_config(tmp_path, again, seed=int(secret))), build_site=False)
    assert records(again) == records(out)
    assert "predictable" in (again / "leaderboard.md").read_text()


def test_seed_secret_in_the_file_is_the_same_as_no_seed(tmp_path: Path) -> None:
    a = load_config(write_config(tmp_path, tmp_path / "a", seed="secret"))
    b = load_config(write_config(tmp_path, tmp_path / "b"))
    assert a.secret_seed and b.secret_seed and a.fingerprint() == b.fingerprint()
    assert a.resolved()["seed"] == "secret"


def test_a_lost_or_wrong_secret_seed_stops_a_resume(tmp_path: Path) -> None:
    out = tmp_path / "lost"
    cfg_path = write_config(tmp_path, out, games_per_table=2)

    def stop(p) -> None:
        if p.done >= 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(load_config(cfg_path), on_progress=stop, build_site=False)
    secret = (out / "seed.secret").read_text()
    (out / "seed.secret").write_text(str(int(secret) + 1))
    one_error(invoke("run", cfg_path, "--no-progress"), "seed.secret", "does not hold the seed")
    (out / "seed.secret").unlink()
    one_error(invoke("run", cfg_path, "--no-progress"), "seed.secret", "missing")
    # --fresh draws a new one
    res = invoke("run", cfg_path, "--no-progress", "--no-site", "--fresh")
    assert res.exit_code == 0, res.output
    assert (out / "seed.secret").read_text() != secret


# ----- an edited games.jsonl is refused ----------------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, Path]:
    """A finished tournament with a fixed seed and every replay kept."""
    tmp = tmp_path_factory.mktemp("finished")
    cfg_path = write_config(tmp, tmp / "out", seed=3)
    outcome = run_tournament(load_config(cfg_path))
    assert outcome.finished and outcome.played == 6
    return tmp / "out", cfg_path


def copy(finished: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    out, cfg_path = finished
    dst = tmp_path / "out"
    shutil.copytree(out, dst)
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["output"] = str(dst)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return dst, path


def _lines(out: Path) -> list[bytes]:
    return (out / "games.jsonl").read_bytes().splitlines()


def _write(out: Path, lines: list[bytes]) -> None:
    (out / "games.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))


def edit_a_result(out: Path) -> int:
    lines = _lines(out)
    rec = orjson.loads(lines[2])
    rec["places"] = rec["places"][::-1]  # the chain field is kept as it was
    lines[2] = orjson.dumps(rec)
    _write(out, lines)
    return 3


def delete_a_line(out: Path) -> int:
    lines = _lines(out)
    del lines[1]
    _write(out, lines)
    return 2


def reorder_lines(out: Path) -> int:
    lines = _lines(out)
    lines[3], lines[4] = lines[4], lines[3]
    _write(out, lines)
    return 4


def append_a_forged_line(out: Path) -> int:
    lines = _lines(out)
    rec = orjson.loads(lines[0])
    rec["id"], rec["game"] = 6, "g000006"
    rec["chain"] = hashlib.sha256(b"forged").hexdigest()
    lines.append(orjson.dumps(rec))
    _write(out, lines)
    return 7


def append_a_line_without_chain(out: Path) -> int:
    lines = _lines(out)
    rec = orjson.loads(lines[0])
    del rec["chain"]
    rec["id"], rec["game"] = 6, "g000006"
    lines.append(orjson.dumps(rec))
    _write(out, lines)
    return 7


def rechain_an_edited_result(out: Path) -> int:
    """An edit by someone who recomputes the whole chain: the published head gives it away."""
    head = marker_genesis(read_marker(out))
    lines = []
    for i, line in enumerate(_lines(out)):
        rec = orjson.loads(line)
        if i == 2:
            rec["places"] = rec["places"][::-1]
        line, head = chained_line(head, rec)
        lines.append(line)
    _write(out, lines)
    return 6


def delete_the_last_line(out: Path) -> int:
    _write(out, _lines(out)[:-1])
    return 6


EDITS = [edit_a_result, delete_a_line, delete_the_last_line, reorder_lines, append_a_forged_line, append_a_line_without_chain,
         rechain_an_edited_result]


@pytest.mark.parametrize("edit", EDITS, ids=[e.__name__ for e in EDITS])
def test_an_edited_journal_is_refused_by_run_report_leaderboard_and_verify(finished, tmp_path, edit) -> None:
    out, cfg_path = copy(finished, tmp_path)
    line = edit(out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    where = f"line {line}"
    one_error(invoke("run", cfg_path, "--no-progress"), "games.jsonl", where)
    one_error(invoke("report", out), "games.jsonl", where)
    one_error(invoke("leaderboard", out), "games.jsonl", where)
    res = invoke("verify", out)
    assert res.exit_code == 1, res.output
    fails = [x for x in res.output.splitlines() if x.startswith("FAIL")]
    assert len(fails) == 1 and "games.jsonl" in fails[0] and where in fails[0], res.output
    assert "NOT VERIFIED" in res.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # nothing was rewritten


def test_verify_passes_an_untouched_folder_and_run_report_leaderboard_accept_it(finished, tmp_path) -> None:
    out, cfg_path = copy(finished, tmp_path)
    res = invoke("verify", out)
    assert res.exit_code == 0, res.output
    for name in ("config", "chain", "published", "seed", "schedule", "leaderboard", "replays"):
        assert any(x.startswith("ok") and x.split()[1] == name for x in res.output.splitlines()), (name, res.output)
    assert "6 replays played again through the engine" in res.output
    assert "predictable" in res.output
    assert invoke("leaderboard", out).exit_code == 0
    assert invoke("report", out).exit_code == 0
    res = invoke("run", cfg_path, "--no-progress", "--no-site")
    assert res.exit_code == 0 and "0 games played" in res.output, res.output
    assert "predictable" in (out / "site" / "index.html").read_text()


def _fail_line(res) -> str:
    assert res.exit_code == 1, res.output
    fails = [x for x in res.output.splitlines() if x.startswith("FAIL")]
    assert len(fails) == 1, res.output
    return fails[0]


def test_verify_finds_a_published_leaderboard_that_the_games_do_not_give(finished, tmp_path) -> None:
    out, _ = copy(finished, tmp_path)
    board = json.loads((out / "leaderboard.json").read_text())
    board["entrants"][0]["wins"] += 1
    (out / "leaderboard.json").write_text(json.dumps(board, indent=1) + "\n")
    assert "leaderboard.json" in _fail_line(invoke("verify", out))
    out2 = tmp_path / "md"
    shutil.copytree(finished[0], out2)
    md = out2 / "leaderboard.csv"
    md.write_text(md.read_text().replace("greedy2", "greedy3"))
    assert "leaderboard.csv" in _fail_line(invoke("verify", out2))


def test_verify_plays_the_replays_again_and_finds_one_that_ends_otherwise(finished, tmp_path) -> None:
    out, _ = copy(finished, tmp_path)
    path = out / "replays" / "g000002.jsonl"
    items = [json.loads(x) for x in path.read_text().splitlines()]
    result = next(i for i in items if i["type"] == "result")
    result["scores"] = [s + 5 for s in result["scores"]]
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    line = _fail_line(invoke("verify", out))
    assert "g000002" in line and "scores" in line
    # Actions cut short: the game no longer reaches its end.
    last = max(k for k, i in enumerate(items) if i["type"] == "action")
    path.write_text("".join(json.dumps(i) + "\n" for k, i in enumerate(items) if k != last))
    assert "stop before the game ends" in _fail_line(invoke("verify", out))


def test_verify_finds_a_replay_changed_where_the_game_still_ends_as_recorded(finished, tmp_path) -> None:
    """Each record holds its replay's SHA-256: a replay whose moves are marked as the
    referee's fallbacks, with a fault added and its times shifted, still ends as
    recorded, and verify finds it changed."""
    out, _ = copy(finished, tmp_path)
    path = out / "replays" / "g000001.jsonl"
    items = [json.loads(x) for x in path.read_text().splitlines()]
    for i in items:
        if "t" in i:
            i["t"] = round(i["t"] + 0.5, 5)
    items.insert(2, {"type": "note", "seat": 0, "text": "seat 0 timed out"})
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    line = _fail_line(invoke("verify", out))
    assert "g000001" in line and "replay_sha256" in line, line


def test_verify_finds_a_replay_file_that_no_record_names(finished, tmp_path) -> None:
    """A file put in replays/ for a game whose record keeps none (or for no game) is not
    this tournament's: verify fails, and the site does not show it."""
    out, _ = copy(finished, tmp_path)
    (out / "replays" / "g000099.jsonl").write_text((out / "replays" / "g000001.jsonl").read_text())
    line = _fail_line(invoke("verify", out))
    assert "replays/g000099.jsonl is named by no game's record" in line, line
    assert invoke("report", out).exit_code == 0
    assert not (out / "site" / "replays" / "g000099.js").exists()


def test_verify_finds_a_revealed_seed_that_is_not_the_committed_one(tmp_path) -> None:
    out = tmp_path / "s"
    run_tournament(load_config(write_config(tmp_path, out, games_per_table=2, replays="none")), build_site=False)
    meta = json.loads((out / "tournament.json").read_text())
    meta["seed"] += 1
    (out / "tournament.json").write_text(json.dumps(meta))
    line = _fail_line(invoke("verify", out))
    assert line.split()[1] == "seed" and "does not hash to the published SHA-256" in line


def test_another_commitment_in_tournament_json_breaks_the_chain(finished, tmp_path) -> None:
    out, cfg_path = copy(finished, tmp_path)
    meta = json.loads((out / "tournament.json").read_text())
    meta["seed_sha256"] = hashlib.sha256(b"4").hexdigest()
    (out / "tournament.json").write_text(json.dumps(meta))
    one_error(invoke("leaderboard", out), "games.jsonl", "line 1")


# ----- the chain itself ---------------------------------------------------------------------------


GEN = genesis("c" * 64, "s" * 64)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 6), data=st.data())
def test_any_changed_byte_is_found_at_its_line(tmp_path_factory, n: int, data) -> None:
    path = tmp_path_factory.mktemp("chain") / "games.jsonl"
    j = Journal(path, GEN)
    for i in range(n):
        j.append({"id": i, "game": f"g{i:06d}", "seats": ["a", "b"], "places": [1, 2], "duration_s": 0.5 + i})
    j.close()
    good = path.read_bytes()
    assert sorted(read_chain(path, GEN, repair=False).games) == list(range(n))
    pos = data.draw(st.integers(0, len(good) - 1))
    new = data.draw(st.integers(0, 255).filter(lambda b: b != good[pos]))
    bad = good[:pos] + bytes([new]) + good[pos + 1:]
    path.write_bytes(bad)
    line = good[:pos].count(b"\n") + 1
    try:
        state = read_chain(path, GEN, repair=False)
    except JournalError as e:
        assert f"line {line}" in str(e), (str(e), line)
    else:
        # Only a change that tears the last line (its newline) may pass: that game is played again.
        assert pos == len(good) - 1 and len(state.games) == n - 1


def test_a_journal_of_another_tournament_is_refused_at_line_1(tmp_path) -> None:
    path = tmp_path / "games.jsonl"
    j = Journal(path, GEN)
    j.append({"id": 0})
    j.close()
    with pytest.raises(ChainError, match="line 1"):
        read_chain(path, genesis("d" * 64, "s" * 64))


def test_the_chain_covers_durations_and_order_but_the_digest_does_not(tmp_path) -> None:
    from harness.ledger.journal import results_digest

    a = [{"id": 0, "places": [1, 2], "duration_s": 1.0}, {"id": 1, "places": [2, 1], "duration_s": 2.0}]
    b = [{"id": 1, "places": [2, 1], "duration_s": 0.3}, {"id": 0, "places": [1, 2], "duration_s": 0.1}]
    assert results_digest(a) == results_digest(b)
    heads = []
    for recs in (a, b):
        head = GEN
        for r in recs:
            _, head = chained_line(head, r)
        heads.append(head)
    assert heads[0] != heads[1]
    assert results_digest(a) != results_digest([a[0], {**a[1], "places": [1, 2]}])


def test_results_of_the_previous_format_are_refused(finished, tmp_path) -> None:
    out, cfg_path = copy(finished, tmp_path)
    meta = json.loads((out / "tournament.json").read_text())
    meta["format"] = "p10-results/1"
    (out / "tournament.json").write_text(json.dumps(meta))
    one_error(invoke("run", cfg_path, "--no-progress"), "another version")
    one_error(invoke("leaderboard", out), "another version")
    assert _fail_line(invoke("verify", out)).split()[1] == "results"
    with pytest.raises(ResultsError):
        run_tournament(load_config(cfg_path))


@pytest.mark.parametrize("index", [-1, 1 << 40, True])
def test_a_chained_line_with_an_impossible_game_index_is_refused_cleanly(tmp_path: Path, index: object) -> None:
    """A games.jsonl rewritten with its chain recomputed still cannot name a game index
    below 0 or beyond any schedule (a bitmap of it would take the machine's memory)."""
    from harness.ledger.journal import Journal, JournalError, read_chain, scan_chain

    path = tmp_path / "games.jsonl"
    j = Journal(path, "0" * 64)
    j.append({"id": 0, "game": "g000000"})
    j.append({"id": index, "game": "gX"})
    j.close()
    with pytest.raises(JournalError, match="line 2 is not a game record"):
        read_chain(path, "0" * 64, repair=False)
    with pytest.raises(JournalError, match="line 2 is not a game record"):
        scan_chain(path, "0" * 64, repair=False)


def test_every_reader_of_the_journal_refuses_a_link_and_bounds_its_lines(tmp_path: Path) -> None:
    """games.jsonl as a link (to a journal elsewhere, or to /dev/zero) is read by no
    reader: they share one opening and one line reader; a line longer than any record
    is read as a torn tail, never held whole."""
    from harness.ledger.journal import iter_chain, scan_chain
    from harness.report.files import MAX_LINE

    elsewhere = tmp_path / "elsewhere.jsonl"
    j = Journal(elsewhere, "0" * 64)
    j.append({"id": 0, "game": "g000000"})
    j.close()
    path = tmp_path / "games.jsonl"
    path.symlink_to(elsewhere)
    for read in (lambda: read_chain(path, "0" * 64), lambda: scan_chain(path, "0" * 64),
                 lambda: iter_chain(path, "0" * 64, lambda rec: None)):
        with pytest.raises(JournalError, match="is a link"):
            read()
    assert elsewhere.read_bytes().count(b"\n") == 1  # not cut through the link either
    path.unlink()
    shutil.copy(elsewhere, path)
    with open(path, "ab") as f:
        f.write(b"x" * (2 * MAX_LINE) + b"\n")
    state = read_chain(path, "0" * 64, repair=False)
    assert list(state.games) == [0] and state.torn == 2 * MAX_LINE + 1


def test_verify_run_from_inside_the_results_folder(finished, tmp_path) -> None:
    """`p10-tourney verify .` from the results folder itself: nothing is run, so the
    folder verify runs from is no bot's (it would lie inside the results)."""
    out, _ = copy(finished, tmp_path)
    p = subprocess.run([sys.executable, "-m", "harness.cli", "verify", "."], cwd=out, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "verified:" in p.stdout


def test_verify_keeps_its_memory_whatever_game_index_a_forged_record_names(tmp_path) -> None:
    """A forged record may name replays/g999999999999.jsonl: verify fails it, and what it
    keeps of the names stays as small as the records (not a bit for every index below)."""
    import tracemalloc

    from types import SimpleNamespace

    from harness.engine import Rules
    from harness.ledger.keep import FirstFaults
    from harness.tournament.verify_read import Verification
    from harness.tournament.verify_replays import check_replays

    (tmp_path / "replays").mkdir()
    (tmp_path / "replays" / "g999999999999.jsonl").write_text("{}\n")
    v = Verification(tmp_path)
    recs = [{"id": 0, "game": "g000000", "replay": "replays/g999999999999.jsonl"}]
    tracemalloc.start()
    try:
        check_replays(v, tmp_path, SimpleNamespace(rules=Rules(), replays="all"), recs,  # type: ignore[arg-type]
                       FirstFaults(), None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20, peak
    assert [c for c in v.checks if c.name == "replays" and c.ok is False], v.checks


def test_verify_fails_bytes_after_the_last_whole_line_and_no_reader_shows_them(finished, tmp_path) -> None:
    """A published folder ends at a line's end: a record after the last newline is no torn
    write to pass over, so verify fails it (naming the bytes), and the site, which reads
    the lines verify reads, never shows it."""
    out, _ = copy(finished, tmp_path)
    lines = (out / "games.jsonl").read_bytes().splitlines()
    forged = orjson.loads(lines[-1])
    forged.update(id=99, game="g000099", winner=0, places=[1, 2])
    with open(out / "games.jsonl", "ab") as f:
        f.write(orjson.dumps(forged))  # no newline after it
    line = _fail_line(invoke("verify", out))
    assert line.split()[1] == "chain" and "bytes follow its last whole line (6)" in line, line
    assert invoke("report", out).exit_code == 0
    assert "g000099" not in (out / "site" / "index.html").read_text()


def test_report_never_writes_through_a_link_in_the_results_folder(finished, tmp_path) -> None:
    """A link where the site's page is, or where its replays folder is, is replaced, never
    written through or emptied; a link where the site folder is refuses the report (one
    `Error:` line) and leaves what it leads to as it was."""
    out, _ = copy(finished, tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    keep = tmp_path / "elsewhere"
    (keep / "replays").mkdir(parents=True)
    (keep / "replays" / "keep.txt").write_text("kept")
    site = out / "site"
    (site / "index.html").unlink()
    (site / "index.html").symlink_to(victim)
    shutil.rmtree(site / "replays")
    (site / "replays").symlink_to(keep / "replays")
    assert invoke("report", out).exit_code == 0
    assert victim.read_text() == "mine\n" and (keep / "replays" / "keep.txt").read_text() == "kept"
    assert not (site / "index.html").is_symlink() and "<html" in (site / "index.html").read_text()
    assert (site / "replays").is_dir() and not (site / "replays").is_symlink()
    shutil.rmtree(site)
    site.symlink_to(keep)
    assert "is a link" in one_error(invoke("report", out))
    assert sorted(p.name for p in keep.iterdir()) == ["replays"]
    assert [p.name for p in (keep / "replays").iterdir()] == ["keep.txt"]


@pytest.mark.parametrize("what", ["journal link to /dev/zero", "marker pipe", "huge replay"])
def test_verify_reads_only_plain_files_of_a_bounded_size(finished, tmp_path, what: str) -> None:
    """A link to /dev/zero (a file that never ends), a pipe nobody writes or a sparse file
    of gigabytes where a results folder's file should be: verify fails it at once, with
    its memory bounded, instead of reading forever."""
    import os

    out, _ = copy(finished, tmp_path)
    if what == "journal link to /dev/zero":
        (out / "games.jsonl").unlink()
        (out / "games.jsonl").symlink_to("/dev/zero")
        want = ("results", "games.jsonl is a link")
    elif what == "marker pipe":
        (out / "tournament.json").unlink()
        os.mkfifo(out / "tournament.json")
        want = ("results", "tournament.json is not a plain file")
    else:
        with open(out / "replays" / "g000001.jsonl", "ab") as f:
            f.truncate(4 << 30)  # sparse: no disk used
        want = ("replays", "more than the 67,108,864 such a file may")
    line = _fail_line(invoke("verify", out))
    assert line.split()[1] == want[0] and want[1] in line, line


@pytest.mark.parametrize("key,value", [("entrants", 7), ("entrants", ["greedy", ["x"]]), ("fields", {"start": 0}),
                                       ("fields", [{"start": "0", "entrants": ["greedy"]}]),
                                       ("fields", [{"start": 0, "entrants": [1, 2]}]), ("games", "6"),
                                       ("journal_head", 12), ("sandbox", "bwrap"), ("sandbox", {"bots": ["greedy"]}),
                                       ("sandbox", {"mode": 1}), ("retired", "greedy")])
def test_a_tournament_json_of_another_shape_is_one_error_in_every_reader(finished, tmp_path, key, value) -> None:
    """A value of another type in tournament.json (handed over, or edited) is reported,
    naming the file and the key, by verify, report, leaderboard and run: never a
    traceback."""
    out, cfg_path = copy(finished, tmp_path)
    meta = json.loads((out / "tournament.json").read_text())
    meta[key] = value
    (out / "tournament.json").write_text(json.dumps(meta, indent=1) + "\n")
    line = _fail_line(invoke("verify", out))
    assert line.split()[1] == "results" and "tournament.json" in line and repr(key) in line, line
    for args in (("report", out), ("leaderboard", out), ("run", cfg_path, "--no-progress", "--no-site")):
        one_error(invoke(*args), "tournament.json", repr(key))


def test_verify_compares_disqualified_json_byte_for_byte(finished, tmp_path) -> None:
    """disqualified.json is what the runner writes for these games, every byte of it (its
    `check_every` and its layout too), not only its list."""
    out, _ = copy(finished, tmp_path)
    path = out / "disqualified.json"
    data = json.loads(path.read_text())
    assert data["disqualified"] == []
    for text in (json.dumps(data) + "\n", json.dumps(data | {"check_every": 99}, indent=1) + "\n",
                 json.dumps(data | {"note": "all fine"}, indent=1) + "\n"):
        path.write_text(text)
        assert "disqualified.json" in _fail_line(invoke("verify", out))


def test_verify_expect_head_pins_the_published_journal(finished, tmp_path) -> None:
    """--expect-head, the head published elsewhere: a folder whose journal and
    tournament.json were both rewritten (the chain recomputed: everything else verifies)
    fails it; the untouched folder passes with the whole head or its first 16 digits."""
    out, _ = copy(finished, tmp_path)
    head = json.loads((out / "tournament.json").read_text())["journal_head"]
    res = invoke("verify", out, "--no-replays")
    assert res.exit_code == 0 and head in res.output, res.output  # the whole head is shown
    for given in (head, head[:16].upper()):
        res = invoke("verify", out, "--no-replays", "--expect-head", given)
        assert res.exit_code == 0 and any(x.startswith("ok") and x.split()[1] == "head" for x in res.output.splitlines()), res.output
    other = ("0" if head[0] != "0" else "1") + head[1:]
    line = _fail_line(invoke("verify", out, "--no-replays", "--expect-head", other))
    assert line.split()[1] == "head" and head in line, line
    for bad in ("abc", "xyz" * 8, head + "00"):
        one_error(invoke("verify", out, "--expect-head", bad), "--expect-head")


@pytest.mark.parametrize("what", ["leaderboard link to /dev/zero", "marker pipe", "journal pipe", "huge marker"])
def test_report_and_leaderboard_read_only_plain_files_of_a_bounded_size(finished, tmp_path, what: str) -> None:
    """report and leaderboard, like verify, fail at once on a link, a pipe or a huge file
    where a results folder's JSON or journal should be (each would never end, or take
    all memory)."""
    import os

    out, _ = copy(finished, tmp_path)
    if what == "leaderboard link to /dev/zero":
        (out / "leaderboard.json").unlink()
        (out / "leaderboard.json").symlink_to("/dev/zero")
        want = "leaderboard.json is a link"
    elif what in ("marker pipe", "journal pipe"):
        name = "tournament.json" if what == "marker pipe" else "games.jsonl"
        (out / name).unlink()
        os.mkfifo(out / name)
        want = f"{name} is not a plain file"
    else:
        with open(out / "tournament.json", "ab") as f:
            f.truncate(4 << 30)  # sparse: no disk used
        want = "more than the 67,108,864"
    for cmd in ("report", "leaderboard"):
        one_error(invoke(cmd, out), want)


def _bomb(levels: int = 9) -> str:
    """A YAML alias bomb: a few hundred bytes that stand for 9**levels strings."""
    text = 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for i in range(1, levels):
        text += f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n"
    return text


def test_a_yaml_alias_bomb_in_the_config_is_refused_by_every_reader(finished, tmp_path) -> None:
    """config.resolved.yaml of a few hundred bytes whose aliases stand for hundreds of
    millions of nodes: verify fails it at once, report and serve's live view leave the
    config out with a warning, instead of walking it for minutes and gigabytes."""
    from harness.tournament.serve import LiveView

    out, _ = copy(finished, tmp_path)
    path = out / "config.resolved.yaml"
    path.write_text(path.read_text() + _bomb())
    line = _fail_line(invoke("verify", out))
    assert line.split()[1] == "config" and "aliases expand to more than" in line, line
    res = invoke("report", out)
    assert res.exit_code == 0, res.output
    assert "aliases expand to more than" in (out / "site" / "index.html").read_text()
    assert LiveView(out).snapshot()["games"] == 6


def test_verify_binds_the_settings_to_the_chain(finished, tmp_path) -> None:
    """A config swapped after the fact (another name and time limit, tournament.json's
    config_sha256 made to match, the leaderboards published again from it) fails verify,
    the published head pinned or not: the chain starts from the settings' hash. A folder
    of the format before that (p10-chain/1) still verifies, and says its settings are not
    bound."""
    from harness.tournament.config import config_hash

    out, _ = copy(finished, tmp_path)
    meta = json.loads((out / "tournament.json").read_text())
    assert meta["chain"] == "p10-chain/2"
    resolved = yaml.safe_load((out / "config.resolved.yaml").read_text())
    resolved["name"] = "another"
    resolved["time"]["move_ms"] = 99
    (out / "config.resolved.yaml").write_text(yaml.safe_dump(resolved, sort_keys=False))
    (out / "tournament.json").write_text(json.dumps(meta | {"config_sha256": config_hash(resolved)}, indent=1))
    line = _fail_line(invoke("verify", out, "--expect-head", meta["journal_head"]))
    assert line.split()[1] == "config" and "not those the chain starts from" in line, line

    old, _ = copy(finished, tmp_path / "v1")
    meta = json.loads((old / "tournament.json").read_text())
    prev = genesis(meta["config_sha256"], meta["seed_sha256"])
    lines = []
    for raw in (old / "games.jsonl").read_bytes().splitlines():
        body, prev = chained_line(prev, orjson.loads(raw))
        lines.append(body)
    (old / "games.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    meta = {k: v for k, v in meta.items() if k != "chain_settings_sha256"} | {"chain": "p10-chain/1", "journal_head": prev}
    (old / "tournament.json").write_text(json.dumps(meta, indent=1))
    res = invoke("verify", old)
    assert res.exit_code == 0 and "p10-chain/1: its settings are not bound" in res.output, res.output


def test_with_expect_head_games_after_it_fail_and_the_site_shows_only_published_games(finished, tmp_path) -> None:
    """Lines after the published head (appended by someone, or played and not yet
    published): `verify --expect-head` fails them, and the site made by `report` leaves
    them out (no head vouches for them)."""
    out, _ = copy(finished, tmp_path)
    lines = _lines(out)
    last = orjson.loads(lines[-1])
    meta = json.loads((out / "tournament.json").read_text())
    head5 = orjson.loads(lines[-2])["chain"]  # the link after line 5
    (out / "tournament.json").write_text(json.dumps(meta | {"games": 5, "journal_head": head5}, indent=1))
    line = _fail_line(invoke("verify", out, "--no-replays", "--expect-head", head5))
    assert line.split()[1] == "head" and "1 lines follow the expected head" in line, line
    assert invoke("report", out).exit_code == 0
    # The games are listed in the site's data pages now (not in index.html): the one
    # after the head is in no file of the site, the published ones are in its games list.
    site = out / "site"
    texts = {f: f.read_text(errors="replace") for f in site.rglob("*") if f.is_file()}
    assert not [f for f, t in texts.items() if last["game"] in t]
    assert orjson.loads(lines[0])["game"] in (site / "data" / "all-0.js").read_text()


@pytest.mark.parametrize("change", [{"mu": "x"}, {"entrant": 7}, {"mu": 10 ** 400}, {"statistics": {"confidence": "x"}}],
                         ids=["text", "number name", "huge", "statistics"])
def test_a_leaderboard_json_of_another_shape_is_one_error(finished, tmp_path, change) -> None:
    """Values of another type in leaderboard.json (a row's rating, a name, the
    statistics): leaderboard, in every format, and report print one `Error:` line."""
    out, _ = copy(finished, tmp_path)
    board = json.loads((out / "leaderboard.json").read_text())
    if "statistics" in change:
        board["statistics"] = change["statistics"]
    else:
        board["entrants"][0] |= change
    (out / "leaderboard.json").write_text(json.dumps(board))
    for args in (("leaderboard", out), ("leaderboard", out, "--format", "markdown"),
                 ("leaderboard", out, "--format", "csv"), ("report", out)):
        res = invoke(*args)
        if res.exit_code == 0:  # a format that does not show the value
            continue
        one_error(res, "leaderboard.json")
    assert invoke("leaderboard", out).exit_code != 0


def test_report_takes_a_config_with_any_yaml_value_and_never_a_replay_through_a_link(finished, tmp_path) -> None:
    """A YAML date in config.resolved.yaml is shown as text; a replay in replays/ that is a
    link to a replay elsewhere, or replays/ a link to another folder's, is left out with a
    notice, not embedded; verify fails the linked folder."""
    out, _ = copy(finished, tmp_path)
    config = (out / "config.resolved.yaml").read_text()
    (out / "config.resolved.yaml").write_text(config + "when: 2024-01-01\n")
    outside = tmp_path / "outside.jsonl"
    shutil.copy(out / "replays" / "g000000.jsonl", outside)
    (out / "replays" / "g000000.jsonl").unlink()
    (out / "replays" / "g000000.jsonl").symlink_to(outside)
    res = invoke("report", out)
    assert res.exit_code == 0, res.output
    page = (out / "site" / "index.html").read_text()
    assert "2024-01-01" in page and "The replay of g000000 could not be read" in page
    assert not (out / "site" / "replays" / "g000000.js").exists()
    # replays/ itself a link to another folder's (a private tournament's, say): none shown
    other, _ = copy(finished, tmp_path / "private")
    shutil.rmtree(out / "replays")
    (out / "replays").symlink_to(other / "replays")
    assert invoke("report", out).exit_code == 0
    assert "replays/ is a link" in (out / "site" / "index.html").read_text()
    assert not list((out / "site" / "replays").glob("*.js")) if (out / "site" / "replays").exists() else True
    (out / "config.resolved.yaml").write_text(config)
    line = _fail_line(invoke("verify", out))
    assert line.split()[1] == "replays" and "is a link" in line, line


def test_verify_works_out_no_sandbox(finished, tmp_path, monkeypatch) -> None:
    """verify runs no bot, so it does not work out what each bot's sandbox would show: with
    the bots' folders unknown that walked the whole file system once for each bot (minutes
    for a field of 100)."""
    from harness.sandbox import marks, options

    def walked(*args, **kwargs):
        raise AssertionError("verify worked out a sandbox")

    monkeypatch.setattr(options, "bwrap_options", walked)
    monkeypatch.setattr(marks, "marked_folders", walked)
    out, _ = copy(finished, tmp_path)
    assert invoke("verify", out).exit_code == 0


@pytest.mark.parametrize("where", ["one bot", "every bot"])
def test_a_run_with_trusted_entrants_verifies(tmp_path: Path, where: str) -> None:
    """config.resolved.yaml lists the trusted entrants by name (`trusted: [names]`); verify
    reads that form back, so a genuine run with trusted entrants verifies. A name that is
    no bot's is an error in a tournament file."""
    out = tmp_path / "out"
    over = {"trusted": True} if where == "every bot" else {}
    cfg_path = write_config(tmp_path, out, seed=5, **over)
    if where == "one bot":
        data = yaml.safe_load(cfg_path.read_text())
        data["bots"][0]["trusted"] = True
        cfg_path.write_text(yaml.safe_dump(data))
    assert run_tournament(load_config(cfg_path)).finished
    assert isinstance(yaml.safe_load((out / "config.resolved.yaml").read_text())["trusted"], list)
    res = invoke("verify", out)
    assert res.exit_code == 0, res.output
    data = yaml.safe_load(cfg_path.read_text())
    data["trusted"] = ["greedy", "nobody"]
    data["output"] = str(tmp_path / "other")
    cfg_path.write_text(yaml.safe_dump(data))
    one_error(invoke("run", cfg_path), "trusted", "'nobody'")


def test_without_the_seed_claimed_disqualifications_are_shown_as_unchecked_and_impossible_ones_fail(
        tmp_path: Path) -> None:
    """While the seed is secret, the disqualifications a leaderboard publishes cannot be
    judged (they follow the schedule): verify says so in a check of their own instead of
    vouching for them, and fails those no schedule could give (an entrant that plays after
    it, one not in the field, one named twice)."""
    from harness.tournament.verify import verify_results

    out = tmp_path / "secret"
    cfg_path = write_config(tmp_path, out, games_per_table=4)

    def after_each_game(p) -> None:
        if p.last is not None and p.done == 8:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(load_config(cfg_path), on_progress=after_each_game)
    (out / "seed.secret").unlink()
    v = verify_results(out)
    assert v.ok and {c.name: c.ok for c in v.checks}["disqualified"] is None, v.checks
    assert "none claimed" in [c.detail for c in v.checks if c.name == "disqualified"][0]
    board = json.loads((out / "leaderboard.json").read_text())
    for claim, why in (({"entrant": "greedy", "reason": "r", "from_index": 2}, "but it played game"),
                       ({"entrant": "nobody", "reason": "r", "from_index": 2}, "not an entrant"),
                       ({"entrant": "greedy", "reason": "r", "from_index": 0}, "no round starts")):
        (out / "leaderboard.json").write_text(json.dumps(board | {"disqualified": [claim]}, indent=1) + "\n")
        line = _fail_line(invoke("verify", out))
        assert line.split()[1] == "disqualified" and why in line, line
    twice = [{"entrant": "random", "reason": "r", "from_index": 99}] * 2
    (out / "leaderboard.json").write_text(json.dumps(board | {"disqualified": twice}, indent=1) + "\n")
    assert "twice" in _fail_line(invoke("verify", out))


def test_verify_says_what_of_the_config_is_bound_and_fails_field_records_no_run_writes(finished, tmp_path) -> None:
    """The config the chain starts from binds all of it (bots' commands, trusted entrants,
    budget): then tournament.json can record no change of field or budget, and every
    entrant it names is in a field. A config changed since (another bot's command here)
    verifies, and verify says which parts of it are the host's word."""
    from harness.tournament.config import config_hash

    out, _ = copy(finished, tmp_path)
    res = invoke("verify", out, "--no-replays")
    assert res.exit_code == 0 and "all of it is bound" in res.output, res.output
    meta = json.loads((out / "tournament.json").read_text())
    field = meta["fields"][0]
    for change, why in (({"entrants": meta["entrants"] | {"ghost": "0" * 64}}, "in no field"),
                        ({"fields": [field, field | {"start": 4}]}, "records a change of field"),
                        ({"budget_changed": True}, "records a change of field"),
                        ({"retired": ["random"]}, "records a change of field")):
        (out / "tournament.json").write_text(json.dumps(meta | change, indent=1))
        line = _fail_line(invoke("verify", out, "--no-replays"))
        assert line.split()[1] == "config" and why in line, (change, line)
    resolved = yaml.safe_load((out / "config.resolved.yaml").read_text())
    resolved["bots"][1]["cmd"] = resolved["bots"][0]["cmd"]  # random's command is now greedy's
    (out / "config.resolved.yaml").write_text(yaml.safe_dump(resolved, sort_keys=False))
    (out / "tournament.json").write_text(json.dumps(meta | {"config_sha256": config_hash(resolved)}, indent=1))
    res = invoke("verify", out, "--no-replays", "--expect-head", meta["journal_head"])
    assert res.exit_code == 0 and "bots' commands, trusted entrants and budget" in res.output, res.output


def test_a_finished_tournament_cannot_keep_its_seed_secret(tmp_path: Path) -> None:
    """All of a round-robin's scheduled games published (how many it has does not depend on
    the seed) is a finished tournament: tournament.json saying it is not, with its seed
    hidden (so that nothing follows from it), fails verify."""
    out = tmp_path / "secret"
    run_tournament(load_config(write_config(tmp_path, out)))
    (out / "seed.secret").unlink(missing_ok=True)
    assert invoke("verify", out).exit_code == 0
    meta = json.loads((out / "tournament.json").read_text())
    assert meta["finished"] and meta["seed"] is not None
    (out / "tournament.json").write_text(json.dumps(meta | {"finished": False, "seed": None}, indent=1))
    board = json.loads((out / "leaderboard.json").read_text())
    (out / "leaderboard.json").write_text(json.dumps(board | {"seed": None}, indent=1) + "\n")
    line = _fail_line(invoke("verify", out))
    assert line.split()[1] == "finished" and "all 6 scheduled games are published" in line, line


def test_a_resumed_run_rates_only_the_games_after_the_published_ones(tmp_path, monkeypatch) -> None:
    """ratings.checkpoint.json (TrueSkill after the published games, bound by its SHA-256 in
    tournament.json) is where a run that goes on starts its ratings: the games already
    published are not rated again, and the boards are those of rating every game (verify
    rates them all and compares byte for byte). A checkpoint that is not theirs is not used."""
    from harness.ratings import trueskill as ratings_module

    out = tmp_path / "r"
    cfg_path = write_config(tmp_path, out, replays="none", seed=3)  # (a secret seed, revealed, takes no newcomer)
    assert invoke("run", cfg_path, "--no-progress", "--no-site").exit_code == 0
    rated: list[int] = []
    real = ratings_module.Ratings.update
    monkeypatch.setattr(ratings_module.Ratings, "update",
                        lambda self, i, seats, places: (rated.append(i), real(self, i, seats, places))[1])
    data = yaml.safe_load(cfg_path.read_text())
    data["bots"].append({"name": "random2", "cmd": RANDOM + ["6"]})  # a newcomer: its games only are played
    cfg_path.write_text(yaml.safe_dump(data))
    assert invoke("run", cfg_path, "--no-progress", "--no-site").exit_code == 0
    games = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    assert rated and min(rated) == 6 and sorted(rated) == sorted(g["id"] for g in games if g["id"] >= 6)
    res = invoke("verify", out, "--no-replays")
    assert res.exit_code == 0, res.output
    # An edited checkpoint (its hash no longer tournament.json's) is not used: every game is rated.
    with open(out / "ratings.checkpoint.json", "a") as f:
        f.write(" ")
    rated.clear()
    assert invoke("run", cfg_path, "--no-progress", "--no-site").exit_code == 0
    assert sorted(rated) == sorted(g["id"] for g in games if len(g["seats"]) > 1)
    assert invoke("verify", out, "--no-replays").exit_code == 0


def test_verify_passes_a_tournament_whose_entrants_were_disqualified(tmp_path: Path) -> None:
    """The games played without disqualified entrants (two of them: a table left with
    nobody is not played) are the games the seed schedules, as the runner played them:
    verify checks them against the schedule without the entrants each game names as
    disqualified, and passes."""
    template = [sys.executable, str(ROOT / "bots/templates/python/bot.py")]  # runs in any sandbox
    broken = [sys.executable, "-c", "raise SystemExit(3)"]
    path = write_config(tmp_path, tmp_path / "out", duplicate=False, replays="none",
                        bots=[{"name": "a", "cmd": template}, {"name": "x", "cmd": broken},
                              {"name": "b", "cmd": template}, {"name": "y", "cmd": broken}],
                        faults={"disqualify": {"startup_failures": 1, "check_every": 2}})
    res = invoke("run", path, "--no-site", "--no-progress")
    assert res.exit_code == 0, res.output
    games = records(tmp_path / "out")
    assert any(g["seats"] == [] and g.get("disqualified") for g in games)
    assert any(len(g["seats"]) == 1 and g.get("disqualified") for g in games)
    res = invoke("verify", tmp_path / "out")
    assert res.exit_code == 0 and "verified" in res.output, res.output
