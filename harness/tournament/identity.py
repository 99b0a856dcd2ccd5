"""Entrant identity: an entrant is its name plus a fingerprint of its command and the
files of its folder, so a results folder can tell a bot that changed under an unchanged
name from the bot that played its games.

Its folder is the one the sandbox calls its own: the folder of the file its command runs
(``python bots/mine/bot.py`` → ``bots/mine``), or its ``cwd`` when the tournament file
gives one. A bot started as a module (``python -m harness.bots.greedy``) is the folder of
that module's file (for the bots that come with the harness: ``harness/bots``), found the
way Python would find it from the bot's working folder.

What is read, in a bounded walk of that folder in name order: every file except hidden
ones (names starting with ``.``), ``__pycache__`` folders and compiled ``*.pyc`` files,
and any folder holding a results folder (``tournament.json``) or the tournament's own
output. At most `MAX_FILES` files and `MAX_BYTES` bytes of content are hashed; beyond
that a file counts by its path and size only.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Iterable

from ..referee import BotSpec
from ..sandbox.paths import command_file

MAX_FILES = 2000
MAX_BYTES = 64 * 1024 * 1024
_SKIP_DIRS = {"__pycache__", "node_modules"}


def bot_folder(spec: BotSpec) -> str | None:
    """The folder whose files are part of entrant `spec` (see the module)."""
    argv = list(spec.argv)
    cwd = spec.cwd or os.getcwd()
    if len(argv) >= 3 and Path(argv[0]).name.startswith("python") and argv[1] == "-m":
        module = argv[2]
        old = list(sys.path)
        try:
            sys.path.insert(0, cwd)
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        finally:
            sys.path[:] = old
        if found is not None and found.origin and os.path.isfile(found.origin):
            return os.path.dirname(os.path.realpath(found.origin))
    if spec.sandbox.own:
        return spec.sandbox.own
    script = command_file(argv, cwd)
    return os.path.dirname(script) if script else os.path.realpath(cwd)


def folder_digest(folder: str | None, skip: Iterable[Path] = ()) -> str:
    """SHA-256 of the files under `folder` (paths, sizes and contents, bounded: see the
    module); the digest of nothing if there is no folder."""
    h = hashlib.sha256()
    if not folder or not os.path.isdir(folder):
        return h.hexdigest()
    skipped = {os.path.realpath(p) for p in skip}
    files = 0
    budget = MAX_BYTES
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                         and os.path.realpath(os.path.join(root, d)) not in skipped
                         and not os.path.exists(os.path.join(root, d, "tournament.json")))
        for name in sorted(names):
            if name.startswith(".") or name.endswith(".pyc"):
                continue
            path = os.path.join(root, name)
            if not os.path.isfile(path):
                continue
            rel = os.path.relpath(path, folder)
            size = os.path.getsize(path)
            h.update(f"{rel}\0{size}\0".encode())
            files += 1
            if files <= MAX_FILES and size <= budget:
                budget -= size
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
            h.update(b"\n")
    return h.hexdigest()


def fingerprint(spec: BotSpec, skip: Iterable[Path] = (), env_key: bytes | None = None) -> str:
    """The fingerprint of entrant `spec`: SHA-256 of its command and environment as the
    tournament file gives them and of the files of its folder (`bot_folder`). With
    `env_key` the environment's values count by their HMAC-SHA-256 under that key (so a
    published fingerprint cannot be tried against guesses of them); without it, or with
    no environment, as themselves (the fingerprints of versions before the key)."""
    env: dict[str, str] = dict(sorted(spec.env.items()))
    shown: object = env
    if env and env_key is not None:
        shown = {"hmac-sha256": hmac.new(env_key, json.dumps(env, sort_keys=True).encode(), "sha256").hexdigest()}
    words = json.dumps({"cmd": list(spec.argv), "env": shown}, sort_keys=True)
    h = hashlib.sha256(words.encode())
    h.update(b"\n" + folder_digest(bot_folder(spec), skip).encode())
    return h.hexdigest()
