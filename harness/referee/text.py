"""Text a bot wrote, made safe to print."""

from __future__ import annotations

_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), *range(0x0a, 0x20), 0x7f, *range(0x80, 0xa0)]}


def printable(text: str) -> str:
    """`text` with every control character but tab written as `\\xNN`, so that a bot's
    words printed to a terminal cannot move the cursor, set the title or the clipboard."""
    return text.translate(_CONTROL)
