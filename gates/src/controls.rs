//! Negative controls: deliberately silent stand-ins run through real scenarios. Each must be
//! scored `silent`; if one is not, the checker behind it cannot fail and the gate fails.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::judge::{Judgement, RowOutcome};
use crate::scenarios::{self, GateEnv};
use crate::scorecard::Control;

/// A `serve` that claims it started and exits 0 without binding anything (the reference's #115).
pub async fn stand_in_serve() -> Control {
    const NAME: &str = "stand-in serve exits 0 without binding";
    let dir = tempfile::tempdir().expect("a dir for the stand-in");
    let script =
        "#!/bin/sh\necho \"started Reticle daemon (stand-in: nothing was bound)\"\nexit 0\n";
    let path = match write_script(dir.path(), "reticle-stand-in", script) {
        Ok(path) => path,
        Err(err) => return unwritten(NAME, "H3.1", err),
    };
    let ran = scenarios::run("H3.1", &GateEnv { reticle: path }).await;
    Control::of(NAME, "H3.1", ran.judgement)
}

/// A `status` that says running for a stopped daemon: a wrapper in front of the real binary that
/// answers `status` with a running report (exit 0) and hands every other command to `real`. Run
/// through H3.2's scenario (a SIGSTOPped daemon), the daemon lifecycle judge must call it silent.
pub async fn stand_in_status_says_running(real: &Path) -> Control {
    const NAME: &str = "stand-in status says running for a stopped daemon";
    let dir = tempfile::tempdir().expect("a dir for the stand-in");
    let script = format!(
        "#!/bin/sh
case \"$1\" in
  status) echo '{{\"running\":true,\"diagnosis\":\"running (stand-in)\"}}'; exit 0 ;;
  *) exec '{}' \"$@\" ;;
esac
",
        real.display()
    );
    let path = match write_script(dir.path(), "reticle-stand-in-status", &script) {
        Ok(path) => path,
        Err(err) => return unwritten(NAME, "H3.2", err),
    };
    let ran = scenarios::run("H3.2", &GateEnv { reticle: path }).await;
    Control::of(NAME, "H3.2", ran.judgement)
}

/// A stand-in MCP server in place of `reticle mcp`: it answers `initialize` and `tools/list`
/// like a server would, and swallows every `tools/call` (and everything else). H2.7's scenario
/// runs against it, patient for 3 s a call, and its exactly-once checker must call it silent;
/// the chaos gate runs its flapping sequence against it too.
const STAND_IN_MCP: &str = r#"#!/bin/sh
# reticle-stand-in-mcp: a deliberately silent MCP server for the gate's negative control.
# It answers initialize and tools/list, and never answers tools/call.
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^[^}]*"id":\([^,}]*\).*$/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"reticle-stand-in-mcp","version":"0"}}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"reticle_sessions","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *) ;;
  esac
done
"#;

/// Runs H2.7's scenario with [`STAND_IN_MCP`] as the proxy.
pub async fn stand_in_mcp_swallows_calls() -> Control {
    const NAME: &str = "stand-in MCP server swallows tools/call";
    let dir = tempfile::tempdir().expect("a dir for the stand-in");
    let path = match write_stand_in_mcp(dir.path()) {
        Ok(path) => path,
        Err(err) => return unwritten(NAME, "H2.7", err),
    };
    let ran = scenarios::link::rounds_on_the_link(
        &GateEnv { reticle: path },
        &scenarios::link::limits(),
        Duration::from_secs(3),
    )
    .await;
    Control::of(NAME, "H2.7", ran.judgement)
}

/// A stand-in page that, as its tab closes with a command pending, answers that command
/// `ok:false` "app failed": the page's loss blamed on the app, the wrong verdict H4.3 exists to
/// prevent. Run through H4.3's checker against a real daemon, it must be scored silent.
pub async fn stand_in_page_blames_the_app() -> Control {
    let ran = scenarios::bridge::stand_in_page_blames_the_app().await;
    Control::of(
        "stand-in page answers ok:false \"app failed\" as its tab closes",
        "H4.3",
        ran.judgement,
    )
}

/// The stand-in bridge that lets a hello take a session from a live socket without asking it
/// (`RETICLE_TEST_STAND_IN_SESSION_SWAP`, the old behaviour), run through S9's scenario and
/// checker in Chromium: documents sharing an id must be scored silent.
pub async fn stand_in_bridge_swaps_sessions() -> Control {
    let ran = scenarios::shared_session::stand_in_swaps_silently().await;
    Control::of(
        "stand-in bridge hands a live page's session to a second document",
        "S9",
        ran.judgement,
    )
}

/// Writes [`STAND_IN_MCP`] into `dir` as an executable, for a scenario's `GateEnv::reticle`.
pub fn write_stand_in_mcp(dir: &Path) -> std::io::Result<PathBuf> {
    write_script(dir, "reticle-stand-in-mcp", STAND_IN_MCP)
}

/// Writes an executable script.
fn write_script(dir: &Path, name: &str, body: &str) -> std::io::Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, body)
        .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)))
        .map(|()| path)
}

/// The inconclusive control of a stand-in that could not be written.
fn unwritten(name: &'static str, row: &'static str, err: std::io::Error) -> Control {
    Control::of(
        name,
        row,
        Judgement::new(
            RowOutcome::Inconclusive,
            format!("could not write the stand-in: {err}"),
        ),
    )
}

/// The rows that have a control, in the order the controls run.
pub const CONTROLLED_ROWS: &[&str] = &["H3.1", "H3.2", "H2.7", "H4.3", "S9"];

/// The control of one row, if it has one.
pub async fn of_row(row: &str) -> Option<Control> {
    Some(match row {
        "H3.1" => stand_in_serve().await,
        "H3.2" => stand_in_status_says_running(&harness::binaries::reticle()).await,
        "H2.7" => stand_in_mcp_swallows_calls().await,
        "H4.3" => stand_in_page_blames_the_app().await,
        "S9" => stand_in_bridge_swaps_sessions().await,
        _ => return None,
    })
}

/// The controls of the rows a run scores (a partition runs the controls of its own rows).
pub async fn for_rows(rows: &[&str]) -> Vec<Control> {
    let mut controls = Vec::new();
    for row in CONTROLLED_ROWS.iter().filter(|r| rows.contains(r)) {
        controls.extend(of_row(row).await);
    }
    controls
}
