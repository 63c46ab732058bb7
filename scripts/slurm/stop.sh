#!/usr/bin/env bash
# Stop the single-node cluster that scripts/slurm/start.sh started: slurmd,
# slurmctld and (only if start.sh launched it) munged, each by the PID it
# recorded under $POVSTIM_SLURM_DIR (default /tmp/povstim-slurm). Safe to run
# when nothing is running. Leaves /etc/slurm/*.conf for post-mortems.
set -uo pipefail

STATE="${POVSTIM_SLURM_DIR:-/tmp/povstim-slurm}"

stop_pid_file() {
    local name=$1 file=$2 pid
    [[ -f "$file" ]] || return 0
    pid=$(cat "$file")
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            echo "slurm/stop.sh: $name (pid $pid) ignored SIGTERM for 10 s; sending SIGKILL" >&2
            kill -KILL "$pid" 2>/dev/null
        fi
        echo "slurm/stop.sh: stopped $name (pid $pid)"
    fi
    rm -f "$file"
}

# Jobs first, so no slurmstepd outlives its slurmd.
if [[ -f "$STATE/slurmctld.pid" ]] && kill -0 "$(cat "$STATE/slurmctld.pid")" 2>/dev/null; then
    scancel --quiet --full --partition="${POVSTIM_SLURM_PARTITION:-main}" 2>/dev/null || true
fi
stop_pid_file slurmd "$STATE/slurmd.pid"
stop_pid_file slurmctld "$STATE/slurmctld.pid"
stop_pid_file munged "$STATE/munged.pid"
exit 0
