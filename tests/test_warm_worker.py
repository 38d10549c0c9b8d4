"""Warm workers (pipeline/warm_worker.py): a job forked from a server that imported its code
behaves as the job started fresh would, signals and a dying client reach it, and nothing runs
from a socket another user could reach."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline import warm_worker
from tests.conftest import REPO, without_timings
from tests.test_finetune import finetune_spec, make_task

# A server whose jobs are fake_job, not a stage: the protocol without torch's imports.
FAKE_SERVER = (
    "import sys; from pipeline import warm_worker; from tests.test_warm_worker import fake_job;"
    " sys.exit(warm_worker.serve(sys.argv[1:], [], fake_job))"
)


def fake_job(argv: list[str]) -> int:
    """``finetune echo``: prints, writes a file where it runs, exits 3. ``finetune exit``: sys.exit.
    ``finetune sleep``: says its pid, sleeps."""
    if argv[1] == "echo":
        print("out", os.getcwd())
        print("err", os.environ["MARK"], file=sys.stderr)
        Path("made").write_text("by the job")
        return 3
    if argv[1] == "exit":  # sys.exit(), as a stage's argparse would: ``finetune exit [MESSAGE]``
        sys.exit(*argv[2:])
    Path("started").write_text(str(os.getpid()))
    time.sleep(120)
    return 0


def wait_for(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def gone(pid: int) -> bool:
    """Ended: no such process, or a zombie its parent (the server) has not reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True


@pytest.fixture()
def runtime_dir(monkeypatch) -> Iterator[Path]:
    """A short private base for the socket (a Unix socket's path is at most 107 bytes)."""
    base = Path(tempfile.mkdtemp(prefix="ww", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    yield base
    subprocess.run(["rm", "-rf", str(base)], check=True)


def environment(runtime_dir: Path, idle: str = "30") -> dict[str, str]:
    return {**os.environ, "XDG_RUNTIME_DIR": str(runtime_dir), warm_worker.ENVIRONMENT_VARIABLE: idle, "MARK": "m1"}


@pytest.fixture()
def fake_server(runtime_dir) -> Iterator[dict[str, str]]:
    env = environment(runtime_dir)
    path = warm_worker.socket_path(env)
    server = subprocess.Popen([sys.executable, "-c", FAKE_SERVER, "--socket", str(path), "--idle", "30"], cwd=REPO, env=env)
    wait_for(path.exists)
    yield env
    server.terminate()
    server.wait(timeout=30)


def client(env: dict[str, str], cwd: Path, *argv: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline", *argv], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_forked_job_gets_the_client_s_streams_directory_environment_and_exit_status(fake_server, tmp_path) -> None:
    job = client(fake_server, tmp_path, "finetune", "echo")
    out, err = job.communicate(timeout=60)
    assert job.returncode == 3
    assert out == f"out {tmp_path}\n"
    assert err.startswith("err m1\n")
    usage = json.loads(err.splitlines()[-1].removeprefix(warm_worker.USAGE_PREFIX))
    assert set(usage) == {"pid", "wall_seconds", "cpu_seconds", "max_rss_mb"} and usage["max_rss_mb"] > 0
    assert (tmp_path / "made").read_text() == "by the job"


@pytest.mark.parametrize(("argv", "status", "printed"), [((), 0, ""), (("no such task",), 1, "no such task\n")])
def test_a_job_s_sys_exit_ends_its_client_as_it_would_a_fresh_process(fake_server, tmp_path, argv, status, printed) -> None:
    job = client(fake_server, tmp_path, "finetune", "exit", *argv)
    _, err = job.communicate(timeout=60)
    assert job.returncode == status
    assert err.startswith(printed) and err.splitlines()[-1].startswith(warm_worker.USAGE_PREFIX)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["signal forwarded", "client killed"])
def test_a_job_ends_with_its_client(fake_server, tmp_path, how) -> None:
    job = client(fake_server, tmp_path, "finetune", "sleep")
    wait_for((tmp_path / "started").exists)
    pid = int((tmp_path / "started").read_text())
    job.send_signal(how)
    _, err = job.communicate(timeout=60)
    assert job.returncode != 0
    if how == signal.SIGTERM:
        assert f"the warm worker's job (pid {pid}) ended without an exit status" in err
    wait_for(lambda: gone(pid), 30)


def test_a_server_exits_after_idling_and_leaves_nothing_behind(runtime_dir) -> None:
    env = environment(runtime_dir, idle="1")
    path = warm_worker.socket_directory() / "idle.sock"
    server = subprocess.Popen([sys.executable, "-c", FAKE_SERVER, "--socket", str(path), "--idle", "1"], cwd=REPO, env=env)
    assert server.wait(timeout=60) == 0
    assert list(path.parent.iterdir()) == []  # socket, lock and log gone


def test_a_socket_directory_others_can_open_is_refused(runtime_dir, capsys) -> None:
    (runtime_dir / f"pipeline-warm-{os.getuid()}").mkdir(mode=0o755)
    os.chmod(runtime_dir / f"pipeline-warm-{os.getuid()}", 0o755)
    assert warm_worker.run_in_worker(["finetune", "anything"]) is None  # the caller runs the job itself
    assert f"not a directory of this user's only (owner uid {os.getuid()}, this user {os.getuid()}; mode 755, 700 wanted)" in (
        capsys.readouterr().err
    )


def test_a_socket_directory_that_is_a_link_is_refused_as_a_link(runtime_dir, tmp_path, capsys) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (runtime_dir / f"pipeline-warm-{os.getuid()}").symlink_to(elsewhere)
    assert warm_worker.run_in_worker(["finetune", "anything"]) is None  # the caller runs the job itself
    error = capsys.readouterr().err
    assert f"a symbolic link (to {elsewhere}), not a directory of this user's only" in error and "mode 777" not in error


def test_a_socket_path_too_long_for_unix_sockets_means_no_worker(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / ("d" * 90)))
    (tmp_path / ("d" * 90)).mkdir()
    assert warm_worker.run_in_worker(["finetune", "anything"]) is None
    assert "longer than a Unix socket's 107 bytes" in capsys.readouterr().err


def test_a_server_that_cannot_import_its_stages_stops_the_clients_starting_more(runtime_dir, monkeypatch) -> None:
    env = environment(runtime_dir)
    path = warm_worker.socket_path(env)
    broken = "import sys; from pipeline import warm_worker; sys.exit(warm_worker.serve(sys.argv[1:], ['no_such_module'], print))"
    server = subprocess.run([sys.executable, "-c", broken, "--socket", str(path), "--idle", "5"], cwd=REPO, env=env, capture_output=True)
    assert server.returncode != 0 and not path.exists()
    assert path.with_suffix(".failed").read_text() == "ModuleNotFoundError: No module named 'no_such_module'\n"
    for name in (warm_worker.ENVIRONMENT_VARIABLE, "MARK"):  # as the next job: no server answers, and none is started
        monkeypatch.setenv(name, env[name])
    assert warm_worker.run_in_worker(["finetune", "anything"]) is None
    assert not path.exists() and not path.with_suffix(".log").exists()


def test_the_server_key_follows_the_code_and_the_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(warm_worker, "PACKAGE_DIR", tmp_path)
    (tmp_path / "stage.py").write_text("x = 1\n")
    env = {"HF_HUB_OFFLINE": "1", "PWD": "/a"}
    key = warm_worker.server_key(env)
    assert warm_worker.server_key({**env, "PWD": "/b", "_": "/bin/sh"}) == key  # shell bookkeeping
    assert warm_worker.server_key({**env, "HF_HUB_OFFLINE": "0"}) != key  # read when transformers is imported
    (tmp_path / "stage.py").write_text("x = 22\n")
    assert warm_worker.server_key(env) != key  # edited code: a new server, never a stale one


def test_only_the_torch_stages_and_only_when_asked(monkeypatch) -> None:
    monkeypatch.delenv(warm_worker.ENVIRONMENT_VARIABLE, raising=False)
    assert not warm_worker.wanted(["finetune"])
    monkeypatch.setenv(warm_worker.ENVIRONMENT_VARIABLE, "60")
    assert warm_worker.wanted(["finetune"]) and warm_worker.wanted(["minimal-pairs"])
    assert not warm_worker.wanted(["pretrain"]) and not warm_worker.wanted([])
    # 0 (a non-blocking accept: BlockingIOError), too long a wait (OverflowError), not a number: no worker
    for value in ("0", "1e10", "nan", "soon", "-5"):
        monkeypatch.setenv(warm_worker.ENVIRONMENT_VARIABLE, value)
        assert not warm_worker.wanted(["finetune"]), value


@pytest.mark.parametrize("how", ["a working directory that does not exist", "a client gone at once"])
def test_a_job_that_fails_before_it_starts_leaves_the_server_serving(fake_server, tmp_path, how) -> None:
    """The forked copy fails before its job (os.chdir, or the reply to a closed connection): it
    exits, and the server's socket stays, so the next job still runs warm."""
    import socket

    path = warm_worker.socket_path(fake_server)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(str(path))
    cwd = str(tmp_path / "gone") if how.startswith("a working") else str(tmp_path)
    request = {"argv": ["finetune", "echo"], "cwd": cwd, "environment": fake_server, "umask": 0o022}
    with open(os.devnull, "w") as sink:  # the copy's streams: not this test's
        warm_worker.send_message(connection, request, (sink.fileno(),) * 3)
        if how.startswith("a client"):
            connection.close()
        else:
            assert warm_worker.MessageReader(connection).read() is None  # no pid: the job never started
            connection.close()
    time.sleep(0.5)
    assert path.exists()
    job = client(fake_server, tmp_path, "finetune", "echo")
    _, err = job.communicate(timeout=60)
    assert job.returncode == 3 and err.splitlines()[-1].startswith(warm_worker.USAGE_PREFIX)  # served warm


def test_a_fine_tuning_job_in_a_warm_worker_scores_what_a_cold_one_does(init_dir, runtime_dir, tmp_path) -> None:
    """The first job finds no server, runs itself and starts one; the next is forked from it.
    Same scores to the last digit (the seconds each grid point took aside)."""
    env = environment(runtime_dir, idle="20")
    task = make_task(tmp_path / "task")
    argv = ["finetune", "--spec", finetune_spec(), "--model", str(init_dir), "--task-dir", str(task), "--out"]
    path = warm_worker.socket_path(env)

    cold = client(env, tmp_path, *argv, str(tmp_path / "cold"))
    _, cold_err = cold.communicate(timeout=300)
    assert cold.returncode == 0, cold_err
    assert warm_worker.USAGE_PREFIX not in cold_err
    wait_for(path.exists, 120)
    warm = client(env, tmp_path, *argv, str(tmp_path / "warm"))
    _, warm_err = warm.communicate(timeout=300)
    assert warm.returncode == 0, warm_err
    assert warm_err.splitlines()[-1].startswith(warm_worker.USAGE_PREFIX)

    def scores(name: str) -> list[dict]:
        return without_timings(json.loads((tmp_path / name / "scores.json").read_text()))

    assert scores("warm") == scores("cold")
    server_pid = int(path.with_suffix(".log").read_text().split("pid ")[1].split(":")[0])
    os.kill(server_pid, signal.SIGTERM)
