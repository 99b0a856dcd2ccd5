"""`p10-tourney serve RESULTS`: the results site over HTTP on 127.0.0.1, live.

The standard library's threaded HTTP server serves RESULTS/site/ (built first if it is
not there yet) and two more paths: ``live.json``, the state of the results folder now,
and ``live.js``, the page script that polls it once a second and updates, in the open
page and with no reload, the live box: whether the run is playing or stopped (and since
when: its heartbeat in progress.json), the published board's ranking with each entrant's
games counted live, and the newest games. ``index.html`` is served with that script added; the files on
disk stay the self-contained static site.

`LiveView` reads games.jsonl as it grows (only the bytes added since the last look, only
whole lines), so a poll costs little however long the tournament is.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import urllib.parse
from collections import deque
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Mapping

import orjson
from ..report.files import (MAX_META, NotAFileError, open_plain, read_json, read_regular,
                             safe_folder)
from ..ledger.journal import journal_lines
from ..ledger.marker import MARKER, marker_shape
from .heartbeat import run_state
from ..model import played

NEWEST = 10
SITE_FILES = re.compile(r"index\.html|replay\.html|config\.resolved\.yaml|site\.css|games\.js|rank_history\.json|replays/[A-Za-z0-9_.-]+\.js"
                        r"|data/[A-Za-z0-9_-]+\.js|entrants/[A-Za-z0-9_-]+\.html")
"""What `serve` serves of site/ besides the live paths: the files `report.site.build_site`
writes, by name."""
_ASSETS = Path(__file__).resolve().parent.parent / "report" / "assets"
_PLACEHOLDER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{name}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em}} .hint{{color:#666}} td,th{{padding:2px 8px}}</style></head>
<body><main><p class="hint">The site is built when the first games are published.</p></main></body></html>
"""


class LiveView:
    """The live state of a results folder, from games.jsonl read as it grows."""

    def __init__(self, results: Path) -> None:
        self.results = Path(results)
        self.lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.offset = 0
        self.inode: int | None = None
        self.games = 0
        self.stats: dict[str, list[int]] = {}  # entrant -> [games, wins]
        self.newest: deque[dict[str, Any]] = deque(maxlen=NEWEST)

    def refresh(self) -> None:
        """Take in the whole lines added to games.jsonl since the last look (from the
        start again if the file was replaced or cut)."""
        path = self.results / "games.jsonl"
        try:
            f = open_plain(path)
        except (OSError, ValueError):  # missing, or not a plain file (a link, a pipe): no games
            if self.games:
                self._reset()
            return
        with f:
            st = os.fstat(f.fileno())
            if st.st_ino != self.inode or st.st_size < self.offset:
                self._reset()
                self.inode = st.st_ino
            f.seek(self.offset)
            for raw in journal_lines(f, skip_long=True):  # bounded lines: a line longer than any record is skipped
                self.offset = f.tell()
                try:
                    rec = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    rec = None
                if isinstance(rec, dict):
                    self._add(rec)

    def _add(self, rec: dict[str, Any]) -> None:
        seats, places = rec.get("seats") or [], rec.get("places") or []
        if (not played(rec) or not isinstance(seats, list) or not isinstance(places, list)
                or not 2 <= len(seats) <= 6 or len(seats) != len(places) or len(set(map(str, seats))) != len(seats)
                or not all(isinstance(e, str) for e in seats)
                or not all(isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= len(seats) for p in places)
                or not isinstance(rec.get("id"), int)):
            return  # not a record the runner writes (R1: tables of 2 to 6)
        for e, p in zip(seats, places):
            st = self.stats.setdefault(e, [0, 0])
            st[0] += 1
            st[1] += p == 1
        self.games += 1
        self.newest.appendleft({"game": rec.get("game"), "seats": seats, "places": places,
                                "reason": rec.get("reason"), "replay": rec.get("replay")})

    def _json(self, name: str) -> dict[str, Any]:
        try:
            data = read_json(self.results / name)
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def snapshot(self) -> dict[str, Any]:
        """What live.json answers: the games so far, the progress (progress.json) and what
        can be said of the run (`heartbeat.run_state`: playing, or stopped and since
        when), the board (`live_board`), the newest games, and the games of the last
        published leaderboard."""
        with self.lock:
            self.refresh()
            meta = self._json(MARKER)
            fields = (meta.get("fields") or []) if marker_shape(meta) is None else []
            active = set(fields[-1]["entrants"]) if fields else set(self.stats)
            progress = self._json("progress.json")
            lb = self._json("leaderboard.json")
            return {"name": meta.get("name"), "games": self.games, "progress": progress,
                    "run": run_state(progress), "now": round(time.time(), 3),
                    **live_board(lb, self.stats, active), "newest": list(self.newest),
                    "published": lb.get("games")}


def live_board(lb: Mapping[str, Any], stats: Mapping[str, list[int]], active: set[str]) -> dict[str, Any]:
    """The live box's board: the published leaderboard's rows in its order, with its
    deciding value (PL strength and its interval, or μ − 3σ where the board has no PL),
    and each entrant's games and wins counted live; entrants with games but no published
    row yet follow, unranked. ``decides`` names the deciding column."""
    rows = [r for r in lb.get("entrants") or [] if isinstance(r, dict) and isinstance(r.get("entrant"), str)]
    has_pl = any(r.get("pl_strength") is not None for r in rows)
    board: list[dict[str, Any]] = []
    for r in rows:
        name = r["entrant"]
        games, wins = stats.get(name, (0, 0))
        value = r.get("pl_strength") if has_pl else r.get("conservative")
        board.append({"rank": r.get("rank"), "entrant": name, "value": value,
                      "low": r.get("ci_low"), "high": r.get("ci_high"), "published_games": r.get("games"),
                      "games": int(games), "wins": int(wins), "retired": bool(r.get("retired")) or name not in active})
    named = {r["entrant"] for r in board}
    for name in sorted(set(stats) - named):
        games, wins = stats[name]
        board.append({"rank": None, "entrant": name, "value": None, "low": None, "high": None,
                      "published_games": 0, "games": int(games), "wins": int(wins), "retired": name not in active})
    return {"board": board, "decides": "PL" if has_pl else "μ − 3σ" if rows else None}


class _Handler(SimpleHTTPRequestHandler):
    """The site's files, index.html with the live script, live.json and live.js."""

    view: LiveView

    def __init__(self, *args: Any, view: LiveView, **kwargs: Any) -> None:
        self.view = view
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    def send_head(self) -> Any:
        """Only the files the site is made of (`SITE_FILES`), each a plain file of site/
        opened without following a link: anything else the folder holds (a page of its
        own, a link out of it, a folder, a pipe) is not found."""
        rel = urllib.parse.unquote(self.path.split("?", 1)[0].split("#", 1)[0]).lstrip("/") or "index.html"
        if not SITE_FILES.fullmatch(rel):
            self.send_error(404, "File not found")
            return None
        site = Path(self.directory)
        try:
            if "/" in rel and os.path.islink(site / rel.split("/", 1)[0]):
                raise NotAFileError(f"a linked {rel.split('/', 1)[0]}/")
            f = open_plain(site / rel)
        except (OSError, ValueError):
            self.send_error(404, "File not found")
            return None
        try:
            st = os.fstat(f.fileno())
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(rel))
            self.send_header("Content-Length", str(st.st_size))
            self.send_header("Last-Modified", self.date_time_string(int(st.st_mtime)))
            self.end_headers()
        except BaseException:
            f.close()
            raise
        return f

    def _send(self, body: bytes, ctype: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path == "/live.json":
            try:
                body = json.dumps(self.view.snapshot()).encode()
            except Exception as e:  # a journal no run wrote: the page says so, the server goes on
                self.send_error(500, f"live state unreadable ({type(e).__name__})")
                return
            self._send(body, "application/json")
        elif path == "/live.js":
            self._send((_ASSETS / "live.js").read_bytes(), "text/javascript; charset=utf-8")
        elif path in ("/", "/index.html"):
            index = self.view.results / "site" / "index.html"
            try:
                page = read_regular(index, MAX_META).decode("utf-8")
            except (OSError, ValueError):
                page = _PLACEHOLDER.format(name=self.view.results.name)
            tag = '<script src="live.js"></script>'
            page = page.replace("</body>", tag + "</body>", 1) if "</body>" in page else page + tag
            self._send(page.encode(), "text/html; charset=utf-8")
        else:
            super().do_GET()


def make_server(results: Path, port: int = 0, build: bool = True) -> ThreadingHTTPServer:
    """A server of results folder `results` on 127.0.0.1:`port` (0: any free port; the
    server's `server_address` says which). The site is built first if `build` and the
    folder has games but no site yet."""
    results = Path(results)
    if not (results / MARKER).exists() and not (results / "games.jsonl").exists():
        raise FileNotFoundError(f"{results}: not a results folder (no {MARKER}); run a tournament into it first")
    if build and not (results / "site" / "index.html").exists() and (
            (results / "leaderboard.json").exists() or (results / "games.jsonl").exists()):
        from ..report.site import build_site

        build_site(results)
    site = results / "site"
    safe_folder(site)  # a linked site/ is refused: only the results' own files are served
    handler = partial(_Handler, view=LiveView(results), directory=os.fspath(site))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server
