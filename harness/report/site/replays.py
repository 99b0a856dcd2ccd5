"""Replays for the site: the replay files games.jsonl names, read and re-simulated by the
engine into compact frames, written as site/replays/<game>.js for the viewer."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..files import read_regular, write_whole
from .data import SiteData, game_name
from .values import script_json

log = logging.getLogger(__name__)

MAX_REPLAYS = 50
"""Replays embedded in the viewer at most (the first ones, in game order)."""

MAX_REPLAY_BYTES = 25_000_000
"""Replay data embedded at most, in bytes (the viewer stops taking replays past it)."""

MAX_REPLAY_FILE = 64 << 20
"""Bytes of one replay file at most, as the site and `verify` read it."""

_REPLAY_NAME = re.compile(r"replays/[A-Za-z0-9_.-]+\.jsonl")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class Replay:
    """One replay file to show, and the record of its game (None for a lone file)."""

    game: str
    path: Path
    record: dict[str, Any] | None


def collect_replays(data: SiteData) -> list[Replay]:
    """The replay files games.jsonl names, in game order (a file in replays/ that no record
    names is not shown: `verify` vouches for none such)."""
    found: list[Replay] = []
    seen: set[str] = set()
    if (data.results_dir / "replays").is_symlink():  # another folder's replays (deal seeds and all)
        data.warnings.append("No replay is shown: replays/ is a link (a results folder's replays are its own files).")
        return found
    for g in data.replay_records:
        rel = g.get("replay")
        if not rel:
            continue
        if not _REPLAY_NAME.fullmatch(str(rel)):
            data.warnings.append(f"The replay of {game_name(g)} is not shown: {str(rel)[:80]!r} is no file of replays/.")
            continue
        path = data.results_dir / str(rel)  # not resolved: a link is refused when it is read
        if str(rel) in seen:
            continue
        if path.is_file() or path.is_symlink():
            seen.add(str(rel))
            found.append(Replay(game_name(g), path, g))
        else:
            data.warnings.append(f"The replay of {game_name(g)} ({rel}) is missing.")
    return found


def read_replay(path: Path, data: bytes | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """(header, action lines, result line or None) of a replay file (JSON lines), or of
    `data`, its bytes already read (named `path` in errors)."""
    header: dict[str, Any] | None = None
    actions: list[dict[str, Any]] = []
    result: dict[str, Any] | None = None
    pending: dict[Any, list[dict[str, Any]]] = {}  # faults by seat, until that seat's next action
    # Lines end at \n only: a replay written before bot lines were escaped may hold a raw
    # \r (JSON whitespace), which universal newlines would take for the end of a line.
    if data is None:
        data = Path(path).read_bytes()
    for n, line in enumerate(data.decode("utf-8").split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        try:
            item = json.loads(line)
        except ValueError as e:
            raise ValueError(f"{path}: line {n} is not JSON ({e})") from None
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "header" and header is None:
            header = item
        elif kind == "action":
            if item.get("seat") in pending:
                item["faults"] = pending.pop(item.get("seat"))
            actions.append(item)
        elif kind == "fault":
            pending.setdefault(item.get("seat"), []).append(item)
        elif kind == "result":
            result = item
    if header is None:
        raise ValueError(f"{path}: no header line (is this a p10 replay file?)")
    if actions and pending:  # faults after the last move (a bot that died at the end)
        actions[-1]["faults"] = [*actions[-1].get("faults", []), *(f for fs in pending.values() for f in fs)]
    return header, actions, result


def fault_text(fault: Mapping[str, Any], name: str) -> str:
    """One fault of a replay as a line: who, the kind, the strike, the reason."""
    strike = fault.get("strike")
    return (f"fault: {name} {fault.get('kind')}" + (f" (strike {strike})" if strike else "")
            + f": {fault.get('reason', '')}")


def frame_faults(frames: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every fault of a replay's `frames` at the frame of the move it led to: seat, kind,
    reason, strike, the frame's index, hand and turn, and the move played instead (where the
    referee played it for the bot)."""
    out = []
    for i, f in enumerate(frames):
        for fault in f.get("faults") or []:
            seat = fault.get("seat")
            out.append({"seat": seat, "kind": fault.get("kind"), "reason": str(fault.get("reason", ""))[:300],
                        "strike": fault.get("strike"), "frame": i, "hand": f.get("hand"), "turn": f.get("turn"),
                        "instead": str(f.get("text") or "") if f.get("fallback") else None})
    return out


def replay_frames(path: Path, data: bytes | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """(header, frames, result) of a replay file (or of `data`, its bytes already read),
    frames made by the engine."""
    from harness.engine.replay import frames as make_frames  # the engine re-simulates the game

    header, actions, result = read_replay(path, data)
    return header, list(make_frames(header, actions)), result


def _cards(cards: Iterable[Any] | None) -> str:
    return " ".join(str(c) for c in cards or [])


def meld_label(m: Mapping[str, Any]) -> str:
    kind = m.get("kind")
    cards = [str(c) for c in m.get("cards") or []]
    if kind == "set":
        num = m.get("number")
        return f"set of {num}s" if num is not None else "set"
    if kind == "run":
        low, high = m.get("low"), m.get("high")
        if low is None or high is None:
            nums = [int(c[1:]) for c in cards if len(c) > 1 and c[1:].isdigit()]
            if nums:
                low, high = min(nums), max(nums)
        return f"run {low}–{high}" if low is not None else "run"
    if kind in ("color", "colour"):
        col = m.get("color") or m.get("colour")
        return f"{col} colour" if col else "colour"
    return str(kind or "meld")


def _player_row(p: Mapping[str, Any]) -> list[Any]:
    return [p.get("phase"), bool(p.get("laid")), p.get("cards"), p.get("score"), bool(p.get("skip_pending"))]


def _compact_frames(frames: Sequence[Mapping[str, Any]], keep_discard: int = 12) -> list[dict[str, Any]]:
    """Frames with what did not change since the previous frame left out.

    Keys: h hand, t turn, s seat, x text; and only when changed: H hands (one string per
    seat, null = unchanged), P players ([phase, laid, cards, score, skip] per seat, null =
    unchanged), d draw size, D [discard size, top cards], T table melds [id, owner, label,
    cards].
    """
    out: list[dict[str, Any]] = []
    prev_hands: list[str] | None = None
    prev_players: list[list[Any]] | None = None
    prev: dict[str, Any] = {}
    for f in frames:
        c: dict[str, Any] = {"h": f.get("hand"), "t": f.get("turn"), "s": f.get("seat"), "x": str(f.get("text") or "")}
        hands = [_cards(h) for h in f.get("hands") or []]
        if prev_hands is None or len(hands) != len(prev_hands):
            c["H"] = hands
        elif hands != prev_hands:
            c["H"] = [h if h != p else None for h, p in zip(hands, prev_hands)]
        prev_hands = hands
        players = [_player_row(p) for p in f.get("players") or [] if isinstance(p, Mapping)]
        if prev_players is None or len(players) != len(prev_players):
            c["P"] = players
        elif players != prev_players:
            c["P"] = [p if p != q else None for p, q in zip(players, prev_players)]
        prev_players = players
        discard = [str(x) for x in f.get("discard") or []]
        values = {
            "d": f.get("draw_size"),
            "D": [len(discard), " ".join(discard[-keep_discard:])],
            "T": [
                [m.get("id"), m.get("owner"), meld_label(m), _cards(m.get("cards"))]
                for m in f.get("table") or [] if isinstance(m, Mapping)
            ],
        }
        for key, val in values.items():
            if key not in prev or prev[key] != val:
                c[key] = val
            prev[key] = val
        out.append(c)
    return out


def hand_ends(frames: Sequence[Mapping[str, Any]], result: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Scores and phases at the end of each hand."""
    first: dict[Any, int] = {}
    last: dict[Any, int] = {}
    order: list[Any] = []
    for i, f in enumerate(frames):
        h = f.get("hand")
        if h not in first:
            first[h] = i
            order.append(h)
        last[h] = i
    ends: list[dict[str, Any]] = []
    before: list[Any] | None = None
    for k, h in enumerate(order):
        end_info = next(
            (frames[i]["hand_end"] for i in range(first[h], last[h] + 1)
             if isinstance(frames[i].get("hand_end"), Mapping)),
            None,
        )
        after = frames[first[order[k + 1]]] if k + 1 < len(order) else frames[last[h]]
        players = [p for p in after.get("players") or [] if isinstance(p, Mapping)]
        scores = [p.get("score") for p in players]
        phases = [p.get("phase") for p in players]
        if k + 1 == len(order) and result and isinstance(result.get("scores"), list):
            scores = list(result["scores"])
        laid = [bool(p.get("laid")) for p in frames[last[h]].get("players") or [] if isinstance(p, Mapping)]
        if end_info is not None:  # the engine's own account of the hand's end
            if isinstance(end_info.get("scores"), list):
                scores = list(end_info["scores"])
            if isinstance(end_info.get("phases"), list):
                phases = list(end_info["phases"])
            if isinstance(end_info.get("completed"), list):
                laid = [s in end_info["completed"] for s in range(len(scores))]
        base = before or [0] * len(scores)
        points = [
            (s - b) if isinstance(s, (int, float)) and isinstance(b, (int, float)) else None
            for s, b in zip(scores, base)
        ]
        if end_info is not None and isinstance(end_info.get("points"), list):
            points = list(end_info["points"])
        ends.append({"hand": h, "start": first[h], "end": last[h], "scores": scores,
                     "points": points, "phases": phases, "laid": laid,
                     "stalled": bool(end_info.get("stalled")) if end_info else False,
                     "winner": end_info.get("winner") if end_info else None})
        before = scores
    return ends


_MADE: dict[str, dict[str, Any]] = {}
"""The viewer's form (`_viewer_form`) of replays made ahead (`prepare`), by the SHA-256 of
their file's bytes: at most `MAX_REPLAYS` of them, the first a run keeps."""


def _viewer_form(path: Path, data: bytes) -> dict[str, Any]:
    """What the viewer shows of a replay file's bytes, made by the engine (a function of
    the bytes alone): its header, result, faults at their frames, hands' ends and frames."""
    header, frames, result = replay_frames(path, data)
    if not frames:
        raise ValueError("the replay holds no frames")
    return {"header": header, "result": result, "faults": frame_faults(frames),
            "hand_ends": hand_ends(frames, result), "frames": _compact_frames(frames)}


def prepare(path: Path, data: bytes, sha256: str) -> None:
    """Make the viewer's form of a replay file just written (`data`, its SHA-256), while the
    run's main process would otherwise wait for its workers, so that the site built at the
    end need not: for the first `MAX_REPLAYS` replays only (those the viewer shows first). A
    replay that cannot be read is left to the site, which says so."""
    if len(_MADE) >= MAX_REPLAYS or sha256 in _MADE:
        return
    try:
        _MADE[sha256] = _viewer_form(path, data)
    except Exception:  # noqa: BLE001  reported by the site's own reading of the file
        pass


def replay_payload(rep: Replay) -> dict[str, Any]:
    data = read_regular(rep.path, MAX_REPLAY_FILE)
    made = _MADE.get(hashlib.sha256(data).hexdigest()) or _viewer_form(rep.path, data)
    header, result = made["header"], made["result"]
    players = header.get("players") or []
    names = [str(p.get("name", f"seat {i}")) if isinstance(p, Mapping) else str(p) for i, p in enumerate(players)]
    if not names and rep.record:
        names = [str(s) for s in rep.record.get("seats") or []]
    rules = header.get("rules") if isinstance(header.get("rules"), Mapping) else {}
    return {
        "game": rep.game,
        "seed": None if header.get("seed") is None else str(header.get("seed")),  # 64-bit: keep exact
        "players": names,
        "rules": rules_summary(rules),
        "result": {k: result.get(k) for k in ("places", "scores", "phases_completed", "winner")} if result else None,
        # at their frames; from the game's record (without a turn) for a replay older than fault lines
        "faults": made["faults"] or [
            {"seat": f.get("seat"), "kind": f.get("kind"), "reason": str(f.get("reason", ""))[:300]}
            for f in (rep.record or {}).get("faults") or [] if isinstance(f, Mapping)
        ],
        "hand_ends": made["hand_ends"],
        "frames": made["frames"],
    }


def rules_summary(rules: Mapping[str, Any] | None) -> str:
    if not rules:
        return ""
    parts = [str(rules.get("variant", "standard"))]
    phases = rules.get("phases")
    if isinstance(phases, list):
        nums = [p.get("number", "?") if isinstance(p, Mapping) else p for p in phases]
        parts.append("phases " + _ranges(nums))
    if rules.get("first_to"):
        parts.append(f"first to {rules['first_to']} phases")
    return " · ".join(parts)


def _ranges(nums: Sequence[Any]) -> str:
    """1, 2, 3, 4, 7 → "1–4, 7"."""
    out: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while (j + 1 < len(nums) and isinstance(nums[j], int) and isinstance(nums[j + 1], int)
               and nums[j + 1] == nums[j] + 1):
            j += 1
        out.append(f"{nums[i]}–{nums[j]}" if j - i >= 2 else ", ".join(str(n) for n in nums[i:j + 1]))
        i = j + 1
    return ", ".join(out)


def write_replays(data: SiteData, site: Path, max_replays: int) -> list[dict[str, Any]]:
    """Write site/replays/<game>.js for the first `max_replays` replays; the viewer's index."""
    out_dir = site / "replays"
    if out_dir.is_symlink():
        out_dir.unlink()  # the link, never what it leads to
    elif out_dir.exists():
        shutil.rmtree(out_dir)
    found = collect_replays(data)
    if not found:
        return []
    try:
        import harness.engine.replay  # noqa: F401
    except ImportError as e:
        data.warnings.append(f"Replays are not shown: the engine's replay module could not be loaded ({e}).")
        return []
    out_dir.mkdir(parents=True)
    index: list[dict[str, Any]] = []
    used: set[str] = set()
    failed = 0
    written = 0
    for rep in found:
        if len(index) >= max_replays or written >= MAX_REPLAY_BYTES:
            break
        try:
            payload = replay_payload(rep)
        except Exception as e:  # a bad replay must not stop the site
            failed += 1
            log.warning("replay %s skipped: %s", rep.path, e)
            data.warnings.append(f"The replay of {rep.game} could not be read: {type(e).__name__}: {e}")
            continue
        stem = _SAFE_NAME.sub("_", rep.game)[:80] or "game"
        fname, n = stem, 1
        while fname.lower() in used:
            n += 1
            fname = f"{stem}-{n}"
        used.add(fname.lower())
        script = (
            "window.P10_REPLAYS=window.P10_REPLAYS||{};\n"
            f"window.P10_REPLAYS[{script_json(rep.game)}]={script_json(payload)};\n"
        )
        write_whole(out_dir / f"{fname}.js", script)
        written += len(script)
        rec = rep.record or {}
        index.append({
            "game": rep.game,
            "file": f"replays/{fname}.js",
            "players": payload["players"],
            "places": (payload["result"] or {}).get("places") or rec.get("places"),
            "faults": [f.get("kind") for f in rec.get("faults") or [] if isinstance(f, Mapping)],
            "hands": len(payload["hand_ends"]),
        })
    not_embedded = len(found) - len(index) - failed
    if not_embedded > 0:
        data.warnings.append(
            f"{len(index)} replays are in the viewer; {not_embedded} more in {data.results_dir.name}/replays/ "
            f"are not (the viewer holds at most {max_replays}, and {MAX_REPLAY_BYTES // 1_000_000} MB). "
            "Print any replay in a terminal with: p10-tourney replay FILE"
        )
    return index
