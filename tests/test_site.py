"""The results site (harness.report.site) and the terminal replay, built from the fixture
tournament in tests/fixtures/site/: 6 games of 4 entrants, with a replay of g000003 (a
played game whose every deal is stacked in the header, so it replays the same under any
shuffle).

Replays go through the engine's `harness.engine.replay.frames`; the fixture replay must
replay with the current engine (if a rules change breaks it, regenerate it).
"""

from __future__ import annotations

import html
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.report.site import build_site, read_replay

FIXTURE = Path(__file__).parent / "fixtures" / "site"
REPLAY = FIXTURE / "replays" / "g000003.jsonl"
ENTRANTS = ["greedy", "random", "cautious", "greedy-js"]
FINAL_SCORES = [135, 220, 215, 285]  # g000003 as played


def _results(tmp_path: Path) -> Path:
    dst = tmp_path / "results" / "demo"
    shutil.copytree(FIXTURE, dst, ignore=shutil.ignore_patterns("*.py", "__pycache__", "site"))
    return dst


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return build_site(_results(tmp_path))


def _read(site: Path, name: str) -> str:
    return (site / name).read_text(encoding="utf-8")


def _all_text(site: Path) -> dict[str, str]:
    return {str(p.relative_to(site)): p.read_text(encoding="utf-8") for p in site.rglob("*") if p.is_file()}


def _replay_payload(site: Path, game: str = "g000003") -> dict:
    text = _read(site, f"replays/{game}.js")
    assert text.startswith("window.P10_REPLAYS=window.P10_REPLAYS||{};")
    body = text.split("\n", 1)[1]
    match = re.fullmatch(r'window\.P10_REPLAYS\[(".*?")\]=(.*);\s*', body, re.S)
    assert match, body[:200]
    assert json.loads(match.group(1)) == game
    return json.loads(match.group(2))


# ----------------------------------------------------------------------------- the pages

def test_build_writes_the_pages_into_results_site(site: Path) -> None:
    assert site.name == "site"
    for name in ("index.html", "replay.html", "config.resolved.yaml"):
        assert (site / name).is_file(), name
    assert _read(site, "index.html").startswith("<!DOCTYPE html>")


def test_leaderboard_lists_every_entrant_in_rank_order_with_whiskers(site: Path) -> None:
    page = _read(site, "index.html")
    board = page[page.index('id="leaderboard-table"'):page.index("</table>", page.index('id="leaderboard-table"'))]
    rows = re.findall(r'<tr data-entrant="([^"]+)"', board)
    assert rows == ["greedy", "greedy-js", "cautious", "random"]  # rank order of leaderboard.json
    assert board.count('<svg class="whisker"') == 4  # μ ± 3σ for every entrant
    assert "31.84" in board and "22.42" in board  # μ and μ − 3σ of greedy
    assert board.count('data-type="num"') >= 10  # every numeric column sorts


def test_rating_history_draws_one_line_per_entrant(site: Path) -> None:
    page = _read(site, "index.html")
    chart = page[page.index('id="history-chart"'):page.index("</svg>", page.index('id="history-chart"'))]
    assert chart.count('<path class="series"') == 4
    assert "games played" in chart


def test_head_to_head_and_places(site: Path) -> None:
    page = _read(site, "index.html")
    heat = page[page.index('id="h2h-table"'):page.index("</table>", page.index('id="h2h-table"'))]
    assert heat.count("data-share=") == 12  # 4 × 3 pairs, none on the diagonal
    assert "greedy placed ahead of random in 6 of 6 games" in heat
    places = page[page.index('id="places"'):page.index("</section>", page.index('id="places"'))]
    assert "greedy: 1st place in 4 of 6 games" in places


def test_each_entrant_has_a_page_with_its_faults_reasons_and_opponents(site: Path) -> None:
    page = _read(site, "index.html")
    for name in ENTRANTS:
        assert f'href="entrants/{name}.html"' in page
    pages = {name: _read(site, f"entrants/{name}.html") for name in ENTRANTS}
    faulty = "".join(pages.values())
    assert "timeout × 1" in faulty and "malformed × 1" in faulty
    assert "no reply within 1000 ms to a draw request" in faulty
    assert "reply is not a JSON object: &#39;draw deck&#39;" in faulty
    greedy = pages["greedy"]
    assert '["random","random",6,' in greedy and 'data-entrant="greedy"' in greedy  # opponents, its games list
    assert "<dt>Rank</dt><dd>1</dd>" in greedy


def test_the_games_are_data_pages_newest_first_by_stream(site: Path) -> None:
    """Every game in the stream `all`, an entrant's in its own, the faulty ones in
    `faults`: the games list reads them from data/, not from one table in the page."""
    from harness.report.site.pages import parse_chunk

    key, games = parse_chunk(_read(site, "data/all-0.js"))
    assert key == "all-0" and len(games) == 6
    journal = [json.loads(line) for line in (site.parent / "games.jsonl").read_text().splitlines() if line.strip()]
    assert [g[1] for g in games] == [g["game"] for g in journal]  # in the order games finished
    _, greedy = parse_chunk(_read(site, "data/e-greedy-0.js"))
    assert greedy and all("greedy" in g[2] for g in greedy)
    _, faulty = parse_chunk(_read(site, "data/faults-0.js"))
    assert faulty and all(g[6] for g in faulty)
    index = json.loads(_read(site, "data/index.js")[len('P10.data("index",'):-3])
    assert index["streams"]["all"] == 6 and "g000003" in index["replays"]
    assert 'id="games-table"' in page_of(site) and "<tr data-entrants=" not in page_of(site)


def page_of(site: Path) -> str:
    return _read(site, "index.html")


def test_settings_show_the_seed_and_the_whole_config(site: Path) -> None:
    page = _read(site, "index.html")
    settings = page[page.index('id="settings"'):]
    assert "<dt>Seed</dt><dd>20240601</dd>" in settings
    assert "move_ms: 1000" in settings  # the full resolved config, escaped in a <pre>
    assert 'href="config.resolved.yaml"' in settings
    assert _read(site, "config.resolved.yaml") == (FIXTURE / "config.resolved.yaml").read_text()


def test_settings_fall_back_to_the_leaderboard_without_a_config(tmp_path: Path) -> None:
    results = _results(tmp_path)
    (results / "config.resolved.yaml").unlink()
    page = (build_site(results) / "index.html").read_text()
    settings = page[page.index('id="settings"'):]
    assert "<dt>Seed</dt><dd>20240601</dd>" in settings
    assert "config.resolved.yaml was not found" in settings


def test_a_site_can_be_built_from_games_alone(tmp_path: Path) -> None:
    results = _results(tmp_path)
    (results / "leaderboard.json").unlink()
    page = (build_site(results) / "index.html").read_text()
    for name in ENTRANTS:
        assert f'<tr data-entrant="{name}"' in page
    assert "leaderboard.json is missing" in page


def test_an_empty_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="neither leaderboard.json nor games.jsonl"):
        build_site(tmp_path)


# ----------------------------------------------------------------------------- safety, size

EVIL = '</script><img src=x onerror="alert(1)">&amp;\'x'


def _rename(results: Path, old: str, new: str) -> None:
    lb = json.loads((results / "leaderboard.json").read_text())
    for row in lb["entrants"]:
        if row["entrant"] == old:
            row["entrant"] = new
    lb["head_to_head"] = {
        (new if a == old else a): {(new if b == old else b): v for b, v in d.items()} for a, d in lb["head_to_head"].items()
    }
    lb["history"] = {(new if k == old else k): v for k, v in lb["history"].items()}
    (results / "leaderboard.json").write_text(json.dumps(lb))
    lines = []
    for line in (results / "games.jsonl").read_text().splitlines():
        g = json.loads(line)
        g["seats"] = [new if s == old else s for s in g["seats"]]
        for f in g["faults"]:
            if f["entrant"] == old:
                f["entrant"] = new
                f["reason"] = new + " " + f["reason"]
        lines.append(json.dumps(g))
    (results / "games.jsonl").write_text("\n".join(lines) + "\n")
    replay = results / "replays" / "g000003.jsonl"
    items = [json.loads(line) for line in replay.read_text().splitlines()]
    for p in items[0]["players"]:
        if p["name"] == old:
            p["name"] = new
    replay.write_text("".join(json.dumps(i) + "\n" for i in items))


def test_names_from_the_data_are_escaped_everywhere(tmp_path: Path) -> None:
    results = _results(tmp_path)
    _rename(results, "cautious", EVIL)
    site = build_site(results)
    files = _all_text(site)
    for name, text in files.items():
        assert "<img" not in text, name
        assert "onerror=\"alert" not in text, name
    page = files["index.html"]
    assert page.count("</script>") == page.count("<script")  # no script closed early
    assert "&lt;/script&gt;&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&amp;amp;&#39;x" in page
    assert page.count('<tr data-entrant="') == 4


SCRIPT = "</script><script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
BIDI = "\u202eevil\u2066 x\u2069\u200f \x1b[31m\x07\x00'&amp;"  # bidi overrides and control characters
HOSTILE = {"greedy": "g" + SCRIPT, "random": "r" + IMG, "cautious": "c" + BIDI}


def dressed(tmp_path: Path, hostile: bool) -> Path:
    """The fixture's results with three entrants renamed and every fault reason, one fault
    kind, the tournament's name, the trusted list and the containment note rewritten: with
    HOSTILE's names and their strings (`hostile`), or with plain ones of the same roles."""
    results = _results(tmp_path / ("hostile" if hostile else "plain"))
    names = HOSTILE if hostile else {old: old + "-x" for old in HOSTILE}
    for old, new in names.items():
        _rename(results, old, new)
    text = SCRIPT + IMG + BIDI if hostile else "plain words"
    lb = json.loads((results / "leaderboard.json").read_text())
    lb.update(name="T" + text, trusted=[names["greedy"]], sandbox={"mode": "none", "note": text})
    (results / "leaderboard.json").write_text(json.dumps(lb))
    games = [json.loads(line) for line in (results / "games.jsonl").read_text().splitlines()]
    for g in games:
        for f in g["faults"]:
            f["reason"] = text
        if g["faults"]:
            g["faults"][0]["kind"] = IMG if hostile else "plain"
    (results / "games.jsonl").write_text("".join(json.dumps(g) + "\n" for g in games))
    return results


class _Parsed(HTMLParser):
    """A page as the browser's tokenizer sees it: its tags with their attribute names
    (`shape`), the decoded attribute values, and the text of each <script>."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.shape: list[tuple[str, ...]] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in: dict[str, str | None] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.shape.append((tag, *(k for k, _ in attrs)))
        self.attrs += [(tag, k, v) for k, v in attrs]
        if tag == "script":
            self._in = dict(attrs)
            self.scripts.append((self._in, ""))

    def handle_endtag(self, tag: str) -> None:
        self.shape.append(("/" + tag,))
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self.scripts[-1] = (self._in, self.scripts[-1][1] + data)


def test_hostile_names_and_reasons_stay_text_and_data(tmp_path: Path) -> None:
    """Entrant names, fault reasons and kinds with `</script>`, a quote that closes an
    attribute, an <img onerror>, bidi overrides and control characters: every page has
    exactly the tags and attributes of the same site with plain strings, every attribute
    and every JSON data block holds the hostile strings back exactly, and the replay's
    script holds no `<` at all."""
    plain, evil = build_site(dressed(tmp_path, False)), build_site(dressed(tmp_path, True))
    for page in ("index.html", "replay.html"):
        p, e = _Parsed(_read(plain, page)), _Parsed(_read(evil, page))
        assert e.shape == p.shape, page  # not one element or attribute more, none less
        assert len(e.scripts) == len(p.scripts)
    index = _Parsed(_read(evil, "index.html"))
    rows = [v for tag, k, v in index.attrs if tag == "tr" and k == "data-entrant"]
    assert sorted(rows) == sorted([*HOSTILE.values(), "greedy-js"])  # each name back, character for character
    from harness.report.site.pages import parse_chunk, slug

    pages = {}
    for old, new in HOSTILE.items():  # each entrant's page: the same tags as with a plain name
        p = _Parsed(_read(plain, f"entrants/{slug(old + '-x')}.html"))
        pages[new] = e = _Parsed(_read(evil, f"entrants/{slug(new)}.html"))
        assert e.shape == p.shape, new
    assert any(k == "class" and v == "tag " + IMG for page in pages.values() for _, k, v in page.attrs)
    assert any(SCRIPT + IMG + BIDI in html.unescape(_read(evil, f"entrants/{slug(n)}.html")) for n in pages)  # reasons
    _, games = parse_chunk(_read(evil, "data/all-0.js"))
    assert [HOSTILE["cautious"], IMG, SCRIPT + IMG + BIDI] in [f for g in games for f in g[6]]  # the data, exactly
    assert "<" not in _read(evil, "data/all-0.js") and "<" not in _read(evil, "data/board.js")
    data = {k: parse_chunk(_read(evil, f"data/{k}.js"))[1] for k in ("h2h", "history")}
    assert set(HOSTILE.values()) <= set(data["h2h"]["names"]) and set(HOSTILE.values()) <= set(data["history"]["names"])
    assert "<" not in _read(evil, "data/h2h.js") and "<" not in _read(evil, "data/history.js")
    for a, body in index.scripts:
        assert a.get("type") != "application/json" or "<" not in body  # no data block can close its script
    replay = _read(evil, "replays/g000003.js")
    assert "<" not in replay and ">" not in replay and "&" not in replay
    assert set(_replay_payload(evil)["players"]) == {*HOSTILE.values(), "greedy-js"}


def test_nothing_is_loaded_from_the_network(site: Path) -> None:
    for name, text in _all_text(site).items():
        assert not re.search(r"https?://", text), name
        assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*//""", text), name
        assert "@import" not in text and "url(" not in text, name
        for ref in re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", text):
            assert not re.match(r"[a-z][a-z0-9+.-]*:", ref, re.I), (name, ref)  # relative links only


def test_the_site_is_small(site: Path) -> None:
    total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert total < 2_000_000, total


def test_a_quickstart_sized_tournament_stays_under_2_mb(tmp_path: Path) -> None:
    results = _results(tmp_path)
    base = [json.loads(line) for line in (results / "games.jsonl").read_text().splitlines()]
    games = []
    for i in range(100):
        g = dict(base[i % len(base)], id=i, game=f"g{i:06d}", seed=1000 + i, replay=None)
        if i % 20 == 3:  # 5 failed games kept their replays
            g["replay"] = f"replays/g{i:06d}.jsonl"
            shutil.copy(REPLAY, results / g["replay"])
        games.append(g)
    (results / "replays" / "g000003.jsonl").unlink()
    shutil.copy(REPLAY, results / "replays" / "g000003.jsonl")
    (results / "games.jsonl").write_text("".join(json.dumps(g) + "\n" for g in games))
    site = build_site(results)
    total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert total < 2_000_000, total
    from harness.report.site.pages import parse_chunk

    assert len(parse_chunk((site / "data" / "all-0.js").read_text())[1]) == 100


# ----------------------------------------------------------------------------- replays

def test_the_replay_is_embedded_with_its_frames(site: Path) -> None:
    index = _read(site, "replay.html")
    listed = json.loads(re.search(r'<script type="application/json" id="replay-index">(.*?)</script>', index, re.S).group(1))
    assert [r["game"] for r in listed] == ["g000003"]
    assert listed[0]["file"] == "replays/g000003.js"
    data = _replay_payload(site)
    assert data["players"] == ENTRANTS
    header, actions, _ = read_replay(REPLAY)
    from harness.engine.replay import frames

    assert len(data["frames"]) == len(frames(header, actions))
    first = data["frames"][0]
    assert len(first["H"]) == 4 and all(isinstance(h, str) for h in first["H"])
    assert data["hand_ends"][-1]["scores"] == FINAL_SCORES
    assert len(data["hand_ends"]) == 5


def test_at_most_max_replays_are_embedded_and_the_page_says_so(tmp_path: Path) -> None:
    site = build_site(_results(tmp_path), max_replays=0)
    assert not list((site / "replays").glob("*.js")) if (site / "replays").exists() else True
    assert "1 more in demo/replays/ are not" in (site / "index.html").read_text()


def test_an_unreadable_replay_is_left_out_with_a_notice(tmp_path: Path) -> None:
    results = _results(tmp_path)
    (results / "replays" / "g000003.jsonl").write_text("this is not a replay\n")
    site = build_site(results)
    page = (site / "index.html").read_text()
    assert "The replay of g000003 could not be read" in page
    assert 'href="replay.html#game=g000003"' not in page
    assert "No replays in this tournament" in (site / "replay.html").read_text()


def test_a_missing_replay_file_is_reported(tmp_path: Path) -> None:
    results = _results(tmp_path)
    (results / "replays" / "g000003.jsonl").unlink()
    page = (build_site(results) / "index.html").read_text()
    assert "The replay of g000003 (replays/g000003.jsonl) is missing." in page


def test_rebuilding_replaces_old_replay_files(tmp_path: Path) -> None:
    results = _results(tmp_path)
    site = build_site(results)
    stale = site / "replays" / "old.js"
    stale.write_text("window.P10_REPLAYS={};")
    build_site(results)
    assert not stale.exists()
    assert (site / "replays" / "g000003.js").exists()


# ----------------------------------------------------------------------------- terminal

def test_terminal_replay_prints_the_game_in_colour() -> None:
    from rich.console import Console

    from harness.report.terminal_replay import print_replay

    console = Console(record=True, width=120, force_terminal=True, color_system="truecolor")
    print_replay(REPLAY, console)
    plain = console.export_text(clear=False)
    coloured = console.export_text(styles=True)
    assert "Game g000003" in plain and "Hand 1" in plain
    for name in ENTRANTS:
        assert name in plain
    assert "\x1b[" in coloured  # cards carry their colours
    assert "End of hand 5" in plain
    assert "Result: 1. greedy (135 points), 2. random (220 points)" in plain


def test_versions_and_retired_entrants_are_out_of_the_ranking_in_their_own_section(tmp_path: Path) -> None:
    """`replaces:` links a bot to the entrant it is a new version of: the site shows the
    line of versions on their pages, and the earlier version (and any retired entrant) in
    a section of its own, out of the ranking."""
    results = _results(tmp_path)
    cfg = (results / "config.resolved.yaml").read_text()
    cfg = cfg.replace("  - name: cautious\n", "  - name: cautious\n    version: \"2.0\"\n    replaces: random\n")
    (results / "config.resolved.yaml").write_text(cfg)
    lb = json.loads((results / "leaderboard.json").read_text())
    for row in lb["entrants"]:
        row["retired"] = row["entrant"] in ("random", "greedy-js")
    (results / "leaderboard.json").write_text(json.dumps(lb))
    site = build_site(results)
    page = _read(site, "index.html")
    board = page[page.index('id="leaderboard-table"'):page.index("</table>", page.index('id="leaderboard-table"'))]
    assert re.findall(r'<tr data-entrant="([^"]+)"', board) == ["greedy", "cautious"]
    out = page[page.index('id="retired"'):page.index("</section>", page.index('id="retired"'))]
    assert re.findall(r'<tr data-entrant="([^"]+)"><td class="name-cell"><a class="entrant" href="[^"]+">[^<]+</a></td>'
                      r'<td>([^<]+)</td>', out) == [("greedy-js", "retired"), ("random", "earlier version of cautious")]  # in rank order
    for name in ("random", "cautious"):
        versions = _read(site, f"entrants/{name}.html")
        line = re.sub(r"<[^>]+>", "", versions[versions.index('id="versions"'):versions.index("</p>", versions.index('id="versions"'))])
        assert line.endswith("Versions: random → cautious (2.0)"), line


def test_a_bot_declares_its_version_and_what_it_replaces(tmp_path: Path) -> None:
    from harness.tournament.config import ConfigError, parse_config

    bots = [{"name": "alice-v2", "cmd": ["true"], "version": 2, "replaces": "alice-v1"}, {"name": "bob", "cmd": ["true"]}]
    cfg = parse_config({"name": "t", "seed": 1, "bots": bots, "output": str(tmp_path / "out")}, base=tmp_path)
    assert cfg.resolved()["bots"][0]["version"] == "2" and cfg.resolved()["bots"][0]["replaces"] == "alice-v1"
    assert "version" not in cfg.resolved()["bots"][1]  # nothing added where nothing was said
    with pytest.raises(ConfigError, match=r"bots\[0\]\.replaces.*'bob', which is still in the field"):
        parse_config({"name": "t", "seed": 1, "output": str(tmp_path / "out"),
                      "bots": [dict(bots[0], replaces="bob"), bots[1]]}, base=tmp_path)
    with pytest.raises(ConfigError, match=r"bots\[0\]\.version"):
        parse_config({"name": "t", "seed": 1, "output": str(tmp_path / "out"),
                      "bots": [dict(bots[0], version=["x"]), bots[1]]}, base=tmp_path)


def test_the_heat_maps_even_share_is_seen_on_the_page() -> None:
    """50 % is the middle of the diverging scale: a colour of its own, not near-white on
    the white page (every channel within 16 of 255 before)."""
    from harness.report.site.charts import _HEAT
    from harness.report.site.values import lerp_color

    even = lerp_color(_HEAT, 0.5)
    assert 255 * 3 - sum(even) >= 80, even
    assert lerp_color(_HEAT, 0.0)[0] > lerp_color(_HEAT, 0.0)[2] and lerp_color(_HEAT, 1.0)[2] > lerp_color(_HEAT, 1.0)[0]
