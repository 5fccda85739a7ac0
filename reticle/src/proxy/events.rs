//! The proxy log's event names (`proxy-<port>.log`), defined once: the supervisor writes every
//! one of them (the worker's few reach the log through it), and readers (the gates, `doctor`)
//! import them from here. Names only: this module must not hold fields or write anything.

/// The supervisor started, with its bounds.
pub const PROXY_START: &str = "mcp_proxy_start";
/// A panic inside the supervisor was caught; it still serves.
pub const PROXY_PANIC: &str = "mcp_proxy_panic";
/// The supervisor is exiting, with how many calls were still owed.
pub const PROXY_EXIT: &str = "mcp_proxy_exit";
/// The link moved between `connecting`, `connected`, `reconnecting` and `dormant`.
pub const STATE: &str = "mcp_state";
/// A connect attempt failed, with the port's presence and the obstacle.
pub const ATTEMPT_FAILED: &str = "mcp_attempt_failed";
/// A daemon session opened.
pub const DAEMON_SESSION: &str = "mcp_daemon_session";
/// The worker started a daemon on a free port.
pub const DAEMON_SPAWNED: &str = "mcp_daemon_spawned";
/// A link was lost, came back (`recovered`), or its reconnect budget was spent.
pub const CONNECTION_LOST: &str = "mcp_connection_lost";
/// The new daemon's catalogue differs; the agent was told before anything else from it.
pub const TOOLS_LIST_CHANGED: &str = "mcp_tools_list_changed";
/// The proxy answered a request itself (handshake, ping, cache, garbage, -32001, ...).
pub const ANSWERED_BY_PROXY: &str = "mcp_answered_by_proxy";
/// A call whose POST never left goes back in the queue for the next session.
pub const CALL_REQUEUED: &str = "mcp_call_requeued";
/// Calls waited past their deadline for a session and were answered -32001.
pub const QUEUE_EXPIRED: &str = "mcp_queue_expired";
/// A notification or response from the agent was dropped: no session was open.
pub const DROPPED_WHILE_DISCONNECTED: &str = "mcp_dropped_while_disconnected";
/// The replayed handshake's POST failed; its session is given up.
pub const REPLAY_FAILED: &str = "mcp_replay_failed";
/// The daemon refused the replayed handshake; its session stays unready.
pub const REPLAY_REFUSED: &str = "mcp_replay_refused";
/// A message from a session no longer current was ignored.
pub const STALE_MESSAGE: &str = "mcp_stale_message";
/// The daemon sent something that is not a JSON object.
pub const DAEMON_GARBAGE: &str = "mcp_daemon_garbage";
/// The daemon answered with an id the proxy never gave out.
pub const UNMATCHED_ANSWER: &str = "mcp_unmatched_answer";
/// A second answer to a call already answered (or cancelled) was dropped.
pub const LATE_ANSWER_DROPPED: &str = "mcp_late_answer_dropped";
/// The agent cancelled a call: it left the book unanswered (forwarded when the daemon had it).
pub const CALL_CANCELLED: &str = "mcp_call_cancelled";
/// A worker process started.
pub const LINK_PROCESS_STARTED: &str = "mcp_link_process_started";
/// A worker process ended.
pub const LINK_PROCESS_EXITED: &str = "mcp_link_process_exited";
/// A worker fell silent and was killed.
pub const LINK_PROCESS_UNRESPONSIVE: &str = "mcp_link_process_unresponsive";
/// The agent closed stdin.
pub const STDIN_CLOSED: &str = "mcp_stdin_closed";
/// Calls still owed when the drain bound ran out, each answered -32001.
pub const UNANSWERED_AT_EXIT: &str = "mcp_unanswered_at_exit";
