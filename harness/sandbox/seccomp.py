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
  unprivileged user when the harness is root: `sandbox.build_userns`);
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
  the file-size limit of a build (`sandbox.run_build`);
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

The others fail with EPERM. The filter is a classic BPF program, as bubblewrap's
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

# Classic BPF opcodes.
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
EPERM = 1
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
_XATTR_AT = (463, 466)  # setxattrat, removexattrat (the same number on every ABI)
_QUOTACTL_FD = 443  # (the same number on every ABI)
_MS_SYNC = 4  # msync's flag that writes a shared mapping back to its file


@dataclass(frozen=True)
class _Abi:
    """One ABI's numbers: calls refused with EPERM, with ENOSYS, granted without being
    made (`flock`); the fcntl calls whose lock commands are granted so, and those
    commands."""

    eperm: tuple[int, ...]
    enosys: tuple[int, ...]
    granted: tuple[int, ...]
    fcntl: tuple[int, ...]
    lock_cmds: tuple[int, ...]
    metadata: tuple[int, ...]  # chmod, chown, utime and their forms: granted in games
    xattr: tuple[int, ...] = ()  # setxattr, lsetxattr, fsetxattr and the removexattr forms: EOPNOTSUPP in games
    timers: tuple[int, ...] = ()  # timer_create: EPERM in games
    sockets: tuple[int, ...] = ()  # socket, socketpair: only the families in SOCKET_FAMILIES
    socketcall: tuple[int, ...] = ()  # socketcall: SYS_SOCKET and SYS_SOCKETPAIR refused
    setsid: tuple[int, ...] = ()  # setsid: granted without being made, in games
    fallocate: tuple[int, ...] = ()  # fallocate: EOPNOTSUPP in builds
    getsockopt: tuple[int, ...] = ()  # getsockopt: SO_COOKIE and SO_NETNS_COOKIE refused
    writeback: tuple[int, ...] = ()  # sync, syncfs, quotactl, quotactl_fd: EPERM
    flush: tuple[int, ...] = ()  # fsync, fdatasync, sync_file_range, fadvise: granted without being made
    msync: tuple[int, ...] = ()  # msync: granted without being made with MS_SYNC
    x32: bool = False


_IO_URING = (425, 426, 427)
_FCHMODAT2 = 452
_PIDFD_GETFD = 438
# add_key, request_key, keyctl, perf_event_open, bpf, userfaultfd, inotify_init, inotify_add_watch,
# inotify_init1, fanotify_init, fanotify_mark, and ptrace, process_vm_readv, process_vm_writev,
# pidfd_getfd; flock; fcntl (fcntl64)
_ABIS: dict[str, dict[int, _Abi]] = {
    "x86_64": {
        0xC000003E: _Abi((248, 249, 250, 298, 321, 323, 253, 254, 294, 300, 301, 101, 310, 311, _PIDFD_GETFD),
                         _IO_URING + (206,), (73,), (72,),
                         _LOCK_CMDS, (90, 91, 268, _FCHMODAT2, 92, 93, 94, 260, 132, 235, 261, 280),
                         (188, 189, 190, 197, 198, 199) + _XATTR_AT, (222,), (41, 53), (), (112,), (285,),
                         getsockopt=(55,), writeback=(162, 306, 179, _QUOTACTL_FD), flush=(74, 75, 277, 221),
                         msync=(26,), x32=True),  # AUDIT_ARCH_X86_64
        0x40000003: _Abi((286, 287, 288, 336, 357, 374, 291, 292, 332, 338, 339, 26, 347, 348, _PIDFD_GETFD),
                         _IO_URING + (245,), (143,), (55, 221),
                         _LOCK_CMDS_32, (15, 94, 306, _FCHMODAT2, 182, 16, 95, 212, 198, 207, 298, 30, 271, 299, 320,
                                         412), (226, 227, 228, 235, 236, 237) + _XATTR_AT, (259,), (359, 360),
                         (102,), (66,), (324,), getsockopt=(365,), writeback=(36, 344, 131, _QUOTACTL_FD),
                         flush=(118, 148, 314, 250, 272), msync=(144,)),  # AUDIT_ARCH_I386
    },
    "aarch64": {  # (no inotify_init here)
        0xC00000B7: _Abi((217, 218, 219, 241, 280, 282, 27, 26, 262, 263, 117, 270, 271, _PIDFD_GETFD),
                         _IO_URING + (0,), (32,), (25,),
                         _LOCK_CMDS, (52, 53, _FCHMODAT2, 54, 55, 88), (5, 6, 7, 14, 15, 16) + _XATTR_AT,
                         (107,), (198, 199), (), (157,), (47,),
                         getsockopt=(209,), writeback=(81, 267, 60, _QUOTACTL_FD), flush=(82, 83, 84, 223),
                         msync=(227,)),  # AUDIT_ARCH_AARCH64
        0x40000028: _Abi((309, 310, 311, 364, 386, 388, 316, 317, 360, 367, 368, 26, 376, 377, _PIDFD_GETFD),
                         _IO_URING + (243,), (143,), (55, 221),
                         _LOCK_CMDS_32, (15, 94, 333, _FCHMODAT2, 182, 16, 95, 212, 198, 207, 325, 269, 326, 348,
                                         412), (226, 227, 228, 235, 236, 237) + _XATTR_AT, (257,), (281, 288),
                         (102,), (66,), (352,), getsockopt=(295,), writeback=(36, 373, 131, _QUOTACTL_FD),
                         flush=(118, 148, 341, 270), msync=(144,)),  # AUDIT_ARCH_ARM
    },
}
_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}

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


@lru_cache(maxsize=None)
def program(machine: str | None = None, build: bool = False) -> bytes | None:
    """The filter for `machine` (default: this one) as bubblewrap reads it, or None where
    there is none; with `build`, for a bot's build (modes, owners and times can be
    changed). Calls of an ABI it does not know are refused with EPERM."""
    m = (machine or platform.machine()).lower()
    abis = _ABIS.get(_ALIASES.get(m, m))
    if abis is None:
        return None
    a = _Asm()
    a.load(_ARCH)
    for k, (arch, abi) in enumerate(abis.items()):
        a.label(f"abi{k}")
        a.jump(_JEQ_K, arch, no=f"abi{k + 1}")
        a.load(_NR)
        if abi.x32:
            a.jump(_JGE_K, _X32_BIT, yes="eperm")
        for nr in abi.eperm + abi.writeback:
            a.jump(_JEQ_K, nr, yes="eperm")
        for nr in abi.enosys:
            a.jump(_JEQ_K, nr, yes="enosys")
        for nr in abi.granted + abi.flush + (() if build else abi.metadata + abi.setsid):
            a.jump(_JEQ_K, nr, yes="granted")
        for nr in abi.msync:
            a.jump(_JEQ_K, nr, yes=f"msync{k}")
        for nr in abi.fallocate if build else abi.xattr:
            a.jump(_JEQ_K, nr, yes="enotsup")
        for nr in () if build else abi.timers:
            a.jump(_JEQ_K, nr, yes="eperm")
        for nr in abi.fcntl:
            a.jump(_JEQ_K, nr, yes=f"fcntl{k}")
        for nr in abi.sockets:
            a.jump(_JEQ_K, nr, yes=f"socket{k}")
        for nr in abi.socketcall:
            a.jump(_JEQ_K, nr, yes=f"socketcall{k}")
        for nr in abi.getsockopt:
            a.jump(_JEQ_K, nr, yes=f"getsockopt{k}")
        a.ret(_RET_ALLOW)
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
            a.label(f"socketcall{k}")
            a.load(_ARG0)
            for call in _SOCKETCALL_CREATE:
                a.jump(_JEQ_K, call, yes="eafnosupport")
            a.ret(_RET_ALLOW)
        if abi.msync:
            a.label(f"msync{k}")
            a.load(_ARG2)
            a.jump(_JSET_K, _MS_SYNC, yes="granted")
            a.ret(_RET_ALLOW)
        a.label(f"fcntl{k}")
        a.load(_ARG1)
        for cmd in abi.lock_cmds:
            a.jump(_JEQ_K, cmd, yes="granted")
        for cmd in _REFUSED_CMDS:
            a.jump(_JEQ_K, cmd, yes="eperm")
        a.ret(_RET_ALLOW)
    a.label(f"abi{len(abis)}")
    a.ret(_RET_ERRNO | EPERM)  # an ABI not listed
    for label, errno in (("eperm", EPERM), ("enosys", ENOSYS), ("granted", _GRANTED), ("enotsup", EOPNOTSUPP),
                         ("eafnosupport", EAFNOSUPPORT), ("eprotonosupport", EPROTONOSUPPORT),
                         ("enoprotoopt", ENOPROTOOPT)):
        a.label(label)
        a.ret(_RET_ERRNO | errno)
    a.label("allow")
    a.ret(_RET_ALLOW)
    return a.assemble()
