"""`verify`'s check of the kept replays: each is played again through the engine and must
end as its game is recorded, and the games that keep one are those the rule (`keep`)
keeps."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..engine import IllegalMove
from ..engine.replay import replay_game
from ..referee.passes import PassCounter
from ..ledger.keep import FirstFaults, at_fault, keeps
from ..report.files import read_regular
from .config import TournamentConfig
from .schedule import game_id
from .verify_read import Verification


def check_replays(v: Verification, results: Path, cfg: TournamentConfig,
                   games: Iterable[Mapping[str, Any]], firsts: FirstFaults, sampled: set[int] | None) -> None:
    """Play every kept replay again through the engine; its end must be the game's record.
    The games that keep one are those the rule keeps (`keep`): `firsts` counts every
    game's faults; `sampled`, the games the schedule samples, where the seed is known
    (without it, which clean games `replays: sample` keeps is not known here). `games`:
    the records, in any order; a failure is reported for the lowest game index that
    fails."""
    if (results / "replays").is_symlink():
        v.add("replays", False, "replays/ is a link: a results folder's replays are its own files")
        return
    rules = cfg.rules.to_dict()
    checked = 0
    failed: tuple[int, str] | None = None
    named = bytearray()  # by game index: a record names replays/g<index>.jsonl (a bit each, not a set)
    far: set[int] = set()  # indexes past _NAMED_BITS (a forged record's): memory as their count, not their size
    for r in games:
        rel = r.get("replay")
        if not rel:
            continue
        k = _replay_index(str(rel))
        if k is not None and k >= _NAMED_BITS:
            far.add(k)
        elif k is not None:
            if k // 8 >= len(named):
                named.extend(bytes(k // 8 + 1 - len(named)))
            named[k // 8] |= 1 << (k % 8)
        why = not_kept(cfg.replays, r, firsts, sampled)
        if why and cfg.replays == "sample" and r.get("faults"):
            why = None  # versions whose `sample` kept every game with a fault kept it: it shows that game only
        if why:
            if failed is None or r["id"] < failed[0]:
                failed = (r["id"], f"{rel} (game {r.get('game')}): {why}")
            continue
        why = _replay_differs(results / str(rel), r, rules)
        if why:
            if failed is None or r["id"] < failed[0]:
                failed = (r["id"], f"{rel} (game {r.get('game')}): {why}")
            continue
        checked += 1

    def is_named(k: int | None) -> bool:
        if k is None or k >= _NAMED_BITS:
            return k in far
        return k // 8 < len(named) and bool(named[k // 8] >> (k % 8) & 1)

    if cfg.replays != "none":  # every entrant's first games with a fault keep theirs under any other
        for who, first in firsts.first.items():
            gone = [i for i in first if not is_named(i)]
            if gone and (failed is None or gone[0] < failed[0]):
                failed = (gone[0], f"game {game_id(gone[0])} names no replay, but it is one of the first {firsts.k} "
                                   f"games with a fault of {who[:40]!r}, whose replays replays: {cfg.replays} keeps")
    unnamed = sorted(f"replays/{p.name}" for p in (results / "replays").glob("*.jsonl")
                     if not is_named(_replay_index(f"replays/{p.name}"))) if (results / "replays").is_dir() else []
    if failed is not None:
        v.add("replays", False, failed[1])
    elif unnamed:
        v.add("replays", False, f"{unnamed[0]} is named by no game's record"
              + (f" (and {len(unnamed) - 1} more)" if len(unnamed) > 1 else "") + ": it is not this tournament's")
    elif checked:
        v.add("replays", True, f"{checked} replays played again through the engine: every game ends as recorded")
    else:
        v.add("replays", None, "no replays kept (replays: none, or no game failed with replays: failed)")


def _replay_differs(path: Path, r: Mapping[str, Any], rules: Mapping[str, Any]) -> str | None:
    """Why the replay at `path` is not that of game record `r` (None: it is)."""
    from ..report.site import MAX_REPLAY_FILE, read_replay  # the one reader of replay files

    try:
        # Read once (what is hashed is what is played again), as a plain file of a
        # bounded size; one that is not what its record hashed is played again only
        # when it is small, to say where it differs.
        data = read_regular(path, MAX_REPLAY_FILE)
        want = r.get("replay_sha256")  # in records since replays are hashed (not in older results)
        changed = want is not None and hashlib.sha256(data).hexdigest() != want
        why = None
        if not changed or len(data) <= _EXPLAIN_BYTES:
            header, actions, result = read_replay(path, data)
            why = _replay_mismatch(header, actions, result, r, rules)
        if why is None and changed:
            why = ("its bytes are not those its game's record hashed (replay_sha256): it was changed"
                   + ("" if len(data) > _EXPLAIN_BYTES else ", though it ends as recorded"))
    except (OSError, ValueError, KeyError, TypeError, IllegalMove, RecursionError) as e:
        why = f"cannot be played again: {e}"
    return why


def not_kept(mode: str, rec: Mapping[str, Any], firsts: FirstFaults, sampled: set[int] | None) -> str | None:
    """Why the rule (`keep.keeps`) keeps no replay of game record `rec` (None: it may)."""
    i = rec["id"]
    faulted = at_fault(rec)
    first = firsts.among(i, faulted)
    if keeps(mode, True if sampled is None else i in sampled, bool(faulted), first):
        return None
    if mode == "sample" and faulted:
        return (f"replays: sample keeps the replays of an entrant's first {firsts.k} games with a fault of its own, "
                f"and this is a later one of each entrant at fault ({', '.join(e[:40] for e in faulted[:3])}), "
                "nor one of the first games the schedule samples")
    return f"replays: {mode} keeps no replay of a game " + ("with" if faulted else "without") + " a fault" + (
        " that the schedule does not sample" if mode == "sample" else "")


_EXPLAIN_BYTES = 4 << 20
"""A replay whose hash is not its record's is played again to say why only up to this size
(a genuine one is some tens of kB)."""

_NAMED_BITS = 1 << 27
"""Game indexes below which `check_replays` keeps a bit each (16 MiB at most)."""


def _replay_index(rel: str) -> int | None:
    """The game index of a replay's name as the runner writes it (replays/ and the game's
    `game_id`, "replays/g000012.jsonl": 12), or None for another name."""
    stem = rel[len("replays/"):-len(".jsonl")] if rel.startswith("replays/") and rel.endswith(".jsonl") else ""
    digits = stem[1:]
    k = int(digits) if digits.isascii() and digits.isdigit() else None
    return k if k is not None and game_id(k) == stem else None


def _replay_mismatch(header: Mapping[str, Any], actions: list[dict[str, Any]], result: Mapping[str, Any] | None,
                     rec: Mapping[str, Any], rules: Mapping[str, Any]) -> str | None:
    """Why the replay does not end as `rec` says (None: it does)."""
    names = [p["name"] for p in header["players"]]
    if (header.get("game"), header.get("seed"), names) != (rec["game"], rec["seed"], rec["seats"]):
        return "its header is not this game's (id, seed or seats)"
    if header.get("rules") != rules or header.get("deck"):
        return "its header has other rules, or stacked deals, than the tournament's"
    passes = PassCounter(len(names))
    game = replay_game(header, actions, passes.extend)
    if game.decision is not None:
        return "the recorded actions stop before the game ends"
    places = game.places(rec["forfeits"])
    firsts = [s for s, p in enumerate(places) if p == 1]
    got: dict[str, Any] = {"places": places, "scores": [p.score for p in game.players], "phases": [p.completed for p in game.players],
           "winner": firsts[0] if len(firsts) == 1 else None, "hands": game.hand_no,
           "stalled_hands": game.stalled_hands, "reason": game.end_reason}
    if "passes" in rec:  # (records written before passes were recorded have none)
        got["passes"] = passes.to_record()
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

