"""Paired latency of two `reticle mcp` builds against one daemon: two stand-in agents, one on each
proxy's stdio, call `reticle_sessions` in turn (A then B, then B then A, ...), so the machine's
drift hits both alike; prints each side's median and p90 and A minus B. It measures; it asserts
nothing. Each proxy keeps a position bias of up to ~15 us (run it both ways round and average).
Usage: python3 scripts/proxy_paired.py <daemon reticle> <A reticle> <B reticle> <port> [calls]
(<port>: a free port below 32768, outside the kernel's ephemeral range, which the proxies' own
connections may take before the daemon binds it)
(a "reticle" may be a wrapper script that sets environment variables and execs the binary)."""
import sys, time

import bench_daemon
from bench_daemon import quantile

daemon_bin, a_bin, b_bin, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
calls = int(sys.argv[5]) if len(sys.argv) > 5 else 4000
env = bench_daemon.private_env()
daemon = bench_daemon.start(daemon_bin, port, env)
a, b = bench_daemon.StdioAgent(a_bin, port, env), bench_daemon.StdioAgent(b_bin, port, env)
for agent in (a, b):
    agent.initialize("paired")
    for _ in range(300):
        agent.tool("reticle_sessions", {})
times = {a: [], b: []}
for i in range(calls):
    for agent in (a, b) if i % 2 == 0 else (b, a):
        started = time.perf_counter()
        agent.tool("reticle_sessions", {})
        times[agent].append(time.perf_counter() - started)
print("A median %.1f us p90 %.1f | B median %.1f us p90 %.1f | A-B %.1f us" % (
    quantile(times[a], .5), quantile(times[a], .9), quantile(times[b], .5), quantile(times[b], .9),
    quantile(times[a], .5) - quantile(times[b], .5)))
for agent in (a, b):
    agent.stop()
daemon.terminate()
daemon.wait()
