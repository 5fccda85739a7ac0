//! Protocol 1's numbers: the version, the size and count limits every message is checked
//! against, and the bridge's transport bounds. Defined here once; everything else imports them.

use std::time::Duration;

/// The one protocol version this daemon speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The path a page's WebSocket connects to on the daemon (`ws://127.0.0.1:<port>/reticle`).
pub const WS_PATH: &str = "/reticle";

/// Largest bridge WebSocket frame (and message) the bridge reads; larger is closed 1009.
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;
/// Longest session id, command id, command name, ref, adapter name and project id.
pub const MAX_ID_CHARS: usize = 128;
/// Longest page URL in a hello.
pub const MAX_URL_CHARS: usize = 4096;
/// Longest page title in a hello.
pub const MAX_TITLE_CHARS: usize = 512;
/// Most adapters a hello may name.
pub const MAX_ADAPTERS: usize = 32;
/// Longest token a hello may carry.
pub const MAX_TOKEN_CHARS: usize = 512;
/// Longest error sentence in a command result.
pub const MAX_ERROR_CHARS: usize = 4096;
/// Longest WebSocket close reason, in bytes (RFC 6455: 125 less the 2-byte code).
pub const MAX_CLOSE_REASON_BYTES: usize = 123;

/// Most sessions connected at once; a new id past this is closed 1013.
pub const MAX_SESSIONS: usize = 32;
/// Most sockets waiting for their hello at once; one more is closed 1013.
pub const MAX_PENDING_HANDSHAKES: usize = 16;
/// How long a socket has to send its hello before it is closed 1008.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a socket carrying a session has to answer a ping when a hello on another socket
/// names the same id: it answers, and the newcomer is refused (the id is in use); it does not,
/// and it is taken for dead and replaced (a reconnect).
pub const LIVENESS_BOUND: Duration = Duration::from_secs(2);
/// How long a hidden page whose socket answered that ping has for a command, before it is taken
/// for a document frozen in the back/forward cache (its socket answers pings, its script runs
/// nothing) and the newcomer, its tab's newer document, gets the session.
pub const FROZEN_DOCUMENT_BOUND: Duration = Duration::from_millis(1500);
/// How long a command waits for its result unless the caller says otherwise.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(8);
/// Events one session may push per second before the excess is dropped and counted (the
/// socket is never closed for it). High-value events get a reserve of the same size on top.
/// Tunable with `RETICLE_MAX_EVENTS_PER_SECOND`.
pub const MAX_EVENTS_PER_SECOND: u32 = 50_000;
