"""The page cache as a channel between a bot's processes: what the seccomp filter refuses
(asking which pages are cached, putting them out of it), the private copy of a bot's own
folder each of its processes is shown, and a hostile bot that keeps its dealt hands in
page residency to read its opponent's in the deal's next seat rotation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.referee import BotProcess, BotSpec
from harness.referee.process import BotStartError
from harness.sandbox import private
from harness.sandbox.box import Sandbox
from harness.sandbox.modes import bwrap_available
from harness.sandbox.options import prepare
from test_sandbox import ABIS, ALLOW, ENOTSUP, EPERM, GRANTED, _run_bpf, syscall_numbers

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from residency_channel import recovered, residency_tournament  # noqa: E402 - the hostile bot's tournament
EINVAL = 0x00050016
CACHESTAT = 451  # newer than Debian 12's headers; one number on every ABI
OK, WHY = bwrap_available()
needs_bwrap = pytest.mark.skipif(not OK, reason=f"the sandbox cannot run here: {WHY}")


# ----- the filter -------------------------------------------------------------------------------


@pytest.mark.parametrize("machine, arch", ABIS)
def test_seccomp_refuses_what_shows_or_drops_the_page_cache_in_games(machine: str, arch: int) -> None:
    """In games `mincore`, `cachestat` and `process_madvise` fail with EPERM; `preadv2` and
    `pwritev2` with RWF_NOWAIT (in args[5], on every ABI) with EOPNOTSUPP, without it
    they run; `madvise`'s MADV_COLD and MADV_PAGEOUT fail with EINVAL, its other advice
    runs; `readahead` returns 0 without being made. A build (no deal to hide) runs them."""
    from harness.sandbox import seccomp

    nr = {**syscall_numbers(arch), "cachestat": CACHESTAT}
    game, build = seccomp.program(machine), seccomp.program(machine, build=True)
    assert game is not None and build is not None
    for name in ("mincore", "cachestat", "process_madvise"):
        assert _run_bpf(game, nr[name], arch) == EPERM and _run_bpf(build, nr[name], arch) == ALLOW, name
    for name in ("preadv2", "pwritev2"):
        for flags, verdict in ((8, ENOTSUP), (8 | 1, ENOTSUP), (0, ALLOW), (1, ALLOW), (2, ALLOW), (4, ALLOW)):
            assert _run_bpf(game, nr[name], arch, (3, 0x1000, 1, 0, 0, flags)) == verdict, (name, flags)
            assert _run_bpf(build, nr[name], arch, (3, 0x1000, 1, 0, 0, flags)) == ALLOW, (name, flags)
    for advice, verdict in ((20, EINVAL), (21, EINVAL), (4, ALLOW), (8, ALLOW), (3, ALLOW), (14, ALLOW), (22, ALLOW)):
        assert _run_bpf(game, nr["madvise"], arch, (0x1000, 4096, advice)) == verdict, advice
    assert _run_bpf(build, nr["madvise"], arch, (0x1000, 4096, 21)) == ALLOW
    assert _run_bpf(game, nr["readahead"], arch) == GRANTED and _run_bpf(build, nr["readahead"], arch) == ALLOW


PROBE = r"""
import ctypes, errno, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
NR = {"x86_64": (187, 440), "aarch64": (213, 440)}[os.uname().machine]
def err():
    return errno.errorcode.get(ctypes.get_errno())
fd = os.open(sys.executable, os.O_RDONLY)
addr = libc.mmap(None, 1 << 16, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
vec = (ctypes.c_ubyte * 16)()
print("mincore", libc.mincore(addr, 1 << 16, vec), err())
print("cachestat", libc.syscall(451, fd, None, None, 0), err())
print("process_madvise", libc.syscall(NR[1], -1, None, 0, 0, 0), err())
for flags in (os.RWF_NOWAIT, 0):
    try:
        print("preadv2", flags, os.preadv(fd, [bytearray(4)], 0, flags))
    except OSError as e:
        print("preadv2", flags, errno.errorcode[e.errno])
for advice in (20, 21, 4, 3):
    print("madvise", advice, libc.madvise(addr, 1 << 16, advice), err())
print("readahead", libc.syscall(NR[0], fd, ctypes.c_long(0), ctypes.c_size_t(1 << 20)))
"""


@needs_bwrap
def test_a_sandboxed_process_cannot_ask_the_page_cache(tmp_path: Path) -> None:
    """In a real sandbox: `mincore`, `cachestat`, `process_madvise` fail with EPERM,
    RWF_NOWAIT with EOPNOTSUPP (a plain `preadv2` reads), MADV_COLD and MADV_PAGEOUT with
    EINVAL (MADV_DONTNEED and MADV_WILLNEED work), and `readahead` returns 0."""
    import platform

    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip(f"no seccomp filter for {platform.machine()}")
    (tmp_path / "probe.py").write_text(PROBE)
    inv = prepare([sys.executable, str(tmp_path / "probe.py")], str(tmp_path), {}, Sandbox(mode="bwrap", own=str(tmp_path)), 64)
    try:
        p = subprocess.run(inv.argv, env=inv.env, pass_fds=inv.pass_fds, capture_output=True, text=True, timeout=60)
    finally:
        inv.close()
    assert p.returncode == 0, p.stderr
    got = p.stdout.splitlines()
    for want in ("mincore -1 EPERM", "cachestat -1 EPERM", "process_madvise -1 EPERM", "preadv2 8 ENOTSUP",
                 "preadv2 0 4", "madvise 20 -1 EINVAL", "madvise 21 -1 EINVAL", "readahead 0"):
        assert want in got, (want, got)
    assert any(line.startswith("madvise 4 0") for line in got) and any(line.startswith("madvise 3 0") for line in got), got


# ----- the private copy of a bot's own folder ----------------------------------------------------------


def _own_folder(tmp_path: Path) -> Path:
    own = tmp_path / "own"
    (own / "sub").mkdir(parents=True)
    (own / "hidden").mkdir()
    (own / "hidden" / "secret.txt").write_text("not for the bot")
    (own / "sub" / "data.txt").write_text("data")
    (own / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(own / "run.sh", 0o755)
    os.symlink("sub/data.txt", own / "link")
    with open(own / "sparse", "wb") as f:
        f.truncate(1 << 30)
        f.seek(5 << 20)
        f.write(b"x" * 4096)
    os.mkfifo(own / "fifo")
    return own


SHOW = r"""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
out = {}
for name in sorted(os.listdir(here)):
    st = os.lstat(os.path.join(here, name))
    out[name] = [st.st_ino, st.st_dev, oct(st.st_mode), st.st_size, st.st_blocks]
out["hidden/"] = os.listdir(os.path.join(here, "hidden"))
out["link->"] = open(os.path.join(here, "link")).read()
with open(os.path.join(here, "sparse"), "rb") as f:
    f.seek(5 << 20)
    out["sparse@5M"] = f.read(2).decode()
try:
    open(os.path.join(here, "new"), "w")
    out["writable"] = True
except OSError:
    out["writable"] = False
print(json.dumps(out))
"""


def _shown(own: Path, **kw: object) -> tuple[dict, str | None]:
    """What a sandboxed process shown `own` (privately) sees of it, and where its copy was."""
    (own / "show.py").write_text(SHOW)
    box = Sandbox(mode="bwrap", own=str(own), hide=(str(own / "hidden"),))
    inv = prepare([sys.executable, str(own / "show.py")], str(own), {}, box, 64, private=True, **kw)  # type: ignore[arg-type]
    try:
        p = subprocess.run(inv.argv, env=inv.env, pass_fds=inv.pass_fds, capture_output=True, text=True, timeout=60)
    finally:
        inv.close()
        copy = inv.private.path if inv.private else None
        if inv.private:
            inv.private.remove()
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), copy


@needs_bwrap
def test_each_sandboxed_start_is_shown_a_copy_of_its_folder_of_its_own(tmp_path: Path) -> None:
    """Its own folder's files, folders, links and modes, from a copy no other process shares
    (other inodes than the host's and than another start's, made while the first still
    stands), read-only; holes stay holes (a 1 GiB sparse file costs its 4 KiB of data);
    what it is not shown (a hidden folder's files, a named pipe) is not copied; the copy
    is gone once removed."""
    own = _own_folder(tmp_path)
    first, copy = _shown(own)
    assert copy is not None and not os.path.exists(os.path.dirname(copy))
    host = {n: os.lstat(own / n) for n in ("sub", "run.sh", "link", "sparse")}
    names = {n for n in first if not n.endswith(("/", ">")) and "@" not in n and n != "writable"}
    assert names == {"sub", "hidden", "run.sh", "link", "sparse", "show.py"}, first  # no fifo
    for n, st in host.items():
        ino, dev, mode, size, blocks = first[n]
        assert (ino, dev) != (st.st_ino, st.st_dev), n  # another file: its pages are its own
        assert mode == oct(st.st_mode) and size == st.st_size, (n, first[n], st)
    assert first["sparse"][4] * 512 <= 1 << 20  # the data, not the gigabyte
    assert first["hidden/"] == [] and first["link->"] == "data" and first["sparse@5M"] == "xx"
    assert first["writable"] is False
    # A second start while a first one's copy still stands: another copy again.
    box = Sandbox(mode="bwrap", own=str(own))
    held = prepare([sys.executable, "-c", "pass"], str(own), {}, box, 64, private=True)
    try:
        assert held.private is not None and held.private.path is not None
        held_st = os.stat(os.path.join(held.private.path, "sparse"))
        second, _ = _shown(own)
        assert tuple(second["sparse"][:2]) not in {(held_st.st_ino, held_st.st_dev),
                                                   (host["sparse"].st_ino, host["sparse"].st_dev)}
    finally:
        held.close()
        held.private.remove()  # type: ignore[union-attr]


@needs_bwrap
def test_a_bot_is_started_with_its_private_copy_and_it_goes_when_the_bot_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot's process in its sandbox is shown a private copy (made in the temporary
    folder), removed when the process is stopped; a folder past `PRIVATE_COPY_MB` of data
    cannot start, and the reason names the limit and the folder."""
    import tempfile

    own = _own_folder(tmp_path)
    (own / "bot.py").write_text("import sys\nsys.stdin.readline()\n")
    stage = tmp_path / "temp"
    stage.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(stage))
    bot = BotProcess(BotSpec("private", (sys.executable, str(own / "bot.py")), cwd=str(own),
                             sandbox=Sandbox(mode="bwrap", own=str(own))))
    bot.start()
    try:
        copies = [p for p in stage.iterdir() if p.name.startswith("p10-own-")]
        assert len(copies) == 1 and (copies[0] / "own" / "bot.py").exists()
    finally:
        bot.stop(0.5)
    assert not any(stage.iterdir())
    (own / "big").write_bytes(os.urandom(3 << 20))
    monkeypatch.setattr(private, "PRIVATE_COPY_MB", 2)
    with pytest.raises(BotStartError, match=r"holds more than 2 MB of data.*private copy"):
        bot.start()
    assert bot.proc is None and not any(stage.iterdir())


# ----- a hostile bot: its dealt hands kept in page residency ------------------------------------------------


@needs_bwrap
def test_a_bot_recovers_no_opponent_hand_from_page_residency_of_its_own_files(tmp_path: Path) -> None:
    """The residency bot writes each dealt hand of a deal's first rotation as page
    residency of a sparse file in its own folder; the second rotation's process reads it
    back by `mincore` (refused: EPERM) and by its count of major faults on a mapping of
    the file (exact, no timing: the private copy it reads holds no page the first
    process read). It recovers no opponent hand. (Its timed reads are logged, not judged
    here: `tools/residency_channel.py` measures them.)"""
    found = residency_tournament(tmp_path, games=4)
    assert len(found["wrote"]) >= 3, found  # it ran, and wrote the hands of several deals
    assert ("mincore", "Operation", "not", "permitted") in found["error"], found["error"]
    right, reads = recovered(found, "faults")
    assert reads >= 3 and right == 0, found["read"]
    assert recovered(found, "mincore") == (0, 0)


def test_copies_whose_maker_is_gone_are_swept(tmp_path: Path) -> None:
    """A worker killed at once leaves its bots' copies: the next copy made removes those of
    processes that no longer exist, and leaves the living ones' and other files alone."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    for name in (f"p10-own-{dead}-abc", f"p10-own-{os.getpid()}-def", "p10-own-x-ghi", "other"):
        (tmp_path / name / "own").mkdir(parents=True)
        (tmp_path / name / "own" / "f").write_text("x")
    assert private.sweep(str(tmp_path)) == [f"p10-own-{dead}-abc"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"p10-own-{os.getpid()}-def", "p10-own-x-ghi", "other"])
