"""The seed and the chain of a results folder: secret seeds with commit and reveal, and
tournament.json, which says what the folder holds and how to check it.

A tournament file without `seed:` (or with `seed: secret`) draws a 128-bit seed from the
operating system (`secrets`) at its first start. The seed is kept in `seed.secret` in the
results folder (mode 0600) and only its commitment, `sha256(decimal seed)`, is published:
in tournament.json from before the first game, in the leaderboard files and on the site.
The seed itself is published once the tournament has finished; anyone can then check
that it hashes to the commitment, and that every game's seed follows from it
(`p10-tourney verify`), so the deals were fixed before play. An explicit seed is
published from the start and the results say the deals were predictable.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..report.files import read_json, write_whole
from .journal import CHAIN_FORMAT, CHAIN_FORMATS, ChainError, JournalState, genesis

MARKER = "tournament.json"
SECRET = "seed.secret"
#: The key that hides the values of the bots' `env:` in the entrants' fingerprints
#: (tournament.json), kept beside the seed and never published.
ENV_KEY = "env.secret"
FORMAT = "p10-results/2"
SEED_BITS = 128


CONCEAL = ((SECRET, None), (MARKER, "p10-results/"))
"""What marks a results folder for a bot's sandbox to mask (`Sandbox.conceal`): a secret
seed, or a tournament.json of p10-tourney's."""


class SeedError(ValueError):
    """A secret seed that is missing, unreadable, or does not match its commitment."""


def commitment(seed: int) -> str:
    """The published commitment to `seed`: SHA-256 (hex) of its decimal digits."""
    return hashlib.sha256(str(seed).encode()).hexdigest()


def draw_seed() -> int:
    """A fresh secret seed from the operating system's randomness."""
    return secrets.randbits(SEED_BITS)


def write_secret(out: Path, seed: int) -> None:
    """Keep `seed` in `out`/seed.secret, readable by its owner only (mode 0600)."""
    write_whole(out / SECRET, f"{seed}\n", mode=0o600, sync=True)


def env_key(out: Path) -> bytes:
    """The key of `out`/env.secret, drawn and kept (mode 0600) at its first use."""
    path = out / ENV_KEY
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        text = ""
    except OSError as e:
        raise SeedError(f"{path}: cannot read the key that hides the bots' env values: {e.strerror or e}") from None
    if len(text) == 64 and all(c in "0123456789abcdef" for c in text):
        return bytes.fromhex(text)
    if text:
        raise SeedError(f"{path}: not a key of 64 hex digits; remove it to draw a new one (the entrants "
                        "that have env: values are then taken for new versions)")
    key = secrets.token_bytes(32)
    write_whole(out / ENV_KEY, key.hex() + "\n", mode=0o600, sync=True)
    return key


def read_secret(out: Path, sha256: str) -> int:
    """The secret seed kept in `out`, checked against its commitment `sha256`."""
    path = out / SECRET
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        raise SeedError(f"{path}: missing: the secret seed of this tournament is lost, so it cannot be "
                        "continued; use --fresh to start again") from None
    except OSError as e:
        raise SeedError(f"{path}: cannot read the secret seed: {e.strerror or e}") from None
    if not text.isdigit() or commitment(int(text)) != sha256:
        raise SeedError(f"{path}: does not hold the seed whose SHA-256 tournament.json publishes ({sha256[:16]}…); "
                        "use --fresh to start again")
    return int(text)


@dataclass(frozen=True)
class SeedState:
    """A tournament's seed as the results hold it: `secret` (drawn, kept in seed.secret)
    or fixed (in the tournament file), its commitment, and the seed when it is public
    (fixed, or secret and the tournament finished)."""

    secret: bool
    sha256: str
    revealed: int | None

    def to_json(self) -> dict[str, Any]:
        """The fields of tournament.json and leaderboard.json that describe the seed."""
        return {"seed": self.revealed, "seed_mode": "secret" if self.secret else "fixed", "seed_sha256": self.sha256}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "SeedState":
        """Read back `to_json` (raises ValueError if the fields are missing or wrong)."""
        mode, sha, seed = d.get("seed_mode"), d.get("seed_sha256"), d.get("seed")
        if mode not in ("secret", "fixed") or not isinstance(sha, str) or len(sha) != 64:
            raise ValueError("no seed_mode and seed_sha256")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError(f"seed {seed!r} is not an integer")
        return cls(mode == "secret", sha, seed)


def read_marker(out: Path) -> dict[str, Any]:
    """tournament.json of results folder `out`, checked for this format (ValueError)."""
    path = out / MARKER
    try:
        meta = read_json(path)
    except FileNotFoundError:
        raise ValueError(f"{out}: no {MARKER} (not a p10-tourney results folder)") from None
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else "?"
        raise ValueError(f"{out}: written by another version of p10-tourney (format {got!r}, this one reads "
                         f"{FORMAT!r})")
    if not isinstance(meta.get("config_sha256"), str):
        raise ValueError(f"{path}: no config_sha256")
    SeedState.from_json(meta)
    why = marker_shape(meta)
    if why:
        raise ValueError(f"{path}: {why}")
    return meta


def _names(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(e, str) for e in v)


def marker_shape(meta: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of tournament.json's state beyond its seed (None: it is
    the shape the runner writes), so that no reader trips over a value of another type."""
    games = meta.get("games")
    if games is not None and (not isinstance(games, int) or isinstance(games, bool) or games < 0):
        return f"'games' is {games!r}, not a count of games"
    if meta.get("chain", "p10-chain/1") not in CHAIN_FORMATS:
        return f"its chain format {str(meta.get('chain'))[:40]!r} is not one this version reads ({', '.join(CHAIN_FORMATS)})"
    if meta.get("chain") == CHAIN_FORMAT and not isinstance(meta.get("chain_settings_sha256"), str):
        return "'chain_settings_sha256' is not a string"
    for key in ("journal_head", "results_sha256", "chain_config_sha256"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            return f"{key!r} is not a string"
    entrants = meta.get("entrants")
    if entrants is not None and not (isinstance(entrants, dict)
                                     and all(isinstance(v, str) for v in entrants.values())):
        return "'entrants' is not an object of names and fingerprints"
    if meta.get("retired") is not None and not _names(meta["retired"]):
        return "'retired' is not a list of names"
    fields = meta.get("fields")
    if fields is not None:
        if not isinstance(fields, list):
            return "'fields' is not a list"
        for f in fields:
            if not (isinstance(f, dict) and isinstance(f.get("start"), int) and not isinstance(f["start"], bool)
                    and f["start"] >= 0 and _names(f.get("entrants"))
                    and (f.get("challengers") is None or _names(f["challengers"]))):
                return f"'fields' holds {str(f)[:80]!r}, not a field (start, entrants, challengers)"
    box = meta.get("sandbox")
    if box is not None:
        bots = box.get("bots") if isinstance(box, dict) else None
        if not isinstance(box, dict) or not (bots is None or (isinstance(bots, dict) and all(
                isinstance(v, str) for v in bots.values()))) or not isinstance(box.get("mode", ""), str) \
                or not isinstance(box.get("note", ""), str):
            return "'sandbox' is not a record of how the bots were contained (a mode, a note, a mode for each bot)"
    return None


def marker_genesis(meta: Mapping[str, Any]) -> str:
    """The chain's genesis for a tournament.json: from the config the first game was
    played with (`chain_config_sha256` once the field changed; the chain goes on through
    every field) and, from format `p10-chain/2`, its settings, which no run may change."""
    settings = str(meta.get("chain_settings_sha256")) if meta.get("chain") == CHAIN_FORMAT else None
    return genesis(str(meta.get("chain_config_sha256") or meta["config_sha256"]), str(meta["seed_sha256"]), settings)


def check_published(meta: Mapping[str, Any], journal: JournalState, path: Path) -> None:
    """Raise `ChainError` unless the journal read from `path` continues the one whose
    results were last published: its link after line `games` of tournament.json is that
    file's `journal_head`. (A journal rewritten with its chain recomputed fails here,
    unless tournament.json was rewritten too.)"""
    games, head = meta.get("games"), meta.get("journal_head")
    n = journal.lines
    if not isinstance(games, int) or games < 0:
        raise ChainError(f"{path.parent / MARKER}: no count of published games")
    if games > n:
        raise ChainError(f"{path}: line {n + 1} is missing: the file ends after line {n}, but {games} games were "
                         "published: lines were removed after the results were published")
    if head != (journal.link_after(games) if games else marker_genesis(meta)):
        raise ChainError(f"{path}: line {games} is not the line the published results end with "
                         f"(tournament.json's journal_head): the journal was rewritten")
