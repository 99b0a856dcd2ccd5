"""How the site writes values: numbers, axis ticks, colours, links, and JSON that is safe
inside a page's <script> elements and in a .js file."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence
from urllib.parse import quote

RGB = tuple[int, int, int]


def finite(obj: Any) -> Any:
    """`obj` with NaN and infinities replaced by None (JSON has no such numbers)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {str(k): finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def script_json(obj: Any) -> str:
    """Compact JSON that is safe inside a <script> element and in a .js file: ASCII only,
    and no <, > or & (written \\u003c, \\u003e, \\u0026), so no text in it can end the
    element (`</script>`) or open a comment."""
    try:  # the same text as with `finite` where no number is NaN or infinite (keys are str: JSON's)
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"), default=str, allow_nan=False)
    except ValueError:
        text = json.dumps(finite(obj), ensure_ascii=True, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def num(value: Any) -> float | None:
    """`value` as a finite float, None if it is no finite number (a bool is none)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def fmt(value: Any, digits: int = 2, pct: bool = False) -> str:
    """A number as the tables show it (— for none): `digits` decimals, or a percentage."""
    v = num(value)
    if v is None:
        return "—"
    if pct:
        return f"{v * 100:.{max(digits - 2, 0)}f}%" if digits > 2 else f"{v * 100:.0f}%"
    if digits == 0:
        return f"{v:.0f}"
    return f"{v:.{digits}f}"


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step - 1e-9) * step
    ticks: list[float] = []
    v = start
    while v <= hi + 1e-9 and len(ticks) < 50:
        ticks.append(round(v, 10))
        v += step
    return ticks


def tick_label(v: float) -> str:
    """An axis tick's label."""
    return f"{v:g}" if abs(v) >= 1 or v == 0 else f"{v:.2g}"


def lerp_color(stops: Sequence[RGB], t: float) -> RGB:
    """The colour at `t` (0 to 1) of the gradient through `stops`."""
    t = min(max(t, 0.0), 1.0)
    if len(stops) == 1:
        return stops[0]
    pos = t * (len(stops) - 1)
    i = min(int(pos), len(stops) - 2)
    f = pos - i
    a, b = stops[i], stops[i + 1]
    return tuple(round(a[k] + (b[k] - a[k]) * f) for k in range(3))  # type: ignore[return-value]


def hex_color(rgb: RGB) -> str:
    """'#rrggbb'."""
    return "#%02x%02x%02x" % rgb


def ink_on(rgb: RGB) -> str:
    """Black or white text, whichever reads better on `rgb`."""
    r, g, b = rgb
    return "#1d2330" if (0.299 * r + 0.587 * g + 0.114 * b) > 150 else "#ffffff"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, …"""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def replay_href(game: str) -> str:
    """The viewer's link to the replay of `game`."""
    return "replay.html#game=" + quote(str(game), safe="")
