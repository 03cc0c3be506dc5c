#!/bin/bash
# Audit Slurm nodes with RigCheck: one JSON report per node, $AUDIT_DIR/<hostname>.json, on a
# filesystem every node and the login node share. Then: rigcheck fleet "$AUDIT_DIR".
#
# Every node of a partition, one array task per node (works while nodes are busy: each task waits
# for its own node):
#   packaging/slurm/audit-array.sh --submit gpu        # PARTITION; no argument: every node
# Or nodes you allocate at once, one task per node:
#   sbatch --nodes=8 --partition=gpu packaging/slurm/audit-array.sh
#
# Settings from the environment: AUDIT_DIR (default $HOME/rigcheck-audits), RIGCHECK (default rigcheck).
#SBATCH --job-name=rigcheck-audit
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=1
#SBATCH --mem=1G
#SBATCH --time=00:05:00
#SBATCH --output=rigcheck-audit-%A_%a.log
set -euo pipefail

AUDIT_DIR=${AUDIT_DIR:-$HOME/rigcheck-audits}
RIGCHECK=${RIGCHECK:-rigcheck}
export AUDIT_DIR RIGCHECK

if [[ ${1:-} == --submit ]]; then
    # A job array cannot place its tasks on distinct nodes by itself, so each task is its own
    # one-element array with --nodelist: same job name, one log per node, squeue shows them together.
    mkdir -p "$AUDIT_DIR"
    mapfile -t nodes < <(sinfo --noheader --Node --format=%N ${2:+--partition="$2"} | sort -u)
    for i in "${!nodes[@]}"; do
        sbatch --array="$i" --nodelist="${nodes[$i]}" --nodes=1 --parsable "$0" >/dev/null
    done
    echo "submitted ${#nodes[@]} audits (--array=0-$((${#nodes[@]} - 1))); reports go to $AUDIT_DIR"
    exit 0
fi

mkdir -p "$AUDIT_DIR"
# shellcheck disable=SC2016  # $(hostname) is expanded on each node, not here
srun --ntasks-per-node=1 --ntasks="${SLURM_JOB_NUM_NODES:-1}" \
    bash -c '"$RIGCHECK" audit --format json --output "$AUDIT_DIR/$(hostname).json"'
