//! What `reticle_sessions` tells an agent to do when no page is connected: a structured
//! `next_action` chosen from what the daemon can see (the last refusal, whether a page ever
//! connected, whether its dev server still listens, whether the app is wired: a wired app whose
//! tab opened before the daemon needs a reload, not `reticle init`).
//!
//! It chooses and probes; it must not list sessions or change the bridge.

use std::time::Duration;

use serde::Serialize;

use crate::plane::host_is_loopback;
use crate::wiring::Wiring;

/// How long the dev server gets to accept a connection.
const DEV_SERVER_PROBE: Duration = Duration::from_millis(500);

use crate::wire::close::refused_kind::VERSION_MISMATCH;

/// One next step, by a stable word the agent can branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The last page's dev server does not answer: start it.
    StartDevServer,
    /// No page ever reached this daemon, or one was refused for its pairing: wire the app.
    RunInit,
    /// The dev server answers but no tab has the app open: open (or bring back) the app.
    OpenApp,
    /// A tab's SDK speaks another protocol version, or a wired app's tab opened before the
    /// daemon and could not load the SDK: reload it.
    ReloadTab,
}

/// What the daemon can see when no page is connected.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// The last refused page: its kind word and URL.
    pub refused: Option<(String, Option<String>)>,
    /// The URL of the last page that was connected and went away.
    pub gone_url: Option<String>,
    /// Whether that page's dev server accepts connections (None: not probed, not loopback).
    pub dev_server_up: Option<bool>,
    /// Whether the project's app loads the served SDK (None: not read).
    pub wiring: Option<Wiring>,
    /// The port this daemon serves (a wired app may load the SDK from another).
    pub daemon_port: Option<u16>,
}

/// The `next_action` object: `{action, instruction, url?, command?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NextAction {
    pub action: Action,
    pub instruction: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// Chooses the next action from what was seen.
pub fn choose(seen: &Seen) -> NextAction {
    let step = |action, instruction: &str, url: Option<String>, command: Option<&str>| NextAction {
        action,
        instruction: instruction.to_string(),
        url,
        command: command.map(str::to_string),
    };
    match (&seen.refused, &seen.gone_url, seen.dev_server_up) {
        (Some((kind, url)), _, _) if kind == VERSION_MISMATCH => step(
            Action::ReloadTab,
            "reload the tab: its SDK speaks another protocol version than this daemon; the reload loads the SDK the daemon serves",
            url.clone(),
            None,
        ),
        (Some(_), _, _) => step(
            Action::RunInit,
            "run `reticle init` and use the connect line it prints, so the page pairs with this daemon, then reload the app",
            None,
            Some("reticle init"),
        ),
        (None, Some(url), Some(false)) => step(
            Action::StartDevServer,
            "start the app's dev server (nothing answers at the page's address), then open the app",
            Some(url.clone()),
            None,
        ),
        (None, Some(url), _) => step(
            Action::OpenApp,
            "open the app in the browser (or bring its tab back), then call reticle_sessions again",
            Some(url.clone()),
            None,
        ),
        (None, None, _) => match &seen.wiring {
            Some(Wiring::Wired {
                file,
                port: Some(wired),
            }) if seen.daemon_port.is_some_and(|port| port != *wired) => {
                let port = seen.daemon_port.unwrap_or_default();
                step(
                    Action::RunInit,
                    &format!(
                        "the app's entry ({}) loads the SDK from the daemon on port {wired}, and this daemon serves port {port}: run `reticle init --write --port {port}`, then reload the app's tab",
                        file.display()
                    ),
                    None,
                    Some(&format!("reticle init --write --port {port}")),
                )
            }
            Some(Wiring::Wired { file, .. }) => step(
                Action::ReloadTab,
                &format!(
                    "reload the app's tab (or open the app if it is not open): it is wired ({}), but no page has connected since this daemon started; a tab opened before the daemon loads the SDK once reloaded",
                    file.display()
                ),
                None,
                None,
            ),
            Some(Wiring::NotWired { file }) => step(
                Action::RunInit,
                &format!(
                    "no page has ever connected, and the app's entry ({}) does not load the Reticle SDK: run `reticle init --write` to wire it, then open the app",
                    file.display()
                ),
                None,
                Some("reticle init --write"),
            ),
            _ => step(
                Action::RunInit,
                "no page has ever connected: run `reticle init --write` to wire the app (or reload the app's tab if it is wired and was open before this daemon started), start its dev server and open it",
                None,
                Some("reticle init --write"),
            ),
        },
    }
}

/// Whether the loopback server `url` names accepts a connection; None for a URL that is not
/// `http(s)` on a loopback host (the daemon probes nothing else).
pub async fn dev_server_up(url: &str) -> Option<bool> {
    let (scheme, rest) = url.split_once("://")?;
    let default_port = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    if !host_is_loopback(authority) {
        return None;
    }
    let address = match authority.rsplit_once(':') {
        Some((_, port)) if !port.ends_with(']') => authority.to_string(),
        _ => format!("{authority}:{default_port}"),
    };
    let address = address.replace("localhost", "127.0.0.1");
    let connected =
        tokio::time::timeout(DEV_SERVER_PROBE, tokio::net::TcpStream::connect(address)).await;
    Some(matches!(connected, Ok(Ok(_))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(kind: &str) -> Option<(String, Option<String>)> {
        Some((kind.to_string(), Some("http://127.0.0.1:5173/".into())))
    }

    #[test]
    fn each_case_the_daemon_tells_apart_has_its_action() {
        let cases = [
            (Seen::default(), Action::RunInit),
            (
                Seen {
                    refused: refused("version_mismatch"),
                    ..Seen::default()
                },
                Action::ReloadTab,
            ),
            (
                Seen {
                    refused: refused("auth_failed"),
                    ..Seen::default()
                },
                Action::RunInit,
            ),
            (
                Seen {
                    gone_url: Some("http://127.0.0.1:5173/".into()),
                    dev_server_up: Some(false),
                    ..Seen::default()
                },
                Action::StartDevServer,
            ),
            (
                Seen {
                    gone_url: Some("http://127.0.0.1:5173/".into()),
                    dev_server_up: Some(true),
                    ..Seen::default()
                },
                Action::OpenApp,
            ),
            (
                Seen {
                    gone_url: Some("https://example.test/".into()),
                    dev_server_up: None,
                    ..Seen::default()
                },
                Action::OpenApp,
            ),
        ];
        for (seen, action) in cases {
            let next = choose(&seen);
            assert_eq!(next.action, action, "{seen:?}");
            assert!(!next.instruction.is_empty());
        }
        let reload = choose(&Seen {
            refused: refused("version_mismatch"),
            ..Seen::default()
        });
        assert_eq!(reload.url.as_deref(), Some("http://127.0.0.1:5173/"));
        assert_eq!(
            choose(&Seen::default()).command.as_deref(),
            Some("reticle init --write")
        );
        // A wired app is told to reload its tab, never to run init; an unwired one to run it.
        let wired = choose(&Seen {
            wiring: Some(Wiring::Wired {
                file: "src/main.ts".into(),
                port: Some(4400),
            }),
            ..Seen::default()
        });
        assert_eq!(wired.action, Action::ReloadTab);
        assert!(
            wired.instruction.starts_with("reload the app's tab"),
            "{wired:?}"
        );
        assert_eq!(wired.command, None);
        let unwired = choose(&Seen {
            wiring: Some(Wiring::NotWired {
                file: "src/main.ts".into(),
            }),
            ..Seen::default()
        });
        assert_eq!(unwired.action, Action::RunInit);
        let elsewhere = choose(&Seen {
            wiring: Some(Wiring::Wired {
                file: "src/main.ts".into(),
                port: Some(4400),
            }),
            daemon_port: Some(4401),
            ..Seen::default()
        });
        assert_eq!(elsewhere.action, Action::RunInit);
        assert_eq!(
            elsewhere.command.as_deref(),
            Some("reticle init --write --port 4401")
        );
        assert!(unwired.instruction.contains("src/main.ts"), "{unwired:?}");
    }

    #[tokio::test]
    async fn the_dev_server_probe_reads_a_listener_and_skips_other_hosts() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(
            dev_server_up(&format!("http://127.0.0.1:{port}/app?x=1")).await,
            Some(true)
        );
        assert_eq!(
            dev_server_up(&format!("http://localhost:{port}/")).await,
            Some(true)
        );
        drop(listener);
        assert_eq!(
            dev_server_up(&format!("http://127.0.0.1:{port}/")).await,
            Some(false)
        );
        assert_eq!(dev_server_up("https://example.test/").await, None);
        assert_eq!(dev_server_up("file:///index.html").await, None);
    }
}
