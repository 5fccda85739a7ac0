//! The fragility inventory as data: one entry per row of the design's inventory, with its hop,
//! the reference's behaviour, the outcome ours must reach, and how a gate provokes it. Row ids are
//! stable; the scorecard, the baseline and `docs/system-map.md` all key on them. This module holds
//! data only; scenarios and checkers live elsewhere.

use serde::Serialize;

/// The least a row must score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The fault is absorbed and the agent's calls succeed.
    Survived,
    /// An error naming the failure reaches the agent or the user within the bound.
    Surfaced,
}

/// Which part of the system a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hop {
    Stdio,
    Mcp,
    Daemon,
    Bridge,
    Sdk,
    Invariant,
    /// Who may reach the daemon, its files and what it keeps: local processes, other users,
    /// pages, the LAN.
    Security,
    /// The figures a release promises: latency and memory against the last release's.
    Performance,
}

impl Hop {
    /// The label the scorecard prints.
    pub fn label(self) -> &'static str {
        match self {
            Hop::Stdio => "1 stdio",
            Hop::Mcp => "2 sse/post",
            Hop::Daemon => "3 daemon",
            Hop::Bridge => "4 bridge",
            Hop::Sdk => "5 sdk",
            Hop::Invariant => "all",
            Hop::Security => "security",
            Hop::Performance => "perf",
        }
    }
}

/// One row of the inventory.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Row {
    pub id: &'static str,
    pub hop: Hop,
    pub failure: &'static str,
    pub reference: &'static str,
    pub target: Target,
    pub scenario: &'static str,
}

const fn row(
    id: &'static str,
    hop: Hop,
    failure: &'static str,
    reference: &'static str,
    target: Target,
    scenario: &'static str,
) -> Row {
    Row {
        id,
        hop,
        failure,
        reference,
        target,
        scenario,
    }
}

use Hop::*;
use Target::*;

/// Every row, in the inventory's order.
pub const INVENTORY: &[Row] = &[
    row(
        "H1.1",
        Stdio,
        "the process holding a socket on the port is killed externally (lsof -ti tcp:PORT | xargs kill -9)",
        "silent, total",
        Survived,
        "run that exact recipe mid-session; the next calls must succeed",
    ),
    row(
        "H1.2",
        Stdio,
        "an internal panic in the proxy",
        "guarded",
        Survived,
        "inject a panic through a test-only fault hook; the next call succeeds",
    ),
    row(
        "H1.3",
        Stdio,
        "reconnect budget spent",
        "fixed (dormant, never exit)",
        Survived,
        "wedge the port past the budget; the proxy stays up and recovers once the wedge goes",
    ),
    row(
        "H1.4",
        Stdio,
        "client closes stdin with calls in flight",
        "guarded (5 s drain)",
        Surfaced,
        "close stdin with calls in flight; every id is answered or logged as unanswered before exit",
    ),
    row(
        "H1.5",
        Stdio,
        "garbage on stdin (non-JSON, half objects, a 200 KB line)",
        "guarded",
        Survived,
        "write each; tools/list still answers",
    ),
    row(
        "H2.1",
        Mcp,
        "a forwarded call whose SSE stream drops",
        "guarded (-32001)",
        Surfaced,
        "reset_peer downstream mid-call; answered -32001 naming the drop, well inside the queue wait",
    ),
    row(
        "H2.2",
        Mcp,
        "a call queued while dormant, never sent",
        "guarded (20 s queue timer)",
        Surfaced,
        "blackhole the daemon; the queued call is answered -32001 at the queue bound",
    ),
    row(
        "H2.3",
        Mcp,
        "POST leg reset while SSE is healthy",
        "guarded",
        Surfaced,
        "reset_peer upstream on the POST connection only",
    ),
    row(
        "H2.4",
        Mcp,
        "a squatter on the port that accepts and never serves",
        "partly silent (12 s handshake)",
        Surfaced,
        "squat the port; initialize answers within 1 s and the first tool call names the squatter",
    ),
    row(
        "H2.5",
        Mcp,
        "stale tool catalogue served while dormant",
        "silent",
        Surfaced,
        "restart the daemon with a different catalogue; the client receives list_changed",
    ),
    row(
        "H2.6",
        Mcp,
        "handshake replay regresses after reconnect",
        "silent",
        Survived,
        "kill and restart the daemon, then call a tool: it reaches an initialized session",
    ),
    row(
        "H2.7",
        Mcp,
        "latency, slicing, bandwidth limits on the link",
        "not gated",
        Survived,
        "each toxic on each direction; every call answered, none twice",
    ),
    row(
        "H3.1",
        Daemon,
        "serve reports success while the bind failed (EADDRINUSE)",
        "silent (#115)",
        Surfaced,
        "squat the port; reticle serve exits non-zero naming the holder, never prints a started line",
    ),
    row(
        "H3.2",
        Daemon,
        "liveness read from the pid file, never the port",
        "silent",
        Surfaced,
        "SIGSTOP the daemon; reticle status must not say running",
    ),
    row(
        "H3.3",
        Daemon,
        "idle shutdown fires while a client is attached",
        "silent",
        Survived,
        "attach a proxy, make no calls past the idle bound; the daemon stays",
    ),
    row(
        "H3.4",
        Daemon,
        "a daemon that served nothing is ended as useless",
        "silent",
        Surfaced,
        "the exit is logged with its reason and reticle status reports it as the last exit",
    ),
    row(
        "H3.5",
        Daemon,
        "a daemon spawned inside a tool call is reaped when the call ends",
        "silent",
        Survived,
        "spawn through a shell whose process group is then SIGTERMed; the daemon survives",
    ),
    row(
        "H3.6",
        Daemon,
        "no heartbeat: a killed daemon reads like a tidy exit",
        "fixed (#123)",
        Surfaced,
        "SIGKILL a daemon; reticle status reports died_silently; a tidy stop reports signalled",
    ),
    row(
        "H3.7",
        Daemon,
        "no port arbitration: a second daemon binds a port the first held",
        "silent",
        Surfaced,
        "race two serve on one port; exactly one runs, the other exits non-zero naming the first",
    ),
    row(
        "H3.8",
        Daemon,
        "a port that is an outgoing connection's source port reads free to status and invisible to serve",
        "silent",
        Surfaced,
        "connect from the port to a loopback listener; serve and status both name the connection and its pid",
    ),
    row(
        "H4.1",
        Bridge,
        "protocol version mismatch closes 1008 and the SDK never retries",
        "not silent, terminal",
        Surfaced,
        "hello with another version: the close names the versions, the SDK warns once and backs off",
    ),
    row(
        "H4.2",
        Bridge,
        "another project's daemon answers",
        "surfaced",
        Surfaced,
        "two projects, one port; the refusal names the other project",
    ),
    row(
        "H4.3",
        Bridge,
        "the page disconnects with commands pending",
        "fixed (#124)",
        Surfaced,
        "close the tab mid-command; verified unknown, reason observation_lost, never no",
    ),
    row(
        "H4.4",
        Bridge,
        "the reaper ends a quiet session",
        "surfaced, revivable",
        Surfaced,
        "idle past the reaper bound; the next call revives it or says why",
    ),
    row(
        "H4.5",
        Bridge,
        "opaque origins (tauri://localhost, file://)",
        "guarded",
        Survived,
        "hello from each with a token; accepted, kept verbatim",
    ),
    row(
        "H4.6",
        Bridge,
        "malformed, oversized or flooding frames",
        "guarded",
        Survived,
        "each against a live daemon; closed with the right code, daemon and other sessions live on",
    ),
    row(
        "H5.1",
        Sdk,
        "fixed 1 s reconnect, no backoff, noise in the console channel",
        "silent",
        Survived,
        "stop the daemon for 60 s; reconnects back off and none lands in the reported console events",
    ),
    row(
        "H5.2",
        Sdk,
        "a mid-session outage never warns",
        "silent",
        Surfaced,
        "connect, then stop the daemon; the SDK warns once in the page console",
    ),
    row(
        "H5.3",
        Sdk,
        "offline queue overflow",
        "gap marker at the oldest drop",
        Surfaced,
        "overflow the queue while offline; a gap marker arrives and a verdict over the window is unknown",
    ),
    row(
        "H5.4",
        Sdk,
        "sessionStorage throws in a sandboxed iframe",
        "guarded",
        Survived,
        "load the SDK in a sandboxed iframe; a session still starts",
    ),
    row(
        "H5.5",
        Sdk,
        "a ref held across a re-render or reload",
        "guarded (refuses)",
        Surfaced,
        "act on a stale ref; a named refusal, never a click on the new occupant",
    ),
    row(
        "H5.6",
        Sdk,
        "a page on the published 2.0.0 SDK gets answers that differ from ours",
        "silent (acts by target refused: the daemon read a field 2.0.0 never sends)",
        Survived,
        "every tool family and action on the fixture page with our SDK and with the published 2.0.0; same verdicts, or a documented limitation",
    ),
    row(
        "H5.7",
        Sdk,
        "the browser Reticle drives is killed while a call waits on its tab",
        "absent (no driven browser of its own to lose; its --drive relaunches nothing)",
        Surfaced,
        "SIGKILL the driven Chromium with reticle_wait_for in flight on its tab; observation_lost, then the next call relaunches it and says so",
    ),
    row(
        "H5.8",
        Sdk,
        "a driven tab's page spins in an endless loop",
        "absent",
        Surfaced,
        "a driven tab loops forever after a click; calls on it refused within the bound naming the unanswering page, another site's tab and the daemon answer",
    ),
    row(
        "T1",
        Invariant,
        "exactly one root span (tool.handler, depth 0) per tool call",
        "produced and discarded",
        Survived,
        "the trace checker over every gate run",
    ),
    row(
        "T2",
        Invariant,
        "zero orphan spans (a span whose parent never closed)",
        "produced and discarded",
        Survived,
        "the trace checker over every gate run",
    ),
    row(
        "T3",
        Invariant,
        "the settle hook fired for every call, thrown or not",
        "not checked",
        Survived,
        "the trace checker over every gate run",
    ),
    row(
        "T4",
        Invariant,
        "no span with ok:false and no error",
        "produced and discarded",
        Survived,
        "the trace checker over every gate run",
    ),
    row(
        "L1",
        Invariant,
        "every layer of the gate table has a gate",
        "nine of eleven",
        Survived,
        "the gate table in docs/system-map.md names a gate for every layer",
    ),
    row(
        "S1",
        Security,
        "`reticle stop` signals whatever pid a `/status` answer names",
        "signals it",
        Surfaced,
        "a fake /status naming a bystander; stop refuses naming the port and the bystander lives (control: a real daemon is stopped)",
    ),
    row(
        "S2",
        Security,
        "bad token material (oversized or malformed file, empty RETICLE_TOKEN) starts a daemon with no token",
        "runs open",
        Surfaced,
        "serve with each; it fails naming the file or the variable, and no page without a token is admitted",
    ),
    row(
        "S3",
        Security,
        "a shared, foreign or linked state dir (no HOME falls back to /tmp; links are followed)",
        "accepted",
        Surfaced,
        "serve with a 0777 dir, with no HOME, with its log linked to another file; each fails naming the fix and the file is untouched",
    ),
    row(
        "S4",
        Security,
        "the token file is written non-atomically, kept readable, raced by two provisioners",
        "racy, 0644 kept",
        Surfaced,
        "a 0644 token is tightened and logged; two daemons racing on a fresh dir both admit the file's token",
    ),
    row(
        "S5",
        Security,
        "`reticle init` widens a private config and leaves runtime folders unignored",
        "0600 becomes 0644",
        Survived,
        "init twice over a 0600 .mcp.json; it stays 0600 and .gitignore ignores .reticle/runs/ once, never all of .reticle/",
    ),
    row(
        "S6",
        Security,
        "capsules persist typed passwords readable by others",
        "raw arguments, 0644",
        Survived,
        "a red act_and_wait filling a password field; the capsule holds no secret and is 0600",
    ),
    row(
        "S7",
        Security,
        "the event ring holds parsed JSON far larger than the frames it counts",
        "gigabytes for 32 sessions",
        Survived,
        "4 sessions × 12 worst-case 1 MiB frames; the daemon's VmRSS grows within the rings' byte bound",
    ),
    row(
        "S8",
        Security,
        "HTTP routes serve a page on a foreign origin (`/mcp/sse` streams, `/status`)",
        "served",
        Surfaced,
        "each route asked with a foreign Origin, Origin: null, or only a foreign Referer; each refuses 403 naming the header (control: a tool and a loopback page are served)",
    ),
    row(
        "S9",
        Security,
        "two documents on one session id (a same-origin iframe, a duplicated tab, a popup) take it from each other on every reconnect",
        "silent swap; commands land in the wrong document",
        Surfaced,
        "in Chromium, the fixture app on one id with a same-origin iframe loading the SDK, and a tab seeded over CDP with its sessionStorage: each document ends on a session of its own and a command to it lands in it (control: the first tab connects)",
    ),
    row(
        "S10",
        Security,
        "the MCP endpoint has no limits: a reused in-flight id orphans the first call; calls and streams are unbounded",
        "first call never answered; no cap",
        Surfaced,
        "caps of 2 streams and 2 calls: a reused id is refused -32600 and the running call answered; a third call and a third stream are refused naming their cap",
    ),
    row(
        "S11",
        Security,
        "fuzzed HTTP requests, MCP messages and bridge frames panic, hang, grow the daemon or get an unstructured refusal",
        "plain-text 405s and 400s",
        Survived,
        "proptest, 64 cases of each against one daemon: every case answered, every refusal structured, the daemon answering and grown within 64 MiB",
    ),
    row(
        "P1",
        Performance,
        "a tool call round trip (`reticle_sessions`) over a held-open link falls back past 2× the last release's",
        "not measured",
        Survived,
        "100 timed calls on one `reticle mcp` link to a real daemon; the median against bench/release-figures.json",
    ),
    row(
        "P2",
        Performance,
        "a `tools/list` round trip over a held-open link falls back past 2× the last release's",
        "not measured",
        Survived,
        "100 timed `tools/list` on one link; the median against bench/release-figures.json",
    ),
    row(
        "P3",
        Performance,
        "the `reticle mcp` proxy (supervisor and worker) grows past 1.5× the last release's resident memory",
        "not measured",
        Survived,
        "VmRSS of the proxy's processes after those 240 round trips, against bench/release-figures.json",
    ),
    row(
        "P4",
        Performance,
        "the daemon grows past 1.5× the last release's resident memory",
        "not measured",
        Survived,
        "the daemon's VmRSS after those 240 round trips, against bench/release-figures.json",
    ),
    row(
        "S12",
        Security,
        "a second agent drives a session another agent leased (two `reticle mcp` on one daemon)",
        "pool leases only; an agent's tab is anyone's",
        Surfaced,
        "in Chromium, agent A leases the fixture page's session; agent B's act on it is refused naming A and the expiry (control: B's read of it answers)",
    ),
    row(
        "V1",
        Invariant,
        "`reticle verify` passes, or never exits, when the Chromium it launched dies mid-flow",
        "no CI verify command",
        Surfaced,
        "a saved flow whose step waits on the fixture page; verify's Chromium SIGKILLed while the flow's session is connected: verify exits 2 within the bound saying the browser died (control: the kill landed while the session was connected)",
    ),
    row(
        "F1",
        Invariant,
        "`reticle_flow_heal` with apply:true writes a new flow version that no consequence proved (ambiguous candidates, or a consequence that broke)",
        "heals by best guess",
        Surfaced,
        "in Chromium, a sign-in flow healed with apply:true on the fixture's `variant=twin` and `variant=broken` pages: no new version written, and why said (control: on `variant=renamed` it heals)",
    ),
    row(
        "F2",
        Invariant,
        "an assertion-free flow (no step says what must follow) answers `verified: yes`",
        "a flow that ran is green",
        Surfaced,
        "in Chromium, a one-click flow without `until` replayed and verified: never yes, and why said (control: the same click checked by its signal replays yes)",
    ),
    row(
        "F3",
        Invariant,
        "a flow or capsule replays a ref saved earlier instead of resolving its step's target afresh",
        "replays stored refs",
        Surfaced,
        "in Chromium, a flow replayed twice (each replay reloads the page, so earlier refs are stale) passes both times, and a capsule holding only a ref is refused naming it",
    ),
    row(
        "D1",
        Invariant,
        "a SIGKILL during a `.reticle/` write (flow, baseline, capsule, run, heal) leaves a partial or empty file a reader sees",
        "writes in place",
        Surfaced,
        "10 SIGKILLs per kind of write, each on evidence of a write in progress (a temporary file seen); every document then reads whole directly and through the next daemon's listing (control: the writes were caught in progress)",
    ),
];

/// Looks a row up by id.
pub fn find(id: &str) -> Option<&'static Row> {
    INVENTORY.iter().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ids_are_unique() {
        let ids: BTreeSet<_> = INVENTORY.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), INVENTORY.len());
    }
}
