"""Zoo: well-formed replies that break the rules: it takes the discard when it may not, and
lays and discards cards it does not hold."""
import _zoo


def on_request(msg, n):
    st = msg["state"]
    if msg["decision"] == "draw":
        bad = not st["can_take_discard"] or st["discard_top"] is None
        return {"id": msg["id"], "draw": "discard" if bad else "deck"}
    held = set(st["cards"])
    missing = [c for c in ["R1", "R2", "R3", "B12", "G7", "Y9", "W", "S"] if c not in held]
    return {"id": msg["id"], "lay": [["R7", "R7", "R7"], ["B1", "B1", "B1"]], "discard": (missing or ["Y13"])[0]}


_zoo.serve(on_request)
