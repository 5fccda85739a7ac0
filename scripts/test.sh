#!/usr/bin/env bash
# The README's test command: installs what is missing, then runs every check and every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/setup.sh
. scripts/setup.sh
ensure_build_deps
ensure_sdk_deps "$root"
ensure_conformance_deps "$root"
# The browser gates drive Debian's Chromium.
ensure_chromium
report_disk_space "$root"

# One run of the whole suite builds each crate once: incremental state would only take disk
# (3.5 GB of a clean debug build's 8.5 GB), and CI machines have run out of it.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

echo "==> cargo fmt --check"
cargo fmt --all -- --check
echo "==> cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
echo "==> cargo build --bins"
cargo build --workspace --bins
export RETICLE_BIN="$root/target/debug/reticle"
echo "==> tests"
if command -v cargo-nextest >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast
else
  cargo test --workspace --no-fail-fast
fi
if [ -f sdk/package.json ]; then
  echo "==> sdk tests (node --test)"
  (cd sdk && npm test)
fi
