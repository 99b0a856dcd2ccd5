"""Misbehaving bots: every fault is a result, never the end of a game.

The bots of tests/bots/faulty.py go silent, print garbage, exit in the middle of a hand,
answer late with an old id, play illegal moves, print over-long lines and flood stderr.
For each: the game still ends, each fault is in `GameResult.faults` with its kind and
reason, the other seats play on and place ahead, a forfeited seat is last, and its
process is ended. Time limits are small so that the file runs in seconds; no assertion
depends on the clock beyond limits far above what the good bots need.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import orjson
import pytest

from harness.engine import Rules
from harness.referee import (
    BotProcess, BotSpec, BotStartError, FaultPolicy, GameResult, TimeControl, handshake, play_game,
)
from harness.sandbox.modes import bwrap_available

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "bots"))
from replay_check import check_replay  # noqa: E402

GREEDY = (sys.executable, str(ROOT / "bots" / "python" / "greedy.py"))
RANDOM = (sys.executable, str(ROOT / "bots" / "python" / "random_bot.py"), "5")
FAULTY = (sys.executable, str(ROOT / "tests" / "bots" / "faulty.py"))
RULES = Rules.from_dict({"phases": [1, 2, 3]})  # short games
TC = TimeControl(move_ms=5000, startup_ms=20000)
# For the timeout tests: the good bots answer in a few milliseconds, far inside 600 ms.
FAST = TimeControl(move_ms=600, startup_ms=20000)
POLICY = FaultPolicy(retries=1, max_strikes=5)


def gone(pid: int) -> bool:
    """The process has exited and been reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def play(bots, tc=TC, seed=21, game_id="g-fault", policy=POLICY) -> GameResult:
    names = [b.spec.name for b in bots]
    return play_game(bots, names, RULES, seed=seed, game_id=game_id, time_control=tc, policy=policy, record=True)


def records(res: GameResult) -> list[dict]:
    return [orjson.loads(x) for x in res.replay]


def assert_forfeit(res: GameResult, bad: int, kinds: set[str], bot: BotProcess, pid: int) -> list:
    """The game ended; only `bad` faulted, with `kinds`; it forfeited, is last, and its
    process is gone; the others played on after the forfeit and placed ahead of it."""
    n = len(res.seats)
    assert res.reason in ("finished", "tiebreak", "hand_limit")
    assert res.forfeits == [bad]
    assert res.faults, "no fault was recorded"
    assert {f.seat for f in res.faults} == {bad}
    assert {f.kind for f in res.faults} <= kinds, [f.to_dict() for f in res.faults]
    assert all(f.entrant == res.seats[bad] and f.reason for f in res.faults)
    assert res.places[bad] == n
    assert all(res.places[s] < n for s in range(n) if s != bad)
    assert res.winner is not None and res.winner != bad
    assert not bot.alive and bot.proc is None
    assert gone(pid), f"the forfeited bot's process {pid} is still there"
    recs = records(res)
    note = next(i for i, r in enumerate(recs) if r["type"] == "note" and "forfeits" in r["text"])
    after = recs[note + 1 :]
    assert not any(r["type"] == "msg" and r["seat"] == bad for r in after)
    assert any(r["type"] == "action" and r["seat"] == bad and r["fallback"] for r in after)
    for s in range(n):
        if s != bad:
            assert any(r["type"] == "msg" and r["dir"] == "from" and r["seat"] == s for r in after), \
                f"seat {s} was not asked anything after the forfeit"
    assert recs[-1]["faults"][bad] == len(res.faults)
    assert recs[-1]["places"] == res.places
    check_replay(res.replay)  # re-simulates, and checks what each seat was told
    return recs


def errors_to(recs: list[dict], seat: int) -> list[dict]:
    return [r["msg"] for r in recs if r["type"] == "msg" and r["dir"] == "to" and r["seat"] == seat
            and r["msg"].get("type") == "error"]


def test_silent_bot_times_out_and_forfeits(start):
    bots = [start("good", GREEDY, FAST), start("silent", FAULTY + ("silent",), FAST), start("good2", RANDOM, FAST)]
    pid = bots[1].pid
    res = play(bots, tc=FAST)
    recs = assert_forfeit(res, 1, {"timeout"}, bots[1], pid)
    timeouts = [f for f in res.faults if f.reason.startswith("no reply to request")]
    assert len(timeouts) == POLICY.max_strikes
    assert all("within 600 ms" in f.reason for f in timeouts)
    assert "5 strikes (the limit is 5)" in res.faults[-1].reason
    assert len(res.faults) == POLICY.max_strikes
    errors = errors_to(recs, 1)
    assert [e["strikes"] for e in errors] == [1, 2, 3, 4, 5]
    assert [e["retry"] for e in errors] == [True, False, True, False, False]
    assert all(e["fault"] == "timeout" for e in errors)


def test_a_timeouts_reason_does_not_depend_on_the_games_its_process_played_before(start):
    """Request ids run on across a process's games, so a reason that named the id would
    make a game's record depend on which games the process played before (on the
    parallelism): the same game gives the same faults from a fresh process and from one
    whose ids are far along."""
    reasons = []
    for first_id in (1, 1000):
        bots = [start("good", GREEDY, FAST), start("silent", FAULTY + ("silent",), FAST),
                start("good2", RANDOM, FAST)]
        bots[1].next_id = first_id
        res = play(bots, tc=FAST)
        reasons.append([(f.kind, f.reason) for f in res.faults])
    assert reasons[0] == reasons[1] and reasons[0], reasons
    assert reasons[0][0][1].startswith("no reply to request (")


def test_garbage_is_malformed(start):
    bots = [start("good", GREEDY), start("garbage", FAULTY + ("garbage",)), start("good2", RANDOM)]
    pid = bots[1].pid
    res = play(bots)
    recs = assert_forfeit(res, 1, {"malformed"}, bots[1], pid)
    assert sum(f.reason.startswith("protocol: not JSON") for f in res.faults) == POLICY.max_strikes
    raws = [r for r in recs if r["type"] == "msg" and r["seat"] == 1 and r["dir"] == "from"]
    assert raws and all(r.get("raw") == "this is {not json" and "msg" not in r for r in raws)


@pytest.mark.skipif(not bwrap_available()[0], reason="the sandbox cannot run here")
def test_a_bot_that_fills_its_scratch_forfeits_naming_the_limit(start, tmp_path):
    """A sandboxed bot that tries to write 600 MiB over its root, /dev, /dev/shm and /tmp in
    its turn, with the default scratch_mb of 128: the writes take 128 MiB at most, and the
    watchdog, which sees its scratch full, ends it with a fault naming the scratch limit."""
    bots = [start("good", GREEDY), start("filler", FAULTY + ("scratch_fill", "600")), start("good2", RANDOM)]
    pid = bots[1].pid
    res = play(bots)
    assert_forfeit(res, 1, {"crash", "timeout"}, bots[1], pid)
    assert res.faults[-1].kind == "crash" and "scratch limit of 128 MB reached" in res.faults[-1].reason, \
        [f.to_dict() for f in res.faults]
    wrote = re.search(r"WROTE (\d+)", (tmp_path / "filler.log").read_text())
    assert wrote is not None and int(wrote.group(1)) <= 128 << 20


def test_bot_that_exits_mid_hand_forfeits(start):
    bots = [start("good", GREEDY), start("quitter", FAULTY + ("exit_after", "3")), start("good2", RANDOM)]
    pid = bots[1].pid
    res = play(bots)
    recs = assert_forfeit(res, 1, {"crash"}, bots[1], pid)
    assert len(res.faults) == 1
    assert "quitter" in res.faults[0].reason
    note = next(i for i, r in enumerate(recs) if r["type"] == "note")
    # It died in the first hand: no hand had ended yet.
    assert not any(r["type"] == "msg" and r["msg"].get("type") == "hand_end" for r in recs[:note])
    assert sum(1 for r in recs[:note] if r["type"] == "msg" and r["seat"] == 1 and r["dir"] == "from") == 3


def test_dead_bot_is_started_afresh_for_its_next_game(start):
    bots = [start("good", GREEDY), start("quitter", FAULTY + ("exit_after", "2"))]
    first_pid = bots[1].pid
    res = play(bots, game_id="g-dead1")
    assert res.forfeits == [1] and gone(first_pid)
    handshake(bots[1], "quitter", TC)  # what a tournament does before the bot's next game
    assert bots[1].starts == 2 and bots[1].alive and bots[1].pid != first_pid
    res2 = play(bots, game_id="g-dead2")
    assert res2.forfeits == [1] and res2.places == [1, 2]
    assert bots[0].starts == 1


def test_late_answer_with_an_old_id_is_dropped(start):
    """The first reply comes after move_ms: a timeout strike, then a new request; the late
    reply (to the old id) is dropped and the reply to the new id is taken."""
    bots = [start("good", GREEDY, FAST), start("late", FAULTY + ("late_once", "0.7"), FAST)]
    res = play(bots, tc=FAST)
    assert res.forfeits == []
    assert [(f.seat, f.kind) for f in res.faults] == [(1, "timeout")]
    assert res.stale_replies == 1
    recs = records(res)
    assert any(r["type"] == "note" and r["text"] == "dropped a late reply to request 1 (it arrived while request 2 was open)"
               for r in recs)
    from_late = [r["msg"] for r in recs if r["type"] == "msg" and r["seat"] == 1 and r["dir"] == "from"]
    assert [m["id"] for m in from_late[:2]] == [1, 2]
    # The reply to request 2 was applied: it is not a fallback.
    first_action = next(r for r in recs if r["type"] == "action" and r["seat"] == 1)
    assert first_action["fallback"] is False
    assert res.reason in ("finished", "tiebreak", "hand_limit")
    check_replay(res.replay)


def test_always_late_bot_forfeits(start):
    bots = [start("good", GREEDY, FAST), start("late", FAULTY + ("late_always", "0.7"), FAST), start("good2", RANDOM, FAST)]
    pid = bots[1].pid
    res = play(bots, tc=FAST)
    assert_forfeit(res, 1, {"timeout"}, bots[1], pid)
    assert res.stale_replies >= 1


def test_game_time_budget_used_up_forfeits(start):
    """game_ms: a bot 0.4 s per reply under a 1.5 s game budget forfeits once it is spent."""
    tc = TimeControl(move_ms=5000, game_ms=1500, startup_ms=20000)
    bots = [start("good", GREEDY, tc), start("slow", FAULTY + ("late_always", "0.4"), tc), start("good2", RANDOM, tc)]
    pid = bots[1].pid
    res = play(bots, tc=tc)
    assert_forfeit(res, 1, {"timeout"}, bots[1], pid)
    assert res.faults[-1].reason == "game time of 1500 ms used up"
    assert res.think_s[1] >= 1.5


def test_illegal_moves_are_strikes(start):
    bots = [start("good", GREEDY), start("cheat", FAULTY + ("illegal",)), start("good2", RANDOM)]
    pid = bots[1].pid
    res = play(bots)
    recs = assert_forfeit(res, 1, {"illegal"}, bots[1], pid)
    strikes = res.faults  # the last strike is the forfeit: counted once
    assert len(strikes) == POLICY.max_strikes
    assert "forfeit: 5 strikes (the limit is 5)" in strikes[-1].reason
    for f in strikes:
        assert f.reason.startswith(("R3.2:", "R3.5:", "R3.1:")), f.reason
    assert any("holds 0" in f.reason for f in strikes)  # a discard of a card it does not hold
    errors = errors_to(recs, 1)
    assert [e["fault"] for e in errors] == ["illegal"] * POLICY.max_strikes


def test_illegal_once_then_legal_costs_one_strike(start):
    bots = [start("good", GREEDY), start("oops", FAULTY + ("illegal_once",))]
    res = play(bots)
    assert res.forfeits == []
    assert [(f.seat, f.kind) for f in res.faults] == [(1, "illegal")]
    recs = records(res)
    (error,) = errors_to(recs, 1)
    assert error["retry"] is True and error["strikes"] == 1
    i = next(i for i, r in enumerate(recs) if r["type"] == "msg" and r["msg"].get("type") == "error")
    nxt = next(r for r in recs[i + 1 :] if r["type"] == "msg" and r["seat"] == 1)
    assert nxt["msg"]["type"] == "request" and nxt["msg"]["id"] == error["id"] + 1
    assert nxt["msg"]["decision"] == "play"
    check_replay(res.replay)


def test_a_reply_quoted_in_its_fault_is_cut_short(start):
    """A fault's reason may quote the reply (a 900 KB "draw"): it is kept to
    REASON_CHARS in the fault, the error sent back and the referee's lines of the replay,
    so that one bad reply a game cannot swell the results by megabytes."""
    from harness.referee.referee import REASON_CHARS

    bots = [start("good", GREEDY), start("huge", FAULTY + ("weird", "huge"))]
    res = play(bots)
    assert [(f.seat, f.kind) for f in res.faults] == [(1, "malformed")] and res.forfeits == []
    reason = res.faults[0].reason
    assert len(reason) <= REASON_CHARS and "'draw' must be" in reason and "characters)" in reason, reason
    (error,) = errors_to(records(res), 1)
    assert error["reason"] == reason
    # The replay holds the bot's own line (capped as every bot line is), and no copy of it.
    ours = [r for r in records(res) if r["type"] != "msg" or r["dir"] == "to"]
    assert max(len(orjson.dumps(r)) for r in ours) < 20_000
    check_replay(res.replay)


def test_an_id_that_is_not_an_integer_is_malformed(start):
    """`"id": true` is not the id 1 (JSON has no integer true; the reply schema requires an
    integer): the reply is malformed, not taken as the answer to request 1."""
    bots = [start("good", GREEDY), start("boolid", FAULTY + ("bool_id",))]
    res = play(bots)
    first = next(r for r in records(res) if r["type"] == "msg" and r["seat"] == 1 and r["dir"] == "from")
    assert first["msg"]["id"] is True
    assert [(f.seat, f.kind) for f in res.faults] == [(1, "malformed")]
    assert "'id' must be an integer" in res.faults[0].reason
    assert res.forfeits == [] and res.stale_replies == 0


def test_string_ids_are_malformed_at_once(start):
    """A string id is no late reply to wait out: each is a malformed strike at once."""
    bots = [start("good", GREEDY), start("strid", FAULTY + ("string_id",)), start("good2", RANDOM)]
    pid = bots[1].pid
    res = play(bots)  # 5 s per request if these were waited out as late replies
    assert_forfeit(res, 1, {"malformed"}, bots[1], pid)
    assert sum("'id' must be an integer" in f.reason for f in res.faults) == POLICY.max_strikes
    assert len(res.faults) == POLICY.max_strikes  # the forfeit is the last strike, not one more fault
    assert res.stale_replies == 0


def test_line_over_the_cap_is_malformed(start):
    bots = [start("good", GREEDY), start("long", FAULTY + ("long_line", "5000"), line_cap=300), start("good2", RANDOM)]
    pid = bots[1].pid
    res = play(bots)
    assert_forfeit(res, 1, {"malformed"}, bots[1], pid)
    caps = [f for f in res.faults if f.reason.startswith("protocol: a line of") and "longer than the cap of 300" in f.reason]
    assert len(caps) == POLICY.max_strikes


def test_two_forfeits_tie_for_last(start):
    bots = [start("garbage", FAULTY + ("garbage",)), start("good", GREEDY), start("quitter", FAULTY + ("exit_after", "1"))]
    res = play(bots)
    assert sorted(res.forfeits) == [0, 2]
    assert res.places == [2, 1, 2]
    assert res.winner == 1
    check_replay(res.replay)


def test_stderr_flood_does_not_block_and_its_log_is_capped(start, tmp_path):
    log_cap = 10_000
    bots = [start("good", GREEDY), start("flood", FAULTY + ("stderr_flood", "200000"), log_cap=log_cap)]
    res = play(bots)
    assert res.faults == [] and res.forfeits == []
    assert res.reason in ("finished", "tiebreak", "hand_limit")
    bots[1].stop()
    log = tmp_path / "flood.log"
    size = log.stat().st_size
    assert size <= log_cap + 1024, size
    text = log.read_text()
    after = text.split("\n[p10-tourney] stderr log cap reached; the rest is dropped\n", 1)[1]
    # Past the cap no line of the bot's; the harness's own notes go on (how it ended).
    assert after and all(line.startswith("[p10-tourney] ") for line in after.splitlines()), after
    assert "ended" in after


def assert_readable_log(text: str, notes: int | None = None) -> list[str]:
    """A bot's log as a host reads it: every line is the bot's (after "| ") or the
    harness's (after "[p10-tourney] "); nothing in it acts on a terminal or reorders
    text. Returns the harness's lines."""
    from harness.text import REORDERING

    assert text.endswith("\n")
    lines = text.split("\n")[:-1]
    assert all(ln.startswith(("| ", "[p10-tourney] ")) for ln in lines), [ln for ln in lines
                                                                       if not ln.startswith(("| ", "[p10-tourney] "))]
    bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) < 0xa0 or ord(c) in REORDERING]
    assert not bad, bad
    return [ln for ln in lines if ln.startswith("[p10-tourney] ")]


def test_a_bots_stderr_cannot_forge_the_harness_notes_nor_act_on_a_terminal(start, tmp_path):
    """A bot writes lines made like the harness's notes, terminal escapes (OSC 52 sets a
    clipboard, CSI clears the screen), carriage returns, bidi overrides, C1 controls, bytes
    that are not UTF-8, a character split between two writes, and an unended last line.
    Its log shows every one of them, visibly, on lines of the bot's; the harness's notes
    are the only lines that start as notes."""
    bot = start("forger", FAULTY + ("stderr_forge",))
    res = play([bot, start("good", GREEDY)])
    assert res.faults == []
    bot.stop()
    bot.close_log()
    data = (tmp_path / "forger.log").read_bytes()
    notes = assert_readable_log(data.decode("utf-8"))  # (strict: all of it is UTF-8)
    assert [n.split(":")[0] for n in notes] == ["[p10-tourney] started", "[p10-tourney] ended (exit code 0)"], notes
    text = data.decode()
    for shown in ("| [p10-tourney] watchdog: memory limit reached (forged)\n",
                  "| \\x1b]52;c;Zm9yZ2Vk\\x07\\x1b[2J\\x1b[31mred\\x0d[p10-tourney] ended (exit code 0)\n",
                  "| \\u202eevil\\u2066 \\x9b31m C1 \\u2028[p10-tourney] after a line separator\n",
                  "| bad utf-8 \\xff\\xfe \\xc3( \\x85[p10-tourney] after NEL\n",
                  "| split \\u202e done\\x00\\x08\\x08\\x08\\x7f\n",
                  "| [p10-tourney] unended[p10-tourney] watchdog"):  # (the next piece carries on its line)
        assert shown in text, (shown, text[:3000])
    assert text.count("| [p10-tourney] unended\n[p10-tourney] ended") == 1  # a note starts a line of its own


def test_play_stderr_show_prints_a_bots_stderr_safely(tmp_path):
    """`play --stderr show` prints a bot's stderr to the host's terminal: made printable
    as in its log, every line after the bot's name, and a line of the bot's never left
    open for the harness's own to carry on."""
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "harness.cli", "play", "--bot", f"forger={' '.join(FAULTY)} stderr_forge",
                           "--bot", f"good={' '.join(GREEDY)}", "--rules", '{"phases": [1]}', "--stderr", "show", "-q"],
                          capture_output=True, timeout=180, stdin=subprocess.DEVNULL, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    err = proc.stderr.decode("utf-8")
    lines = err.split("\n")
    assert err.endswith("\n") and all(ln.startswith("  [forger] ") for ln in lines[:-1]), err[:3000]
    assert "\x1b" not in err and "\r" not in err and "\u202e" not in err and "\x85" not in err
    assert "  [forger] \\x1b]52;c;Zm9yZ2Vk\\x07" in err and "  [forger] split \\u202e done" in err


# ----- the handshake -----------------------------------------------------------------


def handshake_error(tmp_path, argv, tc=TC) -> tuple[str, BotProcess]:
    bot = BotProcess(BotSpec("broken", tuple(argv), cwd=str(ROOT)), log_path=tmp_path / "broken.log")
    try:
        with pytest.raises(BotStartError) as info:
            handshake(bot, "broken", tc)
        return str(info.value), bot
    finally:
        bot.stop()
        bot.close_log()


def test_handshake_wrong_reply(tmp_path):
    text, bot = handshake_error(tmp_path, FAULTY + ("bad_hello",))
    assert text.startswith("bot 'broken' failed the handshake:")
    assert '"type": "hello"' in text and "greeting" in text
    assert not bot.alive


def test_handshake_exit_names_the_stderr(tmp_path):
    text, _ = handshake_error(tmp_path, FAULTY + ("no_hello",))
    assert "failed the handshake" in text
    assert "giving up before the handshake" in text  # the bot's last stderr line


def test_handshake_silent_times_out(tmp_path):
    code = "import sys, time\nfor line in sys.stdin: time.sleep(60)"
    pids = []

    class Spy(BotProcess):
        def start(self) -> None:
            super().start()
            pids.append(self.pid)

    bot = Spy(BotSpec("sleepy", (sys.executable, "-c", code)))
    try:
        with pytest.raises(BotStartError, match="did not answer hello in time"):
            handshake(bot, "sleepy", TimeControl(move_ms=100, startup_ms=300))
        assert pids and gone(pids[0])
    finally:
        bot.stop()


def test_handshake_garbage(tmp_path):
    code = "import sys\nsys.stdin.readline()\nprint('HELLO THERE', flush=True)"
    text, _ = handshake_error(tmp_path, (sys.executable, "-c", code))
    assert "failed the handshake" in text and "not JSON" in text


def test_command_not_found(tmp_path):
    text, _ = handshake_error(tmp_path, ("/nonexistent/bot-binary", "--x"))
    assert "command not found" in text and "/nonexistent/bot-binary" in text


def test_bot_gone_when_game_end_is_sent_is_no_fault_of_that_game(start):
    """The result is final before game_end goes out: a bot whose pipe is closed by then
    (it died on the last hand_end, say) must not get a fault appended to a result whose
    places, forfeits and game_end fault counts were already fixed without it."""
    from harness.referee.process import BotDied

    class GoneAtGameEnd(BotProcess):
        def send(self, data: bytes) -> None:
            if b'"type":"game_end"' in data:
                raise BotDied(f"bot {self.spec.name!r} closed its stdin (exit code 1)")
            super().send(data)

    good = start("good", GREEDY)
    gone_bot = GoneAtGameEnd(BotSpec("gone", GREEDY, cwd=str(ROOT)))
    try:
        handshake(gone_bot, "gone", TC)
        res = play([good, gone_bot])
        assert res.reason in ("finished", "tiebreak", "hand_limit")
        assert res.faults == [] and res.forfeits == []
        recs = records(res)
        assert recs[-1]["faults"] == [0, 0]
        assert res.to_record()["faults"] == []
    finally:
        gone_bot.stop()


def test_a_stray_line_is_named_with_the_message_it_came_after(start):
    """A bot that prints a debug line on stdout when a hand ends: the line is read while the
    next request is open, and the fault says what it came after (the hand_end)."""
    debug = (sys.executable, str(ROOT / "tests" / "checker_bots" / "debug_on_hand_end.py"))
    bots = [start("good", GREEDY, TC), start("debug", debug, TC)]
    res = play(bots)
    stray = [f for f in res.faults if f.seat == 1 and "debug: hand" in f.reason]
    assert stray and stray[0].kind == "malformed"
    assert re.search(r"'debug: hand 1 over'; it came after hand_end and the \w+ request then open ", stray[0].reason), stray[0].reason
