"""`p10-tourney play --human`: a person at the terminal against a bot, driven by piped
stdin (CliRunner and a real pipe) and by a pseudo-terminal, plus the move checks of the
human seat on their own.

The stacked deck makes the game certain: the human (seat 0, first to move) holds two sets
of 3s and 7s and a Wild; draws R3, lays, discards R1; the bot (junk hand) cannot lay;
the human draws G12 (the two top cards after R3 are both G12, whichever pile the bot drew
from), hits everything and goes out with G12: one hand, phase 1 done, the game is over.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.human import HumanError, HumanSeat, Turn

DECK = {"deals": [{"hands": [["R3", "B3", "G3", "Y3", "R7", "B7", "G7", "Y7", "W", "R1"],
                             ["B1", "B2", "B4", "B5", "B6", "B8", "B9", "B10", "B11", "B12"]],
                   "discard": "G1", "draw": ["R3", "G12", "G12"]}]}
RULES = '{"phases": [1], "first_dealer": 1}'
BOT = f"greedy={sys.executable} -m harness.bots.greedy"

# What the person types: help, a wrong command, a lay that is not the phase, a hit on a
# meld laid in the same turn, then the real moves.
TYPED = [
    "help",
    "dance",
    "d",
    "lay R3 B3 / G7",
    "lay R3 B3 G3 / R7 B7 G7",
    "hit Y3 0",
    "table",
    "disc R1",
    "d",
    "hand",
    "hit Y3 0; hit R3 0; hit Y7 1",
    "hit W 1",
    "disc G12",
]


@pytest.fixture
def deck_file(tmp_path: Path) -> Path:
    path = tmp_path / "deck.json"
    path.write_text(json.dumps(DECK))
    return path


def args(deck_file: Path) -> list[str]:
    return ["play", "--human", "me", "--bot", BOT, "--rules", RULES, "--deck", str(deck_file)]


def check_output(out: str) -> None:
    # It shows the hand, the table and the piles.
    assert "your hand (10): R1 R3 R7 B3 B7 G3 G7 Y3 Y7 W" in out
    assert "table:\n  [0] you          set of 3s      R3 B3 G3" in out
    assert "piles: draw 87 cards · discard top G1" in out
    assert "you drew R3" in out and "you drew G12" in out
    # Helpful errors.
    assert "unknown command 'dance'" in out
    assert "[R3 B3] has 2 cards; the set needs at least 3" in out
    assert "Melds you lay this turn cannot be hit in the same turn: lay them longer instead" in out
    assert "commands (case does not matter" in out  # help
    # The game went to its end.
    assert "hand 1 is over: you went out" in out
    assert "greedy (seat 1) kept" in out
    assert "result: 1. me (1 phases, 0 points), 2. greedy (0 phases" in out


def test_whole_game_with_piped_stdin(deck_file: Path) -> None:
    result = CliRunner().invoke(main, args(deck_file), input="\n".join(TYPED) + "\n")
    assert result.exit_code == 0, result.output
    check_output(result.output)
    assert "fault" not in result.output


def test_whole_game_through_a_real_pipe(deck_file: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "harness.cli", *args(deck_file)], input="\n".join(TYPED) + "\n",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_output(proc.stdout)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals here")
def test_whole_game_in_a_pseudo_terminal(deck_file: Path) -> None:
    """The same game with the CLI attached to a pty, as at a real terminal: each command is
    typed once the prompt for it is shown."""
    import pty  # noqa: F401 - POSIX only
    import select

    master, slave = os.openpty()
    env = dict(os.environ, TERM="dumb", NO_COLOR="1")
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", *args(deck_file)], stdin=slave, stdout=slave,
                            stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    typed = list(TYPED)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 0.2)
            if r:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the pty is closed: the CLI has exited
                    break
                if not chunk:
                    break
                out += chunk
                if typed and (out.rstrip().endswith(b"draw>") or out.rstrip().endswith(b"play>")):
                    os.write(master, (typed.pop(0) + "\n").encode())
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)  # colours, if any
    assert code == 0, text
    assert not typed, text
    assert "hand 1 is over: you went out" in text
    assert "your hand (10)" in text and "piles: draw 87 cards" in text
    assert "unknown command 'dance'" in text
    assert "result: 1. me" in text


def test_leaving_mid_game_lets_the_bots_finish(deck_file: Path) -> None:
    """The end of input is the person leaving: the seat forfeits and the game still ends."""
    result = CliRunner().invoke(main, args(deck_file), input="d\n")
    assert result.exit_code == 0, result.output
    assert "me left the game (end of input)" in result.output
    assert "result: 1. greedy" in result.output


# ----- the move checks on their own ------------------------------------------------------------


def request(cards: list[str], *, laid: bool = False, table: list[dict] | None = None, players: int = 3,
            pending: tuple[int, ...] = (), options: dict | None = None) -> dict:
    return {"type": "request", "id": 9, "decision": "play", "events": [],
            "state": {"game": "g", "hand": 1, "turn": 3, "seat": 0, "dealer": 1, "cards": cards,
                      "phase": {"number": 2, "melds": [{"kind": "set", "size": 3}, {"kind": "run", "size": 4}]},
                      "laid": laid, "discard_top": "G1", "can_take_discard": True, "draw_size": 50,
                      "players": [{"seat": s, "name": f"p{s}", "phase": 2, "laid": False, "cards": 10, "score": 0,
                                   "skip_pending": s in pending} for s in range(players)],
                      "table": table or []},
            **({"options": options} if options is not None else {})}


RUN = {"id": 0, "owner": 1, "kind": "run", "low": 3, "high": 6, "cards": ["W", "R4", "B5", "G6"]}


def test_turn_checks_lays_hits_and_discards() -> None:
    t = Turn(request(["R9", "B9", "G9", "R3", "W", "B5", "G6", "S", "Y12"]))
    with pytest.raises(HumanError, match="not a card"):
        t.do_lay("R9 B9 Q9 / R3 W B5 G6")
    with pytest.raises(HumanError, match="R4.2.*low to high"):
        t.do_lay("R9 B9 G9 / G6 R3 W B5")
    with pytest.raises(HumanError, match=r"not in your hand: R7 \(you have 0, the lay uses 1\), R8 .*R10"):
        t.do_lay("R9 B9 G9 / R7 R8 W R10")
    t.do_lay("r9 b9 g9 / r3 w b5 g6")
    assert [[c.text for c in m] for m in t.lay] == [["R9", "B9", "G9"], ["R3", "W", "B5", "G6"]]
    with pytest.raises(HumanError, match="laid your phase this turn already"):
        t.do_lay("")
    with pytest.raises(HumanError, match="name the seat to skip: disc S 1"):
        t.do_discard(["S"])
    with pytest.raises(HumanError, match="cannot skip yourself"):
        t.do_discard(["S", "0"])
    assert t.do_discard(["S", "2"]) == {"lay": [["R9", "B9", "G9"], ["R3", "W", "B5", "G6"]],
                                        "discard": "S", "skip": 2}


def test_turn_checks_hits_on_the_table() -> None:
    t = Turn(request(["W", "R7", "Y2", "B9"], laid=True, table=[RUN]))
    with pytest.raises(HumanError, match="R7.3.*which end"):
        t.do_hit(["W", "0"])
    with pytest.raises(HumanError, match="B9 does not fit"):
        t.do_hit(["B9", "0"])
    with pytest.raises(HumanError, match="no meld 3 on the table"):
        t.do_hit(["R7", "3"])
    t.do_hit(["R7", "0"])
    t.do_hit(["W", "0", "low"])  # the Wild is the 2 now, and it stays where it is (R4.7)
    with pytest.raises(HumanError, match="R4.7: the Wild that stands for 2 .* Y2 cannot take its place"):
        t.do_hit(["Y2", "0"])
    with pytest.raises(HumanError, match="only a Skip names a seat"):
        t.do_discard(["B9", "1"])
    assert t.do_discard(["b9"]) == {"hits": [{"card": "R7", "meld": 0}, {"card": "W", "meld": 0, "end": "low"}],
                                    "discard": "B9"}
    t2 = Turn(request(["S", "R1"], players=3, pending=(1,)))
    assert t2.do_discard(["S"]) == {"discard": "S", "skip": 2}  # the only seat that may be named
    with pytest.raises(HumanError, match="skip pending"):
        Turn(request(["S", "R1"], players=3, pending=(1,))).do_discard(["S", "1"])


def test_seat_answers_like_a_bot() -> None:
    """The referee's side of the seat: hello, a request, the reply line."""
    typed = iter(["t", "lay", "disc Y12"])
    shown: list[str] = []
    seat = HumanSeat("me", read=lambda prompt: next(typed), echo=shown.append)
    seat.start()
    seat.send(b'{"type":"hello","protocol":"p10/1","name":"me","time":{"move_ms":1,"game_ms":null}}\n')
    assert json.loads(seat.read_line(0)) == {"type": "hello", "name": "me", "version": "human"}
    draw = request(["R9", "B9", "G9", "R3", "W", "B5", "G6", "Y12"])
    draw["decision"], draw["id"] = "draw", 4
    seat.send(json.dumps(draw).encode())
    assert json.loads(seat.read_line(0)) == {"draw": "discard", "id": 4}
    play = request(["R9", "B9", "G9", "R3", "W", "B5", "G6", "Y12", "G1"],
                   options={"lay": [["R9", "B9", "G9"], ["R3", "W", "B5", "G6"]], "hits": []})
    seat.send(json.dumps(play).encode())
    reply = json.loads(seat.read_line(0))
    assert reply == {"lay": [["R9", "B9", "G9"], ["R3", "W", "B5", "G6"]], "discard": "Y12", "id": 9}
    plain = [click.unstyle(line) for line in shown]
    assert "you drew G1" in plain
    assert any(line.startswith("you hold your phase: lay R9 B9 G9 / R3 W B5 G6") for line in plain)
    assert seat.alive and seat.stop() == 0 and not seat.alive


SILENT = ("import sys, json\n"
          "for line in sys.stdin:\n"
          "    if json.loads(line).get('type') == 'hello':\n"
          "        print(json.dumps({'type': 'hello', 'name': 's', 'version': '1'}), flush=True)\n")


def test_the_bots_keep_their_move_limit_while_the_person_has_none(deck_file: Path, tmp_path: Path) -> None:
    """The person is never timed; a bot that does not answer still times out at --move-ms."""
    script = tmp_path / "silent.py"
    script.write_text(SILENT)
    argv = ["play", "--human", "me", "--bot", f"greedy={sys.executable} {script}", "--rules", RULES,
            "--deck", str(deck_file), "--move-ms", "200"]
    result = CliRunner().invoke(main, argv, input="\n".join(TYPED) + "\n")
    assert result.exit_code == 0, result.output
    assert "fault: greedy (seat 1) timeout: no reply to request" in result.output
    assert "within 200 ms" in result.output
    assert "result: 1. me (1 phases, 0 points)" in result.output
