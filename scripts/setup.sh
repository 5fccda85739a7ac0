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
