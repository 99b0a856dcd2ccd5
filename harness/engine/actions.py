"""Actions: the two decisions of a turn as small immutable values with a JSON round-trip.

>>> a = action_from_json({"draw": "discard"}); a, a.to_json()
(Draw(source='discard'), {'draw': 'discard'})
>>> p = action_from_json({"lay": [["R7", "B7", "W"]], "discard": "S", "skip": 2})
>>> action_from_json(p.to_json()) == p
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Union

from .cards import CARD_TYPES, Card, CardError


class MalformedAction(ValueError):
    """An action whose shape is wrong (missing or mistyped fields, unknown cards): not a
    rule question, so not an `IllegalMove`."""


@dataclass(frozen=True, slots=True)
class Draw:
    """R3.1: draw from the deck or take the top discard."""

    source: str

    def to_json(self) -> dict[str, Any]:
        """Protocol form (without the request id)."""
        return {"draw": self.source}


@dataclass(frozen=True, slots=True)
class Hit:
    """R7: add `card` to table meld `meld`; `end` ("low"/"high") for runs."""

    card: Card
    meld: int
    end: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Protocol form."""
        d: dict[str, Any] = {"card": self.card.text, "meld": self.meld}
        if self.end is not None:
            d["end"] = self.end
        return d


@dataclass(frozen=True, slots=True)
class Play:
    """R3.3-R3.5: optionally lay the phase, then hit, then discard (None if the hand is empty)."""

    lay: tuple[tuple[Card, ...], ...] | None = None
    hits: tuple[Hit, ...] = ()
    discard: Card | None = None
    skip: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Protocol form (without the request id)."""
        d: dict[str, Any] = {}
        if self.lay is not None:
            d["lay"] = [[c.text for c in m] for m in self.lay]
        if self.hits:
            d["hits"] = [h.to_json() for h in self.hits]
        if self.discard is not None:
            d["discard"] = self.discard.text
        if self.skip is not None:
            d["skip"] = self.skip
        return d


Action = Union[Draw, Play]

# Actions are immutable values, so the frequent ones are made once.
_DRAWS = {"deck": Draw("deck"), "discard": Draw("discard")}
_PLAIN_DISCARDS = {c.text: Play(None, (), c, None) for c in CARD_TYPES}


def _card(x: Any, where: str) -> Card:
    if not isinstance(x, str):
        raise MalformedAction(f"{where} must be a card string like \"R5\", not {x!r}")
    try:
        return Card.parse(x)
    except CardError as e:
        raise MalformedAction(f"{where}: {e}") from None


def action_from_json(d: Mapping[str, Any], decision: str | None = None) -> Action:
    """Parse a protocol reply (the `id` is ignored). With `decision` ("draw" or "play"),
    a reply of the other kind is malformed. Raises `MalformedAction`."""
    if type(d) is not dict and not isinstance(d, Mapping):
        raise MalformedAction(f"a reply must be a JSON object, not {type(d).__name__}")
    if "draw" in d:
        if decision == "play":
            raise MalformedAction("this request asks to play (lay/hits/discard), not to draw")
        src = d["draw"]
        if type(src) is not str or src not in _DRAWS:
            raise MalformedAction(f"'draw' must be \"deck\" or \"discard\", not {src!r}")
        return _DRAWS[src]
    if decision == "draw":
        raise MalformedAction("this request asks to draw: reply {\"id\": ..., \"draw\": \"deck\"|\"discard\"}")
    lay = d.get("lay")
    if lay is None and d.get("hits") is None and d.get("skip") is None:
        # The common turn, a plain discard: one shared value per card.
        discard = d.get("discard")
        plain = _PLAIN_DISCARDS.get(discard) if type(discard) is str else None
        if plain is not None:
            return plain
    lay_t: tuple[tuple[Card, ...], ...] | None = None
    if lay is not None:
        if not isinstance(lay, list) or not all(isinstance(m, list) for m in lay):
            raise MalformedAction(f"'lay' must be a list of melds, each a list of cards, not {lay!r}"[:300])
        lay_t = tuple(tuple(_card(c, "a laid card") for c in m) for m in lay)
    hits = d.get("hits")
    hits_t: tuple[Hit, ...] = ()
    if hits is not None:
        if not isinstance(hits, list):
            raise MalformedAction(f"'hits' must be a list of {{card, meld, end?}}, not {hits!r}"[:300])
        out = []
        for h in hits:
            if (type(h) is not dict and not isinstance(h, Mapping)) or "card" not in h or "meld" not in h:
                raise MalformedAction(f"a hit is {{\"card\": \"R8\", \"meld\": 4}}, not {h!r}"[:300])
            meld = h["meld"]
            if not isinstance(meld, int) or isinstance(meld, bool):
                raise MalformedAction(f"a hit's 'meld' must be a table meld id (integer), not {meld!r}")
            end = h.get("end")
            if end not in (None, "low", "high"):
                raise MalformedAction(f"a hit's 'end' must be \"low\" or \"high\", not {end!r}")
            out.append(Hit(_card(h["card"], "a hit's card"), meld, end))
        hits_t = tuple(out)
    discard = d.get("discard")
    discard_c = None if discard is None else _card(discard, "'discard'")
    skip = d.get("skip")
    if skip is not None and (not isinstance(skip, int) or isinstance(skip, bool)):
        raise MalformedAction(f"'skip' must be a seat number or null, not {skip!r}")
    return Play(lay_t, hits_t, discard_c, skip)
