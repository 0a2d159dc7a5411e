#!/usr/bin/env bash
# Set up mlprof in this shell: `source setup.sh`.
#
# First use: creates .venv, installs mlprof (editable, with the extras below; uv or pip, a progress
# line at least every 10 s: tools/install.py) and
# generates the larger example models. Later uses only activate the venv and refresh the law
# task index (well under 2 s), unless pyproject.toml changed, which triggers a reinstall.
# `bash setup.sh --check-install` changes nothing: exit code 0 when that install is current,
# else one line naming the stamp and exit code 1.
#
# Variables (set them before sourcing to override the defaults):
#   MLP_BASE         this checkout (always derived from the location of this file)
#   MLP_STORE        where task outputs go (default: $MLP_BASE/data/store)
#   MLP_VENV         the virtual environment (default: $MLP_BASE/.venv)
#   MLP_EXTRAS       pip extras to install (default: dev,style,torch,tf,openvino,genai; torch
#                    brings PyTorch, torchvision and the model corpus' requirements from
#                    models/requirements.txt; tf TensorFlow (CPU), openvino OpenVINO, genai
#                    onnxruntime-genai for generation on ONNX Runtime)
#   MLP_INSTALLER    auto (default: uv, installed into the venv by pip when not on PATH; pip when
#                    uv cannot be installed or fails), uv or pip (docs/configuration.md)
#   MLP_TIMEOUT      per-measurement timeout in seconds (default: 600, read by the harness)
#   LAW_HOME, LAW_CONFIG_FILE   law's home (default: $MLP_BASE/.law) and config (law.cfg)

_mlp_setup() {
    local this_file
    if [ -n "${BASH_SOURCE[0]:-}" ]; then
        this_file="${BASH_SOURCE[0]}"
    elif [ -n "${ZSH_VERSION:-}" ]; then
        # shellcheck disable=SC2296
        this_file="${(%):-%x}"
    else
        this_file="$0"
    fi
    MLP_BASE="$(cd "$(dirname "${this_file}")" && pwd)" || return 1
    export MLP_BASE
    export MLP_STORE="${MLP_STORE:-${MLP_BASE}/data/store}"
    export MLP_VENV="${MLP_VENV:-${MLP_BASE}/.venv}"
    export LAW_HOME="${LAW_HOME:-${MLP_BASE}/.law}"
    export LAW_CONFIG_FILE="${LAW_CONFIG_FILE:-${MLP_BASE}/law.cfg}"
    local extras="${MLP_EXTRAS:-dev,style,torch,tf,openvino,genai}"

    # what the venv's install was made for: pyproject.toml, the corpus' requirements, the extras
    local stamp="${MLP_VENV}/.mlprof-install-stamp"
    local want
    want="$(cat "${MLP_BASE}/pyproject.toml" "${MLP_BASE}/models/requirements.txt" 2>/dev/null \
        | cksum) ${extras}"
    # `bash setup.sh --check-install`: whether `source setup.sh` would (re)install, changing
    # nothing (tests/test_docs.py asks before its sandbox shares this venv)
    if [ "${1:-}" = "--check-install" ]; then
        local have="(no stamp)"
        [ -f "${stamp}" ] && have="$(cat "${stamp}")"
        [ "${have}" = "${want}" ] && return 0
        echo "${stamp}: the venv was installed for another pyproject.toml or other extras" \
            "('${have}'; this checkout wants '${want}'): source setup.sh here first"
        return 1
    fi

    # venv, created on first use
    if [ ! -x "${MLP_VENV}/bin/python" ]; then
        echo "mlprof: creating virtual environment ${MLP_VENV}"
        python3 -m venv "${MLP_VENV}" || return 1
    fi
    # shellcheck disable=SC1091
    source "${MLP_VENV}/bin/activate" || return 1
    # bin/law: law's command, with one line and the closest names for an unknown task
    # (mlprof/lawcli.py); first on PATH, once
    case ":${PATH}:" in
        *":${MLP_BASE}/bin:"*) ;;
        *) export PATH="${MLP_BASE}/bin:${PATH}" ;;
    esac

    # (re)install when pyproject.toml or the extras changed
    if [ ! -f "${stamp}" ] || [ "$(cat "${stamp}")" != "${want}" ]; then
        echo "mlprof: installing mlprof[${extras}] into ${MLP_VENV} (log: ${MLP_VENV}/install.log)"
        local reqs=()
        if [[ ",${extras}," == *",torch,"* ]] && [ -f "${MLP_BASE}/models/requirements.txt" ]; then
            reqs=(-r "${MLP_BASE}/models/requirements.txt")
        fi
        # uv when it can (parallel downloads; installed into the venv by pip when not on PATH),
        # pip else; a progress line at least every 10 s (tools/install.py)
        local rc=0
        python "${MLP_BASE}/tools/install.py" --log "${MLP_VENV}/install.log" -- \
            -e "${MLP_BASE}[${extras}]" "${reqs[@]}" || rc=$?
        if [ "${rc}" != 0 ]; then
            if [ -s "${MLP_VENV}/install.log" ]; then  # (none when MLP_INSTALLER is mistyped)
                tail -n 30 "${MLP_VENV}/install.log" >&2
                echo "mlprof: installation failed, see ${MLP_VENV}/install.log" >&2
            fi
            return "${rc}"
        fi
        echo "${want}" > "${stamp}"
    fi

    # larger example models are generated, not committed (their TF versions when TensorFlow
    # is installed)
    local m have_tf=""
    if compgen -G "${MLP_VENV}/lib/python*/site-packages/tensorflow/__init__.py" >/dev/null; then
        have_tf=1
    fi
    for m in l10u256 l20u256 l20u128; do
        if [ ! -f "${MLP_BASE}/examples/dnn/model_onnx_${m}.onnx" ] || { [ -n "${have_tf}" ] \
                && [ ! -f "${MLP_BASE}/examples/dnn/saved_model_${m}/saved_model.pb" ]; }; then
            python "${MLP_BASE}/examples/dnn/create.py" --missing || return 1
            break
        fi
    done

    # mlprof's own bytecode (an editable install is not compiled by the installer): a machine
    # with PYTHONDONTWRITEBYTECODE set (this one, many CI images) compiled every imported module
    # of mlprof again in every law run, 0.13 s of a 0.55 s no-op rerun (0.42 s with it); a
    # stale .pyc after an edit is ignored by Python, never used. 0.2 s when up to date.
    python -m compileall -q -j 0 "${MLP_BASE}/mlprof" >/dev/null || true

    mkdir -p "${LAW_HOME}"
    law index -q || return 1
}

_mlp_setup "$@"
_mlp_setup_rc=$?
unset -f _mlp_setup
if [ "${_mlp_setup_rc}" != "0" ] && [ "${1:-}" != "--check-install" ]; then
    echo "mlprof: setup failed (exit code ${_mlp_setup_rc})" >&2
fi
# return when sourced, exit when executed
# shellcheck disable=SC2317
return "${_mlp_setup_rc}" 2>/dev/null || exit "${_mlp_setup_rc}"
