"""Game settings and the variants of R10.

>>> Rules.from_dict({"phases": [2, 4, 6, 8, 10]}).phases[0].number
2
>>> Rules.from_dict({"variant": "fixed"}).variant
'fixed'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .phases import PHASES, STANDARD_PHASES, Phase, PhaseError

VARIANTS = ("standard", "fixed")


class RulesError(ValueError):
    """Settings that do not describe a playable game."""


@dataclass(frozen=True)
class Rules:
    """Which game is played.

    - `variant`: "standard" (R5: phases in order, advance when laid) or "fixed" (R10.1:
      hand i is phase i for everyone, lowest score wins).
    - `phases`: the phase list (R10.3, R10.4); default the ten of R5.1.
    - `first_to`: complete this many phases to end the game (R10.2); None = all of them.
    - `turn_limit`: turns after which a hand is stalled (R8.4).
    - `hand_limit`: hands after which the game ends (R9.5).
    - `first_dealer`: the first dealer's seat (R2.3).
    """

    variant: str = "standard"
    phases: tuple[Phase, ...] = STANDARD_PHASES
    first_to: int | None = None
    turn_limit: int = 300
    hand_limit: int = 60
    first_dealer: int = 0
    _goal: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise RulesError(f"R10: variant must be one of {', '.join(VARIANTS)}, not {self.variant!r}")
        if not self.phases:
            raise RulesError("R10.3: the phase list is empty")
        if self.first_to is not None and not (1 <= self.first_to <= len(self.phases)):
            raise RulesError(f"R10.2: first_to must be 1..{len(self.phases)} (the number of phases), not {self.first_to}")
        if self.variant == "fixed" and self.first_to is not None:
            raise RulesError("R10.1: fixed hands play every phase once; first_to does not apply")
        if not isinstance(self.turn_limit, int) or self.turn_limit < 2:
            raise RulesError(f"R8.4: turn_limit must be an integer >= 2, not {self.turn_limit!r}")
        if not isinstance(self.hand_limit, int) or self.hand_limit < 1:
            raise RulesError(f"R9.5: hand_limit must be an integer >= 1, not {self.hand_limit!r}")
        object.__setattr__(self, "_goal", self.first_to or len(self.phases))

    @property
    def goal(self) -> int:
        """Phases a player must complete to end the game (R9.1, R10.2)."""
        return self._goal

    def phase_at(self, index: int) -> Phase:
        """The phase a player works on after completing `index` phases."""
        return self.phases[min(index, self._goal - 1)]

    @staticmethod
    def from_dict(d: Mapping[str, Any] | None) -> "Rules":
        """Rules from a config or protocol mapping. Phases are numbers (1..20) or
        {"melds": [{"kind", "size"}, ...]} for custom phases (R10.4)."""
        d = dict(d or {})
        unknown = set(d) - {"variant", "phases", "first_to", "turn_limit", "hand_limit", "first_dealer"}
        if unknown:
            raise RulesError(f"unknown rules key(s): {', '.join(sorted(unknown))}")
        kwargs: dict[str, Any] = {
            k: d[k] for k in ("variant", "first_to", "turn_limit", "hand_limit", "first_dealer") if k in d
        }
        if "phases" in d and d["phases"] is not None:
            kwargs["phases"] = parse_phases(d["phases"])
        try:
            return Rules(**kwargs)
        except PhaseError as e:
            raise RulesError(str(e)) from None

    def to_dict(self) -> dict[str, Any]:
        """The protocol form (sent in `game_start`), which `from_dict` reads back."""
        return {
            "variant": self.variant,
            "phases": [p.to_dict() for p in self.phases],
            "first_to": self.first_to,
            "turn_limit": self.turn_limit,
            "hand_limit": self.hand_limit,
            "first_dealer": self.first_dealer,
        }


def parse_phases(items: Any) -> tuple[Phase, ...]:
    """Phases from numbers (R5.1, R5.6) and custom meld lists (R10.4)."""
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise RulesError(f"R10.3: phases must be a list, not {items!r}")
    out: list[Phase] = []
    for i, item in enumerate(items):
        if isinstance(item, bool):
            raise RulesError(f"R10.3: phase {item!r} is not a phase number or a meld list")
        if isinstance(item, int):
            if item not in PHASES:
                raise RulesError(f"R10.3: there is no phase {item}; phases are numbered 1..20")
            out.append(PHASES[item])
        elif isinstance(item, Mapping) and "melds" in item:
            number = item.get("number", 100 + i)
            if not isinstance(number, int):
                raise RulesError(f"R10.4: a custom phase's number must be an integer, not {number!r}")
            melds = item["melds"]
            if isinstance(melds, (str, bytes)) or not hasattr(melds, "__iter__"):
                raise RulesError(f"R10.4: a custom phase's melds must be a list, not {melds!r}")
            try:
                out.append(Phase.custom(number, melds))
            except PhaseError as e:
                raise RulesError(str(e)) from None
        else:
            raise RulesError(
                f"R10.3: phase {item!r} is neither a phase number (1..20) nor {{melds: [{{kind, size}}, ...]}}"
            )
    return tuple(out)
