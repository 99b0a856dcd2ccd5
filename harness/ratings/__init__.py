"""Ratings and statistics: from the games' places to the numbers of the standings.

It owns TrueSkill, rated game by game (`trueskill`), the batch Plackett–Luce rating θ
that orders the boards (`plackett_luce`), its
bootstrap intervals over deal groups (`bootstrap`), the paired deal outcomes
(`paired`) and the tests behind the settled marks (`significance`), the luck share
(`luck`), early stopping's settled check and SPRT (`stopping`, `sprt`), and the
leaderboard's ``statistics`` section (`section`). All of it reads the played games as
compact arrays (`games`). Nothing here reads or writes files or knows the tournament:
it is given the games and returns numbers.
"""
