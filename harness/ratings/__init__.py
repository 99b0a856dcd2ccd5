"""Ratings and statistics: from the places of the games to the numbers of the standings.

It owns TrueSkill, rated game by game (`trueskill`); the batch Plackett–Luce rating θ that
orders the boards (`plackett_luce`) and its bootstrap intervals over deal groups
(`bootstrap`); the paired deal outcomes (`paired`) and the tests behind the settled marks
(`significance`); the luck share (`luck`); early stopping's settled check and SPRT
(`stopping`, `sprt`); the running aggregates of the games (`tally`) and the leaderboard
built from them (`standings`, with its ``statistics`` section from `section`). All of it
reads the played games as compact arrays (`games`). It reads and writes no files and
knows nothing of the tournament: it is given the games and returns numbers.
"""
