//! The fault vocabulary: the name of every nemesis op a gate history records, defined once and
//! imported by the scenarios that inject them, the chaos sequences and the judges that look them
//! up. A history's `f` for a fault is one of these. The TCP faults named after a toxic carry the
//! name `toxics` resolves for that toxic (the tests below hold them to it). This module names
//! faults; it must not inject or judge anything.

// ---- hop 5: a browser Reticle drives -----------------------------------------------------------

/// The driven Chromium SIGKILLed with a call in flight on its tab (H5.7).
pub const KILL_DRIVEN_BROWSER: &str = "kill_driven_browser";
/// A driven tab's page spinning in an endless loop (H5.8).
pub const HANG_DRIVEN_TAB: &str = "hang_driven_tab";

// ---- hop 1: the agent's stdio link ------------------------------------------------------------

/// `lsof -ti tcp:PORT | xargs kill -9`, run for real mid-session (H1.1).
pub const LSOF_KILL_RECIPE: &str = "lsof_kill_recipe";
/// A panic inside request handling, through the test-only hook (H1.2).
pub const PANIC_HOOK: &str = "panic_hook";
/// The port wedged: every connection accepted, then reset at its first byte (H1.3).
pub const WEDGE_PORT: &str = "wedge_port";
/// The proxy's stdin closed with calls in flight (H1.4).
pub const CLOSE_STDIN: &str = "close_stdin";
/// One line of garbage written to the proxy's stdin (H1.5).
pub const GARBAGE: &str = "garbage";

// ---- hop 2: the proxy's link to the daemon ----------------------------------------------------

/// `reset_peer` downstream on the fault proxy: the stream reset (H2.1).
pub const RESET_PEER_DOWNSTREAM: &str = "reset_peer_downstream";
/// `timeout` 0 downstream on the fault proxy: the daemon blackholed (H2.2).
pub const BLACKHOLE_DAEMON: &str = "blackhole_daemon";
/// `reset_peer` upstream on the fault proxy: every POST reset (H2.3).
pub const RESET_PEER_UPSTREAM: &str = "reset_peer_upstream";
/// The daemon restarted with another tool catalogue (H2.5).
pub const RESTART_WITH_ANOTHER_CATALOGUE: &str = "restart_with_another_catalogue";
/// One toxic of a round of toxics on the link (H2.7; value: `{"toxic": <its name>, ..}`).
pub const TOXIC: &str = "toxic";

// ---- hops 1 to 3: processes and ports ---------------------------------------------------------

/// Something else listening on the port first (H2.4, H3.1).
pub const SQUAT_PORT: &str = "squat_port";
/// An outgoing loopback connection holding the port as its source port, nothing listening (H3.8).
pub const CONNECTION_ON_PORT: &str = "connection_on_port";
/// The daemon SIGKILLed (H2.6, H3.6).
pub const SIGKILL_DAEMON: &str = "sigkill_daemon";
/// The daemon SIGSTOPped: pid alive, port dead (H3.2).
pub const SIGSTOP_DAEMON: &str = "sigstop_daemon";
/// The daemon's idle bound passed four times over with an agent attached and silent (H3.3).
pub const IDLE_BOUND_PASSED_ATTACHED: &str = "idle_bound_passed_attached";
/// The daemon left idle past its bound (H3.4).
pub const IDLE_PAST_BOUND: &str = "idle_past_bound";
/// SIGTERM to the process group of the shell that started the daemon (H3.5).
pub const SIGTERM_CALLER_GROUP: &str = "sigterm_caller_group";
/// Two daemons started on one port at once (H3.7).
pub const RACE_TWO_DAEMONS: &str = "race_two_daemons";
/// The daemon SIGKILLed and replaced mid-soak (the soak and the MCP stress tests).
pub const KILL_DAEMON: &str = "kill_daemon";

// ---- hop 4: the bridge ------------------------------------------------------------------------

/// A page's hello at another protocol version (H4.1).
pub const HELLO_OTHER_VERSION: &str = "hello_other_version";
/// Our SDK's hello rewritten to another protocol version (H4.1).
pub const SDK_HELLO_OTHER_VERSION: &str = "sdk_hello_other_version";
/// A page connecting to another project's daemon port (H4.2).
pub const PAGE_AT_ANOTHER_PROJECTS_PORT: &str = "page_at_another_projects_port";
/// The page going away while a command is pending at it (H4.3).
pub const LOSE_PAGE_MID_COMMAND: &str = "lose_page_mid_command";
/// A session left idle past the reaper's bound (H4.4).
pub const IDLE_PAST_REAPER_BOUND: &str = "idle_past_reaper_bound";
/// A page from an opaque origin the daemon lists (H4.5).
pub const OPAQUE_ORIGIN: &str = "opaque_origin";
/// A page from an opaque origin the daemon does not list (H4.5).
pub const UNLISTED_OPAQUE_ORIGIN: &str = "unlisted_opaque_origin";
/// A frame that is not JSON (H4.6).
pub const MALFORMED_JSON: &str = "malformed_json";
/// A frame of a kind the protocol does not have (H4.6).
pub const UNKNOWN_KIND: &str = "unknown_kind";
/// A binary frame (H4.6).
pub const BINARY_FRAME: &str = "binary_frame";
/// A frame past the message size limit (H4.6).
pub const OVERSIZED_FRAME: &str = "oversized_frame";
/// Events past the per-second limit (H4.6).
pub const FLOOD: &str = "flood";

// ---- hop 5: the SDK ---------------------------------------------------------------------------

/// The daemon stopped under a connected page (H5.1, H5.2, H5.3).
pub const STOP_DAEMON: &str = "stop_daemon";
/// More events while offline than the SDK's queue holds (H5.3).
pub const OVERFLOW_OFFLINE_QUEUE: &str = "overflow_offline_queue";
/// `sessionStorage` throwing inside a sandboxed frame (H5.4).
pub const STORAGE_THROWS_IN_SANDBOXED_FRAME: &str = "storage_throws_in_sandboxed_frame";
/// The element behind a ref re-rendered (H5.5).
pub const RERENDER: &str = "rerender";
/// The page reloaded (H5.5).
pub const RELOAD: &str = "reload";
/// The fixture page running another SDK than ours (the published 2.0.0, or a stand-in) (H5.6).
pub const OTHER_SDK: &str = "other_sdk";

// ---- chaos: compound sequences on the agent's link --------------------------------------------

/// One cut of a flapping link (`toxics` on the link until the proxy logs the drop).
pub const CUT: &str = "cut";
/// The link dropped with calls in flight at the daemon (value: `{"ids": [...]}`).
pub const DROP_IN_FLIGHT: &str = "drop_in_flight";
/// The daemon SIGKILLed and replaced on its port, and the link cut while the proxy replays the
/// handshake into the new one (value: `{"instance": <the new daemon>}`).
pub const CUT_DURING_REPLAY: &str = "cut_during_replay";
/// No stream can open while `/status` still answers: calls queue.
pub const STREAMS_BLACKHOLED: &str = "streams_blackholed";

/// A fault taken away (every sequence that heals records it).
pub const HEAL: &str = "heal";

#[cfg(test)]
mod tests {
    use toxics::ToxicSpec;
    use toxics::toxic::ResetPeer;

    use super::*;

    #[test]
    fn the_faults_named_after_a_toxic_carry_the_name_toxics_gives_it() {
        let reset = ToxicSpec::new(ResetPeer { timeout: 0 });
        assert_eq!(reset.resolved_name(), RESET_PEER_DOWNSTREAM);
        assert_eq!(reset.upstream().resolved_name(), RESET_PEER_UPSTREAM);
    }
}
