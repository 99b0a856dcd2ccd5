"""What of the host a published file may show: no value of a bot's `env:`, and no absolute
path of the host's folders.

A tournament's folders are shown relative to its *root*, `<host>/...`: the folder that
holds both the tournament file and `base_dir` (the tournament file's folder where that
common folder would be `/`). A path outside the root is shown as `<host>/…/NAME`, and the
Python that runs the harness (a virtual environment's folder, say) as `<python>`.
`Redactor` applies the same to free text (a bot's stderr quoted in a fault, a message
naming a file) and to the bytes of a replay.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterable, Mapping

WITHHELD = "<withheld>"
HOST = "<host>"
PYTHON = "<python>"
#: Shorter `env:` values are not looked for in free text (they would match ordinary words
#: and numbers); the published config shows none of them, whatever their length.
MIN_SECRET = 8
#: The shortest piece of a secret that is masked where a text was cut (a stderr tail that
#: starts in the middle of it, a line cut short after its start).
MIN_PIECE = 4


def host_root(tournament_dir: str, base: str) -> str:
    """The folder a tournament's paths are shown relative to (see the module's doc)."""
    t, b = os.path.realpath(tournament_dir), os.path.realpath(base)
    try:
        common = os.path.commonpath([t, b])
    except ValueError:
        common = t
    return t if common == os.sep else common


def shown_path(path: str, root: str) -> str:
    """`path` as a published file shows it: `<host>/REL` under `root`, `<host>/…/NAME`
    elsewhere (a relative path is left as it is)."""
    if not os.path.isabs(path):
        return path
    p = os.path.normpath(path)
    if root and (p == root or p.startswith(root.rstrip(os.sep) + os.sep)):
        rel = os.path.relpath(p, root)
        return HOST if rel == "." else f"{HOST}/{rel}"
    return f"{HOST}/…/{os.path.basename(p) or '…'}"


def forms(secret: str) -> list[str]:
    """`secret` as a bot or an error may quote it: as it is, escaped by JSON (either way)
    and by Python's `repr`, and each of those escaped once more by JSON (a repr inside a
    JSON string); longest first."""
    once = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1], repr(secret)[1:-1]}
    twice = {json.dumps(f, ensure_ascii=e)[1:-1] for f in once for e in (True, False)}
    return sorted(once | twice, key=len, reverse=True)


class Redactor:
    """Masks secrets (each with `<withheld>`) and host folders (each with its shown form).

    A bot's own bytes are masked as they are read (`line`: its stdout lines; `text`: its
    stderr before a fault quotes it), before anything quotes, escapes or cuts them; what
    the harness writes is masked of host folders only (`folder_lines`), so that a value
    that is also an ordinary word of the harness's own JSON cannot change it. A value that
    the published config shows anyway (an entrant's name, say) is no secret: `public`."""

    def __init__(self, secrets: Iterable[str] = (), folders: Mapping[str, str] | None = None,
                 public: str = "") -> None:
        self.secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET and s not in public}, key=len, reverse=True)
        self._forms = sorted({f for s in self.secrets for f in forms(s)}, key=len, reverse=True)
        self._form_bytes = [f.encode("utf-8", "surrogatepass") for f in self._forms]
        self.folders = sorted((folders or {}).items(), key=lambda kv: len(kv[0]), reverse=True)
        self.active = bool(self.secrets or self.folders)
        self._folder_bytes: list[tuple[bytes, bytes]] = []
        for old, new in self.folders:  # as JSON writes them (escaped, and not), longest first
            for form in dict.fromkeys([old, json.dumps(old)[1:-1], json.dumps(old, ensure_ascii=False)[1:-1]]):
                self._folder_bytes.append((form.encode("utf-8", "surrogatepass"), new.encode()))

    @classmethod
    def for_bots(cls, envs: Iterable[Mapping[str, str]], root: str, folders: Iterable[str] = (),
                 public: str = "", host_env: bool = False) -> "Redactor":
        """The redactor of a field of bots: their `env:` values (and with `host_env`, the
        values of the harness's own environment, which a bot without a sandbox inherits),
        the root and the bots' folders (each shown by `shown_path`), and the harness's
        Python."""
        secrets = [v for env in envs for v in env.values()]
        if host_env:
            secrets += list(os.environ.values())
        shown: dict[str, str] = {}
        for f in [root, *folders]:
            if f and os.path.isabs(f) and os.path.normpath(f) != os.sep:
                real = os.path.normpath(f)
                shown[real] = shown_path(real, root)
                shown.setdefault(os.path.realpath(real), shown_path(os.path.realpath(real), root))
        prefix = os.path.normpath(sys.prefix)
        if prefix not in ("/", "/usr", "/usr/local") and not any(prefix == k for k in shown):
            shown[prefix] = PYTHON
        return cls(secrets, shown, public)

    def line(self, data: bytes) -> bytes:
        """A line a bot wrote, with every secret masked in any of its `forms`."""
        for form in self._form_bytes:
            if form in data:
                data = data.replace(form, WITHHELD.encode())
        return data

    def text(self, s: str) -> str:
        """`s` with every secret (in any of its `forms`) and host folder masked, and any
        piece of a secret of at least MIN_PIECE characters left at either end of `s`
        (where it was cut)."""
        if not self.active or not s:
            return s
        for form in self._forms:
            if form in s:
                s = s.replace(form, WITHHELD)
        for secret in self.secrets:
            s = _mask_cut(s, secret)
        for folder, shown in self.folders:
            if folder in s:
                s = s.replace(folder, shown)
        return s

    def data(self, value: Any) -> Any:
        """`value` (strings, lists and dicts of them) with every string passed to `text`."""
        if not self.active:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.data(v) for v in value]
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        return value

    def folder_lines(self, lines: list[bytes]) -> list[bytes]:
        """JSON lines the harness wrote (a replay) with every host folder masked as JSON
        writes it (the bots' lines in it were masked of secrets as they were read)."""
        if not self._folder_bytes:
            return lines
        out = []
        for line in lines:
            for old, new in self._folder_bytes:
                if old in line:
                    line = line.replace(old, new)
            out.append(line)
        return out


def _mask_cut(s: str, secret: str) -> str:
    """`s` with a piece of `secret` cut at its start (a suffix of it) or at its end (a
    prefix of it) masked."""
    for k in range(len(secret) - 1, MIN_PIECE - 1, -1):
        if s.startswith(secret[-k:]):
            s = WITHHELD + s[k:]
            break
    for k in range(len(secret) - 1, MIN_PIECE - 1, -1):
        if s.endswith(secret[:k]):
            s = s[:-k] + WITHHELD
            break
    return s
