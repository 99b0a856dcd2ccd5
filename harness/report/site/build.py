"""The site's pages, rendered from the templates in harness/report/templates/ (Jinja2, every
value escaped unless a template marks it otherwise), and `build_site`, which writes them."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..files import safe_folder, write_whole
from .charts import head_to_head, history, places
from .data import SiteData, load
from .replays import MAX_REPLAYS, Replay, replay_payload, write_replays
from .entrants import decides, entrant_pages, out_of_ranking, record_history
from .pages import DATA, GamePages
from .sections import leaderboard, notices, out_section, settings, summary
from .values import fmt, num, replay_href, script_json

ASSETS = Path(__file__).resolve().parent.parent / "assets"

NAV = (("index.html", "Leaderboard"), ("index.html#history", "Ratings"), ("index.html#h2h", "Head to head"),
("index.html#games", "Games"), ("index.html#settings", "Settings"),
       ("replay.html", "Replays"))
"""The site's links: (href, label)."""


@functools.cache
def _asset(name: str) -> Markup:
    """A file of assets/ (the site's own script or style), to inline in a page as it is."""
    return Markup((ASSETS / name).read_text(encoding="utf-8"))


@functools.cache
def environment() -> jinja2.Environment:
    """The templates' environment: autoescape on, None written as nothing, an undefined
    name an error; `script_json` makes JSON that is safe inside a <script> element."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("harness.report", "templates"),
        autoescape=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=lambda v: "" if v is None else v,
    )
    env.filters.update(
        script_json=lambda v: Markup(script_json(v)),
        replay_href=replay_href,
        fmt=fmt,
        num=num,
        f0=lambda v: f"{v:.0f}",
        f1=lambda v: f"{v:.1f}",
    )
    env.globals["asset"] = _asset
    return env


def render(template: str, **context: Any) -> str:
    """The page `template` made with `context`."""
    return environment().get_template(template).render(**context)


def _games_table(data: SiteData, base: str, entrant: str | None = None) -> dict[str, Any]:
    return {"base": base, "version": data.n_games, "entrant": entrant, "total": data.n_games, "title": "Games" if entrant is None else "Its games"}


def _index_html(data: SiteData, replay_index: list[dict[str, Any]], board: dict[str, Any],
                out: dict[str, str], charts: dict[str, Any]) -> str:
    return render(
        "index.html", title=f"{data.name} · Phase 10 tournament", name=data.name, nav=NAV, current="Leaderboard",
        scripts=("games.js", "index.js"), base="",
        summary=summary(data, len(replay_index)), notices=notices(data), leaderboard=board,
        out_of_ranking=out_section(data, out), history=charts["history"], head_to_head=charts["h2h"],
        places=places(data), games_table=_games_table(data, ""), settings=settings(data),
    )


def _entrant_pages(data: SiteData, site: Path, out: dict[str, str]) -> None:
    """entrants/<slug>.html for every entrant (the pages of entrants no longer in the
    results are removed)."""
    folder = site / "entrants"
    safe_folder(folder)
    for name in ("site.css", "games.js"):  # shared by the entrants' pages, not copied into each
        write_whole(site / name, (ASSETS / name).read_bytes())
    hist = record_history(data, site)
    nav = tuple(("../" + h if not h.startswith("../") else h, label) for h, label in NAV)
    label = decides(data)[1]
    written = set()
    template = environment().get_template("entrant.html")
    for page in entrant_pages(data, hist, out):
        name = f"{page.slug}.html"
        write_whole(folder / name, template.render(
            title=f"{page.e.name} · {data.name}", name=data.name, nav=nav, current="", base="",
            scripts=("../games.js",), css_href="../site.css", p=page, decides=label, published=data.leaderboard.get("games", data.n_games),
            games_table=_games_table(data, "../", page.e.name)))
        written.add(name)
    for old in folder.iterdir():
        if old.name not in written and old.name.endswith(".html") and old.is_file() and not old.is_symlink():
            old.unlink()


def _replay_html(data: SiteData, replay_index: list[dict[str, Any]]) -> str:
    return render("replays.html", title=f"Replays · {data.name}", name=data.name, nav=NAV, current="Replays",
                  scripts=("replay.js",), base="", replay_index=replay_index, notices=notices(data))


def replay_file_html(path: Path) -> str:
    """One replay file (p10-replay/1, as `play --replay` writes it) as a self-contained HTML
    page: the site's replay viewer with the game, its styles and its script inline. Raises
    ValueError (or OSError) for a file that is not a replay."""
    rep = Replay(Path(path).stem, Path(path), None)
    payload = replay_payload(rep)
    index = [{"game": rep.game, "file": "", "players": payload["players"],
              "places": (payload["result"] or {}).get("places"), "faults": [f["kind"] for f in payload["faults"]], "hands": len(payload["hand_ends"])}]
    return render("replay_file.html", title=f"{rep.game} · replay", game=rep.game, players=payload["players"],
                  payload=payload, replay_index=index, file_name=Path(path).name)


def build_site(results_dir: Path, *, max_replays: int = MAX_REPLAYS) -> Path:
    """Write the results site into `results_dir/site/` and return that folder.

    Reads leaderboard.json, games.jsonl, config.resolved.yaml (optional) and the replay
    files the games name; embeds the first `max_replays` replays in the viewer. A replay
    that cannot be read is left out with a notice on the page; it never stops the build.
    Raises FileNotFoundError if `results_dir` holds neither leaderboard.json nor games.jsonl.
    """
    results_dir = Path(results_dir)
    if not any((results_dir / n).exists() for n in ("leaderboard.json", "games.jsonl")):
        load(results_dir, 0)  # FileNotFoundError, saying what is missing
    site = results_dir / "site"
    safe_folder(site)  # a link there would take the site's files elsewhere
    safe_folder(site / DATA)
    pages = GamePages(site)
    data = load(results_dir, max(0, int(max_replays)), pages.add)
    replay_index = write_replays(data, site, max(0, int(max_replays)))
    out = out_of_ranking(data)
    board = leaderboard(data, out)
    charts: dict[str, Any] = {"history": history(data), "h2h": head_to_head(data)}
    for key, value in (("board", board["all_rows"]), ("history", (charts["history"] or {}).get("payload")),
                       ("h2h", charts["h2h"]["payload"])):
        write_whole(site / DATA / f"{key}.js", f"P10.data({script_json(key)},{script_json(value)});\n")
        pages.written.add(f"{key}.js")
    pages.close(list(data.entrants), [r["game"] for r in replay_index])
    if data.config_text is not None:
        write_whole(site / "config.resolved.yaml", data.config_text)
    _entrant_pages(data, site, out)
    write_whole(site / "index.html", _index_html(data, replay_index, board, out, charts))
    write_whole(site / "replay.html", _replay_html(data, replay_index))
    return site
