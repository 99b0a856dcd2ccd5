"""Zoo: dies before the handshake, its last words Markdown, HTML and terminal escapes
meant for whoever reads the leaderboard or the terminal."""
import sys

sys.stderr.write("Error: | forged | 1 | <img src=x onerror=alert(1)> [win](http://e.vil) `x`\x1b]0;pwned\x07\x1b[2J\n")
sys.exit(3)
