"""A worker's bot processes, by (entrant, k): under duplicate deals an entrant that is not
trusted has up to table_size of them, each seat rotation of a deal going to one not yet
dealt it (`GameRunner._bot`), so that each is started once per worker and reused across
deal groups (and again after it died or was ended). Processes are started when first
needed, and the least recently used are ended while more than `LIVE_PER_WORKER` run
(they start afresh when next needed), so that a big field holds a bounded number of
processes per worker."""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Iterator

from ..referee import BotProcess, encode

#: Bot processes a worker keeps running between games, at most (at least a table's).
LIVE_PER_WORKER = 48


def say_bye(bot: BotProcess) -> None:
    """Send `bye` to a running bot (it then exits by itself when `stop` closes its stdin)."""
    if bot.alive:
        try:
            bot.send(encode({"type": "bye"}))
        except Exception:  # noqa: BLE001 - ending anyway
            pass


class BotPool:
    """The processes of every entrant in one worker, by (entrant, seat process k); `make`
    builds the `BotProcess` of (entrant, k) the first time it is needed."""

    def __init__(self, make: Callable[[str, int], BotProcess], live: int = LIVE_PER_WORKER) -> None:
        self._make = make
        self.live = live
        self._used: OrderedDict[tuple[str, int], BotProcess] = OrderedDict()  # least recently used first

    def get(self, name: str, k: int) -> BotProcess:
        """Process k of entrant `name` (made if new), now the most recently used."""
        key = (name, k)
        bot = self._used.get(key)
        if bot is None:
            bot = self._used[key] = self._make(name, k)
        self._used.move_to_end(key)
        return bot

    def made(self, name: str, k: int) -> BotProcess | None:
        """Process k of entrant `name` if it was made (running or not), else None."""
        return self._used.get((name, k))

    def of(self, name: str) -> list[BotProcess]:
        """Every process of entrant `name` made so far (running or not)."""
        return [b for (n, _), b in self._used.items() if n == name]

    def __iter__(self) -> Iterator[BotProcess]:
        return iter(list(self._used.values()))

    def trim(self, keep: int = 0) -> list[BotProcess]:
        """End the least recently used running processes while more than `live` run,
        leaving the `keep` most recently used alone (the game just played); returns
        those ended."""
        running = [b for b in self._used.values() if b.proc is not None]
        ended = []
        for bot in running[:max(0, len(running) - max(self.live, keep))]:
            say_bye(bot)
            bot.stop()
            ended.append(bot)
        return ended
