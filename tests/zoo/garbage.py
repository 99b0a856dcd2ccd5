"""Zoo: answers every request with garbage: text, broken JSON, non-UTF-8 bytes, wrong types."""
import sys

import _zoo

JUNK = [
    b"hello referee, I would like to draw",
    b"{\"id\": 1, \"draw\": ",
    b"\xff\xfe\x00garbage\x80\x81",
    b"[1, 2, 3]",
    b"{\"id\": \"seven\", \"draw\": 42}",
    b"null",
]


def on_request(msg, n):
    sys.stdout.buffer.write(JUNK[n % len(JUNK)] + b"\n")
    sys.stdout.buffer.flush()
    return {"id": msg["id"], "draw": ["not", "a", "pile"], "lay": 5}


_zoo.serve(on_request)
