"""What the hand-run measurement scripts share: a private state dir's environment and a daemon
started on it, waited for until it answers `/status` (imported by the scripts beside it)."""
import os, subprocess, tempfile, time, urllib.request


def private_env():
    """The environment of a run with a state dir (and project dir) of its own."""
    state = tempfile.mkdtemp()
    return dict(os.environ, RETICLE_STATE_DIR=state, RETICLE_PROJECT_DIR=state, RETICLE_IDLE_SHUTDOWN_MS="20000")


def start(binary, port, env):
    """`<binary> serve --foreground` on `port` with `env`, once it answers `/status` (20 s bound)."""
    daemon = subprocess.Popen([binary, "serve", "--foreground", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=1).read()
            return daemon
        except OSError:
            assert time.time() < deadline, f"the daemon on {port} did not answer /status"
            time.sleep(0.05)
