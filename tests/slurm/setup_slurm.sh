#!/usr/bin/env bash
# Start a single-node Slurm cluster on this machine, for mlprof's Slurm tests.
#
#   bash tests/slurm/setup_slurm.sh        # as root; idempotent
#
# Installs Debian's `slurm-wlm` and `munge` if missing, creates a munge key, starts munged,
# writes /etc/slurm/slurm.conf for this host (one node: CPUs from nproc, RealMemory from
# /proc/meminfo; no accounting, no cgroups: proctrack/linuxproc, task/none), starts slurmctld
# and slurmd and waits until `sinfo` shows the node idle. Running it again when the cluster is
# up does nothing. Exits non-zero with a one-line reason ("setup_slurm: ...") when it cannot:
# 2 when slurm cannot be installed here (not root, no apt-get, packages not available), 1 for
# any other failure (a daemon that does not start, a node that does not come up).
#
# Without accounting `sacct` does not work: law must query jobs with `squeue --states=all`
# (law.cfg: [job] slurm_cmd_squeue), and MinJobAge keeps finished jobs visible to squeue.
#
# Variables: MLP_SLURM_PARTITION (default: mlprof), MLP_SLURM_TIMEOUT (seconds to wait for the
# node, default: 60), MLP_SLURM_FORCE=1 (overwrite a slurm.conf that this script did not write).

set -uo pipefail

PARTITION="${MLP_SLURM_PARTITION:-mlprof}"
WAIT="${MLP_SLURM_TIMEOUT:-60}"
CONF_DIR=/etc/slurm
CONF="${CONF_DIR}/slurm.conf"
MARKER="# written by mlprof tests/slurm/setup_slurm.sh"
LOG_DIR=/var/log/slurm
STATE_DIR=/var/lib/slurm

die() {
    echo "setup_slurm: $*" >&2
    exit 1
}

cannot_install() {
    echo "setup_slurm: $*" >&2
    exit 2
}

log() {
    echo "setup_slurm: $*"
}

node_state() {
    # the state of our node as sinfo reports it ("idle", "mix", "down*", ...), empty if unknown
    timeout 10 sinfo --noheader --nodes "${NODE}" --format "%T" 2>/dev/null | head -n 1 | tr -d ' '
}

NODE="$(hostname -s)" || die "cannot determine the host name (hostname -s)"
[ -n "${NODE}" ] || die "hostname -s printed nothing"

# 1. already up? (idempotent: nothing to do)
if command -v sinfo >/dev/null 2>&1 && [ -f "${CONF}" ] && grep -qF "${MARKER}" "${CONF}"; then
    case "$(node_state)" in
        idle|mix|mixed|alloc|allocated|completing)
            log "slurm is already running: node ${NODE} is $(node_state) (${CONF})"
            exit 0
            ;;
    esac
fi

[ "$(id -u)" = "0" ] || cannot_install "must run as root to install and start slurm (uid $(id -u))"

# 2. install the packages if missing
missing=()
for exe in sbatch squeue sinfo slurmctld slurmd munged munge; do
    command -v "${exe}" >/dev/null 2>&1 || missing+=("${exe}")
done
if [ "${#missing[@]}" != "0" ]; then
    command -v apt-get >/dev/null 2>&1 || cannot_install "missing ${missing[*]} and no apt-get to install slurm-wlm and munge"
    log "installing slurm-wlm and munge (missing: ${missing[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt_log="$(mktemp /tmp/setup_slurm_apt.XXXXXX)"
    apt_install() {
        apt-get install -y -q --no-install-recommends slurm-wlm munge >>"${apt_log}" 2>&1
    }
    if ! apt_install; then
        log "apt-get install failed, running apt-get update first"
        apt-get update -q >>"${apt_log}" 2>&1 || { tail -n 5 "${apt_log}" >&2; cannot_install "apt-get update failed (log: ${apt_log})"; }
        apt_install || { tail -n 5 "${apt_log}" >&2; cannot_install "apt-get install slurm-wlm munge failed (log: ${apt_log})"; }
    fi
    for exe in sbatch squeue sinfo slurmctld slurmd munged munge; do
        command -v "${exe}" >/dev/null 2>&1 || cannot_install "${exe} still missing after installing slurm-wlm and munge"
    done
fi

# 3. munge: key, directories, daemon
id munge >/dev/null 2>&1 || die "the munge user does not exist (is the munge package installed?)"
mkdir -p /etc/munge /var/lib/munge /var/log/munge /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --keyfile /etc/munge/munge.key --force >/dev/null \
            || die "mungekey could not create /etc/munge/munge.key"
    else
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none \
            || die "cannot write /etc/munge/munge.key"
    fi
fi
chown munge:munge /etc/munge /etc/munge/munge.key /var/lib/munge /var/log/munge /run/munge
chmod 0700 /etc/munge /var/log/munge
chmod 0400 /etc/munge/munge.key
chmod 0755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "starting munged"
    rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock /run/munge/munged.pid
    if command -v runuser >/dev/null 2>&1; then
        runuser -u munge -- munged || die "munged failed to start (see /var/log/munge/munged.log)"
    else
        su -s /bin/sh munge -c munged || die "munged failed to start (see /var/log/munge/munged.log)"
    fi
    for _ in $(seq 50); do
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
        sleep 0.1
    done
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 \
        || die "munge does not work after starting munged (see /var/log/munge/munged.log)"
fi

# 4. slurm.conf for this host
if [ -f "${CONF}" ] && ! grep -qF "${MARKER}" "${CONF}" && [ "${MLP_SLURM_FORCE:-0}" != "1" ]; then
    die "${CONF} exists and was not written by this script; set MLP_SLURM_FORCE=1 to overwrite it"
fi
cpus="$(nproc)" || die "nproc failed"
mem_kb="$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
[ -n "${mem_kb}" ] || die "cannot read MemTotal from /proc/meminfo"
# 90 % of the memory: slurmd drains a node that has less memory than configured
real_mem=$(( mem_kb / 1024 * 9 / 10 ))
mkdir -p "${CONF_DIR}" "${LOG_DIR}" "${STATE_DIR}/slurmctld" "${STATE_DIR}/slurmd"
new_conf="$(mktemp "${CONF_DIR}/.slurm.conf.XXXXXX")"
cat > "${new_conf}" <<EOF
${MARKER}
# a single-node cluster on localhost: no accounting, no cgroups
ClusterName=mlprof
SlurmctldHost=${NODE}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# without accounting, finished jobs are only visible to squeue for MinJobAge seconds
MinJobAge=3600
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=${STATE_DIR}/slurmctld
SlurmdSpoolDir=${STATE_DIR}/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=${LOG_DIR}/slurmctld.log
SlurmdLogFile=${LOG_DIR}/slurmd.log
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${real_mem} State=UNKNOWN
PartitionName=${PARTITION} Nodes=${NODE} Default=YES MaxTime=INFINITE State=UP
EOF
chmod 0644 "${new_conf}"
conf_changed=1
if [ -f "${CONF}" ] && cmp -s "${new_conf}" "${CONF}"; then
    conf_changed=0
    rm -f "${new_conf}"
else
    mv -f "${new_conf}" "${CONF}" || die "cannot write ${CONF}"
    log "wrote ${CONF} (node ${NODE}, ${cpus} CPUs, ${real_mem} MB, partition ${PARTITION})"
fi

# 5. the daemons: (re)start what is not running or runs with an old config
running() {
    # pid of daemon $1 if it runs (from its pid file), else nothing
    local pidfile="/run/$1.pid" pid
    [ -f "${pidfile}" ] || return 1
    pid="$(cat "${pidfile}" 2>/dev/null)"
    [ -n "${pid}" ] && kill -0 "${pid}" 2>/dev/null && [ "$(cat "/proc/${pid}/comm" 2>/dev/null)" = "$1" ] \
        && echo "${pid}"
}

stop() {
    local pid
    pid="$(running "$1")" || return 0
    log "stopping $1 (pid ${pid}) to apply the new configuration"
    kill "${pid}" 2>/dev/null
    for _ in $(seq 100); do
        kill -0 "${pid}" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -9 "${pid}" 2>/dev/null
}

if [ "${conf_changed}" = "1" ]; then
    stop slurmd
    stop slurmctld
fi
if ! running slurmctld >/dev/null; then
    log "starting slurmctld (log: ${LOG_DIR}/slurmctld.log)"
    # -c: clear the state saved by an earlier instance (jobs, node states)
    slurmctld -c -f "${CONF}" || die "slurmctld failed to start (see ${LOG_DIR}/slurmctld.log)"
fi
for _ in $(seq 50); do
    timeout 5 scontrol ping 2>/dev/null | grep -q "UP" && break
    sleep 0.2
done
timeout 5 scontrol ping 2>/dev/null | grep -q "UP" \
    || die "slurmctld does not answer (see ${LOG_DIR}/slurmctld.log)"
if ! running slurmd >/dev/null; then
    log "starting slurmd (log: ${LOG_DIR}/slurmd.log)"
    slurmd -f "${CONF}" || die "slurmd failed to start (see ${LOG_DIR}/slurmd.log)"
fi

# 6. wait for the node
state=""
for _ in $(seq $(( WAIT * 2 ))); do
    state="$(node_state)"
    case "${state}" in
        idle|mix|mixed|alloc|allocated|completing)
            log "slurm is up: node ${NODE} is ${state}, partition ${PARTITION}"
            exit 0
            ;;
        down*|drain*|fail*)
            # e.g. after a restart with a changed configuration
            scontrol update NodeName="${NODE}" State=RESUME >/dev/null 2>&1
            ;;
    esac
    sleep 0.5
done
reason="$(timeout 5 sinfo --noheader --nodes "${NODE}" --format "%E" 2>/dev/null | head -n 1)"
tail -n 5 "${LOG_DIR}/slurmd.log" >&2 2>/dev/null
die "node ${NODE} is not idle after ${WAIT} s (state: ${state:-unknown}, reason: ${reason:-none}; logs in ${LOG_DIR})"
