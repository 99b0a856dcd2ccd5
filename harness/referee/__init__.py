"""The referee: bot processes and their limits, the p10/1 codec, and one game's loop."""

from .codec import PROTOCOL, MalformedMessage, decode, encode
from .process import (
    BotDied, BotError, BotProcess, BotSpec, BotStartError, BotTimeout, Limits, LineTooLong,
)
from .referee import DEFAULT_MOVE_MS, Fault, FaultPolicy, GameResult, Referee, TimeControl, handshake, play_game

__all__ = [
    "PROTOCOL", "MalformedMessage", "decode", "encode", "BotDied", "BotError", "BotProcess", "BotSpec",
    "BotStartError", "BotTimeout", "Limits", "LineTooLong", "Fault", "FaultPolicy", "GameResult",
    "Referee", "TimeControl", "handshake", "play_game", "DEFAULT_MOVE_MS",
]
