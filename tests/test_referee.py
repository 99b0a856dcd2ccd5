"""The referee end to end, with real bot processes over p10/1 pipes.

Every test starts real child processes (the bundled Python bots, the JavaScript bot when
node is installed, and the helper bots of tests/bots/), completes the handshake and plays
whole games with `play_game`. Bots are always stopped by the fixture's finalizer.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest

from harness.engine import Deck, Rules
from harness.referee import GameResult, TimeControl, play_game

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "bots"))
from replay_check import check_replay  # noqa: E402

GREEDY = (sys.executable, str(ROOT / "bots" / "python" / "greedy.py"))
FAULTY = (sys.executable, str(ROOT / "tests" / "bots" / "faulty.py"))
JS_GREEDY = ("node", str(ROOT / "bots" / "js" / "greedy.js"))
# Generous: these bots answer in milliseconds; nothing here is about time.
TC = TimeControl(move_ms=5000, startup_ms=20000)


def random_bot(seed: int) -> tuple[str, ...]:
    return (sys.executable, str(ROOT / "bots" / "python" / "random_bot.py"), str(seed))


def check_places(res: GameResult) -> None:
    """Places follow R9.4 from the phases and scores: the winner first, more phases ahead,
    then the lower score; equal keys share a place; forfeits last."""
    n = len(res.seats)
    assert len(res.places) == len(res.scores) == len(res.phases) == n
    assert all(1 <= p <= n for p in res.places)
    forfeits = set(res.forfeits)

    def key(s: int) -> tuple:
        if s in forfeits:
            return (2, 0, 0)
        if s == res.winner and res.reason in ("finished", "tiebreak"):
            return (0, 0, 0)
        return (1, -res.phases[s], res.scores[s])

    keys = [key(s) for s in range(n)]
    assert res.places == [1 + sum(k < keys[s] for k in keys) for s in range(n)]
    assert min(res.places) == 1
    if res.winner is not None:
        assert res.places[res.winner] == 1


def assert_clean(res: GameResult, n: int) -> None:
    assert res.reason in ("finished", "tiebreak", "hand_limit"), res.reason
    assert res.faults == [], [f.to_dict() for f in res.faults]
    assert res.forfeits == []
    assert res.stale_replies == 0
    assert res.hands >= 1 and res.decisions > 0
    assert len(res.seats) == n
    check_places(res)


def test_greedy_vs_random_python(start):
    bots = [start("greedy", GREEDY), start("random", random_bot(7))]
    res = play_game(bots, ["greedy", "random"], Rules(), seed=11, game_id="g-gr", time_control=TC)
    assert_clean(res, 2)
    assert res.seats == ["greedy", "random"]
    assert all(t > 0 for t in res.think_s)
    assert all(b.alive for b in bots)
    record = res.to_record()
    assert record["faults"] == [] and record["forfeits"] == [] and record["places"] == res.places


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the JavaScript bot cannot run")
def test_python_vs_javascript(start):
    bots = [start("py-greedy", GREEDY), start("js-greedy", JS_GREEDY)]
    assert bots[1].hello.get("name") == "js-greedy"
    for seed in (1, 2):
        res = play_game(bots, ["py-greedy", "js-greedy"], Rules(), seed=seed, game_id=f"g-js{seed}", time_control=TC)
        assert_clean(res, 2)
    assert bots[1].starts == 1


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_every_table_size(start, n):
    argvs = [GREEDY if s % 2 == 0 else random_bot(s) for s in range(n)]
    names = [f"s{s}" for s in range(n)]
    bots = [start(name, argv) for name, argv in zip(names, argvs)]
    res = play_game(bots, names, Rules(), seed=100 + n, game_id=f"g-n{n}", time_control=TC, record=True)
    assert_clean(res, n)
    summary = check_replay(res.replay)
    # Every seat was asked to decide.
    assert all(summary["checked"][s] > 0 for s in range(n))


def test_options_false_leaves_options_out(start):
    bots = [start("plain", FAULTY + ("no_options",)), start("helped", GREEDY)]
    assert bots[0].wants_options is False and bots[1].wants_options is True
    res = play_game(bots, ["plain", "helped"], Rules(), seed=8, game_id="g-opt", time_control=TC, record=True)
    assert_clean(res, 2)
    plays = [(r["seat"], r["msg"]) for r in map(orjson.loads, res.replay)
             if r["type"] == "msg" and r["dir"] == "to" and r["msg"].get("decision") == "play"]
    assert plays and all(("options" in m) == (seat == 1) for seat, m in plays)


def test_one_process_plays_several_games(start):
    bots = [start("a", GREEDY), start("b", random_bot(3)), start("c", GREEDY)]
    pids = [b.pid for b in bots]
    results = []
    for g in range(3):
        res = play_game(bots, ["a", "b", "c"], Rules(), seed=500 + g, game_id=f"g-many{g}", time_control=TC)
        assert_clean(res, 3)
        results.append(res)
    assert [b.starts for b in bots] == [1, 1, 1]
    assert [b.pid for b in bots] == pids
    assert all(b.alive for b in bots)
    assert len({r.game for r in results}) == 3


def test_stacked_deal_with_a_known_outcome(start):
    """Seat 0 is dealt two sets of five 1s and 2s, lays phase 1 with its whole hand on its
    first turn and goes out; seat 1 never plays and scores its dealt hand (R8.2)."""
    seat1 = ["Y3", "Y5", "Y7", "B4", "B6", "B8", "G10", "G11", "S", "W"]  # 6×5 + 2×10 + 15 + 25
    deck = Deck.from_dict({"deals": [{
        "hands": [["R1", "B1", "G1", "Y1", "R1", "R2", "B2", "G2", "Y2", "B2"], seat1],
        "discard": "Y9",
        "draw": ["R12"],
    }]})
    rules = Rules.from_dict({"phases": [1], "first_to": 1, "first_dealer": 1})  # seat 0 moves first
    bots = [start("greedy", GREEDY), start("random", random_bot(1))]
    res = play_game(bots, ["greedy", "random"], rules, seed=5, game_id="g-stacked", deck=deck,
                    time_control=TC, record=True)
    assert res.faults == [] and res.forfeits == []
    assert res.winner == 0
    assert res.places == [1, 2]
    assert res.phases == [1, 0]
    assert res.scores == [0, 90]
    assert res.hands == 1 and res.reason == "finished"
    assert res.decisions == 2  # one draw and one play, both seat 0's
    recs = [orjson.loads(x) for x in res.replay]
    actions = [r for r in recs if r["type"] == "action"]
    assert [a["seat"] for a in actions] == [0, 0]
    assert actions[0]["action"] == {"draw": "deck"}
    play = actions[1]["action"]
    assert sorted(map(sorted, play["lay"])) == [sorted(["R1", "B1", "G1", "Y1", "R1"]), sorted(["R2", "B2", "G2", "Y2", "B2"])]
    assert play["discard"] == "R12"
    hand_end = [r["msg"] for r in recs if r["type"] == "msg" and r["msg"].get("type") == "hand_end"]
    assert len(hand_end) == 2  # one per seat
    assert hand_end[0]["hands"] == [[], seat1]
    assert hand_end[0]["points"] == [0, 90] and hand_end[0]["winner"] == 0 and hand_end[0]["completed"] == [0]
    # The seat that never moved was never asked anything.
    assert not any(r["type"] == "msg" and r["seat"] == 1 and r["msg"].get("type") == "request" for r in recs)
    check_replay(res.replay)


def test_replay_holds_every_message_both_ways(start, tmp_path):
    """Bots that log every line they read and write: the replay's messages per seat are
    exactly those lines, in order (the handshake is not part of a game's replay)."""
    logs = [tmp_path / f"tee{s}.jsonl" for s in range(3)]
    names = ["t0", "t1", "t2"]
    # No sandbox: these bots write their log where this test reads it, and a sandboxed bot
    # may write nothing outside its private scratch (that is tested in test_sandbox*.py).
    bots = [start(name, FAULTY + ("tee", str(log)), sandbox="none") for name, log in zip(names, logs)]
    res = play_game(bots, names, Rules(), seed=77, game_id="g-tee", time_control=TC, record=True)
    assert_clean(res, 3)
    for bot in bots:
        bot.stop()  # the bot reads to the end of its input and exits: its log is complete
    recs = [orjson.loads(x) for x in res.replay]
    assert recs[0]["type"] == "header" and recs[-1]["type"] == "result"
    kinds = Counter(r["type"] for r in recs)
    assert not any("raw" in r for r in recs if r["type"] == "msg")  # every line was JSON
    assert set(kinds) <= {"header", "msg", "action", "result", "note"}
    requests = 0
    for s, log in enumerate(logs):
        wire = [json.loads(line) for line in log.read_text().splitlines()]
        wire = [(w["dir"], orjson.loads(w["line"])) for w in wire]
        assert wire[0][1]["type"] == "hello" and wire[1][1]["type"] == "hello"
        wire = wire[2:]
        replayed = [(r["dir"], r["msg"]) for r in recs if r["type"] == "msg" and r["seat"] == s]
        assert replayed == wire
        types = [m.get("type") for d, m in replayed if d == "to"]
        assert types[0] == "game_start" and types[-1] == "game_end"
        assert types.count("hand_end") == res.hands
        reqs = [m for d, m in replayed if d == "to" and m.get("type") == "request"]
        replies = [m for d, m in replayed if d == "from"]
        assert [m["id"] for m in reqs] == [m["id"] for m in replies]
        requests += len(reqs)
    assert requests == res.decisions
    # One action per applied decision, none of them a fallback.
    assert kinds["action"] == res.decisions
    assert all(not r["fallback"] for r in recs if r["type"] == "action")


@pytest.mark.parametrize(
    "n, seed",
    [(3, 1), (3, 2), (4, 3), (4, 4)],
)
def test_no_message_reveals_a_hidden_card(start, n, seed):
    """Re-simulate whole recorded games with the engine: every request's state is the
    seat's own view and its cards are its real hand; no message to a seat carries a card
    hidden from it (hand_end, public per R11.1, excepted)."""
    argvs = [GREEDY, random_bot(seed), GREEDY, random_bot(seed + 10)][:n]
    names = [f"p{s}" for s in range(n)]
    bots = [start(name, argv) for name, argv in zip(names, argvs)]
    res = play_game(bots, names, Rules(), seed=seed * 1009, game_id=f"g-leak{seed}", time_control=TC, record=True)
    assert_clean(res, n)
    summary = check_replay(res.replay)
    assert summary["actions"] == res.decisions
    total_to = sum(summary["checked"].values())
    assert total_to >= res.decisions + n * (res.hands + 2)  # requests + hand_ends + start/end


def test_leak_checker_catches_a_leak(start):
    """The checker itself: replays doctored to show a seat a hidden card fail it."""
    from replay_check import LeakError

    from harness.engine import Game

    bots = [start("a", GREEDY), start("b", GREEDY), start("c", random_bot(2))]
    res = play_game(bots, ["a", "b", "c"], Rules(), seed=9, game_id="g-doctor", time_control=TC, record=True)
    check_replay(res.replay)
    recs = [orjson.loads(x) for x in res.replay]
    header = recs[0]
    g = Game(Rules.from_dict(header["rules"]), 3, header["seed"], None, game_id=header["game"])
    g.start()
    mover = g.current  # the first request of the game goes to this seat
    other = (mover + 1) % 3
    dealt = [c.text for c in g.players[other].hand]
    first = next(i for i, r in enumerate(recs) if r["type"] == "msg" and r["msg"].get("type") == "request")
    assert recs[first]["seat"] == mover

    def doctored(change) -> list[bytes]:
        copy = [orjson.loads(orjson.dumps(r)) for r in recs]
        change(copy[first]["msg"])
        return [orjson.dumps(r) for r in copy]

    with pytest.raises(LeakError, match=f"seat {other}'s hidden hand"):
        check_replay(doctored(lambda m: m.__setitem__("peek", {"hand": dealt})))
    with pytest.raises(LeakError, match="not the seat's hand"):
        check_replay(doctored(lambda m: m["state"]["cards"].append(dealt[0])))
    with pytest.raises(LeakError, match="names its card"):
        check_replay(doctored(lambda m: m["events"].append({"e": "draw", "seat": other, "from": "deck", "card": "R1"})))


def test_bot_logs_hold_its_stderr(start, tmp_path):
    bot = start("noisy", FAULTY + ("stderr_flood", "100"))
    quiet = start("quiet", GREEDY)
    res = play_game([bot, quiet], ["noisy", "quiet"], Rules.from_dict({"phases": [1], "first_to": 1}),
                    seed=3, game_id="g-log", time_control=TC)
    assert res.faults == []
    bot.stop()
    text = (tmp_path / "noisy.log").read_text()
    assert "started:" in text and "y" * 100 in text and "ended (exit code" in text
    assert os.path.getsize(tmp_path / "noisy.log") > 100
