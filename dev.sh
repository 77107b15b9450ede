#!/usr/bin/env bash
# One script for the README's two commands, from a fresh clone on Debian with Python 3.11+:
#   ./dev.sh example          set up, then compile specs/b200-superpod-4su.yaml into out/
#   ./dev.sh test [ARGS...]   set up, then run the whole test suite (pytest ARGS)
# Set-up: a virtualenv in .venv with the package and its test extras; as root, the
# Debian packages the real-tool tests drive (listed in .ci/debian-packages).
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3}

need_python() {
  "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && return
  echo "clusterc needs Python 3.11 or newer as '$PY' (set PYTHON=...)" >&2
  exit 2
}

apt_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
  [ -n "${CLUSTERC_APT_UPDATED:-}" ] || { apt-get update -qq >/dev/null; export CLUSTERC_APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

setup_venv() {
  need_python
  if [ ! -x .venv/bin/python ]; then
    if ! "$PY" -m venv .venv 2>/dev/null; then
      rm -rf .venv
      # Debian splits venv out of python3; install it when we can.
      apt_install python3-venv || { echo "cannot create a virtualenv: install python3-venv" >&2; exit 2; }
      "$PY" -m venv .venv
    fi
  fi
  local stamp=.venv/.clusterc-installed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    local extras=test
    # the SONiC YANG tests need PyPI libyang, which compiles against Debian's libyang2-dev
    dpkg -s libyang2-dev >/dev/null 2>&1 && extras=test,sonic
    .venv/bin/python -m pip install -q -e ".[$extras]"
    touch "$stamp"
  fi
}

setup_system_packages() {
  local pkgs
  pkgs=$(grep -v '^\s*#' .ci/debian-packages 2>/dev/null | xargs || true)
  [ -n "$pkgs" ] || return 0
  local missing=()
  for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  apt_install "${missing[@]}" || echo "note: could not install ${missing[*]} (not root?); tests that need them skip" >&2
}

cmd=${1:-}
shift || true
case "$cmd" in
  example)
    setup_venv
    exec .venv/bin/clusterc compile specs/b200-superpod-4su.yaml -o out "$@"
    ;;
  test)
    setup_system_packages   # first: the venv's sonic extra builds against libyang2-dev
    setup_venv
    exec .venv/bin/python -m pytest "$@"
    ;;
  *)
    echo "usage: ./dev.sh example | test [pytest args]" >&2
    exit 2
    ;;
esac
