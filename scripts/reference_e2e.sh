#!/usr/bin/env bash
# The reference's own end-to-end specs against our `reticle` (issue 34): the specs of the
# TypeScript Reticle (reticlehq/reticle) that drive its CLI, run unmodified, with its `cli.js`
# swapped for a shim that execs our binary. Its server is not on the npm registry, so this needs
# a fetched copy of the repository (a git dir: RETICLE_REFERENCE_GIT, else the library's mirror);
# without one it says so and exits 2. It builds the reference's core and server packages (the
# specs import them) in a temporary folder on Node 22 (the npm package `node@22`), never in this
# repository, and prints one line per spec and a markdown table (each spec's output is kept in
# target/reference-e2e/).
# Usage: bash scripts/reference_e2e.sh <reticle binary> [spec ...]
set -euo pipefail
reticle="$(cd "$(dirname "${1:?usage: reference_e2e.sh <reticle binary> [spec ...]}")" && pwd)/$(basename "$1")"
shift
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  specs=(mcp-survives mcp-stress transport-faults trace-shape bridge-stress daemon-lifecycle
    daemon-heartbeat daemon-port-honesty version-skew tool-fuzz tool-surface-sweep release-smoke)
fi
git_dir="${RETICLE_REFERENCE_GIT:-/work/.mirror/reticlehq+reticle/repo}"
if ! git --git-dir="$git_dir" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "reference_e2e: no fetched copy of reticlehq/reticle at $git_dir (set RETICLE_REFERENCE_GIT to a git dir of it); nothing was run" >&2
  exit 2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Each spec's whole output is kept here (the copy itself is removed at the end).
logs="$(pwd)/target/reference-e2e"
mkdir -p "$logs"
echo "reference_e2e: reticlehq/reticle $(git --git-dir="$git_dir" rev-parse --short HEAD) into $work" >&2
# Only what the specs need (a mirror may hold the large assets as missing blobs).
git --git-dir="$git_dir" archive HEAD -- package.json pnpm-lock.yaml pnpm-workspace.yaml \
  tsconfig.base.json tsconfig.json turbo.json packages/core packages/server apps/e2e bench/harness \
  | tar -x -C "$work"

# Node 22 and pnpm, from the npm registry, beside the copy.
tools="$work/.tools"
mkdir -p "$tools"
(cd "$tools" && echo '{"private":true}' > package.json \
  && npm install --no-audit --no-fund --loglevel=error node@22 pnpm@10 >/dev/null)
export PATH="$tools/node_modules/node/bin:$tools/node_modules/.bin:$PATH"
# The copy pins a pnpm release; the one installed here serves it (no switch, no download).
export npm_config_manage_package_manager_versions=false
echo "reference_e2e: node $(node --version), pnpm $(pnpm --version)" >&2

# Only what the specs import: core and server and their dependencies, no install scripts (no
# browser or desktop downloads), then their TypeScript builds.
(cd "$work" && pnpm install --ignore-scripts --filter @reticlehq/server... --filter @reticlehq/core... \
  --config.confirmModulesPurge=false >/dev/null)
(cd "$work/packages/core" && pnpm run build >/dev/null)
(cd "$work/packages/server" && pnpm exec tsc -b >/dev/null)

# The shim: the reference's CLI entry point, running ours with the same arguments and stdio.
cat > "$work/packages/server/dist/cli.js" <<SHIM
#!/usr/bin/env node
import { spawn } from 'node:child_process';
const child = spawn('$reticle', process.argv.slice(2), { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
SHIM

results=()
for spec in "${specs[@]}"; do
  file="$work/apps/e2e/specs/$spec-test.mjs"
  if [ ! -f "$file" ]; then
    echo "reference_e2e: $spec: no such spec in this copy" >&2
    results+=("| $spec | missing | |")
    continue
  fi
  started=$(date +%s.%N)
  if (cd "$work" && timeout 600 node "$file" >"$logs/$spec.log" 2>&1); then outcome=pass; else outcome=fail; fi
  took=$(echo "$(date +%s.%N) - $started" | bc)
  printf 'reference_e2e: %-22s %s in %.1f s (log: %s)\n' "$spec" "$outcome" "$took" "$logs/$spec.log" >&2
  tail -4 "$logs/$spec.log" | sed 's/^/    /' >&2
  results+=("| $spec | $outcome | $(printf '%.1f' "$took") s |")
done
echo
echo "| spec | against our reticle | took |"
echo "|---|---|---|"
printf '%s\n' "${results[@]}"
