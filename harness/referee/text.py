"""Text a bot wrote, made safe to print."""

from __future__ import annotations

_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), *range(0x0a, 0x20), 0x7f, *range(0x80, 0xa0)]}
REORDERING = (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x061C, 0x2028, 0x2029)
"""Bidirectional marks, overrides and isolates, and the line and paragraph separators: they
reorder or break what follows them on the screen."""
_CONTROL.update({c: f"\\u{c:04x}" for c in REORDERING})


def printable(text: str) -> str:
    """`text` with every control character but tab written as `\\xNN` (and the Unicode
    marks that reorder text or break lines as `\\uNNNN`), so that a bot's words printed
    to a terminal cannot move the cursor, set the title or the clipboard, or show
    themselves in another order."""
    return text.translate(_CONTROL)
