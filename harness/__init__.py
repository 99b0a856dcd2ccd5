"""p10-tourney: a tournament harness for Phase 10 bots."""

__version__ = "0.1.0"
