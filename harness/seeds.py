"""Seeds derived from a tournament's seed: one derivation for every use (the deals, the
tables, seat orders, league rounds, the bootstrap)."""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed from the tournament seed and labels (stable across runs and machines)."""
    text = ":".join([str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1
