"""The seccomp filter every sandboxed bot runs under: a short deny-list of system calls
that reach kernel state shared across sandboxes, or that no Phase 10 bot needs.

Inside the sandbox a bot's processes act as the user running the harness, and every
sandbox sees the same system files, so some kernel state is common to all of them. The
filter closes what could carry a message from one sandbox to another (two entrants, or
two processes of one entrant in different seat rotations of a duplicate deal):

- the kernel keyring (`add_key`, `request_key`, `keyctl`): keys belong to that user
  (they would also fill kernel memory that no cgroup counts, and outlive the run);
- file locks: a lock on a shared read-only file such as /usr/bin/python3 is seen by
  every sandbox, and its byte range can hold any number. Taking one (`flock`, and
  `fcntl`'s F_SETLK, F_SETLKW, their 64-bit and open-file-description forms) succeeds
  without doing anything: a program that locks a file of its own goes on as before (the
  JVM locks its performance-data file, and warns on stdout when it cannot), but no
  lock is ever held, so there is none for another sandbox to see;
- watching files: inotify, fanotify, and `fcntl`'s F_NOTIFY (a watch on a shared file
  sees another sandbox open it) and F_SETLEASE (the same, and a lease on a shared file
  would stall every other process that opens it, the harness's too);
- changing a file's mode, owner or times (`chmod`, `chown`, `utime` and their forms),
  in games: they succeed without doing anything. Files a bot can change are its
  scratch (which needs none of this) and the few device nodes of its `/dev`, which are
  the host's own: when the harness runs as root, the bot owns them, and `chmod 0
  /dev/null` would break the host and its times could carry a message. A bot's build,
  which must mark what it compiles executable, runs without this rule (as an
  unprivileged user when the harness is root: `options.build_userns`);
- in games, setting or removing extended attributes (EOPNOTSUPP: an access-control list
  on a device node changes its mode as `chmod` would), and POSIX timers (`timer_create`,
  EPERM) and `fcntl`'s F_SETSIG (EPERM, in builds too): a timer's signal, or a
  descriptor's, could be SIGCONT, which wakes a bot the harness stopped between its turns;
- kernel AIO (`io_setup`: ENOSYS; the machine-wide count of AIO contexts is a number any
  sandbox could set) and `fcntl`'s F_SETPIPE_SZ (EPERM; pipe memory is counted per user,
  the same user for every sandbox);
- `io_uring_*` (ENOSYS, so that runtimes fall back to ordinary reads and writes),
  `perf_event_open`, `bpf`, `userfaultfd`: large kernel surfaces with a history of
  escapes, refused by container runtimes' default profiles too;
- sockets of any family but AF_UNIX and AF_NETLINK (`socket` and `socketpair`:
  EAFNOSUPPORT). Not every family is kept to the sandbox's namespaces:
  AF_VSOCK's ports form one table for the whole machine, so one process could bind ports
  that spell a hand and another, in another sandbox, find them; TCP's and UDP's counts of
  sockets and buffer memory in /proc/net/sockstat are the machine's, and so is the table
  that picks a connection's source port; and on cgroup v1 the buffers of IP sockets are
  charged to no cgroup, so a bot that leaves data unread in its own loopback sockets
  would hold memory beyond its limit, up to the machine's TCP and UDP allowance (a build's
  too). A sandbox has no network, so IP sockets serve a bot for nothing. 32-bit x86 and ARM
  programs that make sockets through `socketcall` (whose arguments the filter cannot
  read) get EAFNOSUPPORT for every family there; the direct `socket` call is filtered as
  above;
- a socket's cookie (`getsockopt`'s SO_COOKIE and SO_NETNS_COOKIE: ENOPROTOOPT) and
  netlink's NETLINK_SOCK_DIAG (EPROTONOSUPPORT), which hands every socket it lists a
  cookie: cookies come from one counter for the whole machine;
- another process's memory and descriptors (`ptrace`, `process_vm_readv`,
  `process_vm_writev`, `pidfd_getfd`), in games and builds: the one other process a
  sandbox shows a bot is its init (bubblewrap's, pid 1), and a bot that rewrote it could
  undo its death with the harness (`--die-with-parent`) and change the name by which the
  harness ends it, and so live on after its game or build. No Phase 10 bot needs a
  debugger's calls (a sanitizer's leak check, which uses them, cannot run);
- in a build, `fallocate` (EOPNOTSUPP, so that `posix_fallocate` falls back to writing):
  it reserves disk space at once without a file's size growing, past the disk watch and
  the file-size limit of a build (`build.run_build`);
- in games, `setsid` succeeds without doing anything: every new session takes a number
  from one counter for the whole machine (the scheduler's autogroup, shown in
  /proc/self/autogroup), which a process in another sandbox can read. The bot's first
  process leads a session of its own already, and it has no terminal to leave.
- writing back the machine's files, in games and builds: `sync` and `syncfs` (EPERM: the C
  library's `sync()` returns nothing, so a program goes on) and `quotactl` (whose Q_SYNC
  needs no privilege and writes back every file system with quotas) are refused; `fsync`,
  `fdatasync`, `sync_file_range`, `msync` with MS_SYNC and `posix_fadvise` succeed
  without doing anything. The only files a bot can write in its games are its scratch,
  in memory, where they do nothing anyway; on the host's files it may read (its folder,
  /usr) they would make the disk flush its cache, or write back or drop pages every
  sandbox shares: work for the whole machine, at no cost to the bot (four threads calling
  `sync()` while the harness stops them slow every game of their table twofold).
- in games, asking which pages of a file are in the page cache, or putting them out of it:
  a bot's own folder is a private copy (`private`), but the system's files are every
  sandbox's, and which of their pages were read lately is a number one process could set
  and another read. `mincore` and `cachestat`, which report it for any file a bot maps or
  opens, and `process_madvise` fail with EPERM; `preadv2` and `pwritev2` with RWF_NOWAIT
  (which fails where a page is not cached) with EOPNOTSUPP, as on a file system without
  it, so that a program reads as usual; `madvise`'s MADV_COLD and MADV_PAGEOUT (which put
  a shared file's pages out of the cache: a bit set back to 0) with EINVAL, as on a kernel
  before they were added; `readahead` succeeds without doing anything, as `posix_fadvise`
  does (it would only load pages).

The others fail with EPERM. The rules name the calls (`_RULES`); `SYSCALLS` gives their
numbers on each ABI, as the kernel's headers do. The filter is a classic BPF program, as bubblewrap's
`--seccomp FD` reads it: built here for x86-64 (with 32-bit x86 programs; the x32 ABI is
refused whole) and AArch64 (with 32-bit ARM programs). On other machines `program()`
returns None and bots run without it (protocol/LIMITS.md says so).
"""

from __future__ import annotations

import platform
import struct
from dataclasses import dataclass
from functools import lru_cache

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR = 0
_ARCH = 4
_ARG0 = 16  # the low 32 bits of args[0]
_ARG1 = 16 + 8  # the low 32 bits of args[1] (little-endian machines only, as all here)
_ARG2 = 16 + 16  # the low 32 bits of args[2]
_ARG5 = 16 + 40  # the low 32 bits of args[5] (preadv2's and pwritev2's flags on every ABI here)

# Classic BPF opcodes.
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
EPERM = 1
EINVAL = 22
ENOSYS = 38
_GRANTED = 0  # SECCOMP_RET_ERRNO with 0: the call returns 0 without being made

_X32_BIT = 0x40000000

_LOCK_CMDS = (6, 7, 37, 38)  # F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW
_LOCK_CMDS_32 = _LOCK_CMDS + (13, 14)  # and F_SETLK64, F_SETLKW64 (32-bit ABIs)
_REFUSED_CMDS = (1024, 1026, 1031, 10)  # F_SETLEASE, F_NOTIFY, F_SETPIPE_SZ, F_SETSIG
EOPNOTSUPP = 95
EAFNOSUPPORT = 97
SOCKET_FAMILIES = (1, 16)
"""The socket families a bot may use: AF_UNIX and AF_NETLINK (see above)."""
_AF_NETLINK = 16
_NETLINK_SOCK_DIAG = 4  # a dump of sockets hands each a cookie (as SO_COOKIE does)
_SOL_SOCKET = 1
_COOKIE_OPTS = (57, 71)  # SO_COOKIE, SO_NETNS_COOKIE
EPROTONOSUPPORT = 93
ENOPROTOOPT = 92
_SOCKETCALL_CREATE = (1, 8)  # socketcall's SYS_SOCKET and SYS_SOCKETPAIR
_MS_SYNC = 4  # msync's flag that writes a shared mapping back to its file
_RWF_NOWAIT = 8  # preadv2's and pwritev2's flag: fail where the pages are not cached
_MADV_EVICT = (20, 21)  # MADV_COLD, MADV_PAGEOUT: a file's pages put out of the page cache


# The calls the rules below name, by ABI. A name missing here for an ABI whose rules use it
# is an error (KeyError), never a call left out unseen.
_KEYRING = ("add_key", "request_key", "keyctl", "perf_event_open", "bpf", "userfaultfd")
_WATCHES = ("inotify_init", "inotify_add_watch", "inotify_init1", "fanotify_init", "fanotify_mark")
_OTHERS = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd")
_METADATA_32 = ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "lchown", "fchown", "chown32", "lchown32",
                "fchown32", "fchownat", "utime", "utimes", "futimesat", "utimensat", "utimensat_time64")
_FLUSH = ("fsync", "fdatasync", "sync_file_range", "fadvise64")


@dataclass(frozen=True)
class _Abi:
    """One ABI's rules, by system call name: calls refused with EPERM, with ENOSYS, granted
    without being made (`flock`); the fcntl calls whose lock commands are granted so, and
    those commands; and the calls each rule of the module's docstring names."""

    audit_arch: int  # AUDIT_ARCH_*, as the kernel hands it to the filter
    metadata: tuple[str, ...]  # chmod, chown, utime and their forms: granted in games
    eperm: tuple[str, ...] = _KEYRING + _WATCHES + _OTHERS
    enosys: tuple[str, ...] = ("io_uring_setup", "io_uring_enter", "io_uring_register", "io_setup")
    granted: tuple[str, ...] = ("flock",)
    fcntl: tuple[str, ...] = ("fcntl", "fcntl64")
    lock_cmds: tuple[int, ...] = _LOCK_CMDS_32
    xattr: tuple[str, ...] = ("setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
                              "setxattrat", "removexattrat")  # EOPNOTSUPP in games
    timers: tuple[str, ...] = ("timer_create",)  # EPERM in games
    sockets: tuple[str, ...] = ("socket", "socketpair")  # only the families in SOCKET_FAMILIES
    socketcall: tuple[str, ...] = ("socketcall",)  # SYS_SOCKET and SYS_SOCKETPAIR refused
    setsid: tuple[str, ...] = ("setsid",)  # granted without being made, in games
    fallocate: tuple[str, ...] = ("fallocate",)  # EOPNOTSUPP in builds
    getsockopt: tuple[str, ...] = ("getsockopt",)  # SO_COOKIE and SO_NETNS_COOKIE refused
    writeback: tuple[str, ...] = ("sync", "syncfs", "quotactl", "quotactl_fd")  # EPERM
    flush: tuple[str, ...] = _FLUSH  # granted without being made
    msync: tuple[str, ...] = ("msync",)  # granted without being made with MS_SYNC
    residency: tuple[str, ...] = ("mincore", "cachestat", "process_madvise")  # EPERM in games
    readahead: tuple[str, ...] = ("readahead",)  # granted without being made, in games
    nowait: tuple[str, ...] = ("preadv2", "pwritev2")  # EOPNOTSUPP with RWF_NOWAIT, in games
    madvise: tuple[str, ...] = ("madvise",)  # EINVAL for MADV_COLD and MADV_PAGEOUT, in games
    x32: bool = False


_RULES: dict[str, dict[str, _Abi]] = {  # machine -> ABI name -> rules, in the order the filter checks them
    "x86_64": {
        "x86_64": _Abi(0xC000003E, ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown",
                                    "fchownat", "utime", "utimes", "futimesat", "utimensat"),
                       fcntl=("fcntl",), lock_cmds=_LOCK_CMDS, socketcall=(), x32=True),
        "i386": _Abi(0x40000003, _METADATA_32, flush=_FLUSH + ("fadvise64_64",)),
    },
    "aarch64": {
        "aarch64": _Abi(0xC00000B7, ("fchmod", "fchmodat", "fchmodat2", "fchownat", "fchown", "utimensat"),
                        eperm=_KEYRING + _WATCHES[1:] + _OTHERS, fcntl=("fcntl",), lock_cmds=_LOCK_CMDS,
                        socketcall=()),  # (no inotify_init here)
        # EABI programs have no utime; socketcall is the old ABI's (the same AUDIT_ARCH)
        "arm": _Abi(0x40000028, tuple(n for n in _METADATA_32 if n != "utime"),
                    flush=("fsync", "fdatasync", "arm_sync_file_range", "arm_fadvise64_64")),
    },
}
_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}

_NEW = {"pidfd_getfd": 438, "quotactl_fd": 443, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "fchmodat2": 452, "setxattrat": 463, "removexattrat": 466,
        "process_madvise": 440, "cachestat": 451}
_TIME64 = {"utimensat_time64": 412}
SYSCALLS: dict[str, dict[str, int]] = {
    # Calls added since Linux 5.1 have one number on every ABI (`_NEW`).
    "x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250, "perf_event_open": 298, "bpf": 321,
               "userfaultfd": 323, "inotify_init": 253, "inotify_add_watch": 254, "inotify_init1": 294,
               "fanotify_init": 300, "fanotify_mark": 301, "ptrace": 101, "process_vm_readv": 310,
               "process_vm_writev": 311, "io_setup": 206, "flock": 73, "fcntl": 72, "chmod": 90, "fchmod": 91,
               "fchmodat": 268, "chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260, "utime": 132,
               "utimes": 235, "futimesat": 261, "utimensat": 280, "setxattr": 188, "lsetxattr": 189,
               "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "timer_create": 222,
               "socket": 41, "socketpair": 53, "setsid": 112, "fallocate": 285, "getsockopt": 55, "sync": 162,
               "syncfs": 306, "quotactl": 179, "fsync": 74, "fdatasync": 75, "sync_file_range": 277,
               "fadvise64": 221, "msync": 26, "mincore": 27, "madvise": 28, "readahead": 187,
               "preadv2": 327, "pwritev2": 328, **_NEW},
    "i386": {"add_key": 286, "request_key": 287, "keyctl": 288, "perf_event_open": 336, "bpf": 357,
             "userfaultfd": 374, "inotify_init": 291, "inotify_add_watch": 292, "inotify_init1": 332,
             "fanotify_init": 338, "fanotify_mark": 339, "ptrace": 26, "process_vm_readv": 347,
             "process_vm_writev": 348, "io_setup": 245, "flock": 143, "fcntl": 55, "fcntl64": 221, "chmod": 15,
             "fchmod": 94, "fchmodat": 306, "chown": 182, "fchown": 95, "lchown": 16, "chown32": 212,
             "lchown32": 198, "fchown32": 207, "fchownat": 298, "utime": 30, "utimes": 271, "futimesat": 299,
             "utimensat": 320, "setxattr": 226, "lsetxattr": 227, "fsetxattr": 228, "removexattr": 235,
             "lremovexattr": 236, "fremovexattr": 237, "timer_create": 259, "socket": 359, "socketpair": 360,
             "socketcall": 102, "setsid": 66, "fallocate": 324, "getsockopt": 365, "sync": 36, "syncfs": 344,
             "quotactl": 131, "fsync": 118, "fdatasync": 148, "sync_file_range": 314, "fadvise64": 250,
             "fadvise64_64": 272, "msync": 144, "mincore": 218, "madvise": 219, "readahead": 225,
             "preadv2": 378, "pwritev2": 379, **_NEW, **_TIME64},
    "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219, "perf_event_open": 241, "bpf": 280,
                "userfaultfd": 282, "inotify_add_watch": 27, "inotify_init1": 26, "fanotify_init": 262,
                "fanotify_mark": 263, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
                "io_setup": 0, "flock": 32, "fcntl": 25, "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55,
                "utimensat": 88, "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14,
                "lremovexattr": 15, "fremovexattr": 16, "timer_create": 107, "socket": 198, "socketpair": 199,
                "setsid": 157, "fallocate": 47, "getsockopt": 209, "sync": 81, "syncfs": 267, "quotactl": 60,
                "fsync": 82, "fdatasync": 83, "sync_file_range": 84, "fadvise64": 223, "msync": 227, "mincore": 232,
                "madvise": 233, "readahead": 213, "preadv2": 286, "pwritev2": 287, **_NEW},
    "arm": {"add_key": 309, "request_key": 310, "keyctl": 311, "perf_event_open": 364, "bpf": 386,
            "userfaultfd": 388, "inotify_init": 316, "inotify_add_watch": 317, "inotify_init1": 360,
            "fanotify_init": 367, "fanotify_mark": 368, "ptrace": 26, "process_vm_readv": 376,
            "process_vm_writev": 377, "io_setup": 243, "flock": 143, "fcntl": 55, "fcntl64": 221, "chmod": 15,
            "fchmod": 94, "fchmodat": 333, "chown": 182, "fchown": 95, "lchown": 16, "chown32": 212,
            "lchown32": 198, "fchown32": 207, "fchownat": 325, "utimes": 269, "futimesat": 326, "utimensat": 348,
            "setxattr": 226, "lsetxattr": 227, "fsetxattr": 228, "removexattr": 235, "lremovexattr": 236,
            "fremovexattr": 237, "timer_create": 257, "socket": 281, "socketpair": 288, "socketcall": 102,
            "setsid": 66, "fallocate": 352, "getsockopt": 295, "sync": 36, "syncfs": 373, "quotactl": 131,
            "fsync": 118, "fdatasync": 148, "arm_sync_file_range": 341, "arm_fadvise64_64": 270, "msync": 144,
            "mincore": 219, "madvise": 220, "readahead": 225, "preadv2": 392, "pwritev2": 393, **_NEW, **_TIME64},
}
"""System call numbers by ABI and name, as the kernel's headers give them (`__NR_<name>`)."""


def numbers(abi: str, names: tuple[str, ...]) -> tuple[int, ...]:
    """The numbers of system calls `names` on `abi` (a key of `SYSCALLS`)."""
    return tuple(SYSCALLS[abi][n] for n in names)


class _Asm:
    """A classic BPF program with symbolic jump targets (every jump is forward)."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | None, str | None, int]] = []  # (op, jump if true, if false, k)
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, None, None, offset))

    def jump(self, op: int, k: int, yes: str | None = None, no: str | None = None) -> None:
        self.code.append((op, yes, no, k))

    def ret(self, k: int) -> None:
        self.code.append((_RET_K, None, None, k))

    def assemble(self) -> bytes:
        out = []
        for i, (op, yes, no, k) in enumerate(self.code):
            offs = [0 if t is None else self.labels[t] - i - 1 for t in (yes, no)]
            if not all(0 <= o < 256 for o in offs):
                raise ValueError(f"jump out of range at {i}: {offs}")
            out.append(struct.pack("=HBBI", op, offs[0], offs[1], k))
        return b"".join(out)


def _abi_checks(a: _Asm, k: int, name: str, abi: _Abi, build: bool) -> None:
    """The jumps that send each call of one ABI's rules to its verdict or its argument
    check (`_arg_checks`), then allow the rest."""
    a.load(_NR)
    if abi.x32:
        a.jump(_JGE_K, _X32_BIT, yes="eperm")

    def to(label: str, *names: tuple[str, ...]) -> None:
        for nr in numbers(name, sum(names, ())):
            a.jump(_JEQ_K, nr, yes=label)

    to("eperm", abi.eperm, abi.writeback)
    to("enosys", abi.enosys)
    to("granted", abi.granted, abi.flush, () if build else abi.metadata + abi.setsid)
    to(f"msync{k}", abi.msync)
    to("enotsup", abi.fallocate if build else abi.xattr)
    to("eperm", () if build else abi.timers + abi.residency)
    to("granted", () if build else abi.readahead)
    to(f"nowait{k}", () if build else abi.nowait)
    to(f"madvise{k}", () if build else abi.madvise)
    to(f"fcntl{k}", abi.fcntl)
    to(f"socket{k}", abi.sockets)
    to(f"socketcall{k}", abi.socketcall)
    to(f"getsockopt{k}", abi.getsockopt)
    a.ret(_RET_ALLOW)


def _verdicts(a: _Asm, label: str, arg: int, op: int, values: tuple[int, ...], verdict: str) -> None:
    """At `label`: the call goes to `verdict` where its argument at `arg` matches one of
    `values` by `op` (equals, or has the bit set), and is allowed otherwise."""
    a.label(label)
    a.load(arg)
    for v in values:
        a.jump(op, v, yes=verdict)
    a.ret(_RET_ALLOW)


def _arg_checks(a: _Asm, k: int, abi: _Abi) -> None:
    """The checks of one ABI's calls whose verdict depends on their arguments."""
    if abi.sockets:
        a.label(f"socket{k}")
        a.load(_ARG0)
        for family in SOCKET_FAMILIES:
            a.jump(_JEQ_K, family, yes=f"netlink{k}" if family == _AF_NETLINK else "allow")
        a.ret(_RET_ERRNO | EAFNOSUPPORT)
        a.label(f"netlink{k}")
        a.load(_ARG2)
        a.jump(_JEQ_K, _NETLINK_SOCK_DIAG, yes="eprotonosupport")
        a.ret(_RET_ALLOW)
    if abi.getsockopt:
        a.label(f"getsockopt{k}")
        a.load(_ARG1)
        a.jump(_JEQ_K, _SOL_SOCKET, no="allow")
        a.load(_ARG2)
        for opt in _COOKIE_OPTS:
            a.jump(_JEQ_K, opt, yes="enoprotoopt")
        a.ret(_RET_ALLOW)
    if abi.socketcall:
        _verdicts(a, f"socketcall{k}", _ARG0, _JEQ_K, _SOCKETCALL_CREATE, "eafnosupport")
    if abi.msync:
        _verdicts(a, f"msync{k}", _ARG2, _JSET_K, (_MS_SYNC,), "granted")
    if abi.nowait:
        _verdicts(a, f"nowait{k}", _ARG5, _JSET_K, (_RWF_NOWAIT,), "enotsup")
    if abi.madvise:
        _verdicts(a, f"madvise{k}", _ARG2, _JEQ_K, _MADV_EVICT, "einval")
    a.label(f"fcntl{k}")
    a.load(_ARG1)
    for cmd in abi.lock_cmds:
        a.jump(_JEQ_K, cmd, yes="granted")
    for cmd in _REFUSED_CMDS:
        a.jump(_JEQ_K, cmd, yes="eperm")
    a.ret(_RET_ALLOW)


@lru_cache(maxsize=None)
def program(machine: str | None = None, build: bool = False) -> bytes | None:
    """The filter for `machine` (default: this one) as bubblewrap reads it, or None where
    there is none; with `build`, for a bot's build (modes, owners and times can be
    changed). Calls of an ABI it does not know are refused with EPERM."""
    m = (machine or platform.machine()).lower()
    abis = _RULES.get(_ALIASES.get(m, m))
    if abis is None:
        return None
    a = _Asm()
    a.load(_ARCH)
    for k, (name, abi) in enumerate(abis.items()):
        a.label(f"abi{k}")
        a.jump(_JEQ_K, abi.audit_arch, no=f"abi{k + 1}")
        _abi_checks(a, k, name, abi, build)
        _arg_checks(a, k, abi)
    a.label(f"abi{len(abis)}")
    a.ret(_RET_ERRNO | EPERM)  # an ABI not listed
    for label, errno in (("eperm", EPERM), ("enosys", ENOSYS), ("granted", _GRANTED), ("enotsup", EOPNOTSUPP),
                         ("eafnosupport", EAFNOSUPPORT), ("eprotonosupport", EPROTONOSUPPORT),
                         ("enoprotoopt", ENOPROTOOPT), ("einval", EINVAL)):
        a.label(label)
        a.ret(_RET_ERRNO | errno)
    a.label("allow")
    a.ret(_RET_ALLOW)
    return a.assemble()
