"""The page's share of a command with no DevTools client attached: a daemon (harness routes on),
the fixture app (apps/e2e/dev-server.mjs), and Debian's Chromium started headless on the app's
URL with nothing connected to it; then commands through `POST /bridge/commands`, each timed by the
daemon from send to answer (`roundTripUs`): an unknown command (the SDK refuses it at once: the
transport floor) and `query {testid: login-submit}`, in alternating blocks. It measures; it asserts
nothing. Usage: python3 scripts/bridge_unattached.py <reticle> <daemon port> <app port> [commands]
(ports: free, below 32768)."""
import json, shutil, sys, urllib.request

import bench_daemon

binary, port, app_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
count = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
env = dict(bench_daemon.private_env(), RETICLE_HARNESS_ROUTES="1", RETICLE_IDLE_SHUTDOWN_MS="60000")
state = env["RETICLE_STATE_DIR"]
daemon = bench_daemon.start(binary, port, env)
app = bench_daemon.start_app(app_port)
browser = bench_daemon.UnattachedChromium(bench_daemon.page_url(app_port, port, state, "bench"))


def command(name, args):
    body = json.dumps({"session": "bench", "name": name, "args": args}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/bridge/commands", data=body,
                                     headers={"content-type": "application/json"})
    return json.loads(urllib.request.urlopen(request, timeout=10).read())


bench_daemon.wait_for("the page's session answers a query", lambda: command("query", {"testid": "login-submit"}).get("ok"))
kinds = {"unknown command": ("nope", {}), "query {testid: login-submit}": ("query", {"testid": "login-submit"})}
for name, args in kinds.values():
    for _ in range(100):
        command(name, args)
samples = {kind: [] for kind in kinds}
for _ in range(5):
    for kind, (name, args) in kinds.items():
        samples[kind].extend(command(name, args)["roundTripUs"] for _ in range(count // 5))
for kind, xs in samples.items():
    xs.sort()
    print(f"{kind}, no DevTools attached: median {xs[len(xs) // 2]} us, p90 {xs[int(len(xs) * 0.9)]} us ({len(xs)} commands)")
browser.stop()
for process in (app, daemon):
    process.kill()
    process.wait()
shutil.rmtree(state, ignore_errors=True)
