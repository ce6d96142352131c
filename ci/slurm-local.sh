#!/usr/bin/env bash
# A real, single-host Slurm with two nodes (n1, n2), for testing ci/slurm-nightly.sbatch in CI.
#
#     source <(bash ci/slurm-local.sh up)      # prints 'export SLURM_CONF=...' once sinfo shows idle
#     sbatch -N2 ci/slurm-nightly.sbatch ...
#     bash ci/slurm-local.sh down              # stops what 'up' started, by pid
#
# Everything it starts lives in one folder ($DISTBENCH_SLURM_DIR, default /tmp/distbench-slurm):
# slurm.conf, the munge key and socket, spool, state, logs and pid files. Nothing in /etc is
# touched except two /etc/hosts entries (n1 and n2 -> 127.0.0.1), which 'down' removes. Debian's
# slurm-wlm and munge are installed with apt when missing (root, or passwordless sudo). Takes
# about a minute the first time (the apt install), seconds after that.
set -euo pipefail

dir=${DISTBENCH_SLURM_DIR:-/tmp/distbench-slurm}
cpus=${DISTBENCH_SLURM_CPUS:-1}
hosts_tag="# distbench slurm-local"

if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo -n); fi

log() { echo "slurm-local: $*" >&2; }

install_packages() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then
        return
    fi
    log "installing slurm-wlm and munge (apt)"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq slurm-wlm munge >/dev/null
}

write_conf() {
    mkdir -p "$dir"/{spool,state,log,run}
    local user
    user=$(id -un)
    cat >"$dir/slurm.conf" <<EOF
ClusterName=distbench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/run/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
NodeName=n1 NodeHostname=$(hostname) NodeAddr=127.0.0.1 Port=16821 CPUs=$cpus State=UNKNOWN
NodeName=n2 NodeHostname=$(hostname) NodeAddr=127.0.0.1 Port=16822 CPUs=$cpus State=UNKNOWN
PartitionName=cpu Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    mkdir -p "$dir"/spool/n1 "$dir"/spool/n2
    # No cgroups: proctrack/linuxproc and task/none track processes without them (containers).
    printf 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\n' >"$dir/cgroup.conf"
}

add_hosts() {
    grep -q "$hosts_tag" /etc/hosts && return
    printf '127.0.0.1 n1 n2 %s\n' "$hosts_tag" | "${sudo[@]}" tee -a /etc/hosts >/dev/null
}

remove_hosts() {
    grep -q "$hosts_tag" /etc/hosts || return 0
    # /etc/hosts may be a bind mount (containers): rewrite it in place, never replace the file.
    local kept
    kept=$(grep -v "$hosts_tag" /etc/hosts)
    printf '%s\n' "$kept" | "${sudo[@]}" tee /etc/hosts >/dev/null
}

start_munge() {
    if [ ! -f "$dir/munge.key" ]; then
        head -c 1024 /dev/urandom >"$dir/munge.key"
        chmod 400 "$dir/munge.key"
    fi
    munged --force --key-file="$dir/munge.key" --socket="$dir/run/munge.socket" \
        --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/run/munge.seed"
}

up() {
    install_packages
    if [ -f "$dir/run/slurmctld.pid" ] && kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null; then
        log "already up in $dir"
    else
        write_conf
        add_hosts
        start_munge
        export SLURM_CONF=$dir/slurm.conf
        local daemon
        for daemon in "slurmctld" "slurmd -N n1" "slurmd -N n2"; do
            # shellcheck disable=SC2086
            if ! ${daemon} -f "$SLURM_CONF"; then
                log "${daemon} did not start; its log:"
                tail -n 20 "$dir"/log/*.log >&2 || true
                exit 1
            fi
        done
    fi
    export SLURM_CONF=$dir/slurm.conf
    local waited=0
    until [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c idle)" = 2 ]; do
        if ((waited >= 60)); then
            log "the nodes did not become idle in 60 s:"
            sinfo -N >&2 || true
            tail -n 20 "$dir"/log/*.log >&2 || true
            exit 1
        fi
        sleep 1
        waited=$((waited + 1))
    done
    log "n1 and n2 are idle ($((waited)) s); SLURM_CONF=$SLURM_CONF"
    echo "export SLURM_CONF=$SLURM_CONF"
}

down() {
    local pidfile pid
    for pidfile in "$dir"/run/slurmd-n1.pid "$dir"/run/slurmd-n2.pid "$dir"/run/slurmctld.pid \
        "$dir"/run/munged.pid; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$pidfile"
    done
    remove_hosts
    log "stopped; state kept in $dir (delete it for a fresh cluster)"
}

case ${1:-} in
up) up ;;
down) down ;;
*)
    echo "usage: bash ci/slurm-local.sh up|down" >&2
    exit 2
    ;;
esac
