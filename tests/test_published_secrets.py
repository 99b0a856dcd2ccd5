"""What a host publishes shows nothing of the host: no value of a bot's `env:` (however a bot
or an error quotes it) and no absolute path of the host's folders, in any file of a results
folder that may be published, nor in anything `serve` answers; `verify` still binds the
config, and the entrants' fingerprints hide the values by a key kept beside the seed."""

from __future__ import annotations

import json
import shutil
import stat
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
import yaml

from harness.referee.redact import HOST, WITHHELD, Redactor, host_root, shown_path
from harness.tournament.identity import fingerprint
from harness.ledger.seeds import ENV_KEY
from harness.tournament.serve import make_server
from test_bad_input import invoke

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-PLANTED-0123456789abcdef"
#: A bot that says on stderr its secret, where it lives and its working folder, in an
#: error line (the line a fault quotes), then plays as tests/bots/faulty.py.
PROLOGUE = '''import os, sys
sys.stderr.write("Error: key " + os.environ.get("P10_KEY", "-") + " in " + os.path.abspath(__file__)
                 + " cwd " + os.getcwd() + "\\n")
sys.stderr.flush()
'''


def _host(tmp: Path) -> tuple[Path, Path]:
    """A tournament laid out as a host would: tournaments/ beside bots/, in `tmp`."""
    home = tmp / "home-of-alice"
    (home / "tournaments").mkdir(parents=True)
    for name in ("leaky", "quiet"):
        folder = home / "bots" / name
        folder.mkdir(parents=True)
        faulty = (ROOT / "tests/bots/faulty.py").read_text()
        anchor = "from harness.players import GreedyStrategy\n"
        (folder / "bot.py").write_text(faulty.replace(anchor, anchor + PROLOGUE.replace("import os, sys\n", ""), 1))
    (home / "models").mkdir()
    (home / "models" / "weights.txt").write_text("w")
    cfg = {
        "name": "private", "seed": 11, "base_dir": "..",
        "bots": [
            # Dies mid-hand after quoting its secret on stderr: the fault's reason quotes it.
            {"name": "leaky", "cmd": "python bots/leaky/bot.py exit_after 3", "env": {"P10_KEY": SECRET}},
            # Its command names its script by the host's absolute path; a mount; a cwd.
            {"name": "quiet", "cmd": ["python", str(home / "bots/quiet/bot.py"), "illegal_once"],
             "cwd": "bots/quiet", "env": {"P10_KEY": SECRET, "LEVEL": "3"}, "mounts": ["models"]},
            {"name": "greedy", "cmd": [sys.executable, str(ROOT / "bots/python/greedy.py")]},
        ],
        "table_size": 3, "games_per_table": 3, "duplicate": True, "parallel": 1,
        "rules": {"phases": [1, 2], "hand_limit": 8},
        "faults": {"disqualify": False},
        "replays": "all",
        "output": str(home / "results" / "private"),
    }
    path = home / "tournaments" / "private.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path, home / "results" / "private"


def _needles(tmp: Path) -> list[bytes]:
    """What must not be published: the secret, the host's folders (as they are, and as
    their real paths), and the folder of the Python that runs the harness."""
    out = [SECRET.encode(), str(tmp).encode(), str(tmp.resolve()).encode()]
    if sys.prefix not in ("/usr", "/usr/local"):
        out.append(sys.prefix.encode())
    return out


def _published(out: Path) -> list[Path]:
    """Every file of a results folder but the host's own: its secrets, lock and logs."""
    return [p for p in sorted(out.rglob("*")) if p.is_file() and p.name not in ("seed.secret", ENV_KEY, ".p10-lock")
            and "logs" not in p.relative_to(out).parts]


def _served(out: Path) -> dict[str, bytes]:
    """Everything `serve` answers for the site's files, the page and live.json."""
    server = make_server(out, port=0, build=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        paths = ["/", "/live.json", "/config.resolved.yaml"] + [
            "/" + str(p.relative_to(out / "site")) for p in sorted((out / "site").rglob("*")) if p.is_file()]
        got = {}
        for path in paths:
            with urllib.request.urlopen(base + path, timeout=30) as r:
                got[path] = r.read()
        return got
    finally:
        server.shutdown()
        server.server_close()


def test_a_planted_secret_and_the_hosts_paths_are_in_no_published_or_served_file(tmp_path):
    cfg_path, out = _host(tmp_path)
    res = invoke("run", cfg_path, "--no-progress")
    assert res.exit_code == 0, res.output
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    quoted = [f["reason"] for g in games for f in g["faults"] if f["entrant"] == "leaky"]
    assert quoted and all(WITHHELD in r and f"{HOST}/bots/leaky/bot.py" in r for r in quoted), quoted
    assert (out / "logs").is_dir() and (out / "replays").is_dir()  # the bot said it; the host keeps it
    files = _published(out)
    assert {"games.jsonl", "config.resolved.yaml", "tournament.json", "leaderboard.json", "index.html"} <= {
        p.name for p in files}
    for p in files:
        data = p.read_bytes()
        for needle in _needles(tmp_path):
            assert needle not in data, f"{p.relative_to(out)} shows {needle!r}"
    for path, body in _served(out).items():
        for needle in _needles(tmp_path):
            assert needle not in body, f"serve {path} shows {needle!r}"
    resolved = yaml.safe_load((out / "config.resolved.yaml").read_text())
    quiet = resolved["bots"][1]
    assert quiet["env"] == {"P10_KEY": WITHHELD, "LEVEL": WITHHELD}
    assert quiet["cmd"][1] == f"{HOST}/bots/quiet/bot.py" and quiet["cwd"] == f"{HOST}/bots/quiet"
    assert quiet["mounts"] == [f"{HOST}/models"]
    # verify binds what is published; the key that hides the env values is the owner's alone.
    res = invoke("verify", out)
    assert res.exit_code == 0, res.output
    assert stat.S_IMODE((out / ENV_KEY).stat().st_mode) == 0o600
    # Run again: the same bots (by their keyed fingerprints), nothing to play.
    res = invoke("run", cfg_path, "--no-progress")
    assert res.exit_code == 0, res.output


def test_fingerprints_hide_env_values_and_an_older_folder_goes_on(tmp_path):
    cfg_path, out = _host(tmp_path)
    assert invoke("run", cfg_path, "--no-progress", "--no-site").exit_code == 0
    meta = json.loads((out / "tournament.json").read_text())
    from harness.tournament.config import load_config
    cfg = load_config(cfg_path)
    quiet = cfg.bot("quiet")
    skip = [cfg.output.resolve(), cfg_path.resolve().parent]
    unkeyed = fingerprint(quiet, skip)
    assert meta["entrants"]["quiet"] != unkeyed  # not to be tried against guesses of the values
    assert meta["entrants"]["greedy"] == fingerprint(cfg.bot("greedy"), skip)  # no env: as before
    # A folder of a version that fingerprinted the values as they are is the same bot.
    meta["entrants"]["quiet"] = unkeyed
    (out / "tournament.json").write_text(json.dumps(meta, indent=1) + "\n")
    res = invoke("run", cfg_path, "--no-progress", "--no-site")
    assert res.exit_code == 0, res.output
    assert json.loads((out / "tournament.json").read_text())["entrants"]["quiet"] != unkeyed
    # A lost key: the entrants with env: values are not taken for the bots that played.
    (out / ENV_KEY).unlink()
    res = invoke("run", cfg_path, "--no-progress", "--no-site")
    assert res.exit_code != 0 and "env: values" in res.output and ENV_KEY in res.output


def test_redactor_masks_secrets_whole_cut_and_as_json_writes_them():
    r = Redactor(["s3cr3t-value", "short"], {"/srv/alice/t": "<host>"})
    assert r.text("key=s3cr3t-value!") == f"key={WITHHELD}!"
    assert r.text("cr3t-value rest") == f"{WITHHELD} rest"  # a tail that starts inside it
    assert r.text("begin s3cr3t") == f"begin {WITHHELD}"  # a line cut after its start
    assert r.text("short words") == "short words"  # too short to look for
    assert r.text("at /srv/alice/t/bots/x.py") == "at <host>/bots/x.py"
    odd = Redactor(['quo"te\\d-é-secret'], {})
    for quoted in (json.dumps({"reason": 'x quo"te\\d-é-secret y'}), repr({"k": 'quo"te\\d-é-secret'}),
                   json.dumps(repr('quo"te\\d-é-secret'))):
        assert "secret" not in odd.text(quoted) and b"secret" not in odd.line(quoted.encode()), quoted
    assert odd.data({"a": ['quo"te\\d-é-secret']}) == {"a": [WITHHELD]}
    # A host folder in the harness's own JSON lines; a value the config publishes is no secret.
    folders = Redactor([], {"/srv/alice/t": "<host>"}).folder_lines([json.dumps({"p": "/srv/alice/t/x"}).encode()])
    assert folders == [json.dumps({"p": "<host>/x"}).encode()]
    assert Redactor(["standard"], {}, public='{"variant": "standard"}').text("standard") == "standard"


def test_host_paths_show_relative_to_the_tournaments_root(tmp_path):
    (tmp_path / "t").mkdir()
    root = host_root(str(tmp_path / "t"), str(tmp_path))
    assert root == str(tmp_path.resolve())
    assert shown_path(str(tmp_path.resolve() / "bots" / "a"), root) == f"{HOST}/bots/a"
    assert shown_path("/opt/elsewhere/model.bin", root) == f"{HOST}/…/model.bin"
    assert shown_path("bots/a", root) == "bots/a"
    # A base_dir with nothing in common with the tournament's folder: its own folder is the root.
    assert host_root(str(tmp_path / "t"), "/usr") == str((tmp_path / "t").resolve())


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_published_form_is_the_same_in_the_sandbox_and_out_of_it(tmp_path):
    cfg_path, out = _host(tmp_path)
    from harness.tournament.config import load_config, with_sandbox
    boxed, bare = load_config(cfg_path), with_sandbox(load_config(cfg_path), "none")
    assert boxed.config_sha256() == bare.config_sha256()


#: Values that a published file may quote escaped or cut: quotes, a backslash, a newline.
ODD = {"notjson": "sk-NOTJSON-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
       "field": "sk-FIELD-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmn",
       "drawval": 'pa\'ss"wo\\rd-SECRET-q1', "longraw": "sk-LONGRAW-ABCDEFGHIJKLMNOPQRSTUVWXYZ",
       "environ": "bs\\lash-SECRET-ENVIRON", "crash": "sk-CRASH-ABCDEFGHIJ\nsk-CRASH-LINE2-KLMNOP"}


def _pieces(secret: str) -> set[str]:
    """Every run of 10 characters of a secret (a cut piece of it is one of them)."""
    plain = secret.replace("\\", "").replace('"', "").replace("'", "")
    return {plain[i:i + 10] for i in range(len(plain) - 9)}


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_a_bot_cannot_publish_its_secret_escaped_or_cut_by_the_harness(tmp_path, monkeypatch, sandbox):
    """A value quoted by a fault (cut at 40 or 80 characters, as Python's repr, escaped by
    JSON) or kept in a replay (cut at 4,096 bytes) is masked before anything quotes it; so is
    the harness's own environment, which a bot without a sandbox inherits; and a value that
    is also an ordinary word (the entrant's name, the variant) changes nothing the harness
    writes: verify passes."""
    monkeypatch.setenv("P10_HOST_TOKEN", "ghp_HOSTSHELLSECRET0123456789abcdef")
    (tmp_path / "bots").mkdir()
    shutil.copy(ROOT / "tests/bots/leaky.py", tmp_path / "bots/leaky.py")
    bots = [{"name": mode, "cmd": f"python bots/leaky.py {mode}", "env": {"K": value}} for mode, value in ODD.items()]
    bots.append({"name": "greedy-v2", "cmd": "python -m harness.bots.greedy",
                 "env": {"MODEL": "greedy-v2", "VARIANT": "standard"}})
    cfg = {"name": "odd", "seed": 5, "bots": bots, "format": "gauntlet", "challengers": list(ODD),
           "table_size": 2, "games_per_table": 2, "duplicate": False, "parallel": 1, "sandbox": sandbox,
           "rules": {"variant": "standard", "phases": [1, 2], "hand_limit": 6}, "faults": {"disqualify": False},
           "replays": "all", "output": str(tmp_path / "results" / "odd")}
    path = tmp_path / "odd.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = invoke("run", path, "--no-progress")
    assert res.exit_code == 0, res.output
    out = tmp_path / "results" / "odd"
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert {f["entrant"] for g in games for f in g["faults"]} >= set(ODD) - {"longraw"}
    secrets = [v for v in ODD.values()] + (["ghp_HOSTSHELLSECRET0123456789abcdef"] if sandbox == "none" else [])
    for p in _published(out):
        text = p.read_text(errors="replace").replace("\\", "").replace('"', "").replace("'", "")
        for secret in secrets:
            leaked = [x for x in _pieces(secret) if x in text]
            assert not leaked, f"{p.relative_to(out)} shows {leaked[0]!r} of {secret!r}"
    res = invoke("verify", out)
    assert res.exit_code == 0, res.output
