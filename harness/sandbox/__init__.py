"""The sandbox around a bot's processes, apart from the referee that talks to them.

A sandboxed bot runs as `bwrap <options> -- <its command>` with its own user, PID, IPC,
network, UTS and cgroup namespaces, uid/gid 1000 inside, a fresh `/proc`, a minimal
`/dev`, no network at all, read-only views of what programs need (`/usr`, `/bin`, `/lib*`,
a few files of `/etc`, the Python it runs with when its command is `python`, its own
folders and its `mounts:`), a size-capped tmpfs as `/tmp` and `HOME` (which `/dev/shm`
leads into: the only place it can write), and a minimal environment. Hidden from it: the
results folder, the tournament file and its folder, other bots' folders and, unless its
command is the harness's Python, the harness itself. All of `/proc` is read-only. A bot's
build works on a copy of its folder, as an unprivileged host user when the harness runs as
root (`build.run_build`).

One module per concern:

- `box`: the `Sandbox` a bot is configured with, the places every sandbox has, the errors;
- `modes`: whether bubblewrap runs here, the mode a configured one resolves to, `describe`;
- `paths`: the paths a bot's command names, as the host finds them;
- `marks`: the search for folders no bot may see (results folders) in those it is shown;
- `options`: bwrap's command line (`bwrap_options`, `prepare`);
- `seccomp`: the system-call filter, by syscall name;
- `tree`, `undo`: a build's copy of its folder and the copy back, undone on failure;
- `private`: the copy of its own folder each process of a bot is shown in its games;
- `build`: running a build within its limits;
- `cgroups`: one cgroup per bot (v2 or v1), or why none;
- `proctable`, `rlimits`, `scratch`: reading `/proc`, resource limits, the scratch's use.
"""
