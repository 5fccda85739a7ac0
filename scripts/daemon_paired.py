"""Paired latency of two daemons (two builds, or one build with different environment variables):
each gets its own `reticle mcp` (the proxy of <proxy reticle>) and a stand-in agent, and the two
agents call `reticle_sessions` in turn (A then B, then B then A, ...), so the machine's drift hits
both alike; prints each side's median and A minus B. It measures; it asserts nothing.
Usage: python3 scripts/daemon_paired.py <A reticle> <B reticle> <proxy reticle> <port A> <port B>
       [calls] [A's env: K=V,K=V] [B's env: K=V,...]
(ports: free, below 32768, outside the kernel's ephemeral range)."""
import json, os, subprocess, sys, time

import bench_daemon

a_bin, b_bin, proxy_bin, port_a, port_b = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
calls = int(sys.argv[6]) if len(sys.argv) > 6 else 4000
extra = [dict(kv.split("=", 1) for kv in spec.split(",") if kv) for spec in (sys.argv[7:9] + ["", ""])[:2]]


class Side:
    def __init__(self, daemon_bin, port, daemon_env):
        env = bench_daemon.private_env()
        self.daemon = bench_daemon.start(daemon_bin, port, dict(env, **daemon_env))
        self.proxy = subprocess.Popen([proxy_bin, "mcp", "--port", str(port)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0)
        self.fd, self.buf, self.n, self.times = self.proxy.stdout.fileno(), b"", 0, []

    def call(self, method, params):
        self.n += 1
        os.write(self.proxy.stdin.fileno(), (json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n").encode())
        while True:
            while b"\n" not in self.buf:
                self.buf += os.read(self.fd, 65536)
            line, self.buf = self.buf.split(b"\n", 1)
            answer = json.loads(line)
            if answer.get("id") == self.n:
                return answer

    def sessions(self):
        assert "result" in self.call("tools/call", {"name": "reticle_sessions", "arguments": {}})

    def warm(self):
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "paired", "version": "1"}})
        os.write(self.proxy.stdin.fileno(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for _ in range(300):
            self.sessions()

    def stop(self):
        self.proxy.stdin.close()
        self.proxy.wait()
        self.daemon.terminate()
        self.daemon.wait()


a, b = Side(a_bin, port_a, extra[0]), Side(b_bin, port_b, extra[1])
a.warm()
b.warm()
for i in range(calls):
    for side in (a, b) if i % 2 == 0 else (b, a):
        started = time.perf_counter()
        side.sessions()
        side.times.append(time.perf_counter() - started)
median = lambda xs: sorted(xs)[len(xs) // 2] * 1e6
print("A median %.1f us | B median %.1f us | A-B %.1f us" % (median(a.times), median(b.times), median(a.times) - median(b.times)))
a.stop()
b.stop()
