"""CPU time per `reticle_sessions` call of each process on the path: the daemon, the `reticle mcp`
supervisor and its worker, read from /proc/<pid>/stat (user and system) around <calls> calls of a
stand-in agent, with the round trip's median. It measures; it asserts nothing.
Usage: python3 scripts/cpu_per_call.py <reticle> <port> [calls] [K=V ...]   (K=V: the daemon's
environment, e.g. TOKIO_WORKER_THREADS=1; port: free, below 32768)."""
import json, os, subprocess, sys, time

import bench_daemon

binary, port = sys.argv[1], int(sys.argv[2])
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
env = bench_daemon.private_env()
daemon = bench_daemon.start(binary, port, dict(env, **dict(kv.split("=", 1) for kv in sys.argv[4:])))
proxy = subprocess.Popen([binary, "mcp", "--port", str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, bufsize=0)
buf, n = b"", 0


def call(method, params):
    global buf, n
    n += 1
    proxy.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n").encode())
    while b"\n" not in buf:
        buf += os.read(proxy.stdout.fileno(), 65536)
    line, buf = buf.split(b"\n", 1)
    return line


def ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cpu", "version": "1"}})
proxy.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
for _ in range(500):
    call("tools/call", {"name": "reticle_sessions", "arguments": {}})
worker = int(subprocess.run(["pgrep", "-P", str(proxy.pid)], capture_output=True, text=True).stdout.split()[0])
pids = {"daemon": daemon.pid, "supervisor": proxy.pid, "worker": worker}
before = {name: ticks(pid) for name, pid in pids.items()}
times = []
for _ in range(calls):
    started = time.perf_counter()
    call("tools/call", {"name": "reticle_sessions", "arguments": {}})
    times.append(time.perf_counter() - started)
after = {name: ticks(pid) for name, pid in pids.items()}
hz = os.sysconf("SC_CLK_TCK")
times.sort()
print(f"median {times[len(times) // 2] * 1e3:.3f} ms; CPU per call: " + ", ".join(
    f"{name} user {(after[name][0] - before[name][0]) / hz / calls * 1e6:.0f} sys {(after[name][1] - before[name][1]) / hz / calls * 1e6:.0f} us"
    for name in pids))
proxy.stdin.close()
proxy.wait()
daemon.terminate()
daemon.wait()
