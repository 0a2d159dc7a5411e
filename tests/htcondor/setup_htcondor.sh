#!/usr/bin/env bash
# Start a single-node HTCondor pool on this machine, for mlprof's HTCondor tests.
#
#   bash tests/htcondor/setup_htcondor.sh        # as root; idempotent
#
# 1. HTCondor itself. An HTCondor that is already installed (condor_master on PATH) is used as
#    it is. Otherwise `apt-get install htcondor` (or `condor`) is tried. Debian 12 (bookworm)
#    has neither (HTCondor left Debian after buster and came back in trixie), so the fallback
#    takes Debian 13's `condor` package and the libraries it links to from Debian's own archive
#    with apt (a private apt configuration under /var/cache/mlprof-htcondor: the system's apt
#    sources, package lists and dpkg database are not touched), unpacks them into
#    /opt/mlprof-htcondor and points the ELF interpreter and RPATH of its programs at the
#    unpacked trixie glibc with `patchelf` (from bookworm). The programs are linked into
#    /usr/local/bin and /usr/local/sbin. MLP_HTCONDOR_NO_TRIXIE=1 disables this fallback.
# 2. A personal pool on 127.0.0.1 (`use ROLE: Personal`: collector, negotiator, schedd, startd
#    in one condor_master): one partitionable slot of NUM_CPUS=2, host-based security on the
#    loopback interface only, negotiation every few seconds. The configuration goes into
#    /etc/condor/config.d/99-mlprof-personal.config (and, for the fallback, a minimal
#    /etc/condor/condor_config that points at /opt/mlprof-htcondor); state and logs go to
#    /var/lib/mlprof-htcondor. Its own ports (shared port, an ephemeral collector port): a Slurm
#    on the same machine is not affected.
# 3. A user to submit with. HTCondor never runs a job as root (the schedd refuses the owner
#    "root"), so the tests submit as an ordinary user, as on a real cluster: MLP_HTCONDOR_USER
#    (default: mlprof) is created if missing, and must be able to read this checkout and its
#    .venv.
# 4. condor_master is started (or restarted when the configuration changed), and the script
#    waits until `condor_status` shows the slot and `condor_q` answers.
#
# Exits non-zero with a one-line reason ("setup_htcondor: ..."): 2 when HTCondor cannot be
# installed here (not root, no apt-get, no package to be had), 1 for any other failure.
#
# Variables: MLP_HTCONDOR_USER (default: mlprof), MLP_HTCONDOR_CPUS (default: 2),
# MLP_HTCONDOR_TIMEOUT (seconds to wait for the pool, default: 90), MLP_HTCONDOR_NO_TRIXIE=1,
# MLP_HTCONDOR_FORCE=1 (overwrite an /etc/condor/condor_config that this script did not write).

set -uo pipefail

JOB_USER="${MLP_HTCONDOR_USER:-mlprof}"
CPUS="${MLP_HTCONDOR_CPUS:-2}"
WAIT="${MLP_HTCONDOR_TIMEOUT:-90}"
PREFIX=/opt/mlprof-htcondor
STATE=/var/lib/mlprof-htcondor
CACHE=/var/cache/mlprof-htcondor
CONF_DIR=/etc/condor
MAIN_CONF="${CONF_DIR}/condor_config"
CONF="${CONF_DIR}/config.d/99-mlprof-personal.config"
MARKER="# written by mlprof tests/htcondor/setup_htcondor.sh"
PIDFILE="${STATE}/condor_master.pid"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# the fallback links its programs there
export PATH="/usr/local/sbin:/usr/local/bin:${PATH}"

die() {
    echo "setup_htcondor: $*" >&2
    exit 1
}

cannot_install() {
    echo "setup_htcondor: $*" >&2
    exit 2
}

log() {
    echo "setup_htcondor: $*"
}

master_pid() {
    # pid of the condor_master started by this script, if it runs
    local pid
    [ -f "${PIDFILE}" ] || return 1
    pid="$(cat "${PIDFILE}" 2>/dev/null)"
    [ -n "${pid}" ] && kill -0 "${pid}" 2>/dev/null \
        && [ "$(cat "/proc/${pid}/comm" 2>/dev/null)" = "condor_master" ] && echo "${pid}"
}

pool_ready() {
    # the slot is in the collector and the schedd answers
    local slots
    slots="$(timeout 20 condor_status -af Name 2>/dev/null | grep -c .)"
    [ "${slots:-0}" -ge 1 ] && timeout 20 condor_q -allusers -totals >/dev/null 2>&1
}

our_config() {
    # the configuration is ours and up to date
    [ -f "${CONF}" ] && cmp -s <(personal_config) "${CONF}"
}

personal_config() {
    # the pool's configuration (config.d file)
    cat <<EOF
${MARKER}
# a personal single-node pool on 127.0.0.1 for mlprof's tests
use ROLE: Personal
use SECURITY: HOST_BASED
use POLICY: ALWAYS_RUN_JOBS
use FEATURE: PartitionableSlot
CONDOR_HOST = 127.0.0.1
NETWORK_INTERFACE = 127.0.0.1
NUM_CPUS = ${CPUS}
# no cgroups, no pid namespaces (containers)
BASE_CGROUP =
USE_PID_NAMESPACES = false
# jobs see the real /tmp and /var/tmp (the default gives each job its own): the tests' store
# is in /tmp
MOUNT_UNDER_SCRATCH =
# match and report quickly: jobs here take seconds
NEGOTIATOR_INTERVAL = 2
NEGOTIATOR_CYCLE_DELAY = 1
NEGOTIATOR_MIN_INTERVAL = 1
SCHEDD_INTERVAL = 5
UPDATE_INTERVAL = 5
STARTER_UPDATE_INTERVAL = 5
SHADOW_QUEUE_UPDATE_INTERVAL = 5
EOF
}

# ---- 0. already up? (idempotent: nothing to do) ---------------------------------------------
if command -v condor_status >/dev/null 2>&1 && our_config && id "${JOB_USER}" >/dev/null 2>&1 \
        && pool_ready; then
    log "htcondor is already running: $(condor_status -af Name | tr '\n' ' ')(${CONF})"
    exit 0
fi

[ "$(id -u)" = "0" ] || cannot_install "must run as root to install and start htcondor (uid $(id -u))"
[ "${CPUS}" -ge 1 ] 2>/dev/null || die "MLP_HTCONDOR_CPUS must be a positive integer, got '${CPUS}'"

# ---- 1. HTCondor ------------------------------------------------------------------------------
NEEDED=(condor_master condor_submit condor_q condor_rm condor_history condor_status)

have_condor() {
    local exe
    for exe in "${NEEDED[@]}"; do
        command -v "${exe}" >/dev/null 2>&1 || return 1
    done
}

from_prefix=0
if [ -x "${PREFIX}/usr/sbin/condor_master" ] && [ -f "${PREFIX}/.mlprof-htcondor" ]; then
    from_prefix=1
fi

apt_log="$(mktemp /tmp/setup_htcondor_apt.XXXXXX)"

install_from_apt() {
    # Debian's own package of this release, if it has one
    command -v apt-get >/dev/null 2>&1 || return 1
    export DEBIAN_FRONTEND=noninteractive
    local pkg
    for pkg in htcondor condor; do
        if apt-cache show "${pkg}" >/dev/null 2>&1 \
                && apt-get install -y -q "${pkg}" >>"${apt_log}" 2>&1; then
            return 0
        fi
    done
    return 1
}

debian_mirror() {
    # the Debian mirror that the system's apt uses (deb.debian.org by default)
    local uri
    uri="$(grep -hoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list \
        /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | head -n 1 | tr -d ' ')"
    echo "${uri:-http://deb.debian.org/debian}"
}

install_from_trixie() {
    # Debian 13's condor and the libraries it needs, unpacked into ${PREFIX}
    local suite=trixie mirror work opts pkgs stage f exe missing
    command -v apt-get >/dev/null 2>&1 || { log "no apt-get"; return 1; }
    if ! command -v patchelf >/dev/null 2>&1; then
        log "installing patchelf"
        apt-get install -y -q --no-install-recommends patchelf >>"${apt_log}" 2>&1 \
            || { apt-get update -q >>"${apt_log}" 2>&1 \
                 && apt-get install -y -q --no-install-recommends patchelf >>"${apt_log}" 2>&1; } \
            || { log "cannot install patchelf"; return 1; }
    fi
    mirror="$(debian_mirror)"
    work="${CACHE}/apt"
    mkdir -p "${work}/lists/partial" "${work}/archives/partial" "${work}/parts" "${work}/debs" \
        || return 1
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror} ${suite} main" \
        > "${work}/sources.list"
    opts=(-o "Dir::Etc::SourceList=${work}/sources.list" -o "Dir::Etc::SourceParts=${work}/parts"
          -o "Dir::State::Lists=${work}/lists" -o "Dir::Cache=${work}"
          -o "Dir::Cache::archives=${work}/archives" -o "Dir::State::status=/dev/null"
          -o "APT::Sandbox::User=root")
    log "fetching Debian ${suite}'s condor package list from ${mirror} (private apt state in ${work})"
    apt-get "${opts[@]}" update -q >>"${apt_log}" 2>&1 || { log "apt-get update (${suite}) failed"; return 1; }
    apt-cache "${opts[@]}" show condor >/dev/null 2>&1 || { log "${suite} has no condor package"; return 1; }
    # condor and the shared libraries in its dependency closure (no perl, python, pam, ...)
    pkgs=(condor zlib1g $(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests \
            --no-conflicts --no-breaks --no-replaces --no-enhances condor 2>/dev/null \
        | grep -E '^lib' | sort -u \
        | grep -vE '^libjs-|perl|python|^libpam|semanage|debian-installer|debconfclient|newt|slang|textwrap|readline|ncurses|tinfo|gdbm|^libdb5'))
    rm -f "${work}/debs/"*.deb
    log "downloading ${#pkgs[@]} packages of ${suite}"
    (cd "${work}/debs" && apt-get "${opts[@]}" download "${pkgs[@]}" >>"${apt_log}" 2>&1) \
        || { log "apt-get download failed"; return 1; }
    stage="$(mktemp -d "${PREFIX}.stage.XXXXXX")" || return 1
    for f in "${work}/debs/"*.deb; do
        dpkg-deb -x "${f}" "${stage}" || { rm -rf "${stage}"; log "cannot unpack ${f}"; return 1; }
    done
    # the programs use the unpacked (trixie) glibc and libraries, never the system's
    local ld="${PREFIX}/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
    local rpath="${PREFIX}/usr/lib:${PREFIX}/usr/lib/x86_64-linux-gnu"
    [ -e "${stage}/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" ] \
        || { rm -rf "${stage}"; log "no ld-linux-x86-64.so.2 in the unpacked libc6"; return 1; }
    for f in "${stage}"/usr/bin/* "${stage}"/usr/sbin/* "${stage}"/usr/libexec/condor/*; do
        [ -f "${f}" ] && [ ! -L "${f}" ] || continue
        readelf -l "${f}" 2>/dev/null | grep -q 'program interpreter' || continue
        patchelf --set-interpreter "${ld}" --force-rpath --set-rpath "${rpath}" "${f}" \
            || { rm -rf "${stage}"; log "patchelf failed on ${f}"; return 1; }
    done
    echo "condor from Debian ${suite} (${mirror}), unpacked by ${BASH_SOURCE[0]}" \
        > "${stage}/.mlprof-htcondor"
    rm -rf "${PREFIX}.old"
    [ -e "${PREFIX}" ] && mv "${PREFIX}" "${PREFIX}.old"
    mv "${stage}" "${PREFIX}" || { log "cannot move ${stage} to ${PREFIX}"; return 1; }
    rm -rf "${PREFIX}.old"
    # every library of the daemons resolves inside ${PREFIX}
    for exe in sbin/condor_master sbin/condor_schedd sbin/condor_startd sbin/condor_starter \
               sbin/condor_shadow bin/condor_submit bin/condor_q; do
        missing="$(LD_TRACE_LOADED_OBJECTS=1 "${PREFIX}/usr/${exe}" 2>&1 | grep -E 'not found')"
        [ -z "${missing}" ] || { log "${exe}: ${missing}"; rm -rf "${PREFIX}"; return 1; }
    done
    "${PREFIX}/usr/sbin/condor_master" -version >/dev/null 2>&1 \
        || { log "${PREFIX}/usr/sbin/condor_master does not run"; rm -rf "${PREFIX}"; return 1; }
    return 0
}

link_prefix() {
    # condor_* of ${PREFIX} into /usr/local/{bin,sbin} (never over a file that is not ours)
    local f dest
    mkdir -p /usr/local/bin /usr/local/sbin
    for f in "${PREFIX}"/usr/bin/condor_* "${PREFIX}"/usr/sbin/condor_*; do
        [ -f "${f}" ] || continue
        case "${f}" in */sbin/*) dest="/usr/local/sbin/$(basename "${f}")" ;;
                       *) dest="/usr/local/bin/$(basename "${f}")" ;; esac
        if [ -e "${dest}" ] && [ ! -L "${dest}" ]; then
            continue
        fi
        ln -sfn "${f}" "${dest}"
    done
}

if [ "${from_prefix}" = "1" ]; then
    link_prefix
elif ! have_condor; then
    log "installing htcondor (missing: one of ${NEEDED[*]})"
    if ! install_from_apt; then
        log "apt-get install htcondor failed, running apt-get update first"
        apt-get update -q >>"${apt_log}" 2>&1 || true
        if ! install_from_apt; then
            if [ "${MLP_HTCONDOR_NO_TRIXIE:-0}" = "1" ]; then
                cannot_install "no htcondor or condor package for $(. /etc/os-release && echo "${PRETTY_NAME}") (and MLP_HTCONDOR_NO_TRIXIE=1; log: ${apt_log})"
            fi
            log "this release has no htcondor package: using Debian trixie's condor in ${PREFIX}"
            install_from_trixie \
                || { tail -n 5 "${apt_log}" >&2; cannot_install "no htcondor package for $(. /etc/os-release && echo "${PRETTY_NAME}"), and trixie's condor could not be set up in ${PREFIX} (log: ${apt_log})"; }
            from_prefix=1
            link_prefix
        fi
    fi
fi
hash -r
have_condor || cannot_install "still missing one of ${NEEDED[*]} after installing htcondor"
log "using $(condor_master -version 2>/dev/null | head -n 1)"

# ---- 2. configuration -------------------------------------------------------------------------
mkdir -p "${CONF_DIR}/config.d" "${STATE}" || die "cannot create ${CONF_DIR}/config.d or ${STATE}"
conf_changed=0

write_if_changed() {
    # write stdin to $1 when its content differs; sets conf_changed
    local target="$1" new
    new="$(mktemp "${target}.XXXXXX")" || die "cannot write next to ${target}"
    cat > "${new}"
    chmod 0644 "${new}"
    if [ -f "${target}" ] && cmp -s "${new}" "${target}"; then
        rm -f "${new}"
    else
        mv -f "${new}" "${target}" || die "cannot write ${target}"
        conf_changed=1
        log "wrote ${target}"
    fi
}

if [ "${from_prefix}" = "1" ]; then
    if [ -f "${MAIN_CONF}" ] && ! grep -qF "${MARKER}" "${MAIN_CONF}" \
            && [ "${MLP_HTCONDOR_FORCE:-0}" != "1" ]; then
        die "${MAIN_CONF} exists and was not written by this script; set MLP_HTCONDOR_FORCE=1 to overwrite it"
    fi
    write_if_changed "${MAIN_CONF}" <<EOF
${MARKER}
# HTCondor unpacked into ${PREFIX} (Debian trixie's condor package); state in ${STATE}
RELEASE_DIR = ${PREFIX}/usr
BIN = \$(RELEASE_DIR)/bin
SBIN = \$(RELEASE_DIR)/sbin
LIB = \$(RELEASE_DIR)/lib/condor
LIBEXEC = \$(RELEASE_DIR)/libexec/condor
SHARE = \$(RELEASE_DIR)/share/condor
INCLUDE = \$(RELEASE_DIR)/include/condor
ETC = ${CONF_DIR}
LOCAL_DIR = ${STATE}
RUN = \$(LOCAL_DIR)/run
LOG = \$(LOCAL_DIR)/log
LOCK = \$(LOCAL_DIR)/lock
SPOOL = \$(LOCAL_DIR)/spool
EXECUTE = \$(LOCAL_DIR)/execute
CRED_STORE_DIR = \$(LOCAL_DIR)/cred_dir
# no condor user: the daemons stay root (jobs still run as their owner)
CONDOR_IDS = 0.0
LOCAL_CONFIG_FILE =
LOCAL_CONFIG_DIR = ${CONF_DIR}/config.d
EOF
fi

write_if_changed "${CONF}" < <(personal_config)

mkdir -p "${STATE}"/{run,log,lock,spool,execute,cred_dir} || die "cannot create ${STATE}"
chmod 0755 "${STATE}" "${STATE}/execute"
condor_config_val -dump >/dev/null 2>&1 || die "condor_config_val cannot read the configuration"

# ---- 3. the submitting user -------------------------------------------------------------------
if ! id "${JOB_USER}" >/dev/null 2>&1; then
    log "creating user ${JOB_USER} (HTCondor does not run jobs as root)"
    useradd --system --user-group --create-home --home-dir "${STATE}/home/${JOB_USER}" \
        --shell /bin/bash "${JOB_USER}" || die "useradd ${JOB_USER} failed"
fi
[ "$(id -u "${JOB_USER}")" != "0" ] || die "MLP_HTCONDOR_USER=${JOB_USER} is root; HTCondor refuses jobs of root"
as_user() {
    if command -v runuser >/dev/null 2>&1; then
        runuser -u "${JOB_USER}" -- "$@"
    else
        su -s /bin/sh "${JOB_USER}" -c "$(printf '%q ' "$@")"
    fi
}
grant_search() {
    # let JOB_USER search (x, not list) each directory above $1 that it cannot search yet, with
    # a POSIX ACL entry for that user alone (e.g. /root, when the venv's python is in ~/.pyenv)
    local path="$1" dir=""
    local IFS=/
    for part in ${path#/}; do
        [ -d "${dir}/${part}" ] || break
        dir="${dir}/${part}"
        as_user test -x "${dir}" && continue
        [ "${MLP_HTCONDOR_NO_ACL:-0}" = "1" ] \
            && die "user ${JOB_USER} cannot search ${dir} (needed for ${path}; MLP_HTCONDOR_NO_ACL=1)"
        if ! command -v setfacl >/dev/null 2>&1; then
            apt-get install -y -q --no-install-recommends acl >>"${apt_log}" 2>&1 \
                || die "user ${JOB_USER} cannot search ${dir}, and the acl package (setfacl) cannot be installed"
        fi
        setfacl -m "u:${JOB_USER}:x" "${dir}" || die "setfacl -m u:${JOB_USER}:x ${dir} failed"
        echo "${dir}" >> "${STATE}/acl-grants.txt"
        log "granted ${JOB_USER} search (x) permission on ${dir} (ACL; for ${path})"
    done
}
grant_search "${REPO}/setup.sh"
as_user test -r "${REPO}/setup.sh" || die "user ${JOB_USER} cannot read ${REPO}/setup.sh"
if [ -x "${REPO}/.venv/bin/python" ]; then
    grant_search "$(readlink -f "${REPO}/.venv/bin/python")"
    as_user "${REPO}/.venv/bin/python" -c "import law, mlprof" 2>/dev/null \
        || die "user ${JOB_USER} cannot import law and mlprof from ${REPO}/.venv"
fi

# ---- 4. the daemons ---------------------------------------------------------------------------
external=0
if pid="$(master_pid)"; then
    if [ "${conf_changed}" = "1" ]; then
        log "stopping condor_master (pid ${pid}) to apply the new configuration"
        kill -TERM "${pid}" 2>/dev/null
        for _ in $(seq 300); do
            kill -0 "${pid}" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "${pid}" 2>/dev/null && die "condor_master (pid ${pid}) did not stop within 30 s"
    fi
elif pgrep -x condor_master >/dev/null 2>&1; then
    # a condor_master that this script did not start (e.g. the htcondor service of a package)
    external=1
    if [ "${conf_changed}" = "1" ]; then
        log "restarting the running HTCondor (condor_restart) to apply the new configuration"
        condor_restart >/dev/null 2>&1 || die "condor_restart failed"
        sleep 2
    fi
fi
if [ "${external}" = "0" ] && ! master_pid >/dev/null; then
    master_log="$(condor_config_val LOG 2>/dev/null)/MasterLog"
    log "starting condor_master (log: ${master_log})"
    condor_master -pidfile "${PIDFILE}" || die "condor_master failed to start (see ${master_log})"
fi

for _ in $(seq $(( WAIT * 2 ))); do
    if pool_ready; then
        log "htcondor is up: $(condor_status -af Name Cpus | tr '\n' ' ')(submit as ${JOB_USER})"
        exit 0
    fi
    master_pid >/dev/null || [ "${external}" = "1" ] || break
    sleep 0.5
done
log_dir="$(condor_config_val LOG 2>/dev/null)"
tail -n 5 "${log_dir}/MasterLog" >&2 2>/dev/null
die "the pool is not ready after ${WAIT} s (condor_status shows no slot or condor_q does not answer; logs in ${log_dir})"
