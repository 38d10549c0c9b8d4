"""The cluster path on a real scheduler (`make slurm-rehearsal`): the paper rehearsal submitted
through profiles/slurm, the site's settings as a workflow profile (profiles/slurm_local), to the
one-node SLURM that profiles/slurm_local/up.sh brings up. Every compute job goes through sbatch,
SLURM grants each what Snakemake asked, the tables equal the local rehearsal's but their timings,
and a Snakemake killed mid-run and restarted resubmits none of the finished jobs.

Needs a SLURM answering `sinfo` and the executor plugin (`pip install -e '.[slurm]'`): skipped
otherwise, as in CI, whose machine has neither (bench/records/slurm-rehearsal.md records a run)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import paper_hub
from tests.conftest import REPO, run_snakemake, shared_download_cache, snakemake_command

sys.path.insert(0, str(REPO / "bench"))
from compare_tables import differences  # noqa: E402

CONFIGS = (REPO / "config" / "paper.yaml", REPO / "config" / "rehearsal.yaml")
PROFILES = ("--profile", str(REPO / "profiles" / "slurm"), "--workflow-profile", str(REPO / "profiles" / "slurm_local"))


def slurm_absent() -> str:
    """Why SLURM cannot be used here, or "" when it can."""
    if shutil.which("sinfo") is None:
        return "no SLURM here (sinfo not found): make slurm-rehearsal brings up a one-node SLURM on a Debian machine, as root"
    answered = subprocess.run(["sinfo", "--noheader", "--states=idle,mixed,allocated"], capture_output=True, text=True)
    if answered.returncode != 0 or not answered.stdout.strip():
        return f"no SLURM node answers (sinfo: {answered.stderr.strip() or 'no idle node'}): profiles/slurm_local/up.sh starts one"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "the SLURM executor plugin is not installed: pip install -c constraints.txt -e '.[slurm]'"
    return ""


pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(slurm_absent()), reason=slurm_absent() or "SLURM available")]


def slurm_snakemake(workdir: Path, *args: str, cache: Path) -> subprocess.Popen:
    """The rehearsal through profiles/slurm in ``workdir``, Snakemake's output to workdir/snakemake.log."""
    command = snakemake_command(workdir, CONFIGS, *PROFILES, *args)
    log = (workdir / "snakemake.log").open("a")
    environment = {**os.environ, "PIPELINE_DOWNLOAD_CACHE": str(cache)}
    return subprocess.Popen(command, cwd=workdir, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """(the local rehearsal's directory, the SLURM one's), both from one staged mirror."""
    local, cache = tmp_path_factory.mktemp("rehearsal"), shared_download_cache(tmp_path_factory)
    paper_hub.stage_in(local, CONFIGS)
    done = run_snakemake(local, CONFIGS, cache=cache)
    assert done.returncode == 0, done.stderr[-3000:]
    slurm = tmp_path_factory.mktemp("rehearsal_slurm")
    for name in ("mirror", "encodeval"):
        shutil.copytree(local / name, slurm / name)
    # Snakemake killed once its first jobs are done, then restarted: the finished ones must stay done.
    first = slurm_snakemake(slurm, cache=cache)
    deadline = time.monotonic() + 600
    while len(submitted(slurm)) < 8 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(1)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    # the jobs it had submitted run on in SLURM (a killed Snakemake cancels nothing): let them end, as
    # a user restarting after the login node's session died finds them ended or running
    while subprocess.run(["squeue", "--noheader"], capture_output=True, text=True).stdout.strip() and time.monotonic() < deadline:
        time.sleep(2)
    (slurm / "snakemake.log").write_text((slurm / "snakemake.log").read_text() + "\n== killed and restarted ==\n")
    subprocess.run(snakemake_command(slurm, CONFIGS, "--unlock"), cwd=slurm, capture_output=True)
    second = slurm_snakemake(slurm, cache=cache)
    assert second.wait(timeout=1800) == 0, (slurm / "snakemake.log").read_text()[-3000:]
    return local, slurm


def submitted(workdir: Path) -> dict[str, str]:
    """Snakemake job id -> SLURM job id, of every job submitted so far (its log's "submitted" lines)."""
    log = workdir / "snakemake.log"
    text = log.read_text() if log.is_file() else ""
    return dict(re.findall(r"Job (\d+) has been submitted with SLURM jobid (\d+)", text))


def test_every_compute_job_went_through_sbatch_and_the_tables_equal_the_local_run_s(runs):
    local, slurm = runs
    log = (slurm / "snakemake.log").read_text()
    assert submitted(slurm) and "Finished" in log
    assert differences(local / "results" / "tables", slurm / "results" / "tables") == []


def test_slurm_grants_each_job_what_snakemake_asked(runs):
    """Per submitted job, scontrol's TimeLimit, memory and CPUs equal the job's runtime, mem_mb and
    threads in Snakemake's plan (finished jobs stay in scontrol's answers for MinJobAge, an hour).
    Each Snakemake run numbers its jobs afresh: the runs before and after the kill are read apart."""
    _, slurm = runs
    checked = 0
    for run in (slurm / "snakemake.log").read_text().split("== killed and restarted =="):
        asked = {}
        for block in re.split(r"\n(?=\[.*\]\n(?:local)?rule )", run):
            jobid, resources = re.search(r"jobid: (\d+)", block), re.search(r"resources: (.*)", block)
            if jobid and resources:
                fields = dict(item.split("=", 1) for item in resources[1].split(", "))
                threads = re.search(r"threads: (\d+)", block)
                asked[jobid[1]] = (int(fields["runtime"]), int(fields["mem_mb"]), int(threads[1]) if threads else 1)
        for job, slurm_job in re.findall(r"Job (\d+) has been submitted with SLURM jobid (\d+)", run):
            shown = subprocess.run(["scontrol", "show", "job", slurm_job], capture_output=True, text=True).stdout
            limit = re.search(r"TimeLimit=(?:(\d+)-)?(\d+):(\d+):(\d+)", shown)
            minutes = int(limit[1] or 0) * 1440 + int(limit[2]) * 60 + int(limit[3])
            memory, cpus = int(re.search(r"MinMemoryNode=(\d+)M", shown)[1]), int(re.search(r"NumCPUs=(\d+)", shown)[1])
            assert (minutes, memory, cpus) == asked[job], (job, slurm_job)
            checked += 1
    assert checked == sum(len(re.findall("has been submitted", run)) for run in [(slurm / "snakemake.log").read_text()]) >= 50


def test_a_restarted_snakemake_resubmits_no_finished_job(runs):
    """Killed with jobs done and jobs in SLURM's hands, then restarted: a job whose outputs were
    complete before the kill is not submitted again."""
    _, slurm = runs
    before, after = (slurm / "snakemake.log").read_text().split("== killed and restarted ==")
    finished = set(re.findall(r"Finished jobid: (\d+) \(Rule: (\w+)\)", before))
    rules_again = set(re.findall(r"\nrule (\w+):", after))
    done_rules = {rule for _, rule in finished}
    # a rule with one job (fetch, gather_corpus, train_tokenizer, index_tokens) finished before the kill is not run again
    single = {"fetch", "gather_corpus", "train_tokenizer", "index_tokens"} & done_rules
    assert single and not single & rules_again


def test_a_job_over_its_memory_request_is_killed_and_its_log_says_so(runs, tmp_path):
    """SLURM's OverMemoryKill (profiles/slurm_local/up.sh) ends a job whose resident memory passes its
    request, and Snakemake's failure report shows the one line of the job's log that says why."""
    _, slurm = runs
    copy = tmp_path / "copy"
    shutil.copytree(slurm, copy, ignore=shutil.ignore_patterns(".snakemake", "snakemake.log"))
    target = "results/data/tasks/sst2/stats.json"
    starved = slurm_snakemake(copy, "-f", target, "--set-resources", "prepare_task:mem_mb=60", "--retries", "0", cache=copy / "downloads")
    assert starved.wait(timeout=600) != 0
    lines = [line for line in (copy / "snakemake.log").read_text().splitlines() if "exceeded memory limit" in line]
    assert lines and re.search(r"StepId=\d+\.batch exceeded memory limit \(\d+ > 62914560\), being killed", lines[0])
