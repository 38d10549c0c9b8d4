#!/usr/bin/env bash
# A one-node SLURM on this Debian machine, for rehearsing the cluster path (`make slurm-rehearsal`,
# docs/paper-scale.md): Debian's slurm-wlm (22.05) and munge, the controller and one compute daemon on
# localhost with this machine's CPUs and 90% of its memory. As root; run again, it changes nothing.
#
# No accounting database: Snakemake's SLURM executor asks squeue for job states (its
# --slurm-status-command squeue, which profiles/slurm_local gives), and MinJobAge keeps a finished
# job in squeue's and scontrol's answers for an hour, past the executor's polling and the rehearsal. Without
# cgroups (containers rarely grant them), jobs are tracked by their processes (proctrack/linuxproc)
# and a job whose resident memory passes its request is killed by jobacct_gather's OverMemoryKill.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "error: profiles/slurm_local/up.sh: run as root (it installs packages and starts daemons)" >&2; exit 2; }
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

# munge: the key that signs every message between the daemons and the commands
if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --force
fi
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge && chown munge:munge /run/munge
pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged

host=$(hostname -s)
cpus=$(nproc)
memory_mb=$(awk '/^MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat >/etc/slurm/slurm.conf <<CONF
ClusterName=rehearsal
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
AuthType=auth/munge
MpiDefault=none
SwitchType=switch/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=2
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/none
MinJobAge=3600
KillWait=5
ReturnToService=2
NodeName=$host CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=rehearsal Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

if pgrep -x slurmctld >/dev/null; then
    scontrol reconfigure  # running already: it rereads the file just written
else
    /usr/sbin/slurmctld
fi
pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
for _ in $(seq 30); do
    sinfo --noheader --states=idle,mixed,allocated 2>/dev/null | grep -q . && break
    sleep 1
done
sinfo --noheader --states=idle,mixed,allocated | grep -q . \
    || { echo "error: profiles/slurm_local/up.sh: the node did not come up; see /var/log/slurm/slurmd.log and slurmctld.log" >&2; exit 1; }
echo "SLURM $(sinfo --version | cut -d' ' -f2) up: node $host, $cpus CPUs, $memory_mb MB, partition rehearsal"
