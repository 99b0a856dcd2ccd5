"""Toolchains from the usual installers (rustup, a Go tarball, SDKMAN, nvm) are found on
the harness's PATH and shown to sandboxes; a build that does not find a program the host
has is told which mount to add."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harness.sandbox.box import SANDBOX_PATH, Sandbox, BuildError
from harness.sandbox.build import run_build
from harness.sandbox.modes import bwrap_available
from harness.sandbox.toolchains import find_toolchains, missing_program, sandbox_path, toolchain_env


def exe(path: Path, text: str = "#!/bin/sh\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def test_the_usual_installers_are_found_on_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for name in ("cargo", "rustup", "rustc"):
        exe(home / ".cargo" / "bin" / name)
    (home / ".cargo" / "credentials.toml").write_text("token = 'secret'\n")
    (home / ".rustup" / "toolchains").mkdir(parents=True)
    exe(tmp_path / "opt" / "go" / "bin" / "go")
    (tmp_path / "opt" / "go" / "VERSION").write_text("go1.22.0\n")
    exe(home / ".sdkman" / "candidates" / "java" / "21.0.2-tem" / "bin" / "javac")
    os.symlink("21.0.2-tem", home / ".sdkman" / "candidates" / "java" / "current")
    exe(home / ".nvm" / "versions" / "node" / "v20.11.0" / "bin" / "node")
    path = os.pathsep.join([str(home / ".cargo/bin"), "/usr/bin", str(tmp_path / "opt/go/bin"),
                            str(home / ".sdkman/candidates/java/current/bin"),
                            str(home / ".nvm/versions/node/v20.11.0/bin"), "/bin", str(tmp_path / "nothing")])
    found = find_toolchains(path, {})
    assert [t.installer for t in found] == ["rustup", "go", "SDKMAN", "nvm"]
    rust, go, java, node = found
    assert rust.shown == (str(home / ".cargo/bin"), str(home / ".rustup"))  # not credentials.toml
    assert dict(rust.env) == {"RUSTUP_HOME": str(home / ".rustup")}
    assert go.shown == (str(tmp_path / "opt/go"),)
    assert java.shown == (str(home / ".sdkman/candidates/java/21.0.2-tem"),)  # where `current` leads
    assert node.shown == (str(home / ".nvm/versions/node/v20.11.0"),)
    # on the sandbox's PATH where the host's PATH has them: rustup's cargo before /usr/bin's
    parts = sandbox_path(found, path).split(os.pathsep)
    assert parts.index(rust.bin) < parts.index("/usr/bin") < parts.index(go.bin) < parts.index("/bin")
    assert toolchain_env(found, path)["RUSTUP_HOME"] == str(home / ".rustup")
    assert sandbox_path((), path) == SANDBOX_PATH


def test_a_program_the_sandbox_does_not_show_is_named_with_the_mount_to_add(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    tool = exe(tmp_path / "tools" / "bin" / "mytool")
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    hint = missing_program("./run: 3: mytool: not found\n", ())
    assert hint is not None and f"{tool}" in hint and f"mounts: [{tmp_path / 'tools'}]" in hint
    assert missing_program("sh: 1: sh: not found", ()) is None  # the sandbox shows /usr/bin
    assert missing_program("ld: cannot find -lfoo", ()) is None


def test_a_sandboxed_build_that_does_not_find_a_host_program_says_which_mount_to_add(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ok, why = bwrap_available()
    if not ok:
        pytest.skip(why)
    tool = exe(tmp_path / "tools" / "bin" / "mytool", "#!/bin/sh\necho built\n")
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    own = tmp_path / "bot"
    exe(own / "build.sh", "#!/bin/sh\nmytool\n")
    for p in (tmp_path, own, own / "build.sh"):
        p.chmod(p.stat().st_mode | 0o005)
    with pytest.raises(BuildError) as e:
        run_build("mine", ["./build.sh"], str(own), {}, Sandbox(mode="bwrap", own=str(own), build=("./build.sh",)),
                  "bwrap")
    assert "mytool: not found" in str(e.value) and f"add `mounts: [{tmp_path / 'tools'}]`" in str(e.value)


def test_a_toolchains_folders_are_not_searched_for_results_folders_as_installed_software(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Like the system's folders and Python's, a toolchain every sandbox is shown is not
    searched for folders a bot may not see (a rustup home holds tens of thousands of
    folders); the bot's own folder still is."""
    from harness.ledger.marker import CONCEAL
    from harness.sandbox import options
    from harness.sandbox.toolchains import Toolchain

    rustup = tmp_path / "home" / ".rustup"
    (rustup / "toolchains" / "stable").mkdir(parents=True)
    chain = Toolchain("rustup", str(tmp_path / "home" / ".cargo" / "bin"), (str(rustup),))
    monkeypatch.setattr(options, "host_toolchains", lambda: (chain,))
    own = tmp_path / "bot"
    own.mkdir()
    searched: list[str] = []
    real = options.marked_at_start
    monkeypatch.setattr(options, "marked_at_start", lambda root, *a: searched.append(root) or real(root, *a))
    box = Sandbox(mode="bwrap", own=str(own), conceal=CONCEAL)
    options._secret(("sh", str(own / "bot.sh")), str(own), box, [str(own), str(rustup)], [str(own), str(rustup)])
    assert searched == [str(own)]
