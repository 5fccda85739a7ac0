"""The four-hop `reticle_query` as issue 16 measures it: a stand-in agent on a `reticle mcp`
proxy's stdio, the daemon, and the published-protocol page (the fixture app, our SDK) in Debian's
Chromium with no DevTools client attached. Two sides, each its own daemon (build A, build B; the
same build twice to read one), its own proxy and its own Chromium on the one fixture app; the two
agents call in turn (A then B, then B then A, ...), so the machine's drift hits both alike. Prints
each side's p50 and p99 and A minus B. It measures; it asserts nothing.
Usage: python3 scripts/query_paired.py <A reticle> <B reticle> <proxy reticle> <port A> <port B>
       <app port> [calls] [A's env: K=V,...] [B's env: K=V,...]
(ports: free, below 32768, outside the kernel's ephemeral range)."""
import shutil, sys, time

import bench_daemon
from bench_daemon import quantile

a_bin, b_bin, proxy_bin = sys.argv[1], sys.argv[2], sys.argv[3]
port_a, port_b, app_port = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
calls = int(sys.argv[7]) if len(sys.argv) > 7 else 2000
extra = [dict(kv.split("=", 1) for kv in spec.split(",") if kv) for spec in (sys.argv[8:10] + ["", ""])[:2]]
QUERY = {"sessionId": "bench", "testid": "login-submit"}


class Side:
    def __init__(self, daemon_bin, port, daemon_env):
        self.env = dict(bench_daemon.private_env(), RETICLE_IDLE_SHUTDOWN_MS="120000")
        self.daemon = bench_daemon.start(daemon_bin, port, dict(self.env, **daemon_env))
        url = bench_daemon.page_url(app_port, port, self.env["RETICLE_STATE_DIR"], "bench")
        self.browser = bench_daemon.UnattachedChromium(url)
        self.agent = bench_daemon.StdioAgent(proxy_bin, port, self.env)
        self.agent.initialize("query-paired")
        self.times = []

    def found(self):
        answer = self.agent.call("tools/call", {"name": "reticle_query", "arguments": QUERY})
        return answer.get("result", {}).get("structuredContent", {}).get("count") == 1

    def query(self):
        result = self.agent.tool("reticle_query", QUERY)
        assert result["structuredContent"]["count"] == 1, result

    def stop(self):
        self.agent.stop()
        self.browser.stop()
        self.daemon.terminate()
        self.daemon.wait()
        shutil.rmtree(self.env["RETICLE_STATE_DIR"], ignore_errors=True)


app = bench_daemon.start_app(app_port)
a, b = Side(a_bin, port_a, extra[0]), Side(b_bin, port_b, extra[1])
for side in (a, b):
    bench_daemon.wait_for("the page's session answers a query", side.found)
    for _ in range(300):
        side.query()
for i in range(calls):
    for side in (a, b) if i % 2 == 0 else (b, a):
        started = time.perf_counter()
        side.query()
        side.times.append(time.perf_counter() - started)
print("A p50 %.1f us p99 %.1f | B p50 %.1f us p99 %.1f | A-B %.1f us (%d calls a side)" % (
    quantile(a.times, .5), quantile(a.times, .99), quantile(b.times, .5), quantile(b.times, .99),
    quantile(a.times, .5) - quantile(b.times, .5), calls))
a.stop()
b.stop()
app.kill()
app.wait()
