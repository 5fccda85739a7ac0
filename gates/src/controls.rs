//! Negative controls: stand-ins that break a row's promise, run through the row's real scenario
//! and judge. Each must go red (`silent`, or below a `survived` target: [`Control::went_red`]);
//! one that does not means the checker behind it cannot fail, and the gate fails.
//!
//! One family of stand-ins per judge family ([`StandIn`]). It must not weaken a scenario or a
//! judge to make a control pass.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::judge::{Judgement, RowOutcome};
use crate::rows;
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
    let ran = rows::run("H3.1", &GateEnv { reticle: path }).await;
    Control::of(NAME, "H3.1", ran.judgement)
}

/// A `status` that says running for a stopped daemon, run through H3.2's scenario (a SIGSTOPped
/// daemon): [`stand_in_status_says_running_in`] for H3.2.
pub async fn stand_in_status_says_running(real: &Path) -> Control {
    stand_in_status_says_running_in(real, "H3.2").await
}

/// A `status` that says running whatever the daemon is (stopped, dead, gone): a wrapper in front
/// of the real binary that answers `status` with a bare running report (exit 0) and hands every
/// other command to `real`. Run through `row`'s scenario, the daemon lifecycle judge must call
/// it silent.
pub async fn stand_in_status_says_running_in(real: &Path, row: &'static str) -> Control {
    const NAME: &str = "stand-in status says running for a stopped or dead daemon";
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
        Err(err) => return unwritten(NAME, row, err),
    };
    let ran = rows::run(row, &GateEnv { reticle: path }).await;
    Control::of(NAME, row, ran.judgement)
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
    let ran = crate::rows::hop2::h2_7_limits_on_the_link::rounds_on_the_link(
        &GateEnv { reticle: path },
        &crate::rows::hop2::h2_7_limits_on_the_link::limits(),
        Duration::from_secs(3),
    )
    .await;
    Control::of(NAME, "H2.7", ran.judgement)
}

/// A proxy whose tool layer refuses every call after the first: the real `reticle mcp` with its
/// answers piped through a filter that lets the first tool result through (the scenario's
/// warm-up) and answers every later one `isError` in its place. `__REAL__` is the real binary.
const STAND_IN_REFUSING_TOOLS: &str = r#"#!/bin/sh
# reticle-stand-in-refusing-tools: a proxy whose every tool call after the first is refused,
# for the gate's negative control of the survival judge. (A shell loop, not awk: it must read
# line by line, and some awks buffer a pipe.)
'__REAL__' "$@" | {
  results=0
  while IFS= read -r line; do
    case "$line" in
      *'"content":['*)
        results=$((results + 1))
        if [ "$results" -gt 1 ]; then
          id=$(printf '%s\n' "$line" | sed -n 's/^[^}]*"id":\([^,}]*\).*$/\1/p')
          printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"stand-in: this tool refuses every call after the first"}],"isError":true}}\n' "$id"
          continue
        fi ;;
    esac
    printf '%s\n' "$line"
  done
}
"#;

/// Runs `row`'s scenario with [`STAND_IN_REFUSING_TOOLS`] as its `reticle`: the survival judge
/// must not call refusals after the fault survived (they surface, below the row's target).
pub async fn stand_in_tools_refuse_after_warm_up(real: &Path, row: &'static str) -> Control {
    const NAME: &str = "stand-in proxy refuses every tool call after warm-up";
    let dir = tempfile::tempdir().expect("a dir for the stand-in");
    let script = STAND_IN_REFUSING_TOOLS.replace("__REAL__", &real.display().to_string());
    let path = match write_script(dir.path(), "reticle-stand-in-refusing-tools", &script) {
        Ok(path) => path,
        Err(err) => return unwritten(NAME, row, err),
    };
    let ran = rows::run(row, &GateEnv { reticle: path }).await;
    Control::of(NAME, row, ran.judgement)
}

/// A daemon whose trace is broken (the test-only switch
/// `RETICLE_TEST_STAND_IN_BROKEN_TRACE`: a call without a root, an orphan span, a call whose
/// settle never closed, a failure without an error), run through the traced workload and judged
/// for `row` (T1 to T4).
pub async fn stand_in_broken_trace(row: &'static str) -> Control {
    let ran = rows::traces::stand_in_broken_trace(row).await;
    Control::of("stand-in daemon writes a broken trace", row, ran.judgement)
}

/// A daemon whose trace is broken (the same test-only switch) behind H2.3's fault proxy while
/// the POST leg is reset: the trace check under faults must make the row silent, although the
/// agent saw every call answered as a working daemon answers it.
pub async fn stand_in_broken_trace_under_a_fault(real: &Path) -> Control {
    let ran = crate::rows::hop2::h2_3_post_leg_reset::post_leg_reset_with(
        &GateEnv {
            reticle: real.to_path_buf(),
        },
        rows::traces::BROKEN_TRACE,
    )
    .await;
    Control::of(
        "stand-in daemon writes a broken trace under a transport fault",
        "H2.3",
        ran.judgement,
    )
}

/// A daemon whose trace is broken (the same test-only switch, traced) behind H4.3's bridge
/// scenario, its tab closed mid-command: the trace check on the bridge must make the row silent,
/// although the page and the command behaved as the row asks.
pub async fn stand_in_broken_trace_on_the_bridge(real: &Path) -> Control {
    let daemon_env: Vec<(&str, &str)> = scenarios::traced::TRACED
        .iter()
        .chain(rows::traces::BROKEN_TRACE)
        .copied()
        .collect();
    let ran = crate::rows::hop4::h4_3_tab_closed_mid_command::tab_closed_mid_command_with(
        &GateEnv {
            reticle: real.to_path_buf(),
        },
        &daemon_env,
    )
    .await;
    Control::of(
        "stand-in daemon writes a broken trace while a tab closes mid-command",
        "H4.3",
        ran.judgement,
    )
}

/// The gate's environment with the real binary, for the controls whose stand-in is not the
/// binary (their scenario's agent runs the real one).
fn real_env() -> GateEnv {
    GateEnv {
        reticle: harness::binaries::reticle(),
    }
}

/// A page SDK that reconnects without backoff: a copy of `sdk/` whose backoff returns its base
/// delay every time. Run through H5.1's scenario, the backoff judge must call it silent.
pub async fn stand_in_sdk_without_backoff() -> Control {
    const NAME: &str = "stand-in SDK reconnects without backoff";
    let dir = tempfile::tempdir().expect("a dir for the stand-in");
    if let Err(err) = write_sdk_with(dir.path(), "backoff.js", BACKOFF_GROWS, BACKOFF_FLAT) {
        return unwritten(NAME, "H5.1", err);
    }
    let rig = harness::SdkRig::launch_serving_sdk(dir.path()).await;
    let ran =
        crate::rows::hop5::h5_1_reconnect_backoff::backs_off_quietly_on(&real_env(), rig).await;
    Control::of(NAME, "H5.1", ran.judgement)
}

/// A copy of the SDK that drops what overflowed its offline queue without sending the gap
/// marker, run through H5.3's scenario: lost events nobody is told about must score silent.
pub async fn stand_in_sdk_without_gap_marker() -> Control {
    const NAME: &str = "stand-in SDK drops events without a gap marker";
    let dir = tempfile::tempdir().expect("a dir for the stand-in");
    if let Err(err) = write_sdk_with(dir.path(), "transport.js", GAP_TAKEN, GAP_DROPPED) {
        return unwritten(NAME, "H5.3", err);
    }
    let rig = harness::SdkRig::launch_serving_sdk(dir.path()).await;
    let ran = crate::rows::hop5::h5_3_offline_overflow::offline_overflow_on(&real_env(), rig).await;
    Control::of(NAME, "H5.3", ran.judgement)
}

/// The line of `sdk/src/backoff.js` that grows the delay, and the stand-in's in its place.
const BACKOFF_GROWS: &str = "const delay = jittered(ceilingFor(attempt));";
const BACKOFF_FLAT: &str = "const delay = baseMs; // stand-in: no backoff, no jitter";
/// The line of `sdk/src/transport.js` that takes the gap to mark, and the stand-in's in its place.
const GAP_TAKEN: &str = "const gap = outbox.takeGap();";
const GAP_DROPPED: &str =
    "const gap = (outbox.takeGap(), null); // stand-in: the gap is never marked";

/// Copies the repository's SDK (`reticle.js` and `src/`) into `dir` with one line of
/// `src/<file>` replaced; an error when the line is gone (the stand-in would prove nothing).
fn write_sdk_with(dir: &Path, file: &str, line: &str, stand_in: &str) -> std::io::Result<()> {
    let sdk = harness::fixture_app::repo_root().join("sdk");
    let copied = std::process::Command::new("cp")
        .arg("-R")
        .arg(sdk.join("reticle.js"))
        .arg(sdk.join("src"))
        .arg(dir)
        .status()?;
    if !copied.success() {
        return Err(std::io::Error::other(format!(
            "cp of {} failed",
            sdk.display()
        )));
    }
    let path = dir.join("src").join(file);
    let source = std::fs::read_to_string(&path)?;
    if !source.contains(line) {
        return Err(std::io::Error::other(format!(
            "{} no longer has `{line}`",
            path.display()
        )));
    }
    std::fs::write(&path, source.replace(line, stand_in))
}

/// A JUnit report in which every layer's gate tests ran and passed except the `tools` layer's,
/// which did not run: L1 scored from it must be silent.
pub async fn stand_in_report_without_a_layer() -> Control {
    const NAME: &str = "stand-in JUnit report in which the tools layer's tests did not run";
    let dir = tempfile::tempdir().expect("a dir for the stand-in");
    let root = harness::fixture_app::repo_root();
    let doc = std::fs::read_to_string(root.join("docs/system-map.md")).unwrap_or_default();
    let rows = crate::rows::layers::l1_every_layer_has_a_gate::gate_table(&doc, &root);
    let suites_of = |keep: fn(&str) -> bool| -> Vec<String> {
        rows.iter()
            .filter(|r| keep(&r.layer))
            .flat_map(|r| {
                r.found
                    .iter()
                    .filter_map(|p| crate::rows::layers::l1_every_layer_has_a_gate::suite_of(p))
            })
            .collect()
    };
    let tools = suites_of(|layer| layer == "tools");
    let suites: String = suites_of(|layer| layer != "tools")
        .iter()
        .filter(|suite| !tools.contains(suite))
        .map(|suite| {
            format!("  <testsuite name=\"{suite}\" tests=\"1\" errors=\"0\" failures=\"0\"></testsuite>\n")
        })
        .collect();
    let path = dir.path().join("junit.xml");
    let xml = format!("<testsuites name=\"stand-in\">\n{suites}</testsuites>\n");
    if let Err(err) = std::fs::write(&path, xml) {
        return unwritten(NAME, "L1", err);
    }
    let ran = crate::rows::layers::l1_every_layer_has_a_gate::layers_ran_in(Some(&path)).await;
    Control::of(NAME, "L1", ran.judgement)
}

/// A stand-in page that, as its tab closes with a command pending, answers that command
/// `ok:false` "app failed": the page's loss blamed on the app, the wrong verdict H4.3 exists to
/// prevent. Run through H4.3's checker against a real daemon, it must be scored silent.
pub async fn stand_in_page_blames_the_app() -> Control {
    let ran = crate::rows::hop4::h4_3_tab_closed_mid_command::stand_in_page_blames_the_app().await;
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
    let ran = crate::rows::security::s9_shared_session::stand_in_swaps_silently().await;
    Control::of(
        "stand-in bridge hands a live page's session to a second document",
        "S9",
        ran.judgement,
    )
}

/// The stand-in daemon that records leases but admits every caller
/// (`RETICLE_TEST_STAND_IN_IGNORE_LEASES`), run through S12's scenario and checker in Chromium:
/// a second agent's act on a leased session must be scored silent.
pub async fn stand_in_daemon_ignores_leases() -> Control {
    let ran = crate::rows::security::s12_leases::stand_in_ignores_leases().await;
    Control::of(
        "stand-in daemon lets a second agent drive a leased session",
        "S12",
        ran.judgement,
    )
}

/// A `verify` that runs the real one and then exits 0 whatever happened, run through V1's
/// scenario (its Chromium killed mid-flow): the honesty judge must call it silent.
pub async fn stand_in_verify_exits_0(real: &Path) -> Control {
    const NAME: &str = "stand-in verify exits 0 after its browser died";
    let dir = tempfile::tempdir().expect("a dir for the stand-in");
    let script = format!("#!/bin/sh\n'{}' \"$@\"\nexit 0\n", real.display());
    let path = match write_script(dir.path(), "reticle-stand-in-verify", &script) {
        Ok(path) => path,
        Err(err) => return unwritten(NAME, "V1", err),
    };
    let ran = rows::run("V1", &GateEnv { reticle: path }).await;
    Control::of(NAME, "V1", ran.judgement)
}

/// The daemon with `row`'s flow stand-in switched on ([`rows::flows::stand_in`]: a heal
/// that guesses for F1, a replay that grades every flow asserted for F2, a replay of a stored
/// ref for F3), run through the row's scenario and judge: it must score `silent`.
pub async fn stand_in_flow_promise(row: &'static str) -> Control {
    let name = match row {
        "F1" => "stand-in heal applies its best candidate without proof",
        "F2" => "stand-in replay grades an assertion-free flow asserted",
        _ => "stand-in replay acts on the ref a step resolved to before",
    };
    let ran = rows::flows::with_stand_in(row).await;
    Control::of(name, row, ran.judgement)
}

/// The daemon that writes `.reticle/` in place (truncate, then write), run through D1's kills
/// and judge: a torn document must make it `silent`.
pub async fn stand_in_writes_in_place() -> Control {
    let ran = rows::durability::d1_sigkill_never_tears_a_file::stand_in_writes_in_place().await;
    Control::of(
        "stand-in daemon writes workspace files in place",
        "D1",
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

/// The trace rows, each judged over the stand-in's broken trace.
pub const TRACE_ROWS: &[&str] = &["T1", "T2", "T3", "T4"];

/// The negative controls a row's table entry names ([`crate::rows::RowGate::controls`]), each
/// one stand-in above run through that row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandIn {
    /// [`stand_in_serve`].
    Serve,
    /// [`stand_in_status_says_running_in`], on the daemon lifecycle rows whose scenario reads
    /// `reticle status`.
    StatusSaysRunning,
    /// [`stand_in_mcp_swallows_calls`].
    McpSwallowsCalls,
    /// [`stand_in_tools_refuse_after_warm_up`], on the survival rows whose agent drives
    /// `reticle mcp` through the scenario's binary.
    ToolsRefuseAfterWarmUp,
    /// [`stand_in_broken_trace`].
    BrokenTrace,
    /// [`stand_in_broken_trace_under_a_fault`].
    BrokenTraceUnderAFault,
    /// [`stand_in_broken_trace_on_the_bridge`].
    BrokenTraceOnTheBridge,
    /// [`stand_in_page_blames_the_app`].
    PageBlamesTheApp,
    /// [`stand_in_sdk_without_backoff`].
    SdkWithoutBackoff,
    /// [`stand_in_sdk_without_gap_marker`].
    SdkWithoutGapMarker,
    /// [`stand_in_report_without_a_layer`].
    ReportWithoutALayer,
    /// [`stand_in_bridge_swaps_sessions`].
    BridgeSwapsSessions,
    /// [`stand_in_daemon_ignores_leases`].
    DaemonIgnoresLeases,
    /// [`stand_in_verify_exits_0`].
    VerifyExits0,
    /// [`stand_in_flow_promise`].
    FlowPromise,
    /// [`stand_in_writes_in_place`].
    WritesInPlace,
}

impl StandIn {
    /// Runs this stand-in through `row` (`real` is the binary a wrapper stand-in hands on to).
    pub async fn run(self, row: &'static str, real: &Path) -> Control {
        match self {
            StandIn::Serve => stand_in_serve().await,
            StandIn::StatusSaysRunning => stand_in_status_says_running_in(real, row).await,
            StandIn::McpSwallowsCalls => stand_in_mcp_swallows_calls().await,
            StandIn::ToolsRefuseAfterWarmUp => stand_in_tools_refuse_after_warm_up(real, row).await,
            StandIn::BrokenTrace => stand_in_broken_trace(row).await,
            StandIn::BrokenTraceUnderAFault => stand_in_broken_trace_under_a_fault(real).await,
            StandIn::BrokenTraceOnTheBridge => stand_in_broken_trace_on_the_bridge(real).await,
            StandIn::PageBlamesTheApp => stand_in_page_blames_the_app().await,
            StandIn::SdkWithoutBackoff => stand_in_sdk_without_backoff().await,
            StandIn::SdkWithoutGapMarker => stand_in_sdk_without_gap_marker().await,
            StandIn::ReportWithoutALayer => stand_in_report_without_a_layer().await,
            StandIn::BridgeSwapsSessions => stand_in_bridge_swaps_sessions().await,
            StandIn::DaemonIgnoresLeases => stand_in_daemon_ignores_leases().await,
            StandIn::VerifyExits0 => stand_in_verify_exits_0(real).await,
            StandIn::FlowPromise => stand_in_flow_promise(row).await,
            StandIn::WritesInPlace => stand_in_writes_in_place().await,
        }
    }
}

/// The controls of one row, as its table entry names them (none when it has none, or is not a
/// row).
pub async fn of_row(row: &str) -> Vec<Control> {
    let Some(gate) = rows::find(row) else {
        return Vec::new();
    };
    let real = harness::binaries::reticle();
    let mut controls = Vec::new();
    for stand_in in gate.controls {
        controls.push(stand_in.run(gate.id, &real).await);
    }
    controls
}

/// The controls of the rows a run scores, in the table's order (a partition runs the controls
/// of its own rows).
pub async fn for_rows(ids: &[&str]) -> Vec<Control> {
    let mut controls = Vec::new();
    for gate in rows::ROWS.iter().filter(|g| ids.contains(&g.id)) {
        controls.extend(of_row(gate.id).await);
    }
    controls
}
