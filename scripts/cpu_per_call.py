"""CPU time per `reticle_sessions` call of each process on the path: the daemon, the `reticle mcp`
supervisor and its worker, read from /proc/<pid>/stat (user and system) around <calls> calls of a
stand-in agent, with the round trip's median. It measures; it asserts nothing.
Usage: python3 scripts/cpu_per_call.py <reticle> <port> [calls] [K=V ...]   (K=V: the daemon's
environment, e.g. TOKIO_WORKER_THREADS=1; port: free, below 32768)."""
import os, subprocess, sys, time

import bench_daemon

binary, port = sys.argv[1], int(sys.argv[2])
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
env = bench_daemon.private_env()
daemon = bench_daemon.start(binary, port, dict(env, **dict(kv.split("=", 1) for kv in sys.argv[4:])))
agent = bench_daemon.StdioAgent(binary, port, env)


def ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


agent.initialize("cpu")
for _ in range(500):
    agent.tool("reticle_sessions", {})
worker = int(subprocess.run(["pgrep", "-P", str(agent.proxy.pid)], capture_output=True, text=True).stdout.split()[0])
pids = {"daemon": daemon.pid, "supervisor": agent.proxy.pid, "worker": worker}
before = {name: ticks(pid) for name, pid in pids.items()}
times = []
for _ in range(calls):
    started = time.perf_counter()
    agent.tool("reticle_sessions", {})
    times.append(time.perf_counter() - started)
after = {name: ticks(pid) for name, pid in pids.items()}
hz = os.sysconf("SC_CLK_TCK")
times.sort()
print(f"median {times[len(times) // 2] * 1e3:.3f} ms; CPU per call: " + ", ".join(
    f"{name} user {(after[name][0] - before[name][0]) / hz / calls * 1e6:.0f} sys {(after[name][1] - before[name][1]) / hz / calls * 1e6:.0f} us"
    for name in pids))
agent.stop()
daemon.terminate()
daemon.wait()
