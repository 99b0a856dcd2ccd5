"""Zoo: answers late and with stale ids. Every reply is preceded by one carrying the
previous request's id, and every third request is answered only after its time is up."""
import time

import _zoo

state = {"move_ms": 1000, "last": None}


def on_hello(msg):
    state["move_ms"] = (msg.get("time") or {}).get("move_ms") or 1000


def on_request(msg, n):
    if state["last"] is not None:
        _zoo.send({"id": state["last"], "draw": "deck"})
    state["last"] = msg["id"]
    if n % 3 == 0:
        time.sleep(state["move_ms"] * 1.5 / 1000)
    return None


_zoo.serve(on_request, on_hello=on_hello)
