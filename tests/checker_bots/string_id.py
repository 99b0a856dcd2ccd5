#!/usr/bin/env python3
"""Echoes the request id as a string ("5" instead of 5). Fails: valid-replies, in-time,
late-replies (the referee drops replies whose id is not the open request's)."""
from _common import good_reply, main

main(answer=lambda msg: dict(good_reply(msg), id=str(msg["id"])))
