//! Which processes hold a TCP port, told apart by role: the listener (the process that bound it)
//! and clients (processes connected to it). Read from `/proc`; never signals anything.

use std::collections::{HashMap, HashSet};

use procfs::net::TcpState;
use serde::Serialize;

/// How a process holds a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketRole {
    /// It is listening on the port.
    Listener,
    /// It holds a connection to the port.
    Client,
}

/// One process holding a socket on a port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortHolder {
    pub pid: u32,
    /// The command line, as the OS tells it.
    pub command: String,
    pub role: SocketRole,
}

impl std::fmt::Display for PortHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} ({})", self.pid, self.command)
    }
}

/// Every process holding a socket on `port`, listeners first.
pub fn holders(port: u16) -> Vec<PortHolder> {
    let mut roles: HashMap<u64, SocketRole> = HashMap::new();
    let entries = procfs::net::tcp()
        .into_iter()
        .flatten()
        .chain(procfs::net::tcp6().into_iter().flatten());
    for entry in entries {
        if entry.state == TcpState::Listen && entry.local_address.port() == port {
            roles.insert(entry.inode, SocketRole::Listener);
        } else if entry.state != TcpState::Listen && entry.remote_address.port() == port {
            roles.entry(entry.inode).or_insert(SocketRole::Client);
        }
    }
    if roles.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<PortHolder> = Vec::new();
    let mut seen: HashSet<(u32, bool)> = HashSet::new();
    let Ok(processes) = procfs::process::all_processes() else {
        return found;
    };
    for process in processes.flatten() {
        let Ok(fds) = process.fd() else { continue };
        for fd in fds.flatten() {
            if let procfs::process::FDTarget::Socket(inode) = fd.target
                && let Some(role) = roles.get(&inode)
            {
                let pid = process.pid as u32;
                if seen.insert((pid, *role == SocketRole::Listener)) {
                    found.push(PortHolder {
                        pid,
                        command: command_of(pid),
                        role: *role,
                    });
                }
            }
        }
    }
    found.sort_by_key(|h| (h.role != SocketRole::Listener, h.pid));
    found
}

/// Only the processes listening on `port`.
pub fn listeners(port: u16) -> Vec<PortHolder> {
    holders(port)
        .into_iter()
        .filter(|h| h.role == SocketRole::Listener)
        .collect()
}

/// The command line of `pid`, or `unknown`.
pub fn command_of(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|part| !part.is_empty())
                .map(|part| String::from_utf8_lossy(part).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Whether a process with this pid exists (zombies count as gone).
pub fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn tells_the_listener_from_a_client() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let _client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _accepted = listener.accept().unwrap();
        let me = std::process::id();
        let found = holders(port);
        assert!(
            found
                .iter()
                .any(|h| h.pid == me && h.role == SocketRole::Listener),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|h| h.pid == me && h.role == SocketRole::Client),
            "{found:?}"
        );
        assert!(
            listeners(port)
                .iter()
                .all(|h| h.role == SocketRole::Listener)
        );
        assert!(pid_alive(me));
        assert!(!pid_alive(u32::MAX / 2));
    }
}
