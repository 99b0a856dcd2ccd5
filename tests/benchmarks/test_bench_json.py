"""Which JSON library the referee and the SDK use, measured on the protocol's own messages.

    python -m pytest tests/benchmarks/test_bench_json.py --benchmark-enable -q -s

The messages are those of one standard 4-player greedy game (seed 2024): every request
the referee builds (view, events, options) and every reply. Each round encodes all the
requests (the referee's side) and decodes all the requests and replies (a bot's and the
referee's side). The standard library's `json` is always measured; orjson is a
dependency; ujson and msgspec are measured when installed. Figures are in BENCHMARKS.md,
section "JSON".
"""

from __future__ import annotations

import importlib
import json
import time
from typing import Any, Callable

import pytest

from harness.engine import Game, Rules, action_from_json
from harness.players import GreedyStrategy

SEED = 2024
RESULTS: dict[str, tuple[float, float, float]] = {}  # library -> µs: encode a request, decode it, decode a reply


def _messages() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    game = Game(Rules(), 4, SEED, game_id="g-bench")
    players = [GreedyStrategy() for _ in range(4)]
    game.start()
    requests, replies = [], []
    rid = 0
    while game.decision is not None:
        seat, decision = game.current, game.decision
        rid += 1
        msg: dict[str, Any] = {"type": "request", "id": rid, "decision": decision, "events": [],
                               "state": game.view(seat)}
        if decision == "play":
            msg["options"] = game.options(seat)
        reply = players[seat].decide(msg["state"], decision, msg.get("options"))
        requests.append(json.loads(json.dumps(msg)))  # plain data, nothing shared
        replies.append(dict(reply, id=rid))
        game.apply(action_from_json(reply, decision))
    return requests, replies


def _codec(name: str) -> tuple[Callable[[Any], bytes], Callable[[bytes], Any]]:
    if name == "json":
        return (lambda o: json.dumps(o, separators=(",", ":")).encode()), json.loads
    mod = importlib.import_module(name)
    if name == "msgspec":
        enc, dec = mod.json.Encoder(), mod.json.Decoder()
        return enc.encode, dec.decode
    if name == "ujson":
        return (lambda o: mod.dumps(o).encode()), mod.loads
    return mod.dumps, mod.loads


def _available() -> list[str]:
    out = ["json", "orjson"]
    for name in ("ujson", "msgspec"):
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        out.append(name)
    return out


def test_bench_json(benchmark) -> None:
    """Per round, every library in turn (the machine's speed drifts between rounds, not
    within one): encode every request, decode every request and every reply. µs per
    message, medians of the rounds."""
    requests, replies = _messages()
    messages = requests + replies
    codecs = {name: _codec(name) for name in _available()}
    lines = {}
    for name, (dumps, loads) in codecs.items():
        lines[name] = [dumps(m) for m in messages]
        assert [json.loads(x) for x in lines[name]] == messages  # it writes JSON
        assert [loads(x) for x in lines[name]] == messages  # and reads it back
    n = len(requests)
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in codecs}

    def one_round() -> None:
        for name, (dumps, loads) in codecs.items():
            t0 = time.perf_counter()
            for m in requests:
                dumps(m)
            t1 = time.perf_counter()
            for x in lines[name][:n]:
                loads(x)
            t2 = time.perf_counter()
            for x in lines[name][n:]:
                loads(x)
            times[name].append((t1 - t0, t2 - t1, time.perf_counter() - t2))

    benchmark.pedantic(one_round, rounds=3 if benchmark.disabled else 40, iterations=1)

    def median(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    for name, ts in times.items():
        enc, dec_req, dec_rep = (1e6 * median([t[k] for t in ts]) / cnt for k, cnt in ((0, n), (1, n), (2, len(replies))))
        benchmark.extra_info[name] = {"encode_request_us": round(enc, 2), "decode_request_us": round(dec_req, 2),
                                      "decode_reply_us": round(dec_rep, 2)}
        if not benchmark.disabled:
            RESULTS[name] = (enc, dec_req, dec_rep)
    benchmark.extra_info["mean_request_bytes"] = round(sum(map(len, lines["json"][:n])) / n)


def test_bench_json_summary() -> None:
    """Print the figures side by side (only when the benchmark above ran with timing)."""
    if not RESULTS:
        pytest.skip("benchmarks disabled: no figures")
    print("\nµs per message (medians): encode a request / decode a request / decode a reply")
    for lib, (enc, dreq, drep) in RESULTS.items():
        print(f"  {lib:8s} {enc:7.2f} {dreq:7.2f} {drep:7.2f}")
