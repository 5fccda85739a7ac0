//! Lines to this process's own stderr, for both proxy processes. Both ignore SIGPIPE (a gone
//! agent must not kill them), so a write to a stderr nobody reads fails with `EPIPE`; here that
//! failure is dropped, never a panic. It must not be used for what the agent must receive.

use std::fmt::Display;
use std::io::Write;

/// Writes `text` and a newline to stderr, if anyone still reads it.
pub fn say(text: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
