"""How busy a command keeps the machine's cores: its CPU seconds over cores x wall time.

    python bench/core_utilisation.py --out evidence-cores.csv -- make evidence

Runs the command as a child subreaper (PR_SET_CHILD_SUBREAPER), so processes that leave
their parents (a warm worker's server, pipeline/warm_worker.py, started detached by a job)
are still its descendants: once the command ends it waits for every one of them and reads
their CPU seconds from getrusage(RUSAGE_CHILDREN), whatever else runs on the machine. It
also samples /proc/stat every ``--interval`` seconds (machine-wide, so keep the machine
otherwise quiet) into ``--out``: time, busy fraction of all cores since the last sample.
Prints wall time, CPU time and utilisation = CPU / (cores x wall).
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import os
import resource
import subprocess
import threading
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def cpu_counters() -> tuple[int, int]:
    """Busy and total jiffies of all cores (/proc/stat's first line; idle and iowait are idle)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)
    return total - fields[3] - fields[4], total


def sample(out: Path, interval: float, stop: threading.Event) -> None:
    started = time.monotonic()
    with out.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["seconds", "busy_fraction"])
        last = cpu_counters()
        while not stop.wait(interval):
            now = cpu_counters()
            busy, total = now[0] - last[0], now[1] - last[1]
            writer.writerow([round(time.monotonic() - started, 1), round(busy / total, 3) if total else 0.0])
            handle.flush()
            last = now


def plot(samples: Path, out: Path) -> None:
    """The busy fraction of all cores over the run, in minutes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with samples.open() as handle:
        rows = list(csv.DictReader(handle))
    minutes = [float(row["seconds"]) / 60 for row in rows]
    busy = [100 * float(row["busy_fraction"]) for row in rows]
    figure, axes = plt.subplots(figsize=(8, 2.6))
    axes.fill_between(minutes, busy, step="pre", alpha=0.6)
    axes.set(xlabel="minutes", ylabel="cores busy (%)", ylim=(0, 105), title=f"{samples.name}: mean {sum(busy) / len(busy):.1f}%")
    figure.tight_layout()
    figure.savefig(out, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="CSV of the machine-wide busy fraction over time")
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument(
        "--plot", type=Path, help="also draw --out as a PNG here (python bench/core_utilisation.py --out X --plot Y alone redraws X)"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        plot(args.out, args.plot)
        return
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")
    stop = threading.Event()
    sampler = threading.Thread(target=sample, args=(args.out, args.interval, stop))
    sampler.start()
    started = time.monotonic()
    status = subprocess.run(command).returncode
    wall = time.monotonic() - started
    stop.set()
    sampler.join()
    while True:  # descendants that outlived the command (an idling warm worker): their CPU counts too
        try:
            os.wait()
        except ChildProcessError:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu, cores = usage.ru_utime + usage.ru_stime, os.cpu_count()
    utilisation = 100 * cpu / (cores * wall)
    print(f"{' '.join(command)}: exit {status}, wall {wall:,.0f} s, CPU {cpu:,.0f} s on {cores} cores: utilisation {utilisation:.1f}%")
    if args.plot:
        plot(args.out, args.plot)
    raise SystemExit(status)


if __name__ == "__main__":
    main()
