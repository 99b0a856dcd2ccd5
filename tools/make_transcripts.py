#!/usr/bin/env python3
"""Regenerate the golden transcripts of protocol/transcripts/, or check a bot against them.

    python tools/make_transcripts.py [--out DIR]         # write the transcripts
    python tools/make_transcripts.py --check -- CMD ...  # feed them to a bot and check its replies

Each transcript is a short, real exchange: the bundled Python bots play over the real
referee (`handshake`, `play_game`) with stacked deals, every line that crosses one seat's
pipes is kept, and the exchange is trimmed to the situation it shows. A transcript file
is JSON lines, one message per line, seen from that one seat:

    {"dir": "to", "msg": {...}}     referee -> bot
    {"dir": "from", "msg": {...}}   bot -> referee

Every card of a kept turn is stacked (hands, up-card and the named top of the draw pile),
so the files depend on the rules and the bots, not on a shuffle; nothing timed is kept,
so running this twice gives the same files.

`--check` starts the bot command, sends it the "to" lines of every transcript in order
(with a fresh process per transcript), and checks that it answers each request, and only
requests, with a reply that has the request's id, passes the reply's JSON Schema and is
plausible for the state it was shown (cards it holds, a discard unless it lays down its
whole hand, a Skip naming a seat). Replies need not equal the transcript's.
"""

from __future__ import annotations

import argparse
import json
import select
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.engine import Deck, Rules  # noqa: E402
from harness.referee import BotProcess, BotSpec, TimeControl, encode, handshake, play_game  # noqa: E402

OUT = ROOT / "protocol" / "transcripts"
SCHEMAS = ROOT / "protocol" / "schemas"
GREEDY = (sys.executable, str(ROOT / "bots" / "python" / "greedy.py"))
TC = TimeControl(move_ms=1000, game_ms=None, startup_ms=20000)

# A bot that plays the greedy strategy but discards a card it does not hold in its first
# play reply, so that the referee answers with an error and asks again.
ONE_MISTAKE = """
import sys, json
from harness.players import GreedyStrategy
from harness.sdk import StrategyBot, run

class OneMistake(StrategyBot):
    mistakes = 1
    def on_request(self, msg):
        if msg["decision"] == "play" and self.mistakes:
            self.mistakes -= 1
            held = set(msg["state"]["cards"])
            return {"discard": next(c for c in ("R12", "B12", "G12", "Y12", "R11") if c not in held)}
        return super().on_request(msg)

run(OneMistake(GreedyStrategy(), name="one-mistake"))
"""
ONE_MISTAKE_BOT = (sys.executable, "-c", ONE_MISTAKE)


class WireBot(BotProcess):
    """A bot process that keeps every line it is sent and every line it answers."""

    def __init__(self, spec: BotSpec) -> None:
        super().__init__(spec)
        self.wire: list[tuple[str, dict[str, Any]]] = []

    def send(self, data: bytes) -> None:
        self.wire.append(("to", json.loads(data)))
        super().send(data)

    def read_line(self, deadline: float) -> bytes:
        line = super().read_line(deadline)
        if line.strip():
            self.wire.append(("from", json.loads(line)))
        return line


# ----- the situations ------------------------------------------------------------------

NO_LAY_0 = ["R1", "B3", "G5", "Y7", "R9", "B11", "G2", "Y4", "R6", "B8"]
NO_LAY_1 = ["G1", "Y3", "R5", "B7", "G9", "Y11", "R2", "B4", "G6", "Y8"]
LAYS_0 = ["R3", "B3", "G3", "R8", "B8", "Y8", "G1", "Y5", "B10", "R12"]
NO_3_8_1 = ["G1", "Y2", "R4", "B5", "G6", "Y7", "R9", "B10", "G11", "Y12"]
NO_1_2 = ["G3", "Y3", "R5", "B7", "G9", "Y11", "R4", "B4", "G6", "Y8"]
HIGH = ["G12", "Y12", "R12", "B12", "G10", "Y10", "R10", "B11", "G11", "Y11"]


def _deal(hands: list[list[str]], discard: str, draw: list[str]) -> Deck:
    return Deck.from_dict({"deals": [{"hands": hands, "discard": discard, "draw": draw}]})


def _play(seat0: tuple[str, ...], seat1: tuple[str, ...], deck: Deck | None, rules: Rules,
          seed: int = 1, game_id: str = "g-transcript") -> list[tuple[str, dict[str, Any]]]:
    """Play one game (seat 0 moves first) and return seat 0's wire, a bye included."""
    bots = [WireBot(BotSpec("you", seat0, cwd=str(ROOT))), WireBot(BotSpec("them", seat1, cwd=str(ROOT)))]
    try:
        for bot in bots:
            handshake(bot, bot.spec.name, TC)
        result = play_game(bots, ["you", "them"], rules, seed, game_id, deck=deck, time_control=TC)
        if result.forfeits:
            raise SystemExit(f"{game_id}: a seat forfeited: {[f.to_dict() for f in result.faults]}")
        bots[0].send(encode({"type": "bye"}))
        return bots[0].wire
    finally:
        for bot in bots:
            bot.stop()


def _rules(**kw: Any) -> Rules:
    return Rules.from_dict({"first_dealer": 1, **kw})  # seat 0 moves first


def _head(wire: list) -> list:
    """hello, the hello reply and game_start."""
    assert [m.get("type") for _, m in wire[:3]] == ["hello", "hello", "game_start"], wire[:3]
    return wire[:3]


def _turns(wire: list) -> list[list]:
    """Seat 0's turns: from each draw request up to (not including) the next draw request,
    hand_end or game_end."""
    turns: list[list] = []
    cur: list | None = None
    for d, m in wire:
        kind = m.get("type")
        if d == "to" and kind == "request" and m["decision"] == "draw":
            cur = []
            turns.append(cur)
        elif d == "to" and kind in ("hand_end", "game_end", "bye", "game_start"):
            cur = None
        if cur is not None:
            cur.append((d, m))
    return turns


def _bye(wire: list) -> list:
    assert wire[-1] == ("to", {"type": "bye"}), wire[-1]
    return [wire[-1]]


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise SystemExit(f"make_transcripts: the game did not show {what}; the bots or the engine changed")


def handshake_only() -> list:
    bot = WireBot(BotSpec("you", GREEDY, cwd=str(ROOT)))
    try:
        handshake(bot, "you", TC)
        bot.send(encode({"type": "bye"}))
        return bot.wire
    finally:
        bot.stop()


def draw_and_discard() -> list:
    """Plain turns: take the up-card (it pairs) and discard, ..., draw from the deck and discard."""
    deck = _deal([NO_LAY_0, NO_LAY_1], "Y7", HIGH)
    wire = _play(GREEDY, GREEDY, deck, _rules(), game_id="g-draw")
    turns = _turns(wire)
    draws = [t[1][1]["draw"] for t in turns]
    _need(draws[0] == "discard" and "deck" in draws, f"a discard draw, later a deck draw (got {draws})")
    kept = turns[: draws.index("deck") + 1]
    _need(len(kept) <= 4 and all(set(t[3][1]) == {"id", "discard"} for t in kept), "plain discards")
    return _head(wire) + [x for t in kept for x in t] + _bye(wire)


def lay_phase() -> list:
    """Lay phase 1 (two sets of 3) from the offered lay, discard; the next request shows it."""
    deck = _deal([LAYS_0, NO_LAY_1], "Y9", ["G4"] + HIGH)
    wire = _play(GREEDY, GREEDY, deck, _rules(), game_id="g-lay")
    turns = _turns(wire)
    play_req, reply = turns[0][2][1], turns[0][3][1]
    _need(play_req["options"]["lay"] is not None and "lay" in reply, "a lay")
    return _head(wire) + turns[0] + turns[1][:2] + _bye(wire)


def hit() -> list:
    """Seat 0 laid on its first turn; on a later one it draws a 3 or an 8 and hits it."""
    deck = _deal([LAYS_0, NO_3_8_1], "Y9", ["G4", "Y3", "G8", "Y3"] + HIGH[:6])
    wire = _play(GREEDY, GREEDY, deck, _rules(), game_id="g-hit")
    turns = _turns(wire)
    hits = [i for i, t in enumerate(turns[:4]) if "hits" in t[3][1]]
    _need(bool(hits), "a hit in the first turns")
    turn = turns[hits[0]]
    _need(turn[2][1]["state"]["laid"] and turn[2][1]["options"]["hits"] != [], "offered hits")
    return _head(wire) + turn + _bye(wire)


def skip() -> list:
    """Seat 0 discards a Skip naming seat 1; seat 1 loses its turn and seat 0 draws again,
    with a Skip on the discard pile that it may not take."""
    deck = _deal([NO_LAY_0[:9] + ["S"], NO_LAY_1], "G12", HIGH)
    wire = _play(GREEDY, GREEDY, deck, _rules(), game_id="g-skip")
    turns = _turns(wire)
    reply = turns[0][3][1]
    _need(reply.get("discard") == "S" and reply.get("skip") == 1, "a Skip discard naming seat 1")
    nxt = turns[1][0][1]
    _need({"e": "skipped", "seat": 1} in nxt["events"] and not nxt["state"]["can_take_discard"], "the skipped turn")
    return _head(wire) + turns[0] + turns[1] + _bye(wire)


def error_and_retry() -> list:
    """A bot discards a card it does not hold: an error (fault "illegal", retry true) and a
    new request with a new id, answered legally."""
    deck = _deal([NO_LAY_0, NO_LAY_1], "G12", HIGH)
    wire = _play(ONE_MISTAKE_BOT, GREEDY, deck, _rules(), game_id="g-error")
    turns = _turns(wire)
    kinds = [m.get("type", "reply") for _, m in turns[0]]
    _need(kinds == ["request", "reply", "request", "reply", "error", "request", "reply"], f"error and retry ({kinds})")
    _need(turns[0][4][1]["retry"] is True and turns[0][4][1]["fault"] == "illegal", "an illegal move with a retry")
    return _head(wire) + turns[0] + _bye(wire)


def go_out_and_hand_end() -> list:
    """Lay phase 1 with ten cards, discard the eleventh and go out; hand_end, then game_end
    (a one-phase game)."""
    seat0 = ["R1", "B1", "G1", "Y1", "R1", "R2", "B2", "G2", "Y2", "B2"]
    deck = _deal([seat0, NO_1_2], "Y9", ["R12"] + HIGH)
    wire = _play(GREEDY, GREEDY, deck, _rules(phases=[1], first_to=1), game_id="g-out")
    kinds = [m.get("type", "reply") for _, m in wire]
    _need(kinds == ["hello", "hello", "game_start", "request", "reply", "request", "reply", "hand_end",
                    "game_end", "bye"], f"going out at once ({kinds})")
    _need(sum(map(len, wire[6][1]["lay"])) == 10 and wire[7][1]["winner"] == 0, "going out")
    return wire


SITUATIONS: dict[str, Callable[[], list]] = {
    "handshake": handshake_only,
    "draw_and_discard": draw_and_discard,
    "lay_phase": lay_phase,
    "hit": hit,
    "skip": skip,
    "error_and_retry": error_and_retry,
    "go_out_and_hand_end": go_out_and_hand_end,
}


def render(wire: list) -> str:
    return "".join(json.dumps({"dir": d, "msg": m}, ensure_ascii=False) + "\n" for d, m in wire)


def write(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, make in SITUATIONS.items():
        path = out / f"{name}.jsonl"
        path.write_text(render(make()), encoding="utf-8")
        paths.append(path)
    return paths


# ----- checking a bot against the transcripts ---------------------------------------------


def _validator(name: str):
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8")))


def plausible(request: dict[str, Any], reply: dict[str, Any]) -> list[str]:
    """What is wrong with `reply` for `request`, judged from the request's state alone."""
    state = request["state"]
    problems: list[str] = []
    if request["decision"] == "draw":
        if reply.get("draw") == "discard" and not state["can_take_discard"]:
            problems.append("draws from the discard pile when can_take_discard is false (R3.2)")
        return problems
    hand = Counter(state["cards"])
    used = Counter(c for meld in reply.get("lay") or [] for c in meld)
    used.update(h["card"] for h in reply.get("hits") or [])
    if reply.get("discard") is not None:
        used[reply["discard"]] += 1
    for card, k in used.items():
        if hand[card] < k:
            problems.append(f"uses {k} x {card} but holds {hand[card]}")
    if reply.get("discard") is None and sum(used.values()) < sum(hand.values()):
        problems.append("no discard though cards are left in hand (R3.5)")
    if reply.get("lay") and state["laid"]:
        problems.append("lays a phase already laid this hand (R3.3)")
    if reply.get("hits") and not (state["laid"] or reply.get("lay")):
        problems.append("hits before the phase is on the table (R7.2)")
    if reply.get("discard") == "S":
        free = [p["seat"] for p in state["players"] if p["seat"] != state["seat"] and not p["skip_pending"]]
        if reply.get("skip") not in free and not (reply.get("skip") is None and not free):
            problems.append(f"a Skip naming {reply.get('skip')!r}; seats {free} may be named (R6)")
    return problems


def check(cmd: list[str], directory: Path, move_s: float = 5.0) -> int:
    """Feed every transcript to a fresh `cmd` process; print problems; return their count."""
    bad = 0
    validators = {k: _validator(f"from_bot.{k}") for k in ("hello", "draw", "play")}
    for path in sorted(directory.glob("*.jsonl")):
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
        problems: list[str] = []
        try:
            for item in lines:
                if item["dir"] != "to":
                    continue
                msg = item["msg"]
                proc.stdin.write((json.dumps(msg) + "\n").encode())  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
                kind = msg["type"]
                if kind not in ("hello", "request"):
                    continue
                ready, _, _ = select.select([proc.stdout], [], [], move_s)
                line = proc.stdout.readline() if ready else b""  # type: ignore[union-attr]
                if not line:
                    problems.append(f"no answer to {kind} {msg.get('id', '')}")
                    break
                reply = json.loads(line)
                which = "hello" if kind == "hello" else msg["decision"]
                problems += [f"{which} reply: {e.message}" for e in validators[which].iter_errors(reply)]
                if kind == "request":
                    if reply.get("id") != msg["id"]:
                        problems.append(f"reply id {reply.get('id')!r} for request {msg['id']}")
                    problems += [f"request {msg['id']}: {p}" for p in plausible(msg, reply)]
        except (BrokenPipeError, json.JSONDecodeError) as e:
            problems.append(f"{type(e).__name__}: {e}")
        finally:
            try:
                proc.stdin.close()  # type: ignore[union-attr]
            except BrokenPipeError:
                pass
            deadline = time.monotonic() + 2
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        print(f"{path.name}: {'ok' if not problems else 'PROBLEMS'}")
        for p in problems:
            print(f"  {p}")
        bad += len(problems)
    return bad


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = None
    if "--check" in argv:  # everything after --check (and an optional --) is the bot command
        i = argv.index("--check")
        argv, cmd = argv[:i], argv[i + 1 :]
        cmd = cmd[1:] if cmd[:1] == ["--"] else cmd
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        usage="%(prog)s [--out DIR] [--check [--] CMD ...]",
        epilog="--check [--] CMD ...: instead of writing, feed the transcripts in --out to this bot command "
               "and check its replies; it must come last",
    )
    ap.add_argument("--out", type=Path, default=OUT, help="the transcripts' folder (default: %(default)s)")
    args = ap.parse_args(argv)
    if cmd is not None:
        if not cmd:
            ap.error("--check needs a bot command, e.g. --check -- python3 bots/python/greedy.py")
        return 1 if check(cmd, args.out) else 0
    for path in write(args.out):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
