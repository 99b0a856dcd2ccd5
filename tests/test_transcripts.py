"""The golden transcripts of protocol/transcripts/: every line validates against the p10/1
JSON Schemas, the exchanges are consistent (replies carry their request's id, nothing
unasked is answered), and regenerating them gives the same files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")
from jsonschema import Draft202012Validator  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "protocol" / "transcripts"
SCHEMAS = ROOT / "protocol" / "schemas"
TOOL = ROOT / "tools" / "make_transcripts.py"
NAMES = ["handshake", "draw_and_discard", "lay_phase", "hit", "skip", "error_and_retry", "go_out_and_hand_end"]
TIMING_KEYS = {"t", "duration_s", "think_s", "elapsed", "ms", "time_ms"}


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8")))


VALIDATORS = {p.name.removesuffix(".schema.json"): validator(p.name.removesuffix(".schema.json"))
              for p in SCHEMAS.glob("*.schema.json")}


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (TRANSCRIPTS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def keys(obj) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in keys(v)}
    return set()


def test_the_files_are_there():
    assert sorted(p.stem for p in TRANSCRIPTS.glob("*.jsonl")) == sorted(NAMES)
    assert (TRANSCRIPTS / "README.md").is_file()


@pytest.mark.parametrize("name", NAMES)
def test_every_line_validates(name):
    lines = load(name)
    assert lines, name
    open_request = None
    for n, item in enumerate(lines, 1):
        where = f"{name}.jsonl line {n}"
        assert set(item) == {"dir", "msg"}, where
        msg = item["msg"]
        if item["dir"] == "to":
            schema = f"to_bot.{msg['type']}"
            if msg["type"] == "request":
                assert open_request is None, f"{where}: a request while request {open_request['id']} is open"
                open_request = msg
        else:
            assert item["dir"] == "from", where
            if msg.get("type") == "hello":
                schema = "from_bot.hello"
            else:
                assert open_request is not None, f"{where}: a reply with no open request"
                schema = f"from_bot.{open_request['decision']}"
                assert msg["id"] == open_request["id"], where
                open_request = None
        assert schema in VALIDATORS, f"{where}: no schema {schema}"
        errors = [e.message for e in VALIDATORS[schema].iter_errors(msg)]
        assert not errors, f"{where} ({schema}): {errors}"
        assert not keys(msg) & TIMING_KEYS, f"{where}: timings do not belong in a transcript"
    assert open_request is None, f"{name}: request {open_request['id']} is never answered"
    types = [(i["dir"], i["msg"].get("type")) for i in lines]
    assert types[:2] == [("to", "hello"), ("from", "hello")]
    assert types[-1] == ("to", "bye")
    if name != "handshake":
        assert types[2] == ("to", "game_start")


def test_the_situations_are_shown():
    def replies(name):
        return [i["msg"] for i in load(name) if i["dir"] == "from" and "id" in i["msg"]]

    def sent(name, kind):
        return [i["msg"] for i in load(name) if i["dir"] == "to" and i["msg"]["type"] == kind]

    assert {"discard", "deck"} <= {r.get("draw") for r in replies("draw_and_discard")}
    assert any("lay" in r for r in replies("lay_phase"))
    assert any(r.get("hits") for r in replies("hit"))
    assert any(r.get("discard") == "S" and r.get("skip") is not None for r in replies("skip"))
    assert any({"e": "skipped", "seat": 1} in m["events"] for m in sent("skip", "request"))
    (error,) = sent("error_and_retry", "error")
    assert error["fault"] == "illegal" and error["retry"] is True
    requests = sent("error_and_retry", "request")
    assert requests[-1]["id"] == error["id"] + 1 and requests[-1]["decision"] == "play"
    assert sent("go_out_and_hand_end", "hand_end")[0]["winner"] == 0
    assert sent("go_out_and_hand_end", "game_end")[0]["places"] == [1, 2]


def test_regenerating_gives_the_same_files(tmp_path):
    out = tmp_path / "transcripts"
    proc = subprocess.run([sys.executable, str(TOOL), "--out", str(out)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fresh = {p.name: p.read_bytes() for p in out.glob("*.jsonl")}
    committed = {p.name: p.read_bytes() for p in TRANSCRIPTS.glob("*.jsonl")}
    assert sorted(fresh) == sorted(committed)
    for name in committed:
        assert fresh[name] == committed[name], (
            f"{name} differs when regenerated: run `python tools/make_transcripts.py` and review the diff"
        )


def test_check_mode_accepts_a_good_bot_and_flags_a_bad_one():
    good = subprocess.run([sys.executable, str(TOOL), "--check", "--", sys.executable, "bots/python/greedy.py"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.count(": ok") == len(NAMES)
    bad = subprocess.run([sys.executable, str(TOOL), "--check", "--", sys.executable, "tests/bots/faulty.py", "illegal"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert bad.returncode == 1
    assert "but holds 0" in bad.stdout and "can_take_discard is false" in bad.stdout
