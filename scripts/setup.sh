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

# The npm dev dependencies of sdk/ (jsdom for its unit tests, the official MCP SDK for the client
# gate), once sdk/package.json exists. Installed again when the lock file is newer than what
# npm last installed (node_modules/.package-lock.json), so a pulled dependency arrives too.
ensure_sdk_deps() {
  local root="$1"
  local sdk="$root/sdk"
  [ -f "$sdk/package.json" ] || return 0
  if [ ! -f "$sdk/node_modules/.package-lock.json" ] \
    || [ "$sdk/package-lock.json" -nt "$sdk/node_modules/.package-lock.json" ]; then
    echo "setup: installing sdk/ dev dependencies (npm ci)" >&2
    (cd "$sdk" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# The official MCP conformance suite and the Node 22 it runs on (the npm package `node`), for
# gates/tests/hop2_conformance.rs: installed in gates/conformance from its lock file, again when
# the lock file is newer than what npm last installed.
ensure_conformance_deps() {
  local root="$1"
  local dir="$root/gates/conformance"
  [ -f "$dir/package.json" ] || return 0
  if [ ! -f "$dir/node_modules/.package-lock.json" ] \
    || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "setup: installing the MCP conformance suite and Node 22 (npm ci in gates/conformance)" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
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
