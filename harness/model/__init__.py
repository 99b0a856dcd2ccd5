"""The records every layer passes on: a game's record, its faults, the executor's result,
the early-stopping decision, the board. Plain data (what games.jsonl and leaderboard.json
hold), typed here once; this package imports nothing of the harness."""

from .records import (FAULT_KINDS, NOT_PLAYED, Board, BoardRow, FaultKind, FaultRecord, GameRecord, PlayedGame,
                      StopDecision, played)

__all__ = ["FAULT_KINDS", "NOT_PLAYED", "Board", "BoardRow", "FaultKind", "FaultRecord", "GameRecord", "PlayedGame",
           "StopDecision", "played"]
