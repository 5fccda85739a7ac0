//! The two executables Reticle ships and how each finds the other: `reticle` (every command) and
//! `reticle-mcp` (only the MCP proxy's two processes, so an agent's proxy maps the proxy's code
//! and not the whole tool). Both are installed side by side. This module names and locates them;
//! it must not start anything.

use std::ffi::OsStr;
use std::io;
use std::path::PathBuf;

/// The file name of the executable that holds every command.
pub const MAIN: &str = "reticle";
/// The file name of the executable that holds only `mcp` and `mcp-worker`.
pub const PROXY: &str = "reticle-mcp";

/// The `reticle` executable daemons are started from: this process's own executable, or, when
/// this is `reticle-mcp`, the `reticle` beside it (named in the error when it is missing).
pub fn main_executable() -> io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    if exe.file_name() != Some(OsStr::new(PROXY)) {
        return Ok(exe);
    }
    let main = exe.with_file_name(MAIN);
    if main.is_file() {
        Ok(main)
    } else {
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{PROXY} starts daemons from {}, which is not there: install `{MAIN}` and `{PROXY}` side by side (`cargo install --path reticle` installs both)",
                main.display()
            ),
        ))
    }
}

/// The `reticle-mcp` beside this process's executable, when there is one.
pub fn proxy_beside() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    if exe.file_name() == Some(OsStr::new(PROXY)) {
        return None;
    }
    let proxy = exe.with_file_name(PROXY);
    proxy.is_file().then_some(proxy)
}
