"""Issue 30's scale bench: where an agent spends its day, with both SDKs through one daemon.

Starts everything itself: the published `@reticlehq/browser` 2.0.0 (installed from the npm
registry and bundled with esbuild into a temporary directory), one daemon, a static server for a
page of N rows (50, 300, 3,000 and 10,000 by default; 50 fits under both SDKs' snapshot cap) that loads either the daemon's own SDK or the
published bundle, one headless Chromium per SDK with nothing attached to its DevTools, and one
stand-in agent on a held-open `reticle mcp` proxy. For each size, in turns (ours then published,
then published then ours, ...), so the machine's drift hits both alike, it measures:
- `reticle_act_and_wait`: a click on the page's button until an element it adds is there (p50, p90);
- a bare `reticle_act` of the same click plus `reticle_assert` of the same predicate (p50);
- `reticle_snapshot`'s answer, in bytes (what the agent pays in tokens);
- a storm of 15,000 mutations in one task, started by the page 300 ms after a click: the page's
  own measure of the task, to a posted message and a timer after it, so the SDK's observers are
  in it (p50 of 10), and the same page
  with no SDK in its own Chromium, whose figure is subtracted for the SDK's share;
- a `no` the page contradicts and stays quiet on (the clicked button should be absent; p50 of 3);
- page load to session listed: `reticle_navigate` to the page again, until the daemon lists the
  session at the new URL (p50), and a fresh Chromium opened on the page under a new session id
  until it is listed (p50 of 5; the browser's start is in it, alike for both).
Last, the daemon's resident memory. It measures; it asserts nothing. Prints one line per figure,
then a markdown table.
Usage: python3 scripts/scale_bench.py <reticle> <daemon port> <app port> [rounds] [sizes,...]
(ports: free, below 32768, outside the kernel's ephemeral range). With RETICLE_BENCH_SNAPSHOT_DIR
set, each snapshot answer is also written there as <session>.txt, to compare them by eye."""
import http.server, json, os, shutil, subprocess, sys, tempfile, threading, time, urllib.parse, urllib.request

import bench_daemon
from bench_daemon import quantile

reticle, daemon_port, app_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 30
sizes = [int(s) for s in sys.argv[5].split(",")] if len(sys.argv) > 5 else [50, 300, 3000, 10000]

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Rows</title></head>
<body>
  <h1>Rows</h1>
  <button data-testid="add" id="add">Add a row</button>
  <button data-testid="storm" id="storm">Storm</button>
  <ul id="rows"></ul>
  <script type="module">
    const q = new URLSearchParams(location.search);
    const rows = Number(q.get('rows') || 300);
    const list = document.getElementById('rows');
    const frag = document.createDocumentFragment();
    for (let i = 0; i < rows; i += 1) {
      const li = document.createElement('li');
      li.innerHTML = `<span>Row ${i}</span> <a href="#r${i}">open ${i}</a> <input aria-label="note ${i}">`;
      frag.appendChild(li);
    }
    list.appendChild(frag);
    let added = 0;
    document.getElementById('add').addEventListener('click', () => {
      added += 1;
      const p = document.createElement('p');
      p.dataset.testid = `added-${added}`;
      p.textContent = `Added ${added}`;
      document.body.appendChild(p);
    });
    // A storm: 15,000 mutations in one task (5,000 each of attribute, text and child list); the
    // task's time to a posted message and a timer after it, observers included, is reported to
    // the bench's server. `sdk=none&storms=N` runs N of them by itself, 300 ms apart.
    function storm() {
      const started = performance.now();
      const spans = list.querySelectorAll('span');
      for (let j = 0; j < 5000; j += 1) {
        const span = spans[j % spans.length];
        span.dataset.n = String(j);
        span.firstChild.data = `Row ${j % spans.length}`;
        span.appendChild(document.createElement('b')).remove();
      }
      const channel = new MessageChannel();
      channel.port1.onmessage = () => setTimeout(() => {
        fetch(`/storm-report?session=${q.get('session')}&ms=${performance.now() - started}`);
      }, 0);
      channel.port2.postMessage(0);
    }
    // Storms start 300 ms after what asks for them (a click, or the page's load with no SDK), so
    // none runs inside an SDK's command: what the SDK's observers cost, not an act's settling.
    const storms = (n) => { for (let i = 0; i < n; i += 1) setTimeout(storm, 300 * (i + 1)); };
    document.getElementById('storm').addEventListener('click', () => storms(5));
    storms(Number(q.get('storms') || 0));
    const session = q.get('session');
    if (q.get('sdk') === 'none') {
      // no SDK: the storm's own cost, the floor both SDKs are measured against
    } else if (q.get('sdk') === 'published') {
      const { reticle } = await import('/published/reticle-sdk.mjs');
      reticle.connect({ url: `ws://127.0.0.1:${q.get('port')}/reticle`, token: q.get('token'), session, present: false });
    } else {
      const r = await import(`http://127.0.0.1:${q.get('port')}/sdk/reticle.js`);
      r.connect({ session, present: false });
    }
  </script>
</body></html>"""


def published_bundle():
    """The published SDK 2.0.0 bundled into one ES module; returns its directory."""
    work = tempfile.mkdtemp()
    with open(os.path.join(work, "package.json"), "w") as f:
        f.write('{"private":true}')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                    "@reticlehq/core@2.0.0", "@reticlehq/browser@2.0.0", "esbuild"], cwd=work, check=True)
    served = os.path.join(work, "served")
    os.makedirs(os.path.join(served, "published"))
    subprocess.run(["npx", "--no-install", "esbuild", "node_modules/@reticlehq/browser/dist/index.js", "--bundle",
                    "--format=esm", "--platform=browser", "--target=es2022", "--log-level=error",
                    f"--outfile={served}/published/reticle-sdk.mjs"], cwd=work, check=True)
    with open(os.path.join(served, "index.html"), "w") as f:
        f.write(PAGE)
    return work, served


storm_reports = {}
# Every tab's Chromium, stopped at the end however the run ends.
browsers = []


class Handler(http.server.SimpleHTTPRequestHandler):
    """The page's files, and `/storm-report?session=..&ms=..` recorded in `storm_reports`."""

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path != "/storm-report":
            return super().do_GET()
        q = urllib.parse.parse_qs(url.query)
        storm_reports.setdefault(q["session"][0], []).append(float(q["ms"][0]))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def serve(directory):
    """A static server for `directory` on the app port, in a thread."""
    handler = lambda *a, **k: Handler(*a, directory=directory, **k)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", app_port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def text_of(result):
    return "".join(c.get("text", "") for c in result.get("content", []))


def structured(result):
    return result.get("structuredContent") or json.loads(text_of(result))


def listed(session):
    """Whether the daemon lists `session` (its sessions tool, through the held-open agent)."""
    answer = structured(agent.tool("reticle_sessions", {}))
    return any(s.get("sessionId") == session or s.get("id") == session for s in answer.get("sessions", []))


class Tab:
    """One SDK's page in its own Chromium, on session `<sdk>-<rows>`."""

    def __init__(self, sdk, rows):
        self.sdk, self.rows, self.added, self.loads = sdk, rows, 0, 0
        self.session = f"{sdk}-{rows}"
        self.browser = bench_daemon.UnattachedChromium(self.url(self.session))
        browsers.append(self.browser)
        bench_daemon.wait_for(f"{self.session} is listed", lambda: listed(self.session), 60)

    def url(self, session):
        return (f"http://127.0.0.1:{app_port}/index.html?sdk={self.sdk}&rows={self.rows}&port={daemon_port}"
                f"&token={token}&session={session}")

    def act_and_wait(self):
        self.added += 1
        started = time.perf_counter()
        answer = structured(agent.tool("reticle_act_and_wait", {
            "sessionId": self.session, "target": {"testid": "add"}, "action": "click",
            "until": {"kind": "element", "testid": f"added-{self.added}"}}))
        took = time.perf_counter() - started
        assert answer.get("verified") == "yes", answer
        return took

    def contradicted_no(self):
        """A click whose `until` the page contradicts and stays quiet on (the button it clicked
        should be absent); seconds until the `no` (the wait's bound is 4 s)."""
        self.added += 1
        started = time.perf_counter()
        answer = structured(agent.tool("reticle_act_and_wait", {
            "sessionId": self.session, "target": {"testid": "add"}, "action": "click",
            "until": {"kind": "element", "testid": "add", "absent": True}}))
        took = time.perf_counter() - started
        assert answer.get("verified") == "no" and answer.get("reason") == "contradicted", answer
        return took

    def act_then_assert(self):
        self.added += 1
        started = time.perf_counter()
        agent.tool("reticle_act", {"sessionId": self.session, "target": {"testid": "add"}, "action": "click"})
        act_done = time.perf_counter()
        # The predicate's own check, asked again at once until it holds (no sleep between).
        asks = 0
        while structured(agent.tool("reticle_assert", {
                "sessionId": self.session, "predicate": {"kind": "element", "testid": f"added-{self.added}"}})
        ).get("verified") != "yes":
            asks += 1
            assert asks < 1000, "the added row within 1000 asserts"
        return act_done - started, time.perf_counter() - act_done

    def snapshot_bytes(self):
        answer = text_of(agent.tool("reticle_snapshot", {"sessionId": self.session}))
        keep = os.environ.get("RETICLE_BENCH_SNAPSHOT_DIR")
        if keep:
            with open(os.path.join(keep, f"{self.session}.txt"), "w") as f:
                f.write(answer)
        return len(answer.encode())

    def storms(self):
        """The page's five 15,000-mutation storms, 300 ms apart; the seconds it measured for each."""
        before = len(storm_reports.get(self.session, []))
        agent.tool("reticle_act", {"sessionId": self.session, "target": {"testid": "storm"}, "action": "click"})
        bench_daemon.wait_for(f"{self.session}'s storm reports",
                              lambda: len(storm_reports.get(self.session, [])) >= before + 5, 60)
        return [ms / 1000 for ms in storm_reports[self.session][before:before + 5]]

    def page_load(self):
        """Navigates the tab to the page again (a full load, `&load=<n>` in its URL); seconds
        until the daemon lists the session at the new URL (the new document's hello)."""
        self.loads += 1
        url = f"{self.url(self.session)}&load={self.loads}"
        started = time.perf_counter()
        agent.call("tools/call", {"name": "reticle_navigate", "arguments": {"sessionId": self.session, "url": url}})
        while not at_url(self.session, f"load={self.loads}"):
            assert time.perf_counter() - started < 30, f"{self.session} at load {self.loads} within 30 s"
        took = time.perf_counter() - started
        self.added = 0
        return took


def storms_without_sdk(rows, n):
    """`n` storms on the page with no SDK in it, in a Chromium of its own; their seconds."""
    session = f"none-{rows}"
    browser = bench_daemon.UnattachedChromium(
        f"http://127.0.0.1:{app_port}/index.html?sdk=none&rows={rows}&storms={n}&session={session}")
    try:
        bench_daemon.wait_for(f"{n} storms without an SDK", lambda: len(storm_reports.get(session, [])) >= n, 60)
        return [ms / 1000 for ms in storm_reports[session][:n]]
    finally:
        browser.stop()


def cold_load(sdk, rows, n):
    """A fresh Chromium opened on the page under a fresh session id; seconds until it is listed
    (the browser's own start is in it, alike for both SDKs)."""
    session = f"{sdk}-{rows}-cold{n}"
    url = (f"http://127.0.0.1:{app_port}/index.html?sdk={sdk}&rows={rows}&port={daemon_port}"
           f"&token={token}&session={session}")
    started = time.perf_counter()
    browser = bench_daemon.UnattachedChromium(url)
    try:
        while not listed(session):
            assert time.perf_counter() - started < 60, f"{session} listed within 60 s"
        return time.perf_counter() - started
    finally:
        browser.stop()


def at_url(session, part):
    """Whether the daemon lists `session` with `part` in its URL."""
    answer = structured(agent.tool("reticle_sessions", {}))
    return any(s.get("sessionId") == session and part in (s.get("url") or "") for s in answer.get("sessions", []))


pub_work, served = published_bundle()
env = dict(bench_daemon.private_env(), RETICLE_IDLE_SHUTDOWN_MS="600000")
daemon = bench_daemon.start(reticle, daemon_port, env)
token = open(os.path.join(env["RETICLE_STATE_DIR"], "pairing-token")).read().strip()
server = serve(served)
agent = bench_daemon.StdioAgent(reticle, daemon_port, env)
agent.initialize("scale-bench")
table = []
try:
    for rows in sizes:
        tabs = [Tab("ours", rows), Tab("published", rows)]
        figures = {t.sdk: {"aw": [], "act": [], "assert": [], "load": [], "cold": [], "no": [], "storm": []} for t in tabs}
        for warm in range(3):
            for t in tabs:
                t.act_and_wait()
        for i in range(rounds):
            for t in (tabs if i % 2 == 0 else tabs[::-1]):
                figures[t.sdk]["aw"].append(t.act_and_wait())
        for i in range(max(5, rounds // 3)):
            for t in (tabs if i % 2 == 0 else tabs[::-1]):
                act, check = t.act_then_assert()
                figures[t.sdk]["act"].append(act)
                figures[t.sdk]["assert"].append(check)
        snapshot = {t.sdk: t.snapshot_bytes() for t in tabs}
        for i in range(2):
            for t in (tabs if i % 2 == 0 else tabs[::-1]):
                figures[t.sdk]["storm"].extend(t.storms())
        for i in range(3):
            for t in (tabs if i % 2 == 0 else tabs[::-1]):
                figures[t.sdk]["no"].append(t.contradicted_no())
        for i in range(max(5, rounds // 3)):
            for t in (tabs if i % 2 == 0 else tabs[::-1]):
                figures[t.sdk]["load"].append(t.page_load())
        for i in range(5):
            for t in (tabs if i % 2 == 0 else tabs[::-1]):
                figures[t.sdk]["cold"].append(cold_load(t.sdk, rows, i))
        floor = quantile(storms_without_sdk(rows, 5), 0.5) / 1000
        print(json.dumps({"rows": rows, "storm_task_without_sdk_p50_ms": floor}), flush=True)
        for t in tabs:
            f = figures[t.sdk]
            line = {"rows": rows, "sdk": t.sdk,
                    "act_and_wait_p50_ms": quantile(f["aw"], 0.5) / 1000,
                    "act_and_wait_p90_ms": quantile(f["aw"], 0.9) / 1000,
                    "bare_act_p50_ms": quantile(f["act"], 0.5) / 1000,
                    "assert_p50_ms": quantile(f["assert"], 0.5) / 1000,
                    "snapshot_bytes": snapshot[t.sdk],
                    "storm_task_p50_ms": quantile(f["storm"], 0.5) / 1000,
                    "storm_sdk_share_p50_ms": quantile(f["storm"], 0.5) / 1000 - floor,
                    "contradicted_no_p50_ms": quantile(f["no"], 0.5) / 1000,
                    "load_listed_p50_ms": quantile(f["load"], 0.5) / 1000,
                    "cold_listed_p50_ms": quantile(f["cold"], 0.5) / 1000}
            print(json.dumps(line), flush=True)
            table.append(line)
        for t in tabs:
            t.browser.stop()
    with open(f"/proc/{daemon.pid}/status") as status:
        rss = next(line.split()[1] for line in status if line.startswith("VmRSS:"))
    print(json.dumps({"daemon_rss_kib_after": int(rss)}), flush=True)
finally:
    for browser in browsers:
        browser.stop()
    agent.stop()
    daemon.kill()
    daemon.wait()
    server.shutdown()
    shutil.rmtree(pub_work, ignore_errors=True)

print("\n| rows | figure | ours | published 2.0.0 | ours / published |\n|---|---|---|---|---|")
for rows in sizes:
    ours = next(l for l in table if l["rows"] == rows and l["sdk"] == "ours")
    pub = next(l for l in table if l["rows"] == rows and l["sdk"] == "published")
    for key, what in [("act_and_wait_p50_ms", "act_and_wait p50 (ms)"), ("act_and_wait_p90_ms", "act_and_wait p90 (ms)"),
                      ("bare_act_p50_ms", "bare act p50 (ms)"), ("assert_p50_ms", "assert p50 (ms)"),
                      ("snapshot_bytes", "snapshot answer (B)"), ("storm_task_p50_ms", "15,000-mutation storm task p50 (ms)"),
                      ("storm_sdk_share_p50_ms", "of it the SDK's (ms, minus the page without one)"), ("contradicted_no_p50_ms", "contradicted no p50 (ms)"), ("load_listed_p50_ms", "reload → listed p50 (ms)"),
                      ("cold_listed_p50_ms", "new browser → listed p50 (ms)")]:
        print(f"| {rows} | {what} | {ours[key]:.1f} | {pub[key]:.1f} | {ours[key] / pub[key]:.2f} |")
