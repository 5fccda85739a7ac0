//! Real projects for the app gates (app_wiring, journey_first_day): scaffolded in a temporary
//! directory by their stacks' own tools at pinned versions (the npm registry), wired by the real
//! `reticle init`, served by their own dev servers in a process group ended with them, with a
//! private state dir for their daemon. It must not judge what it builds; the tests do.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use harness::{OwnedDaemon, free_port, poll};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::json;

/// The scaffolding tools, pinned.
pub const CREATE_VITE: &str = "create-vite@9.3.0";
pub const CREATE_VUE: &str = "create-vue@3.24.0";
pub const NEXT: &str = "16.4.6";
pub const REACT: &str = "19.2.0";
/// How long a scaffold plus its install may take (the registry, on a loaded machine).
pub const INSTALL_BOUND: Duration = Duration::from_secs(300);
/// How long a dev server gets to serve its first page (Next.js compiles on the first request).
pub const PAGE_BOUND: Duration = Duration::from_secs(180);
/// How long a template's own build script may take (a type check and a production bundle).
pub const BUILD_BOUND: Duration = Duration::from_secs(600);
/// The TypeScript and type packages a TypeScript Next.js app declares, pinned.
pub const TYPESCRIPT: &str = "5.9.3";
pub const TYPES_REACT: &str = "19.2.6";
pub const TYPES_NODE: &str = "22.20.7";

/// A project in a temporary directory, and a private state dir for its daemon.
pub struct Project {
    _root: tempfile::TempDir,
    pub dir: PathBuf,
    pub state: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        let root = tempfile::tempdir().expect("a temporary dir");
        let dir = root.path().join("app");
        Self {
            _root: root,
            dir,
            state: tempfile::tempdir().expect("a private state dir"),
        }
    }

    /// Runs a command in `dir` (or the project's parent) to its end, within the install bound.
    pub fn run(&self, cwd: &Path, program: &str, args: &[&str]) {
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
    pub fn build(&self) -> (bool, String) {
        let output = self.output(&self.dir, "npm", &["run", "build"], BUILD_BOUND);
        let said = format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.success(), said)
    }

    /// Runs a command in `cwd` to its end within `bound`; its output whatever its status.
    pub fn output(
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

    pub fn create_vite(&self, template: &str) {
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

    /// `create-vue`'s app with its default answers plus vue-router and Pinia (TypeScript, Vite),
    /// installed.
    pub fn create_vue(&self) {
        let parent = self.dir.parent().unwrap();
        self.run(
            parent,
            "npx",
            &["-y", CREATE_VUE, "app", "--router", "--pinia", "--default"],
        );
        self.run(&self.dir, "npm", &["install"]);
    }

    /// The smallest Next.js app: its package manifest, a root layout and a page.
    pub fn create_next(&self) {
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
    pub fn create_next_typescript(&self) {
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
    pub fn built_text(&self, dir: &str) -> String {
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
    pub async fn init(&self, port: u16, write: bool) -> harness::cli::Ran {
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
    pub fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
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
pub enum DevTool {
    Vite,
    Next,
}

impl DevTool {
    /// The program under `node_modules/.bin` and its arguments, serving on `port`.
    pub fn command(self, port: &str) -> (&'static str, Vec<&str>) {
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
pub struct DevServer {
    child: Child,
    pub url: String,
}

impl DevServer {
    /// Starts `tool` on a free port.
    pub fn start(project: &Project, tool: DevTool) -> Self {
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

    pub async fn serving(&self) -> bool {
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

/// `init --write` wires the project, says so, and a second run changes no byte.
pub async fn wire(project: &Project, daemon_port: u16, entry: &str) {
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

/// The project's daemon on `port`, serving the project's workspace.
pub async fn start_daemon(project: &Project, port: u16) -> OwnedDaemon {
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
