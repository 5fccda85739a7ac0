#!/usr/bin/env bash
# The README's main-job command: installs what is missing, builds, and runs `reticle gate`, which
# scores every row of the fragility inventory and prints the scorecard. Arguments pass through
# (e.g. `scripts/gate.sh --only H3.1,H3.6`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/setup.sh
. scripts/setup.sh
ensure_build_deps
ensure_sdk_deps "$root"
ensure_chromium
cargo build --workspace --bins --quiet
exec "$root/target/debug/reticle" gate "$@"
