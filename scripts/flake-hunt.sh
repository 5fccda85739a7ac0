#!/usr/bin/env bash
# Flake hunt: runs the whole Rust battery N times (default 5) while a CPU hog keeps every core
# busy, then prints every test that failed at least once, how often, and its failure messages.
# The hog is started and stopped by this script (stress-ng when installed, else one busy shell
# loop per core); nothing is retried. Reports land in target/flake-hunt/<stamp>/.
#
#   scripts/flake-hunt.sh [N]          N runs under load (default 5)
#   HOG=0 scripts/flake-hunt.sh [N]    the same runs without the hog (a quiet-machine baseline)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
runs="${1:-5}"
case "$runs" in
  '' | *[!0-9]* | 0) echo "usage: scripts/flake-hunt.sh [N]   (N: runs, a whole number from 1)" >&2; exit 3 ;;
esac

# shellcheck source=scripts/setup.sh
. scripts/setup.sh
ensure_build_deps
ensure_sdk_deps "$root"
ensure_chromium

echo "==> building the battery once (not timed, not under load)"
cargo build --workspace --bins
cargo nextest run --workspace --no-run
export RETICLE_BIN="$root/target/debug/reticle"

out="$root/target/flake-hunt/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"

hog_pids=()
start_hog() {
  [ "${HOG:-1}" = 1 ] || return 0
  local cores
  cores="$(nproc)"
  if command -v stress-ng >/dev/null 2>&1; then
    stress-ng --cpu "$cores" --quiet &
    hog_pids+=("$!")
  else
    for _ in $(seq "$cores"); do
      (while :; do :; done) &
      hog_pids+=("$!")
    done
  fi
  echo "==> CPU hog on $cores core(s): pids ${hog_pids[*]}"
}
stop_hog() {
  local pid
  for pid in "${hog_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${hog_pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  hog_pids=()
}
trap stop_hog EXIT INT TERM

start_hog
for run in $(seq "$runs"); do
  echo "==> run $run of $runs"
  started=$(date +%s)
  status=0
  cargo nextest run --workspace --profile flake-hunt --no-fail-fast >"$out/run-$run.log" 2>&1 || status=$?
  took=$(($(date +%s) - started))
  cp target/nextest/flake-hunt/junit.xml "$out/run-$run.junit.xml" 2>/dev/null || true
  summary="$(grep -E '^ *Summary ' "$out/run-$run.log" | tail -n 1 | sed 's/^ *//')"
  echo "    exit $status in ${took}s: ${summary:-no summary line (see $out/run-$run.log)}"
  echo "$run $status $took" >>"$out/runs.txt"
done
stop_hog

python3 - "$out" "$runs" <<'PY'
# Reads every run's JUnit report and prints the tests that failed at least once.
import glob, os, sys, xml.etree.ElementTree as ET
out, runs = sys.argv[1], int(sys.argv[2])
failures = {}
for path in sorted(glob.glob(os.path.join(out, "run-*.junit.xml"))):
    run = os.path.basename(path).split(".")[0]
    for case in ET.parse(path).getroot().iter("testcase"):
        for bad in list(case.findall("failure")) + list(case.findall("error")):
            name = f"{case.get('classname')} {case.get('name')}"
            text = (bad.get("message") or "") + "\n" + (bad.text or "")
            failures.setdefault(name, []).append((run, text.strip()))
walls = [line.split() for line in open(os.path.join(out, "runs.txt"))]
print(f"\n==> flake hunt: {runs} run(s); wall time per run: " + ", ".join(f"{w[2]}s" for w in walls))
reports = len(glob.glob(os.path.join(out, "run-*.junit.xml")))
if reports < runs:
    print(f"    {runs - reports} run(s) wrote no JUnit report (the battery did not start): see the logs")
if not failures:
    print(f"    every test green in {reports} of {runs} run(s)")
for name, seen in sorted(failures.items(), key=lambda item: -len(item[1])):
    print(f"\nFAILED {len(seen)}/{runs}: {name}")
    for run, text in seen:
        lines = [l for l in text.splitlines() if "panicked at" in l or "INCONCLUSIVE" in l or "assert" in l]
        print(f"  {run}: " + ("\n        ".join(lines[:4]) if lines else text[:400]))
print(f"\nreports: {out}")
sys.exit(1 if failures or reports < runs else 0)
PY
