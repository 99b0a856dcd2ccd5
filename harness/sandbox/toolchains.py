"""Toolchains from the languages' usual installers, shown to every sandbox read-only.

A sandbox shows the system's folders (`SYSTEM_PATHS`) and puts `SANDBOX_PATH` on its
PATH. A compiler or runtime installed the usual way for its language lives elsewhere: in
`~/.cargo/bin` and `~/.rustup` (rustup), a Go tarball's `go/bin` (`/usr/local/go`),
`~/.sdkman/candidates/*/current` (SDKMAN), `~/.nvm/versions/node/*` (nvm). Each such
installation found on the harness's own PATH is shown at the same place, read-only, its
`bin` folder on the sandbox's PATH in the order the harness's PATH has it (so a command or
build resolves the same program in the sandbox as on the host), with what it needs in the
environment (`RUSTUP_HOME` for rustup's programs, as a sandbox's HOME is its scratch).

Only the installation is shown: of `~/.cargo`, its `bin` folder (not the crates.io token
in `credentials.toml`, nor the download cache).

Where a build fails on a program it does not find, `missing_program` names the program,
where the host has it, and the mount to add.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

from .box import SANDBOX_PATH, SYSTEM_PATHS
from .paths import under


@dataclass(frozen=True)
class Toolchain:
    """One installation: its installer's name, the folder it puts on PATH, the folders a
    sandbox shows of it, and the environment its programs need."""

    installer: str
    bin: str
    shown: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


def _exe(folder: str, name: str) -> bool:
    return os.access(os.path.join(folder, name), os.X_OK)


def _rustup(folder: str, environ: Mapping[str, str]) -> Toolchain | None:
    """`~/.cargo/bin` of rustup: its proxies (cargo, rustc) run the toolchain in RUSTUP_HOME."""
    if not (_exe(folder, "rustup") and _exe(folder, "cargo")):
        return None
    home = environ.get("RUSTUP_HOME") or os.path.join(os.path.dirname(os.path.dirname(folder)), ".rustup")
    home = os.path.realpath(home)
    if not os.path.isdir(home):
        return None
    return Toolchain("rustup", folder, (folder, home), (("RUSTUP_HOME", home),))


def _tarball(folder: str, environ: Mapping[str, str]) -> Toolchain | None:
    """A Go tarball's `go/bin` (`/usr/local/go/bin`, `~/go/bin`'s sdk, `~/sdk/go1.x/bin`)."""
    root = os.path.dirname(folder)
    if os.path.basename(folder) == "bin" and _exe(folder, "go") and os.path.isfile(os.path.join(root, "VERSION")):
        return Toolchain("go", folder, (root,))
    return None


def _versioned(folder: str, environ: Mapping[str, str]) -> Toolchain | None:
    """SDKMAN's `candidates/<tool>/<version>/bin` and nvm's `versions/node/<version>/bin`
    (reached through SDKMAN's `current` link: the version it leads to is shown)."""
    parts = folder.split(os.sep)
    for marker, installer in ((".sdkman", "SDKMAN"), (".nvm", "nvm")):
        if marker in parts and os.path.basename(folder) == "bin":
            return Toolchain(installer, folder, (os.path.dirname(folder),))
    return None


_KINDS = (_rustup, _tarball, _versioned)


def find_toolchains(path: str, environ: Mapping[str, str]) -> tuple[Toolchain, ...]:
    """The installations (`Toolchain`) whose `bin` folder is on `path`, in its order."""
    out: list[Toolchain] = []
    for entry in dict.fromkeys(p for p in path.split(os.pathsep) if p and os.path.isabs(p)):
        folder = os.path.realpath(entry)
        if not os.path.isdir(folder) or any(t.bin == folder for t in out):
            continue
        found = next((t for t in (kind(folder, environ) for kind in _KINDS) if t is not None), None)
        if found is not None:
            out.append(found)
    return tuple(out)


@lru_cache(maxsize=1)
def host_toolchains() -> tuple[Toolchain, ...]:
    """`find_toolchains` on the harness's own PATH and environment."""
    return find_toolchains(os.environ.get("PATH", ""), os.environ)


def sandbox_path(toolchains: Sequence[Toolchain], host_path: str | None = None) -> str:
    """A sandbox's PATH: `SANDBOX_PATH` with the `bin` of each of `toolchains` before the
    first system folder the host's PATH has after it (at the end where it has none)."""
    host = [p for p in (host_path if host_path is not None else os.environ.get("PATH", "")).split(os.pathsep) if p]
    base = SANDBOX_PATH.split(os.pathsep)
    out = list(base)
    for t in toolchains:
        at = next((k for k, p in enumerate(host) if os.path.realpath(p) == t.bin), len(host))
        later = [p for p in host[at:] if p in base]
        out.insert(out.index(later[0]) if later else len(out), t.bin)
    return os.pathsep.join(dict.fromkeys(out))


def toolchain_env(toolchains: Sequence[Toolchain], host_path: str | None = None) -> dict[str, str]:
    """What a sandbox's environment holds for `toolchains`: PATH and their variables."""
    env = {"PATH": sandbox_path(toolchains, host_path)}
    for t in toolchains:
        env.update(dict(t.env))
    return env


_NOT_FOUND = (re.compile(r"(?:^|[\s:])([\w.+-]+): (?:command )?not found"),
              re.compile(r"exec: \"?([\w.+-]+)\"?: executable file not found"),
              re.compile(r"([\w.+-]+): No such file or directory"))


def missing_program(output: str, shown: Sequence[str], env_path: str | None = None) -> str | None:
    """Where a build's `output` says a program was not found that the host's PATH has, a
    sentence naming it, where the host has it and the mount to add (None otherwise);
    `shown`: the folders the sandbox showed, `env_path`: the PATH it ran with."""
    shown = (*shown, *(p for t in host_toolchains() for p in t.shown))
    for rx in _NOT_FOUND:
        for name in dict.fromkeys(m.group(1) for m in rx.finditer(output)):
            found = shutil.which(name)
            if not found:
                continue
            real = os.path.realpath(found)
            folder = os.path.dirname(found)
            if any(under(real, s) for s in (*SYSTEM_PATHS, *shown)) and folder in (env_path or SANDBOX_PATH).split(":"):
                continue
            install = _installation(folder)
            return (f"{name!r} is {found} on this host, which the sandbox does not show or has not on its PATH: "
                    f"add `mounts: [{install}]` and `env: {{PATH: {folder}:{SANDBOX_PATH}}}` to the bot's entry "
                    "in the tournament file")
    return None


def _installation(folder: str) -> str:
    """The folder to mount for a program in `folder`: the installation it belongs to (the
    parent of a `bin` folder), else `folder`."""
    return os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder
