"""Text a bot wrote, made safe to print."""

from __future__ import annotations

import codecs
import re
from typing import Callable

_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), *range(0x0a, 0x20), 0x7f, *range(0x80, 0xa0)]}
REORDERING = (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x061C, 0x2028, 0x2029)
"""Bidirectional marks, overrides and isolates, and the line and paragraph separators: they
reorder or break what follows them on the screen."""
_CONTROL.update({c: f"\\u{c:04x}" for c in REORDERING})
_SHOWN = {chr(c): v for c, v in _CONTROL.items()}
_IN_LINES = re.compile("[" + "".join(re.escape(chr(c)) for c in _CONTROL if c != 0x0a) + "]")


def printable(text: str) -> str:
    """`text` with every control character but tab written as `\\xNN` (and the Unicode
    marks that reorder text or break lines as `\\uNNNN`), so that a bot's words printed
    to a terminal cannot move the cursor, set the title or the clipboard, or show
    themselves in another order."""
    return text.translate(_CONTROL)


def printable_lines(text: str) -> str:
    """`printable`, but newlines are kept: text of many lines, each of which is safe to
    print. (Most text has nothing to replace, and costs one scan.)"""
    return _IN_LINES.sub(lambda m: _SHOWN[m.group()], text)


def utf8_decoder() -> Callable[..., str]:
    """A decoder of UTF-8 that comes in pieces (`decode(piece, final=False)`): a character
    split between two pieces is whole, and a byte that is not UTF-8 is written `\\xNN`."""
    return codecs.getincrementaldecoder("utf-8")("backslashreplace").decode
