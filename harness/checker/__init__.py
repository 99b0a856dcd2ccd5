"""check-bot: a conformance suite for p10/1 bots.

Runs one bot command through scenarios with stacked deals (a phase in the first hand,
Skips and a seat with a skip pending, a Wild hit on a run open at both ends, a tie-break
hand with a seat left out, a reshuffle, tables of 2 and 6, the variants), sends it
errors, plays several games in one process and a whole standard game, checks that it
exits on bye, and reports each check as passed or failed with the exchange that failed
and what to change.

>>> from harness.checker import run_checks  # doctest: +SKIP
>>> report = run_checks(["python", "my_bot.py"], move_ms=1000)  # doctest: +SKIP
>>> report.exit_code  # doctest: +SKIP
0
"""

from .checks import CHECKS, Check
from .context import CheckFailed, Context
from .runner import NAMES, CheckResult, Report, run_checks, select

__all__ = ["CHECKS", "Check", "CheckFailed", "Context", "NAMES", "CheckResult", "Report", "run_checks", "select"]
