//! A person's first day, end to end, on a real app (issue 29's "done when"): a pristine
//! `create-vue` 3.24 app (`--router --pinia --default`: TypeScript, vue-router, Pinia, Vite),
//! scaffolded by its own tool at test time (never committed), plus a small todo feature written
//! here (a Pinia store `todos` with `items`, a "New todo" field, an "Add todo" button). An agent
//! built on the official MCP TypeScript client (`sdk/test-support/mcp-sdk-session.mjs`) talks to
//! a real `reticle mcp` that starts its own daemon, and an ordinary Chromium (the back/forward
//! cache on) shows the app. Each step is asserted: wire (`reticle init --write`, then the app's
//! own `build` script, vue-tsc included), connect, navigate by URL, verdicts (act, then assert
//! `yes` and `no`), state (the Pinia store through `reticle_state`), record, save a flow, replay,
//! `reticle verify` from a clean `git clone` (exit 0), break the app (the button renamed: verify
//! exits 1), heal (propose, then apply: verify exits 0 again), and the project's CI gate (verify
//! with its JUnit and JSON reports, `reticle doctor`). Run with our SDK (the served
//! `/sdk/reticle.js` wiring `init` writes) and with the published `@reticlehq/browser` 2.0.0,
//! installed from npm into the app and wired as its README says (`url` and the pairing token).
//!
//! A step that fails is recorded and the journey goes on where it can; the test fails naming
//! every failed step. Needs the npm registry; a scaffold that fails is a failure, never a skip.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::{Browser, ReapPort, free_port, poll};
use reticle::config::env;
use serde_json::{Value, json};
use support::scaffold::{DevServer, DevTool, INSTALL_BOUND, Project};
use support::ts_agent::Agent;

/// How long a page gets to appear in `reticle_sessions` after its tab opens.
const SESSION_BOUND: Duration = Duration::from_secs(60);
/// How long `reticle verify` may take (a headless Chromium per job, and the replay).
const VERIFY_BOUND: Duration = Duration::from_secs(240);
/// The published SDK, as its README installs it.
const PUBLISHED: &str = "@reticlehq/browser@2.0.0";
/// The session the published SDK's README passes to `connect()`.
const PUBLISHED_SESSION: &str = "my-app";
/// The button's name, and the name the break gives it.
const ADD: &str = "Add todo";
const RENAMED: &str = "Add a todo";
/// The flow the journey records, saves, replays and heals.
const FLOW: &str = "add-todo";

/// Which SDK the app loads.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sdk {
    /// The daemon's own, through the lines `reticle init --write` adds.
    Ours,
    /// `@reticlehq/browser` 2.0.0 from npm, wired by hand as its README says.
    Published,
}

/// The todo feature: a Pinia store, a view with a field and a button, a route to it.
const TODOS_STORE: &str = r#"import { ref } from 'vue'
import { defineStore } from 'pinia'

export interface Todo {
  id: number
  title: string
  done: boolean
}

export const useTodosStore = defineStore('todos', () => {
  const items = ref<Todo[]>([])
  function add(title: string) {
    items.value.push({ id: items.value.length + 1, title, done: false })
  }
  return { items, add }
})
"#;

fn todos_view(button: &str) -> String {
    format!(
        r#"<script setup lang="ts">
import {{ ref }} from 'vue'
import {{ useTodosStore }} from '../stores/todos'

const todos = useTodosStore()
const draft = ref('')

function add() {{
  const title = draft.value.trim()
  if (!title) return
  todos.add(title)
  draft.value = ''
}}
</script>

<template>
  <main>
    <h1>Todos</h1>
    <form @submit.prevent="add">
      <label for="new-todo">New todo</label>
      <input id="new-todo" v-model="draft" />
      <button type="submit">{button}</button>
    </form>
    <ul aria-label="Todo list">
      <li v-for="todo in todos.items" :key="todo.id">{{{{ todo.title }}}}</li>
    </ul>
    <p>{{{{ todos.items.length }}}} todos</p>
  </main>
</template>
"#
    )
}

/// Writes the todo feature into the scaffold: the store, the view, and its route.
fn write_todo_feature(dir: &Path) {
    std::fs::write(dir.join("src/stores/todos.ts"), TODOS_STORE).unwrap();
    std::fs::write(dir.join("src/views/TodosView.vue"), todos_view(ADD)).unwrap();
    let router = dir.join("src/router/index.ts");
    let text = std::fs::read_to_string(&router).unwrap();
    let anchor = "  routes: [\n";
    assert!(
        text.contains(anchor),
        "create-vue's router has no routes list:\n{text}"
    );
    let route = "    {\n      path: '/todos',\n      name: 'todos',\n      component: () => import('../views/TodosView.vue'),\n    },\n";
    std::fs::write(
        &router,
        text.replacen(anchor, &format!("{anchor}{route}"), 1),
    )
    .unwrap();
}

/// The published SDK wired as its README says, with the daemon's `url` and the pairing token
/// (read from `.env.local`, which create-vue's `.gitignore` keeps out of git), in place of the
/// lines `init --write` added for ours. The app's Pinia instance is named so its store can be
/// registered (the published SDK reads only registered stores).
fn wire_published(dir: &Path, daemon_port: u16, token: &str) {
    std::fs::write(
        dir.join(".env.local"),
        format!("VITE_RETICLE_TOKEN={token}\n"),
    )
    .unwrap();
    let main = dir.join("src/main.ts");
    let mut text = std::fs::read_to_string(&main).unwrap();
    if let (Some(begin), Some(end)) = (text.find("// reticle:begin"), text.find("// reticle:end")) {
        let end = end + text[end..].find('\n').map_or(text.len() - end, |n| n + 1);
        text.replace_range(begin..end, "");
    }
    assert!(
        text.contains("app.use(createPinia())"),
        "create-vue's main.ts changed:\n{text}"
    );
    let text = text.replace(
        "app.use(createPinia())",
        "const pinia = createPinia()\napp.use(pinia)",
    );
    let wiring = format!(
        "\nif (import.meta.env.DEV) {{\n  import('@reticlehq/browser').then(({{ reticle, registerStore }}) => {{\n    registerStore('todos', () => pinia.state.value.todos)\n    reticle.connect({{\n      session: '{PUBLISHED_SESSION}',\n      url: 'ws://127.0.0.1:{daemon_port}{}',\n      token: import.meta.env.VITE_RETICLE_TOKEN,\n    }})\n  }})\n}}\n",
        reticle::wire::limits::WS_PATH
    );
    std::fs::write(&main, format!("{text}{wiring}")).unwrap();
}

/// Every step's outcome: the journey goes on past a failed step where it can, and the test
/// names all of them.
#[derive(Default)]
struct Steps {
    failed: Vec<String>,
    passed: Vec<&'static str>,
}

impl Steps {
    fn check(&mut self, step: &'static str, outcome: Result<(), String>) -> bool {
        match outcome {
            Ok(()) => {
                eprintln!("[journey] {step}: ok");
                self.passed.push(step);
                true
            }
            Err(why) => {
                eprintln!("[journey] {step}: FAILED: {why}");
                self.failed.push(format!("{step}: {why}"));
                false
            }
        }
    }

    /// A step the rest cannot go without: the journey stops here when it fails.
    fn require(&mut self, step: &'static str, outcome: Result<(), String>) {
        if !self.check(step, outcome) {
            self.finish();
        }
    }

    fn finish(&self) {
        assert!(
            self.failed.is_empty(),
            "{} step(s) of the journey failed (passed: {}):\n{}",
            self.failed.len(),
            self.passed.join(", "),
            self.failed.join("\n")
        );
    }
}

/// `cond`, or `why`.
fn ensure(cond: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if cond { Ok(()) } else { Err(why()) }
}

/// Runs `git` in `dir`; fails the journey when it fails.
fn git(project: &Project, dir: &Path, args: &[&str]) {
    project.run(dir, "git", args);
}

/// Commits everything git does not ignore, as the person would after a change.
fn commit(project: &Project, message: &str) {
    git(project, &project.dir, &["add", "-A"]);
    git(
        project,
        &project.dir,
        &[
            "-c",
            "user.name=Journey",
            "-c",
            "user.email=journey@example.invalid",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
        ],
    );
}

/// A clean clone of the project's repository, in a new temporary directory.
fn clean_clone(project: &Project) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let clone = root.path().join("clone");
    project.run(
        root.path(),
        "git",
        &["clone", "-q", project.dir.to_str().unwrap(), "clone"],
    );
    (root, clone)
}

/// What `reticle verify` said: its exit code, its output and its run's JSON report.
struct Verified {
    code: Option<i32>,
    said: String,
    report: Value,
}

impl Verified {
    fn exited(&self, code: i32) -> Result<(), String> {
        ensure(self.code == Some(code), || {
            format!(
                "exit {:?}, not {code}: {}\nreport: {}",
                self.code, self.said, self.report
            )
        })
    }
}

/// `reticle verify <url>` run in `dir` (the project found from the working directory), bounded,
/// with its JSON report written to `report`.
async fn verify(
    state: &Path,
    dir: &Path,
    port: u16,
    url: &str,
    report: &Path,
    extra: &[&str],
) -> Verified {
    let port = port.to_string();
    let mut args = vec![
        "verify",
        url,
        "--port",
        &port,
        "--json",
        report.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut command = harness::cli::command(state, &args);
    command.current_dir(dir).env_remove(env::PROJECT_DIR).env(
        harness::cli::CLI_BOUND_VAR,
        VERIFY_BOUND.as_millis().to_string(),
    );
    let ran = harness::cli::run_command(command).await;
    let report = std::fs::read_to_string(report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    Verified {
        code: ran.code,
        said: ran.said(),
        report,
    }
}

/// Whether `reticle_sessions` lists a page on `url` within the bound; its session id.
async fn session_on(agent: &mut Agent, url: &str) -> Result<String, String> {
    let mut last = Value::Null;
    let found = poll::within(SESSION_BOUND, async || {
        let listed = agent.ok("reticle_sessions", json!({})).await.ok()?;
        last = listed.clone();
        listed["sessions"].as_array()?.iter().find_map(|s| {
            s["url"]
                .as_str()
                .is_some_and(|u| u.starts_with(url))
                .then(|| s["sessionId"].as_str().map(str::to_string))
                .flatten()
        })
    })
    .await;
    found.ok_or_else(|| format!("reticle_sessions never listed a page on {url}: {last}"))
}

async fn journey(sdk: Sdk) {
    let mut steps = Steps::default();
    let project = Project::new();
    let port = free_port();
    let _reap = ReapPort(port);
    let state = project.state.path().to_path_buf();

    // The app: create-vue's own scaffold, a todo feature, a git repository.
    project.create_vue();
    write_todo_feature(&project.dir);
    git(&project, &project.dir, &["init", "-q"]);
    if sdk == Sdk::Published {
        project.run(
            &project.dir,
            "npm",
            &["install", "--no-audit", "--no-fund", "-D", PUBLISHED],
        );
    }

    // Wire: init --write, the app's own build (vue-tsc, then vite build), the ignore lines.
    let ran = project.init(port, true).await;
    steps.require(
        "wire: reticle init --write",
        ensure(ran.ok(), || ran.said()),
    );
    if sdk == Sdk::Published {
        let token_file = state.join("pairing-token");
        let token = std::fs::read_to_string(&token_file)
            .unwrap_or_else(|e| panic!("init made no pairing token at {token_file:?}: {e}"));
        wire_published(&project.dir, port, token.trim());
    }
    let (built, said) = project.build();
    steps.check(
        "wire: the app's own build script passes (vue-tsc, vite build)",
        ensure(built, || said.clone()),
    );
    commit(&project, "the todo app, wired");
    let tracked = project.output(
        &project.dir,
        "git",
        &["check-ignore", "-q", ".reticle/flows/x.json"],
        INSTALL_BOUND,
    );
    steps.check(
        "wire: .reticle/flows is not ignored by git",
        ensure(tracked.status.code() == Some(1), || {
            format!("git check-ignore answered {}", tracked.status)
        }),
    );

    // Connect: the agent's reticle mcp starts the daemon; the app in an ordinary Chromium.
    let mut agent = Agent::start(&project.dir, &state, port, &[]).await;
    let server = DevServer::start(&project, DevTool::Vite);
    assert!(server.serving().await, "{} never served a page", server.url);
    let base = server.url.clone();
    let todos_url = format!("{base}todos");
    let browser = Browser::launch().await.expect("Chromium launches");
    let tab = browser.open(&todos_url).await.expect("the app opens");
    let session = session_on(&mut agent, &todos_url).await;
    steps.require(
        "connect: reticle_sessions lists the app's tab",
        session.as_ref().map(|_| ()).map_err(Clone::clone),
    );
    let session = session.unwrap();
    if sdk == Sdk::Published {
        steps.check(
            "connect: the published SDK's session is the one its README names",
            ensure(session == PUBLISHED_SESSION, || {
                format!("connected as {session}")
            }),
        );
    }

    // Navigate by URL: a full-page load in a tab whose back/forward cache is on.
    let about = format!("{base}about");
    for (step, url) in [
        ("navigate: to /about by URL", &about),
        ("navigate: back to /todos by URL", &todos_url),
    ] {
        let went = agent.ok("reticle_navigate", json!({"url": url})).await;
        steps.check(
            step,
            went.and_then(|went| {
                ensure(
                    went["confirmed"] == true
                        && went["url"]
                            .as_str()
                            .is_some_and(|u| u.starts_with(url.as_str())),
                    || format!("{went}"),
                )
            }),
        );
    }

    // Verdicts: act, then assert what holds (yes) and what does not (no).
    let field = json!({"role": "textbox", "name": "New todo"});
    let button = json!({"role": "button", "name": ADD});
    let filled = agent
        .ok(
            "reticle_act",
            json!({"target": field, "action": "fill", "args": {"value": "Buy milk"}}),
        )
        .await;
    steps.check("verdicts: act fills the field", filled.map(|_| ()));
    let added = agent
        .ok(
            "reticle_act_and_wait",
            json!({"target": button, "action": "click",
                   "until": {"kind": "text", "contains": "Buy milk"}, "timeout_ms": 8000}),
        )
        .await;
    steps.check(
        "verdicts: act_and_wait clicks the button and the todo shows (yes)",
        added.and_then(|a| ensure(a["verified"] == "yes", || format!("{a}"))),
    );
    let holds = agent
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "element", "role": "listitem", "text": "Buy milk"}}),
        )
        .await;
    steps.check(
        "verdicts: assert of the listed todo is yes",
        holds.and_then(|a| ensure(a["verified"] == "yes", || format!("{a}"))),
    );
    let absent = agent
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "text", "contains": "Walk the dog"}}),
        )
        .await;
    steps.check(
        "verdicts: assert of a todo never added is no",
        absent.and_then(|a| ensure(a["verified"] == "no", || format!("{a}"))),
    );

    // State: the Pinia store, with no line written by hand for our SDK.
    let read = agent
        .ok(
            "reticle_state",
            json!({"store": "todos", "path": "items[0].title"}),
        )
        .await;
    steps.check(
        "state: reticle_state reads the Pinia store's todo (items[0].title)",
        read.and_then(|r| {
            ensure(r["found"] == true && r["value"] == "Buy milk", || {
                format!("{r}")
            })
        }),
    );
    let predicate = agent
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "state", "store": "todos", "path": "items[0].title", "equals": "Buy milk"}}),
        )
        .await;
    steps.check(
        "state: a state predicate on the store is yes",
        predicate.and_then(|a| ensure(a["verified"] == "yes", || format!("{a}"))),
    );

    // Record the agent's acts, then save them as a flow.
    let started = agent.ok("reticle_record", json!({"action": "start"})).await;
    steps.check("record: start", started.map(|_| ()));
    let mut recorded_ok = agent
        .ok(
            "reticle_act",
            json!({"target": field, "action": "fill", "args": {"value": "Buy bread"}}),
        )
        .await
        .map(|_| ());
    if recorded_ok.is_ok() {
        recorded_ok = agent
            .ok(
                "reticle_act_and_wait",
                json!({"target": button, "action": "click",
                       "until": {"kind": "text", "contains": "Buy bread"}, "timeout_ms": 8000}),
            )
            .await
            .and_then(|a| ensure(a["verified"] == "yes", || format!("{a}")));
    }
    steps.check("record: the agent adds a second todo", recorded_ok);
    let stopped = agent.ok("reticle_record", json!({"action": "stop"})).await;
    let recorded_steps = stopped.as_ref().ok().map(|s| s["steps"].clone());
    steps.check(
        "record: stop answers the two steps, named as a user names them",
        stopped.and_then(|s| {
            ensure(
                s["steps"].as_array().map(Vec::len) == Some(2)
                    && s["steps"][0]["target"] == field
                    && s["steps"][1]["target"] == button,
                || format!("{s}"),
            )
        }),
    );
    let saved = agent
        .ok(
            "reticle_flow_save",
            json!({"name": FLOW, "startPath": "/todos", "overwrite": true,
                   "steps": recorded_steps.unwrap_or(Value::Null)}),
        )
        .await;
    let flow_file = project.dir.join(format!(".reticle/flows/{FLOW}.json"));
    steps.check(
        "save: reticle_flow_save writes the flow into the project",
        saved.and_then(|s| {
            ensure(flow_file.is_file(), || {
                format!("no {} after {s}", flow_file.display())
            })
        }),
    );

    // Replay in the agent's tab.
    let replayed = agent.ok("reticle_flow_replay", json!({"name": FLOW})).await;
    steps.check(
        "replay: the saved flow replays yes",
        replayed.and_then(|r| ensure(r["verified"] == "yes", || format!("{r}"))),
    );

    // Verify from a clean clone, as CI does.
    commit(&project, "the add-todo flow");
    let (_clone_root, clone) = clean_clone(&project);
    steps.check(
        "verify: the clone has the saved flow",
        ensure(
            clone.join(format!(".reticle/flows/{FLOW}.json")).is_file(),
            || "the flow did not reach git".into(),
        ),
    );
    let green = verify(&state, &clone, port, &base, &clone.join("verify.json"), &[]).await;
    steps.check("verify: from a clean clone exits 0", green.exited(0));

    // Break the app: the button renamed (Vite reloads it in the agent's tab too).
    std::fs::write(
        project.dir.join("src/views/TodosView.vue"),
        todos_view(RENAMED),
    )
    .unwrap();
    let renamed = poll::within(Duration::from_secs(30), async || {
        let names: String = tab
            .eval(
                "[...document.querySelectorAll('button')].map(b => b.textContent.trim()).join('|')",
            )
            .await
            .ok()?;
        names.split('|').any(|n| n == RENAMED).then_some(())
    })
    .await;
    steps.check(
        "break: the agent's tab shows the renamed button",
        ensure(renamed.is_some(), || {
            "the dev server never updated the tab".into()
        }),
    );
    let red = verify(&state, &clone, port, &base, &clone.join("verify.json"), &[]).await;
    steps.check("break: verify exits 1, the app regressed", red.exited(1));

    // Heal: propose (nothing written), then apply (a new version).
    let before = std::fs::read_to_string(&flow_file).unwrap_or_default();
    let proposed = agent.ok("reticle_flow_heal", json!({"name": FLOW})).await;
    steps.check(
        "heal: propose names the renamed button and writes nothing",
        proposed.and_then(|p| {
            ensure(
                p["outcome"] == "proposed"
                    && p["applied"] == false
                    && p["rebindings"][0]["to"] == json!({"role": "button", "name": RENAMED})
                    && std::fs::read_to_string(&flow_file).unwrap_or_default() == before,
                || format!("{p}"),
            )
        }),
    );
    let healed = agent
        .ok("reticle_flow_heal", json!({"name": FLOW, "apply": true}))
        .await;
    steps.check(
        "heal: apply writes version 2",
        healed.and_then(|h| {
            ensure(h["outcome"] == "healed" && h["version"] == 2, || {
                format!("{h}")
            })
        }),
    );
    commit(&project, "the add-todo flow, healed");
    let (_healed_root, healed_clone) = clean_clone(&project);
    let junit = healed_clone.join("verify-junit.xml");
    let healed_green = verify(
        &state,
        &healed_clone,
        port,
        &base,
        &healed_clone.join("verify.json"),
        &["--junit", junit.to_str().unwrap()],
    )
    .await;
    steps.check(
        "heal: verify from a clean clone of the healed project exits 0",
        healed_green.exited(0),
    );

    // The project's CI gate: verify's reports, and doctor on the project.
    let junit_text = std::fs::read_to_string(&junit).unwrap_or_default();
    steps.check(
        "gate: verify's JUnit and JSON reports say the flow passed",
        ensure(
            junit_text.contains(FLOW)
                && !junit_text.contains("<failure")
                && !junit_text.contains("<error")
                && healed_green.report["verified"] == "yes",
            || format!("junit: {junit_text}\njson: {}", healed_green.report),
        ),
    );
    // A person who installed Reticle has `reticle` on PATH: the agents' configs init wrote
    // start `reticle mcp` by name, and doctor checks exactly that.
    let installed = harness::binaries::reticle();
    let path = std::env::join_paths(
        installed
            .parent()
            .into_iter()
            .map(std::path::Path::to_path_buf)
            .chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            )),
    )
    .expect("PATH entries join");
    let mut doctor = harness::cli::command(&state, &["doctor", "--port", &port.to_string()]);
    doctor
        .current_dir(&project.dir)
        .env("PATH", path)
        .env_remove(env::PROJECT_DIR);
    let doctor = harness::cli::run_command(doctor).await;
    steps.check(
        "gate: reticle doctor in the project finds no obstacle",
        ensure(doctor.ok(), || doctor.said()),
    );

    agent.close().await;
    let _ = tab.close().await;
    browser.close().await;
    drop(server);
    steps.finish();
}

#[tokio::test]
async fn the_first_day_journey_on_a_create_vue_app_with_our_sdk() {
    journey(Sdk::Ours).await;
}

#[tokio::test]
async fn the_first_day_journey_on_a_create_vue_app_with_the_published_sdk() {
    journey(Sdk::Published).await;
}
