"""Zoo: a thread burns CPU in a busy loop all the time, while the bot answers every
request correctly after a tenth of a second (so a game costs it seconds of CPU)."""
import threading
import time

import _zoo


def burn():
    x = 0
    while True:
        x += 1


def on_request(msg, n):
    time.sleep(0.1)
    return None


threading.Thread(target=burn, daemon=True).start()
_zoo.serve(on_request)
