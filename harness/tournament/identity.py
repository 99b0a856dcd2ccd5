"""Entrant identity: an entrant is its name plus a fingerprint of its command and of what
its author controls, so a results folder can tell a bot that changed under an unchanged
name from the bot that played its games.

What counts (`bot_roots`):

- a bot whose command runs a file: the folder the sandbox calls its own (the folder of
  that file, ``python bots/mine/bot.py`` → ``bots/mine``, or its ``cwd`` when the
  tournament file gives one);
- a bot started as a module (``python -m carol.bin.run``): the top package of that module
  as Python finds it from the bot's working folder (``carol/``, all of it), and its own
  folder when the tournament file gives it a ``cwd``;
- a bot that comes with the harness (``python -m harness.bots.strong``): the harness's
  modules it runs, the module itself and every harness module it imports, followed
  through their imports (``harness/players/strong.py``, ``harness/engine/…``).

In a folder, every file is read in a walk in name order, dependency folders such as
``node_modules`` included, except: hidden files and folders (names starting with ``.``),
``__pycache__`` and ``*.pyc``, any folder holding a results folder (``tournament.json``)
or the tournament's own output, what the bot's ``ignore:`` lists, and, for a bot with a
``build:`` command, what its build makes (its ``outputs:``, by default `KIT_OUTPUTS`: the
starter kits' ``build/``, and cargo's ``target/`` and ``Cargo.lock``). So the fingerprint
is the same before and after a build, and from one build to the next.

At most `MAX_FILES` files and `MAX_BYTES` bytes of content are hashed; beyond that a file
counts by its path, size and modification time.
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import hmac
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Iterable, Sequence

from ..referee import BotSpec
from ..sandbox.paths import command_file

MAX_FILES = 20_000
MAX_BYTES = 512 * 1024 * 1024
KIT_OUTPUTS = ("build/", "target/", "Cargo.lock")
"""What a build makes, where a bot with a `build:` declares no `outputs:` (the starter
kits build into ``build/``; cargo also writes ``target/`` and ``Cargo.lock``)."""
_SKIP_DIRS = {"__pycache__"}
_HARNESS = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


class PatternError(ValueError):
    """An `outputs:` or `ignore:` entry that is not a path pattern inside a bot's folder."""


def file_patterns(value: object) -> tuple[str, ...]:
    """`value` (an `outputs:` or `ignore:` list) as patterns: each a path relative to the
    bot's folder with ``/`` between parts, ``*`` and ``?`` as in the shell, a trailing
    ``/`` for folders only; one without an inner ``/`` matches that name at any depth.
    PatternError for anything else."""
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip("/") for p in value):
        raise PatternError(f"must be a list of paths relative to the bot's folder (such as build/ or *.o), not {value!r}")
    for p in value:
        if p.startswith("/") or ".." in p.split("/"):
            raise PatternError(f"{p!r} is not inside the bot's folder (write it relative to it, without ..)")
    return tuple(value)


def _excluded(rel: str, is_dir: bool, patterns: Sequence[str]) -> bool:
    """Whether the file or folder at `rel` (relative to its root) matches one of `patterns`."""
    name = rel.rsplit("/", 1)[-1]
    for p in patterns:
        if p.endswith("/") and not is_dir:
            continue
        p = p.strip("/")
        if fnmatch.fnmatchcase(rel, p) if "/" in p else fnmatch.fnmatchcase(name, p):
            return True
    return False


def _module_origin(module: str, cwd: str) -> str | None:
    """The file Python would run for `python -m module` started in `cwd`, or None; for a
    module of the harness, the harness's own (the one a bot is shown)."""
    mine = _harness_path(module)
    if mine:
        return next((os.path.realpath(f) for f in (mine + ".py", os.path.join(mine, "__main__.py"),
                                                   os.path.join(mine, "__init__.py")) if os.path.isfile(f)), None)
    old = list(sys.path)
    try:
        sys.path.insert(0, cwd)
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    finally:
        sys.path[:] = old
    if found is not None and found.origin and os.path.isfile(found.origin):
        return os.path.realpath(found.origin)
    return None


def _module_argv(spec: BotSpec) -> str | None:
    """The module of a `python -m module` command, or None."""
    argv = list(spec.argv)
    if len(argv) >= 3 and Path(argv[0]).name.startswith("python") and argv[1] == "-m":
        return argv[2]
    return None


def bot_roots(spec: BotSpec) -> list[str]:
    """The folders and files whose content is part of entrant `spec` (see the module):
    folders for a bot of its own, the harness's module files for a bundled one."""
    cwd = spec.cwd or os.getcwd()
    module = _module_argv(spec)
    origin = _module_origin(module, cwd) if module else None
    if module and origin:
        if origin.startswith(_HARNESS + os.sep):
            return harness_closure(origin)
        top = _module_origin(module.split(".")[0], cwd) or origin
        root = os.path.dirname(top)  # a package's folder, or a lone module's
        roots = [root]
        if spec.sandbox.own and spec.cwd and os.path.realpath(spec.sandbox.own) == os.path.realpath(spec.cwd):
            roots.append(os.path.realpath(spec.sandbox.own))
        return _outermost(roots)
    if spec.sandbox.own:
        return [os.path.realpath(spec.sandbox.own)]
    script = command_file(spec.argv, cwd)
    return [os.path.dirname(script) if script else os.path.realpath(cwd)]


def bot_folder(spec: BotSpec) -> str | None:
    """The first of `bot_roots` as a folder (the folder of a bundled bot's module)."""
    first = bot_roots(spec)[0]
    return first if os.path.isdir(first) else os.path.dirname(first)


def _outermost(paths: Iterable[str]) -> list[str]:
    """`paths` without those inside another of them."""
    out: list[str] = []
    for p in sorted(set(paths), key=len):
        if not any(p == o or p.startswith(o + os.sep) for o in out):
            out.append(p)
    return out


def harness_closure(origin: str) -> list[str]:
    """The harness's module files that running the module file `origin` loads: itself,
    its packages' ``__init__.py``, and every harness module it imports, followed through
    their imports (read from the source): `origin` first, the others in name order."""
    seen: set[str] = set()
    todo = [origin]
    while todo:
        path = todo.pop()
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        todo += _package_inits(path)
        todo += _imported(path)
    return [origin, *sorted(seen - {origin})]


def _package_inits(path: str) -> list[str]:
    """The ``__init__.py`` of each harness package from `path`'s folder up."""
    out = []
    folder = os.path.dirname(path)
    while folder.startswith(_HARNESS + os.sep) or folder == _HARNESS:
        out.append(os.path.join(folder, "__init__.py"))
        if folder == _HARNESS:
            break
        folder = os.path.dirname(folder)
    return out


_PARSED: dict[str, tuple[bytes, list[str]]] = {}
"""`_imported`'s answers by file, with the source they were read from: a file is parsed
again only when its content changed (a tournament fingerprints its bundled bots at every
start, and `verify` and a resume again)."""


def _imported(path: str) -> list[str]:
    """The files of the harness modules the module file `path` imports."""
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError:
        return []
    known = _PARSED.get(path)
    if known is None or known[0] != source:
        known = _PARSED[path] = (source, _imports_in(path, source))
    return list(known[1])


def _imports_in(path: str, source: bytes) -> list[str]:
    """The files of the harness modules that `source`, the module file `path`, imports."""
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError):
        return []
    package = os.path.dirname(path)
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [_harness_path(a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = os.path.dirname(base)
                mod = os.path.join(base, *(node.module or "").split(".")) if node.module else base
            else:
                mod = _harness_path(node.module or "")
            names.append(mod)
            names += [os.path.join(mod, a.name) for a in node.names]  # `from . import x`: a module x
    out = []
    for m in names:
        if m and m.startswith(_HARNESS):
            out += [f for f in (m + ".py", os.path.join(m, "__init__.py")) if os.path.isfile(f)]
    return out


def _harness_path(module: str) -> str:
    """Where the module `module` of the harness would be (without ``.py``), or ""."""
    parts = module.split(".")
    return os.path.join(os.path.dirname(_HARNESS), *parts) if parts[0] == "harness" else ""


def excluded_patterns(spec: BotSpec) -> tuple[str, ...]:
    """What of entrant `spec`'s folder is not part of it: its `ignore:`, and, when it has a
    build, what its build makes (its `outputs:`, else `KIT_OUTPUTS`)."""
    box = spec.sandbox
    outputs = (box.outputs if box.outputs is not None else KIT_OUTPUTS) if box.build else ()
    return tuple(box.ignore) + tuple(outputs)


class _Digest:
    """SHA-256 over files, bounded (see the module)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.files = 0
        self.budget = MAX_BYTES

    def add(self, path: str, rel: str) -> None:
        st = os.stat(path)
        self.files += 1
        if self.files <= MAX_FILES and st.st_size <= self.budget:
            self.h.update(f"{rel}\0{st.st_size}\0".encode())
            self.budget -= st.st_size
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    self.h.update(chunk)
        else:
            self.h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        self.h.update(b"\n")

    def folder(self, folder: str, skipped: set[str], patterns: Sequence[str]) -> None:
        for root, dirs, names in os.walk(folder):
            rel_root = os.path.relpath(root, folder).replace(os.sep, "/")
            rel_of = (lambda n: n) if rel_root == "." else (lambda n: f"{rel_root}/{n}")
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                             and not _excluded(rel_of(d), True, patterns)
                             and os.path.realpath(os.path.join(root, d)) not in skipped
                             and not os.path.exists(os.path.join(root, d, "tournament.json")))
            for name in sorted(names):
                path = os.path.join(root, name)
                if name.startswith(".") or name.endswith(".pyc") or not os.path.isfile(path) \
                        or _excluded(rel_of(name), False, patterns):
                    continue
                self.add(path, rel_of(name))


def folder_digest(folder: str | None, skip: Iterable[Path] = (), patterns: Sequence[str] = ()) -> str:
    """SHA-256 of the files under `folder` (paths, sizes and contents, bounded: see the
    module), less those matching `patterns` (`file_patterns`); the digest of nothing if
    there is no folder."""
    d = _Digest()
    if folder and os.path.isdir(folder):
        d.folder(folder, {os.path.realpath(p) for p in skip}, patterns)
    return d.h.hexdigest()


def roots_digest(roots: Sequence[str], skip: Iterable[Path] = (), patterns: Sequence[str] = ()) -> str:
    """SHA-256 of `roots` (`bot_roots`): each folder's `folder_digest`, each file's content."""
    h = hashlib.sha256()
    for i, r in enumerate(roots):
        if os.path.isdir(r):
            h.update(f"{i}\0{folder_digest(r, skip, patterns)}\n".encode())
        elif os.path.isfile(r):
            d = _Digest()
            d.add(r, os.path.relpath(r, os.path.dirname(_HARNESS)))
            h.update(d.h.hexdigest().encode() + b"\n")
    return h.hexdigest()


def fingerprint(spec: BotSpec, skip: Iterable[Path] = (), env_key: bytes | None = None) -> str:
    """The fingerprint of entrant `spec`: SHA-256 of its command and environment as the
    tournament file gives them and of what it is made of (`bot_roots`, less
    `excluded_patterns`). With `env_key` the environment's values count by their
    HMAC-SHA-256 under that key (so a published fingerprint cannot be tried against guesses
    of them); without it, or with no environment, as themselves (the fingerprints of
    versions before the key)."""
    env: dict[str, str] = dict(sorted(spec.env.items()))
    shown: object = env
    if env and env_key is not None:
        shown = {"hmac-sha256": hmac.new(env_key, json.dumps(env, sort_keys=True).encode(), "sha256").hexdigest()}
    words = json.dumps({"cmd": list(spec.argv), "env": shown}, sort_keys=True)
    h = hashlib.sha256(words.encode())
    roots = bot_roots(spec)
    base = [r for r in roots if not os.path.isfile(r)]
    if len(roots) == 1 and base:  # one folder: as before
        h.update(b"\n" + folder_digest(base[0], skip, excluded_patterns(spec)).encode())
    else:
        h.update(b"\n" + roots_digest(roots, skip, excluded_patterns(spec)).encode())
    return h.hexdigest()
