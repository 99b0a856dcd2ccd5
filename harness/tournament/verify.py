"""Checking a results folder (`p10-tourney verify`): that games.jsonl is the journal the
runner wrote (its hash chain), that the published seed is the one committed to before
the first game and that every game's deal follows from it, that the published
leaderboards are what the games give, and that every kept replay, played again through
the engine, ends as its game is recorded.

`check_journal` is the chain check alone, which `run`, `report` and `leaderboard` do
before they trust a journal.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..engine import IllegalMove
from ..engine.replay import replay_game
from ..report.leaderboard import write_leaderboard
from .config import ConfigError, TournamentConfig, config_hash, parse_config
from .journal import JournalError, JournalState, read_chain
from .ledger import SECRET, check_published, SeedError, SeedState, commitment, marker_genesis, read_marker, read_secret
from .runner import _stop_check, make_board
from .schedule import Field, GameSpec, Past, full_schedule, schedule
from .stats import plan_rounds

PUBLISHED = ("leaderboard.json", "leaderboard.md", "leaderboard.csv", "head_to_head.csv", "stats.md")


@dataclass
class Check:
    """One check's verdict: passed (True), failed (False) or not possible here (None)."""

    name: str
    ok: bool | None
    detail: str


@dataclass
class Verification:
    """Every check made of a results folder, in order."""

    results: Path
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No check failed."""
        return all(c.ok is not False for c in self.checks)

    def add(self, name: str, ok: bool | None, detail: str) -> bool | None:
        self.checks.append(Check(name, ok, detail))
        return ok


def check_journal(results: Path) -> JournalState:
    """Read RESULTS/games.jsonl checking its hash chain from the genesis tournament.json
    gives; raises ValueError (`JournalError`: naming the first bad line). Nothing is
    repaired: a torn last line is left as it is."""
    meta = read_marker(results)
    path = results / "games.jsonl"
    journal = read_chain(path, marker_genesis(meta), repair=False)
    check_published(meta, journal, path)
    return journal


def _config(results: Path, meta: Mapping[str, Any]) -> TournamentConfig:
    """The tournament's config from config.resolved.yaml, checked against tournament.json."""
    path = results / "config.resolved.yaml"
    try:
        resolved = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from None
    if not isinstance(resolved, dict):
        raise ValueError(f"{path}: not a resolved config")
    if config_hash(resolved) != meta["config_sha256"]:
        raise ValueError(f"{path}: its SHA-256 is not the config_sha256 of tournament.json: the config was changed")
    data = dict(resolved)
    data["bots"] = [{k: v for k, v in b.items() if k != "cwd"} for b in data.get("bots") or []]
    try:
        cfg = parse_config(data, str(path))
    except ConfigError as e:
        raise ValueError(str(e)) from None
    if cfg.config_sha256() != meta["config_sha256"]:  # cannot happen for a file the runner wrote
        raise ValueError(f"{path}: reads back as another config")
    return with_fields(cfg, meta)


def with_fields(cfg: TournamentConfig, meta: Mapping[str, Any]) -> TournamentConfig:
    """`cfg` (the current field's config) with the fields and every entrant that ever
    played, as tournament.json records them."""
    fields = tuple(Field(int(f["start"]), tuple(f["entrants"]), tuple(f.get("challengers") or ()))
                   for f in meta.get("fields") or [])
    order = tuple(meta.get("entrants") or ())
    if not fields:
        return cfg
    if fields[-1].entrants != tuple(cfg.entrants):
        raise ValueError(f"tournament.json: the last field's entrants {list(fields[-1].entrants)} are not those of "
                         f"config.resolved.yaml {cfg.entrants}")
    return replace(cfg, fields=fields, field_order=order)


def verify_results(results: Path, replays: bool = True) -> Verification:
    """Check everything in results folder `results` that can be checked (see the module)."""
    v = Verification(results)
    try:
        meta = read_marker(results)
    except ValueError as e:
        v.add("results", False, str(e))
        return v
    try:
        cfg = _config(results, meta)
        v.add("config", True, f"config.resolved.yaml hashes to the config_sha256 the chain starts from "
                              f"({meta['config_sha256'][:16]}…)")
    except ValueError as e:
        v.add("config", False, str(e))
        return v

    try:
        journal = read_chain(results / "games.jsonl", marker_genesis(meta), repair=False)
    except JournalError as e:
        v.add("chain", False, str(e))
        return v
    n = len(journal.links)
    v.add("chain", True, f"{n} lines, every one chained to the one before from the genesis; last link "
                         f"{(journal.head or '')[:16]}…")
    try:
        check_published(meta, journal, results / "games.jsonl")
    except JournalError as e:
        v.add("published", False, str(e))
        return v
    published = meta["games"]
    extra = f"; {n - published} games after it are not published yet (run again to publish them)" if n > published else ""
    v.add("published", True, f"the results were published after line {published}, whose link tournament.json "
                             f"holds{extra}")
    lines = list(journal.games.values())[:published]  # dicts keep the order of the lines
    records = {r["id"]: r for r in lines}

    state = SeedState.from_json(meta)
    seed = _check_seed(v, results, meta, state, cfg)
    if seed is None:
        v.add("schedule", None, "not checked: the seed is not known here (" + (
            f"a league's secret seed is never revealed; its host checks with {SECRET} beside the results)"
            if cfg.format == "league" else "a secret seed is revealed when the tournament has finished)"))
        _check_digest(v, results, records)
    else:
        cfg = cfg.with_seed(seed)
        if _check_schedule(v, cfg, journal.games):
            _check_published(v, results, cfg, records, meta, state)
    if replays:
        _check_replays(v, results, cfg, journal.games)
    return v


def _check_seed(v: Verification, results: Path, meta: Mapping[str, Any], state: SeedState,
                cfg: TournamentConfig) -> int | None:
    """The seed to check the games with, if it can be known here; adds the seed's check."""
    if not state.secret:
        if cfg.seed is not None and state.revealed == cfg.seed and commitment(cfg.seed) == state.sha256:
            v.add("seed", True, f"fixed seed {cfg.seed} (in the tournament file: the deals were predictable)")
            return cfg.seed
        v.add("seed", False, f"tournament.json's seed {state.revealed!r} or its SHA-256 is not the config's seed")
        return None
    if state.revealed is not None:
        if commitment(state.revealed) == state.sha256:
            v.add("seed", True, f"the revealed seed hashes to the SHA-256 published from the start ({state.sha256[:16]}…)")
            return state.revealed
        v.add("seed", False, f"the revealed seed {state.revealed} does not hash to the published SHA-256 "
                             f"{state.sha256}: it is not the seed committed to before play")
        return None
    if meta.get("finished"):
        v.add("seed", False, "the tournament has finished but its secret seed is not revealed")
        return None
    if (results / SECRET).exists():
        try:
            seed = read_secret(results, state.sha256)
        except SeedError as e:
            v.add("seed", False, str(e))
            return None
        until = "never to be published (a league never ends)" if cfg.format == "league" else "do not publish it before the end"
        v.add("seed", True, f"{_secret_for(cfg)}; {SECRET} here holds the seed of the published SHA-256 "
                            f"({state.sha256[:16]}…): {until}")
        return seed
    v.add("seed", None, f"{_secret_for(cfg)} (SHA-256 {state.sha256[:16]}… published); " + (
        "the schedule is checked by the league's host, who holds its seed" if cfg.format == "league"
        else "checked once revealed"))
    return None


def _secret_for(cfg: TournamentConfig) -> str:
    """How long the seed stays secret: to the end, or for good in a league (which never
    finishes, so the deals of games still to come stay unknown)."""
    return "secret for good (a league never reveals its seed)" if cfg.format == "league" else "secret until the end"


def _check_schedule(v: Verification, cfg: TournamentConfig, games: Mapping[int, Mapping[str, Any]]) -> bool:
    """Every game's id, seats and seed are the schedule's, which follows from the seed."""
    if cfg.format == "league":
        return _check_league(v, cfg, games)
    fields = cfg.fields or (Field(0, tuple(cfg.entrants)),)
    specs: dict[int, GameSpec] = {}
    for k, f in enumerate(fields):
        end = fields[k + 1].start if k + 1 < len(fields) else None
        fcfg = replace(cfg, challengers=f.challengers) if f.challengers else cfg
        for spec in schedule(fcfg, f.entrants, Past.of(games.values(), f.start, cfg.format == "random")):
            if end is None or spec.index < end:
                specs[spec.index] = spec
    for i, r in games.items():
        s = specs.get(i)
        if s is None or (r.get("game"), r.get("seats"), r.get("seed")) != (s.game, list(s.seats), s.seed):
            v.add("schedule", False, f"game {i} ({r.get('game')}) is not the game the seed schedules "
                                     f"(seats {r.get('seats')}, seed {r.get('seed')})")
            return False
    v.add("schedule", True, f"every game's id, seats and deal seed follow from the tournament's seed "
                            f"({len(games)} of {len(specs)} scheduled games played)")
    return True


def _check_league(v: Verification, cfg: TournamentConfig, games: Mapping[int, Mapping[str, Any]]) -> bool:
    """Every round of a league is the one its matchmaking gives from the rounds before."""
    from .league import league_rounds

    records = dict(games)
    checked = 0
    for rnd in league_rounds(cfg, records):
        for s in rnd:
            r = records.get(s.index)
            if r is None:
                continue
            if (r.get("game"), r.get("seats"), r.get("seed")) != (s.game, list(s.seats), s.seed):
                v.add("schedule", False, f"game {s.index} ({r.get('game')}) is not the game the league's matchmaking "
                                         f"gives (seats {r.get('seats')}, seed {r.get('seed')})")
                return False
            checked += 1
    if checked != len(records):
        v.add("schedule", False, f"{len(records) - checked} games are in no round of the league")
        return False
    v.add("schedule", True, f"every game's table, seats and deal seed follow from the tournament's seed and the "
                            f"rounds before it ({checked} games)")
    return True


def _check_digest(v: Verification, results: Path, records: Mapping[int, Mapping[str, Any]]) -> None:
    """Without the seed, only the digest of the published leaderboard can be checked."""
    from .journal import results_digest

    try:
        board = json.loads((results / "leaderboard.json").read_text())
    except (OSError, ValueError) as e:
        v.add("leaderboard", False, f"leaderboard.json unreadable ({e})")
        return
    if board.get("results_sha256") != results_digest(records.values()):
        v.add("leaderboard", False, "leaderboard.json's results_sha256 is not the digest of the published games")
        return
    v.add("leaderboard", None, "its games digest matches games.jsonl; the rest is recomputed once the seed "
                               "is known (the schedule depends on it)")


def _stopping(cfg: TournamentConfig, records: Mapping[int, Mapping[str, Any]]) -> tuple[bool, Mapping[str, Any] | None]:
    """(finished, early stopping's decision) of `records`, decided as the runner decides them."""
    specs = full_schedule(cfg, records)
    if cfg.format == "league":
        from .league import league_finished

        return league_finished(cfg, records), None
    stopping = None
    if cfg.stop_when:
        rounds = plan_rounds([s for s in specs if s.index >= cfg.base], cfg.stop.round_games)
        for r, rnd in enumerate(rounds):
            if any(s.index not in records for s in rnd):
                break
            stopping = _stop_check(cfg, rounds, r, records)
            if stopping["reason"] == "settled":
                break
    finished = (stopping is not None and stopping["reason"] == "settled") or len(records) == len(specs)
    return finished, stopping if finished else None


def _check_published(v: Verification, results: Path, cfg: TournamentConfig,
                     records: Mapping[int, Mapping[str, Any]], meta: Mapping[str, Any], state: SeedState) -> None:
    """Recompute the leaderboard files from the games and compare them with the published ones."""
    finished, stopping = _stopping(cfg, records)
    if bool(meta.get("finished")) != finished:
        v.add("finished", False, f"tournament.json says finished={meta.get('finished')!r}, but its "
                                 f"{len(records)} games {'finish' if finished else 'do not finish'} the tournament")
        return
    sandbox = meta.get("sandbox")  # how the bots were contained: recorded, not derived from the games
    board = make_board(cfg, records, stopping, reveal=finished, sandbox=sandbox if isinstance(sandbox, dict) else None)
    tmp = Path(tempfile.mkdtemp(prefix="p10-verify-"))
    try:
        write_leaderboard(tmp, board)
        bad = [name for name in PUBLISHED if (tmp / name).exists() != (results / name).exists()
               or (tmp / name).exists() and (tmp / name).read_bytes() != (results / name).read_bytes()]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    try:
        dq = json.loads((results / "disqualified.json").read_text())["disqualified"]
    except (OSError, ValueError, KeyError, TypeError):
        dq = None
    if dq != board["disqualified"]:
        bad.append("disqualified.json")
    if bad:
        v.add("leaderboard", False, f"{', '.join(bad)}: not what the {len(records)} published games give")
    else:
        v.add("leaderboard", True, f"{', '.join(x for x in PUBLISHED if (results / x).exists())} and "
                                   f"disqualified.json are what the {len(records)} published games give")


def _check_replays(v: Verification, results: Path, cfg: TournamentConfig,
                   games: Mapping[int, Mapping[str, Any]]) -> None:
    """Play every kept replay again through the engine; its end must be the game's record."""
    from ..report.site import read_replay  # the one reader of replay files

    rules = cfg.rules.to_dict()
    checked = 0
    for i, r in sorted(games.items()):
        rel = r.get("replay")
        if not rel:
            continue
        path = results / str(rel)
        try:
            header, actions, result = read_replay(path)
            why = _replay_mismatch(header, actions, result, r, rules)
        except (OSError, ValueError, KeyError, TypeError, IllegalMove) as e:
            why = f"cannot be played again: {e}"
        if why:
            v.add("replays", False, f"{rel} (game {r.get('game')}): {why}")
            return
        checked += 1
    if checked:
        v.add("replays", True, f"{checked} replays played again through the engine: every game ends as recorded")
    else:
        v.add("replays", None, "no replays kept (replays: none, or no game failed with replays: failed)")


def _replay_mismatch(header: Mapping[str, Any], actions: list[dict[str, Any]], result: Mapping[str, Any] | None,
                     rec: Mapping[str, Any], rules: Mapping[str, Any]) -> str | None:
    """Why the replay does not end as `rec` says (None: it does)."""
    names = [p["name"] for p in header["players"]]
    if (header.get("game"), header.get("seed"), names) != (rec["game"], rec["seed"], rec["seats"]):
        return "its header is not this game's (id, seed or seats)"
    if header.get("rules") != rules or header.get("deck"):
        return "its header has other rules, or stacked deals, than the tournament's"
    game = replay_game(header, actions)
    if game.decision is not None:
        return "the recorded actions stop before the game ends"
    places = game.places(rec["forfeits"])
    firsts = [s for s, p in enumerate(places) if p == 1]
    got = {"places": places, "scores": [p.score for p in game.players], "phases": [p.completed for p in game.players],
           "winner": firsts[0] if len(firsts) == 1 else None, "hands": game.hand_no,
           "stalled_hands": game.stalled_hands, "reason": game.end_reason}
    for k, want in got.items():
        if rec.get(k) != want:
            return f"played again, its {k} is {want}, but games.jsonl records {rec.get(k)}"
    if result is None:
        return "it has no result line"
    said = {"places": result.get("places"), "scores": result.get("scores"), "phases": result.get("phases_completed"),
            "winner": result.get("winner"), "reason": result.get("reason")}
    for k, want in said.items():
        if got[k] != want:
            return f"its result line says {k} {want}, but played again it is {got[k]}"
    return None

