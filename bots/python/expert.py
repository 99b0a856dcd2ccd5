#!/usr/bin/env python3
"""Expert Phase 10 bot: determinized Monte Carlo search. For each decision it deals the
cards it cannot see at random (consistently with everything public), plays the hand out
in-process with a fast policy for each of the strong player's best moves, and keeps the
move with the best outcome.

Usage: expert.py [--ms N] [--seed S] [--rollouts K] [--clock cpu|wall] [--wall-ms W]
(N ms of its own CPU time per decision, default 150; at most W ms of wall-clock time,
default 400, and 40 % of the game's move_ms)
"""

from harness.bots.expert import main

if __name__ == "__main__":
    main()
