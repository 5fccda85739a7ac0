"""Paired latency of two daemons (two builds, or one build with different environment variables):
each gets its own `reticle mcp` (the proxy of <proxy reticle>) and a stand-in agent, and the two
agents call `reticle_sessions` in turn (A then B, then B then A, ...), so the machine's drift hits
both alike; prints each side's median and A minus B. It measures; it asserts nothing.
Usage: python3 scripts/daemon_paired.py <A reticle> <B reticle> <proxy reticle> <port A> <port B>
       [calls] [A's env: K=V,K=V] [B's env: K=V,...]
(ports: free, below 32768, outside the kernel's ephemeral range)."""
import sys, time

import bench_daemon
from bench_daemon import quantile

a_bin, b_bin, proxy_bin, port_a, port_b = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
calls = int(sys.argv[6]) if len(sys.argv) > 6 else 4000
extra = [dict(kv.split("=", 1) for kv in spec.split(",") if kv) for spec in (sys.argv[7:9] + ["", ""])[:2]]


class Side:
    def __init__(self, daemon_bin, port, daemon_env):
        env = bench_daemon.private_env()
        self.daemon = bench_daemon.start(daemon_bin, port, dict(env, **daemon_env))
        self.agent = bench_daemon.StdioAgent(proxy_bin, port, env)
        self.times = []

    def stop(self):
        self.agent.stop()
        self.daemon.terminate()
        self.daemon.wait()


a, b = Side(a_bin, port_a, extra[0]), Side(b_bin, port_b, extra[1])
for side in (a, b):
    side.agent.initialize("paired")
    for _ in range(300):
        side.agent.tool("reticle_sessions", {})
for i in range(calls):
    for side in (a, b) if i % 2 == 0 else (b, a):
        started = time.perf_counter()
        side.agent.tool("reticle_sessions", {})
        side.times.append(time.perf_counter() - started)
print("A median %.1f us | B median %.1f us | A-B %.1f us" % (
    quantile(a.times, .5), quantile(b.times, .5), quantile(a.times, .5) - quantile(b.times, .5)))
a.stop()
b.stop()
