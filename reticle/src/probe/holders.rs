//! Which processes hold a TCP port, told apart by role: the listener (the process that bound it),
//! clients (processes connected to it) and, in [`outbound`], connections whose own local end is
//! the port (an outgoing connection that took it as its source port). Read from `/proc`; never
//! signals anything.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use procfs::net::TcpState;
use serde::Serialize;

/// How a process holds a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketRole {
    /// It is listening on the port.
    Listener,
    /// It holds a connection to the port.
    Client,
    /// It holds a connection whose local end is the port: the port is that connection's source.
    Outbound,
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
    owners(&roles)
}

/// The processes (visible to this user) owning the socket inodes in `roles`, one entry per
/// process and role, listeners first.
fn owners(roles: &HashMap<u64, SocketRole>) -> Vec<PortHolder> {
    let mut found: Vec<PortHolder> = Vec::new();
    if roles.is_empty() {
        return found;
    }
    let mut seen: HashSet<(u32, SocketRole)> = HashSet::new();
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
                if seen.insert((pid, *role)) {
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

/// Connections whose local end is a loopback port, where nothing listens: each stops a daemon
/// from binding the port (the kernel gave it to the connection as its source port, or the
/// connection's process bound it by number).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutboundConnections {
    /// Where each connection goes.
    pub peers: Vec<SocketAddr>,
    /// The processes holding them that this user can see (none when they belong to another user).
    pub holders: Vec<PortHolder>,
}

/// The connections whose local end is `127.0.0.1:port` (or the wildcard address), when nothing
/// listens there and a listener could not bind it now; `None` otherwise. A client connection
/// closed on this side lingers in TIME_WAIT (about a minute) with no process holding it, and
/// still stops the bind: it counts; a killed daemon's own lingering connections do not.
/// The socket table is read again after a bind that failed: a daemon that bound the port between
/// the first look and the bind is a listener, and its port is not an outgoing connection's.
pub fn outbound(port: u16) -> Option<OutboundConnections> {
    let before = LocalSockets::on(port);
    if before.listening || before.peers.is_empty() || daemon_could_bind(port) {
        // Sockets left on the port that do not stop a listener (a killed daemon's accepted
        // connections in TIME_WAIT, bound with SO_REUSEADDR as every listener is) hold nothing.
        return None;
    }
    let after = LocalSockets::on(port);
    if after.listening || after.peers.is_empty() {
        return None;
    }
    Some(OutboundConnections {
        peers: after.peers,
        holders: owners(&after.roles),
    })
}

/// The sockets whose local end is `127.0.0.1:port` (or the wildcard address), as one read of
/// the socket table shows them.
struct LocalSockets {
    /// One of them is listening.
    listening: bool,
    /// Where each connection goes.
    peers: Vec<SocketAddr>,
    roles: HashMap<u64, SocketRole>,
}

impl LocalSockets {
    fn on(port: u16) -> Self {
        let entries = procfs::net::tcp()
            .into_iter()
            .flatten()
            .chain(procfs::net::tcp6().into_iter().flatten());
        let mut found = Self {
            listening: false,
            peers: Vec::new(),
            roles: HashMap::new(),
        };
        for entry in entries {
            if entry.local_address.port() != port || !binds_loopback(entry.local_address.ip()) {
                continue;
            }
            match entry.state {
                TcpState::Listen => found.listening = true,
                TcpState::Close => {}
                _ => {
                    found.peers.push(entry.remote_address);
                    found.roles.insert(entry.inode, SocketRole::Outbound);
                }
            }
        }
        found
    }
}

/// How long a port held only by sockets no live process owns is waited on before it is called
/// held: a killed process's listener and connections linger for a few milliseconds while the
/// kernel tears them down, and a daemon started on the port in that moment must not fail.
pub const PORT_SETTLE: Duration = Duration::from_secs(2);
/// How often a settling port is looked at again.
pub const PORT_SETTLE_POLL: Duration = Duration::from_millis(10);

/// Whether no live process visible to this user holds `port` (no listener, no process owning a
/// connection whose local end it is): whatever stops a bind may be a dying process's socket
/// that frees itself within [`PORT_SETTLE`].
pub fn no_live_holder(port: u16) -> bool {
    listeners(port).is_empty() && outbound(port).is_none_or(|found| found.holders.is_empty())
}

/// Whether a listener could bind `127.0.0.1:port` now, as the daemon binds it (SO_REUSEADDR):
/// the ground truth `/proc/net/tcp` cannot give, since whether a lingering socket blocks a bind
/// depends on flags it does not show. The socket is closed at once.
fn daemon_could_bind(port: u16) -> bool {
    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
}

/// Whether a socket on this local address stops a daemon binding `127.0.0.1` on the same port.
fn binds_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4 == Ipv4Addr::LOCALHOST || v4.is_unspecified(),
        IpAddr::V6(v6) => v6.is_unspecified() || v6.to_ipv4_mapped() == Some(Ipv4Addr::LOCALHOST),
    }
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
    process_state(pid).is_some_and(|state| state != 'Z' && state != 'X')
}

/// Whether `pid` is alive and running or waiting, not stopped (SIGSTOP, a tracer) nor dead: a
/// process that can still answer once it gets the CPU.
pub fn pid_running(pid: u32) -> bool {
    process_state(pid).is_some_and(|state| !matches!(state, 'Z' | 'X' | 'T' | 't'))
}

/// The kernel's state letter for `pid` (`R`, `S`, `D`, `T`, `Z`, ...), if it exists.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state letter follows the parenthesised command name.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next())
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
        // A listened-on port is not an outbound connection's, though its accepted sockets share it.
        assert_eq!(outbound(port), None);
        // A live listener is never waited out as a dying socket.
        assert!(!no_live_holder(port));
    }

    #[test]
    fn finds_the_connection_whose_source_port_is_the_port() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let source = client.local_addr().unwrap().port();
        let accepted = listener.accept().unwrap();
        let found = outbound(source).expect("the client's local end is the port");
        assert!(
            found.peers.contains(&listener.local_addr().unwrap()),
            "{found:?}"
        );
        assert!(
            found
                .holders
                .iter()
                .any(|h| h.pid == std::process::id() && h.role == SocketRole::Outbound),
            "{found:?}"
        );
        // A live process's connection is never waited out as a dying socket.
        assert!(!no_live_holder(source));
        // The control: once the connection is gone, the port is no one's (what lingers in
        // TIME_WAIT belongs to no live process).
        drop(client);
        drop(accepted);
        assert!(outbound(source).is_none_or(|o| o.holders.is_empty()));
        assert!(no_live_holder(source));
    }

    #[test]
    fn a_stopped_process_is_alive_but_not_running() {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let pid = child.id();
        let nix_pid = Pid::from_raw(pid as i32);
        assert!(pid_running(pid));
        kill(nix_pid, Signal::SIGSTOP).expect("SIGSTOP");
        // The stop lands asynchronously: wait for the kernel to say so, bounded.
        let stopped = (0..500).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            !pid_running(pid)
        });
        assert!(stopped, "a SIGSTOPped process still reads as running");
        assert!(pid_alive(pid));
        kill(nix_pid, Signal::SIGKILL).expect("SIGKILL");
        child.wait().expect("reaped");
        assert!(!pid_running(pid));
        assert!(!pid_alive(pid));
    }
}
