"""Zoo: plays well, but a thread burns CPU in a busy loop all the time."""
import threading

import _zoo


def burn():
    x = 0
    while True:
        x += 1


threading.Thread(target=burn, daemon=True).start()
_zoo.serve()
