//! The trace line's vocabulary, a contract with every reader of the daemon log (the gates' trace
//! checker imports it): the log event a trace line is written under, the keys of the line, and
//! the names of the spans the tool layer opens. `crate::trace` writes the lines and the tool
//! layer opens the spans; this module only names them.

/// The daemon log event of a trace line.
pub const TRACE_EVENT: &str = "trace";

/// The keys of a trace line: `{"span", "id", "parent", "depth", "callId", "ok", "ms", "error"?,
/// "rpcId"?}`. A span's `ok`, `error` and `rpcId` fields become the line's keys of the same name;
/// `rpcId` is on a call's root: the JSON-RPC id the call arrived with (as JSON text).
pub mod key {
    pub const SPAN: &str = "span";
    pub const ID: &str = "id";
    pub const PARENT: &str = "parent";
    pub const DEPTH: &str = "depth";
    pub const CALL_ID: &str = "callId";
    pub const OK: &str = "ok";
    pub const MS: &str = "ms";
    pub const ERROR: &str = "error";
    pub const RPC_ID: &str = "rpcId";
}

/// The `_meta` key of a forwarded `tools/call` under which `reticle mcp` gives the daemon the
/// agent's own request id (it re-sends every call under an id of its own), for the root span.
pub const CLIENT_ID_META: &str = "reticle/clientId";

/// The spans the tool layer opens.
pub mod span {
    /// The root of every tool call (depth 0).
    pub const TOOL_HANDLER: &str = "tool.handler";
    /// The settle hook, closed once per call whatever its outcome.
    pub const SETTLE: &str = "settle";
    /// One command sent to a page.
    pub const BROWSER_COMMAND: &str = "browser.command";
    /// Finding the page a call is for.
    pub const SESSION_RESOLVE: &str = "session.resolve";
    /// Waiting for a predicate to hold.
    pub const PREDICATE_WAIT: &str = "predicate.wait";
}
