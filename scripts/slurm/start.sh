#!/usr/bin/env bash
# Start a single-node SLURM cluster on this machine (munged + slurmctld +
# slurmd) for the SLURM integration test (tests/test_slurm*.py).
#
#   scripts/slurm/start.sh            # state under /tmp/povstim-slurm
#   POVSTIM_SLURM_DIR=/x scripts/slurm/start.sh
#   scripts/slurm/stop.sh             # stops exactly what this started, by PID
#
# Needs root (it installs Debian's slurm-wlm when slurmctld is missing and
# runs the daemons as the munge/slurm users). Writes /etc/slurm/slurm.conf
# and gres.conf, marked as ours; it refuses to touch a slurm.conf it did not
# write, so it never clobbers a real cluster's configuration.
#
# The node has one fake GPU (gres gpu:1 backed by /dev/null) so rules that
# request `gpu` get scheduled exactly as on a GPU cluster. Job state lives in
# a fresh directory each start, so no job survives a restart.
# Exit status: 0 when `srun true` works, non-zero (with a reason) otherwise.
set -euo pipefail

STATE="${POVSTIM_SLURM_DIR:-/tmp/povstim-slurm}"
CONF_DIR=/etc/slurm
MARK="# written by povstim scripts/slurm/start.sh"
NODE=localhost
PARTITION="${POVSTIM_SLURM_PARTITION:-main}"

die() { echo "slurm/start.sh: $*" >&2; exit 1; }
alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

[[ $(id -u) -eq 0 ]] || die "must run as root (installs slurm-wlm, starts munged/slurmctld/slurmd)"

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "slurm/start.sh: installing slurm-wlm" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q slurm-wlm >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q slurm-wlm >/dev/null; } \
        || die "apt-get install slurm-wlm failed"
fi
for exe in munged slurmctld slurmd sbatch squeue srun scontrol; do
    command -v "$exe" >/dev/null || die "$exe not found after installing slurm-wlm"
done

if [[ -f "$STATE/slurmctld.pid" ]] && alive "$(cat "$STATE/slurmctld.pid")"; then
    die "a cluster from $STATE is already running (scripts/slurm/stop.sh stops it)"
fi
if [[ -f "$CONF_DIR/slurm.conf" ]] && ! grep -qF "$MARK" "$CONF_DIR/slurm.conf"; then
    die "$CONF_DIR/slurm.conf exists and was not written by this script; not touching it"
fi

# The state directory is wiped on every start: only ever one we created.
[[ "$STATE" == /?*/* ]] || die "POVSTIM_SLURM_DIR must be an absolute path below a top-level directory, got '$STATE'"
if [[ -d "$STATE" && -n "$(ls -A "$STATE")" ]] && ! grep -qsF "$MARK" "$STATE/slurm.conf"; then
    die "$STATE exists and is not a cluster state directory of this script; not wiping it"
fi
rm -rf "$STATE"
mkdir -p "$STATE/ctld" "$STATE/spool"
chown slurm:slurm "$STATE" "$STATE/ctld"
chmod 755 "$STATE"

# --- munge ---------------------------------------------------------------
[[ -s /etc/munge/munge.key ]] || { mungekey --create >/dev/null 2>&1 || create-munge-key -f >/dev/null; }
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge && chown munge:munge /run/munge && chmod 755 /run/munge
munge_pid=""
[[ -f /run/munge/munged.pid ]] && munge_pid=$(cat /run/munge/munged.pid)
if alive "$munge_pid"; then
    echo "slurm/start.sh: reusing running munged (pid $munge_pid); stop.sh will leave it" >&2
else
    runuser -u munge -- /usr/sbin/munged --force
    for _ in $(seq 50); do [[ -s /run/munge/munged.pid ]] && break; sleep 0.1; done
    munge_pid=$(cat /run/munge/munged.pid 2>/dev/null) || die "munged did not start"
    echo "$munge_pid" > "$STATE/munged.pid"    # ours: stop.sh stops it
fi
munge -n </dev/null | unmunge >/dev/null || die "munge round trip failed"

# --- slurm.conf ----------------------------------------------------------
cpus=$(nproc)
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 ))
real_mem=$(( mem_mb > 2048 ? mem_mb - 1024 : mem_mb ))   # leave room for the OS
cat > "$CONF_DIR/slurm.conf" <<EOF
$MARK
# Single-node test cluster; see docs/cluster.md. Regenerated on every start.
ClusterName=povstim
SlurmctldHost=localhost
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
# No accounting database: sacct has nothing to ask, so Snakemake must poll
# with squeue, which sees a finished job for MinJobAge seconds.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=300
InactiveLimit=0
KillWait=5
SlurmdTimeout=60
GresTypes=gpu
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$real_mem Gres=gpu:1 State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
cat > "$CONF_DIR/gres.conf" <<EOF
$MARK
# A fake GPU: slurmd needs a device file, or the node goes INVALID.
NodeName=$NODE Name=gpu File=/dev/null
EOF
cp "$CONF_DIR/slurm.conf" "$STATE/slurm.conf"

# --- daemons -------------------------------------------------------------
slurmctld || die "slurmctld failed to start; see $STATE/slurmctld.log"
slurmd -N "$NODE" || die "slurmd failed to start; see $STATE/slurmd.log"

state=""
for _ in $(seq 60); do
    state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n1 || true)
    [[ "$state" == idle* ]] && break
    if [[ "$state" == down* || "$state" == drain* || "$state" == unk* ]]; then
        scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
    fi
    sleep 0.5
done
[[ "$state" == idle* ]] || die "node $NODE is '$state', not idle; see $STATE/slurmctld.log and $STATE/slurmd.log"
timeout 60 srun --quiet -N1 -n1 -t 1 true || die "srun true failed on the new cluster"
echo "slurm/start.sh: cluster up: partition $PARTITION, node $NODE ($cpus CPUs, $real_mem MB, gres gpu:1); state in $STATE"
