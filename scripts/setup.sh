#!/usr/bin/env bash
# Installs what the project needs and is missing, idempotently. Sourced by the README's two
# commands; each function is a no-op when its tool is already there.
set -euo pipefail

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    apt-get update -qq >/dev/null
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# C libraries that -sys crates build against (openssl, for the toxiproxy client's TLS stack).
ensure_build_deps() {
  if ! pkg-config --exists openssl 2>/dev/null; then
    echo "setup: installing libssl-dev and pkg-config" >&2
    apt_install libssl-dev pkg-config
  fi
}

# Debian's Chromium, for the browser gates.
ensure_chromium() {
  if ! command -v chromium >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium (first browser use)" >&2
    apt_install chromium
  fi
}

# `npm ci` in `dir` (saying `what` it installs) when its package.json exists and npm has not
# installed its lock file yet, or the lock file is newer than what npm last installed
# (node_modules/.package-lock.json), so a pulled dependency arrives too.
npm_ci_when_stale() {
  local dir="$1" what="$2"
  [ -f "$dir/package.json" ] || return 0
  if [ ! -f "$dir/node_modules/.package-lock.json" ] \
    || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "setup: installing $what (npm ci in $dir)" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# The npm dev dependencies of sdk/ (jsdom for its unit tests, the official MCP SDK for the client
# gate).
ensure_sdk_deps() {
  npm_ci_when_stale "$1/sdk" "sdk/ dev dependencies"
}

# The official MCP conformance suite and the Node 22 it runs on (the npm package `node`), for
# gates/tests/hop2_conformance.rs.
ensure_conformance_deps() {
  npm_ci_when_stale "$1/gates/conformance" "the MCP conformance suite and Node 22"
}

# Says how much disk the run has where it writes (the build under target/, the tests' temporary
# dirs), and warns when that is less than a clean run takes: about 5.1 GB under target/ and 0.4
# GB of temporary dirs (the app-wiring tests install real Vite and Next.js apps). A warning, not
# a refusal: a run over an existing build needs far less.
report_disk_space() {
  local root="$1" tmp="${TMPDIR:-/tmp}" build_mb tmp_mb
  build_mb=$(df -Pm "$root" 2>/dev/null | awk 'NR==2 {print $4}') || true
  tmp_mb=$(df -Pm "$tmp" 2>/dev/null | awk 'NR==2 {print $4}') || true
  if [ -z "$build_mb" ] || [ -z "$tmp_mb" ]; then
    echo "setup: warning: cannot tell the free disk under $root or in $tmp (does $tmp exist?)" >&2
    return 0
  fi
  echo "setup: ${build_mb} MB free for the build under $root/target, ${tmp_mb} MB in $tmp" >&2
  if [ "$build_mb" -lt 6000 ] || [ "$tmp_mb" -lt 1000 ]; then
    echo "setup: warning: a clean build and test run takes about 5.1 GB under target/ and 0.4 GB in $tmp; with less free, expect 'No space left on device' (free some, or point TMPDIR elsewhere)" >&2
  fi
}
