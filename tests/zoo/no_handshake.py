"""Zoo: starts, reads its stdin, never answers hello, and ignores SIGTERM."""
import signal
import sys

signal.signal(signal.SIGTERM, signal.SIG_IGN)
for _ in sys.stdin:
    pass
while True:
    signal.pause()
