"""The starter kits in bots/templates/: each builds with its `run --build`, passes
`check-bot` through its `run` script, plays a 20-game gauntlet against the bundled bots
without a fault, and runs from a read-only folder (as in a sandbox) once built.

A kit whose toolchain or JSON library is missing here is skipped, with what is missing;
`.ci/run` installs them where apt can.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.checker import NAMES
from harness.cli import main
from harness.tournament.config import load_config
from harness.tournament.runner import run_tournament

ROOT = Path(__file__).resolve().parent.parent
KITS = ROOT / "bots" / "templates"
HELLO = {"type": "hello", "protocol": "p10/1", "name": "kit", "time": {"move_ms": 1000, "game_ms": None}}
# Generous limits: a JVM starting on a loaded machine, a first reply before the JIT warms up.
MOVE_MS, STARTUP_MS = 5000, 30000
BUILD_TIMEOUT_S = 900


def _files(*patterns: str) -> list[str]:
    return [p for pattern in patterns for p in glob.glob(pattern)]


# kit -> (commands it needs on PATH, files it needs, the Debian packages that give them)
NEEDS: dict[str, tuple[list[str], list[str], str]] = {
    "python": (["python3"], [], "python3"),
    "javascript": (["node"], [], "nodejs"),
    "c": (["cc"], ["/usr/include/cjson/cJSON.h"], "gcc libcjson-dev"),
    "cpp": (["c++"], ["/usr/include/nlohmann/json.hpp"], "g++ nlohmann-json3-dev"),
    "go": (["go"], [], "golang-go"),
    "rust": (["cargo"], [], "cargo (or rustup)"),
    "java": (["javac", "jar", "java"], ["/usr/share/java/gson.jar"], "default-jdk-headless libgoogle-gson-java"),
}
COMPILED = ["c", "cpp", "go", "rust", "java"]


def missing(kit: str) -> list[str]:
    """What the kit needs that this machine lacks (empty: it can be built and run)."""
    commands, files, _ = NEEDS[kit]
    return [c for c in commands if shutil.which(c) is None] + [f for f in files if not _files(f)]


def run_script(kit: str) -> str:
    return str(KITS / kit / "run")


@pytest.fixture(scope="module")
def built() -> dict[str, str]:
    """kit -> "" once built, or the reason it cannot be (building each kit at most once)."""
    return {}


def build(kit: str, built: dict[str, str]) -> None:
    """Build the kit with `run --build` (skip the test if its toolchain is missing)."""
    if kit not in built:
        lack = missing(kit)
        if lack:
            built[kit] = f"the {kit} kit needs {', '.join(lack)} (Debian: apt-get install {NEEDS[kit][2]})"
        else:
            proc = subprocess.run([run_script(kit), "--build"], capture_output=True, text=True,
                                  timeout=BUILD_TIMEOUT_S, stdin=subprocess.DEVNULL)
            assert proc.returncode == 0, f"{kit}: run --build failed:\n{proc.stderr}"
            assert proc.stdout == "", f"{kit}: run --build wrote to stdout: {proc.stdout!r}"
            built[kit] = ""
    if built[kit]:
        pytest.skip(built[kit])


@pytest.mark.parametrize("kit", list(NEEDS))
def test_kit_has_an_executable_run_script_and_a_readme(kit: str) -> None:
    folder = KITS / kit
    assert os.access(folder / "run", os.X_OK)
    readme = (folder / "README.md").read_text()
    for words in ("./run --build", "check-bot -- bots/templates/", "build: ./run --build", "cmd: ./run"):
        assert words in readme, f"{kit}/README.md does not mention {words!r}"


@pytest.mark.parametrize("kit", list(NEEDS))
def test_kit_passes_check_bot(kit: str, built: dict[str, str]) -> None:
    build(kit, built)
    result = CliRunner().invoke(main, ["check-bot", "--json", "--move-ms", str(MOVE_MS), "--startup-ms",
                                       str(STARTUP_MS), "--", run_script(kit)])
    report = json.loads(result.output)
    failed = {c["name"]: c for c in report["checks"] if c["status"] not in ("pass", "skip")}
    assert failed == {}
    assert result.exit_code == 0 and report["ok"]
    assert [c["name"] for c in report["checks"]] == list(NAMES)


def test_python_sdk_bot_passes_check_bot() -> None:
    result = CliRunner().invoke(main, ["check-bot", "--json", "--move-ms", str(MOVE_MS), "--", sys.executable,
                                       str(KITS / "python" / "sdk_bot.py")])
    report = json.loads(result.output)
    assert [c["name"] for c in report["checks"] if c["status"] not in ("pass", "skip")] == []
    assert result.exit_code == 0 and report["ok"]


@pytest.mark.parametrize("kit", list(NEEDS))
def test_kit_plays_a_gauntlet_against_the_bundled_bots_without_a_fault(kit: str, built: dict[str, str],
                                                                        tmp_path: Path) -> None:
    build(kit, built)
    config = {
        "name": f"kit-{kit}",
        "seed": 19,
        "bots": [
            {"name": kit, "cmd": [run_script(kit)]},
            {"name": "greedy", "cmd": [sys.executable, str(ROOT / "bots/python/greedy.py")]},
            {"name": "random", "cmd": [sys.executable, str(ROOT / "bots/python/random_bot.py"), "3"]},
        ],
        "format": "gauntlet",
        "challengers": [kit],
        "table_size": 2,
        "games_per_table": 10,  # two tables: 20 games, the kit in each
        "parallel": 2,
        "rules": {"phases": [1, 2], "hand_limit": 20},
        "time": {"move_ms": MOVE_MS, "startup_ms": STARTUP_MS},
        "replays": "failed",
        "output": str(tmp_path / "out"),
    }
    path = tmp_path / "kit.yaml"
    path.write_text(yaml.safe_dump(config))
    outcome = run_tournament(load_config(path), build_site=False)
    records = [json.loads(line) for line in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert outcome.played == len(records) == 20
    assert all(kit in r["seats"] for r in records)
    assert [(r["game"], r["faults"], r["forfeits"]) for r in records if r["faults"] or r["forfeits"]] == []
    row = {r["entrant"]: r for r in outcome.board["entrants"]}[kit]
    assert row["games"] == 20 and row["faults"] == 0
    logs = (tmp_path / "out" / "logs").glob(f"{kit}.*")
    texts = [p.read_text(errors="replace") for p in logs]
    assert any(": game " in t for t in texts), "the kit logs nothing to stderr"
    assert not any(': game "' in t for t in texts), "the game id is logged as JSON, in quotes"


def _sandboxed(kit: str, *bwrap_args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """Run the kit's `run` with its folder read-only (bubblewrap), as a sandbox would."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: cannot make the kit's folder read-only")
    folder = str(KITS / kit)
    argv = ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--ro-bind", folder, folder,
            *bwrap_args, "--die-with-parent", run_script(kit)]
    probe = subprocess.run(["bwrap", "--bind", "/", "/", "--dev", "/dev", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"bubblewrap cannot run here: {probe.stderr.strip()}")
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("kit", COMPILED)
def test_built_kit_runs_from_a_read_only_folder_and_exits_on_bye(kit: str, built: dict[str, str]) -> None:
    build(kit, built)
    proc = _sandboxed(kit, stdin=json.dumps(HELLO) + "\n" + json.dumps({"type": "bye"}) + "\n")
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["type"] for line in proc.stdout.splitlines()] == ["hello"]


@pytest.mark.parametrize("kit", COMPILED)
def test_unbuilt_kit_in_a_read_only_folder_says_to_build_first(kit: str, built: dict[str, str]) -> None:
    build(kit, built)  # only for the skip: the empty tmpfs below hides the build
    proc = _sandboxed(kit, "--tmpfs", str(KITS / kit / "build"), stdin=json.dumps(HELLO) + "\n")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "is read-only: build first with" in proc.stderr and "run --build" in proc.stderr


def test_a_stale_build_is_rebuilt_when_the_folder_is_writable(tmp_path: Path, built: dict[str, str]) -> None:
    build("c", built)
    kit = tmp_path / "c"
    shutil.copytree(KITS / "c", kit, ignore=shutil.ignore_patterns("build"))
    hello = json.dumps(HELLO) + "\n"
    first = subprocess.run([str(kit / "run")], input=hello, capture_output=True, text=True, timeout=120)
    assert json.loads(first.stdout)["name"] == "c-template"  # built on first use
    source = kit / "bot.c"
    source.write_text(source.read_text().replace('"c-template"', '"my-c-bot"'))
    os.utime(kit / "build" / "bot", (1, 1))  # the build is older than the source
    second = subprocess.run([str(kit / "run")], input=hello, capture_output=True, text=True, timeout=120)
    assert json.loads(second.stdout)["name"] == "my-c-bot"


def test_a_kit_builds_in_the_sandbox_with_its_build_command(tmp_path: Path, built: dict[str, str]) -> None:
    """`build: ./run --build` in the sandbox: the kit's folder is writable only while it
    builds; then every check passes with the folder read-only."""
    build("c", built)
    from harness.sandbox.modes import bwrap_available

    ok, why = bwrap_available()
    if not ok:
        pytest.skip(why)
    kit = tmp_path / "c"
    shutil.copytree(KITS / "c", kit, ignore=shutil.ignore_patterns("build"))
    result = CliRunner().invoke(main, ["check-bot", "--json", "--sandbox", "bwrap", "--move-ms", str(MOVE_MS),
                                       "--build", f"{kit / 'run'} --build", "--", str(kit / "run")])
    report = json.loads(result.output)
    assert [c["name"] for c in report["checks"] if c["status"] not in ("pass", "skip")] == []
    assert result.exit_code == 0 and (kit / "build" / "bot").is_file()



def _clean_copy(kit: str, tmp_path: Path) -> Path:
    """The kit as an author starts from it: a copy without what a build made, readable by
    the unprivileged user a sandboxed build runs as."""
    folder = tmp_path / kit
    shutil.copytree(KITS / kit, folder, ignore=shutil.ignore_patterns("build", "Cargo.lock", "target"))
    for p in [tmp_path, *folder.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o005)
    return folder


def _needs_bwrap() -> None:
    from harness.sandbox.modes import bwrap_available

    ok, why = bwrap_available()
    if not ok:
        pytest.skip(why)


@pytest.mark.parametrize("kit", list(NEEDS))
def test_every_kit_builds_in_the_sandbox_and_passes_check_bot(kit: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`check-bot --build './run --build' -- ./run` from a clean copy, in the sandbox: the
    build sees the toolchain the host's PATH resolves (rustup's cargo included) and needs
    no network and no crates registry."""
    lack = missing(kit)
    if lack:
        pytest.skip(f"the {kit} kit needs {', '.join(lack)}")
    _needs_bwrap()
    folder = _clean_copy(kit, tmp_path)
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["check-bot", "--json", "--sandbox", "bwrap", "--move-ms", str(MOVE_MS),
                                       "--startup-ms", str(STARTUP_MS), "--build", "./run --build", "--", "./run"])
    report = json.loads(result.output)
    assert [(c["name"], c["message"]) for c in report["checks"] if c["status"] not in ("pass", "skip")] == [], result.output[-2000:]
    assert result.exit_code == 0 and ((folder / "build").is_dir() or kit not in COMPILED)


def test_go_and_rust_kits_built_from_clean_folders_resume_after_an_interruption(tmp_path: Path) -> None:
    """A tournament of the Go and Rust kits with `build: ./run --build`, from clean folders
    (no build/, no Cargo.lock), stopped after its first game and run again: the second
    run builds again and resumes (the builds' outputs are not part of the entrants);
    then a changed source file is refused by the entrant's name."""
    import threading

    from harness.tournament.runner import ResultsError

    for kit in ("go", "rust"):
        if missing(kit):
            pytest.skip(f"the {kit} kit needs {', '.join(missing(kit))}")
    _needs_bwrap()
    folders = {kit: _clean_copy(kit, tmp_path) for kit in ("go", "rust")}
    config = {
        "name": "kits", "seed": 4, "table_size": 2, "games_per_table": 4, "parallel": 1, "sandbox": "bwrap",
        "bots": [{"name": f"{k}-kit", "cwd": str(f), "build": "./run --build", "cmd": "./run"}
                 for k, f in folders.items()],
        "rules": {"phases": [1], "hand_limit": 8}, "replays": "none",
        "time": {"move_ms": MOVE_MS, "startup_ms": STARTUP_MS}, "output": str(tmp_path / "out"),
    }
    path = tmp_path / "kits.yaml"
    path.write_text(yaml.safe_dump(config))
    stop = threading.Event()
    first = run_tournament(load_config(path), build_site=False, on_progress=lambda p: stop.set() if p.done else None, stop=stop)
    assert 1 <= first.played < 4 and not first.finished
    assert (folders["rust"] / "Cargo.lock").is_file() and (folders["go"] / "build" / "bot").is_file()
    second = run_tournament(load_config(path), build_site=False)
    assert second.finished and first.played + second.played == 4
    main_rs = folders["rust"] / "src" / "main.rs"
    main_rs.write_text(main_rs.read_text().replace('"rust-template"', '"rusty"'))
    with pytest.raises(ResultsError, match="'rust-kit' is not the bot that played its games"):
        run_tournament(load_config(path), build_site=False)
