#!/usr/bin/env bash
# One script for the README's two commands, from a fresh clone on Debian with Python 3.11+:
#   ./dev.sh example          set up, then compile specs/b200-superpod-4su.yaml into out/
#   ./dev.sh test [ARGS...]   set up, then run the whole test suite on every core (pytest ARGS)
# Set-up: a virtualenv in .venv with the package (example), plus its test, docs and sonic
# extras (test); as root, the Debian packages the real-tool tests drive (listed in
# .ci/debian-packages).
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

# The stamp lists the extras installed (one per line) and is newer than pyproject.toml
# while it holds; each command asks for the extras it needs, so a venv made by
# `example` (none: quick) is completed by `test` rather than silently reused.
STAMP=.venv/.clusterc-extras

pip_install() {
  local extras=$1   # comma-separated, may be empty
  .venv/bin/python -m pip install -q -e ".${extras:+[$extras]}"
}

setup_venv() {   # $1: extras this command needs (space-separated); sonic is built when it can be
  need_python
  if [ ! -x .venv/bin/python ]; then
    if ! "$PY" -m venv .venv 2>/dev/null; then
      rm -rf .venv
      # Debian splits venv out of python3; install it when we can.
      apt_install python3-venv || { echo "cannot create a virtualenv: install python3-venv" >&2; exit 2; }
      "$PY" -m venv .venv
    fi
  fi
  local have="" previous="" fresh=0
  [ -f "$STAMP" ] && previous=$(cat "$STAMP")
  if [ -f "$STAMP" ] && [ ! pyproject.toml -nt "$STAMP" ]; then
    have=$previous
  else
    fresh=1   # the package itself (re)installs, with every extra the venv had before
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  fi
  local want todo=() sonic=0 e
  want=$(printf '%s\n' $1 $previous | sort -u)
  for e in $want; do
    grep -qx "$e" <<<"$have" && continue
    if [ "$e" = sonic ]; then sonic=1; else todo+=("$e"); fi
  done
  if [ $fresh = 1 ] || [ ${#todo[@]} -gt 0 ]; then
    pip_install "$(IFS=,; echo "${todo[*]}")"
    have=$(printf '%s\n' $have "${todo[@]}")
  fi
  if [ $sonic = 1 ]; then
    # PyPI libyang is sdist-only: it compiles against Debian's libyang2-dev (gcc, python3-dev)
    if ! dpkg -s libyang2-dev >/dev/null 2>&1; then
      echo "note: SONiC YANG tests will skip: they need Debian's libyang2-dev (run ./dev.sh test as root to install it)" >&2
    elif pip_install sonic >.venv/sonic-install.log 2>&1; then
      have=$(printf '%s\n' $have sonic)
    else
      echo "note: SONiC YANG tests will skip: building PyPI libyang failed (see .venv/sonic-install.log)" >&2
    fi
  fi
  printf '%s\n' $have | sort -u | grep . >"$STAMP.new" || true
  mv "$STAMP.new" "$STAMP"
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
    setup_venv ""
    exec .venv/bin/clusterc compile specs/b200-superpod-4su.yaml -o out "$@"
    ;;
  test)
    setup_system_packages   # first: the venv's sonic extra builds against libyang2-dev
    setup_venv "test docs sonic resilience"
    # One pytest worker per core (pytest-xdist): the suite's time is compiles and real tools
    # (FRR, ibsim, Chromium) in their own processes, which one pytest process runs one at a
    # time. worksteal: a worker that runs out takes half of another's queue, so no worker is
    # left with a tail of long tests. ARGS come last and win: `./dev.sh test -n 0` runs in
    # one process.
    exec .venv/bin/python -m pytest -n "$(nproc)" --dist worksteal "$@"
    ;;
  *)
    echo "usage: ./dev.sh example | test [pytest args]" >&2
    exit 2
    ;;
esac
