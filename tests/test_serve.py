"""`p10-tourney serve`: live.json read as games.jsonl grows, and the open page updated in a
real browser (headless Chromium, as in test_site_browser.py) while a league plays."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.tournament.serve import LiveView, make_server

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "from harness.cli import main; main()"]


def _rec(i: int, seats: list[str], places: list[int]) -> dict[str, Any]:
    return {"id": i, "game": f"g{i:06d}", "seats": seats, "places": places, "reason": "finished", "replay": None}


def test_live_view_takes_in_whole_lines_as_the_journal_grows(tmp_path: Path) -> None:
    (tmp_path / "tournament.json").write_text(json.dumps({"name": "x", "fields": [{"start": 0, "entrants": ["a", "b"]}]}))
    path = tmp_path / "games.jsonl"
    path.write_bytes(json.dumps(_rec(0, ["a", "b"], [1, 2])).encode() + b"\n")
    view = LiveView(tmp_path)
    s = view.snapshot()
    assert s["games"] == 1 and [r["entrant"] for r in s["board"]] == ["a", "b"]
    line = json.dumps(_rec(1, ["b", "c"], [1, 2])).encode()
    with open(path, "ab") as f:
        f.write(line[:10])  # a line being written: not taken in yet
    assert view.snapshot()["games"] == 1
    with open(path, "ab") as f:
        f.write(line[10:] + b"\n")
    s = view.snapshot()
    assert s["games"] == 2 and s["newest"][0]["game"] == "g000001"
    rows = {r["entrant"]: r for r in s["board"]}
    assert rows["b"]["games"] == 2 and rows["c"]["retired"] is True and rows["a"]["wins"] == 1
    path.write_bytes(b"")  # started again (--fresh)
    assert view.snapshot()["games"] == 0


def test_serve_answers_live_json_and_the_page_with_its_script(tmp_path: Path) -> None:
    (tmp_path / "tournament.json").write_text(json.dumps({"name": "x"}))
    (tmp_path / "games.jsonl").write_bytes(json.dumps(_rec(0, ["a", "b"], [2, 1])).encode() + b"\n")
    server = make_server(tmp_path, 0, build=False)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        live = json.loads(urllib.request.urlopen(base + "live.json", timeout=30).read())
        assert live["games"] == 1 and {r["entrant"] for r in live["board"]} == {"a", "b"}
        page = urllib.request.urlopen(base, timeout=30).read().decode()
        assert '<script src="live.js"></script>' in page
        assert b"live.json" in urllib.request.urlopen(base + "live.js", timeout=30).read()
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(FileNotFoundError):
        make_server(tmp_path / "nothing", 0)


def test_serve_keeps_to_the_sites_own_plain_files(tmp_path: Path) -> None:
    """Only the files a site is made of are served, as plain files of site/: a page of the
    folder's own, a link to a file outside (a user's key, say), a folder whose index.html
    is such a link, a pipe: not found, by GET or HEAD. A linked site/ is refused; a link,
    pipe or huge file where tournament.json, leaderboard.json or games.jsonl should be
    leaves live.json answering, with no games."""
    import os

    secret = tmp_path / "secret.txt"
    secret.write_text("private")
    out = tmp_path / "out"
    out.mkdir()
    (out / "tournament.json").write_text(json.dumps({"name": "x"}))
    (out / "games.jsonl").write_bytes(json.dumps(_rec(0, ["a", "b"], [2, 1])).encode() + b"\n")
    site = out / "site"
    site.mkdir()
    (site / "replay.html").write_text("fine")
    (site / "replays").mkdir()
    (site / "replays" / "g000000.js").write_text("frames")
    (site / "evil.html").write_text("<script>fetch('/')</script>")
    (site / "config.resolved.yaml").symlink_to(secret)
    (site / "replays" / "g000001.js").symlink_to(secret)
    (site / "sub").symlink_to(tmp_path)
    (site / "folder").mkdir()
    (site / "folder" / "index.html").symlink_to(secret)
    os.mkfifo(site / "replays" / "pipe.js")
    server = make_server(out, 0, build=False)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        assert urllib.request.urlopen(base + "replay.html", timeout=30).read() == b"fine"
        assert urllib.request.urlopen(base + "replays/g000000.js", timeout=30).read() == b"frames"
        for path in ("evil.html", "config.resolved.yaml", "replays/g000001.js", "sub/secret.txt", "sub/", "folder/",
                     "folder/index.html", "replays/pipe.js", "replays/", "../secret.txt", "%2e%2e/secret.txt",
                     "replays/..%2f..%2fsecret.txt"):
            for method in ("GET", "HEAD"):
                with pytest.raises(urllib.error.HTTPError) as e:
                    urllib.request.urlopen(urllib.request.Request(base + path, method=method), timeout=30)
                assert e.value.code == 404, (method, path)
        (out / "games.jsonl").unlink()
        os.mkfifo(out / "games.jsonl")
        (out / "tournament.json").unlink()
        (out / "tournament.json").symlink_to("/dev/zero")
        with open(out / "leaderboard.json", "wb") as f:
            f.truncate(4 << 30)  # sparse: no disk used
        live = json.loads(urllib.request.urlopen(base + "live.json", timeout=30).read())
        assert live["games"] == 0 and live["published"] is None
    finally:
        server.shutdown()
        server.server_close()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "tournament.json").write_text(json.dumps({"name": "x"}))
    (linked / "site").symlink_to(tmp_path)
    with pytest.raises(ValueError, match="is a link"):
        make_server(linked, 0, build=False)


def test_the_live_view_skips_lines_longer_than_any_record(tmp_path: Path) -> None:
    """A line of many MB in games.jsonl is read in bounded chunks and skipped, as are
    records no game gives (200 seats, a seat twice, places out of range); the records
    after them are taken in."""
    from harness.report.files import MAX_LINE

    (tmp_path / "tournament.json").write_text(json.dumps({"name": "x"}))
    with open(tmp_path / "games.jsonl", "wb") as f:
        f.write(json.dumps(_rec(0, ["a", "b"], [1, 2])).encode() + b"\n")
        f.write(b"x" * (5 * MAX_LINE) + b"\n")
        f.write(json.dumps(["not", "a", "record"]).encode() + b"\n")
        f.write(json.dumps(_rec(7, [f"p{i}" for i in range(200)], list(range(1, 201)))).encode() + b"\n")  # R1: 2-6
        f.write(json.dumps(_rec(8, ["a", "a"], [1, 2])).encode() + b"\n")
        f.write(json.dumps(_rec(9, ["a", "b"], [0, True])).encode() + b"\n")
        f.write(json.dumps(_rec(1, ["a", "b"], [2, 1])).encode() + b"\n")
    assert LiveView(tmp_path).snapshot()["games"] == 2


# ----- in a browser --------------------------------------------------------------------------

from test_site_browser import CHROMIUM, FLAGS, browser  # noqa: E402,F401 - the DevTools fixture


@pytest.fixture(autouse=True)
def _reach_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    """Still no host name resolves in the browser, but the server on 127.0.0.1 is reached."""
    import test_site_browser

    monkeypatch.setattr(test_site_browser, "FLAGS", [
        f + ", EXCLUDE 127.0.0.1" if f.startswith("--host-resolver-rules=") else f for f in FLAGS])


def _league(tmp: Path) -> Path:
    bots = [{"name": "greedy", "cmd": [sys.executable, str(ROOT / "bots/python/greedy.py")]},
            {"name": "random", "cmd": [sys.executable, str(ROOT / "bots/python/random_bot.py"), "5"]},
            {"name": "random2", "cmd": [sys.executable, str(ROOT / "bots/python/random_bot.py"), "7"]}]
    path = tmp / "league.yaml"
    path.write_text(yaml.safe_dump({
        "name": "live", "seed": 9, "bots": bots, "format": "league", "games": 4, "table_size": 2,
        "league": {"round_games": 4, "min_games": 2}, "rules": {"phases": [1, 2], "hand_limit": 20},
        "time": {"move_ms": 5000, "startup_ms": 10000}, "output": str(tmp / "out"), "parallel": 1}))
    return path


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium)")
def test_the_open_page_shows_new_games_and_standings_without_a_reload(tmp_path: Path, browser: Any) -> None:
    path = _league(tmp_path)
    out = tmp_path / "out"
    first = subprocess.run(CLI + ["run", str(path), "--no-progress"], capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert (out / "site" / "index.html").exists()
    serve = subprocess.Popen(CLI + ["serve", str(out), "--port", "0"], stderr=subprocess.PIPE, text=True)
    league = None
    league_err = (tmp_path / "league.stderr").open("w")
    try:
        line = serve.stderr.readline() if serve.stderr else ""
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert port, line
        browser.open(f"http://127.0.0.1:{port.group(1)}/")
        browser.wait_for("document.querySelectorAll('#live-board tbody tr').length === 3", timeout=60)
        before = browser.eval("document.getElementById('live').getAttribute('data-games')")
        newest = browser.eval("document.querySelector('#live-games li').getAttribute('data-game')")
        games_of = "Object.fromEntries([...document.querySelectorAll('#live-board tbody tr')].map(" \
                   "r => [r.dataset.entrant, +r.dataset.games]))"
        board = browser.eval(games_of)
        assert before == "4" and newest == "g000003" and sum(board.values()) == 8
        browser.eval("window.__notReloaded = true")
        league = subprocess.Popen(CLI + ["run", str(path), "--forever", "--no-site", "--no-progress"],
                                  stdout=subprocess.DEVNULL, stderr=league_err)
        browser.wait_for("+document.getElementById('live').getAttribute('data-games') >= 6", timeout=300)
        assert browser.eval("window.__notReloaded") is True  # the same page, updated in place
        after = browser.eval(games_of)
        assert sum(after.values()) > sum(board.values())
        assert any(after[e] > board[e] for e in board)  # the standings moved on
        assert browser.eval("document.querySelector('#live-games li').getAttribute('data-game')") != newest
        assert "playing" in browser.eval("document.getElementById('live-progress').textContent")
        urls = [u for u in browser.requested_urls() if not u.startswith(("data:", "about:"))]
        assert urls and all(u.startswith(f"http://127.0.0.1:{port.group(1)}/") for u in urls), urls
    finally:
        if league is not None:
            league.send_signal(signal.SIGTERM)
            try:
                league.wait(timeout=300)
            except subprocess.TimeoutExpired:
                league.kill()
        serve.send_signal(signal.SIGINT)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
        league_err.close()
    assert league is not None and league.returncode == 0, (tmp_path / "league.stderr").read_text()[-2000:]


def test_a_run_silent_for_three_heartbeats_is_stopped_since_its_last(tmp_path: Path) -> None:
    """progress.json says "running" until the run's last word; only its heartbeat tells a
    run killed without one (kill -9) from a live one."""
    from harness.tournament.heartbeat import Heartbeat, run_state, stale_after

    beat = Heartbeat(tmp_path / "progress.json", every=2.0)
    beat.set({"done": 3, "running": True}, force=True)
    progress = json.loads((tmp_path / "progress.json").read_text())
    t = progress["updated"]
    assert progress["heartbeat_s"] == 2.0 and stale_after(2.0) == 8.0
    assert run_state(progress, now=t + 7.9)["state"] == "playing"
    gone = run_state(progress, now=t + 8.1)
    assert gone == {"state": "stopped", "since": t, "silent_s": 8.1}
    beat.set({"done": 3, "running": False}, force=True)
    assert run_state(json.loads((tmp_path / "progress.json").read_text()), now=t + 60)["state"] == "finished"
    assert run_state({})["state"] == "idle"
    with pytest.raises(ValueError, match="heartbeat interval"):
        Heartbeat(tmp_path / "p.json", every=0)


def test_the_live_box_ranks_and_rates_as_the_published_board(tmp_path: Path) -> None:
    """One ranking: the live box has the board's order and its deciding value, not a
    TrueSkill of its own in arrival order; games and wins are counted live."""
    (tmp_path / "tournament.json").write_text(json.dumps({"name": "x"}))
    (tmp_path / "leaderboard.json").write_text(json.dumps({"games": 1, "entrants": [
        {"rank": 1, "entrant": "a", "pl_strength": 0.4, "ci_low": 0.1, "ci_high": 0.7, "conservative": 1.0, "games": 1},
        {"rank": 2, "entrant": "b", "pl_strength": -0.4, "ci_low": -0.7, "ci_high": -0.1, "conservative": 9.0,
         "games": 1}]}))
    path = tmp_path / "games.jsonl"
    path.write_bytes(b"".join(json.dumps(_rec(i, ["b", "a", "c"], [1, 2, 3])).encode() + b"\n" for i in range(3)))
    s = LiveView(tmp_path).snapshot()
    assert [(r["rank"], r["entrant"], r["value"]) for r in s["board"]] == [(1, "a", 0.4), (2, "b", -0.4), (None, "c", None)]
    assert s["decides"] == "PL" and s["board"][1]["wins"] == 3 and s["board"][0]["low"] == 0.1


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium)")
def test_the_open_page_says_the_run_stopped_after_kill_9(tmp_path: Path, browser: Any) -> None:
    """kill -9 of `run --forever` leaves progress.json saying "running"; the open page
    says "stopped, since …" once the heartbeat is missed (0.5 s here, so well within 30 s)."""
    path = _league(tmp_path)
    out = tmp_path / "out"
    serve = None
    league = subprocess.Popen(CLI + ["run", str(path), "--forever", "--heartbeat", "0.5", "--no-site", "--no-progress"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not (out / "games.jsonl").exists() or not (out / "games.jsonl").stat().st_size:
            assert league.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        serve = subprocess.Popen(CLI + ["serve", str(out), "--port", "0"], stderr=subprocess.PIPE, text=True)
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", serve.stderr.readline() if serve.stderr else "")
        assert port
        browser.open(f"http://127.0.0.1:{port.group(1)}/")
        browser.wait_for("document.getElementById('live').getAttribute('data-state') === 'playing'", timeout=60)
        os.killpg(league.pid, signal.SIGKILL)  # the run and its bots, without a word
        league.wait(timeout=30)
        assert json.loads((out / "progress.json").read_text())["running"] is True
        browser.wait_for("document.getElementById('live').getAttribute('data-state') === 'stopped'", timeout=30)
        assert browser.eval("document.getElementById('live-state').textContent").startswith("stopped, since ")
    finally:
        if league.poll() is None:
            os.killpg(league.pid, signal.SIGKILL)
            league.wait(timeout=30)
        if serve is not None:
            serve.send_signal(signal.SIGINT)
            try:
                serve.wait(timeout=30)
            except subprocess.TimeoutExpired:
                serve.kill()


def _synthetic(results: Path, first: int, n: int, field: list[str]) -> None:
    """`n` games from id `first` at tables of four drawn from `field` (a seeded draw), added
    to games.jsonl, and a leaderboard.json of the field as a publication writes it."""
    import random

    rnd = random.Random(first)
    with open(results / "games.jsonl", "a") as f:
        for i in range(first, first + n):
            seats = rnd.sample(field, 4)
            faults = [{"seat": 0, "kind": "timeout", "reason": "no reply"}] if i % 97 == 0 else []
            f.write(json.dumps({"id": i, "game": f"g{i:06d}", "seats": seats, "places": [1, 2, 3, 4],
                                "scores": [5, 50, 90, 120], "phases": [9, 7, 5, 3], "faults": faults,
                                "reason": "finished", "replay": None}) + "\n")
    (results / "leaderboard.json").write_text(json.dumps({"name": "big", "games": first + n, "entrants": [
        {"rank": k + 1, "entrant": e, "mu": 30 - k, "sigma": 1.0, "conservative": 27 - k} for k, e in enumerate(field)]}))


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium)")
def test_an_entrant_added_after_5000_games_shows_without_restarting_serve(tmp_path: Path, browser: Any) -> None:
    """A league's newcomer after 5,000 games: once the site is published again (as a
    league's run does between rounds), the running `serve` shows its page and its games,
    newest first, in the games list."""
    from harness.report.site import build_site

    results = tmp_path / "league"
    results.mkdir()
    (results / "tournament.json").write_text(json.dumps({"name": "big"}))
    field = [f"bot{k}" for k in range(8)]
    _synthetic(results, 0, 5000, field)
    build_site(results)
    serve = subprocess.Popen(CLI + ["serve", str(results), "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", serve.stderr.readline() if serve.stderr else "")
        assert port
        base = f"http://127.0.0.1:{port.group(1)}/"
        browser.open(base)
        browser.wait_for("document.getElementById('games').dataset.rendered === '1'")
        assert browser.eval("document.getElementById('games-count').textContent") == "5000 games, newest first"
        _synthetic(results, 5000, 200, field + ["newbie"])  # the newcomer plays
        build_site(results)  # published again, serve untouched
        browser.open(base + "entrants/newbie.html")
        browser.wait_for("document.getElementById('games').dataset.rendered === '1'")
        newbie = json.loads(browser.eval("JSON.stringify(Array.from(document.querySelectorAll('#games-table tbody tr'))"
                                         ".map(r => [r.dataset.game, JSON.parse(r.dataset.entrants)]))"))
        assert newbie and all("newbie" in seats for _, seats in newbie)
        assert newbie[0][0] > newbie[-1][0]  # newest first
        assert "<dt>Rank</dt><dd>9</dd>" in urllib.request.urlopen(base + "entrants/newbie.html", timeout=30).read().decode()
        browser.open(base)
        browser.wait_for("document.getElementById('games').dataset.rendered === '1'")
        assert browser.eval("document.getElementById('games-count').textContent") == "5200 games, newest first"
        assert browser.eval("document.querySelector('#games-table tbody tr').dataset.game") == "g005199"
        browser.eval("(function(s){s.value='newbie';s.dispatchEvent(new Event('change'));})"
                     "(document.getElementById('filter-entrant'))")
        browser.wait_for("document.getElementById('games').dataset.matches === '%d'" % sum(
            "newbie" in json.loads(line)["seats"] for line in (results / "games.jsonl").read_text().splitlines()))
        assert browser.eval("document.getElementById('js-errors').dataset.count") == "0"
    finally:
        serve.send_signal(signal.SIGINT)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
