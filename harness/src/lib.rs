//! The client side of every gate: the harness rules as code.
//!
//! # Layout
//! - [`binaries`]: where the `reticle` binary under test is.
//! - [`ports`]: free loopback ports, and re-exports of the product's port probes.
//! - [`marker`]: the environment marker every harness-started process carries, and the orphan
//!   sweep that finds processes by that marker (never by port).
//! - [`owned`]: [`OwnedDaemon`], a daemon the harness owns for the whole run.
//! - [`outcome`]: three-valued outcomes (a run whose transport died proves nothing).
//! - [`poll`]: bounded polling, the only synchronisation tests use.
//! - [`stage`]: [`Stage`] (a private state dir and a free port for a proxy's daemon) and
//!   [`ReapPort`], which ends the daemons a proxy started on a port.
//! - [`cli`]: running `reticle <command>` as a user would, bounded, and capturing what it says.
//! - [`child_stderr`]: a started process's stderr piped and copied here, so none of its
//!   children can hold the test runner's pipe past the test.
//! - [`fixture_app`]: [`FixtureApp`], the fixture app (and its API, [`fixture_api`]) on an
//!   ephemeral loopback port.
//! - [`browser`]: [`Browser`], Debian's Chromium over CDP: tabs, reloads, backgrounding, console.
//! - [`published_sdk`]: the published `@reticlehq/browser` 2.0.0, installed and bundled at test time.
//! - [`wire_page`]: [`WirePage`], a page without a browser, speaking protocol 1 frame by frame.
//! - [`sse_stream`]: [`sse_stream::SseReader`], a raw MCP stream on a daemon, and its POSTs.
//! - [`streamable_client`]: [`StreamableClient`], an agent on a daemon's Streamable HTTP MCP
//!   endpoint (`POST /mcp`), one session on one kept-alive connection.
//! - [`bridge_client`]: [`BridgeClient`], driving a daemon's bridge over its `/bridge/*` routes.
//! - [`history`]: the timed record of every operation and fault in a run (Jepsen's model), which
//!   the clients here record into and the gates' checkers judge.
//! - [`mcp_client`]: [`McpClient`] (the rmcp client over `reticle mcp`'s stdio) and [`RawMcp`]
//!   (the same process driven line by line, for faults a real client cannot produce).
//! - [`sdk_rig`]: [`SdkRig`], a daemon (stoppable and restartable on its port), the fixture app,
//!   one Chromium and a bridge client, with an instrumented gate page that loads our SDK.

pub mod binaries;
pub mod bridge_client;
pub mod browser;
pub mod child_stderr;
pub mod cli;
pub mod fixture_api;
pub mod fixture_app;
pub mod history;
pub mod marker;
pub mod mcp_client;
pub mod outcome;
pub mod owned;
pub mod poll;
pub mod ports;
pub mod published_sdk;
pub mod sdk_rig;
pub mod sse_stream;
pub mod stage;
pub mod streamable_client;
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
