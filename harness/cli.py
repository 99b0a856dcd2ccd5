"""The p10-tourney command line: parse, call the library, print."""

from __future__ import annotations

import json
import math
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from . import __version__


class _HostFailure(click.ClickException):
    """The command itself could not do its work here (not the user's or the bot's fault)."""

    exit_code = 2


def _fail(e: BaseException, code: int = 1) -> click.ClickException:
    """`e` as one `Error:` line, with exit status `code` (1, or 2: `_HostFailure`)."""
    return (_HostFailure if code == 2 else click.ClickException)(str(e).splitlines()[0] if str(e) else type(e).__name__)


def _clean(text: object) -> str:
    """A bot's words (a fault's reason, its reply) safe to print: control characters written
    as `\\xNN`, so that they can move no cursor and set no title."""
    from .referee.process import printable

    return printable(str(text))


_SANDBOX_HELP = ("How bots are contained: auto (bubblewrap where it can run, else none with a warning), "
                 "bwrap (required), none. Overrides the tournament file.")


def _sandbox_option(f: Any) -> Any:
    return click.option("--sandbox", type=click.Choice(["auto", "bwrap", "none"]), default=None,
                        help=_SANDBOX_HELP)(f)


def _warn_unsandboxed(state: dict[str, Any]) -> None:
    """The warning at start when bots will run without a sandbox, or limits per process only."""
    if state.get("note"):
        click.echo(f"warning: {state['note']}", err=True)


class _Group(click.Group):
    """Every user mistake is one `Error: …` line and a non-zero exit, usage errors
    included (click would print the usage first)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except click.UsageError as e:
            hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
            click.echo(f"Error: {e.format_message()}{hint}", err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


DEFAULT_MOVE_MS = 1000
"""`--move-ms` of play, check-bot and ask: `harness.referee.DEFAULT_MOVE_MS`, a tournament
file's default too (written out here so that the command line loads no referee to show
its help; a test checks that they agree)."""

@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="p10-tourney")
def main() -> None:
    """Phase 10 bot tournaments: play, rate and publish."""


# ----- run ---------------------------------------------------------------------------------


@main.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--parallel", "-j", type=int, help="Worker processes (overrides the config).")
@click.option("--output", "-o", type=click.Path(file_okay=False, path_type=Path), help="Results folder (overrides the config).")
@click.option("--fresh", is_flag=True, help="Discard earlier results in the output folder and start again.")
@click.option("--executor", type=click.Choice(["local", "dask"]), help="Where games run (overrides the config).")
@click.option("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786 (with --executor dask).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--no-site", is_flag=True, help="Do not build the HTML site at the end.")
@click.option("--retire", "retire", multiple=True, metavar="NAME",
              help="Retire entrant NAME: its games stay in the standings, it is never scheduled again (repeat).")
@click.option("--forever", is_flag=True,
              help="A league: play rounds until stopped (Ctrl-C or SIGTERM: the games being played finish, "
                   "the results are published, exit 0).")
@click.option("--heartbeat", type=click.FloatRange(0.05, 3600), default=5.0, show_default=True, metavar="SECONDS",
              help="How often the run writes progress.json while it lives: `serve` shows a run silent for three "
                   "heartbeats as stopped.")
@_sandbox_option
def run(config: Path, parallel: int | None, output: Path | None, fresh: bool, executor: str | None,
        scheduler: str | None, no_progress: bool, no_site: bool, retire: tuple[str, ...], forever: bool,
        heartbeat: float, sandbox: str | None) -> None:
    """Run the tournament described by CONFIG (YAML). Run it again to continue an
    interrupted tournament, or after adding or removing bots: the games played are kept
    and only the games the new field needs are played."""
    from rich.console import Console

    from .report.leaderboard import first_fault_text, fault_kinds_text, print_leaderboard
    from .sandbox.box import SandboxError
    from .tournament.config import ConfigError, load_config, with_sandbox
    from .tournament.executor import ClusterError, ExecutorError
    from .tournament.runner import ResultsError, run_tournament, sandbox_state

    overrides: dict[str, Any] = {"parallel": parallel, "output": str(output) if output else None,
                                 "executor": executor, "scheduler": scheduler}
    if scheduler and not executor:
        overrides["executor"] = "dask"
    try:
        cfg = with_sandbox(load_config(config, overrides), sandbox)
        _warn_unsandboxed(sandbox_state(cfg))
    except (ConfigError, SandboxError) as e:
        raise _fail(e) from None
    console = Console(stderr=True)
    show = not no_progress and console.is_terminal
    progress_cb, stop = _progress(console, show)
    halt = _halt_on_signals() if forever else None
    try:
        outcome = run_tournament(cfg, fresh=fresh, on_progress=progress_cb, build_site=not no_site,
                                 retire=retire, forever=forever, stop=halt, heartbeat_s=heartbeat)
    except KeyboardInterrupt:
        stop()
        console.print(f"[yellow]Interrupted.[/yellow] Finished games are kept in {cfg.output}/games.jsonl; "
                      "run the same command again to continue.")
        sys.exit(130)
    except (ResultsError, ConfigError, ClusterError, SandboxError, ExecutorError) as e:
        stop()
        raise _fail(e) from None
    except OSError as e:  # the results folder cannot be written, say
        stop()
        raise click.ClickException(f"{cfg.output}: {e.strerror or e}" + (f": {e.filename}" if e.filename else "")) from None
    except ImportError as e:
        stop()
        raise click.ClickException(f"{e}; the dask executor needs: pip install 'p10-tourney[cluster]'") from None
    stop()
    print_leaderboard(outcome.board, Console())
    for row in outcome.board.get("entrants", []):
        if row.get("faults"):
            click.echo(f"faults: {row['entrant']}: {fault_kinds_text(row)}; first: {_clean(first_fault_text(row))}")
    for d in outcome.board.get("disqualified", []):
        click.echo(f"disqualified: {d['entrant']} from game {d['from_game']}: {_clean(d['reason'])}")
    for i in outcome.incidents:
        click.echo(f"worker {i['worker']} lost during game {i['game']} ({i['reason']}); the game was played again")
    click.echo(f"{outcome.played} games played in {outcome.elapsed_s:.1f} s; results in {cfg.output}/"
               + ("" if no_site else f" (site: {cfg.output}/site/index.html)"))


def _halt_on_signals() -> Any:
    """An event that SIGINT (Ctrl-C) and SIGTERM set: `run --forever` then starts no more
    games, lets those being played finish and publishes. A second signal stops at once."""
    import signal
    import threading

    halt = threading.Event()

    def handler(signum: int, frame: Any) -> None:
        if halt.is_set():
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise KeyboardInterrupt
        halt.set()
        click.echo(f"{signal.Signals(signum).name}: finishing the games being played, then publishing "
                   "(again to stop at once)", err=True)

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    return halt


def _progress(console: Any, show: bool) -> tuple[Any, Any]:
    """A rich progress bar: games done of total, games per second, time left, the leader and,
    with early stopping, where it stands (the SPRT's log-likelihood ratio and its bounds)."""
    if not show:
        return None, lambda: None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("[bold]games"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:.1f} games/s"), TimeRemainingColumn(),
        TextColumn("leader: {task.fields[leader]}"), TextColumn("{task.fields[look]}"), console=console,
        transient=True,
    )
    state: dict[str, Any] = {}

    def update(p: Any) -> None:
        if "task" not in state:
            bar.start()
            state["task"] = bar.add_task("games", total=p.total, completed=p.done, rate=0.0, leader="—", look="")
            state["first"] = p.done
        import time as _t

        elapsed = max(1e-6, _t.monotonic() - p.started_at)
        from .ratings.stopping import progress_text

        bar.update(state["task"], completed=p.done, rate=(p.done - state["first"]) / elapsed, leader=p.leader or "—",
                   look=progress_text(getattr(p, "stopping", None)))

    def stop() -> None:
        if "task" in state:
            bar.stop()

    return update, stop


# ----- leaderboard, report, replay -----------------------------------------------------------


@main.command()
@click.argument("results", type=click.Path(file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json", "csv"]), default="table")
def leaderboard(results: Path, fmt: str) -> None:
    """Print the leaderboard of a results folder."""
    board = _load_board(results)
    try:
        if fmt == "table":
            from .report.leaderboard import print_leaderboard

            print_leaderboard(board)
        elif fmt == "markdown":
            from .report.leaderboard import to_markdown

            click.echo(to_markdown(board), nl=False)
        elif fmt == "csv":
            from .report.leaderboard import to_csv

            click.echo(to_csv(board), nl=False)
        else:
            click.echo(json.dumps(board, indent=1))
    except _NOT_OURS as e:  # a value of another type somewhere _check_board does not look
        raise _not_a_board(results, e) from None


_NOT_OURS = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, RecursionError)
"""What reading a leaderboard.json of another shape raises (one handed over, or edited)."""


def _not_a_board(results: Path, e: BaseException) -> click.ClickException:
    return click.ClickException(f"{results / 'leaderboard.json'}: not a leaderboard of this version of p10-tourney "
                                f"({type(e).__name__}: {str(e)[:200]})")


def _load_board(results: Path) -> dict[str, Any]:
    """leaderboard.json of `results`, once its games.jsonl is known to be unedited."""
    path = results / "leaderboard.json"
    if not results.is_dir():
        raise click.ClickException(f"{results}: no such results folder")
    if not path.exists():
        raise click.ClickException(f"{results}: no leaderboard.json (not a finished or started p10-tourney run?)")
    from .report.files import read_json

    try:
        board = read_json(path)
        _check_board(board)
    except (ValueError, OSError) as e:
        raise click.ClickException(f"{path}: not a leaderboard of this version of p10-tourney ({e})") from None
    from .tournament.verify import check_journal

    try:
        check_journal(results)
    except (ValueError, OSError) as e:
        raise _fail(e) from None
    return board


def _finite(v: Any) -> bool:
    """`v` is a finite number (not a bool, nor an integer too large for a float)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def _check_board(board: Any) -> None:
    """Raise ValueError unless `board` has the shape leaderboard.json is written in."""
    from .report.columns import COLUMNS

    if not isinstance(board, dict):
        raise ValueError("not a JSON object")
    for key in ("name", "games", "seed", "entrants"):
        if key not in board:
            raise ValueError(f"no {key!r}")
    if not isinstance(board["entrants"], list) or not all(isinstance(r, dict) for r in board["entrants"]):
        raise ValueError("'entrants' is not a list of rows")
    for row in board["entrants"]:
        missing = [k for k in COLUMNS if k not in row]
        if missing:
            raise ValueError(f"a row lacks {', '.join(missing)}")
        if not isinstance(row["entrant"], str):
            raise ValueError(f"an entrant's name is {str(row['entrant'])[:40]!r}, not a string")
        for k in COLUMNS[2:] + ["pl_strength", "ci_low", "ci_high"]:
            v = row.get(k)
            if v is not None and not _finite(v):
                raise ValueError(f"{row['entrant'][:40]}'s {k} is {str(v)[:40]!r}, not a number")
    if not isinstance(board.get("head_to_head", {}), dict):
        raise ValueError("'head_to_head' is not an object")


@main.command()
@click.argument("results", type=click.Path(file_okay=False, path_type=Path))
def report(results: Path) -> None:
    """(Re)build the HTML site of a results folder: RESULTS/site/index.html."""
    _load_board(results)
    from .report.site import build_site

    from .report.files import NotAFileError

    try:
        site = build_site(results)
    except (OSError, NotAFileError) as e:
        raise _fail(e) from None
    except _NOT_OURS as e:
        raise _not_a_board(results, e) from None
    click.echo(f"site written: {site}/index.html")


@main.command()
@click.argument("results", type=click.Path(file_okay=False, path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=8010, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")
def serve(results: Path, port: int) -> None:
    """Serve the site of RESULTS on 127.0.0.1, live: the open page shows the standings,
    the progress and the newest games as games land, with no reload. Ctrl-C stops."""
    from .tournament.serve import make_server

    try:
        server = make_server(results, port)
    except (FileNotFoundError, ValueError) as e:
        raise _fail(e) from None
    except OSError as e:
        raise click.ClickException(f"127.0.0.1:{port}: {e.strerror or e}") from None
    bound = server.server_address[1]
    click.echo(f"serving {results} on http://127.0.0.1:{bound}/ (Ctrl-C to stop)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@main.command()
@click.argument("results", type=click.Path(file_okay=False, path_type=Path))
@click.option("--no-replays", is_flag=True, help="Do not play the kept replays again.")
@click.option("--expect-head", metavar="HEX", default=None,
              help="The journal head published elsewhere (the site's settings show it; 16 or more hex "
                   "digits): fail unless the published games end at it.")
def verify(results: Path, no_replays: bool, expect_head: str | None) -> None:
    """Check a results folder: the hash chain of games.jsonl, the seed against the
    commitment published before play, the leaderboards against the games, and every kept
    replay played again through the engine. Exit status: 0 all passed, 1 a mismatch."""
    from .tournament.verify import verify_results

    if expect_head is not None and not re.fullmatch(r"[0-9a-fA-F]{16,64}", expect_head.strip()):
        raise click.ClickException(f"--expect-head {expect_head!r}: not 16 to 64 hex digits of a journal head")
    if not results.is_dir():
        raise click.ClickException(f"{results}: no such results folder")
    report = verify_results(results, replays=not no_replays, expect_head=expect_head)
    for c in report.checks:
        mark = "ok  " if c.ok else "FAIL" if c.ok is False else "--  "
        click.echo(f"{mark} {c.name:<12} {c.detail}")
    failed = [c.name for c in report.checks if c.ok is False]
    passed = sum(1 for c in report.checks if c.ok)
    skipped = sum(1 for c in report.checks if c.ok is None)
    if failed:
        click.echo(f"NOT VERIFIED: {', '.join(failed)} failed ({passed} passed)")
        sys.exit(1)
    click.echo(f"verified: {passed} checks passed" + (f", {skipped} not possible yet" if skipped else ""))


@main.command()
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the replay viewer for this game to this HTML file (one self-contained page) instead.")
def replay(file: Path, html_out: Path | None) -> None:
    """Print a recorded game turn by turn, or (--html) write it as a page to step through."""
    if html_out is not None:
        _replay_html(file, html_out)
        return
    from .report.terminal_replay import print_replay

    try:
        print_replay(file)
    except (OSError, ValueError, KeyError) as e:
        raise click.ClickException(f"{file}: not a replay file ({e})") from None


def _replay_html(file: Path, out: Path) -> None:
    from .report.site import replay_file_html

    try:
        page = replay_file_html(file)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise click.ClickException(f"{file}: not a replay file ({e})") from None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as e:
        raise click.ClickException(f"{out}: {e.strerror or e}") from None
    click.echo(f"replay page written: {out}")


# ----- play ----------------------------------------------------------------------------------


def _bot_option(values: tuple[str, ...], hint: str = "--bot") -> list[tuple[str, list[str]]]:
    bots = []
    for v in values:
        name, sep, cmd = v.partition("=")
        if not sep or not name or not cmd.strip():
            raise click.BadParameter(f"{v!r}: expected NAME=COMMAND, e.g. greedy='python bots/python/greedy.py'", param_hint=hint)
        try:
            argv = shlex.split(cmd)
        except ValueError as e:
            raise click.BadParameter(f"{v!r}: {e}", param_hint=hint) from None
        bots.append((name, argv))
    return bots


def _contained(specs: list[Any], sandbox: str | None, builds: dict[str, str], host_exit: int = 1) -> dict[str, Any]:
    """Command-line bots in their sandbox (`--sandbox`, default auto): warns when they run
    without one, runs their builds; `Error:` where bwrap is asked for and cannot run (exit
    status `host_exit`), or a build fails through the bot (exit status 1). Returns the
    specs by name."""
    from .sandbox.box import BuildError, SandboxError
    from .sandbox.build import run_build
    from .tournament.placement import contain
    from .tournament.runner import sandbox_state

    try:
        specs = contain(specs, sandbox or "auto", builds)
        state = sandbox_state(specs)
        _warn_unsandboxed(state)
        for s in specs:
            if s.sandbox.build:
                run_build(s.name, s.sandbox.build, s.cwd, s.env, s.sandbox, state["bots"][s.name], s.limits.scratch_mb)
    except SandboxError as e:
        raise _fail(e, 1 if isinstance(e, BuildError) else host_exit) from None
    return {s.name: s for s in specs}


@main.command()
@click.option("--bot", "bots", multiple=True, metavar="NAME=CMD", help="A seat: entrant name and command (repeat; seats in order).")
@click.option("--human", "human", metavar="[NAME]", default=None, is_flag=False, flag_value="you",
              help="Seat a person at the terminal in the first seat, named NAME (default: you); "
                   "e.g. --human --bot NAME=CMD.")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--deck", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="Stacked deals: a JSON deck file (protocol/SPEC.md, Deck files; example: protocol/deck.example.json).")
@click.option("--rules", "rules_text", help='Rules as JSON or YAML, e.g. \'{"phases": [1, 2, 3]}\' or a file path.')
@click.option("--replay", "replay_file", type=click.Path(dir_okay=False, path_type=Path), help="Write the replay here.")
@click.option("--move-ms", type=click.IntRange(1), default=DEFAULT_MOVE_MS, show_default=True,
              help="Time allowed per reply (as in a tournament file without time.move_ms).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the result.")
@click.option("--stderr", "stderr_to", metavar="show|FOLDER", default=None,
              help="The bots' stderr: 'show' prints it here as it comes, each line after the bot's name; "
                   "a folder keeps it there as NAME.log. Without it, it is discarded.")
@click.option("--build", "builds", multiple=True, metavar="NAME=CMD",
              help="Run CMD once before bot NAME starts, in its sandbox with its folder writable (repeat).")
@_sandbox_option
def play(bots: tuple[str, ...], human: str | None, seed: int, deck: Path | None, rules_text: str | None,
         replay_file: Path | None, move_ms: int, quiet: bool, stderr_to: str | None, builds: tuple[str, ...],
         sandbox: str | None) -> None:
    """Play one game between bots and print it hand by hand."""
    from .engine import Deck, DeckError
    from .referee import BotSpec, BotStartError, TimeControl, encode, handshake, play_game
    from .model import FaultKind

    seats = _bot_option(bots)
    if human:
        seats.insert(0, (human, []))
    if not 2 <= len(seats) <= 6:
        raise click.UsageError(f"a game has 2 to 6 players; {len(seats)} given (use --bot NAME=CMD)")
    names = [n for n, _ in seats]
    if len(set(names)) != len(names):
        raise click.UsageError("each seat needs its own name")
    rules = _parse_rules(rules_text)
    stacked = None
    if deck:
        try:
            stacked = Deck.from_dict(json.loads(deck.read_text()))
        except (ValueError, DeckError) as e:
            raise click.ClickException(f"{deck}: {e}") from None
        if any(len(d.hands) != len(seats) for d in stacked.deals):
            raise click.ClickException(f"{deck}: its deals have hands for {len(stacked.deals[0].hands)} players, not {len(seats)}")
    tc = TimeControl(move_ms=move_ms, startup_ms=max(10000, move_ms))
    build_cmds = dict(_bot_option(builds, "--build"))
    unknown = sorted(set(build_cmds) - set(names))
    if unknown:
        raise click.BadParameter(f"{unknown[0]!r} is not the name of a --bot", param_hint="--build")
    specs = _contained([BotSpec(name, tuple(argv)) for name, argv in seats if argv], sandbox,
                       {k: shlex.join(v) for k, v in build_cmds.items()})
    procs: list[Any] = []
    unavailable: dict[int, tuple[FaultKind, str]] = {}
    try:
        for seat, (name, argv) in enumerate(seats):
            if not argv:
                from .human import HumanSeat

                p: Any = HumanSeat(name)
            else:
                p = _stderr_bot(specs[name], stderr_to)
            procs.append(p)
            try:
                handshake(p, name, tc)
            except BotStartError as e:
                unavailable[seat] = (FaultKind.STARTUP, str(e))
                click.echo(f"warning: {e}", err=True)
        printer = _HandPrinter(names, quiet)
        result = play_game(procs, names, rules, seed, "g000000", stacked, tc, record=replay_file is not None,
                           on_event=printer, unavailable=unavailable)
    finally:
        for p in procs:
            if p.alive:
                try:
                    p.send(encode({"type": "bye"}))
                except Exception:  # noqa: BLE001
                    pass
            p.stop()
    for f in result.faults:
        click.echo(f"fault: {f.entrant} (seat {f.seat}) {f.kind}: {_clean(f.reason)}")
    order = sorted(range(len(names)), key=lambda s: result.places[s])
    click.echo("result: " + ", ".join(f"{result.places[s]}. {names[s]} ({result.phases[s]} phases, {result.scores[s]} points)"
                                      for s in order))
    if replay_file is not None and result.replay is not None:
        replay_file.parent.mkdir(parents=True, exist_ok=True)
        replay_file.write_bytes(b"\n".join(result.replay) + b"\n")
        click.echo(f"replay written: {replay_file}")
    if stderr_to not in (None, "show"):
        click.echo(f"stderr kept in: {stderr_to}/")


def _stderr_bot(spec: Any, to: str | None) -> Any:
    """A bot process whose stderr is discarded (None), printed here ("show") or kept in
    the folder `to` as NAME.log."""
    from .referee import BotProcess
    from .referee.botlog import BotLines

    if to is None:
        return BotProcess(spec)
    if to != "show":
        folder = Path(to)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise click.BadParameter(f"cannot make the folder {to}: {e.strerror or e}", param_hint="--stderr") from None
        return BotProcess(spec, log_path=folder / f"{spec.name}.log")

    class Shown(BotProcess):
        """Prints what the bot writes to stderr, each line after its name, as it comes
        (made printable as in a log); what one read gets ends its line, so that the
        harness's own lines never carry on one of the bot's."""

        lines = BotLines(f"  [{_clean(spec.name)}] ")

        def _write_log(self, chunk: bytes) -> None:
            super()._write_log(chunk)
            text = self.lines.feed(chunk)
            if text:
                click.echo(text + self.lines.end_line(), nl=False, err=True)

    return Shown(spec)


def _parse_rules(text: str | None) -> Any:
    from .engine import Rules, RulesError

    if not text:
        return Rules()
    import yaml

    src = text
    p = Path(text)
    if p.exists() and p.is_file():
        src = p.read_text()
    try:
        data = yaml.safe_load(src)
    except yaml.YAMLError as e:
        raise click.BadParameter(f"not JSON or YAML: {str(e).splitlines()[0]}", param_hint="--rules") from None
    if not isinstance(data, dict):
        raise click.BadParameter("must be a mapping such as {\"phases\": [1, 2, 3]}", param_hint="--rules")
    try:
        return Rules.from_dict(data)
    except RulesError as e:
        raise click.BadParameter(str(e), param_hint="--rules") from None


class _HandPrinter:
    """Prints each hand's summary: who laid, who went out, points, phases."""

    def __init__(self, names: list[str], quiet: bool) -> None:
        self.names = names
        self.quiet = quiet

    def __call__(self, kind: str, msg: dict[str, Any]) -> None:
        if self.quiet:
            return
        if kind == "hand_end":
            n = self.names
            if msg["stalled"]:
                head = f"hand {msg['hand']}: stalled (turn limit)"
            elif msg["winner"] is not None:
                head = f"hand {msg['hand']}: {n[msg['winner']]} went out"
            else:
                head = f"hand {msg['hand']}: ended"
            laid = ", ".join(n[s] for s in msg["completed"]) or "nobody"
            click.echo(f"{head}; laid: {laid}")
            for s, name in enumerate(n):
                nxt = msg["phases"][s]
                click.echo(f"    {name:<16} +{msg['points'][s]:<4} total {msg['scores'][s]:<5} next phase {nxt if nxt is not None else '—'}")
        elif kind == "fault":
            click.echo(f"    fault: {msg['entrant']} {msg['kind']}: {_clean(msg['reason'])}")


# ----- check-bot -------------------------------------------------------------------------------


@main.command("check-bot", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--move-ms", type=click.IntRange(1), default=DEFAULT_MOVE_MS, show_default=True,
              help="Time allowed per reply (as in a tournament file without time.move_ms).")
@click.option("--startup-ms", type=click.IntRange(1), default=10000, show_default=True, help="Time allowed for the hello reply.")
@click.option("--only", multiple=True, metavar="NAME", help="Run only this check (repeat, or comma-separated).")
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable report.")
@click.option("--build", "build", metavar="CMD", help="Run CMD once before the bot starts, in its sandbox with its folder writable.")
@_sandbox_option
def check_bot(command: tuple[str, ...], move_ms: int, startup_ms: int, only: tuple[str, ...], as_json: bool,
              build: str | None, sandbox: str | None) -> None:
    """Check that the bot started by COMMAND speaks p10/1: run it through a conformance
    suite and report each check. Exit status: 0 all passed, 1 a check failed or the bot's
    build (--build) failed, 2 check-bot itself failed (a sandbox that cannot run here).

    \b
    p10-tourney check-bot -- python my_bot.py
    p10-tourney check-bot --only options-lay -- node bot.js
    """
    from .checker import NAMES, run_checks, select
    from .checker.report import header, result_lines, summary, to_json

    argv = list(command)
    if len(argv) == 1 and " " in argv[0].strip():
        argv = shlex.split(argv[0])  # check-bot "python my_bot.py"
    try:
        select(only)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--only") from None
    from .referee import BotSpec

    spec = _contained([BotSpec("candidate", tuple(argv))], sandbox, {"candidate": build} if build else {},
                      host_exit=2)["candidate"]
    if not as_json:
        click.echo(header(argv, move_ms))

    def show(result: Any) -> None:
        if not as_json:
            click.echo("\n".join(result_lines(result)))

    report = run_checks(argv, move_ms=move_ms, startup_ms=startup_ms, only=only, on_result=show,
                        sandbox=spec.sandbox)
    if as_json:
        click.echo(to_json(report))
    else:
        click.echo(summary(report))
        if not report.ok and report.exit_code == 1:
            click.echo(f"Checks: {', '.join(NAMES)}; run one with --only NAME. The protocol: protocol/SPEC.md")
    sys.exit(report.exit_code)


# ----- ask ---------------------------------------------------------------------------------------


@main.command("ask", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--request", "request_file", metavar="FILE", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The request to send: a JSON object with \"type\": \"request\" (or a replay line holding one).")
@click.option("--rules", "rules_text", help="The game's rules, as for play (default: standard, or the request's phase).")
@click.option("--move-ms", type=click.IntRange(1), default=DEFAULT_MOVE_MS, show_default=True,
              help="Time allowed for the reply (as in a tournament file without time.move_ms).")
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable verdict.")
@click.option("--build", "build", metavar="CMD", help="Run CMD once before the bot starts, in its sandbox with its folder writable.")
@_sandbox_option
def ask_command(command: tuple[str, ...], request_file: Path, rules_text: str | None, move_ms: int,
                as_json: bool, build: str | None, sandbox: str | None) -> None:
    """Send one request to the bot started by COMMAND; print its reply and whether the
    referee would accept it (with the rule it breaks). Exit status: 0 legal, 1 not.

    \b
    p10-tourney ask --request request.json -- python my_bot.py
    p10-tourney ask -- python my_bot.py --request request.json
    """
    from .checker.ask import RequestError, ask, load_request
    from .referee import BotSpec, BotStartError

    argv = list(command)
    if request_file is None and len(argv) >= 3 and argv[-2] == "--request":  # ask -- CMD ... --request FILE
        request_file, argv = Path(argv[-1]), argv[:-2]
        if not request_file.is_file():
            raise click.BadParameter(f"{request_file}: no such file", param_hint="--request")
    if request_file is None:
        raise click.UsageError("Missing option '--request' (the request file): ask --request FILE -- CMD ...")
    if len(argv) == 1 and " " in argv[0].strip():
        argv = shlex.split(argv[0])
    try:
        request = load_request(request_file)
        rules = _parse_rules(rules_text) if rules_text else None
        spec = _contained([BotSpec("candidate", tuple(argv))], sandbox, {"candidate": build} if build else {})["candidate"]
        answer = ask(argv, request, rules, move_ms=move_ms, sandbox=spec.sandbox)
    except (RequestError, BotStartError) as e:
        raise _fail(e) from None
    if as_json:
        click.echo(json.dumps(answer.to_dict(), indent=1))
    else:
        click.echo(f"request: {request['decision']} (id {request['id']}, hand {request['state'].get('hand')}, "
                   f"seat {request['state'].get('seat')})")
        click.echo(f"reply:   {_clean(answer.reply_line) if answer.reply_line is not None else '(none)'}")
        if answer.legal:
            click.echo(f"legal ({answer.ms} ms)" + "".join(f"\n  {json.dumps(ev)}" for ev in answer.events))
        else:
            click.echo(f"{answer.verdict}: {_clean(answer.reason)}")
            if answer.fix:
                click.echo(f"to fix it: {_clean(answer.fix)}")
        if answer.stderr.strip():
            click.echo("the bot's stderr:\n" + "\n".join("  " + _clean(ln) for ln in answer.stderr.strip().splitlines()[-20:]))
    sys.exit(0 if answer.legal else 1)


if __name__ == "__main__":  # pragma: no cover
    main()
