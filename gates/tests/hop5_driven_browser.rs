//! A browser Reticle drives (`reticle_session {action:"launch"|"attach"}`), through the whole
//! stack: a real daemon with a private temporary dir (so its Chromium and profiles are found by
//! path, never by port), the fixture app serving pages nobody wired, and an agent's `reticle
//! mcp`. Zero install, the app's own SDK never doubled, loopback-only refusals, no orphan after
//! a SIGKILL, a relaunch after the browser died, attach, a strict CSP and a page that hangs.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use gates::rows::hop5::driven::DrivenRig;
use gates::scenarios::GateEnv;
use harness::{FixtureApp, McpClient, OwnedDaemon, ProxyOptions, poll};
use serde_json::{Value, json};

const BOUND: Duration = Duration::from_secs(30);

/// A page with no SDK in it.
const UNWIRED: &str = r#"<!doctype html>
<html><head><title>Unwired</title></head>
<body>
  <h1>Nobody wired this page</h1>
  <button data-testid="add" onclick="window.n=(window.n||0)+1; document.getElementById('out').textContent='Added ' + window.n">Add</button>
  <p id="out" data-testid="out"></p>
</body></html>"#;

/// A page whose app loads our SDK itself (the fixture serves it) and connects to `?port=&token=`.
const WIRED: &str = r#"<!doctype html>
<html><head><title>Wired</title></head>
<body>
  <button data-testid="add">Add</button>
  <script type="module">
    import * as reticle from '/sdk/reticle.js';
    const q = new URLSearchParams(location.search);
    window.said = reticle.connect({ port: Number(q.get('port')), token: q.get('token'), present: false });
  </script>
</body></html>"#;

/// A page that shows its own width.
const WIDTH: &str = r#"<!doctype html>
<html><head><title>Width</title><meta name="viewport" content="width=device-width"></head>
<body><p data-testid="w"></p>
<script>
  const show = () => { document.querySelector('[data-testid=w]').textContent = 'width ' + innerWidth; };
  addEventListener('resize', show); show();
</script></body></html>"#;

/// A page that tells trusted events from synthetic ones, with a button under an overlay.
const INPUT: &str = r#"<!doctype html>
<html><head><title>Input</title>
<style>#cover { position: fixed; left: 0; top: 300px; width: 400px; height: 100px; background: #eee; }
#under { position: fixed; left: 20px; top: 320px; }</style></head>
<body>
  <button data-testid="press" onclick="document.getElementById('said').textContent = 'clicked trusted ' + event.isTrusted">Press</button>
  <span data-testid="hover" onmouseenter="document.getElementById('said').textContent = 'hovered trusted ' + event.isTrusted">Hover me</span>
  <input data-testid="name" onkeydown="window.keys = (window.keys || 0) + (event.isTrusted ? 1 : 0)" oninput="document.getElementById('typed').textContent = 'typed ' + this.value + ' keys ' + (window.keys || 0)">
  <button data-testid="wipe" onclick="document.getElementById('said').textContent = 'wiped'">Delete everything</button>
  <p data-testid="said" id="said"></p><p data-testid="typed" id="typed"></p>
  <button data-testid="under" id="under" onclick="document.getElementById('said').textContent = 'under clicked'">Under</button>
  <div id="cover" data-testid="cover" aria-label="Cookie banner" role="dialog">Cookies</div>
</body></html>"#;

/// A page that fetches `/api/thing` and shows what came back.
const FETCHES: &str = r#"<!doctype html><title>Fetches</title>
<button data-testid="load" onclick="fetch('/api/thing?n=' + Math.random()).then(async (r) => { document.getElementById('got').textContent = 'got ' + r.status + ' ' + (await r.text()); }, () => { document.getElementById('got').textContent = 'got failed'; })">Load</button>
<p id="got" data-testid="got"></p>"#;

/// A page whose CSP allows no script but its own origin's and no connection anywhere else.
const STRICT_CSP: &str = r#"<!doctype html>
<html><head><title>Strict</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self'; connect-src 'self'">
</head>
<body><button data-testid="go">Go</button></body></html>"#;

/// A page that never stops running its script.
const HUNG: &str = r#"<!doctype html>
<html><head><title>Hung</title></head>
<body><p>spinning</p><script>for (;;) {}</script></body></html>"#;

/// The driven stack (`gates::rows::hop5::driven::DrivenRig`: a daemon with a private `TMPDIR`,
/// the fixture app, an agent's `reticle mcp`) serving this file's pages.
struct Rig(DrivenRig);

impl std::ops::Deref for Rig {
    type Target = DrivenRig;
    fn deref(&self) -> &DrivenRig {
        &self.0
    }
}

impl Rig {
    async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// The rig, with `env` set on the daemon.
    async fn start_with(env: &[(&str, &str)]) -> Self {
        let gate = GateEnv {
            reticle: harness::binaries::reticle(),
        };
        let rig = DrivenRig::start(&gate, env)
            .await
            .unwrap_or_else(|why| panic!("the driven stack did not start: {why}"));
        for (path, page) in [
            ("/unwired.html", UNWIRED),
            ("/wired.html", WIRED),
            ("/strict.html", STRICT_CSP),
            ("/hung.html", HUNG),
            ("/width.html", WIDTH),
            ("/input.html", INPUT),
            ("/fetches.html", FETCHES),
        ] {
            rig.app.page(path, page);
        }
        Self(rig)
    }

    async fn result(&self, tool: &str, args: Value) -> Value {
        self.client
            .call_tool(tool, args.clone())
            .await
            .unwrap_or_else(|e| panic!("{tool} {args}: {e:?}"))
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.result(tool, args.clone()).await;
        assert_ne!(result["isError"], true, "{tool} {args} refused: {result}");
        result["structuredContent"].clone()
    }

    async fn refused(&self, tool: &str, args: Value) -> Value {
        let result = self.result(tool, args.clone()).await;
        assert_eq!(
            result["isError"], true,
            "{tool} {args} was not refused: {result}"
        );
        let refusal = result["structuredContent"].clone();
        assert_eq!(refusal["ok"], false, "{refusal}");
        assert!(refusal["recovery"].is_string(), "{refusal}");
        refusal
    }

    async fn launch(&self, path: &str) -> Value {
        let url = self.app.url(path);
        self.ok("reticle_session", json!({"action": "launch", "url": url}))
            .await
    }

    async fn listed(&self, session: &str) -> Option<Value> {
        let listed = self.ok("reticle_sessions", json!({})).await;
        listed["sessions"]
            .as_array()?
            .iter()
            .find(|s| s["sessionId"] == session)
            .cloned()
    }

    /// The processes (the keeper, Chromium and its helpers) running on a profile in this
    /// daemon's temporary dir.
    fn browser_processes(&self) -> Vec<u32> {
        harness::driven::processes(self.tmp.path())
    }

    /// Chromium itself: the process of a profile here that is no helper and no keeper.
    fn chromium_pid(&self) -> Option<u32> {
        harness::driven::chromium(self.tmp.path())
    }

    fn profiles(&self) -> Vec<PathBuf> {
        harness::driven::profiles(self.tmp.path())
    }
}

#[tokio::test]
async fn an_unwired_page_gets_the_injected_sdk_and_the_tools_work_on_it() {
    let rig = Rig::start().await;
    let opened = rig.launch("/unwired.html").await;
    assert_eq!(opened["driven"], "launched", "{opened}");
    assert_eq!(opened["sdk"], "injected", "{opened}");
    let session = opened["sessionId"].as_str().unwrap().to_string();

    let entry = rig
        .listed(&session)
        .await
        .expect("the driven session is listed");
    assert_eq!(entry["driven"], "launched", "{entry}");
    assert_eq!(entry["sdk"], "injected", "{entry}");

    let found = rig
        .ok(
            "reticle_query",
            json!({"sessionId": session, "by": "testid", "value": "add"}),
        )
        .await;
    assert_eq!(
        found["elements"].as_array().map(Vec::len),
        Some(1),
        "{found}"
    );

    let yes = rig
        .ok(
            "reticle_act_and_wait",
            json!({
                "sessionId": session,
                "target": {"testid": "add"},
                "action": "click",
                "until": {"kind": "text", "contains": "Added 1"},
            }),
        )
        .await;
    assert_eq!(yes["verified"], "yes", "{yes}");
    // The control: a consequence the page never shows is not a yes.
    let not = rig
        .ok(
            "reticle_act_and_wait",
            json!({
                "sessionId": session,
                "target": {"testid": "add"},
                "action": "click",
                "until": {"kind": "text", "contains": "Removed"},
                "timeout_ms": 300,
            }),
        )
        .await;
    assert_ne!(not["verified"], "yes", "{not}");
}

#[tokio::test]
async fn a_page_that_loads_the_sdk_itself_keeps_its_own_and_is_one_session() {
    let rig = Rig::start().await;
    let path = format!(
        "/wired.html?port={}&token={}",
        rig.daemon.port(),
        rig.daemon.token()
    );
    let opened = rig.launch(&path).await;
    assert_eq!(opened["sdk"], "app", "{opened}");
    let session = opened["sessionId"].as_str().unwrap();
    let listed = rig.ok("reticle_sessions", json!({})).await;
    assert_eq!(listed["count"], 1, "one tab, one session: {listed}");
    assert_eq!(listed["sessions"][0]["sessionId"], session, "{listed}");
    assert_eq!(listed["sessions"][0]["sdk"], "app", "{listed}");
}

#[tokio::test]
async fn what_is_not_loopback_is_refused_before_any_browser_starts() {
    let rig = Rig::start().await;
    for (args, needle) in [
        (
            json!({"action": "launch", "url": "http://example.com/"}),
            "not this machine",
        ),
        (
            json!({"action": "launch", "url": "file:///etc/passwd"}),
            "only http: and https:",
        ),
        (json!({"action": "launch"}), "needs `url`"),
        (
            json!({"action": "attach", "cdp": "http://10.1.2.3:9222", "url": rig.app.url("/unwired.html")}),
            "not this machine",
        ),
        (
            json!({"action": "attach", "url": rig.app.url("/unwired.html")}),
            "needs `cdp`",
        ),
    ] {
        let refusal = rig.refused("reticle_session", args.clone()).await;
        let reason = refusal["reason"].as_str().unwrap();
        assert!(reason.contains(needle), "{args}: {refusal}");
    }
    assert!(rig.browser_processes().is_empty(), "no browser was started");
    assert!(rig.profiles().is_empty(), "no profile was made");
}

#[tokio::test]
async fn a_killed_daemon_leaves_no_browser_and_no_profile() {
    let rig = Rig::start().await;
    rig.launch("/unwired.html").await;
    assert!(rig.chromium_pid().is_some(), "the driven Chromium runs");
    assert_eq!(
        rig.profiles().len(),
        1,
        "its profile is in the daemon's temporary dir"
    );

    support::kill_and_wait(rig.daemon.pid()).await;
    poll::until(
        "the driven browser to end with its daemon",
        BOUND,
        async || (rig.browser_processes().is_empty() && rig.profiles().is_empty()).then_some(()),
    )
    .await;
}

/// The control: a Chromium launched without its keeper outlives the killed daemon, and the same
/// check sees it left behind.
#[tokio::test]
async fn the_orphan_check_goes_red_on_a_browser_launched_without_its_keeper() {
    let rig = Rig::start_with(&[("RETICLE_TEST_STAND_IN_CHROMIUM_UNKEPT", "1")]).await;
    rig.launch("/unwired.html").await;
    let chromium = rig.chromium_pid().expect("the driven Chromium runs");
    support::kill_and_wait(rig.daemon.pid()).await;
    let cleaned = poll::within(Duration::from_secs(2), async || {
        (rig.browser_processes().is_empty() && rig.profiles().is_empty()).then_some(())
    })
    .await;
    assert!(
        cleaned.is_none(),
        "an unkept browser must be seen left behind"
    );
    support::kill_and_wait(chromium).await;
    for pid in rig.browser_processes() {
        support::kill_and_wait(pid).await;
    }
}

#[tokio::test]
async fn a_driven_browser_that_died_is_launched_again_by_the_next_call_which_says_so() {
    let rig = Rig::start().await;
    let opened = rig.launch("/unwired.html").await;
    let session = opened["sessionId"].as_str().unwrap().to_string();
    let chromium = rig.chromium_pid().expect("the driven Chromium runs");
    support::kill_and_wait(chromium).await;
    poll::until("the dead tab's session to go", BOUND, async || {
        rig.listed(&session).await.is_none().then_some(())
    })
    .await;

    let found = rig
        .ok(
            "reticle_query",
            json!({"sessionId": session, "by": "testid", "value": "add"}),
        )
        .await;
    assert!(
        found["relaunched"]
            .as_str()
            .is_some_and(|n| n.contains("launched it again")),
        "{found}"
    );
    assert_eq!(
        found["elements"].as_array().map(Vec::len),
        Some(1),
        "{found}"
    );
    let again = rig.chromium_pid().expect("a new Chromium runs");
    assert_ne!(again, chromium);
}

#[tokio::test]
async fn a_strict_csp_page_still_gets_the_sdk() {
    let rig = Rig::start().await;
    let opened = rig.launch("/strict.html").await;
    assert_eq!(opened["sdk"], "injected", "{opened}");
    let session = opened["sessionId"].as_str().unwrap();
    let found = rig
        .ok(
            "reticle_query",
            json!({"sessionId": session, "by": "testid", "value": "go"}),
        )
        .await;
    assert_eq!(
        found["elements"].as_array().map(Vec::len),
        Some(1),
        "{found}"
    );
}

#[tokio::test]
async fn a_page_that_hangs_is_refused_within_its_bound_and_the_daemon_still_answers() {
    let rig = Rig::start().await;
    let url = rig.app.url("/hung.html");
    let refusal = rig
        .refused("reticle_session", json!({"action": "launch", "url": url}))
        .await;
    let reason = refusal["reason"].as_str().unwrap();
    assert!(reason.contains("did not"), "{refusal}");
    // Nothing is listed for it, and the daemon answers the next call.
    let listed = rig.ok("reticle_sessions", json!({})).await;
    assert_eq!(listed["count"], 0, "{listed}");
}

#[tokio::test]
async fn attach_drives_a_tab_in_a_chromium_a_person_started() {
    let rig = Rig::start().await;
    let person = PersonsChromium::start();
    let endpoint = person.endpoint().await;
    let opened = rig
        .ok(
            "reticle_session",
            json!({"action": "attach", "cdp": endpoint, "url": rig.app.url("/unwired.html")}),
        )
        .await;
    assert_eq!(opened["driven"], "attached", "{opened}");
    assert_eq!(opened["sdk"], "injected", "{opened}");
    let session = opened["sessionId"].as_str().unwrap();
    let entry = rig.listed(session).await.expect("listed");
    assert_eq!(entry["driven"], "attached", "{entry}");
    assert!(rig.browser_processes().is_empty(), "nothing was launched");
    // The control: nothing answers on a closed endpoint, and the refusal names it.
    drop(person);
    let refusal = rig
        .refused(
            "reticle_session",
            json!({"action": "attach", "cdp": "http://127.0.0.1:9", "url": rig.app.url("/unwired.html")}),
        )
        .await;
    assert!(
        refusal["reason"].as_str().unwrap().contains("127.0.0.1:9"),
        "{refusal}"
    );
}

/// A Chromium started the way a person would, with a DevTools port, in its own temporary
/// profile; killed on drop.
struct PersonsChromium {
    child: std::process::Child,
    _profile: tempfile::TempDir,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl PersonsChromium {
    fn start() -> Self {
        let profile = tempfile::tempdir().unwrap();
        let mut command = std::process::Command::new(reticle::chromium::chromium_path());
        command
            .arg("--headless")
            .args(reticle::config::CHROMIUM_FLAGS)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("--remote-debugging-port=0")
            .arg("about:blank")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        harness::marker::mark(&mut command);
        let mut child = command.spawn().expect("chromium starts");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let said = stderr.clone();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                said.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Self {
            child,
            _profile: profile,
            stderr,
        }
    }

    /// `http://127.0.0.1:<port>`, read from the line Chromium prints once DevTools listens.
    async fn endpoint(&self) -> String {
        poll::until(
            "the person's Chromium to open DevTools",
            BOUND,
            async || {
                let said = self.stderr.lock().unwrap().clone();
                let ws = said
                    .split("DevTools listening on ")
                    .nth(1)?
                    .lines()
                    .next()?;
                let port = ws.strip_prefix("ws://127.0.0.1:")?.split('/').next()?;
                Some(format!("http://127.0.0.1:{port}"))
            },
        )
        .await
    }
}

impl Drop for PersonsChromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `reticle mcp --drive URL`, as an agent's config starts it: the agent's first call finds the
/// driven session (zero install); the proxy ending ends the tab and the browser with it.
#[tokio::test]
async fn mcp_drive_gives_the_agent_a_tab_of_its_own_that_ends_with_its_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::builder()
        .env("TMPDIR", tmp.path().to_string_lossy().to_string())
        .env(
            "RETICLE_PROJECT_DIR",
            project.path().to_string_lossy().to_string(),
        )
        .env("RETICLE_LEASE_LINK_GRACE_MS", "300")
        .start()
        .await;
    let app = FixtureApp::start().await;
    app.page("/unwired.html", UNWIRED);
    let url = app.url("/unwired.html");
    let port = daemon.port().to_string();
    let args: Vec<String> = ["mcp", "--port", &port, "--drive", &url]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let client = McpClient::start(ProxyOptions::new(daemon.port(), daemon.state_dir()).args(&args))
        .await
        .expect("reticle mcp --drive starts");
    let found = client
        .call_tool("reticle_query", json!({"by": "testid", "value": "add"}))
        .await
        .unwrap();
    assert_ne!(found["isError"], true, "{found}");
    assert_eq!(
        found["structuredContent"]["elements"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "{found}"
    );
    let listed = client
        .call_tool("reticle_sessions", json!({}))
        .await
        .unwrap();
    let entry = &listed["structuredContent"]["sessions"][0];
    assert_eq!(entry["driven"], "launched", "{listed}");
    assert_eq!(entry["sdk"], "injected", "{listed}");

    assert!(!harness::driven::processes(tmp.path()).is_empty());
    client.close().await;
    poll::until(
        "the agent's browser to end with its proxy",
        BOUND,
        async || {
            harness::driven::processes(tmp.path())
                .is_empty()
                .then_some(())
        },
    )
    .await;
    drop(daemon);
}

#[tokio::test]
async fn mcp_drive_refuses_a_url_that_is_not_loopback_before_anything_starts() {
    let state = tempfile::tempdir().unwrap();
    let output = tokio::process::Command::new(harness::binaries::reticle())
        .args(["mcp", "--port", "9", "--drive", "http://example.com/"])
        .env("RETICLE_STATE_DIR", state.path())
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("not this machine"), "{said}");
    assert!(
        std::fs::read_dir(state.path()).unwrap().next().is_none(),
        "nothing was started: the state dir is untouched"
    );
}

/// An extended tool, reached as an agent reaches one: through `reticle_run`.
async fn run(rig: &Rig, tool: &str, args: Value) -> Value {
    rig.result("reticle_run", json!({"tool": tool, "args": args}))
        .await
}

#[tokio::test]
async fn viewport_refresh_and_wait_ready_work_on_a_driven_tab() {
    let rig = Rig::start().await;
    let waited = run(&rig, "reticle_wait_ready", json!({"timeoutMs": 100})).await;
    assert_eq!(waited["structuredContent"]["ready"], false, "{waited}");
    let too_long = run(&rig, "reticle_wait_ready", json!({"timeoutMs": 40000})).await;
    assert_eq!(too_long["isError"], true, "{too_long}");

    let opened = rig.launch("/width.html").await;
    let session = opened["sessionId"].as_str().unwrap();
    let waited = run(&rig, "reticle_wait_ready", json!({})).await;
    assert_eq!(waited["structuredContent"]["ready"], true, "{waited}");
    assert_eq!(waited["structuredContent"]["sessionCount"], 1, "{waited}");

    let set = run(
        &rig,
        "reticle_viewport",
        json!({"sessionId": session, "width": 414, "height": 800, "mobile": true}),
    )
    .await;
    assert_eq!(set["structuredContent"]["applied"], true, "{set}");
    let shown = rig
        .ok(
            "reticle_wait_for",
            json!({"sessionId": session, "predicate": {"kind": "text", "contains": "width 414"}, "timeout_ms": 5000}),
        )
        .await;
    assert_eq!(
        shown["status"], "pass",
        "the page sees the width it was given: {shown}"
    );
    // The control: a width the page was not given is not seen.
    let other = rig
        .ok(
            "reticle_wait_for",
            json!({"sessionId": session, "predicate": {"kind": "text", "contains": "width 1024"}, "timeout_ms": 200}),
        )
        .await;
    assert_ne!(other["status"], "pass", "{other}");
    let bad = run(
        &rig,
        "reticle_viewport",
        json!({"sessionId": session, "width": 0, "height": 800}),
    )
    .await;
    assert_eq!(bad["isError"], true, "{bad}");

    let refreshed = run(&rig, "reticle_refresh", json!({"sessionId": session})).await;
    assert_eq!(
        refreshed["structuredContent"]["confirmed"], true,
        "{refreshed}"
    );
}

#[tokio::test]
async fn a_tool_that_needs_devtools_refuses_on_a_persons_tab_naming_drive() {
    let rig = support::tools::ToolRig::start(&[]).await;
    rig.open("persons-tab").await;
    let refusal = rig
        .refused(
            "reticle_run",
            json!({"tool": "reticle_viewport", "args": {"width": 400, "height": 600}}),
        )
        .await;
    assert!(
        refusal["reason"]
            .as_str()
            .unwrap()
            .contains("a person's tab"),
        "{refusal}"
    );
    assert!(
        refusal["recovery"].as_str().unwrap().contains("--drive"),
        "{refusal}"
    );
    // The same session still answers what needs no DevTools.
    rig.ok("reticle_query", json!({"by": "role", "value": "button"}))
        .await;
}

async fn act_and_see(
    rig: &Rig,
    session: &str,
    target: &str,
    action: &str,
    args: Value,
    shows: &str,
) -> Value {
    rig.ok(
        "reticle_act_and_wait",
        json!({
            "sessionId": session, "target": {"testid": target}, "action": action, "args": args,
            "until": {"kind": "text", "contains": shows}, "timeout_ms": 3000,
        }),
    )
    .await
}

#[tokio::test]
async fn acts_on_a_driven_tab_are_real_input_and_a_covered_element_is_refused() {
    let rig = Rig::start().await;
    let opened = rig.launch("/input.html").await;
    let session = opened["sessionId"].as_str().unwrap();

    let clicked = act_and_see(
        &rig,
        session,
        "press",
        "click",
        json!({}),
        "clicked trusted true",
    )
    .await;
    assert_eq!(clicked["verified"], "yes", "{clicked}");
    assert_eq!(clicked["act"]["inputMode"], "real", "{clicked}");
    let hovered = act_and_see(
        &rig,
        session,
        "hover",
        "hover",
        json!({}),
        "hovered trusted true",
    )
    .await;
    assert_eq!(hovered["verified"], "yes", "{hovered}");
    let typed = act_and_see(
        &rig,
        session,
        "name",
        "type",
        json!({"text": "ann"}),
        "typed ann keys 3",
    )
    .await;
    assert_eq!(
        typed["verified"], "yes",
        "each key was a trusted keydown: {typed}"
    );
    let filled = act_and_see(
        &rig,
        session,
        "name",
        "fill",
        json!({"value": "bo"}),
        "typed bo",
    )
    .await;
    assert_eq!(
        filled["verified"], "yes",
        "fill replaced the text: {filled}"
    );

    let act = rig
        .ok(
            "reticle_act",
            json!({"sessionId": session, "target": {"testid": "press"}, "action": "click"}),
        )
        .await;
    assert_eq!(act["inputMode"], "real", "{act}");

    let sequence = rig
        .ok(
            "reticle_act_sequence",
            json!({"sessionId": session, "steps": [{"target": {"testid": "press"}, "action": "click"}]}),
        )
        .await;
    assert_eq!(sequence["steps"][0]["inputMode"], "real", "{sequence}");

    // Covered: refused naming what is on top, and the covered button never clicked.
    let covered = rig
        .refused(
            "reticle_act",
            json!({"sessionId": session, "target": {"testid": "under"}, "action": "click"}),
        )
        .await;
    let reason = covered["reason"].as_str().unwrap();
    assert!(
        reason.contains("covered by") && reason.contains("Cookie"),
        "{covered}"
    );
    let said = rig
        .ok(
            "reticle_query",
            json!({"sessionId": session, "by": "text", "value": "under clicked"}),
        )
        .await;
    assert_eq!(said["elements"].as_array().map(Vec::len), Some(0), "{said}");

    // Destructive: blocked without confirmDangerous, done with it.
    let blocked = rig
        .refused(
            "reticle_act",
            json!({"sessionId": session, "target": {"testid": "wipe"}, "action": "click"}),
        )
        .await;
    assert!(
        blocked["reason"]
            .as_str()
            .unwrap()
            .contains("confirmDangerous"),
        "{blocked}"
    );
    let wiped = act_and_see(
        &rig,
        session,
        "wipe",
        "click",
        json!({"confirmDangerous": true}),
        "wiped",
    )
    .await;
    assert_eq!(wiped["verified"], "yes", "{wiped}");

    // An action with no real form goes through the SDK, and says so.
    let focused = rig
        .ok(
            "reticle_act",
            json!({"sessionId": session, "target": {"testid": "name"}, "action": "focus"}),
        )
        .await;
    assert_eq!(focused["inputMode"], "synthetic", "{focused}");
    assert!(focused["inputModeReason"].as_str().is_some(), "{focused}");
}

#[tokio::test]
async fn on_a_persons_tab_acts_stay_synthetic_and_say_why() {
    let rig = support::tools::ToolRig::start(&[]).await;
    rig.open("persons-acts").await;
    let act = rig
        .ok(
            "reticle_act",
            json!({"target": {"testid": "counter-increment"}, "action": "click"}),
        )
        .await;
    assert_eq!(act["inputMode"], "synthetic", "{act}");
    assert!(
        act["inputModeReason"]
            .as_str()
            .unwrap()
            .contains("person's tab"),
        "{act}"
    );
}

#[tokio::test]
async fn network_mocks_answer_abort_list_and_clear_on_a_driven_tab() {
    let rig = Rig::start().await;
    let opened = rig.launch("/fetches.html").await;
    let session = opened["sessionId"].as_str().unwrap();
    let load = |shows: &str| {
        json!({"sessionId": session, "target": {"testid": "load"}, "action": "click",
               "until": {"kind": "text", "contains": shows}, "timeout_ms": 3000})
    };
    // The control: unmocked, the fixture app answers (no such API: 404), never the mock's body.
    let real = rig.ok("reticle_act_and_wait", load("got 404")).await;
    assert_eq!(real["verified"], "yes", "{real}");
    assert!(real.get("mocked").is_none(), "{real}");

    let set = run(
        &rig,
        "reticle_network_mock",
        json!({"sessionId": session, "mocks": [
            {"urlContains": "/api/thing", "method": "get", "status": 201, "body": "from the mock"}
        ]}),
    )
    .await;
    assert_eq!(set["structuredContent"]["applied"], true, "{set}");
    let mocked = rig
        .ok("reticle_act_and_wait", load("got 201 from the mock"))
        .await;
    assert_eq!(mocked["verified"], "yes", "{mocked}");
    assert_eq!(
        mocked["mocked"]["requests"], 1,
        "the verdict says it saw mocked traffic: {mocked}"
    );
    assert!(
        mocked["mocked"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("mocked traffic only")),
        "{mocked}"
    );

    // A malformed rule is refused and leaves the rules in force.
    let bad = run(
        &rig,
        "reticle_network_mock",
        json!({"sessionId": session, "rules": [{"urlContains": "/api", "status": 900}]}),
    )
    .await;
    assert_eq!(bad["isError"], true, "{bad}");
    let listed = run(
        &rig,
        "reticle_network_mock",
        json!({"sessionId": session, "list": true}),
    )
    .await;
    assert_eq!(listed["structuredContent"]["count"], 1, "{listed}");
    assert_eq!(listed["structuredContent"]["answered"], 1, "{listed}");

    let aborting = run(
        &rig,
        "reticle_network_mock",
        json!({"sessionId": session, "rules": [{"urlContains": "/api/thing", "abort": true}]}),
    )
    .await;
    assert_eq!(aborting["structuredContent"]["applied"], true, "{aborting}");
    let failed = rig.ok("reticle_act_and_wait", load("got failed")).await;
    assert_eq!(failed["verified"], "yes", "{failed}");

    let cleared = run(
        &rig,
        "reticle_network_mock",
        json!({"sessionId": session, "clear": true}),
    )
    .await;
    assert_eq!(cleared["structuredContent"]["cleared"], 1, "{cleared}");
    let again = rig.ok("reticle_act_and_wait", load("got 404")).await;
    assert_eq!(
        again["verified"], "yes",
        "the app's own answer is back: {again}"
    );
}

/// A page on the published `@reticlehq/browser` 2.0.0 (built at test time), driven: its own SDK
/// is kept (one session, `sdk: app`), and real input works through what protocol 1 guarantees
/// (act scrollIntoView, inspect).
#[tokio::test]
async fn a_page_on_the_published_sdk_is_driven_with_its_own_sdk_and_real_input() {
    let rig = Rig::start().await;
    let sdk = tokio::task::spawn_blocking(harness::published_sdk::PublishedSdk::build)
        .await
        .unwrap()
        .unwrap_or_else(|why| panic!("could not build the published SDK bundle: {why}"));
    let bundle = std::fs::read_to_string(sdk.bundle()).unwrap();
    rig.app
        .file("/published/reticle-sdk.mjs", "text/javascript", bundle);
    rig.app.page(
        "/published.html",
        r#"<!doctype html><title>Published</title>
<button data-testid="press" onclick="document.getElementById('said').textContent = 'clicked trusted ' + event.isTrusted">Press</button>
<p id="said"></p>
<script type="module">
  import { reticle } from '/published/reticle-sdk.mjs';
  const q = new URLSearchParams(location.search);
  reticle.connect({ url: `ws://127.0.0.1:${q.get('port')}/reticle`, token: q.get('token'), present: false });
</script>"#,
    );
    let path = format!(
        "/published.html?port={}&token={}",
        rig.daemon.port(),
        rig.daemon.token()
    );
    let opened = rig.launch(&path).await;
    assert_eq!(opened["sdk"], "app", "{opened}");
    let session = opened["sessionId"].as_str().unwrap();
    let listed = rig.ok("reticle_sessions", json!({})).await;
    assert_eq!(listed["count"], 1, "one tab, one session: {listed}");
    let clicked = act_and_see(
        &rig,
        session,
        "press",
        "click",
        json!({}),
        "clicked trusted true",
    )
    .await;
    assert_eq!(clicked["verified"], "yes", "{clicked}");
    assert_eq!(clicked["act"]["inputMode"], "real", "{clicked}");
}
