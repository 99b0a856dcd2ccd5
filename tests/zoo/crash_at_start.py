"""Zoo: dies before the handshake, every time it is started."""
import sys

sys.stderr.write("zoo crash_at_start: segmentation fault (not really)\n")
sys.exit(3)
