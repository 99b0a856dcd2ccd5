"""Typed records: what one game leaves in games.jsonl (`GameRecord`, its `FaultRecord`s
with their `FaultKind`), what a worker returns for it (`PlayedGame`), and the early-stopping
decision after a round (`StopDecision`). They stay plain dicts (JSON as it is written and
read back); the types say which keys they hold."""

from __future__ import annotations

from enum import Enum
from typing import Any, Mapping, TypedDict

NOT_PLAYED = "not_played"
"""A game's `reason` when it was not played: fewer than two of its entrants were left in
(the others disqualified). Its places and scores are placeholders; no rating, no
standing and no statistic counts it (`played`)."""


class FaultKind(str, Enum):
    """The kind of a fault (protocol/LIMITS.md): what went wrong with a bot in a game."""

    TIMEOUT = "timeout"  # no reply within the time limit
    MALFORMED = "malformed"  # a line that is not a reply of the protocol
    ILLEGAL = "illegal"  # a reply that breaks a rule of the game
    CRASH = "crash"  # the process died, closed its output, or broke a limit
    STARTUP = "startup"  # it did not start, or failed the handshake

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


FAULT_KINDS: tuple[str, ...] = tuple(k.value for k in FaultKind)


class FaultRecord(TypedDict):
    """One fault of a game as recorded."""

    seat: int
    entrant: str
    kind: str  # a FaultKind's value
    reason: str


class _GameCore(TypedDict):
    game: str
    seed: int
    seats: list[str]
    places: list[int]
    scores: list[int]
    phases: list[int]
    winner: int | None
    hands: int
    stalled_hands: int
    reason: str | None  # how the game ended (the engine's end reason), or NOT_PLAYED
    faults: list[FaultRecord]
    forfeits: list[int]
    duration_s: float


class GameRecord(_GameCore, total=False):
    """A game's line in games.jsonl: the referee's result, the tournament's fields (`id`,
    `group`), the entrants left out of it (`disqualified`) and the failed builds that did
    it (`build_failed`), where its replay is kept (`replay`, `replay_sha256`), the hash
    chain's link (`chain`), and what each seat's discards gave the others (`passes`)."""

    id: int
    group: int
    disqualified: list[str]
    build_failed: list[dict[str, Any]]
    replay: str | None
    replay_sha256: str
    chain: str
    passes: list[list[int]]  # [seat, other seat, offered, taken, wilds, skips] (`referee.passes`)


class PlayedGame(TypedDict, total=False):
    """What a worker returns for one game: its record, its replay's lines if it may be
    kept, the bot processes it has started so far (by entrant), the entrants that failed
    to start, and the worker's name."""

    record: GameRecord
    replay: list[bytes] | None
    starts: dict[str, int]
    startup_failures: list[str]
    worker: str


class StopDecision(TypedDict, total=False):
    """The early-stopping decision after a round (`tournament.stop_rule.stop_check`)."""

    rule: str  # "settled" | "sprt"
    games: int
    budget: int
    round: int
    rounds: int
    reason: str  # "settled" | "accepted" | "rejected" | "budget" | "playing"
    stop: bool
    note: str
    top: int | None
    confidence: float
    candidate: str
    baseline: str | None
    sprt: dict[str, Any]


def played(rec: Mapping[str, Any]) -> bool:
    """Whether the game of record `rec` was played (not `NOT_PLAYED`): the one test every
    reader of the games uses."""
    return rec.get("reason") != NOT_PLAYED


class BoardRow(TypedDict, total=False):
    """One entrant's row of the board (leaderboard.json's `entrants`)."""

    rank: int
    entrant: str
    games: int
    wins: int
    win_rate: float
    mean_place: float
    mean_score: float
    mean_phases: float
    place_counts: list[int]
    mu: float
    sigma: float
    conservative: float
    pl_strength: float | None
    ci_low: float | None
    ci_high: float | None
    next: str | None
    settled_above: bool | None
    faults: int
    fault_kinds: dict[str, int]
    first_fault: dict[str, Any]
    disqualified: bool
    retired: bool
    team: str
    version: str


class Board(TypedDict, total=False):
    """The board of a tournament's games, as leaderboard.json holds it (`board.make_board`,
    which `verify` recomputes)."""

    name: str
    games: int
    entrants: list[BoardRow]
    head_to_head: Any
    history: Any
    statistics: dict[str, Any]
    stopping: StopDecision | None
    disqualified: list[dict[str, Any]]
    retired: list[str]
    trusted: list[str]
    sandbox: dict[str, Any]
    seed: int | None
    seed_mode: str
    seed_sha256: str
    results_sha256: str
    collusion: list[dict[str, Any]]
    collusion_pairs: int
    teams: Any
