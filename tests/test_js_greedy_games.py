"""bots/js/greedy.js plays 200 refereed games, every one of them with tie-break hands, and
makes no fault.

The games are check-bot's tie-break scenario (a stacked first hand in which seats 0 and 1
tie, so that the hands after it are tie-break hands between them, with seat 2 left out),
each from its own seed so that the tie-break hands after the stacked ones differ. Seat 1
holds a Skip in the first tie-break hand, and the seat after it is the one left out. The
referee runs in this process; the three seats are real `node` processes, each playing
every game.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.checker.scenarios import TIE_BREAK
from harness.referee import BotProcess, BotSpec, FaultPolicy, TimeControl, encode, handshake, play_game

NODE = shutil.which("node")
ROOT = Path(__file__).resolve().parent.parent
GAMES = 200


@pytest.mark.skipif(NODE is None, reason="node (Node.js) is not on PATH; the JavaScript bot needs it to run")
def test_js_greedy_plays_200_games_with_tie_break_hands_without_a_fault() -> None:
    tc = TimeControl(move_ms=10000, startup_ms=30000)  # generous: the machine may be busy
    bots = [BotProcess(BotSpec(f"js{i}", ("node", str(ROOT / "bots" / "js" / "greedy.js")))) for i in range(3)]
    names = [b.spec.name for b in bots]
    rules, deck = TIE_BREAK.make_rules(), TIE_BREAK.make_deck()
    tie_hands = skips_named = 0
    try:
        for b in bots:
            handshake(b, b.spec.name, tc)
        for g in range(GAMES):
            ends: list[dict] = []
            result = play_game(bots, names, rules, 1000 + g, f"js-tb-{g}", deck, tc, FaultPolicy(retries=0),
                               record=True, on_event=lambda kind, msg: ends.append(msg) if kind == "hand_end" else None)
            assert result.faults == [], (g, [f.to_dict() for f in result.faults])
            assert result.reason in ("tiebreak", "hand_limit"), (g, result.reason)
            assert ends[0]["completed"] == [0, 1] and ends[0]["scores"][0] == ends[0]["scores"][1], (g, ends[0])
            tie_hands += len(ends) - 1
            assert all(e["phases"][2] is None for e in ends), g  # seat 2 plays no further hand
            for line in result.replay or []:
                if b'"type":"action"' in line and b'"skip":' in line and b'"hand"' not in line:
                    skips_named += 1
    finally:
        for b in bots:
            if b.alive:
                try:
                    b.send(encode({"type": "bye"}))
                except Exception:  # noqa: BLE001 - ending anyway
                    pass
            b.stop()
    assert tie_hands >= GAMES
    assert skips_named >= GAMES  # Skips naming a seat: seat 1 holds one in the first tie-break hand
