"""Zoo: plays well but floods its stderr without pause (a thread writes all the time)."""
import os
import threading

import _zoo


def flood():
    line = b"zoo stderr_flood: " + b"blah " * 200 + b"\n"
    while True:
        try:
            os.write(2, line * 64)
        except OSError:
            return


threading.Thread(target=flood, daemon=True).start()
_zoo.serve()
