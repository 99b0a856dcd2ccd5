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
        e = _deepest(errors[0])
        where = "/".join(str(p) for p in e.absolute_path)
        text = f"{where}: {e.message}" if where else e.message
        fix = _fix(e, msg)
        if fix and "allOf" in list(e.schema_path):  # the Skip rule: its own words say it better
            return fix
        return f"{text} ({fix})" if fix else text


def _deepest(e: Any) -> Any:
    """For "not valid under any of the given schemas" (a field that may also be null), the
    error of the branch that got furthest, which says what is wrong."""
    while e.validator in ("anyOf", "oneOf") and e.context:
        branches = [c for c in e.context if c.validator != "type" or c.validator_value != "null"]
        if not branches:
            break
        e = max(branches, key=lambda c: (len(list(c.absolute_path)), c.validator != "type"))
    return e


def _fix(e: Any, msg: Any) -> str:
    """What to change in the reply, in words, for one schema error."""
    path = list(e.absolute_path)
    field = str(path[-1]) if path else ""
    in_skip_rule = "allOf" in list(e.schema_path)
    if in_skip_rule and e.validator == "const" and field == "discard":
        skip = msg.get("skip") if isinstance(msg, dict) else None
        discard = msg.get("discard") if isinstance(msg, dict) else None
        return (f"\"skip\": {json.dumps(skip)} names a seat, which only a Skip discard does (R6.1); with "
                f"\"discard\": {json.dumps(discard)} leave \"skip\" out or send null")
    if in_skip_rule and e.validator == "required" and "discard" in e.message:
        return "\"skip\" names a seat only with a Skip discard: add \"discard\": \"S\" or leave \"skip\" out"
    if in_skip_rule and e.validator == "required":
        return ("a Skip discard needs \"skip\": the seat that loses its next turn (R6.1), or null if no seat "
                "may be named (R6.3)")
    if e.validator == "required":
        return "add that field"
    if e.validator == "additionalProperties":
        return "remove the field(s) not in the schema; replies to requests have no \"type\""
    if e.validator == "pattern":
        return "a card is written R1..R12, B1..B12, G1..G12, Y1..Y12, W (Wild) or S (Skip)"
    if e.validator == "enum":
        return f"use one of {', '.join(json.dumps(v) for v in e.validator_value)}"
    if e.validator == "type":
        if field == "id":
            return "send back the request's id exactly as received: a JSON number"
        kinds = e.validator_value if isinstance(e.validator_value, list) else [e.validator_value]
        words = {"array": "a list", "object": "an object", "string": "a string", "integer": "an integer",
                 "boolean": "true or false", "null": "null"}
        return f"make {field or 'it'} {' or '.join(words.get(str(k), str(k)) for k in kinds)}"
    if e.validator in ("minItems", "minimum", "minLength"):
        return f"{field or 'it'} is too small or empty"
    return ""
