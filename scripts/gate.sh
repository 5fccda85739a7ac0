#!/usr/bin/env bash
# The README's main-job command. Until `reticle gate` lands it starts a daemon on a private state
# dir and a free port, prints `reticle status`, and stops it again.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/setup.sh
. scripts/setup.sh
cargo build --workspace --bins --quiet
bin="$root/target/debug/reticle"
state="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
export RETICLE_STATE_DIR="$state"
trap '"$bin" stop --port "$port" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
"$bin" serve --port "$port"
"$bin" status --port "$port"
"$bin" doctor --port "$port"
