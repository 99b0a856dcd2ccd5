"""Tournament configuration: YAML loaded into frozen, validated settings.

Every mistake raises `ConfigError` naming the file, the key and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..engine import Rules, RulesError
from ..referee import DEFAULT_MOVE_MS, BotSpec, FaultPolicy, Limits, TimeControl
from ..referee.redact import WITHHELD, Redactor, shown_path
from ..sandbox.box import MODES as SANDBOX_MODES
from ..sandbox.box import Sandbox
from .identity import PatternError, file_patterns
from .placement import ConfigError, err as _err, place_bots, placed_root
from .teams import team_problem

FORMATS = ("round-robin", "gauntlet", "random", "league")
REPLAYS = ("none", "failed", "sample", "all")
#: With `replays: sample` (the default), the games whose replays are kept whatever happens
#: in them: the first this many games of every entrant (in schedule order); besides them,
#: each entrant's first games with a fault (`keep.FAULT_REPLAYS`).
SAMPLE_PER_ENTRANT = 3
EXECUTORS = ("local", "dask")
STOP_RULES = ("settled", "sprt")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")


@dataclass(frozen=True)
class DisqualifyPolicy:
    """When an entrant is taken out of the rest of the tournament (None = never): after
    `startup_failures` games it failed to start for, or when it forfeited more than
    `forfeit_share` of its games (once it has `min_games`). Judged between rounds of
    `check_every` games (by game index), from the games before the round only, so the
    decisions do not depend on `parallel` or on the order games finish in."""

    startup_failures: int | None = 3
    forfeit_share: float | None = 0.5
    min_games: int = 4
    check_every: int = 20


@dataclass(frozen=True)
class StopPolicy:
    """Early stopping. Games are played in rounds of at least `round_games` games (whole
    deal groups) and looked at after each round once `min_games` games are played; the
    budget is the schedule itself.

    `stop_when: settled`: stop when the order of the top `top` entrants (None = the whole
    order) is settled at `confidence` by the anytime-valid paired deal test (its error rate
    holds over every look, whatever `round_games` and `min_games` are).

    `stop_when: sprt`: a sequential probability ratio test of `candidate` against
    `baseline` (None = every other entrant, the field) on per-deal scores: H0 "stronger by
    `elo0`" against H1 "stronger by `elo1`" (logistic Elo of the deal score), error rates
    `alpha` (accepting H1 when H0 holds) and `beta` (accepting H0 when H1 holds).

    `resamples`: the bootstrap resamples of the leaderboard's rating intervals."""

    top: int | None = None
    confidence: float = 0.95
    round_games: int = 20
    min_games: int = 40
    resamples: int = 1000
    candidate: str | None = None
    baseline: str | None = None
    elo0: float = 0.0
    elo1: float = 50.0
    alpha: float = 0.05
    beta: float = 0.05


@dataclass(frozen=True)
class Field:
    """The entrants that play from game index `start` on (in the tournament's order: the
    order each first appeared in)."""

    start: int
    entrants: tuple[str, ...]
    challengers: tuple[str, ...] = ()  # a gauntlet's

    def to_json(self) -> dict[str, Any]:
        """As tournament.json's `fields` holds it."""
        return {"start": self.start, "entrants": list(self.entrants)} | (
            {"challengers": list(self.challengers)} if self.challengers else {})


@dataclass(frozen=True)
class LeaguePolicy:
    """`format: league`: rounds of `round_games` games (whole tables of table_size
    games, one per seat rotation) matched from the games of the rounds before; a run
    ends once `games` games are played and every active entrant has `min_games`."""

    round_games: int = 20
    min_games: int = 10


@dataclass(frozen=True)
class TournamentConfig:
    """A validated tournament."""

    name: str
    seed: int | None  # None: secret, not drawn yet (the runner draws it; `with_seed`)
    bots: tuple[BotSpec, ...]
    table_size: int
    format: str
    games_per_table: int
    games: int | None
    challengers: tuple[str, ...]
    duplicate: bool
    parallel: int
    rules: Rules
    time: TimeControl
    faults: FaultPolicy
    disqualify: DisqualifyPolicy
    replays: str
    output: Path
    executor: str = "local"
    scheduler: str | None = None
    affinity: bool = False  # pin each local worker, and the bots it starts, to one CPU
    stop_when: str | None = None
    stop: StopPolicy = field(default_factory=StopPolicy)
    secret_seed: bool = False  # no seed in the file: drawn at the first start, published at the end
    # Entrants whose process may be dealt a deal it has already played (`trusted: true`);
    # every other bot gets a fresh process for each rotation of a duplicate deal.
    trusted: frozenset[str] = frozenset()
    # What the site shows of an entrant's versions: name -> {"version": label, "replaces":
    # the name of the entrant it follows}; decides nothing of the games.
    lineage: Mapping[str, Mapping[str, str]] = field(default_factory=dict, compare=False)
    sandbox: str = "auto"  # the tournament's setting (each bot's is in its spec)
    league: LeaguePolicy = field(default_factory=LeaguePolicy)
    # The order round a round-robin or gauntlet table: "seeded" and "balanced" change it
    # from one block of table_size games to the next (schedule.seat_order), in a sequence
    # drawn from the seed or fixed by the names; "rotate" keeps the table's order, only
    # rotated (who plays after whom never changes).
    seating: str = "seeded"
    # (entrant, team) of the bots given a `team`: entrants of one team never share a table
    teams: tuple[tuple[str, str], ...] = ()
    # A field that changed between runs (set from the results folder, not the file):
    # every entrant that ever played, in the order each first appeared, and the fields.
    field_order: tuple[str, ...] = field(default=(), compare=False)
    fields: tuple[Field, ...] = field(default=(), compare=False)
    # The games budget was changed after a board of these results was published (set from
    # the results folder): a board was looked at before the size was fixed.
    budget_changed: bool = field(default=False, compare=False)
    source: str = field(default="", compare=False)
    # The folder the bots' paths were given relative to, as written (`base_dir` joined).
    home: str = field(default=".", compare=False)
    # The folder the published files show the host's paths relative to (`redact.host_root`).
    root: str = field(default="", compare=False)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def entrants(self) -> list[str]:
        """Entrant names in config order."""
        return [b.name for b in self.bots]

    @property
    def team_map(self) -> dict[str, str]:
        """Entrant -> team, for the bots given one (`tournament.teams`)."""
        return dict(self.teams)

    @property
    def standing(self) -> list[str]:
        """Every entrant of the standings: the active ones and the retired ones, in the
        order each first appeared."""
        return list(self.field_order) if self.field_order else self.entrants

    @property
    def retired(self) -> list[str]:
        """Entrants with games in the results that are no longer in the field."""
        active = set(self.entrants)
        return [e for e in self.standing if e not in active]

    @property
    def base(self) -> int:
        """The first game index of the current field (0 unless the field changed)."""
        return self.fields[-1].start if self.fields else 0

    def bot(self, name: str) -> BotSpec:
        """The spec of entrant `name`."""
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)

    def resolved(self) -> dict[str, Any]:
        """Everything that decides the games, as plain data (written to config.resolved.yaml),
        as it may be published: the bots' `env:` values withheld, the host's folders shown
        relative to `root` (`redact.shown_path`)."""
        words = self.redactor(secrets=False).text
        return {
            "name": self.name,
            "seed": "secret" if self.secret_seed else self.seed,
            "bots": [
                {"name": b.name, "cmd": [shown_path(w, self.root) if os.path.isabs(w) else words(w) for w in b.argv],
                 "cwd": shown_path(b.cwd, self.root) if b.cwd else b.cwd, "env": {k: WITHHELD for k in b.env},
                 "limits": {k: v for k, v in asdict(b.limits).items() if v is not None},
                 "sandbox": b.sandbox.mode, "mounts": [shown_path(m, self.root) for m in b.sandbox.mounts],
                 **({"build": [words(w) for w in b.sandbox.build]} if b.sandbox.build else {}),
                 **({"team": self.team_map[b.name]} if b.name in self.team_map else {}),
                 **self.lineage.get(b.name, {})}
                for b in self.bots
            ],
            "table_size": self.table_size,
            "format": self.format,
            "games_per_table": self.games_per_table,
            "games": self.games,
            "challengers": list(self.challengers),
            "duplicate": self.duplicate,
            "rules": self.rules.to_dict(),
            "time": asdict(self.time),
            "faults": {**asdict(self.faults), "disqualify": asdict(self.disqualify)},
            "replays": self.replays,
        } | ({"seating": self.seating} if self.seating_applies() else {}) | ({"stop_when": self.stop_when, "stop": self._stop_settings()} if self.stop_when else {}) | (
            {"league": asdict(self.league)} if self.format == "league" else {}) | (
            {"trusted": [b.name for b in self.bots if b.name in self.trusted]} if self.trusted else {})

    def redactor(self, secrets: bool = True, host_env: bool = False) -> Redactor:
        """What masks the host's folders (and with `secrets`, the bots' `env:` values, and
        with `host_env` the harness's own environment's) in what this tournament
        publishes; a value the published config shows anyway is not masked."""
        folders = [p for b in self.bots for p in (b.cwd, b.sandbox.own, *b.sandbox.mounts) if p]
        if not secrets:
            return Redactor.for_bots([], self.root, folders)
        public = json.dumps(self.resolved(), ensure_ascii=False)
        return Redactor.for_bots([b.env for b in self.bots], self.root, folders, public, host_env)

    def seating_applies(self) -> bool:
        """Whether `seating: seeded` or `balanced` is set and changes the schedule: round-robin and
        gauntlet tables of 3 or more (two players have one order; a random format and a
        league draw or match their own). Otherwise it is left out of `resolved` (and so of
        the config's hash): a config without the key read back is `rotate`."""
        return self.seating in ("seeded", "balanced") and self.table_size >= 3 and \
            self.format in ("round-robin", "gauntlet")

    def _stop_settings(self) -> dict[str, Any]:
        """The `stop` settings that apply to this `stop_when` rule."""
        keys = SETTLED_KEYS if self.stop_when == "settled" else SPRT_KEYS
        return {k: v for k, v in asdict(self.stop).items() if k in keys}

    def with_seed(self, seed: int) -> "TournamentConfig":
        """This config playing with `seed` (a secret seed drawn or read back; it stays
        secret: `resolved` and the hashes do not show it)."""
        return replace(self, seed=seed)

    def config_sha256(self) -> str:
        """SHA-256 of what decides the games (not `parallel`, `output`, the executor or the
        bots' folders; a secret seed as "secret"): `config_hash` of `resolved()`."""
        return config_hash(self.resolved())

    def settings(self) -> dict[str, Any]:
        """What decides finished games besides the field: `resolved()` without the bots
        and challengers (and, for the random and league formats, without the budget `games`). A results
        folder takes a config whose settings are its own, whatever its bots."""
        return {k: v for k, v in self.resolved().items()
                if k not in ("bots", "trusted", "challengers") and not (k == "games" and self.format in ("random", "league"))}

    def settings_sha256(self) -> str:
        """SHA-256 of `settings()` as sorted JSON."""
        return hashlib.sha256(json.dumps(self.settings(), sort_keys=True).encode()).hexdigest()

    def fingerprint(self) -> str:
        """A short hash of what decides the games (the start of `config_sha256`), so a
        results folder can tell whether it belongs to this config."""
        return self.config_sha256()[:16]


def config_hash(resolved: Mapping[str, Any]) -> str:
    """SHA-256 of a resolved config (as config.resolved.yaml holds it), without the bots'
    working folders and how they are contained (sandbox, mounts, build: not what they
    play), as sorted JSON."""
    data = dict(resolved)
    data["bots"] = [{k: v for k, v in b.items() if k not in ("cwd", "sandbox", "mounts", "build")}
                    for b in data.get("bots") or []]
    text = json.dumps(data, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _int(src: str, key: str, v: Any, lo: int | None = None, hi: int | None = None) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise _err(src, key, f"must be an integer, not {v!r}")
    if lo is not None and v < lo or hi is not None and v > hi:
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise _err(src, key, f"must be {rng}, not {v}")
    return v


def _teams(src: str, data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The bots' `team`s as (entrant, team), each a short name (entrants of one team
    never share a table)."""
    out = []
    for i, b in enumerate(data["bots"]):
        team = b.get("team")
        if team is not None and (not isinstance(team, str) or not _NAME.match(team)):
            raise _err(src, f"bots[{i}].team", f"must be a short name of letters, digits, '-', '_', '.', not {team!r}")
        if team is not None:
            out.append((b["name"], team))
    return out


def _check_keys(src: str, where: str, d: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise _err(src, f"{where}{unknown[0]}", f"unknown key (known: {', '.join(sorted(allowed))})")


SEATINGS = ("seeded", "balanced", "rotate")
"""`seating`: the order round a table changes from one block of table_size games (a
duplicate deal group) to the next, in a sequence drawn from the tournament seed
("seeded", the default) or fixed by the entrants' names ("balanced", the schedule of
versions before "seeded": a name could choose its neighbours in a short run); or it only
rotates ("rotate", the schedule of versions without the key)."""

TOP_KEYS = {
    "name", "seed", "bots", "table_size", "format", "games_per_table", "games", "challengers",
    "duplicate", "parallel", "rules", "time", "faults", "replays", "output", "base_dir",
    "executor", "scheduler", "limits", "stop_when", "stop", "affinity", "randomize_addresses",
    "sandbox", "trusted", "league", "seating",
}
BOT_KEYS = {"name", "cmd", "cwd", "env", "limits", "sandbox", "mounts", "build", "build_timeout_s", "trusted",
            "version", "replaces", "team", "outputs", "ignore"}
LIMIT_KEYS = ("memory_mb", "cpu_s", "open_files", "processes", "file_mb", "scratch_mb", "cpus")


def load_config(path: str | Path, overrides: Mapping[str, Any] | None = None) -> TournamentConfig:
    """Load and validate a YAML tournament file. `overrides` replace top-level keys."""
    path = Path(path)
    src = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{src}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{src}: cannot read: {e}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{src}: not valid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{src}: the file must be a mapping of keys (name, seed, bots, ...)")
    data = dict(data)
    for k, v in (overrides or {}).items():
        if v is not None:
            data[k] = v
    return config_from(data, src, base=path.parent)


def config_from(data: Mapping[str, Any], src: str = "<config>", base: Path = Path(".")) -> TournamentConfig:
    """A config mapping validated (`parse_config`) and resolved on this machine
    (`resolve_config`): ready to run."""
    return resolve_config(parse_config(data, src, base))


def resolve_config(cfg: TournamentConfig) -> TournamentConfig:
    """`cfg` (as `parse_config` returns it) placed on this machine: the bots' folders and
    mounts checked and made absolute, each bot's own folder and what its sandbox hides
    worked out (`placement.place_bots`), and the folder published paths are shown relative
    to. Raises `ConfigError` naming the bot and the path."""
    raw = cfg.raw.get("bots") or []
    cwds = [b.get("cwd") if isinstance(b, dict) else None for b in raw]
    bots = place_bots(cfg.bots, cwds, cfg.home, cfg.source, cfg.output)
    return replace(cfg, bots=tuple(bots), root=placed_root(cfg.source, cfg.home))


def parse_config(data: Mapping[str, Any], src: str = "<config>", base: Path = Path(".")) -> TournamentConfig:
    """Validate a config mapping: the shape and values of every key, nothing else. Pure:
    no file is looked at and no sandbox worked out, so that a stored config reads back
    anywhere (`verify`); the bots' folders are joined to `base` as written. Before a bot
    runs, `resolve_config` (or `load_config`, which does both) checks the folders and
    works out how each bot is contained."""
    _check_keys(src, "", data, TOP_KEYS)
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _err(src, "name", f"must be a short name of letters, digits, '-', '_', '.', not {name!r}")
    seed_raw = data.get("seed", "secret")
    secret = seed_raw is None or seed_raw == "secret"
    if not secret and (not isinstance(seed_raw, int) or isinstance(seed_raw, bool) or seed_raw < 0):
        raise _err(src, "seed", f"must be an integer >= 0, or secret (or left out: secret), not {seed_raw!r}")
    base_dir = data.get("base_dir")
    if base_dir is not None:
        if not isinstance(base_dir, str):
            raise _err(src, "base_dir", f"must be a path, not {base_dir!r}")
        base = base / base_dir
    sandbox = data.get("sandbox", "auto")
    if sandbox not in SANDBOX_MODES:
        raise _err(src, "sandbox", f"must be one of {', '.join(SANDBOX_MODES)}, not {sandbox!r}")
    output = data.get("output") or f"results/{name}"
    if not isinstance(output, str):
        raise _err(src, "output", f"must be a path, not {output!r}")
    bots, trusted = _bots(src, data, base, sandbox)
    shape = _format(src, data, [b.name for b in bots])
    teams = _teams(src, data)
    why = team_problem([b.name for b in bots], shape["challengers"], shape["table_size"], shape["format"], dict(teams))
    if why:
        raise _err(src, "table_size", why)
    parallel = data.get("parallel", 1)
    if parallel == "auto":
        parallel = os.cpu_count() or 1
    parallel = _int(src, "parallel", parallel, 1, 256)
    rules_raw = data.get("rules") or {}
    if not isinstance(rules_raw, dict):
        raise _err(src, "rules", "must be a mapping (variant, phases, first_to, turn_limit, hand_limit)")
    try:
        rules = Rules.from_dict(rules_raw)
    except RulesError as e:
        raise _err(src, "rules", str(e)) from None
    stop_when, stop = _stop(src, data, [b.name for b in bots])
    if shape["format"] == "league" and stop_when:
        raise _err(src, "stop_when", "does not apply to a league (it plays rounds until its games budget, or for "
                                     "ever with run --forever)")
    policy, dq = _faults(src, data)
    return TournamentConfig(
        name=name, seed=None if secret else seed_raw, bots=tuple(bots), parallel=parallel, rules=rules,
        time=_time(src, data), faults=policy, disqualify=dq, output=Path(output), stop_when=stop_when, stop=stop,
        sandbox=sandbox, trusted=frozenset(trusted), teams=tuple(teams), secret_seed=secret, source=src, home=str(base),
        lineage=_lineage(src, data["bots"]), raw=dict(data), **shape, **_running(src, data))


def _bots(src: str, data: Mapping[str, Any], base: Path, sandbox: str) -> tuple[list[BotSpec], set[str]]:
    """The `bots` list (and `trusted`), validated: the specs with their folders as written
    (joined to `base`), and the names of the trusted entrants."""
    default_limits = _limits(src, "limits", data.get("limits") or {}, Limits())
    randomize = data.get("randomize_addresses", False)
    if not isinstance(randomize, bool):
        raise _err(src, "randomize_addresses", f"must be true or false, not {randomize!r}")
    all_trusted = data.get("trusted", False)
    named: set[str] = set()  # `trusted: [names]`, the form config.resolved.yaml lists them in
    if isinstance(all_trusted, list) and all(isinstance(n, str) for n in all_trusted):
        named, all_trusted = set(all_trusted), False
    if not isinstance(all_trusted, bool):
        raise _err(src, "trusted", f"must be true or false (or a list of bot names), not {all_trusted!r}")
    trusted: set[str] = set()
    bots_raw = data.get("bots")
    if not isinstance(bots_raw, list) or len(bots_raw) < 2:
        raise _err(src, "bots", "must be a list of at least 2 entrants, each {name, cmd}")
    bots: list[BotSpec] = []
    for i, b in enumerate(bots_raw):
        where = f"bots[{i}]"
        if not isinstance(b, dict):
            raise _err(src, where, "must be a mapping with name and cmd")
        _check_keys(src, f"{where}.", b, BOT_KEYS)
        bname = b.get("name")
        if not isinstance(bname, str) or not _NAME.match(bname):
            raise _err(src, f"{where}.name", f"must be a short name of letters, digits, '-', '_', '.', not {bname!r}")
        if any(o.name == bname for o in bots):
            raise _err(src, f"{where}.name", f"{bname!r} appears twice")
        argv = _command(src, f"{where}.cmd", b.get("cmd"))
        cwd = b.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise _err(src, f"{where}.cwd", f"must be a path, not {cwd!r}")
        env = b.get("env") or {}
        if not isinstance(env, dict) or not all(isinstance(k, str) for k in env):
            raise _err(src, f"{where}.env", "must be a mapping of NAME: value")
        limits = _limits(src, f"{where}.limits", b["limits"], default_limits) if b.get("limits") else default_limits
        bot_trusted = b.get("trusted", all_trusted or bname in named)
        if not isinstance(bot_trusted, bool):
            raise _err(src, f"{where}.trusted", f"must be true or false, not {bot_trusted!r}")
        if bot_trusted:
            trusted.add(bname)
        bots.append(BotSpec(bname, tuple(argv), str(base / cwd if cwd else base), {k: str(v) for k, v in env.items()},
                            limits, randomize_addresses=randomize, sandbox=_bot_sandbox(src, where, b, sandbox, base)))
    unknown = sorted(named - {b.name for b in bots})
    if unknown:
        raise _err(src, "trusted", f"names {unknown[0]!r}, which is not the name of a bot")
    return bots, trusted


def _command(src: str, key: str, cmd: Any) -> list[str]:
    """A command (`cmd`, `build`): a string split into words as a shell would, or a list
    of strings; never empty."""
    if isinstance(cmd, str):
        try:
            argv = shlex.split(cmd)
        except ValueError as e:
            raise _err(src, key, f"cannot be split into words: {e}") from None
    elif isinstance(cmd, list) and all(isinstance(x, str) for x in cmd):
        argv = list(cmd)
    else:
        raise _err(src, key, f"must be a command string or a list of strings, not {cmd!r}")
    if not argv:
        raise _err(src, key, "is empty")
    return argv


def _format(src: str, data: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """The format's settings (table_size, format, games_per_table, games, challengers,
    duplicate, seating, league), checked against each other and the field `names`."""
    table_size = _int(src, "table_size", data.get("table_size", 2), 2, 6)
    fmt = data.get("format", "round-robin")
    if fmt not in FORMATS:
        raise _err(src, "format", f"must be one of {', '.join(FORMATS)}, not {fmt!r}")
    games_per_table = _int(src, "games_per_table", data.get("games_per_table", table_size), 1)
    duplicate = data.get("duplicate", False)
    if not isinstance(duplicate, bool):
        raise _err(src, "duplicate", f"must be true or false, not {duplicate!r}")
    seating = data.get("seating", "seeded")
    if seating not in SEATINGS:
        raise _err(src, "seating", f"must be one of {', '.join(SEATINGS)}, not {seating!r}")
    games = data.get("games")
    challengers: tuple[str, ...] = ()
    field_size = len(names)
    if fmt == "gauntlet":
        ch = data.get("challengers")
        if not isinstance(ch, list) or not ch or not all(isinstance(c, str) for c in ch):
            raise _err(src, "challengers", "the gauntlet format needs a list of challenger names")
        for c in ch:
            if c not in names:
                raise _err(src, "challengers", f"{c!r} is not the name of a bot")
        challengers = tuple(ch)
        field_size = len(names) - len(challengers)
        if field_size < table_size - 1:
            raise _err(src, "table_size", f"is {table_size} but the field (bots that are not challengers) has only {field_size}")
    elif table_size > field_size:
        raise _err(src, "table_size", f"is {table_size} but there are only {field_size} bots")
    if fmt in ("round-robin", "gauntlet") and games_per_table % table_size:
        raise _err(src, "games_per_table",
                   f"must be a multiple of table_size ({table_size}) so every entrant sits in every seat equally, not {games_per_table}")
    if fmt in ("random", "league"):
        games = _int(src, "games", games, 1)
        if fmt == "random" and duplicate and games % table_size:
            raise _err(src, "games", f"must be a multiple of table_size ({table_size}) with duplicate deals, not {games}")
    elif games is not None:
        raise _err(src, "games", f"applies only to the random and league formats (the {fmt} format plays "
                                 "games_per_table per table)")
    league = _league(src, data, fmt, table_size)
    if fmt != "gauntlet" and data.get("challengers"):
        raise _err(src, "challengers", "applies only to the gauntlet format")
    return dict(table_size=table_size, format=fmt, games_per_table=games_per_table, games=games,
                challengers=challengers, duplicate=duplicate, seating=seating, league=league)


def _time(src: str, data: Mapping[str, Any]) -> TimeControl:
    """The `time` settings."""
    time_raw = data.get("time") or {}
    if not isinstance(time_raw, dict):
        raise _err(src, "time", "must be a mapping (move_ms, game_ms, startup_ms)")
    _check_keys(src, "time.", time_raw, {"move_ms", "game_ms", "startup_ms"})
    return TimeControl(
        move_ms=_int(src, "time.move_ms", time_raw.get("move_ms", DEFAULT_MOVE_MS), 1),
        game_ms=None if time_raw.get("game_ms") is None else _int(src, "time.game_ms", time_raw["game_ms"], 1),
        startup_ms=_int(src, "time.startup_ms", time_raw.get("startup_ms", 10000), 1),
    )


def _faults(src: str, data: Mapping[str, Any]) -> tuple[FaultPolicy, DisqualifyPolicy]:
    """The `faults` settings: retries and strikes, and when an entrant is disqualified."""
    faults_raw = data.get("faults") or {}
    if not isinstance(faults_raw, dict):
        raise _err(src, "faults", "must be a mapping (retries, max_strikes, disqualify)")
    _check_keys(src, "faults.", faults_raw, {"retries", "max_strikes", "disqualify"})
    policy = FaultPolicy(
        retries=_int(src, "faults.retries", faults_raw.get("retries", 1), 0, 10),
        max_strikes=_int(src, "faults.max_strikes", faults_raw.get("max_strikes", 5), 1),
    )
    dq_raw = faults_raw.get("disqualify")
    if dq_raw is False:  # never disqualify
        dq_raw = {"startup_failures": None, "forfeit_share": None}
    dq_raw = dq_raw or {}
    if not isinstance(dq_raw, dict):
        raise _err(src, "faults.disqualify",
                   "must be a mapping (startup_failures, forfeit_share, min_games, check_every), or false")
    _check_keys(src, "faults.disqualify.", dq_raw, {"startup_failures", "forfeit_share", "min_games", "check_every"})
    share = dq_raw.get("forfeit_share", 0.5)
    if share is not None and (not isinstance(share, (int, float)) or isinstance(share, bool) or not 0 < share <= 1):
        raise _err(src, "faults.disqualify.forfeit_share", f"must be a number in (0, 1] or null, not {share!r}")
    sf = dq_raw.get("startup_failures", 3)
    return policy, DisqualifyPolicy(
        startup_failures=None if sf is None else _int(src, "faults.disqualify.startup_failures", sf, 1),
        forfeit_share=None if share is None else float(share),
        min_games=_int(src, "faults.disqualify.min_games", dq_raw.get("min_games", 4), 1),
        check_every=_int(src, "faults.disqualify.check_every", dq_raw.get("check_every", 20), 1),
    )


def _running(src: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """How the games are run and kept (replays, executor, scheduler, affinity): nothing
    that decides them."""
    replays = data.get("replays", "sample")
    if replays not in REPLAYS:
        raise _err(src, "replays", f"must be one of {', '.join(REPLAYS)}, not {replays!r}")
    executor = data.get("executor", "local")
    if executor not in EXECUTORS:
        raise _err(src, "executor", f"must be one of {', '.join(EXECUTORS)}, not {executor!r}")
    scheduler = data.get("scheduler")
    if scheduler is not None and not isinstance(scheduler, str):
        raise _err(src, "scheduler", f"must be an address like tcp://host:8786, not {scheduler!r}")
    affinity = data.get("affinity", False)
    if not isinstance(affinity, bool):
        raise _err(src, "affinity", f"must be true or false, not {affinity!r}")
    if affinity and executor != "local":
        raise _err(src, "affinity", "applies to the local executor only (a Dask cluster places its own workers)")
    return dict(replays=replays, executor=executor, scheduler=scheduler, affinity=affinity)


LEAGUE_KEYS = {"round_games", "min_games"}


LEAGUE_ROUND = 40  # a league round's games unless set


def _lineage(src: str, bots_raw: list[Any]) -> dict[str, dict[str, str]]:
    """Each bot's `version:` (a label) and `replaces:` (the entrant it is a new version of,
    no longer in the field), as given."""
    names = {b["name"] for b in bots_raw}
    out: dict[str, dict[str, str]] = {}
    for i, b in enumerate(bots_raw):
        got: dict[str, str] = {}
        for key in ("version", "replaces"):
            v = b.get(key)
            if v is None:
                continue
            if isinstance(v, (int, float)) and not isinstance(v, bool) and key == "version":
                v = str(v)
            if not isinstance(v, str) or not v.strip() or len(v) > 64 or not v.isprintable():
                raise _err(src, f"bots[{i}].{key}", f"must be a short line of text, not {v!r}")
            got[key] = v
        if got.get("replaces") in names:
            raise _err(src, f"bots[{i}].replaces", f"names {got['replaces']!r}, which is still in the field: "
                                                   "a bot replaces an entrant that is retired")
        if got:
            out[b["name"]] = got
    return out


def _league(src: str, data: Mapping[str, Any], fmt: str, table_size: int) -> LeaguePolicy:
    """The `league` settings: rounds of `round_games` games (default `LEAGUE_ROUND`, not
    derived from the field: a league's field changes, its settings must not), rounded up
    to whole tables of table_size games; `min_games` per active entrant (default 10)."""
    raw = data.get("league")
    if fmt != "league":
        if raw is not None:
            raise _err(src, "league", "applies only to format: league")
        return LeaguePolicy()
    raw = raw or {}
    if not isinstance(raw, dict):
        raise _err(src, "league", f"must be a mapping ({', '.join(sorted(LEAGUE_KEYS))})")
    _check_keys(src, "league.", raw, LEAGUE_KEYS)
    rg = raw.get("round_games")
    rg = LEAGUE_ROUND if rg is None else _int(src, "league.round_games", rg, 1)
    rg = -(-rg // table_size) * table_size
    mg = _int(src, "league.min_games", raw.get("min_games", 10), 0)
    return LeaguePolicy(round_games=rg, min_games=mg)


SETTLED_KEYS = {"top", "confidence", "round_games", "min_games", "resamples"}
SPRT_KEYS = {"candidate", "baseline", "elo0", "elo1", "alpha", "beta", "round_games", "min_games", "resamples"}


def _num(src: str, key: str, v: Any, lo: float | None = None, hi: float | None = None) -> float:
    """A number, strictly inside (lo, hi) where given."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise _err(src, key, f"must be a number, not {v!r}")
    if lo is not None and v <= lo or hi is not None and v >= hi:
        raise _err(src, key, f"must be between {lo:g} and {hi:g} (exclusive), not {v!r}")
    return float(v)


def _stop(src: str, data: Mapping[str, Any], names: list[str]) -> tuple[str | None, StopPolicy]:
    """`stop_when` and its `stop` settings. Defaults scale with the field: rounds of 5
    games per entrant, at least 10 games per entrant before the first look."""
    rule = data.get("stop_when")
    raw = data.get("stop")
    entrants = len(names)
    if rule is None:
        if raw is not None:
            raise _err(src, "stop", "applies only with stop_when: settled or sprt")
        return None, StopPolicy()
    if rule not in STOP_RULES:
        raise _err(src, "stop_when", f"must be one of {', '.join(STOP_RULES)} (or left out), not {rule!r}")
    raw = raw or {}
    keys = SETTLED_KEYS if rule == "settled" else SPRT_KEYS
    if not isinstance(raw, dict):
        raise _err(src, "stop", f"must be a mapping ({', '.join(sorted(keys))})")
    _check_keys(src, "stop.", raw, keys)
    rg = raw.get("round_games")
    mg = raw.get("min_games")
    common = dict(
        round_games=5 * entrants if rg is None else _int(src, "stop.round_games", rg, 1),
        min_games=10 * entrants if mg is None else _int(src, "stop.min_games", mg, 0),
        resamples=_int(src, "stop.resamples", raw.get("resamples", 1000), 100, 100000),
    )
    if rule == "sprt":
        cand, base = raw.get("candidate"), raw.get("baseline")
        if cand not in names:
            raise _err(src, "stop.candidate", f"must name the bot under test (one of {', '.join(names)}), not {cand!r}")
        if base is not None and (base not in names or base == cand):
            raise _err(src, "stop.baseline",
                       f"must name another bot than the candidate (or be left out for the whole field), not {base!r}")
        if not 2 <= entrants <= 6:
            raise _err(src, "stop_when", f"sprt is for 2 to 6 entrants, not {entrants}")
        elo0 = _num(src, "stop.elo0", raw.get("elo0", 0.0), -1000, 1000)
        elo1 = _num(src, "stop.elo1", raw.get("elo1", 50.0), -1000, 1000)
        if elo1 <= elo0:
            raise _err(src, "stop.elo1", f"must be above elo0 ({elo0:g}), not {elo1:g}")
        alpha = _num(src, "stop.alpha", raw.get("alpha", 0.05), 0, 0.5)
        beta = _num(src, "stop.beta", raw.get("beta", 0.05), 0, 0.5)
        return rule, StopPolicy(candidate=cand, baseline=base, elo0=elo0, elo1=elo1, alpha=alpha, beta=beta,
                                confidence=1 - alpha, **common)  # type: ignore[arg-type]
    top = raw.get("top")
    if top is not None:
        top = _int(src, "stop.top", top, 1, entrants)
    conf = raw.get("confidence", 0.95)
    if not isinstance(conf, (int, float)) or isinstance(conf, bool) or not 0.5 < conf < 1:
        raise _err(src, "stop.confidence", f"must be a number between 0.5 and 1 (exclusive), not {conf!r}")
    return rule, StopPolicy(top=top, confidence=float(conf), **common)  # type: ignore[arg-type]


def _limits(src: str, where: str, d: Any, base: Limits) -> Limits:
    """Limits from a mapping: the keys given replace those of `base` (null: no limit)."""
    if not isinstance(d, dict):
        raise _err(src, where, f"must be a mapping ({', '.join(LIMIT_KEYS)})")
    _check_keys(src, f"{where}.", d, set(LIMIT_KEYS))
    vals = {k: None if d[k] is None else _int(src, f"{where}.{k}", d[k], 1) for k in LIMIT_KEYS if k in d}
    return Limits(**{**asdict(base), **vals})


def _bot_sandbox(src: str, where: str, b: Mapping[str, Any], default: str, base: Path) -> Sandbox:
    """A bot's `sandbox`, `mounts` (joined to `base` as written), `build` and
    `build_timeout_s`, validated; its own folder is worked out by `resolve_config`."""
    mode = b.get("sandbox", default)
    if mode not in SANDBOX_MODES:
        raise _err(src, f"{where}.sandbox", f"must be one of {', '.join(SANDBOX_MODES)}, not {mode!r}")
    raw = b.get("mounts") or []
    if not isinstance(raw, list) or not all(isinstance(m, str) and m for m in raw):
        raise _err(src, f"{where}.mounts", f"must be a list of paths (read-only in the sandbox), not {raw!r}")
    build = b.get("build")
    build_argv = None if build is None else tuple(_command(src, f"{where}.build", build))
    timeout = _int(src, f"{where}.build_timeout_s", b.get("build_timeout_s", 300), 1)
    return Sandbox(mode=mode, mounts=tuple(str(base / os.path.expanduser(m)) for m in raw), build=build_argv,
                   build_timeout_s=timeout, outputs=_patterns(src, f"{where}.outputs", b.get("outputs")),
                   ignore=_patterns(src, f"{where}.ignore", b.get("ignore")) or ())


def _patterns(src: str, key: str, value: Any) -> tuple[str, ...] | None:
    """A bot's `outputs:` or `ignore:` (`identity.file_patterns`), None where not given."""
    try:
        return None if value is None else file_patterns(value)
    except PatternError as e:
        raise _err(src, key, str(e)) from None


def with_sandbox(cfg: TournamentConfig, mode: str | None) -> TournamentConfig:
    """`cfg` with every bot's sandbox set to `mode` (the command line's `--sandbox`,
    which overrides the file's settings); `cfg` itself when `mode` is None."""
    from dataclasses import replace

    if mode is None:
        return cfg
    if mode not in SANDBOX_MODES:
        raise ConfigError(f"--sandbox: must be one of {', '.join(SANDBOX_MODES)}, not {mode!r}")
    bots = tuple(replace(b, sandbox=replace(b.sandbox, mode=mode)) for b in cfg.bots)
    return replace(cfg, bots=bots, sandbox=mode)
