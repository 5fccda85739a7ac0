//! The install gate, extended to the app: pristine projects created here with their stacks' own
//! tools at pinned versions (`create-vite`'s vanilla and react templates, a minimal Next.js app
//! installed from npm) are wired by the real `reticle init --write`, booted with their own dev
//! servers, opened in Chromium, and must appear in `reticle_sessions` with no other step. A
//! second `init --write` changes no byte, and a production build keeps nothing of the snippet.
//! The wiring type-checks: each TypeScript template (`create-vite`'s vanilla-ts, react-ts and
//! vue-ts, a TypeScript Next.js app) passes its own `build` script (`tsc`/`vue-tsc`, then the
//! bundler; `next build`), never only `vite build`. A `vue-ts` app on Pinia is wired so that
//! `reticle_state` reads its stores with no line of the user's, and still passes `vue-tsc`.
//!
//! Needs the npm registry (the machine's only network); a scaffold or install that fails is a
//! failure of this test, never a skip. The negative controls: the same project without
//! `--write` (init only prints the lines, and no session ever appears), and the SDK imported by
//! its URL as a literal specifier, which `vue-tsc` refuses (TS2307).

mod support;

use std::time::Duration;

use harness::{Browser, McpClient, OwnedDaemon, ProxyOptions, free_port, poll};
use serde_json::{Value, json};
use support::scaffold::{DevServer, DevTool, PAGE_BOUND, Project, start_daemon, wire};

/// The Pinia a Vue app on Pinia installs, pinned.
const PINIA: &str = "3.0.4";

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

/// `create-vite`'s vue-ts with Pinia installed and one store (`todos`) the app uses, as
/// `create-vue --pinia` sets it up: `app.use(createPinia())` in `src/main.ts`.
fn create_vue_with_pinia(project: &Project) {
    project.create_vite("vue-ts");
    project.run(&project.dir, "npm", &["install", &format!("pinia@{PINIA}")]);
    let write = |file: &str, text: &str| {
        let path = project.dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "src/stores/todos.ts",
        "import { defineStore } from 'pinia'\n\n\
         export const useTodos = defineStore('todos', {\n  \
           state: () => ({ items: [{ title: 'Buy milk', done: false }] }),\n\
         })\n",
    );
    write(
        "src/App.vue",
        "<script setup lang=\"ts\">\nimport { useTodos } from './stores/todos'\n\
         const todos = useTodos()\n</script>\n\n\
         <template>\n  <ul><li v-for=\"item in todos.items\" :key=\"item.title\">{{ item.title }}</li></ul>\n</template>\n",
    );
    write(
        "src/main.ts",
        "import { createApp } from 'vue'\nimport { createPinia } from 'pinia'\nimport App from './App.vue'\n\n\
         const app = createApp(App)\napp.use(createPinia())\napp.mount('#app')\n",
    );
}

/// A Vue app on Pinia, wired by `init --write` (idempotent), passes `vue-tsc` and its build,
/// and `reticle_state` reads its store with no `registerStore` line of the user's. Control: the
/// same app's store is not readable when the snippet's Pinia lines register nothing.
#[tokio::test]
async fn a_vue_app_on_pinia_wired_by_init_write_has_its_stores_read_by_reticle_state() {
    let project = Project::new();
    create_vue_with_pinia(&project);
    let daemon_port = free_port();
    wire(&project, daemon_port, "src/main.ts").await;
    builds_without_the_snippet(&project, "dist");
    let read = store_read(&project, daemon_port).await;
    assert_eq!(read["value"], "Buy milk", "{read}");

    let entry = project.dir.join("src/main.ts");
    let wired = std::fs::read_to_string(&entry).unwrap();
    assert_eq!(wired.matches("sdk.registerStore(").count(), 2, "{wired}");
    std::fs::write(&entry, wired.replace("sdk.registerStore(", "void (")).unwrap();
    let read = store_read(&project, daemon_port).await;
    assert_ne!(read["found"], true, "read without the Pinia lines: {read}");
}

/// Boots the app, opens it, and asks `reticle_state` for `todos` `items[0].title` until it is
/// found (or the bound passes): the last answer.
async fn store_read(project: &Project, daemon_port: u16) -> Value {
    let _daemon = start_daemon(project, daemon_port).await;
    let server = DevServer::start(project, DevTool::Vite);
    assert!(server.serving().await, "{} never served a page", server.url);
    let browser = Browser::launch().await.expect("Chromium launches");
    let _tab = browser.open(&server.url).await.expect("the app opens");
    let client = McpClient::start(ProxyOptions::new(daemon_port, project.state.path()))
        .await
        .expect("reticle mcp starts");
    assert!(
        listed_within(&client, &server.url, Duration::from_secs(30)).await,
        "the page never connected"
    );
    let mut last = Value::Null;
    let _ = poll::within(Duration::from_secs(10), async || {
        let result = client
            .call_tool(
                "reticle_state",
                json!({"store": "todos", "path": "items[0].title"}),
            )
            .await
            .ok()?;
        last = result["structuredContent"].clone();
        (last["found"] == true).then_some(())
    })
    .await;
    client.close().await;
    browser.close().await;
    last
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

    // The wiring of today: refused while no daemon runs, connected once one does. A fresh dev
    // server serves it: a file written under a running one reaches a tab opened just after as a
    // full reload whenever the watcher is slower than the tab.
    drop(server);
    std::fs::write(&entry, &wired).unwrap();
    let server = DevServer::start(&project, DevTool::Vite);
    assert!(server.serving().await, "{} never served a page", server.url);
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
