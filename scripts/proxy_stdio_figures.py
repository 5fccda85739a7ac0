"""A stand-in agent on `reticle mcp`'s stdio, for figures the Rust benches cannot be built for in time
on a loaded machine: alternating blocks of reticle_sessions and tools/list round trips over one
held-open link (medians, p99s), then the supervisor's and worker's VmRSS. It measures; it asserts
nothing. Usage: python3 scripts/proxy_stdio_figures.py <reticle binary> <free port> [blocks]"""
import json, os, subprocess, sys, tempfile, time, urllib.request
binp = sys.argv[1]; port = int(sys.argv[2]); blocks = int(sys.argv[3]) if len(sys.argv) > 3 else 4; per = 150
state = tempfile.mkdtemp()
env = dict(os.environ, RETICLE_STATE_DIR=state, RETICLE_IDLE_SHUTDOWN_MS="20000", RETICLE_PROJECT_DIR=state)
p = subprocess.Popen([binp, "mcp", "--port", str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0)
out = p.stdout; n = [0]
def call(method, params):
    n[0] += 1
    p.stdin.write((json.dumps({"jsonrpc":"2.0","id":n[0],"method":method,"params":params})+"\n").encode())
    while True:
        line = out.readline()
        v = json.loads(line)
        if v.get("id") == n[0]: return v
call("initialize", {"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lat","version":"1"}})
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
deadline = time.time() + 30
while "result" not in call("tools/call", {"name":"reticle_sessions","arguments":{}}):
    assert time.time() < deadline; time.sleep(0.05)
S = {"sessions": [], "list": []}
def one(kind):
    t = time.perf_counter()
    v = call("tools/call", {"name":"reticle_sessions","arguments":{}}) if kind == "sessions" else call("tools/list", {})
    dt = time.perf_counter() - t
    assert "result" in v, v
    return dt
for kind in S:
    for _ in range(100): one(kind)
for b in range(blocks):
    for kind in S:
        for _ in range(per): S[kind].append(one(kind))
def q(xs, f): xs = sorted(xs); return xs[int(round((len(xs)-1)*f))]*1000
for kind, xs in S.items():
    print("%-9s median %.3f ms  p99 %.3f ms  n=%d" % (kind, q(xs, .5), q(xs, .99), len(xs)))
# proxy memory: the supervisor and its worker, VmRSS summed (after these round trips)
def status(pid):
    return {l.split(":")[0]: l.split(":")[1].strip() for l in open(f"/proc/{pid}/status")}
kids = []
for t in os.listdir(f"/proc/{p.pid}/task"):
    kids += [int(x) for x in open(f"/proc/{p.pid}/task/{t}/children").read().split()]
pids = [p.pid] + [k for k in kids if b"mcp-worker" in open(f"/proc/{k}/cmdline","rb").read()]
tot = 0
for pid in pids:
    s = status(pid); kb = int(s["VmRSS"].split()[0]); tot += kb
    print("pid %d VmRSS %s RssAnon %s RssFile %s threads %s" % (pid, s["VmRSS"], s["RssAnon"], s["RssFile"], s["Threads"]))
print("proxy VmRSS summed %.2f MiB" % (tot/1024))
p.stdin.close(); p.wait(timeout=15)
try:
    st = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=2).read()); os.kill(st["pid"], 15)
except Exception as e: print("daemon stop:", e)
