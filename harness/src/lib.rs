//! The client side of every gate: the harness rules as code. Each module is one part a gate drives
//! (a daemon, a browser, a client, a port, the history); the gates' checkers judge what it records.

// Where the `reticle` binary under test is.
pub mod binaries;
// [`BridgeClient`], driving a daemon's bridge over its `/bridge/*` routes.
pub mod bridge_client;
// [`Browser`], Debian's Chromium over CDP: tabs, reloads, backgrounding, console.
pub mod browser;
// A started process's stderr piped and copied here, so none of its children can hold
// the test runner's pipe past the test.
pub mod child_stderr;
// A browser a daemon drives, seen from outside: its processes, profiles and tabs.
pub mod driven;
// Running `reticle <command>` as a user would, bounded, and capturing what it says.
pub mod cli;
// The fixture app's API.
pub mod fixture_api;
// [`FixtureApp`], the fixture app on an ephemeral loopback port.
pub mod fixture_app;
// The timed record of every operation and fault in a run (Jepsen's model), which the
// clients here record into and the gates' checkers judge.
pub mod history;
// The environment marker every harness-started process carries, and the orphan sweep
// that finds processes by that marker (never by port).
pub mod marker;
// [`McpClient`] (the rmcp client over `reticle mcp`'s stdio) and [`RawMcp`] (the same
// process driven line by line, for faults a real client cannot produce).
pub mod mcp_client;
// Three-valued outcomes (a run whose transport died proves nothing).
pub mod outcome;
// [`OwnedDaemon`], a daemon the harness owns for the whole run.
pub mod owned;
// Bounded polling, the only synchronisation tests use.
pub mod poll;
// Free loopback ports, and re-exports of the product's port probes.
pub mod ports;
// The published `@reticlehq/browser` 2.0.0, installed and bundled at test time.
pub mod published_sdk;
// [`SdkRig`]: a daemon (stoppable and restartable on its port), the fixture app, one
// Chromium and a bridge client, with an instrumented gate page that loads our SDK.
pub mod sdk_rig;
// `sse_stream::SseReader`, a raw MCP stream on a daemon, and its POSTs.
pub mod sse_stream;
// [`Stage`] (a private state dir and a free port for a proxy's daemon) and [`ReapPort`],
// which ends the daemons a proxy started on a port.
pub mod stage;
// [`StreamableClient`], an agent on a daemon's Streamable HTTP MCP endpoint
// (`POST /mcp`), one session on one kept-alive connection.
pub mod streamable_client;
// [`WirePage`], a page without a browser, speaking protocol 1 frame by frame.
pub mod wire_page;

pub use bridge_client::BridgeClient;
pub use browser::{Browser, Tab};
pub use fixture_app::FixtureApp;
pub use history::{Actor, History, Op, OpType};
pub use mcp_client::{McpClient, McpFailure, ProxyOptions, RawMcp};
pub use outcome::Outcome;
pub use owned::{OwnedDaemon, OwnedDaemonBuilder};
pub use ports::{PortHolder, PortPresence, SocketRole, free_port};
pub use sdk_rig::SdkRig;
pub use stage::{ReapPort, Stage};
pub use streamable_client::StreamableClient;
pub use wire_page::WirePage;
