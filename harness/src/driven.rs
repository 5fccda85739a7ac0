//! A browser a daemon drives, seen from outside: its processes and profiles found by path under
//! the daemon's private `TMPDIR` (never by port), and a DevTools look of the harness's own at one
//! of its tabs, through the port Chromium wrote in the profile. It observes; it never drives.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// The prefix of a driven browser's profile directory (`reticle-drive-<uuid>`).
pub const PROFILE_PREFIX: &str = "reticle-drive-";

/// Every process (keeper, Chromium, its helpers) running on a driven profile under `tmp`.
pub fn processes(tmp: &Path) -> Vec<u32> {
    let marker = format!("{}/{PROFILE_PREFIX}", tmp.display());
    commands()
        .into_iter()
        .filter(|(_, command)| command.iter().any(|a| a.contains(&marker)))
        .map(|(pid, _)| pid)
        .collect()
}

/// Chromium itself (no helper, no keeper) of a driven profile under `tmp`.
pub fn chromium(tmp: &Path) -> Option<u32> {
    let marker = format!("--user-data-dir={}/{PROFILE_PREFIX}", tmp.display());
    commands().into_iter().find_map(|(pid, command)| {
        (command.iter().any(|a| a.starts_with(&marker))
            && !command
                .iter()
                .any(|a| a.starts_with("--type=") || a == "__chromium-keeper"))
        .then_some(pid)
    })
}

/// The driven profiles under `tmp`.
pub fn profiles(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .map(|dir| {
            dir.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(PROFILE_PREFIX))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the tab whose URL contains `url_part`, in the driven browser under `tmp`, runs a
/// script within `bound`: `Ok(false)` when it does not (its main thread is busy), `Err` when
/// the tab or the browser could not be reached at all. It speaks DevTools to the tab itself,
/// on a socket of its own (the port Chromium wrote in the profile, the tab from `/json/list`).
pub async fn tab_answers(tmp: &Path, url_part: &str, bound: Duration) -> Result<bool, String> {
    let profile = profiles(tmp)
        .into_iter()
        .next()
        .ok_or("no driven profile")?;
    let written = std::fs::read_to_string(profile.join("DevToolsActivePort"))
        .map_err(|e| format!("Chromium wrote no DevToolsActivePort: {e}"))?;
    let port = written.lines().next().unwrap_or("").trim().to_string();
    let list: Value = tokio::time::timeout(bound, async {
        reqwest::get(format!("http://127.0.0.1:{port}/json/list"))
            .await
            .map_err(|e| e.to_string())?
            .json::<Value>()
            .await
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|_| "its DevTools endpoint did not list its tabs".to_string())??;
    let socket = list
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.contains(url_part)))
        .and_then(|t| t["webSocketDebuggerUrl"].as_str())
        .ok_or(format!("no tab at {url_part}"))?
        .to_string();
    let (mut ws, _) = tokio::time::timeout(bound, tokio_tungstenite::connect_async(socket))
        .await
        .map_err(|_| "the tab's DevTools socket did not open".to_string())?
        .map_err(|e| e.to_string())?;
    let ask = json!({"id": 1, "method": "Runtime.evaluate", "params": {"expression": "1 + 1"}});
    ws.send(Message::text(ask.to_string()))
        .await
        .map_err(|e| e.to_string())?;
    let answered = tokio::time::timeout(bound, async {
        while let Some(Ok(message)) = ws.next().await {
            if let Ok(text) = message.to_text()
                && serde_json::from_str::<Value>(text).is_ok_and(|v| v["id"] == 1)
            {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    let _ = ws.close(None).await;
    Ok(answered)
}

fn commands() -> Vec<(u32, Vec<String>)> {
    let Ok(proc) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    proc.flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_string_lossy().parse().ok()?;
            let raw = std::fs::read(entry.path().join("cmdline")).ok()?;
            let command = raw
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            Some((pid, command))
        })
        .collect()
}
