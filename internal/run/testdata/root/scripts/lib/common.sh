# shellcheck shell=bash
# common.sh stand-in for internal/run's tests: log as the real one does.
log() { printf '%s %s: %s\n' "$(date +%H:%M:%S)" "${IDPBENCH_LOG_TAG:-idpbench}" "$*" >&2; }
script_version() { :; }
