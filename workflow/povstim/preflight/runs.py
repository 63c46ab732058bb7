"""What the Snakefile checks and says around a run (tested Python; the Snakefile only calls it).

* :func:`check_report_path`: ``snakemake --report PATH`` builds the report from the config Snakemake
  loaded. A report of experiment A's results with experiment B's config (the embedded demo when
  ``--configfile`` is forgotten) mixes them up, so the path must lie under ``results/<experiment>/`` of
  the loaded config; otherwise the run stops and names the ``--configfile`` to add.
* :func:`write_record`: every run records the config that made ``results/<experiment>/``
  (``results/<experiment>/config.yaml``), so the report and a later rerun can name it.
* :func:`stale_lock_hint`: after a SIGKILL Snakemake's lock stays behind and the rerun is refused; when
  no other snakemake runs in the folder, say so and give the one command that removes it.
* :func:`overwrite_warning` / :func:`pause_before_replacing`: a run whose config differs from the record of
  ``results/<experiment>/`` replaces results. The Snakefile says so when it builds the DAG (dry runs too,
  ``snakemake -n``), and a real run pauses ``PAUSE_S`` seconds before its first job when a person can stop
  it (stdin and stderr are terminals); ``POVSTIM_YES=1`` skips the pause, and runs without a terminal (CI,
  tests, SLURM) never wait.
* :func:`end_line`: one line at the end of a run: what failed and where its logs are, or that the run was
  interrupted (:func:`watch_interrupts` remembers a Ctrl-C of the Snakemake process: Snakemake itself
  reports it as a failed run, exit 1).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import yaml

from ..io import PovstimError, atomic_write

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


def other_snakemake_running(workdir: str | Path, proc: str | Path = "/proc") -> bool | None:
    """Is another snakemake process running in ``workdir``? None when this cannot be told (no /proc)."""
    proc = Path(proc)
    if not (proc / "self").exists():
        return None
    here = Path(workdir).resolve()
    mine = _ancestors()
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
            return True
    return False


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
