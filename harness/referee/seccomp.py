"""The seccomp filter every sandboxed bot runs under: a short deny-list of system calls
that reach kernel state shared across sandboxes, or that no Phase 10 bot needs.

- The kernel keyring (`add_key`, `request_key`, `keyctl`): keys belong to the user the
  harness runs as, whatever uid the sandbox shows, so without this two bots (or two
  processes of one bot, in different seat rotations of a duplicate deal) could pass
  notes through it, and fill kernel memory that no cgroup counts and that outlives the run.
- `io_uring_*`, `perf_event_open`, `bpf`, `userfaultfd`: large kernel surfaces with a
  history of escapes, refused by container runtimes' default profiles too.

A refused call fails with EPERM (ENOSYS for io_uring, so that runtimes fall back to
ordinary reads and writes). The filter is a classic BPF program, as bubblewrap's
`--seccomp FD` reads it: built here for x86-64 (with 32-bit x86 programs; the x32 ABI is
refused whole) and AArch64 (with 32-bit ARM programs). On other machines `program()`
returns None and bots run without it (protocol/LIMITS.md says so).
"""

from __future__ import annotations

import platform
import struct

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR = 0
_ARCH = 4

# Classic BPF opcodes.
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
EPERM = 1
ENOSYS = 38

_X32_BIT = 0x40000000

# Per ABI: the refused calls' numbers, (keyring + others, io_uring).
_ABIS: dict[str, dict[int, tuple[tuple[int, ...], tuple[int, ...]]]] = {
    # AUDIT_ARCH_X86_64, AUDIT_ARCH_I386
    "x86_64": {
        0xC000003E: ((248, 249, 250, 298, 321, 323), (425, 426, 427)),
        0x40000003: ((286, 287, 288, 336, 357, 374), (425, 426, 427)),
    },
    # AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM (32-bit programs on a 64-bit kernel)
    "aarch64": {
        0xC00000B7: ((217, 218, 219, 241, 280, 282), (425, 426, 427)),
        0x40000028: ((309, 310, 311, 364, 386, 388), (425, 426, 427)),
    },
}
_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}

REFUSED = ("add_key", "request_key", "keyctl", "perf_event_open", "bpf", "userfaultfd",
           "io_uring_setup", "io_uring_enter", "io_uring_register")
"""The refused calls by name, in the order of each ABI's numbers above."""


def _ins(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for `machine` (default: this one) as bubblewrap reads it, or None where
    there is none. Calls of an ABI it does not know are refused with EPERM."""
    m = (machine or platform.machine()).lower()
    abis = _ABIS.get(_ALIASES.get(m, m))
    if abis is None:
        return None
    # Layout: load the arch; per ABI a test and its block; an unknown arch -> EPERM.
    blocks: list[list[tuple[str, int, int, int, int | str]]] = []
    for arch, (eperm, enosys) in abis.items():
        body: list[tuple[str, int, int, int, int | str]] = [("ins", _LD_W_ABS, 0, 0, _NR)]
        if arch == 0xC000003E:
            body.append(("jmp", _JGE_K, 0, 0, _X32_BIT))  # x32: to EPERM
        for nr in eperm:
            body.append(("jmp", _JEQ_K, 0, 0, nr))
        for nr in enosys:
            body.append(("nosys", _JEQ_K, 0, 0, nr))
        body.append(("ins", _RET_K, 0, 0, _RET_ALLOW))
        blocks.append(body)
    out: list[bytes] = [_ins(_LD_W_ABS, 0, 0, _ARCH)]
    # Each ABI: `JEQ arch` (false: the next test), then its block. The tail: EPERM, ENOSYS.
    tests = list(zip(abis, blocks))
    n_total = 1 + sum(1 + len(b) for _, b in tests) + 1 + 2
    # Positions: out[0] is the arch load; then per ABI its test and block; then the
    # unknown-arch return; then the EPERM and ENOSYS returns.
    pos = 1
    eperm_at = n_total - 2
    enosys_at = n_total - 1
    for arch, body in tests:
        test_at = pos
        next_test = test_at + 1 + len(body)
        out.append(_ins(_JEQ_K, 0, next_test - test_at - 1, arch))
        for i, (kind, code, _jt, _jf, k) in enumerate(body):
            at = test_at + 1 + i
            if kind == "ins":
                out.append(_ins(code, 0, 0, int(k)))
            else:
                target = eperm_at if kind == "jmp" else enosys_at
                out.append(_ins(code, target - at - 1, 0, int(k)))
        pos = next_test
    out.append(_ins(_RET_K, 0, 0, _RET_ERRNO | EPERM))  # an ABI not listed
    out.append(_ins(_RET_K, 0, 0, _RET_ERRNO | EPERM))
    out.append(_ins(_RET_K, 0, 0, _RET_ERRNO | ENOSYS))
    assert len(out) == n_total
    for i, raw in enumerate(out):  # every jump lands inside the program (BPF jumps are 8-bit)
        code, jt, jf, _k = struct.unpack("=HBBI", raw)
        if code & 0x07 == 0x05:
            assert i + 1 + max(jt, jf) < n_total and max(jt, jf) < 256
    return b"".join(out)
