"""Warm workers: CPU jobs of the torch stages forked from a process that imported them once.

A fine-tuning job of the CPU tiers trains for 15-20 s and used to spend ~5 s more starting,
4+ s of it importing torch and transformers' model classes (bench/finetune_startup.py). With
``PIPELINE_WARM_WORKER`` set to an idle timeout in seconds (the Snakefile sets it from
``hardware.warm_worker_idle_seconds`` when jobs run on CPUs), ``python -m pipeline finetune ...``
is a client: it hands its arguments, working directory, environment and standard streams to a
server that has imported the stage's code, which forks a copy to run the job as a fresh
process would. Each job stays its own Snakemake job, so reruns stay per task and model; only
the imports are shared.

- The first client that finds no server starts one and runs its own job the usual way; the
  server exits after idling ``PIPELINE_WARM_WORKER`` seconds with no job running.
- A server is keyed by the code, the installed packages, the interpreter and the environment
  (variables such as GLIBC_TUNABLES or HF_HUB_OFFLINE act when a process starts or imports),
  so an edit, an install or another config starts a new one instead of running stale code.
- Its socket sits in a directory only this user can open; a request is JSON, never a pickle.
- A signal the client gets goes to the job; a client that dies takes its job down (the
  outputs are written atomically, so nothing half-written looks complete).
- The job's CPU seconds and peak memory are the forked process's, not the client's that
  Snakemake's benchmark sees: the client prints them last in the job's log (``USAGE_PREFIX``),
  and the report's cost table reads them from there.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from pipeline.worker_usage import USAGE_PREFIX

ENVIRONMENT_VARIABLE = "PIPELINE_WARM_WORKER"
SERVE_COMMAND = "warm-worker"  # python -m pipeline warm-worker --socket PATH --idle SECONDS
STAGES = ("finetune", "minimal-pairs")  # CPU jobs that are torch imports for a good part of their time
STREAMS = (0, 1, 2)
MAX_MESSAGE = 1 << 20
REQUEST_SECONDS = 10.0
MAX_SOCKET_PATH = 107  # sun_path's 108 bytes, less the terminating NUL
MAX_IDLE_SECONDS = 86_400  # hardware.warm_worker_idle_seconds' bound: a day
# Shell and Snakemake bookkeeping that differs between jobs of one run and acts on nothing.
UNKEYED_VARIABLES = frozenset({"_", "PWD", "OLDPWD", "SHLVL"})
PACKAGE_DIR = Path(__file__).resolve().parent


def wanted(argv: list[str]) -> bool:
    """Whether ``python -m pipeline <argv>`` should run in a warm worker: a stage of ``STAGES``,
    with ``PIPELINE_WARM_WORKER`` an idle timeout above 0 (0, empty or anything else: no worker)."""
    return bool(argv) and argv[0] in STAGES and idle_seconds() > 0


def idle_seconds() -> float:
    """``PIPELINE_WARM_WORKER`` in seconds, within (0, MAX_IDLE_SECONDS]; 0 where it is unset,
    not a number or out of range (a socket timeout of 0 would make the server's accept
    non-blocking, one too large overflows it)."""
    try:
        seconds = float(os.environ.get(ENVIRONMENT_VARIABLE) or 0)
    except ValueError:
        return 0.0
    return seconds if 0 < seconds <= MAX_IDLE_SECONDS else 0.0


def server_key(environment: dict[str, str]) -> str:
    """What a server's imports depend on: the package's files, the installed distributions, the
    interpreter and the environment. Stat-only, a few milliseconds: every job computes it."""
    digest = hashlib.sha256()
    digest.update(f"{sys.executable}\0{sys.version}\0".encode())
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        status = path.stat()
        digest.update(f"{path.relative_to(PACKAGE_DIR)}\0{status.st_mtime_ns}\0{status.st_size}\0".encode())
    site_packages = Path(sysconfig.get_paths()["purelib"])
    digest.update("\0".join(sorted(os.listdir(site_packages))).encode())  # dist-info names carry versions
    digest.update(json.dumps({k: v for k, v in environment.items() if k not in UNKEYED_VARIABLES}, sort_keys=True).encode())
    return digest.hexdigest()[:24]


def socket_path(environment: dict[str, str]) -> Path:
    """The socket of the server for ``environment`` and this code."""
    path = socket_directory() / f"{server_key(environment)}.sock"
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise OSError(f"{path}: longer than a Unix socket's {MAX_SOCKET_PATH} bytes (set XDG_RUNTIME_DIR to a shorter directory)")
    return path


def socket_directory() -> Path:
    """A directory of this user's only, made if absent; anything else refused (a socket another
    user could plant or open would run jobs as them or as us)."""
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
    directory = base / f"pipeline-warm-{os.getuid()}"
    directory.mkdir(mode=0o700, exist_ok=True)
    status = directory.lstat()
    if directory.is_symlink():  # its mode is the link's own 777, which would say nothing of where it points
        raise OSError(f"{directory}: a symbolic link (to {os.readlink(directory)}), not a directory of this user's only")
    if not directory.is_dir() or status.st_uid != os.getuid() or status.st_mode & 0o077:
        raise OSError(
            f"{directory}: not a directory of this user's only (owner uid {status.st_uid}, this user {os.getuid()};"
            f" mode {status.st_mode & 0o777:o}, 700 wanted)"
        )
    return directory


# ------------------------------------------------------------------ messages


def send_message(connection: socket.socket, message: dict, streams: tuple[int, ...] = ()) -> None:
    data = json.dumps(message).encode() + b"\n"
    if streams:
        socket.send_fds(connection, [data[:1]], list(streams))
        data = data[1:]
    connection.sendall(data)


class MessageReader:
    """Newline-delimited JSON messages from a stream socket, with the descriptors sent beside them."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection, self.buffer, self.streams = connection, b"", []

    def read(self) -> dict | None:
        """The next message; None at the end of the stream."""
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_MESSAGE:
                raise ValueError("message too long")
            data, fds, _, _ = socket.recv_fds(self.connection, 65536, len(STREAMS))
            if not data:
                return None
            self.buffer += data
            self.streams += fds
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


# ------------------------------------------------------------------ client


def run_in_worker(argv: list[str]) -> int | None:
    """Run ``argv`` in a forked copy of the warm server: its exit status, or None when no server
    answers (one is started for the next jobs) and the caller should run the job itself."""
    environment = dict(os.environ)
    try:
        path = socket_path(environment)
    except OSError as error:
        print(f"warning: no warm worker ({error}); the job imports its code itself", file=sys.stderr)
        return None
    if path.with_suffix(".failed").exists():  # this code's server could not start: don't start one per job
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except OSError:
        connection.close()
        start_server(path)
        return None
    with connection:
        request = {"argv": argv, "cwd": os.getcwd(), "environment": environment, "umask": current_umask()}
        send_message(connection, request, STREAMS)
        reader = MessageReader(connection)
        started = reader.read()
        if started is None:  # the server went away between accept and fork: nothing ran
            return None
        pid = started["pid"]
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, lambda received, _frame: forward(received, pid))
        finished = reader.read()
    if finished is None:
        print(f"error: the warm worker's job (pid {pid}) ended without an exit status", file=sys.stderr)
        return 1
    print(USAGE_PREFIX + json.dumps(finished["usage"]), file=sys.stderr)
    return finished["exit"]


def forward(signal_number: int, pid: int) -> None:
    try:
        os.kill(pid, signal_number)
    except ProcessLookupError:
        pass  # already over: its exit status is on its way


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def start_server(path: Path) -> None:
    """Start a server for the next jobs, detached from this job's session, its output in a log
    beside its socket; a second one for the same key finds the lock taken and exits. It starts
    beside this package, so that ``-m pipeline`` is this copy of the code, the one the key hashed."""
    command = [sys.executable, "-m", "pipeline", SERVE_COMMAND, "--socket", str(path), "--idle", str(idle_seconds())]
    with open(path.with_suffix(".log"), "ab") as log:
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=PACKAGE_DIR.parent, start_new_session=True)


# ------------------------------------------------------------------ server


def serve(argv: list[str], preload: list[str], run_job: Callable[[list[str]], int]) -> int:
    """``warm-worker --socket PATH --idle SECONDS``: import ``preload``, then fork a copy per
    request that runs ``run_job(argv)`` as the client would have; exit after ``SECONDS`` idle."""
    path, idle = Path(argv[argv.index("--socket") + 1]), float(argv[argv.index("--idle") + 1])
    lock = open(path.with_suffix(".lock"), "w")  # held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server has this key
    started = time.monotonic()
    try:
        for module in preload:
            __import__(module)
    except Exception as error:  # clients see the marker and stop starting servers for this code
        path.with_suffix(".failed").write_text(f"{type(error).__name__}: {error}\n")
        raise
    print(f"{time.strftime('%H:%M:%S')} pid {os.getpid()}: imported {', '.join(preload)} in {time.monotonic() - started:.1f} s", flush=True)
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    listener.settimeout(idle)
    children: set[int] = set()
    try:
        while True:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                children = still_running(children)
                if not children:  # idle: a clean exit leaves nothing behind (a crash keeps its log)
                    for leftover in (".log", ".lock"):
                        path.with_suffix(leftover).unlink(missing_ok=True)
                    return 0
                continue
            with connection:
                reader = MessageReader(connection)
                connection.settimeout(REQUEST_SECONDS)  # a client that connects and says nothing holds no one up
                try:
                    request = reader.read()
                except (OSError, ValueError):
                    request = None
                if request is not None and len(reader.streams) == len(STREAMS):
                    connection.settimeout(None)
                    pid = os.fork()
                    if pid == 0:
                        exit_forked(listener, connection, request, reader.streams, run_job)
                    children.add(pid)
                for fd in reader.streams:
                    os.close(fd)
            children = still_running(children)
    finally:
        path.unlink(missing_ok=True)
        listener.close()


def still_running(children: set[int]) -> set[int]:
    """``children`` less those that ended, reaped."""
    return {pid for pid in children if os.waitpid(pid, os.WNOHANG) == (0, 0)}


def exit_forked(listener: socket.socket, connection: socket.socket, request: dict, streams: list[int], run_job) -> None:
    """The forked copy's whole life: run the job, then exit, whatever happened. A copy that fails
    before its job starts (a working directory gone, a client already disconnected) must not
    return into the server's loop: it would run serve()'s clean-up and delete the live server's
    socket."""
    status = 1
    try:
        listener.close()
        status = run_forked(connection, request, streams, run_job)
    except BaseException:
        traceback.print_exc()  # to the server's log, or the client's stderr once it is ours
    finally:
        os._exit(status)


def run_forked(connection: socket.socket, request: dict, streams: list[int], run_job: Callable[[list[str]], int]) -> int:
    """In the forked copy: become the client's process (streams, directory, environment, umask),
    run the job, report its exit status and usage. Returns the status to exit with."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in zip(STREAMS, streams):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["environment"])
    os.umask(request["umask"])
    sys.argv = ["python -m pipeline", *request["argv"]]
    send_message(connection, {"pid": os.getpid()})
    threading.Thread(target=exit_when_closed, args=(connection,), daemon=True).start()
    started = time.monotonic()
    try:
        status = run_job(request["argv"])
    except SystemExit as exit_:  # read as the interpreter reads it: None succeeds, a message is printed and fails
        code = exit_.code
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
        status = code if isinstance(code, int) else 0 if code is None else 1
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    record = {
        "pid": os.getpid(),
        "wall_seconds": round(time.monotonic() - started, 3),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
        "max_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: kilobytes
    }
    send_message(connection, {"exit": status, "usage": record})
    return status


def exit_when_closed(connection: socket.socket) -> None:
    """The client sends nothing after its request: the end of the stream means it died, and its
    job goes with it rather than running on unseen."""
    while connection.recv(1024):
        pass
    os.kill(os.getpid(), signal.SIGTERM)
