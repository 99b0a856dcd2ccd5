"""Phases (R5): requirements made of melds, the ten standard phases and the extra ones.

>>> PHASES[2]
Phase(2, '1 set of 3 + 1 run of 4')
>>> Phase.custom(21, [{"kind": "run", "size": 5}, {"kind": "color", "size": 3}]).describe()
'1 run of 5 + 3 cards of one colour'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

MELD_KINDS = ("set", "run", "color")
_MIN_SIZE = {"set": 2, "run": 2, "color": 1}
_MAX_SIZE = {"set": 10, "run": 12, "color": 11}


class PhaseError(ValueError):
    """A phase definition that cannot be played."""


@dataclass(frozen=True, slots=True)
class MeldReq:
    """One meld a phase names: a set, a run or a colour of at least `size` cards (R4)."""

    kind: str
    size: int

    def __post_init__(self) -> None:
        if self.kind not in MELD_KINDS:
            raise PhaseError(f"R10.4: meld kind {self.kind!r} is not one of set, run, color")
        if not isinstance(self.size, int) or not (
            _MIN_SIZE[self.kind] <= self.size <= _MAX_SIZE[self.kind]
        ):
            raise PhaseError(
                f"R10.4: a {self.kind} must have {_MIN_SIZE[self.kind]}..{_MAX_SIZE[self.kind]} "
                f"cards, not {self.size!r}"
            )

    def describe(self) -> str:
        """Plain words, as in RULES.md."""
        if self.kind == "color":
            return f"{self.size} cards of one colour"
        return f"1 {self.kind} of {self.size}"

    def to_dict(self) -> dict[str, Any]:
        """The protocol form: {"kind": "set", "size": 3}."""
        return {"kind": self.kind, "size": self.size}


@dataclass(frozen=True, slots=True)
class Phase:
    """A phase: its number and the disjoint melds it names (R5.4)."""

    number: int
    melds: tuple[MeldReq, ...]
    _hash: int = field(init=False, repr=False, compare=False)
    # Things derived from the definition, worked out once per phase object by those who
    # need them (its protocol dict, the finder's search order): read-only once stored.
    _memo: dict[str, Any] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        # Phases key the finder's and the views' caches: hash once, not per lookup. Only
        # ints go in, so the hash is the same in every process (a pickled phase keeps it).
        kinds = tuple((MELD_KINDS.index(m.kind), m.size) for m in self.melds if m.kind in MELD_KINDS)
        object.__setattr__(self, "_hash", hash((self.number, kinds)))
        if not self.melds:
            raise PhaseError(f"R10.4: phase {self.number} names no meld")
        total = sum(m.size for m in self.melds)
        if total > 11:
            raise PhaseError(
                f"R10.4: phase {self.number} needs {total} cards but a hand holds at most 11 "
                "(10 dealt and 1 drawn); at most 11 cards"
            )

    @staticmethod
    def custom(number: int, melds: Iterable[Mapping[str, Any]]) -> "Phase":
        """A phase from a list of {"kind", "size"} mappings (R10.4)."""
        reqs = []
        for m in melds:
            if not isinstance(m, Mapping) or set(m) - {"kind", "size"} or "kind" not in m:
                raise PhaseError(f"R10.4: a meld is written {{kind: set|run|color, size: N}}, not {m!r}")
            reqs.append(MeldReq(str(m["kind"]), m.get("size")))  # type: ignore[arg-type]
        return Phase(number, tuple(reqs))

    @property
    def size(self) -> int:
        """Fewest cards that lay this phase."""
        return sum(m.size for m in self.melds)

    def describe(self) -> str:
        """Plain words: '2 sets of 3' style."""
        parts = [m.describe() for m in self.melds]
        # Fold "1 set of 3 + 1 set of 3" into "2 sets of 3", as RULES.md writes it.
        if len(parts) > 1 and len(set(parts)) == 1 and self.melds[0].kind != "color":
            return f"{len(parts)} {self.melds[0].kind}s of {self.melds[0].size}"
        return " + ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The protocol form: {"number": 3, "melds": [{"kind": "set", "size": 4}, ...]}.

        Built once per phase and shared: treat it as read-only."""
        d = self._memo.get("dict")
        if d is None:
            d = self._memo["dict"] = {"number": self.number, "melds": [m.to_dict() for m in self.melds]}
        return d

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Phase({self.number}, {self.describe()!r})"


def _p(number: int, *melds: tuple[str, int]) -> Phase:
    return Phase(number, tuple(MeldReq(k, s) for k, s in melds))


PHASES: dict[int, Phase] = {
    p.number: p
    for p in (
        _p(1, ("set", 3), ("set", 3)),
        _p(2, ("set", 3), ("run", 4)),
        _p(3, ("set", 4), ("run", 4)),
        _p(4, ("run", 7)),
        _p(5, ("run", 8)),
        _p(6, ("run", 9)),
        _p(7, ("set", 4), ("set", 4)),
        _p(8, ("color", 7)),
        _p(9, ("set", 5), ("set", 2)),
        _p(10, ("set", 5), ("set", 3)),
        # R5.6: the extra phases 11-20.
        _p(11, ("set", 2), ("set", 2), ("set", 2), ("set", 2)),
        _p(12, ("set", 4), ("run", 5)),
        _p(13, ("set", 5), ("run", 5)),
        _p(14, ("run", 4), ("color", 4)),
        _p(15, ("set", 5), ("color", 4)),
        _p(16, ("run", 10)),
        _p(17, ("set", 4), ("set", 5)),
        _p(18, ("color", 9)),
        _p(19, ("set", 6), ("set", 2)),
        _p(20, ("set", 6), ("set", 3)),
    )
}
"""Every numbered phase of R5.1 and R5.6."""

STANDARD_PHASES: tuple[Phase, ...] = tuple(PHASES[i] for i in range(1, 11))
"""The ten phases of R5.1, in order."""
