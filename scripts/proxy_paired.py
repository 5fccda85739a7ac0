"""Paired latency of two `reticle mcp` builds against one daemon: two stand-in agents, one on each
proxy's stdio, call `reticle_sessions` in turn (A then B, then B then A, ...), so the machine's
drift hits both alike; prints each side's median and p90 and A minus B. It measures; it asserts
nothing. Each proxy keeps a position bias of up to ~15 us (run it both ways round and average).
Usage: python3 scripts/proxy_paired.py <daemon reticle> <A reticle> <B reticle> <port> [calls]
(<port>: a free port below 32768, outside the kernel's ephemeral range, which the proxies' own
connections may take before the daemon binds it)
(a "reticle" may be a wrapper script that sets environment variables and execs the binary)."""
import json, os, subprocess, sys, time

import bench_daemon

daemon_bin, a_bin, b_bin, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
calls = int(sys.argv[5]) if len(sys.argv) > 5 else 4000
env = bench_daemon.private_env()
daemon = bench_daemon.start(daemon_bin, port, env)


class Agent:
    def __init__(self, binary):
        self.p = subprocess.Popen([binary, "mcp", "--port", str(port)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0)
        self.fd, self.buf, self.n = self.p.stdout.fileno(), b"", 0

    def line(self):
        while b"\n" not in self.buf:
            self.buf += os.read(self.fd, 65536)
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def call(self, method, params):
        self.n += 1
        os.write(self.p.stdin.fileno(), (json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n").encode())
        while True:
            answer = json.loads(self.line())
            if answer.get("id") == self.n:
                return answer

    def sessions(self):
        answer = self.call("tools/call", {"name": "reticle_sessions", "arguments": {}})
        assert "result" in answer, answer

    def warm(self):
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "paired", "version": "1"}})
        os.write(self.p.stdin.fileno(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for _ in range(300):
            self.sessions()


a, b = Agent(a_bin), Agent(b_bin)
a.warm()
b.warm()
times = {a: [], b: []}
for i in range(calls):
    for agent in (a, b) if i % 2 == 0 else (b, a):
        started = time.perf_counter()
        agent.sessions()
        times[agent].append(time.perf_counter() - started)


def quantile(xs, f):
    xs = sorted(xs)
    return xs[int(round((len(xs) - 1) * f))] * 1e6


print("A median %.1f us p90 %.1f | B median %.1f us p90 %.1f | A-B %.1f us" % (
    quantile(times[a], .5), quantile(times[a], .9), quantile(times[b], .5), quantile(times[b], .9),
    quantile(times[a], .5) - quantile(times[b], .5)))
for agent in (a, b):
    agent.p.stdin.close()
    agent.p.wait()
daemon.terminate()
daemon.wait()
