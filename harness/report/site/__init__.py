"""The results site: a static leaderboard and replay viewer for one tournament.

`build_site(results_dir)` reads what a tournament wrote into `results_dir`
(leaderboard.json, games.jsonl, config.resolved.yaml, replays/*.jsonl) and writes
`results_dir/site/`:

- `index.html`: the leaderboard (one ranking, its deciding column first and marked; its
  rows in `data/board.js`, a page at a time), the retired entrants and earlier versions,
  the rating history, the head-to-head heat map, the place distribution, the games list
  (newest first, over every game, by entrant, pair and fault), and the settings;
- `entrants/<name>.html`: one page per entrant at a URL that stays (`entrants`);
- `data/*.js`: the games in pages of data the lists load on demand (`pages`);
- `replay.html`: the replay viewer, which steps through a game hand by hand and turn by
  turn (buttons, or the arrow keys);
- `replays/<game>.js`: the frames of one replayed game, loaded by the viewer on demand;
- `config.resolved.yaml`: a copy of the configuration, to reproduce the tournament.

Everything is local (no fonts, scripts or images from the network), so the folder works
opened straight from disk (file://) and on any static host.

Modules: `data` reads the results folder, `replays` the replay files, `pages` writes the
games' data pages, `entrants` the entrants' pages' content, `sections` and `charts` work
out what each part of a page shows, `values` writes numbers and JSON, and
`build` renders the pages from the Jinja2 templates in harness/report/templates/.
"""

from .build import build_site, replay_file_html
from .replays import MAX_REPLAY_FILE, MAX_REPLAYS, read_replay, replay_frames

__all__ = ["build_site", "replay_file_html", "read_replay", "replay_frames", "MAX_REPLAYS", "MAX_REPLAY_FILE"]
