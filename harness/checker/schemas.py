"""The JSON Schemas of protocol/schemas/, when the repository and jsonschema are at hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# In a checkout, next to the package; once installed, where the wheel's data files go.
_CANDIDATES = (
    Path(__file__).resolve().parents[2] / "protocol" / "schemas",
    Path(sys.prefix) / "share" / "p10-tourney" / "schemas",
)
SCHEMA_DIR = next((d for d in _CANDIDATES if (d / "from_bot.play.schema.json").exists()), _CANDIDATES[0])


class Schemas:
    """Validators for the bot's replies: `from_bot.hello`, `from_bot.draw`, `from_bot.play`.

    `available` is False (and `why_not` says why) when jsonschema is not installed or the
    schema files are not next to the package; the referee's own checks still apply."""

    NAMES = ("from_bot.hello", "from_bot.draw", "from_bot.play")

    def __init__(self, directory: Path = SCHEMA_DIR) -> None:
        self.validators: dict[str, Any] = {}
        self.why_not = ""
        try:
            from jsonschema import Draft202012Validator
        except ImportError:
            self.why_not = "jsonschema is not installed (pip install jsonschema)"
            return
        for name in self.NAMES:
            path = directory / f"{name}.schema.json"
            try:
                schema = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self.validators.clear()
                self.why_not = f"the schemas were not found in {directory}"
                return
            self.validators[name] = Draft202012Validator(schema)

    @property
    def available(self) -> bool:
        """True if replies are validated against the schemas."""
        return bool(self.validators)

    def error(self, name: str, msg: Any) -> str | None:
        """The first problem of `msg` under schema `name` (None if it is valid or the
        schemas are unavailable), as 'where: what'."""
        v = self.validators.get(name)
        if v is None:
            return None
        errors = sorted(v.iter_errors(msg), key=lambda e: (len(list(e.absolute_path)), e.message))
        if not errors:
            return None
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path)
        return f"{where}: {e.message}" if where else e.message
