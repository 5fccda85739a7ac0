//! Ports for tests: a free loopback port, and the product's own probes re-exported so gates and
//! the CLI judge a port the same way.

use std::net::TcpListener;

pub use reticle::probe::holders::{command_of, holders, listeners, pid_alive};
pub use reticle::probe::{PortHolder, PortPresence, SocketRole, probe};

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("the OS hands out an ephemeral loopback port")
}
