"""The results folder of a tournament: opened (or created) for a run, held by one run at a
time, checked against the config, and the field it plays settled from what it recorded."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import yaml

from ..ledger.journal import CHAIN_FORMAT, JournalError, read_chain, scan_chain
from ..ledger.marker import FORMAT, MARKER, check_published, marker_genesis, marker_shape
from ..ledger.seeds import (ENV_KEY, SECRET, SeedError, SeedState, commitment, draw_seed, env_key, read_secret,
                            write_secret)
from ..ratings.trueskill import rules_draw_probability
from ..referee import BotSpec
from ..report.files import MAX_META, TMP_PREFIX, load_yaml, read_json, read_regular, write_whole
from ..sandbox.modes import describe
from .config import Field, TournamentConfig
from .identity import fingerprint
from .tally import CHECKPOINT, GameTally, read_checkpoint

_OWN = (SECRET, ENV_KEY, "games.jsonl", "leaderboard.md", "leaderboard.json", "leaderboard.csv", "head_to_head.csv",
        "config.resolved.yaml", MARKER, "replays", "logs", "site", "stats.json", "stats.md",
        "disqualified.json", "progress.json", CHECKPOINT)

LOCK = ".p10-lock"  # held by the run playing into the folder

class ResultsError(ValueError):
    """A results folder that cannot be used for this tournament."""


@dataclass
class OpenedResults:
    """A results folder ready to be played into: the config with its seed (drawn or read
    back if secret), the games already finished, and the hash chain's last link."""

    cfg: TournamentConfig
    done: dict[int, dict[str, Any]]  # empty when opened with `stream` (the run reads them again, one at a time)
    head: str
    lines: int = 0  # games in games.jsonl


def prepare_output(cfg: TournamentConfig, fresh: bool = False, retire: Sequence[str] = (),
                   stream: bool = False) -> OpenedResults:
    """Check (or create) the results folder; returns the games already finished (with
    `stream`, only their number: games.jsonl is read one line at a time and nothing of
    it kept).

    A folder of another config, another program, or an older format is refused unless
    `fresh`, which removes this program's files from it first; so is a games.jsonl whose
    hash chain is broken. A secret seed is drawn at the first start (kept in seed.secret,
    its commitment in tournament.json) and read back on resume.

    The bots may change between runs (`settle_field`): the config returned plays the
    current field, with the entrants retired (`retire`, or no longer in the file) kept
    in its standings.
    """
    out = cfg.output
    if out.exists() and not out.is_dir():
        raise ResultsError(f"{out}: exists and is not a folder")
    marker = out / MARKER
    if fresh and out.exists():
        _clear(out)
    out.mkdir(parents=True, exist_ok=True)
    for p in out.glob(TMP_PREFIX + "*"):  # left by a run killed while writing: never whole
        p.unlink(missing_ok=True)
    if marker.exists():
        meta, seed = _read_marker(cfg)
    elif any(p.name not in (SECRET, ENV_KEY, LOCK) for p in out.iterdir()):
        raise ResultsError(f"{out}: not empty and not a p10-tourney results folder; choose another output")
    else:
        meta, seed = _first_marker(cfg)
    assert seed is not None
    cfg = cfg.with_seed(seed)
    try:
        if stream:
            journal = scan_chain(out / "games.jsonl", marker_genesis(meta), mark=int(meta.get("games") or 0))
        else:
            journal = read_chain(out / "games.jsonl", marker_genesis(meta))
        check_published(meta, journal, out / "games.jsonl")
    except JournalError as e:
        raise ResultsError(f"{e}; use --fresh to start again") from None
    cfg = settle_field(cfg, meta, [journal.top] if journal.top >= 0 else [], retire)
    cfg = replace(cfg, budget_changed=bool(meta.get("budget_changed")))
    # Only once the folder is known to be usable is anything in it rewritten.
    meta |= {"fingerprint": cfg.fingerprint(), "config_sha256": cfg.config_sha256(),
             "settings_sha256": cfg.settings_sha256()}
    write_whole(marker, json.dumps(meta, indent=1) + "\n")
    write_whole(out / "config.resolved.yaml", yaml.safe_dump(cfg.resolved(), sort_keys=False))
    assert journal.head is not None
    return OpenedResults(cfg, journal.games, journal.head, journal.lines)


def _clear(out: Path) -> None:
    """Remove this program's files from the results folder `out` (--fresh); a folder that
    is not a results folder is refused."""
    if any(p.name != LOCK for p in out.iterdir()) and not (out / MARKER).exists():
        raise ResultsError(f"{out}: not a p10-tourney results folder; refusing to clear it (choose another output)")
    for name in _OWN:
        p = out / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def _read_marker(cfg: TournamentConfig) -> tuple[dict[str, Any], int | None]:
    """tournament.json of a results folder played into before, checked against `cfg`, and
    the tournament's seed (read back from seed.secret if secret)."""
    out = cfg.output
    marker = out / MARKER
    try:
        meta = read_json(marker)
    except (OSError, ValueError) as e:
        raise ResultsError(f"{marker}: unreadable ({e}); use --fresh to start again") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ResultsError(
            f"{out}: written by another version of p10-tourney (format {meta.get('format') if isinstance(meta, dict) else '?'!r}, "
            f"this one writes {FORMAT!r}); use --fresh to start again or choose another output"
        )
    why = marker_shape(meta)
    if why:
        raise ResultsError(f"{marker}: {why}; use --fresh to start again")
    same = meta.get("fingerprint") == cfg.fingerprint() and meta.get("config_sha256") == cfg.config_sha256()
    if not same and meta.get("settings_sha256") != cfg.settings_sha256():
        raise ResultsError(
            f"{out}: holds results of a different config ({_what_changed(out, cfg, meta)}); only the bots "
            "may change between runs over one results folder (and the games budget of a random or league "
            "tournament): use --fresh to start again, or set another output"
        )
    if int(meta.get("games") or 0) > 0 and _budget(out) not in (None, cfg.resolved().get("games")):
        meta["budget_changed"] = True  # a board was published before this budget: it was looked at
    try:
        state = SeedState.from_json(meta)
        seed = read_secret(out, state.sha256) if cfg.secret_seed else cfg.seed
    except ValueError as e:  # SeedError too
        raise ResultsError(f"{marker}: {e}") from None
    return meta, seed


def _first_marker(cfg: TournamentConfig) -> tuple[dict[str, Any], int | None]:
    """The first start: tournament.json written, and a secret seed drawn now (only its hash
    published); returns both."""
    seed = draw_seed() if cfg.secret_seed else cfg.seed
    assert seed is not None
    if cfg.secret_seed:
        write_secret(cfg.output, seed)
    meta: dict[str, Any] = {"format": FORMAT, "name": cfg.name, "fingerprint": cfg.fingerprint(),
                            "config_sha256": cfg.config_sha256(), "chain": CHAIN_FORMAT,
                            "settings_sha256": cfg.settings_sha256(), "chain_settings_sha256": cfg.settings_sha256()}
    meta |= seed_state(cfg.with_seed(seed), reveal=False).to_json()
    meta |= {"finished": False, "games": 0, "journal_head": marker_genesis(meta), "results_sha256": None}
    write_whole(cfg.output / MARKER, json.dumps(meta, indent=1) + "\n")
    return meta, seed


def _resolved_before(out: Path) -> dict[str, Any] | None:
    """The config the results folder was last run with (config.resolved.yaml), if readable."""
    try:
        before = load_yaml(read_regular(out / "config.resolved.yaml", MAX_META))
    except (OSError, ValueError, RecursionError, yaml.YAMLError):
        return None
    return before if isinstance(before, dict) else None


def _budget(out: Path) -> Any:
    """The games budget the results folder was last run with (None if unknown)."""
    before = _resolved_before(out)
    return None if before is None else before.get("games")


def _what_changed(out: Path, cfg: TournamentConfig, meta: Mapping[str, Any]) -> str:
    """Which settings differ from those the results folder was played with."""
    before = _resolved_before(out)
    if before is None:
        return f"tournament {meta.get('name')!r}, or an older version of p10-tourney"
    now = cfg.settings()
    keys = [k for k in dict.fromkeys([*before, *now]) if k not in ("bots", "trusted", "games", "challengers")
            and before.get(k) != now.get(k)]
    if "games" in now and before.get("games") != now.get("games") and cfg.format not in ("random", "league"):
        keys.append("games")
    return f"{', '.join(keys)} changed" if keys else f"tournament {meta.get('name')!r}"


def settle_field(cfg: TournamentConfig, meta: dict[str, Any], games: Iterable[int],
                 retire: Sequence[str] = ()) -> TournamentConfig:
    """The field this run plays, from the config, the indices of the games played
    (`games`: any iterable of them, the highest is what counts) and what tournament.json
    (`meta`, updated here) knows: every entrant that ever played with its fingerprint (`identity`), the
    entrants retired with --retire, and the fields so far. An entrant whose command or
    folder changed under its name is refused. A field other than the last one's starts a
    new field at the first free game index (or replaces the last one if none of its
    games is played yet)."""
    out = cfg.output
    known: dict[str, str] = dict(meta.get("entrants") or {})
    retired = list(meta.get("retired") or [])
    for name in retire:
        if name not in known and name not in cfg.entrants:
            raise ResultsError(f"--retire {name}: no entrant of that name in the tournament file or in {out}")
        if name not in retired:
            retired.append(name)
    active = [b for b in cfg.bots if b.name not in retired]
    prints = fingerprints(cfg, active)
    for i, b in enumerate(active):
        old = known.get(b.name)
        if old is not None and old != prints[b.name] and b.env and old == fingerprint(b, _unprinted(cfg)):
            known[b.name] = prints[b.name]  # fingerprinted before the key: the same bot
        elif old is not None and old != prints[b.name]:
            raise ResultsError(
                f"{cfg.source}: bots: {b.name!r} is not the bot that played its games in {out}: its command, "
                f"{'env: values (or the key in ' + ENV_KEY + ') ' if b.env else ''}or the "
                f"files of its folder changed (fingerprint {old[:12]} -> {prints[b.name][:12]}); give the new "
                f"version another name (the old one is then retired), or run with --retire {b.name} to retire it")
    for b in active:
        known.setdefault(b.name, prints[b.name])
    order = list(known)
    names = [n for n in order if n in prints]
    if len(names) < max(2, cfg.table_size):
        raise ResultsError(f"{cfg.source}: the field has {len(names)} active entrants ({', '.join(names) or 'none'}); "
                           f"a table needs {max(2, cfg.table_size)}")
    if cfg.format == "gauntlet":
        ch = [c for c in cfg.challengers if c in prints]
        if not ch or len(names) - len(ch) < cfg.table_size - 1:
            raise ResultsError(f"{cfg.source}: the gauntlet's active field has {len(ch)} challengers and "
                               f"{len(names) - len(ch)} other entrants; it needs a challenger and table_size - 1 others")
    fields = [Field(int(f["start"]), tuple(f["entrants"]), tuple(f.get("challengers") or ()))
              for f in meta.get("fields") or []]
    challengers = tuple(c for c in cfg.challengers if c in prints)
    now = Field(fields[-1].start if fields else 0, tuple(names), challengers)
    if not fields:
        fields = [now]
    elif (fields[-1].entrants, fields[-1].challengers) != (now.entrants, now.challengers):
        if meta.get("seed_mode") == "secret" and meta.get("seed") is not None:
            raise ResultsError(f"{out}: its secret seed was revealed when it finished, so the deals of new games "
                               "would be known in advance; start another results folder (a league, format: league, "
                               "never reveals its seed)")
        top = max(games, default=-1)
        if top < fields[-1].start:  # nothing played in the last field yet: it is replaced
            fields[-1] = now
        else:
            fields.append(replace(now, start=top + 1))
    meta.setdefault("chain_config_sha256", meta["config_sha256"])
    meta |= {"entrants": known, "retired": retired, "fields": [f.to_json() for f in fields]}
    return replace(cfg, bots=tuple(cfg.bot(n) for n in names), field_order=tuple(order), fields=tuple(fields),
                   challengers=challengers)


def _unprinted(cfg: TournamentConfig) -> list[Path]:
    """What no fingerprint reads: the results folder and the tournament file's folder."""
    out = cfg.output
    return [out, Path(cfg.source).resolve().parent] if cfg.source and not cfg.source.startswith("<") else [out]


def fingerprints(cfg: TournamentConfig, bots: Iterable[BotSpec]) -> dict[str, str]:
    """The fingerprints of `bots` (`identity.fingerprint`), as tournament.json keeps them."""
    bots = list(bots)
    try:  # the bots' env: values count in their fingerprints by a keyed hash (never as themselves)
        key = env_key(cfg.output) if any(b.env for b in bots) else None
    except SeedError as e:
        raise ResultsError(str(e)) from None
    return {b.name: fingerprint(b, _unprinted(cfg), key) for b in bots}


def seed_state(cfg: TournamentConfig, reveal: bool) -> SeedState:
    """The seed as the results show it: a secret seed only once `reveal` (the end)."""
    assert cfg.seed is not None
    return SeedState(cfg.secret_seed, commitment(cfg.seed), cfg.seed if reveal or not cfg.secret_seed else None)


@contextlib.contextmanager
def hold_folder(out: Path) -> Iterator[None]:
    """Hold the results folder for one run: a second run over it (say, the host's run after
    adding a bot while `run --forever` plays) is refused instead of writing beside it."""
    if out.exists() and not out.is_dir():
        raise ResultsError(f"{out}: exists and is not a folder")
    if out.is_dir() and not (out / MARKER).exists() and any(p.name not in (SECRET, LOCK) for p in out.iterdir()):
        yield  # not a results folder: prepare_output refuses it, and nothing is written into it
        return
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            who = f.read().strip() or "?"
            raise ResultsError(f"{out}: another run is playing into this folder (process {who}); stop it first "
                               "(a run --forever stops on Ctrl-C or SIGTERM), then run again") from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        yield


def rated_before(tally: GameTally, cfg: TournamentConfig, out: Path) -> None:
    """Start `tally`'s TrueSkill from the checkpoint of the published games where it is
    theirs (`read_checkpoint`), so that a resumed run rates only the games after them."""
    meta = read_json(out / MARKER)
    games = meta.get("games")
    if not isinstance(games, int) or games <= 0:
        return
    rated = read_checkpoint(out, meta.get("journal_head"), games, meta.get("ratings_sha256"),
                            rules_draw_probability(cfg.rules), cfg.standing)
    if rated is not None:
        tally.rated_before(rated, games)


def record_entrants(out: Path, prints: Mapping[str, str]) -> None:
    """Record the fingerprints `prints` of entrants in tournament.json."""
    if prints:
        meta = read_json(out / MARKER)
        meta["entrants"] = {**(meta.get("entrants") or {}), **prints}
        write_whole(out / MARKER, json.dumps(meta) + "\n")


def record_sandbox(out: Path, state: Mapping[str, Any]) -> dict[str, Any]:
    """Add this run's containment to tournament.json (a results folder that a run without
    the sandbox played into keeps saying so) and return what is recorded."""
    marker = out / MARKER
    meta = read_json(marker)
    before = meta.get("sandbox")
    now = {k: v for k, v in state.items()}
    if isinstance(before, dict) and before.get("mode") and before.get("mode") != now["mode"]:
        merged = describe([before["mode"], now["mode"]], now.get("cgroups"))
        per_process: list[str] = sorted(set(before.get("per_process_only") or []) | set(now["per_process_only"]))
        merged["per_process_only"] = per_process
        merged["note"] = "; ".join(x for x in (
            "some games ran without a sandbox",
            ("limits held per process only: " + ", ".join(per_process)) if per_process else "",
        ) if x)
        now = {**merged, "bots": now.get("bots", {})}
    meta["sandbox"] = now
    write_whole(marker, json.dumps(meta) + "\n")
    return now
