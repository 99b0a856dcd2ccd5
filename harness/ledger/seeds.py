"""A tournament's seed, secret with commit and reveal or fixed, and the key that hides
the values of the bots' `env:` in the entrants' fingerprints.

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
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..report.files import write_whole
from .names import SECRET
#: The key that hides the values of the bots' `env:` in the entrants' fingerprints
#: (tournament.json), kept beside the seed and never published.
ENV_KEY = "env.secret"
SEED_BITS = 128


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
