//! The install gate, extended to the app: pristine projects created here with their stacks' own
//! tools at pinned versions (`create-vite`'s vanilla and react templates, a minimal Next.js app
//! installed from npm) are wired by the real `reticle init --write`, booted with their own dev
//! servers, opened in Chromium, and must appear in `reticle_sessions` with no other step. A
//! second `init --write` changes no byte, and a production build keeps nothing of the snippet.
//! The wiring type-checks: each TypeScript template (`create-vite`'s vanilla-ts, react-ts and
//! vue-ts, a TypeScript Next.js app) passes its own `build` script (`tsc`/`vue-tsc`, then the
//! bundler; `next build`), never only `vite build`.
//!
//! Needs the npm registry (the machine's only network); a scaffold or install that fails is a
//! failure of this test, never a skip. The negative controls: the same project without
//! `--write` (init only prints the lines, and no session ever appears), and the SDK imported by
//! its URL as a literal specifier, which `vue-tsc` refuses (TS2307).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use harness::{Browser, McpClient, OwnedDaemon, ProxyOptions, free_port, poll};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};

/// The scaffolding tools, pinned.
const CREATE_VITE: &str = "create-vite@9.3.0";
const NEXT: &str = "16.4.6";
const REACT: &str = "19.2.0";
/// How long a scaffold plus its install may take (the registry, on a loaded machine).
const INSTALL_BOUND: Duration = Duration::from_secs(300);
/// How long a dev server gets to serve its first page (Next.js compiles on the first request).
const PAGE_BOUND: Duration = Duration::from_secs(180);
/// How long a template's own build script may take (a type check and a production bundle).
const BUILD_BOUND: Duration = Duration::from_secs(600);
/// The TypeScript and type packages a TypeScript Next.js app declares, pinned.
const TYPESCRIPT: &str = "5.9.3";
const TYPES_REACT: &str = "19.2.6";
const TYPES_NODE: &str = "22.20.7";

/// A project in a temporary directory, and a private state dir for its daemon.
struct Project {
    _root: tempfile::TempDir,
    dir: PathBuf,
    state: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        let root = tempfile::tempdir().expect("a temporary dir");
        let dir = root.path().join("app");
        Self {
            _root: root,
            dir,
            state: tempfile::tempdir().expect("a private state dir"),
        }
    }

    /// Runs a command in `dir` (or the project's parent) to its end, within the install bound.
    fn run(&self, cwd: &Path, program: &str, args: &[&str]) {
        let output = self.output(cwd, program, args, INSTALL_BOUND);
        assert!(
            output.status.success(),
            "`{program} {}` failed in {} ({}): {}\n{}",
            args.join(" "),
            cwd.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The project's own `build` script, run to its end: whether it passed, and what it said.
    fn build(&self) -> (bool, String) {
        let output = self.output(&self.dir, "npm", &["run", "build"], BUILD_BOUND);
        let said = format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.success(), said)
    }

    /// Runs a command in `cwd` to its end within `bound`; its output whatever its status.
    fn output(
        &self,
        cwd: &Path,
        program: &str,
        args: &[&str],
        bound: Duration,
    ) -> std::process::Output {
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(cwd)
            .env("npm_config_update_notifier", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_audit", "false")
            .stdin(Stdio::null());
        harness::marker::mark(&mut command);
        command.env("NEXT_TELEMETRY_DISABLED", "1");
        assert_cmd::Command::from_std(command)
            .timeout(bound)
            .output()
            .expect("the command runs")
    }

    fn create_vite(&self, template: &str) {
        let parent = self.dir.parent().unwrap();
        self.run(
            parent,
            "npx",
            &[
                "-y",
                CREATE_VITE,
                "app",
                "--template",
                template,
                "--no-interactive",
            ],
        );
        self.run(&self.dir, "npm", &["install"]);
    }

    /// The smallest Next.js app: its package manifest, a root layout and a page.
    fn create_next(&self) {
        std::fs::create_dir_all(self.dir.join("app")).unwrap();
        let manifest = json!({
            "name": "next-app",
            "private": true,
            "scripts": { "dev": "next dev" },
            "dependencies": { "next": NEXT, "react": REACT, "react-dom": REACT },
        });
        std::fs::write(self.dir.join("package.json"), manifest.to_string()).unwrap();
        std::fs::write(
            self.dir.join("app/layout.js"),
            "export default function RootLayout({ children }) {\n  return <html lang=\"en\"><body>{children}</body></html>;\n}\n",
        )
        .unwrap();
        std::fs::write(
            self.dir.join("app/page.js"),
            "export default function Page() {\n  return <h1>next app</h1>;\n}\n",
        )
        .unwrap();
        self.run(&self.dir, "npm", &["install"]);
    }

    /// The smallest TypeScript Next.js app: [`Project::create_next`]'s, in `.tsx`, with the
    /// strict `tsconfig.json` `create-next-app` writes and its own `build` script.
    fn create_next_typescript(&self) {
        std::fs::create_dir_all(self.dir.join("app")).unwrap();
        let manifest = json!({
            "name": "next-ts-app",
            "private": true,
            "scripts": { "dev": "next dev", "build": "next build" },
            "dependencies": { "next": NEXT, "react": REACT, "react-dom": REACT },
            "devDependencies": {
                "typescript": TYPESCRIPT,
                "@types/react": TYPES_REACT,
                "@types/node": TYPES_NODE,
            },
        });
        std::fs::write(self.dir.join("package.json"), manifest.to_string()).unwrap();
        let tsconfig = json!({
            "compilerOptions": {
                "target": "ES2017", "lib": ["dom", "dom.iterable", "esnext"], "allowJs": true,
                "skipLibCheck": true, "strict": true, "noEmit": true, "esModuleInterop": true,
                "module": "esnext", "moduleResolution": "bundler", "resolveJsonModule": true,
                "isolatedModules": true, "jsx": "react-jsx", "incremental": true,
                "plugins": [{ "name": "next" }],
            },
            "include": ["next-env.d.ts", "**/*.ts", "**/*.tsx", ".next/types/**/*.ts"],
            "exclude": ["node_modules"],
        });
        std::fs::write(self.dir.join("tsconfig.json"), tsconfig.to_string()).unwrap();
        std::fs::write(
            self.dir.join("app/layout.tsx"),
            "export default function RootLayout({ children }: { children: React.ReactNode }) {\n  return <html lang=\"en\"><body>{children}</body></html>;\n}\n",
        )
        .unwrap();
        std::fs::write(
            self.dir.join("app/page.tsx"),
            "export default function Page() {\n  return <h1>next app</h1>;\n}\n",
        )
        .unwrap();
        self.run(&self.dir, "npm", &["install"]);
    }

    /// The text of every file under `dir` (a build's output), concatenated.
    fn built_text(&self, dir: &str) -> String {
        let mut text = String::new();
        let mut dirs = vec![self.dir.join(dir)];
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path
                    .extension()
                    .is_some_and(|ext| ext == "js" || ext == "html")
                {
                    text.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
                }
            }
        }
        text
    }

    /// `reticle init` on the project, for the daemon on `port`.
    async fn init(&self, port: u16, write: bool) -> harness::cli::Ran {
        let port = port.to_string();
        let mut args = vec![
            "init",
            "--dir",
            self.dir.to_str().unwrap(),
            "--port",
            &port,
            "--client",
            "claude",
        ];
        if write {
            args.push("--write");
        }
        harness::cli::run(self.state.path(), &args).await
    }

    /// The project's files other than its dependencies, with their bytes.
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        let mut dirs = vec![self.dir.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                let name = entry.file_name();
                if name == "node_modules" || name == ".next" || name == "dist" {
                    continue;
                }
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    files.push((path.clone(), std::fs::read(&path).unwrap()));
                }
            }
        }
        files.sort();
        files
    }
}

/// The dev server a stack runs.
#[derive(Clone, Copy)]
enum DevTool {
    Vite,
    Next,
}

impl DevTool {
    /// The program under `node_modules/.bin` and its arguments, serving on `port`.
    fn command(self, port: &str) -> (&'static str, Vec<&str>) {
        match self {
            DevTool::Vite => (
                "vite",
                vec!["--port", port, "--strictPort", "--host", "localhost"],
            ),
            DevTool::Next => (
                "next",
                vec!["dev", "--port", port, "--hostname", "localhost"],
            ),
        }
    }
}

/// A dev server in its own process group, ended with the group (Next.js starts children).
struct DevServer {
    child: Child,
    url: String,
}

impl DevServer {
    /// Starts `tool` on a free port.
    fn start(project: &Project, tool: DevTool) -> Self {
        let port = free_port();
        let port_text = port.to_string();
        let (program, args) = tool.command(&port_text);
        let mut command = Command::new(project.dir.join("node_modules/.bin").join(program));
        command
            .args(args)
            .current_dir(&project.dir)
            .env("NEXT_TELEMETRY_DISABLED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        harness::marker::mark(&mut command);
        let child = command.spawn().expect("the dev server starts");
        Self {
            child,
            url: format!("http://localhost:{port}/"),
        }
    }

    async fn serving(&self) -> bool {
        let client = reqwest::Client::new();
        poll::within(PAGE_BOUND, async || {
            let response = client.get(&self.url).send().await.ok()?;
            response.status().is_success().then_some(())
        })
        .await
        .is_some()
    }
}

impl Drop for DevServer {
    fn drop(&mut self) {
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// Boots the app with its dev server, opens it in Chromium, and asks `reticle_sessions` (through
/// a real `reticle mcp` on the daemon's port) until a page on the dev server's URL is listed.
/// `None` when it is listed; otherwise what was seen.
async fn page_listed(project: &Project, daemon_port: u16, server: DevServer) -> Option<String> {
    let _daemon = OwnedDaemon::builder()
        .port(daemon_port)
        .state_dir(project.state.path())
        .env(
            reticle::config::env::PROJECT_DIR,
            project.dir.display().to_string(),
        )
        .try_start()
        .await
        .expect("the app's daemon starts");
    assert!(server.serving().await, "{} never served a page", server.url);
    let browser = Browser::launch().await.expect("Chromium launches");
    let _tab = browser.open(&server.url).await.expect("the app opens");
    let client = McpClient::start(ProxyOptions::new(daemon_port, project.state.path()))
        .await
        .expect("reticle mcp starts");
    let mut last = Value::Null;
    let listed = poll::within(Duration::from_secs(30), async || {
        let result = client.call_tool("reticle_sessions", json!({})).await.ok()?;
        last = result["structuredContent"].clone();
        last["sessions"]
            .as_array()?
            .iter()
            .any(|s| {
                s["url"]
                    .as_str()
                    .is_some_and(|url| url.starts_with(&server.url))
            })
            .then_some(())
    })
    .await;
    client.close().await;
    browser.close().await;
    match listed {
        Some(()) => None,
        None => Some(format!(
            "reticle_sessions never listed {}: {last}",
            server.url
        )),
    }
}

/// `init --write` wires the project, says so, and a second run changes no byte.
async fn wire(project: &Project, daemon_port: u16, entry: &str) {
    let first = project.init(daemon_port, true).await;
    assert!(first.ok(), "{}", first.said());
    assert!(
        first
            .stdout
            .lines()
            .any(|line| line.starts_with("[✓]") && line.contains(entry)),
        "init --write did not say it wired {entry}: {}",
        first.said()
    );
    let wired = project.snapshot();
    let second = project.init(daemon_port, true).await;
    assert!(second.ok(), "{}", second.said());
    assert_eq!(
        project.snapshot(),
        wired,
        "a second init --write changed files"
    );
    assert!(
        second
            .stdout
            .lines()
            .any(|line| line.starts_with("[=]") && line.contains(entry)),
        "{}",
        second.said()
    );
}

#[tokio::test]
async fn a_vite_vanilla_app_wired_by_init_write_appears_in_sessions_and_builds_without_it() {
    let project = Project::new();
    project.create_vite("vanilla");
    let daemon_port = free_port();
    wire(&project, daemon_port, "src/main.js").await;
    builds_without_the_snippet(&project, "dist");
    let server = DevServer::start(&project, DevTool::Vite);
    if let Some(why) = page_listed(&project, daemon_port, server).await {
        panic!("{why}");
    }
}

#[tokio::test]
async fn a_vite_react_app_wired_by_init_write_appears_in_sessions() {
    let project = Project::new();
    project.create_vite("react");
    let daemon_port = free_port();
    wire(&project, daemon_port, "src/main.jsx").await;
    let server = DevServer::start(&project, DevTool::Vite);
    if let Some(why) = page_listed(&project, daemon_port, server).await {
        panic!("{why}");
    }
}

#[tokio::test]
async fn a_next_app_wired_by_init_write_appears_in_sessions() {
    let project = Project::new();
    project.create_next();
    let daemon_port = free_port();
    wire(&project, daemon_port, "instrumentation-client.js").await;
    let server = DevServer::start(&project, DevTool::Next);
    if let Some(why) = page_listed(&project, daemon_port, server).await {
        panic!("{why}");
    }
}

#[tokio::test]
async fn control_without_write_init_only_prints_the_lines_and_no_page_appears() {
    let project = Project::new();
    project.create_vite("vanilla");
    let daemon_port = free_port();
    let before = project.snapshot();
    let ran = project.init(daemon_port, false).await;
    assert!(ran.ok(), "{}", ran.said());
    assert!(
        ran.stdout
            .contains("run `reticle init --write` to make the change"),
        "{}",
        ran.said()
    );
    let main_js = project.dir.join("src/main.js");
    let unchanged = before.iter().find(|(path, _)| *path == main_js).unwrap();
    assert_eq!(std::fs::read(&main_js).unwrap(), unchanged.1);
    let server = DevServer::start(&project, DevTool::Vite);
    assert!(
        page_listed(&project, daemon_port, server).await.is_some(),
        "a page appeared although init did not wire the app"
    );
}

/// The project's own `build` script passes with the wiring in, and its output (under `out`)
/// keeps nothing of it.
fn builds_without_the_snippet(project: &Project, out: &str) {
    let (passed, said) = project.build();
    assert!(
        passed,
        "the template's own build failed with the wiring in:\n{said}"
    );
    assert!(
        !project.built_text(out).contains("/sdk/reticle.js"),
        "the production build kept the snippet"
    );
}

/// A `create-vite` TypeScript template, wired, passes its own build script.
async fn a_vite_typescript_template_passes_its_own_build(template: &str, entry: &str) -> Project {
    let project = Project::new();
    project.create_vite(template);
    wire(&project, free_port(), entry).await;
    builds_without_the_snippet(&project, "dist");
    project
}

#[tokio::test]
async fn a_vite_vanilla_ts_app_wired_by_init_write_passes_its_own_build() {
    a_vite_typescript_template_passes_its_own_build("vanilla-ts", "src/main.ts").await;
}

#[tokio::test]
async fn a_vite_react_ts_app_wired_by_init_write_passes_its_own_build() {
    a_vite_typescript_template_passes_its_own_build("react-ts", "src/main.tsx").await;
}

/// vue-ts runs `vue-tsc -b` before `vite build`. Control: the SDK imported by its URL as the
/// literal specifier (what `init --write` used to add) fails that build with TS2307.
#[tokio::test]
async fn a_vite_vue_ts_app_wired_by_init_write_passes_vue_tsc_and_a_literal_url_import_does_not() {
    let project = a_vite_typescript_template_passes_its_own_build("vue-ts", "src/main.ts").await;
    let entry = project.dir.join("src/main.ts");
    let wired = std::fs::read_to_string(&entry).unwrap();
    let literal = "if (import.meta.env.DEV) import(/* @vite-ignore */ 'http://127.0.0.1:4400/sdk/reticle.js').then((r) => r.connect());\n";
    std::fs::write(&entry, format!("{literal}{wired}")).unwrap();
    let (passed, said) = project.build();
    assert!(!passed, "a literal URL import type-checked:\n{said}");
    assert!(said.contains("TS2307"), "{said}");
}

#[tokio::test]
async fn a_typescript_next_app_wired_by_init_write_passes_next_build() {
    let project = Project::new();
    project.create_next_typescript();
    wire(&project, free_port(), "instrumentation-client.ts").await;
    builds_without_the_snippet(&project, ".next/static");
}

/// Whether `reticle_sessions`, asked through a real `reticle mcp` until `bound`, lists a page on
/// `url`.
async fn listed_within(client: &McpClient, url: &str, bound: Duration) -> bool {
    poll::within(bound, async || {
        let result = client.call_tool("reticle_sessions", json!({})).await.ok()?;
        result["structuredContent"]["sessions"]
            .as_array()?
            .iter()
            .any(|s| s["url"].as_str().is_some_and(|u| u.starts_with(url)))
            .then_some(())
    })
    .await
    .is_some()
}

/// A tab opened while no daemon runs (its import of the SDK refused) connects by itself once the
/// daemon starts: the wiring tries the import again. Control: the single-attempt import
/// `init --write` used to add stays dead after the daemon starts, until the tab is reloaded.
#[tokio::test]
async fn a_tab_opened_before_the_daemon_connects_once_the_daemon_starts() {
    let project = Project::new();
    project.create_vite("vanilla");
    let daemon_port = free_port();
    wire(&project, daemon_port, "src/main.js").await;

    // The old wiring first: one attempt, refused, and never again. (Written before the dev
    // server starts, so no file-change reload reaches the tab.)
    let entry = project.dir.join("src/main.js");
    let wired = std::fs::read_to_string(&entry).unwrap();
    let original = wired[wired.find("// reticle:end").unwrap()..]
        .split_once('\n')
        .unwrap()
        .1;
    let once = format!(
        "if (import.meta.env.DEV) import(/* @vite-ignore */ 'http://127.0.0.1:{daemon_port}/sdk/reticle.js').then((r) => r.connect());\n{original}"
    );
    std::fs::write(&entry, once).unwrap();
    let server = DevServer::start(&project, DevTool::Vite);
    assert!(server.serving().await, "{} never served a page", server.url);
    let browser = Browser::launch().await.expect("Chromium launches");
    let old_tab = browser.open(&server.url).await.expect("the app opens");
    poll::until("the single import refused", PAGE_BOUND, async || {
        (!old_tab
            .console_matching("exception", "dynamically imported module")
            .is_empty())
        .then_some(())
    })
    .await;
    let daemon = start_daemon(&project, daemon_port).await;
    let client = McpClient::start(ProxyOptions::new(daemon_port, project.state.path()))
        .await
        .expect("reticle mcp starts");
    assert!(
        !listed_within(&client, &server.url, Duration::from_secs(10)).await,
        "the control's tab connected without a reload: {:?}",
        old_tab.console()
    );
    old_tab.close().await.ok();
    client.close().await;
    daemon.shutdown().await;

    // The wiring of today: refused while no daemon runs, connected once one does.
    std::fs::write(&entry, &wired).unwrap();
    let tab = browser.open(&server.url).await.expect("the app opens");
    poll::until(
        "the wiring's first import refused",
        PAGE_BOUND,
        async || {
            (!tab
                .console_matching("info", "no daemon answers at")
                .is_empty())
            .then_some(())
        },
    )
    .await;
    let daemon = start_daemon(&project, daemon_port).await;
    let client = McpClient::start(ProxyOptions::new(daemon_port, project.state.path()))
        .await
        .expect("reticle mcp starts");
    let connected = listed_within(&client, &server.url, Duration::from_secs(30)).await;
    // The same document connected: nothing reloaded the tab in between.
    let navigation: String = tab
        .eval("performance.getEntriesByType('navigation')[0].type")
        .await
        .expect("the tab answers");
    client.close().await;
    browser.close().await;
    drop(daemon);
    assert!(
        connected,
        "the tab opened before the daemon never connected: {:?}",
        tab.console()
    );
    assert_eq!(navigation, "navigate", "the tab was reloaded");
}

/// The project's daemon on `port`, serving the project's workspace.
async fn start_daemon(project: &Project, port: u16) -> OwnedDaemon {
    OwnedDaemon::builder()
        .port(port)
        .state_dir(project.state.path())
        .env(
            reticle::config::env::PROJECT_DIR,
            project.dir.display().to_string(),
        )
        .try_start()
        .await
        .expect("the app's daemon starts")
}
