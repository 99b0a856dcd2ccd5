"""Golden results: what a set of tournaments publishes, recorded once and compared after any
change that must not change results (a reorganisation of the code, a faster path).

    python tools/golden.py record   # (re)write tests/golden/expected/
    python tools/golden.py check    # compare; exit 1 and print the first difference
    python tools/golden.py play     # play them with the harness and configs of the current
                                    # folder (another checkout, to compare its speed); print
                                    # the CPU seconds of this process and of its children

Each scenario plays one or more tournament files of tests/golden/configs/ into one results
folder, in order (a league whose field changes between runs), and keeps games.jsonl, the
leaderboard files, stats.md, disqualified.json and `verify`'s report, with what depends on
the clock or the machine taken out: the games' durations, the hash chain and the hashes
that cover them, replays' hashes (a replay holds its messages' times), and timings.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "golden" / "configs"
EXPECTED = ROOT / "tests" / "golden" / "expected"

SCENARIOS: dict[str, tuple[str, ...]] = {
    "rr2": ("rr2.yaml",),
    "rr4-variant": ("rr4-variant.yaml",),
    "gauntlet3": ("gauntlet3.yaml",),
    "random6": ("random6.yaml",),
    "disqualified": ("disqualified.yaml",),
    "settled": ("settled.yaml",),
    "sprt": ("sprt.yaml",),
    "league-edit": ("league-a.yaml", "league-b.yaml"),
}
KEPT = ("games.jsonl", "leaderboard.md", "leaderboard.json", "leaderboard.csv", "head_to_head.csv", "stats.md",
        "disqualified.json", "verify.txt")
#: Keys whose values depend on the clock or on what the clock touched.
_VOLATILE = {"duration_s", "chain", "replay_sha256", "journal_head", "results_sha256", "ratings_sha256"}
_HEX = re.compile(r"\b[0-9a-f]{16,64}\b")


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("*" if k in _VOLATILE else _scrub(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def normalized(name: str, data: bytes) -> str:
    """A kept file with what depends on the clock taken out."""
    text = data.decode("utf-8")
    if name == "games.jsonl":
        return "".join(json.dumps(_scrub(json.loads(line)), sort_keys=True) + "\n" for line in text.splitlines())
    if name == "leaderboard.json":
        return json.dumps(_scrub(json.loads(text)), indent=1, sort_keys=True) + "\n"
    if name in ("verify.txt", "leaderboard.md", "stats.md"):
        return _HEX.sub("<hash>", text)
    return text


def play(scenario: str, work: Path) -> dict[str, str]:
    """Play a scenario into `work`; its kept files, normalized."""
    from harness.tournament.config import load_config
    from harness.tournament.runner import run_tournament
    from harness.tournament.verify import verify_results

    out = work / scenario
    for k, file in enumerate(SCENARIOS[scenario]):
        cfg = load_config(CONFIGS / file, {"output": str(out)})
        run_tournament(cfg, fresh=k == 0, build_site=False)
    v = verify_results(out, replays=True)
    report = "".join(f"{'ok' if c.ok else 'FAIL' if c.ok is False else '-'} {c.name}: {c.detail}\n" for c in v.checks)
    files = {"verify.txt": report.encode()}
    for name in KEPT[:-1]:
        p = out / name
        if p.exists():
            files[name] = p.read_bytes()
    return {name: normalized(name, data) for name, data in files.items()}


def record(scenarios: Iterable[str]) -> None:
    """Write the expected files of `scenarios`."""
    with tempfile.TemporaryDirectory(prefix="p10-golden-") as tmp:
        for s in scenarios:
            folder = EXPECTED / s
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.iterdir():
                old.unlink()
            for name, text in play(s, Path(tmp)).items():
                (folder / name).write_text(text)
            print(f"recorded {s}")


def differences(scenario: str, work: Path) -> list[str]:
    """What a scenario publishes now that differs from its expected files (empty: none)."""
    got = play(scenario, work)
    folder = EXPECTED / scenario
    want = {p.name: p.read_text() for p in folder.iterdir()} if folder.is_dir() else {}
    out = []
    for name in sorted(set(got) | set(want)):
        if got.get(name) != want.get(name):
            a, b = (want.get(name) or "").splitlines(), (got.get(name) or "").splitlines()
            line = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            out.append(f"{scenario}/{name}: line {line + 1}: expected {a[line] if line < len(a) else '<end>'!r}, "
                       f"got {b[line] if line < len(b) else '<end>'!r}")
    return out


def play_here(scenarios: Iterable[str]) -> str:
    """Play `scenarios` with the harness and tests/golden/configs of the current folder;
    the CPU seconds this process and its children (workers, bots) used."""
    import resource

    global CONFIGS
    sys.path.insert(0, str(Path.cwd()))
    CONFIGS = Path.cwd() / "tests" / "golden" / "configs"
    with tempfile.TemporaryDirectory(prefix="p10-golden-") as tmp:
        for s in scenarios:
            play(s, Path(tmp))
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return (f"cpu_s {me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime:.2f} "
            f"(this process {me.ru_utime + me.ru_stime:.2f}, its children {kids.ru_utime + kids.ru_stime:.2f})")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("record", "check", "play"):
        print(__doc__)
        return 2
    if argv[0] == "play":
        print(play_here(argv[1:] or list(SCENARIOS)))
        return 0
    names = argv[1:] or list(SCENARIOS)
    if argv[0] == "record":
        record(names)
        return 0
    with tempfile.TemporaryDirectory(prefix="p10-golden-") as tmp:
        diffs = [d for s in names for d in differences(s, Path(tmp))]
    print("\n".join(diffs) or "the golden results are unchanged")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
