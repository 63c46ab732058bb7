"""What the Snakefile checks and says around a run (tested Python; the Snakefile only calls it).

* :func:`check_report_path`: ``snakemake --report PATH`` builds the report from the config Snakemake
  loaded. A report of experiment A's results with experiment B's config (the embedded demo when
  ``--configfile`` is forgotten) mixes them up, so the path must lie under ``results/<experiment>/`` of
  the loaded config; otherwise the run stops and names the ``--configfile`` to add.
* :func:`write_record`: every run records the config that made ``results/<experiment>/``
  (``results/<experiment>/config.yaml``), so the report and a later rerun can name it.
* :func:`stale_lock_hint`: after a SIGKILL Snakemake's lock stays behind and the rerun is refused; when
  no other snakemake runs in the folder, say so and give the one command that removes it.
* :func:`record_run` / :func:`explain_lock_refusals`: every run records itself (PID, host, command, start) in
  ``.snakemake/povstim-runs/`` while it lives; when Snakemake refuses a run because the folder is locked, its
  message names the live run that holds it and says NOT to ``--unlock`` (which would let two runs write the
  same files); ``--unlock`` is advised only when no run is alive (:func:`lock_message`).
* :func:`overwrite_warning` / :func:`pause_before_replacing`: a run whose config differs from the record of
  ``results/<experiment>/`` replaces results. The Snakefile says so when it builds the DAG (dry runs too,
  ``snakemake -n``), and a real run pauses ``PAUSE_S`` seconds before its first job when a person can stop
  it (stdin and stderr are terminals); ``POVSTIM_YES=1`` skips the pause, and runs without a terminal (CI,
  tests, SLURM) never wait.
* :func:`missing_lines`: Snakemake keeps results whose intermediate inputs were deleted ("Nothing to be
  done": a deleted model folder is neither rebuilt nor reported). From Snakemake's own records of the jobs it
  ran (``.snakemake/metadata``: each output's inputs), name every file it built that results of this
  experiment were made from and that is gone, with the command that rebuilds it and what was made from it.
* :func:`end_line`: one line at the end of a run: what failed and where its logs are, or that the run was
  interrupted (:func:`watch_interrupts` remembers a Ctrl-C of the Snakemake process: Snakemake itself
  reports it as a failed run, exit 1).
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import signal
import socket
import sys
import time
from pathlib import Path

import yaml

from ..io import PovstimError, atomic_write, pid_alive, write_json

RECORD = "config.yaml"
_VALUE_OPTIONS = ("--configfile", "--configfiles")


def option_values(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """Values of a Snakemake option in argv: ``--opt A B`` (nargs=+), ``--opt=A``."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in names:
            if eq:
                out.append(value)
            else:
                j = i + 1
                while j < len(argv) and not argv[j].startswith("-"):
                    out.append(argv[j])
                    j += 1
                    if name not in _VALUE_OPTIONS:  # single-value options
                        break
                i = j - 1
        i += 1
    return out


def report_target(argv: list[str]) -> str | None:
    """The report path of ``snakemake --report PATH`` (None when no report is asked for)."""
    if "--report" not in argv and not any(a.startswith("--report=") for a in argv):
        return None
    values = option_values(argv, ("--report",))
    return values[0] if values else "report.html"  # Snakemake's default


def configfile_args(argv: list[str]) -> str:
    files = option_values(argv, _VALUE_OPTIONS)
    return f" --configfile {' '.join(files)}" if files else ""


def check_report_path(report: str, experiment: str, configfiles: list[str], workdir: str | Path = ".") -> None:
    """Stop when a report path is not under results/<experiment>/ of the loaded config."""
    root = Path(workdir).resolve()
    target = (root / report).resolve()
    expected = root / "results" / experiment
    if expected == target or expected in target.parents:
        return
    loaded = ", ".join(configfiles) if configfiles else "the embedded config.yaml"
    msg = (f"snakemake --report {report}: the loaded config ({loaded}) is experiment '{experiment}', so its "
           f"report belongs under results/{experiment}/, e.g. `snakemake --report results/{experiment}/report.html"
           f"{' --configfile ' + ' '.join(configfiles) if configfiles else ''}`")
    rel = target.relative_to(root) if root in target.parents else None
    if rel is not None and len(rel.parts) >= 3 and rel.parts[0] == "results":
        other = rel.parts[1]
        record = root / "results" / other / RECORD
        hint = f"results/{other}/{RECORD}" if record.exists() else f"the config of experiment '{other}'"
        msg += (f". To report on the results of experiment '{other}', load its config: `snakemake --report "
                f"{report} --configfile {hint}` (or `povstim report {hint}`)")
    raise PovstimError(msg)


def write_record(config: dict, configfiles: list[str], results_dir: str | Path) -> Path:
    """results/<experiment>/config.yaml: the validated config (defaults filled) that made these results."""
    path = Path(results_dir) / RECORD
    head = ("# The config that made these results (written by the Snakefile at the start of every run;\n"
            f"# loaded from: {', '.join(configfiles) if configfiles else 'the embedded config.yaml'}).\n"
            f"# Report on them with: snakemake --report {Path(results_dir) / 'report.html'} --configfile {path}\n")
    with atomic_write(path) as fh:
        fh.write(head)
        yaml.safe_dump(config, fh, sort_keys=False, default_flow_style=None, width=120)
    return path


def _flat(obj, prefix: str = "") -> dict:
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: obj}


# top-level keys that change how fast a run goes, never what it computes: not a change of results
SPEED_ONLY = frozenset({"warm_start", "prewarm_analysis"})


def config_changes(results_dir: str | Path, config: dict, limit: int = 5) -> list[str]:
    """Keys whose values differ from the record of the config that made results_dir (empty: same or no record;
    SPEED_ONLY keys do not count)."""
    path = Path(results_dir) / RECORD
    if not path.exists():
        return []
    try:
        old = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return []
    a, b = _flat(old), _flat(json_safe(config))
    keys = sorted(k for k in set(a) | set(b) if a.get(k, "<unset>") != b.get(k, "<unset>") and k not in SPEED_ONLY)
    out = [f"{k}: {a.get(k, '<unset>')!r} -> {b.get(k, '<unset>')!r}" for k in keys[:limit]]
    return out + ([f"... and {len(keys) - limit} more"] if len(keys) > limit else [])


def json_safe(config: dict) -> dict:
    import json

    return json.loads(json.dumps(config, default=str))


def overwrite_warning(results_dir: str | Path, config: dict) -> str | None:
    changes = config_changes(results_dir, config)
    if not changes:
        return None
    return (f"povstim: results/{config['experiment']}/ was made with a different config; running this config "
            f"replaces the results that depend on what changed ({'; '.join(changes)}). To keep both, give this "
            f"config another `experiment:` name (a real run pauses {PAUSE_S} s first on a terminal: Ctrl-C stops it; "
            f"{YES_ENV}=1 skips the pause).")


PAUSE_S = 10  # long enough to read the notice and press Ctrl-C, short enough not to be a nuisance
YES_ENV = "POVSTIM_YES"


def pause_before_replacing(experiment: str, seconds: int = PAUSE_S, stdin=None, stderr=None, sleep=time.sleep,
                           environ=None) -> str:
    """Before a real run replaces results made with another config: count down ``seconds`` on stderr, so that
    Ctrl-C stops the run before any job (SystemExit 130, nothing replaced). No pause when ``POVSTIM_YES=1``
    ("yes") or when stdin or stderr is not a terminal ("no terminal": CI, tests, SLURM, output to a file,
    nobody to read the countdown or press Ctrl-C). Returns what it did ("paused")."""
    stdin, stderr = stdin or sys.stdin, stderr or sys.stderr
    environ = os.environ if environ is None else environ
    if environ.get(YES_ENV, "").strip().lower() in ("1", "true", "yes"):
        print(f"povstim: {YES_ENV} is set: replacing results of experiment '{experiment}' without a pause",
              file=stderr)
        return "yes"
    if not (_isatty(stdin) and _isatty(stderr)):
        return "no terminal"
    try:
        for left in range(seconds, 0, -1):
            print(f"\rpovstim: replacing results of experiment '{experiment}' in {left:2d} s; Ctrl-C stops the "
                  f"run now ({YES_ENV}=1 skips this pause) ", end="", file=stderr, flush=True)
            sleep(1)
        print(file=stderr)
    except KeyboardInterrupt:
        print(f"\npovstim: stopped before any job: nothing of results/{experiment}/ was replaced", file=stderr)
        raise SystemExit(INTERRUPTED_EXIT) from None
    return "paused"


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or not a file
        return False


# ---- locks ---------------------------------------------------------------------------------------------

def _ancestors() -> set[int]:
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            break
        ppid = next((line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), "0")
        pid = int(ppid)
    return pids


def snakemake_pids(workdir: str | Path, proc: str | Path = "/proc") -> list[int] | None:
    """Other snakemake processes running in ``workdir`` (not this one or its ancestors); None when this
    cannot be told (no /proc)."""
    proc = Path(proc)
    if not (proc / "self").exists():
        return None
    here = Path(workdir).resolve()
    mine = _ancestors()
    out = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if cwd == here and any(b"snakemake" in Path(a.decode(errors="replace")).name.encode() or a == b"snakemake"
                               for a in argv[:3]):
            out.append(int(entry.name))
    return sorted(out)


def other_snakemake_running(workdir: str | Path, proc: str | Path = "/proc") -> bool | None:
    """Is another snakemake process running in ``workdir``? None when this cannot be told (no /proc)."""
    pids = snakemake_pids(workdir, proc)
    return None if pids is None else bool(pids)


# ---- live runs: who holds the folder --------------------------------------------------------------------

RUNS_DIR = Path(".snakemake") / "povstim-runs"
_DRY_FLAGS = ("--dry-run", "--dryrun", "--just-print")


def dry_run(argv: list[str]) -> bool:
    """``snakemake -n`` (or ``-np``, ``--dry-run``): a dry run holds no lock."""
    return any(a in _DRY_FLAGS or (a.startswith("-") and not a.startswith("--") and a[1:].isalpha() and "n" in a)
               for a in argv[1:])


def _start_ticks(pid: int) -> str | None:
    """A process's start time in clock ticks since boot (/proc/PID/stat field 22): a PID reused later differs."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def record_run(workdir: str | Path, argv: list[str], experiment: str) -> Path:
    """``.snakemake/povstim-runs/HOST-PID.json``: this run's PID, host, command and start, while it lives."""
    pid, host = os.getpid(), socket.gethostname()
    path = Path(workdir) / RUNS_DIR / f"{host}-{pid}.json"
    write_json(path, {"pid": pid, "host": host, "ticks": _start_ticks(pid), "experiment": experiment,
                      "command": " ".join(["snakemake", *map(shlex.quote, argv[1:])])[:300],
                      "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())})
    return path


def forget_run(path: str | Path) -> None:
    """Remove this run's record (at exit; a killed run's stays and is known dead by its PID)."""
    Path(path).unlink(missing_ok=True)


def forget_dead_runs(workdir: str | Path) -> int:
    """Remove the records of runs on this host that are no longer alive (``snakemake --unlock``); how many."""
    n = 0
    for rec, alive in recorded_runs(workdir):
        if alive is False:
            forget_run(Path(workdir) / RUNS_DIR / f"{rec['host']}-{rec['pid']}.json")
            n += 1
    return n


def recorded_runs(workdir: str | Path) -> list[tuple[dict, bool | None]]:
    """(record, alive) of every run recorded in ``workdir`` but this process: alive is None for a run on
    another host (its PID cannot be checked from here)."""
    folder = Path(workdir) / RUNS_DIR
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
            pid = int(rec["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if rec.get("host") != socket.gethostname():
            out.append((rec, None))
        elif pid != os.getpid():
            alive = pid_alive(pid) and rec.get("ticks") in (None, _start_ticks(pid))
            out.append((rec, alive))
    return out


def _describe(rec: dict) -> str:
    return (f"PID {rec.get('pid')} on host {rec.get('host')} (`{rec.get('command', 'snakemake')}`, started "
            f"{rec.get('started', '?')}, experiment '{rec.get('experiment', '?')}')")


def lock_message(workdir: str | Path, argv: list[str], proc: str | Path = "/proc") -> str:
    """What to say when Snakemake refuses to lock ``workdir``: the live run that holds it, and not to unlock;
    or, when no run is alive, that the lock is a killed run's and the one command that removes it."""
    here = Path(workdir).resolve()
    runs = recorded_runs(workdir)
    live = [r for r, alive in runs if alive]
    elsewhere = [r for r, alive in runs if alive is None]
    others = snakemake_pids(workdir, proc) or []
    unknown = [pid for pid in others if pid not in {int(r["pid"]) for r in live}]
    if live or unknown:
        who = "; ".join([*map(_describe, live), *(f"PID {pid} (a snakemake process in this folder)" for pid in unknown)])
        return (f"povstim: Snakemake cannot lock {here}: another run is live there and holds files this run needs: "
                f"{who}. Do NOT run `snakemake --unlock` while it runs (both runs would write the same files): wait "
                f"for it to finish, or stop it (Ctrl-C in its terminal, or kill {(live[0]['pid'] if live else unknown[0])}), "
                "then run your command again.")
    if elsewhere:
        return (f"povstim: Snakemake cannot lock {here}: a run on another host may hold it: "
                f"{'; '.join(map(_describe, elsewhere))}. Check there whether it still runs; only if it does not, "
                f"remove the lock with `snakemake --unlock{configfile_args(argv)}` and run your command again.")
    dead = [r for r, alive in runs if alive is False]
    left = f" ({'; '.join(map(_describe, dead))}, no longer running)" if dead else ""
    return (f"povstim: Snakemake cannot lock {here}: the lock was left by a run that was killed{left}; no "
            f"snakemake runs in this folder now. Remove the lock with `snakemake --unlock{configfile_args(argv)}` "
            "and run your command again.")


def explain_lock_refusals(workdir: str | Path, argv: list[str]) -> None:
    """Make Snakemake's "Directory cannot be locked" error say :func:`lock_message` instead of its generic text
    (which suggests ``--unlock`` even while the other run is alive). Snakemake raises
    ``snakemake.exceptions.LockException()`` by that name when its lock check fails, after the DAG is built;
    the Snakefile runs before, so it puts a subclass with this message in its place."""
    import snakemake.exceptions as sm_exceptions  # the running Snakemake's own module (only in a Snakefile)

    base = getattr(sm_exceptions.LockException, "povstim_base", sm_exceptions.LockException)

    class LockException(base):
        povstim_base = base

        def __init__(self, *args):
            sm_exceptions.WorkflowError.__init__(self, lock_message(workdir, argv))

    sm_exceptions.LockException = LockException


def stale_lock_hint(workdir: str | Path, argv: list[str], proc: str | Path = "/proc") -> str | None:
    """A message when .snakemake/locks holds locks and no other snakemake runs here (a killed run's)."""
    locks = Path(workdir) / ".snakemake" / "locks"
    if not locks.is_dir() or not any(locks.glob("*.lock")):
        return None
    if other_snakemake_running(workdir, proc) is not False:
        return None  # another run holds it (Snakemake refuses this one), or we cannot tell
    return (f"povstim: {locks} holds a lock left by a run that was killed (no other snakemake is running in "
            f"{Path(workdir).resolve()}). If Snakemake refuses to run ('Directory cannot be locked'), remove "
            f"the lock with `snakemake --unlock{configfile_args(argv)}` and run your command again.")


# ---- deleted intermediates -------------------------------------------------------------------------------

METADATA_DIR = Path(".snakemake") / "metadata"
_FORCE_OPTIONS = ("-R", "--forcerun", "-F", "--forceall", "--unlock", "--touch", "-t", "--delete-all-output",
                  "--delete-temp-output", "--cleanup-metadata", "--report")


def _metadata_records(workdir: Path):
    """(output path, record) of each job output Snakemake's file persistence recorded: the record's file name is
    the path, URL-safe base64, cut into '@'-marked chunks of at most NAME_MAX characters."""
    root = workdir / METADATA_DIR
    if not root.is_dir():
        return
    for dirpath, _, files in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        prefix = "".join(part[1:] for part in rel.parts)  # chunk folders are '@' + chunk
        for name in files:
            try:
                path = base64.urlsafe_b64decode(prefix + name).decode()
                record = json.loads((Path(dirpath) / name).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(record, dict):
                yield path, record


def missing_intermediates(workdir: str | Path, results_dir: str | Path) -> list[tuple[str, str, list[str]]]:
    """(missing file, the rule that built it, the existing outputs made from it) for every file under
    ``results_dir`` that Snakemake built, that is gone, and that an existing output under ``results_dir`` was
    made from (by Snakemake's records). Sorted by path."""
    workdir = Path(workdir)
    results = Path(results_dir).as_posix().rstrip("/") + "/"
    records = {path: rec for path, rec in _metadata_records(workdir) if path.startswith(results)}
    consumers: dict[str, list[str]] = {}
    for path, rec in records.items():
        if not (workdir / path).exists():
            continue
        for inp in rec.get("input") or []:
            if inp in records and not (workdir / inp).exists():
                consumers.setdefault(inp, []).append(path)
    return [(inp, str(records[inp].get("rule") or "?"), sorted(users)) for inp, users in sorted(consumers.items())]


def missing_lines(workdir: str | Path, results_dir: str | Path, argv: list[str], limit: int = 6) -> list[str]:
    """What the Snakefile says when results were built from files that are gone (none when nothing is missing,
    or when the run forces jobs or only unlocks/reports: it is then rebuilding or not running)."""
    if any(a.split("=", 1)[0] in _FORCE_OPTIONS for a in argv[1:]):
        return []
    missing = missing_intermediates(workdir, results_dir)
    if not missing:
        return []
    groups: dict[tuple[str, str], list[tuple[str, list[str]]]] = {}
    for path, rule, users in missing:
        groups.setdefault((str(Path(path).parent), rule), []).append((path, users))
    lines = []
    for (folder, rule), items in list(groups.items())[:limit]:
        users = sorted({u for _, us in items for u in us})
        names = ", ".join(Path(p).name for p, _ in items)
        more = f" and {len(users) - 1} more" if len(users) > 1 else ""
        lines.append(f"povstim: MISSING {folder}/ ({names}; rule {rule}): results were built from it "
                     f"({users[0]}{more}) but it was deleted.")
    if len(groups) > limit:
        lines.append(f"povstim: ... and {len(groups) - limit} more missing folders")
    targets = " ".join(sorted({path for path, _, _ in missing}))
    lines.append("povstim: Snakemake does not rebuild a deleted intermediate of up-to-date results, so this run "
                 "leaves them as they are. To rebuild what is missing and everything made from it: `snakemake "
                 f"--cores all --forcerun {targets}{configfile_args(argv)}` (or, to keep the results, ignore this).")
    return lines


def guardrail_lines(result: dict, where: str | Path, per_check: int = 1) -> list[str]:
    """What fired in guardrails.json, for the end of a run: every fired check is named (a summary that
    dropped checks would hide caveats), each with at most ``per_check`` of its findings; the last line says
    how many findings are only in the report."""
    lines, hidden = [], 0
    for name in result.get("fired", []):
        check = result["checks"][name]
        findings = check["findings"]
        shown = findings[:max(per_check, 1)]
        rest = len(findings) - len(shown)
        hidden += rest
        for n, f in enumerate(shown, 1):
            more = f" (+{rest} more)" if rest and n == len(shown) else ""
            lines.append(f"povstim GUARDRAIL {check['title']}: {f['scope']}: {f['detail']}{more}")
    if lines:
        count = len(result.get("fired", []))
        extra = f"; {hidden} more finding{'s' if hidden != 1 else ''} not shown above" if hidden else ""
        lines.append(f"povstim: {count} guardrail check{'s' if count != 1 else ''} fired{extra}: read the "
                     f"results with these caveats: {Path(where).with_suffix('.html')}")
    return lines


_INTERRUPTS: list[int] = []
# The exit status of a run stopped by Ctrl-C (128 + SIGINT), as `povstim` commands and shells give it.
INTERRUPTED_EXIT = 130


def watch_interrupts() -> None:
    """Remember a Ctrl-C (SIGINT) of this process, then let it act as before (KeyboardInterrupt): Snakemake
    catches it, cancels the jobs and calls ``onerror`` like for a failed job; :func:`interrupted` tells the two
    apart. Only in the main thread; a SIGINT that is ignored (a run under nohup) stays ignored."""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        return

    def remember(signum, frame):
        _INTERRUPTS.append(signum)
        if callable(previous):
            previous(signum, frame)
        else:
            raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGINT, remember)
    except ValueError:  # not the main thread
        pass


def interrupted() -> bool:
    """Whether this process got a Ctrl-C since :func:`watch_interrupts`."""
    return bool(_INTERRUPTS)


def end_line(experiment: str, ok: bool, snakemake_log: str | list | None, interrupted: bool = False) -> str:
    if isinstance(snakemake_log, (list, tuple)):  # Snakemake 9 passes its log files as a list
        snakemake_log = ", ".join(map(str, snakemake_log)) or None
    if ok:
        return (f"povstim: run of experiment '{experiment}' finished: results in results/{experiment}/, logs in "
                f"logs/{experiment}/; report: povstim report results/{experiment}/{RECORD}")
    if interrupted:
        return (f"povstim: run of experiment '{experiment}' interrupted (Ctrl-C): finished jobs are kept, the "
                f"running ones were stopped and their unfinished outputs removed (job logs: logs/{experiment}/; "
                f"Snakemake's log: {snakemake_log or '.snakemake/log/'}). Run the same command again to go on.")
    return (f"povstim: experiment '{experiment}' FAILED: the failed job and its log are named above "
            f"(job logs: logs/{experiment}/; Snakemake's log: {snakemake_log or '.snakemake/log/'}). "
            "Fix the cause and run the same command again: finished jobs are kept.")
