"""Where the bots of a tournament are, on this machine: their folders checked and made
absolute, each bot's own folder, and what its sandbox hides from it (the results folder,
the tournament file, the other bots' folders), its bubblewrap options worked out once so
that a mistake is a config error before any game. The file-system half of reading a
config (`config.resolve_config`); `config.parse_config` is the pure half. And how they will
be contained here (`sandbox_state`), light to load: `play`, `check-bot` and `ask` need it
and nothing of a tournament's run."""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..ledger.names import CONCEAL
from ..referee import BotSpec
from ..referee.redact import host_root
from ..sandbox.box import SandboxError
from ..sandbox.cgroups import cgroups
from ..sandbox.modes import describe, resolve_mode
from ..sandbox.options import bwrap_options
from ..sandbox.paths import command_file, command_links, harness_python


class ConfigError(ValueError):
    """A tournament configuration that cannot be run."""


def err(source: str, key: str, what: str) -> ConfigError:
    """A `ConfigError` naming the file (`source`), the key and what is wrong."""
    return ConfigError(f"{source}: {key}: {what}")


def placed_root(src: str, home: str) -> str:
    """The folder the published files show the host's paths relative to
    (`redact.host_root`): of the tournament file's folder and the bots' base folder."""
    base = str(Path(home).resolve())
    return host_root(str(Path(src).resolve().parent) if not src.startswith("<") else base, base)


def place_bots(bots: Sequence[BotSpec], cwds: Sequence[str | None], home: str, src: str,
               output: Path | None) -> list[BotSpec]:
    """`bots` as parsed (folders joined to `home` as written; `cwds`: each bot's `cwd:` as
    written, or None) placed here: folders absolute and checked, mounts resolved, each
    bot's own folder (its `cwd:` if given, else its command's folder), then hidden from
    each other (`hide_from_each_other`)."""
    base = Path(home).resolve()
    out = []
    for i, (b, cwd) in enumerate(zip(bots, list(cwds) + [None] * (len(bots) - len(cwds)))):
        where = f"bots[{i}]"
        cwd_path = base / cwd if cwd else base
        if not cwd_path.is_dir():
            raise err(src, f"{where}.cwd", f"{str(cwd_path)!r} is not a directory")
        mounts = []
        for k, m in enumerate(b.sandbox.mounts):
            p = Path(m).resolve()
            if not p.exists():
                raise err(src, f"{where}.mounts[{k}]", f"{str(p)!r} does not exist")
            if p == Path("/"):
                raise err(src, f"{where}.mounts[{k}]", "is the root folder; list the folders the bot needs")
            mounts.append(str(p))
        if cwd:
            own = str(cwd_path.resolve())
        else:
            script = command_file(list(b.argv), str(cwd_path))
            own = os.path.dirname(script) if script else str(cwd_path.resolve())
        out.append(replace(b, cwd=str(cwd_path), sandbox=replace(b.sandbox, mounts=tuple(mounts), own=own)))
    return hide_from_each_other(out, src, output)


def contain(specs: list[BotSpec], mode: str, build: Mapping[str, str] | None = None) -> list[BotSpec]:
    """Bots given on the command line (`play`, `check-bot`) in sandbox `mode`: each bot's
    own folder is its command's folder (its cwd when it has none), hidden from the others;
    `build` maps entrant names to a build command."""
    out = []
    for b in specs:
        cwd = b.cwd or os.getcwd()
        script = command_file(b.argv, cwd)
        own = os.path.dirname(script) if script else os.path.realpath(cwd)
        cmd = (build or {}).get(b.name)
        out.append(replace(b, sandbox=replace(b.sandbox, mode=mode, own=own,
                                              build=tuple(shlex.split(cmd)) if cmd else None)))
    return hide_from_each_other(out, "<command line>", None)


def hide_from_each_other(bots: list[BotSpec], src: str, output: Path | None) -> list[BotSpec]:
    """Each bot's sandbox hides the results folder, the tournament file and its folder, and
    the other bots' own folders; a `mounts:` entry may not open any of these."""
    tournament = Path(src).resolve() if src and not src.startswith("<") else None
    common = [str(output.resolve())] if output is not None else []
    if tournament is not None:
        common += [str(tournament.parent), str(tournament)]
    secret = tuple(str(p) for p in ([output.resolve()] if output is not None else [])
                   + ([tournament] if tournament is not None else []))
    out = []
    for i, b in enumerate(bots):
        others = [o.sandbox.own for o in bots if o.sandbox.own and o.sandbox.own != b.sandbox.own]
        for k, m in enumerate(b.sandbox.mounts):
            for h in [c for c in common if tournament is None or c != str(tournament.parent)]:
                if Path(h).is_relative_to(m) or Path(m).is_relative_to(h):
                    raise err(src, f"bots[{i}].mounts[{k}]", f"{m!r} would show the bot {h!r}")
        hide = tuple(dict.fromkeys(common + [o for o in others if o]))
        build = harness_python(b.sandbox.build) if b.sandbox.build else None
        links = tuple(dict.fromkeys(command_links(b.resolved_argv(), b.cwd, b.sandbox.mounts)
                                    + (command_links(build, b.cwd) if build else ())))
        spec = replace(b, sandbox=replace(b.sandbox, hide=hide, secret=secret, conceal=CONCEAL, links=links))
        if spec.sandbox.mode != "none":
            try:  # what the bot and its build would be shown (and may write while it builds), checked now
                bwrap_options(spec.resolved_argv(), spec.cwd, spec.sandbox, None, writable_own=build is not None)
                if build:
                    bwrap_options(build, spec.cwd, spec.sandbox, None, writable_own=True)
            except SandboxError as e:
                raise err(src, f"bots[{i}]", f"({b.name}) {e}") from None
        out.append(spec)
    return out


def sandbox_state(bots: Sequence[BotSpec]) -> dict[str, Any]:
    """The one place that decides how `bots` will be contained here (a tournament's, or
    the bots of `play`, `check-bot` and `ask`): {"mode", "cgroups", "per_process_only", "note",
    "bots": {entrant: "bwrap"|"none"}}. Raises `SandboxError` where a bot asks for bwrap
    and bubblewrap cannot run. The note ("bots ran without a sandbox", limits held per
    process only) is what is warned about and what the results record."""
    modes = {b.name: resolve_mode(b.sandbox.mode) for b in bots}
    limited = any(b.limits.memory_mb or b.limits.processes for b in bots)
    backend, why = cgroups() if limited else (None, "")
    state = describe(modes.values(), backend.kind if backend else None, why)
    if not limited:
        state["per_process_only"] = []
        state["note"] = str(state["note"]).split("; limits held")[0]
    return {**state, "bots": modes}
