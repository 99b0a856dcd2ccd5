"""The engine's one error for a move the rules forbid."""

from __future__ import annotations


class IllegalMove(ValueError):
    """A move that breaks a rule. The message names the rule (R…), the cards and the state.

    `rule` holds the rule number alone (e.g. ``"R5.4"``) for programs that sort faults.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
