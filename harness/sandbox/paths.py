"""The paths a bot's command names, as the host finds them, and the harness's own Python
and package (which a bot whose command is `python` is shown)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Sequence


def under(path: str, folder: str) -> bool:
    """`path` is `folder` or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _path_words(argv: Sequence[str]) -> list[int]:
    """Where the words of a command that may name paths are: each word after the program
    that is not an option, then the program itself when given as a path."""
    return [k for k in range(1, len(argv)) if not argv[k].startswith("-")] + ([0] if argv and "/" in argv[0] else [])


def _joined_paths(argv: Sequence[str], cwd: str | None) -> list[str]:
    """The paths a bot's command names (`_path_words`), as written, joined to its working
    folder (neither normalized nor resolved)."""
    base = cwd or os.getcwd()
    return [os.path.join(base, argv[k]) for k in _path_words(argv)]


def named_path(path: str) -> str:
    """Where the host finds `path`: an absolute path whose folders are resolved as the
    kernel resolves them (through every link, and `..` after the folder it follows), its
    last part kept as named (a link there stays a link). A sandbox shows folders at these
    places only, so a path that goes through `..` or a link on its way is reached this way
    there.

    >>> named_path("/usr/lib/../bin")
    '/usr/bin'
    """
    head, tail = os.path.split(path)
    if tail in ("", ".", ".."):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(head), tail)


def _named_paths(argv: Sequence[str], cwd: str | None) -> list[str]:
    """The paths a bot's command names (`_joined_paths`), each that exists as the host
    finds it (`named_path`); one that does not exist as written."""
    return [named_path(p) if os.path.lexists(p) else p for p in _joined_paths(argv, cwd)]


def command_file(argv: Sequence[str], cwd: str | None) -> str | None:
    """The script or program file a bot's command runs, as an absolute path: the first
    word after the program that names an existing file, else the program itself when it
    is given as a path (`./bot`, `bin/bot`), its folders resolved and a link at its end
    not followed (`named_path`); None for a program found on PATH."""
    # Where the command names it, not where a symlink leads: the folder it is in is the
    # bot's own (writable while it builds), never a link's target elsewhere.
    return next((p for p in _named_paths(argv, cwd) if os.path.isfile(p)), None)


def command_paths(argv: Sequence[str], cwd: str | None) -> list[str]:
    """What a bot's command names on the host, to be shown read-only: the folder of each
    word after the program that is an existing file (its script, a data file), each word
    that is an existing folder, and the program's folder when it is given as a path."""
    out: list[str] = []
    for p in _named_paths(argv, cwd):
        if os.path.isfile(p):
            out.append(os.path.dirname(os.path.realpath(p)))
        elif os.path.isdir(p) and os.path.realpath(p) != "/":
            out.append(os.path.realpath(p))
    return out


def sandbox_argv(argv: Sequence[str], cwd: str | None) -> list[str]:
    """`argv` as a sandbox runs it: a word (see `_path_words`) that names an existing path
    through `..` or through a link on its way is replaced by the path the host finds
    (`named_path`; relative to the working folder when it lies inside it), which the
    sandbox shows; every other word is left as written."""
    base = os.path.realpath(cwd or os.getcwd())
    out = list(argv)
    for k in _path_words(argv):
        w = argv[k]
        p = os.path.join(base, w)
        if not os.path.lexists(p):
            continue
        found = named_path(p)
        if found == os.path.normpath(p) and ".." not in w.split("/"):
            continue
        out[k] = os.path.relpath(found, base) if not os.path.isabs(w) and under(found, base) else found
    return out


def command_links(argv: Sequence[str], cwd: str | None, mounts: Sequence[str] = ()) -> tuple[tuple[str, str], ...]:
    """(path, where it leads) for the bot's working folder, each path its command names and
    each of its `mounts` that leads elsewhere through a link (the bot is shown where it
    leads, see `command_paths`)."""
    base = cwd or os.getcwd()
    paths = [base] + _joined_paths(argv, os.path.realpath(base)) + list(mounts)
    out = []
    for p in paths:
        if os.path.lexists(p):
            a, r = os.path.abspath(p), os.path.realpath(p)
            if a != r and (a, r) not in out:
                out.append((a, r))
    return tuple(out)


def python_paths() -> list[str]:
    """What the harness's Python needs: its installation and its environment's packages,
    and the folder of each package installed in development mode (editable)."""
    paths = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    paths.add(os.path.dirname(sys.executable) if not os.path.islink(sys.executable) else
              os.path.dirname(os.path.abspath(sys.executable)))
    return sorted(paths)


def harness_package() -> str:
    """The folder of the installed harness package."""
    return str(Path(__file__).resolve().parent.parent)


def harness_python(argv: Sequence[str]) -> list[str]:
    """`argv` with `python` or `python3` as its first word meaning the harness's own Python."""
    out = list(argv)
    if out and out[0] in ("python", "python3"):
        out[0] = sys.executable
    return out


def uses_harness_python(argv: Sequence[str]) -> bool:
    """Whether a (resolved) command runs the harness's own Python."""
    return bool(argv) and os.path.realpath(argv[0]) in (os.path.realpath(sys.executable), sys.executable)
