"""What the hand-run measurement scripts share: a private state dir's environment, a daemon started
on it, a stand-in agent on a `reticle mcp` proxy's stdio, the fixture app, and Debian's Chromium
started headless on a URL with no DevTools client attached (imported by the scripts beside it)."""
import json, os, subprocess, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def private_env():
    """The environment of a run with a state dir (and project dir) of its own."""
    state = tempfile.mkdtemp()
    return dict(os.environ, RETICLE_STATE_DIR=state, RETICLE_PROJECT_DIR=state, RETICLE_IDLE_SHUTDOWN_MS="20000")


def wait_for(what, ready, bound=30):
    """Polls `ready()` until it is true (an OSError counts as not yet), failing after `bound` s."""
    deadline = time.time() + bound
    while True:
        try:
            if ready():
                return
        except OSError:
            pass
        assert time.time() < deadline, f"{what} within {bound} s"
        time.sleep(0.05)


def start(binary, port, env):
    """`<binary> serve --foreground` on `port` with `env`, once it answers `/status` (20 s bound)."""
    daemon = subprocess.Popen([binary, "serve", "--foreground", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(f"the daemon on {port} answers /status",
             lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=1).read(), 20)
    return daemon


def start_app(app_port):
    """The fixture app (apps/e2e/dev-server.mjs) on `app_port`, once it serves its page."""
    app = subprocess.Popen(["node", os.path.join(ROOT, "apps/e2e/dev-server.mjs"), str(app_port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for("the app answers", lambda: urllib.request.urlopen(f"http://127.0.0.1:{app_port}/", timeout=5).read())
    return app


def page_url(app_port, daemon_port, state_dir, session):
    """The fixture page's URL that pairs its SDK with the daemon on `daemon_port` as `session`."""
    token = open(os.path.join(state_dir, "pairing-token")).read().strip()
    return f"http://127.0.0.1:{app_port}/?reticlePort={daemon_port}&reticleToken={token}&session={session}"


class UnattachedChromium:
    """Debian's Chromium, headless, started on `url` with a fresh profile and nothing connected to
    its DevTools: the page as in a browser nobody is debugging."""

    def __init__(self, url):
        self.profile = tempfile.mkdtemp()
        self.process = subprocess.Popen(
            ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={self.profile}", url],
            env=dict(os.environ, TMPDIR=self.profile), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        """Kills the browser and removes its profile, trying again while its helpers, which
        outlive it for a moment, still write there."""
        self.process.kill()
        self.process.wait()
        wait_for("the profile is removed", lambda: not subprocess.run(
            ["rm", "-rf", self.profile], stderr=subprocess.DEVNULL).returncode, 10)


class StdioAgent:
    """A stand-in agent: JSON-RPC lines on the stdio of `<binary> mcp --port <port>`."""

    def __init__(self, binary, port, env):
        self.proxy = subprocess.Popen([binary, "mcp", "--port", str(port)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0)
        self.fd, self.buf, self.n = self.proxy.stdout.fileno(), b"", 0

    def call(self, method, params):
        """Sends one request and returns its answer (lines for other ids are skipped)."""
        self.n += 1
        os.write(self.proxy.stdin.fileno(),
                 (json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n").encode())
        while True:
            while b"\n" not in self.buf:
                self.buf += os.read(self.fd, 65536)
            line, self.buf = self.buf.split(b"\n", 1)
            answer = json.loads(line)
            if answer.get("id") == self.n:
                return answer

    def tool(self, name, arguments):
        """Calls tool `name`; its result, asserted not to be an error."""
        answer = self.call("tools/call", {"name": name, "arguments": arguments})
        assert "result" in answer and not answer["result"].get("isError"), answer
        return answer["result"]

    def initialize(self, name="bench"):
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": name, "version": "1"}})
        os.write(self.proxy.stdin.fileno(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def stop(self):
        self.proxy.stdin.close()
        self.proxy.wait()


def quantile(xs, f):
    """The `f` quantile of `xs` (seconds), in microseconds."""
    xs = sorted(xs)
    return xs[int(round((len(xs) - 1) * f))] * 1e6
