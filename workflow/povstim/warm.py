"""Warm start: jobs that need torch start in milliseconds instead of seconds.

Every training and scoring job is a fresh ``python -m povstim`` process, and
before it does any work it imports torch, transformers, pandas and pyarrow:
4-8 s per job (measured: ~4 s on this project's 2-core CI machine, ~8 s on an
H100 machine), which is most of a tiny model's score job; the ``analyze`` job
that follows the scores imports PyMC, Bambi, ArviZ and nutpie (~4 s), and
``figures`` after it matplotlib. A Snakemake run
therefore starts one *warm-start server* (``Snakefile`` ``onstart``) that
imports those libraries once and then forks a child for each job: the child
has the libraries already in memory (copy-on-write) and runs the job's
command line exactly as ``python -m povstim`` would, in the job's own folder,
environment, umask and standard streams.

The client side is :func:`delegate`, called by ``povstim.cli.main`` for the
stages in :data:`STAGES` when ``POVSTIM_WARM_SOCKET`` is set. It sends its
argv, folder, environment and stdin/stdout/stderr (file descriptors, over a
Unix socket) and waits for the child's exit status; it forwards SIGINT/SIGTERM
to the child, and the server stops the child when its client disappears
(Snakemake killed the job). A job runs in-process as before -- no server
involved -- whenever the server is absent (a client waits while it is still
importing) or cannot vouch for giving the job the same process a fresh start
would: a different Python, an environment variable read at import time
(``OMP_*``, ``PYTHON*``, ``HF_*``, ...) that differs, or a SLURM job.

Why the results cannot change:
- the server imports third-party libraries only. Each child drops every
  ``povstim`` module and imports the checkout's code afresh, so an edit made
  during a run is seen exactly as by a fresh process;
- the server never touches CUDA (CUDA does not survive ``fork``) and never
  runs a tensor operation (so no OpenMP thread pool exists to be lost at
  ``fork``); each child initialises both itself;
- where jobs will see a GPU, the server keeps a *ready child* forked ahead of
  the next job, which has started the CUDA driver (``cuInit``: no context, no
  GPU memory) while it waits; a train or score job (:data:`READY_STAGES`)
  whose visible GPUs are the server's is handed to it instead of a new fork,
  so its CUDA start-up has partly happened before it arrived. The driver's
  start-up is the first thing such a job does anyway, and it reads no job
  setting but ``CUDA_VISIBLE_DEVICES``, which must match;
- random state: torch's default generator is reset to its initial seed, as in
  a fresh interpreter; Python's and numpy's global generators are reseeded
  from the OS, as at a fresh start (povstim seeds everything it uses itself).

Tests: tests/test_warm.py (byte-identical scores and models with and without
the server, exit codes, signals, stale-code and environment refusals).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV_SOCKET = "POVSTIM_WARM_SOCKET"
ENV_CHILD = "POVSTIM_WARM_CHILD"  # set in a child: never delegate again

# Stages whose start-up is dominated by the preloaded imports: the torch stages, and the two jobs that end
# every DAG one after the other (analyze and its prewarm: PyMC/Bambi/ArviZ/nutpie, ~4 s of imports; figures:
# matplotlib), and the dose-response fit (dose: Bambi and matplotlib, as analyze and figures)
STAGES = frozenset({"train", "score", "score-group", "probe", "dyck", "analyze", "analyze-prewarm", "figures",
                    "dose"})

# Stages a ready child may run (see the module docstring): their first work is starting CUDA (devices.resolve_device)
# and they never fork a process that uses it (a process whose driver started cannot give CUDA to its forks)
READY_STAGES = frozenset({"train", "score", "score-group"})
# ready children the server keeps: "auto" (one where jobs will see a GPU and torch is a CUDA build, else none), or a
# count (ready_count)
ENV_READY = "POVSTIM_WARM_READY"

# Third-party modules the server imports once (povstim's own code is never preloaded). The torch stack
# first; the analysis stack after it (the server listens once both are in).
PRELOAD = (
    "numpy", "pandas", "pyarrow", "pyarrow.parquet", "torch", "torch.nn.functional", "safetensors.torch",
    "tokenizers", "transformers", "transformers.modeling_utils", "transformers.models.gpt2.modeling_gpt2",
    "transformers.models.roberta.modeling_roberta", "transformers.models.auto.modeling_auto",
    "transformers.models.auto.tokenization_auto", "transformers.tokenization_utils_fast", "tqdm",
    "scipy.stats", "matplotlib", "matplotlib.pyplot", "pytensor", "numba", "pymc", "bambi", "arviz", "nutpie",
)

# Environment variables read while those modules are imported (thread pools, library paths, caches,
# hash seed): a job whose value differs from the server's would not get the process a fresh start gives.
_IMPORT_ENV_PREFIXES = ("PYTHON", "OMP_", "MKL_", "OPENBLAS_", "KMP_", "GOMP_", "TORCH", "PYTORCH_", "HF_",
                        "TRANSFORMERS_", "HUGGINGFACE_", "TOKENIZERS_", "LD_", "CUDA_", "NVIDIA_", "TRITON_",
                        "MALLOC_", "ARROW_", "SLURM_JOB_ID", "PYTENSOR", "NUMBA_", "MPL", "ARVIZ")
# Thread counts Snakemake sets per job ({threads}): the child applies them to torch and the BLAS/OpenMP
# pools itself (_thread_limits), as a fresh process would size its pools from them.
_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
               "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS")
# read when CUDA starts (i.e. in the child), or handled by the child: may differ per job
_JOB_ENV = frozenset({"CUDA_VISIBLE_DEVICES", *_THREAD_ENV})

_HEADER = struct.Struct("!I")


def _import_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith(_IMPORT_ENV_PREFIXES) and k not in _JOB_ENV}


def _identity() -> dict:
    """What must be equal between a client and the server for a forked child to be a fresh process."""
    return {"executable": os.path.realpath(sys.executable), "prefix": sys.prefix, "version": sys.version}


# --------------------------------------------------------------------------- client


def delegate(argv: list[str], stage: str | None, env: dict | None = None) -> int | None:
    """Run ``povstim argv`` in a child of the warm-start server; None when the server cannot take it
    (the caller then runs the job itself). Returns the child's exit status."""
    env = dict(os.environ if env is None else env)
    path = env.get(ENV_SOCKET)
    if not path or stage not in STAGES or env.get(ENV_CHILD):
        return None
    conn = _connect(path)
    if conn is None:
        return None
    request = {"argv": argv, "stage": stage, "cwd": os.getcwd(), "env": env, "umask": _umask(), "path": sys.path,
               "identity": _identity()}
    try:
        _send_request(conn, request, [0, 1, 2])
        reply = _read_line(conn)
    except OSError:
        conn.close()
        return None
    if not reply or "pid" not in reply:
        conn.close()  # refused (reason in reply) or the server went away: run here
        return None
    return _wait(conn, int(reply["pid"]), argv)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _connect(path: str, wait_s: float = 60.0) -> socket.socket | None:
    """Connect to the server; while it is still importing (its folder exists, the socket not yet), wait."""
    folder = Path(path).parent
    deadline = time.monotonic() + wait_s
    while True:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(path)
            return conn
        except OSError:
            conn.close()
            if not _starting(folder) or time.monotonic() > deadline:
                return None
            time.sleep(0.05)


def _starting(folder: Path) -> bool:
    """The server is still importing: its ``starting`` file exists and its process (``pid``) lives."""
    if not (folder / "starting").exists():
        return False
    try:
        return alive(int((folder / "pid").read_text()))
    except (OSError, ValueError):
        return True  # the pid is written right after the server is spawned


def _send_request(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """A job's request and its stdin/stdout/stderr descriptors, as _receive_request reads them: client to server,
    and server to a ready child."""
    body = json.dumps(request).encode()
    socket.send_fds(conn, [_HEADER.pack(len(body))], fds)
    conn.sendall(body)


def _receive_request(conn: socket.socket, fds: list[int]) -> dict:
    """The request _send_request sent; the descriptors that came with it are added to ``fds`` (the caller closes
    them). OSError when the sender went away or sent something else."""
    msg, got, _flags, _addr = socket.recv_fds(conn, _HEADER.size, 3)
    fds.extend(got)
    if len(msg) != _HEADER.size or len(got) != 3:
        raise OSError("bad request header")
    (size,) = _HEADER.unpack(msg)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise OSError("short request")
        body += chunk
    return json.loads(body)


def _read_line(conn: socket.socket) -> dict | None:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(4096)
        if not chunk:
            return None
        data += chunk
    return json.loads(data)


def _wait(conn: socket.socket, pid: int, argv: list[str]) -> int:
    """Forward SIGINT/SIGTERM/SIGHUP to the child until the server reports its exit status."""

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        while True:
            try:
                reply = _read_line(conn)
                break
            except InterruptedError:  # pragma: no cover -- PEP 475 retries recv; kept for old kernels
                continue
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        conn.close()
    if reply is None or "rc" not in reply:
        print(f"povstim {' '.join(argv[:1])}: error: the warm-start server stopped while running this job "
              f"(pid {pid}); rerun it (Snakemake reruns it with the same command)", file=sys.stderr)
        return 1
    return int(reply["rc"])


# --------------------------------------------------------------------------- server


def preload(modules=PRELOAD) -> list[str]:
    """Import ``modules`` (those that exist here) without starting CUDA or a thread pool.

    CUDA is not fork-safe: once the server's process has called ``cuInit`` (``torch.cuda.is_available()``
    does, through ``cudaGetDeviceCount``), a forked child cannot use the GPU and ``is_available()`` there
    says False, so a job would silently train on the CPU. The raw device count is therefore watched while
    the libraries import; if any of them asks, the server does not start and every job runs in its own
    process as without a server."""
    done, probed, restore = [], [], None
    try:
        for name in modules:
            try:
                importlib.import_module(name)
                done.append(name)
            except ImportError:
                pass
            if name == "torch" and restore is None and "torch" in sys.modules:
                restore = _watch_cuda_probe(sys.modules["torch"], probed)
    finally:
        if restore:
            restore()
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        if torch.cuda.is_initialized() or probed:  # pragma: no cover -- a library started CUDA at import
            raise RuntimeError(f"CUDA was initialised while preloading ({probed[0] if probed else 'lazy init'});"
                               " a forked child could not use it")
    return done


def _watch_cuda_probe(torch, probed: list):
    """Record calls of ``torch._C._cuda_getDeviceCount`` (CUDA builds only; it runs ``cuInit``, and
    ``torch.cuda.is_available``/``device_count`` go through it); returns what puts the original back."""
    originals = []
    for owner, attr in ((torch._C, "_cuda_getDeviceCount"),):
        fn = getattr(owner, attr, None)
        if fn is None:
            continue

        def watched(*args, _fn=fn, _attr=attr, **kwargs):
            probed.append(_attr)
            return _fn(*args, **kwargs)

        setattr(owner, attr, watched)
        originals.append((owner, attr, fn))

    def restore():
        for owner, attr, fn in originals:
            setattr(owner, attr, fn)

    return restore


def serve(path: str, watch_pid: int | None = None, modules=PRELOAD) -> int:
    """The server loop: preload, listen on ``path``, fork one child per request; stop when ``watch_pid``
    (the Snakemake process) is gone, on SIGTERM, or when the socket file is removed."""
    folder = Path(path).parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the jobs through their clients
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    try:
        before = dict(os.environ)
        t0 = time.perf_counter()
        done = preload(modules)
        _say(f"server {os.getpid()}: imported {len(done)} modules in {time.perf_counter() - t0:.1f}s; listening on {path}")
        import_env = _import_env(before)  # what a job's client (which imported nothing) has
        # variables the libraries set for themselves while importing (e.g. TORCHINDUCTOR_CACHE_DIR):
        # a child sets them as its own import would have
        set_by_import = {k: v for k, v in os.environ.items() if before.get(k) != v}
        identity = _identity()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(64)
        ready = ReadyChildren(ready_count(os.environ), set_by_import)
    finally:  # listening, or failed: either way clients stop waiting
        (folder / "starting").unlink(missing_ok=True)
    waiting: dict[socket.socket, int] = {}  # client connection -> its child's pid
    children: dict[int, socket.socket] = {}
    try:
        ready.fill([listener])
        while not stop:
            if watch_pid is not None and not alive(watch_pid):
                break
            if not os.path.exists(path):
                break
            try:
                readable, _, _ = select.select([listener, *waiting], [], [], 0.2)
            except InterruptedError:  # pragma: no cover
                readable = []
            for s in readable:
                if s is listener:
                    _accept(listener, waiting, children, import_env, identity, set_by_import, ready)
                elif not s.recv(1):  # the client is gone (Snakemake killed the job): stop its child
                    pid = waiting.pop(s)
                    s.close()
                    _terminate(pid)
            _reap(waiting, children, ready)
            ready.fill([listener, *waiting])
    finally:
        listener.close()
        ready.stop()
        for pid in list(children):
            _terminate(pid)
        deadline = time.monotonic() + 10
        while children and time.monotonic() < deadline:
            _reap(waiting, children)
            time.sleep(0.05)
        Path(path).unlink(missing_ok=True)
        # the private folder start() made: gone too when Snakemake was killed before it could stop us
        (folder / "pid").unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # kept while it holds a server.log (no log= given)
            folder.rmdir()
    return 0


def _say(line: str) -> None:
    """One line of the server's log (logs/<experiment>/warm_start.log in a Snakemake run)."""
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", flush=True)


def _shown(argv: list[str], width: int = 2000) -> str:
    text = " ".join(argv)
    return text if len(text) <= width else text[: width - 3] + "..."


def alive(pid: int) -> bool:
    """``pid`` is running: it exists and is not a zombie (exited, not yet reaped by its parent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):  # no /proc (macOS): existence is all we can tell
        return True


def _terminate(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)  # the child leads its own session: its subprocesses go too
    except (ProcessLookupError, PermissionError):
        pass


def _reap(waiting: dict, children: dict, ready: ReadyChildren | None = None) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            if ready is not None:
                ready.gone(pid, os.waitstatus_to_exitcode(status))
            continue
        rc = os.waitstatus_to_exitcode(status)
        if rc < 0:
            rc = 128 - rc  # killed by a signal: the shell's convention
        _say(f"pid {pid}: exit {rc}")
        waiting.pop(conn, None)
        try:
            conn.sendall(json.dumps({"rc": rc}).encode() + b"\n")
        except OSError:
            pass
        conn.close()


def refusal(request: dict, import_env: dict, identity: dict, set_by_import: dict | None = None) -> str | None:
    """Why a request cannot run in a forked child (None: it can). ``import_env``: the server's import-time
    variables before it imported anything; a job may also carry a variable the libraries set for themselves
    at import (``set_by_import``, e.g. its parent had imported torch) when it has the value they set."""
    if request.get("identity") != identity:
        return "a different Python"
    theirs = _import_env(request.get("env") or {})
    set_by_import = set_by_import or {}
    keys = sorted(k for k in set(theirs) | set(import_env) if theirs.get(k) != import_env.get(k)
                  and not (k not in import_env and k in set_by_import and theirs.get(k) == set_by_import[k]))
    if keys:
        return f"environment differs from the server's in {', '.join(keys)}"
    return None


def _accept(listener, waiting, children, import_env, identity, set_by_import, ready=None) -> None:
    conn, _ = listener.accept()
    conn.settimeout(10)
    fds: list[int] = []
    try:
        request = _receive_request(conn, fds)
        why = refusal(request, import_env, identity, set_by_import)
        if why:
            _say(f"refused povstim {_shown(request['argv'])}: {why} (the job runs in its own process)")
            conn.sendall(json.dumps({"refused": why}).encode() + b"\n")
            conn.close()
            return
        pid = ready.take(request, fds) if ready is not None else None
        if pid is not None:
            _say(f"pid {pid}: povstim {_shown(request['argv'])} (in a ready child)")
            _handed(conn, pid, waiting, children)
            return
        sys.stdout.flush()
        sys.stderr.flush()
        # every object the server holds (the preloaded libraries: ~400k with torch and transformers) into the
        # collector's permanent generation, which the child inherits: its collections then never walk them.
        # Otherwise each full collection in a job walks them all -- encoding a 20k-pair suite's 36k sentences
        # took 1.2 s instead of 0.74 s on a 2-core machine -- and writes to their headers, copying the
        # server's pages that fork shared (the gc module docs recommend freezing before fork)
        gc.freeze()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            listener.close()
            for other in waiting:
                other.close()
            conn.close()
            if ready is not None:
                ready.close_channels()
            _child(request, fds, set_by_import)
        _say(f"pid {pid}: povstim {_shown(request['argv'])}")
        _handed(conn, pid, waiting, children)
    except (OSError, ValueError):
        conn.close()
    finally:
        for fd in fds:
            os.close(fd)


def _handed(conn, pid: int, waiting: dict, children: dict) -> None:
    """Tell the client which process runs its job, and wait for that process's exit."""
    conn.settimeout(None)
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    waiting[conn] = pid
    children[pid] = conn


def _child(request: dict, fds: list[int], set_by_import: dict) -> None:
    """In the forked child: become the job's process, run ``povstim argv``, exit with its status."""
    rc = 1
    try:
        if os.getsid(0) != os.getpid():  # a ready child leads its own session already
            os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.umask(int(request["umask"]))
        os.environ.clear()
        os.environ.update(request["env"])
        for key, value in set_by_import.items():
            os.environ.setdefault(key, value)
        os.environ[ENV_CHILD] = "1"
        sys.path[:] = request["path"]
        _fresh_streams()
        _fresh_state()
        _thread_limits(os.environ)
        for name in [m for m in sys.modules if m == "povstim" or m.startswith("povstim.")]:
            del sys.modules[name]  # the checkout's code as it is now, not as when the server started
        importlib.invalidate_caches()
        sys.argv = ["povstim", *request["argv"]]
        # The command line as the checkout has it now, imported by name after dropping every povstim module:
        # this module sits below povstim.cli (which calls delegate) and never imports it itself
        main = importlib.import_module("povstim.cli").main

        rc = int(main(list(request["argv"])) or 0)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        rc = 130
    except BaseException:  # noqa: BLE001 -- as an uncaught exception in a fresh process: traceback, status 1
        import traceback

        traceback.print_exc()
        rc = 1
    finally:
        try:
            import atexit

            atexit._run_exitfuncs()
            import logging

            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(rc)


def _fresh_streams() -> None:
    """sys.stdout/err/in over the job's descriptors, buffered as a fresh interpreter would buffer them."""
    import io

    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            tty = os.isatty(fd)
            raw = io.FileIO(fd, mode, closefd=False)
            buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
            stream = io.TextIOWrapper(buffered, encoding=getattr(sys, f"__{name}__").encoding,
                                      errors="backslashreplace" if name == "stderr" else None,
                                      line_buffering=tty or name == "stderr", write_through=name == "stderr")
        except (OSError, ValueError):
            continue
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _thread_limits(env) -> None:
    """Size torch's and the BLAS/OpenMP thread pools from the job's OMP_NUM_THREADS (Snakemake's {threads}),
    as a fresh process sizes them when it loads those libraries."""
    value = env.get("OMP_NUM_THREADS") or env.get("MKL_NUM_THREADS")
    try:
        n = int(value) if value else 0
    except ValueError:
        return
    if n < 1:
        return
    torch = sys.modules.get("torch")
    if torch is not None:
        # torch never takes more threads from OMP_NUM_THREADS than its own default (the cores it sees):
        # the child starts with that default, so the same cap gives what a fresh process gets
        n = min(n, torch.get_num_threads())
        torch.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover -- a dependency of pymc, so normally present
        return
    threadpool_limits(limits=n)


def _fresh_state() -> None:
    """The random state a fresh interpreter starts with (see the module docstring)."""
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(torch.initial_seed())  # a fresh process's default seed, at its first draw


# --------------------------------------------------------------------------- ready children


def ready_count(env, cuda_build: bool | None = None, dev_dir: str = "/dev") -> int:
    """How many ready children the server keeps (``POVSTIM_WARM_READY``): a count as given, or for ``auto`` (unset)
    one where jobs will see a GPU (devices.gpu_visible) and torch is a CUDA or ROCm build, none elsewhere: a CPU
    has no driver to start ahead. ``cuda_build`` stands in for torch's own answer (tests)."""
    raw = str(env.get(ENV_READY) or "auto").strip().lower()
    if raw != "auto":
        try:
            count = int(raw)
        except ValueError:
            count = -1
        if count < 0:
            _say(f"{ENV_READY}={raw!r} is neither auto nor a count of ready children: keeping none")
            return 0
        return count
    if cuda_build is None:
        torch = sys.modules.get("torch")
        version = getattr(torch, "version", None)
        cuda_build = bool(getattr(version, "cuda", None) or getattr(version, "hip", None))
    # no torch, no CUDA: reads CUDA_VISIBLE_DEVICES and /dev. Imported here, not at the top: every command's
    # client imports this module (povstim.cli), and devices would add the schema's imports to each start
    from .devices.slots import gpu_visible

    return 1 if cuda_build and gpu_visible(env, dev_dir) else 0


class ReadyChildren:
    """The server's children forked ahead of their jobs (see the module docstring), each waiting on its end of a
    socket pair for a request and the job's three descriptors, as the server received them from the client."""

    GIVE_UP = 3  # ready children that died before a job: after this many, the server forks per job only

    def __init__(self, count: int, set_by_import: dict):
        self.count, self.set_by_import = int(count), set_by_import
        self.idle: list[tuple[int, socket.socket]] = []  # (pid, the server's end of its channel), oldest first
        self.died = 0
        # CUDA_VISIBLE_DEVICES as the ready children started their driver with (the server's, inherited)
        self.visible = os.environ.get("CUDA_VISIBLE_DEVICES")

    def fill(self, closing: list) -> None:
        """Fork ready children until ``count`` wait; ``closing``: the server's sockets a child must not hold."""
        while len(self.idle) < self.count and self.died < self.GIVE_UP:
            sys.stdout.flush()
            sys.stderr.flush()
            gc.freeze()  # as for a job's child (_accept)
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            pid = os.fork()
            if pid == 0:  # never returns
                ours.close()
                for s in closing:
                    s.close()
                self.close_channels()
                _ready_child(theirs, self.set_by_import)
            theirs.close()
            self.idle.append((pid, ours))

    def take(self, request: dict, fds: list[int]) -> int | None:
        """The pid of a ready child now running ``request`` (its descriptors passed on), or None: the stage does not
        start CUDA first, its visible GPUs are not those the child's driver started with, or none is waiting."""
        if request.get("stage") not in READY_STAGES:
            return None
        if (request.get("env") or {}).get("CUDA_VISIBLE_DEVICES") != self.visible:
            return None
        while self.idle:
            pid, chan = self.idle.pop(0)
            try:
                _send_request(chan, request, fds)
            except OSError:  # it died while waiting (not reaped yet): the next one, or a fresh fork
                self.died += 1
                continue
            finally:
                chan.close()
            return pid
        return None

    def gone(self, pid: int, rc: int) -> None:
        """A child that was not running a job exited: if it was a ready one, it died waiting (a fresh one replaces
        it, up to GIVE_UP times)."""
        for i, (waiting_pid, chan) in enumerate(self.idle):
            if waiting_pid == pid:
                del self.idle[i]
                chan.close()
                self.died += 1
                _say(f"ready child {pid}: exited with {rc} before a job came"
                     + ("; no more ready children in this run" if self.died >= self.GIVE_UP else ""))
                return

    def close_channels(self) -> None:
        """In a forked child: drop the server's ends of the ready children's channels (EOF then reaches a ready
        child when the server goes, whatever else runs)."""
        for _pid, chan in self.idle:
            chan.close()

    def stop(self) -> None:
        for pid, chan in self.idle:
            chan.close()  # EOF: the ready child exits
            _terminate(pid)
        self.idle = []


def _ready_child(chan: socket.socket, set_by_import: dict) -> None:
    """A ready child: start the CUDA driver, wait for a job on ``chan``, run it as _child does (never returns)."""
    fds: list[int] = []
    try:
        os.setsid()  # its own process group, as a job's child: the server stops it with killpg (_terminate)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the server's handler, which would keep it waiting
        started = time.perf_counter()
        what = _start_cuda()
        _say(f"ready child {os.getpid()}: {what} in {time.perf_counter() - started:.2f}s; waiting for a job")
        request = _receive_request(chan, fds)
        chan.close()
    except OSError:  # EOF: the server stopped
        os._exit(0)
    except BaseException:  # noqa: BLE001 -- nothing to report to: the server counts the exit (ReadyChildren.gone)
        os._exit(1)
    _child(request, fds, set_by_import)


def _start_cuda() -> str:
    """Start the CUDA driver (``cuInit``, through the device count) without creating a context: no GPU memory is
    held while the child waits, and the job still picks its own GPU (devices.resolve_device)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return "no torch"
    version = torch.version
    if not (getattr(version, "cuda", None) or getattr(version, "hip", None)):
        return "torch has no CUDA"
    try:
        n = torch.cuda.device_count()
    except Exception as exc:  # noqa: BLE001 -- the job meets the same error and reports it
        return f"CUDA driver did not start ({type(exc).__name__}: {exc})"
    return f"CUDA driver started ({n} GPU(s) visible)"


# --------------------------------------------------------------------------- lifecycle (Snakefile)


class Server:
    """A running warm-start server (the Snakefile's onstart starts it, onsuccess/onerror stop it)."""

    def __init__(self, process: subprocess.Popen, folder: Path):
        self.process, self.folder = process, folder
        self.socket = str(folder / "povstim.sock")

    def ready(self, timeout: float = 120.0) -> bool:
        """Wait until the server listens (its imports done); False if it stopped or the time ran out."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            if os.path.exists(self.socket) and not (self.folder / "starting").exists():
                return True
            time.sleep(0.05)
        return False

    def stop(self, timeout: float = 15.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:  # pragma: no cover
                self.process.kill()
                self.process.wait()
        for name in ("povstim.sock", "starting", "pid", "server.log"):
            (self.folder / name).unlink(missing_ok=True)
        try:
            self.folder.rmdir()
        except OSError:
            pass


def start(pythonpath: str, python: str | None = None, log: str | os.PathLike | None = None) -> Server:
    """Start a server for this process's jobs and point them at it (``POVSTIM_WARM_SOCKET`` in os.environ,
    which Snakemake's local jobs inherit). The socket lives in a private temporary folder: Unix socket
    paths are limited to ~100 characters, which a checkout's own folder may exceed."""
    folder = Path(tempfile.mkdtemp(prefix="povstim-warm-"))
    (folder / "starting").touch()
    sock = folder / "povstim.sock"
    env = dict(os.environ)
    env["PYTHONPATH"] = pythonpath
    env.pop(ENV_SOCKET, None)
    out = open(log or folder / "server.log", "wb")  # one run's jobs, like every other Snakemake log
    process = subprocess.Popen(
        [python or sys.executable, "-m", "povstim.warm", "--socket", str(sock), "--watch-pid", str(os.getpid())],
        env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
    )
    out.close()
    (folder / "pid").write_text(str(process.pid))
    os.environ[ENV_SOCKET] = str(sock)
    return Server(process, folder)


def enabled(setting: bool, local_exec: bool, dryrun: bool, isolated: bool) -> bool:
    """Whether a Snakemake run starts the server: only where its jobs run on this machine with this Python
    (``isolated``: a deployment method -- conda, apptainer, env modules -- gives jobs their own software)."""
    return bool(setting) and local_exec and not dryrun and not isolated and hasattr(os, "fork")


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m povstim.warm", description=__doc__.split("\n\n")[0])
    p.add_argument("--socket", required=True)
    p.add_argument("--watch-pid", type=int)
    args = p.parse_args(argv)
    return serve(args.socket, args.watch_pid)


if __name__ == "__main__":
    sys.exit(main())
