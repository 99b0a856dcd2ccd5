"""What `verify` reads of a results folder before it checks the games: its config, read
back from config.resolved.yaml and bound to tournament.json; what is kept of games.jsonl
while its chain is checked (`Reading`); the shape of a game record; and the verdicts
(`Verification`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..ledger.journal import CHAIN_FORMAT
from ..ledger.keep import FirstFaults
from ..report.files import MAX_META, load_yaml, read_regular
from ..referee.redact import WITHHELD
from .config import ConfigError, Field, TournamentConfig, config_hash, parse_config
from .disqualify import BUILD_KEY, failed_builds
from ..ratings.trueskill import rules_draw_probability
from .schedule import Past, PastReader, game_id
from .tally import GameTally
from ..model import played

MAX_TABLE = 6
"""Seats at a table at most (R1)."""


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


def read_config(results: Path, meta: Mapping[str, Any]) -> TournamentConfig:
    """The tournament's config from config.resolved.yaml, checked against tournament.json."""
    path = results / "config.resolved.yaml"
    try:
        resolved = load_yaml(read_regular(path, MAX_META))
    except (OSError, ValueError, RecursionError, yaml.YAMLError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from None
    if not isinstance(resolved, dict):
        raise ValueError(f"{path}: not a resolved config")
    try:
        digest = config_hash(resolved)
    except (TypeError, ValueError, AttributeError) as e:  # (a YAML date, bots not a list of bots): not a run's
        raise ValueError(f"{path}: not a resolved config ({e})") from None
    if digest != meta["config_sha256"]:
        raise ValueError(f"{path}: its SHA-256 is not the config_sha256 of tournament.json: the config was changed")
    data = dict(resolved)  # read as it is: parsing looks at no file and runs nothing (`parse_config`)
    data.setdefault("seating", "rotate")  # left out where it changes nothing, and by versions before it
    try:
        cfg = parse_config(data, str(path))
    except ConfigError as e:
        raise ValueError(str(e)) from None
    if cfg.config_sha256() != meta["config_sha256"] and not _shows_the_host(resolved):
        raise ValueError(f"{path}: reads back as another config")  # cannot happen for a file the runner wrote
    return with_fields(cfg, meta)


def _shows_the_host(resolved: Mapping[str, Any]) -> bool:
    """Whether a resolved config was written by a version that published the bots' env:
    values and the host's paths as they are (it reads back in the form that hides them)."""
    bots = resolved.get("bots")
    return isinstance(bots, list) and any(
        isinstance(b, dict) and (isinstance(b.get("env"), dict) and any(v != WITHHELD for v in b["env"].values())
                                 or any(isinstance(w, str) and w.startswith("/") for w in b.get("cmd") or []))
        for b in bots)


def with_fields(cfg: TournamentConfig, meta: Mapping[str, Any]) -> TournamentConfig:
    """`cfg` (the current field's config) with the fields and every entrant that ever
    played, and whether the games budget changed after a board was published, as
    tournament.json records them."""
    cfg = replace(cfg, budget_changed=bool(meta.get("budget_changed")))
    fields = tuple(Field(int(f["start"]), tuple(f["entrants"]), tuple(f.get("challengers") or ()))
                   for f in meta.get("fields") or [])
    order = tuple(meta.get("entrants") or ())
    if not fields:
        return cfg
    if fields[-1].entrants != tuple(cfg.entrants):
        raise ValueError(f"tournament.json: the last field's entrants {list(fields[-1].entrants)} are not those of "
                         f"config.resolved.yaml {cfg.entrants}")
    return replace(cfg, fields=fields, field_order=order)


class Reading:
    """What verify keeps of games.jsonl while its chain is checked, one line at a time: the
    running aggregates of the published lines (the first `published`), the history before
    each field's start (`PastReader`: the games before it as arrays) over every line, and
    that before the current field over the published lines; for a league only, every
    record."""

    def __init__(self, cfg: TournamentConfig, published: int) -> None:
        self.published = published
        self.league = cfg.format == "league"
        random = cfg.format == "random"
        self.tally = GameTally(cfg.standing, draw_probability=rules_draw_probability(cfg.rules))
        fields = cfg.fields if cfg.fields and not self.league else ()
        self.fields = [PastReader(f.start, random) for f in fields]
        self.before = PastReader(0 if self.league else cfg.base, random)  # the published games before this field
        self.games: dict[int, dict[str, Any]] = {}  # a league's records, in line order
        self.line = 0
        self.untallied: str | None = None  # why a published record could not be counted
        self.malformed: str | None = None  # the first record of another shape
        self.last_seat: dict[str, int] = {}  # entrant -> the highest published game index it sat in
        self.firsts = FirstFaults()  # each entrant's first games with a fault, over every line

    def add(self, rec: dict[str, Any]) -> None:
        """Take the record of the next line (one not of the shape the runner writes is
        noted in `malformed`, and nothing more is taken)."""
        self.line += 1
        i = rec["id"]
        if self.malformed is not None:
            return
        why = _record_shape(rec)
        if why is not None:
            self.malformed = f"game {i} (line {self.line}) is not a record the runner writes: {why}"
            return
        if self.league:
            self.games[i] = rec
        self.firsts.add(rec)
        for f in self.fields:
            f.add(rec)
        if self.line > self.published:
            return
        self.before.add(rec)
        for s in rec["seats"]:
            self.last_seat[s] = max(i, self.last_seat.get(s, -1))
        try:
            self.tally.add(rec)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            if self.untallied is None:
                self.untallied = f"game {i} (line {self.line}) cannot be counted ({type(e).__name__}: {e})"

    def pasts(self) -> list[Past]:
        """The history before each field's start, from every line."""
        return [f.past() for f in self.fields] or [Past()]


def config_bound(meta: Mapping[str, Any]) -> bool:
    """The whole config is bound by the chain: it binds the settings (`p10-chain/2`) and
    the config is still the one the chain starts from."""
    return meta.get("chain") == CHAIN_FORMAT and meta["config_sha256"] == (
        meta.get("chain_config_sha256") or meta["config_sha256"])


def field_records(meta: Mapping[str, Any], cfg: TournamentConfig) -> str | None:
    """What in tournament.json's record of the fields no run writes (None: nothing): an
    entrant that is in no field; or, where the config is still the one the chain starts
    from (so no run changed the field or the budget), a change of field, a retired entrant
    or a changed budget recorded all the same."""
    fields = meta.get("fields") or []
    entrants = meta.get("entrants") or {}
    seated = {e for f in fields for e in f["entrants"]}
    ghosts = [e for e in entrants if fields and e not in seated]
    if ghosts:
        return f"{len(ghosts)} entrants ({', '.join(g[:40] for g in ghosts[:3])}) are in no field"
    if not config_bound(meta):
        return None
    if len(fields) > 1 or (fields and fields[0]["start"] != 0) or meta.get("retired") or meta.get("budget_changed") \
            or (entrants and set(entrants) != set(cfg.entrants)):
        return ("it records a change of field, a retired entrant or a changed budget, but its config is the one "
                "the chain starts from, which a run that made such a change would have changed too")
    return None


def is_integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _record_shape(rec: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of a game record (None: it is the runner's shape)."""
    if rec.get("game") != game_id(rec["id"]):
        return f"its game {str(rec.get('game'))[:40]!r} is not the id of game {rec['id']}"
    if not (is_integer(rec.get("seed")) and is_integer(rec.get("group"))):
        return "its seed or group is not an integer"
    seats = rec.get("seats")
    least = 1 if played(rec) else 0  # (a table of entrants all disqualified)
    if not (isinstance(seats, list) and least <= len(seats) <= MAX_TABLE and all(isinstance(s, str) for s in seats)):
        return f"its seats are not a list of {least} to {MAX_TABLE} names"
    for key in ("places", "scores", "phases"):
        v = rec.get(key)
        if not (isinstance(v, list) and len(v) == len(seats) and all(is_integer(x) for x in v)):
            return f"its {key} are not a number for each seat"
    if not (isinstance(rec.get("faults"), list) and isinstance(rec.get("forfeits"), list)):
        return "its faults or forfeits are not lists"
    builds = rec.get(BUILD_KEY)
    if builds is not None and not (isinstance(builds, list) and len(list(failed_builds(rec))) == len(builds)
                                   and all(d.entrant in (rec.get("disqualified") or ()) for d in failed_builds(rec))):
        return f"its {BUILD_KEY} is not a list of the failed builds of entrants left out of it"
    replay = rec.get("replay")
    if replay is not None and replay != f"replays/{rec['game']}.jsonl":
        return f"its replay {str(replay)[:60]!r} is not replays/{rec['game']}.jsonl"
    return None
