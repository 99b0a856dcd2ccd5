#!/usr/bin/env python3
"""Its hello reply has no version. Fails: handshake (every other check is skipped)."""
from _common import main

main(hello={"type": "hello", "name": "no-version"})
