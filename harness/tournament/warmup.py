"""What publishing the results needs, made ready while the games are played.

The rating, statistics and site modules (SciPy among them) and the site's templates take
about half a second to load, and a run needs none of them before its first publish. The
main process mostly waits for its workers while the games are played, so they are loaded
then, in a thread of their own (`start`, after the workers are forked); `settle` waits for
it to end, before a fork (a child would inherit an import lock the thread holds).
"""

from __future__ import annotations

import threading

_thread: threading.Thread | None = None


def _load(site: bool) -> None:
    try:
        from . import board  # noqa: F401  (the ratings, statistics, SciPy)
        if not site:
            return
        from ..report.site.build import environment

        env = environment()
        for name in env.list_templates(extensions=["html"]):
            env.get_template(name)
    except Exception:  # noqa: BLE001  what fails here fails again where it is used, and is reported there
        pass


def start(site: bool = True) -> None:
    """Load them in the background (once a process); the site's templates only where a
    site is to be built."""
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_load, args=(site,), name="p10-warmup", daemon=True)
        _thread.start()


def settle() -> None:
    """Wait for the loading started by `start`, if any, to end."""
    if _thread is not None:
        _thread.join()
