"""The results site in a real browser: headless Chromium (Debian package `chromium`).

Two ways in, both without extra Python packages:
- `--dump-dom`: load a page from file://, let its scripts run, read the DOM back. The
  replay viewer honours `#game=…&keys=ArrowRight,…`, pressing those keys through its own
  keyboard handler once the game is loaded.
- the DevTools protocol over `--remote-debugging-pipe` (JSON messages on file descriptors
  3 and 4): real key presses and mouse clicks through the browser's input pipeline, every
  network request the page makes, and screenshots.

The browser resolves no host names (--host-resolver-rules), and the tests check that the
pages ask for nothing but local files. With P10_SCREENSHOTS=1 the tests also write
docs/leaderboard.png and docs/replay.png.
"""

from __future__ import annotations

import base64
import fcntl
import html
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from harness.report.site import build_site

FIXTURE = Path(__file__).parent / "fixtures" / "site"
DOCS = Path(__file__).resolve().parents[1] / "docs"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (Debian: apt-get install chromium); the browser tests need it",
)

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND", "--allow-file-access-from-files",
]


# ----------------------------------------------------------------------------- the site

@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("results") / "demo"
    shutil.copytree(FIXTURE, results, ignore=shutil.ignore_patterns("*.py", "__pycache__", "site"))
    return build_site(results)


def _has_replay(site: Path) -> bool:
    return (site / "replays" / "g000003.js").exists()


def _need_replay(site: Path) -> None:
    """The fixture game must replay with the current engine (regenerate it if a rules
    change breaks it)."""
    if not _has_replay(site):
        page = (site / "index.html").read_text()
        why = re.search(r"The replay of g000003 could not be read: ([^<]*)", page)
        pytest.fail("the engine could not replay the fixture game"
                    + (f" ({html.unescape(why.group(1))})" if why else ""))


class Stepper:
    """What the viewer should show after each key: a model of its navigation, built from
    the replay data the site embedded (so it holds for any number of hands and frames)."""

    def __init__(self, site: Path, game: str = "g000003") -> None:
        text = (site / "replays" / f"{game}.js").read_text().split("\n", 1)[1]
        data = json.loads(re.fullmatch(r'window\.P10_REPLAYS\[".*?"\]=(.*);\s*', text, re.S).group(1))
        self.n = len(data["frames"])
        self.hands = [f["h"] for f in data["frames"]]
        self.starts = [i for i in range(self.n) if i == 0 or self.hands[i] != self.hands[i - 1]]
        self.pos = 0

    def _k(self) -> int:
        return max(k for k, s in enumerate(self.starts) if s <= self.pos)

    def press(self, key: str) -> int:
        k = self._k()
        if key == "ArrowRight":
            self.pos = min(self.pos + 1, self.n - 1)
        elif key == "ArrowLeft":
            self.pos = max(self.pos - 1, 0)
        elif key in ("ArrowDown", "PageDown"):
            self.pos = self.starts[k + 1] if k + 1 < len(self.starts) else self.n - 1
        elif key in ("ArrowUp", "PageUp"):
            s = self.starts[k]
            self.pos = s if self.pos > s else (self.starts[k - 1] if k > 0 else 0)
        elif key == "Home":
            self.pos = 0
        elif key == "End":
            self.pos = self.n - 1
        return self.pos

    def run(self, keys: list[str]) -> int:
        self.pos = 0
        for key in keys:
            self.press(key)
        return self.pos


KEY_RUNS = [
    ["ArrowRight", "ArrowRight", "ArrowRight", "ArrowLeft"],
    ["ArrowDown"],
    ["ArrowDown", "ArrowDown", "ArrowRight", "ArrowUp"],
    ["End", "PageUp"],
    ["PageDown", "ArrowRight", "ArrowRight", "PageUp", "PageUp"],
]


# ----------------------------------------------------------------------------- --dump-dom

def _dump_dom(url: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", url],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _attr(dom: str, element_id: str, name: str) -> str | None:
    tag = re.search(r"<[a-z]+[^>]*\sid=\"%s\"[^>]*>" % re.escape(element_id), dom)
    if not tag:
        return None
    m = re.search(r'\s%s="([^"]*)"' % re.escape(name), tag.group(0))
    return m.group(1) if m else None


def _no_js_errors(dom: str) -> None:
    m = re.search(r'<div id="js-errors"[^>]*>(.*?)</div>', dom, re.S)
    assert m, "the error collector is missing"
    assert _attr(dom, "js-errors", "data-count") == "0", html.unescape(m.group(1))


def test_leaderboard_page_runs_its_scripts_from_file_urls(site: Path) -> None:
    dom = _dump_dom((site / "index.html").as_uri())
    assert re.search(r'<body[^>]*data-rendered="1"', dom), "the page's script did not finish"
    _no_js_errors(dom)
    assert _attr(dom, "leaderboard-table", "data-sortable") == "1"
    assert _attr(dom, "history-chart", "data-rendered") == "1"
    assert "greedy-js" in dom


def test_replay_viewer_steps_with_keys_given_in_the_address(site: Path) -> None:
    _need_replay(site)
    base = (site / "replay.html").as_uri()
    dom = _dump_dom(base + "#game=g000003")
    _no_js_errors(dom)
    assert re.search(r'<body[^>]*data-rendered="1"', dom)
    assert _attr(dom, "viewer", "data-frame") == "0"
    assert re.search(r'class="pcard [RBGY]', dom)  # cards are drawn
    model = Stepper(site)
    assert model.n >= 3
    for keys in KEY_RUNS:
        dom = _dump_dom(base + "#game=g000003&keys=" + ",".join(keys))
        _no_js_errors(dom)
        expected = model.run(keys)
        assert _attr(dom, "viewer", "data-frame") == str(expected), keys
        assert _attr(dom, "viewer", "data-hand") == str(model.hands[expected]), keys
    dom = _dump_dom(base + "#game=g000003&frame=2")
    assert _attr(dom, "viewer", "data-frame") == "2"


# ----------------------------------------------------------------------------- DevTools over a pipe

class DevTools:
    """A minimal Chrome DevTools Protocol client over --remote-debugging-pipe."""

    def __init__(self, profile: str) -> None:
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()

        def child_fds() -> None:  # the browser reads commands on fd 3 and answers on fd 4
            a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child_fds, pass_fds=(3, 4),
        )
        os.close(cmd_r)
        os.close(res_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def close(self) -> None:
        for fd in (self._cmd_w, self._res_r):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the browser did not answer in time")
            ready, _, _ = select.select([self._res_r], [], [], left)
            if ready:
                chunk = os.read(self._res_r, 1 << 16)
                if not chunk:
                    raise ConnectionError("the browser closed its DevTools pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30, session: bool = True) -> Any:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def open(self, url: str, before: str | None = None) -> None:
        """Load `url` and wait until its script has rendered it; `before`: a script run in
        the page before any of its own."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        self.call("Network.enable")
        self.call("Page.enable")
        self.call("Runtime.enable")  # exceptions and console calls arrive as events
        self.call("Log.enable")
        self.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        self.call("Emulation.setFocusEmulationEnabled", {"enabled": True})
        if before:
            self.call("Page.addScriptToEvaluateOnNewDocument", {"source": before})
        self.call("Page.navigate", {"url": url})
        self.wait_for("document.body && document.body.getAttribute('data-rendered') === '1'")

    def eval(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.eval(expression):
                    return
            except RuntimeError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"never true: {expression}")

    def key(self, key: str) -> None:
        codes = {"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40, "PageUp": 33, "PageDown": 34,
                 "Home": 36, "End": 35}
        common = {"key": key, "code": key, "windowsVirtualKeyCode": codes[key], "nativeVirtualKeyCode": codes[key]}
        self.call("Input.dispatchKeyEvent", {"type": "rawKeyDown", **common})
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", **common})

    def click(self, selector: str) -> None:
        box = self.eval(
            "(function(){var e=document.querySelector(%s); e.scrollIntoView({block:'center'});"
            "var r=e.getBoundingClientRect(); return [r.left + r.width/2, r.top + r.height/2];})()" % json.dumps(selector)
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def requested_urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    """A headless Chromium on its DevTools pipe. A slow start (a loaded machine) gets a
    second try; a browser that never answers skips the test on a developer's machine but
    fails it in CI (`CI` set), where .ci/run has installed Chromium for these tests."""
    tools = DevTools(str(tmp_path / "profile"))
    try:
        try:
            tools.call("Browser.getVersion", session=False, timeout=60)
        except (TimeoutError, ConnectionError, OSError):
            tools.close()
            tools = DevTools(str(tmp_path / "profile-2"))
            try:
                tools.call("Browser.getVersion", session=False, timeout=120)
            except (TimeoutError, ConnectionError, OSError) as e:
                why = f"Chromium ({CHROMIUM}) did not answer on --remote-debugging-pipe twice ({e})"
                if os.environ.get("CI"):
                    pytest.fail(why)
                pytest.skip(why)
        yield tools
    finally:
        tools.close()


def _check_local_only(browser: DevTools) -> None:
    urls = browser.requested_urls()
    assert urls, "no requests were seen at all"
    for url in urls:
        assert url.startswith(("file://", "data:", "about:")), f"the page asked the network for {url}"


def test_leaderboard_sorts_when_a_header_is_clicked(browser: DevTools, site: Path) -> None:
    browser.open((site / "index.html").as_uri())
    order = "Array.from(document.querySelectorAll('#leaderboard-table tbody tr')).map(r => r.dataset.entrant)"
    assert browser.eval(order) == ["greedy", "greedy-js", "cautious", "random"]
    browser.click("#leaderboard-table th:nth-child(2)")  # Entrant: A→Z
    assert browser.eval(order) == ["cautious", "greedy", "greedy-js", "random"]
    browser.click("#leaderboard-table th:nth-child(2)")  # and Z→A
    assert browser.eval(order) == ["random", "greedy-js", "greedy", "cautious"]
    browser.click("#leaderboard-table th:nth-child(13)")  # Faults: fewest first, ties keep their order
    assert browser.eval(order)[-2:] == ["cautious", "random"] or browser.eval(order)[-2:] == ["random", "cautious"]
    browser.click("#leaderboard-table th:nth-child(3)")  # μ − 3σ (the deciding column here): highest first
    assert browser.eval(order) == ["greedy", "greedy-js", "cautious", "random"]
    assert browser.eval("document.getElementById('js-errors').dataset.count") == "0"
    _check_local_only(browser)
    if os.environ.get("P10_SCREENSHOTS") == "1":
        browser.eval("window.scrollTo(0, 0)")
        browser.screenshot(DOCS / "leaderboard.png")


def test_games_list_pages_newest_first_and_filters_by_entrant_pair_and_fault(browser: DevTools, site: Path) -> None:
    browser.open((site / "index.html").as_uri())
    browser.wait_for("document.getElementById('games').dataset.rendered === '1'")
    rows = "Array.from(document.querySelectorAll('#games-table tbody tr')).map(r => r.dataset.game)"
    journal = [json.loads(line)["game"] for line in (site.parent / "games.jsonl").read_text().splitlines() if line.strip()]
    assert browser.eval(rows) == journal[::-1]  # newest first
    browser.click("#filter-faults")
    browser.wait_for("document.getElementById('games').dataset.matches === '1'")
    assert browser.eval("document.getElementById('games-count').textContent") == "1 of 6 games, newest first"
    browser.click("#filter-faults")
    pick = ("(function(id, v){var s=document.getElementById(id); s.value=v; "
            "s.dispatchEvent(new Event('change'));})(%s, %s)")
    browser.eval(pick % ('"filter-entrant"', '"greedy"'))
    browser.wait_for("document.getElementById('games').dataset.matches === '6'")
    browser.eval(pick % ('"filter-against"', '"random"'))
    browser.wait_for("!document.getElementById('games').dataset.loading")
    seats = browser.eval("Array.from(document.querySelectorAll('#games-table tbody tr')).map(r => JSON.parse(r.dataset.entrants))")
    assert seats and all("greedy" in s and "random" in s for s in seats)
    assert browser.eval("document.getElementById('js-errors').dataset.count") == "0"


def test_replay_viewer_answers_real_key_presses_and_buttons(browser: DevTools, site: Path) -> None:
    _need_replay(site)
    browser.open((site / "replay.html").as_uri() + "#game=g000003")
    frame = "+document.getElementById('viewer').dataset.frame"
    model = Stepper(site)
    assert browser.eval("+document.getElementById('scrub').max") + 1 == model.n
    assert browser.eval(frame) == 0
    for keys in KEY_RUNS:
        browser.key("Home")
        model.run([])
        for key in keys:
            browser.key(key)
            assert browser.eval(frame) == model.press(key), (keys, key)
    buttons = {"#btn-first": "Home", "#btn-prev": "ArrowLeft", "#btn-next": "ArrowRight",
               "#btn-prev-hand": "ArrowUp", "#btn-next-hand": "ArrowDown", "#btn-last": "End"}
    browser.key("Home")
    model.run([])
    assert browser.eval("document.getElementById('btn-prev').disabled") is True
    for button in ["#btn-next", "#btn-next", "#btn-prev", "#btn-next-hand", "#btn-prev-hand", "#btn-last",
                   "#btn-prev-hand", "#btn-first"]:
        browser.click(button)
        assert browser.eval(frame) == model.press(buttons[button]), button
    browser.click("#btn-last")
    assert browser.eval("document.getElementById('btn-next').disabled") is True
    # what a frame shows: every hand, the piles, the table, the text, the scores
    assert browser.eval("document.querySelectorAll('#players .player').length") == 4
    assert browser.eval("document.getElementById('action-text').textContent.length") > 0
    assert browser.eval("document.querySelectorAll('#score-table tbody tr').length") >= 1
    assert browser.eval("document.getElementById('js-errors').dataset.count") == "0"
    _check_local_only(browser)
    if os.environ.get("P10_SCREENSHOTS") == "1":
        # a moment mid-game: a few hands played, melds on the table
        pick = browser.eval(
            "(function(){var n=+document.getElementById('scrub').max;"
            "for (var i=0;i<=n;i++){document.getElementById('scrub').value=i;"
            "document.getElementById('scrub').dispatchEvent(new Event('input'));"
            "if (+document.getElementById('viewer').dataset.hand>=3 && "
            "document.querySelectorAll('#table-melds .meld').length>=3) return i;} return 0;})()"
        )
        browser.eval(f"document.getElementById('scrub').value={int(pick)};"
                     "document.getElementById('scrub').dispatchEvent(new Event('input'));window.scrollTo(0,0)")
        browser.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 1270, "y": 890})
        browser.screenshot(DOCS / "replay.png")


ALERTS = "window.__alerts = 0; window.alert = window.confirm = window.prompt = function () { window.__alerts++; };"


def test_hostile_names_run_no_script_and_read_as_text(browser: DevTools, tmp_path: Path) -> None:
    """Entrant names, fault reasons and the tournament's name with `</script><script>`,
    `"><img onerror>`, bidi overrides and control characters: no script of theirs runs,
    no element of theirs appears, and the pages show them as text."""
    from test_site import HOSTILE, dressed  # the same hostile results as the page-level test

    site = build_site(dressed(tmp_path, True))
    # the rows are made by the script from data/board.js: the names exactly, as text
    browser.open((site / "index.html").as_uri(), before=ALERTS)
    rows = "Array.from(document.querySelectorAll('#leaderboard-table tbody tr')).map(r => r.dataset.entrant)"
    assert sorted(browser.eval(rows)) == sorted([*HOSTILE.values(), "greedy-js"])
    links = "Array.from(document.querySelectorAll('#leaderboard-table a.entrant')).map(a => a.textContent)"
    assert sorted(browser.eval(links)) == sorted([*HOSTILE.values(), "greedy-js"])
    assert browser.eval("document.getElementById('title').textContent").startswith("T</script><script>")
    browser.click("#filter-faults")  # the games list's script makes its rows from the data files
    browser.wait_for("document.getElementById('games-count').textContent === '1 of 6 games, newest first'")
    assert browser.eval("document.querySelectorAll('img').length") == 0
    assert browser.eval("window.__alerts") == 0
    assert browser.eval("document.getElementById('js-errors').dataset.count") == "0", _console_errors(browser)
    if _has_replay(site):
        browser.open((site / "replay.html").as_uri() + "#game=g000003", before=ALERTS)
        players = browser.eval("document.getElementById('players').textContent")
        assert all(n in players for n in ("g" + "</script>", "r\"><img src=x"))
        assert browser.eval("document.querySelectorAll('img').length") == 0
        assert browser.eval("window.__alerts") == 0
        assert browser.eval("document.getElementById('js-errors').dataset.count") == "0", _console_errors(browser)
    assert not [e for e in browser.events if e.get("method") == "Page.javascriptDialogOpening"]
    _check_local_only(browser)


# ----------------------------------------------------------------------------- a big field

TOOLS = Path(__file__).resolve().parents[1] / "tools"


@pytest.fixture(scope="module")
def big_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100 entrants, 400 games of 4 from tools/gen_journal.py (latent strengths: e001 the
    strongest), published as a run's end does."""
    out = tmp_path_factory.mktemp("big") / "field"
    subprocess.run([sys.executable, str(TOOLS / "gen_journal.py"), str(out), "--entrants", "100", "--games", "400",
                    "--resamples", "100", "--fault-rate", "0.02"], check=True, capture_output=True, timeout=900)
    return out / "site"


def _console_errors(browser: DevTools) -> list[str]:
    out = []
    for e in browser.events:
        if e.get("method") == "Runtime.exceptionThrown":
            out.append(json.dumps(e["params"]["exceptionDetails"])[:500])
        elif e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") in ("error", "assert"):
            out.append(json.dumps(e["params"]["args"])[:500])
        elif e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error":
            out.append(e["params"]["entry"].get("text", "")[:500])
    return out


def test_a_field_of_100_entrants_renders_and_finds_an_entrant(browser: DevTools, big_site: Path) -> None:
    browser.open((big_site / "index.html").as_uri())
    visible = ("Array.from(document.querySelectorAll('#leaderboard-table tbody tr'))"
               ".filter(r => r.offsetParent !== null).map(r => r.dataset.entrant)")
    # the leaderboard: every entrant, one page of 50 at a time (only that page in the table)
    assert browser.eval("document.getElementById('leaderboard-table').dataset.matches") == "100"
    assert len(browser.eval(visible)) == 50
    assert browser.eval("document.getElementById('lb-page').textContent") == "page 1 of 2"
    # the order line of 100 entrants is folded, not a wall of text under the board
    assert browser.eval("document.getElementById('order-line').tagName") == "DETAILS"
    assert browser.eval("document.getElementById('order-line').open") is False
    browser.click("#lb-next")
    assert len(browser.eval(visible)) == 50 and browser.eval(visible)[0] != "e0001"
    # the heat map: one cell per pair on a canvas, painted, with a tooltip
    assert browser.eval("document.getElementById('h2h-canvas').dataset.rendered") == "1"
    assert browser.eval("+document.getElementById('h2h-canvas').dataset.cells") == 30  # a big field: the top 30,
    assert browser.eval("document.getElementById('h2h-canvas').dataset.labels") == "1"  # with their names
    browser.eval("(function(f){f.value='all';f.dispatchEvent(new Event('input'));})(document.getElementById('h2h-filter'))")
    assert browser.eval("+document.getElementById('h2h-canvas').dataset.cells") == 100
    assert browser.eval("document.getElementById('h2h-canvas').width") == 700  # 7 px a cell
    shades = browser.eval(
        "(function(){var c=document.getElementById('h2h-canvas'),d=c.getContext('2d').getImageData(0,0,c.width,c.height).data,"
        "colours=new Set();for(var i=0;i<d.length;i+=4)colours.add(d[i]+','+d[i+1]+','+d[i+2]);return Array.from(colours);})()")
    rgb = [tuple(map(int, x.split(","))) for x in shades]
    assert any(r > b + 60 for r, g, b in rgb) and any(b > r + 60 for r, g, b in rgb)  # behind and ahead, painted
    box = browser.eval("(function(){var c=document.getElementById('h2h-canvas');c.scrollIntoView({block:'center'});"
                       "var r=c.getBoundingClientRect();return [r.left, r.top];})()")
    browser.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0] + 7 * 3 + 3, "y": box[1] + 7 * 0 + 3})
    browser.wait_for("!document.getElementById('h2h-tip').classList.contains('hidden')")
    assert re.fullmatch(r"e\d{4} (placed ahead of e\d{4} in \d+ of \d+ games \(\d+ behind, \d+ tied\)|never met e\d{4})",
                        browser.eval("document.getElementById('h2h-tip').textContent"))
    browser.eval("(function(f){f.value='1-20';f.dispatchEvent(new Event('input'));})(document.getElementById('h2h-filter'))")
    browser.wait_for("+document.getElementById('h2h-canvas').dataset.cells === 20")
    assert browser.eval("document.getElementById('h2h-canvas').width") > 20 * 28  # zoomed in, and names beside
    # the rating chart: the top 10, each in its own colour; more can be added
    assert browser.eval("document.getElementById('history-chart').dataset.rendered") == "1"
    strokes = browser.eval("Array.from(document.querySelectorAll('#history-chart path.series')).map(p => p.getAttribute('stroke'))")
    assert len(strokes) == 10 and len(set(strokes)) == 10
    browser.click("#history-add")
    browser.call("Input.insertText", {"text": "e0077"})
    browser.eval("document.getElementById('history-add').dispatchEvent(new Event('change'))")
    assert browser.eval("document.querySelectorAll('#history-chart path.series').length") == 11
    assert "e0077" in browser.eval("document.getElementById('history-legend').textContent")
    # searching for an entrant finds its row
    browser.click("#lb-search")
    browser.call("Input.insertText", {"text": "e0077"})
    browser.wait_for("document.getElementById('leaderboard-table').dataset.matches === '1'")
    assert browser.eval(visible) == ["e0077"]
    assert browser.eval("document.getElementById('js-errors').dataset.count") == "0"
    assert _console_errors(browser) == []
    _check_local_only(browser)


# ----------------------------------------------------------------------------- layout

OVERFLOW = (Path(__file__).parent / "fixtures" / "overflow.js").read_text()
"""A script that lists every element reaching out of its panel (not inside a box that
scrolls) and every box whose content is wider than it (cut, or scrolled sideways)."""


def _layout(browser: DevTools, url: str, width: int, shot: Path) -> dict[str, Any]:
    browser.open(url)
    browser.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                         "mobile": width < 600})
    browser.wait_for("document.documentElement.clientWidth === %d" % width)
    browser.wait_for("!document.querySelector('[data-loading]')")
    found = browser.eval(OVERFLOW)
    browser.screenshot(shot)
    return found


@pytest.mark.parametrize("width", [390, 1400])
def test_nothing_overflows_its_panel_at_phone_and_desktop_widths(browser: DevTools, site: Path, big_site: Path,
                                                                 width: int, tmp_path: Path) -> None:
    """The leaderboard, the charts, the games list and an entrant's page, with 4 entrants
    and with 100 (PL and its interval): no element reaches out of its panel, nothing is cut
    or scrolled sideways; on a phone the deciding column stays and others are dropped.
    Screenshots: tmp_path, and docs/ with P10_SCREENSHOTS=1."""
    pages = {"small": site / "index.html", "big": big_site / "index.html",
             "entrant": big_site / "entrants" / "e0001.html"}
    for name, page in pages.items():
        shot = (DOCS if os.environ.get("P10_SCREENSHOTS") == "1" else tmp_path) / f"site-{name}-{width}.png"
        found = _layout(browser, page.as_uri(), width, shot)
        assert found["cut"] == [] and found["scrolls"] == [], (name, width, found)
    deciding = browser.eval("(function(){var t=document.querySelector('th.decides');"
                            "return t ? t.getBoundingClientRect().right <= document.documentElement.clientWidth : null;})()")
    assert deciding in (None, True)  # (an entrant's page has no leaderboard)
    _layout(browser, pages["big"].as_uri(), width, tmp_path / "again.png")
    shown = browser.eval("Array.from(document.querySelectorAll('#leaderboard-table th')).filter("
                         "t => t.offsetParent !== null).map(t => t.querySelector('.lbl').textContent)")
    assert shown[:3] == ["#", "Entrant", "PL [95 %]"]  # the column that decides, first and never dropped
    assert browser.eval("document.querySelector('#leaderboard-table td.decides').getBoundingClientRect().right") <= width
