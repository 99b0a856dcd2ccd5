"""tournament.json, which says what a results folder holds and how to check it: its
format, its shape, and the chain's genesis and published head it binds."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..report.files import read_json
from .journal import CHAIN_FORMAT, CHAIN_FORMATS, ChainError, JournalState, genesis
from .names import MARKER
from .seeds import SeedState

FORMAT = "p10-results/2"


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
