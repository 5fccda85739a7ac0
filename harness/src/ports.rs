//! Ports for tests: a loopback port nothing else can take between the moment a test picks it and
//! the moment its daemon binds it ([`free_port`]), and the product's own probes re-exported so
//! gates and the CLI judge a port the same way. It must not hand out a port it could not bind now.

use std::fs::{File, OpenOptions};
use std::net::TcpListener;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::Mutex;

pub use reticle::probe::ephemeral::ephemeral_range;
pub use reticle::probe::holders::{command_of, holders, listeners, outbound, pid_alive};
pub use reticle::probe::{PortHolder, PortPresence, SocketRole, probe};

/// The lowest port handed out: above the well-known and common development ports.
const LOWEST: u16 = 10_000;

/// The reservations this process holds; dropped (and so released) only when it exits.
static HELD: Mutex<Vec<File>> = Mutex::new(Vec::new());

/// A loopback port nothing listens on right now, outside the ephemeral range, reserved for
/// this process so no other process using this function picks it.
///
/// A port from `bind(127.0.0.1:0)` lies in the kernel's ephemeral range, which every outgoing
/// connection draws its source port from, so on a busy machine one may take it before the daemon
/// binds; a port outside it is never given to a connection that does not ask for it by number.
/// The reservation is an exclusive lock on a file named after the port, held until exit.
pub fn free_port() -> u16 {
    let candidates = candidates(&ephemeral_range());
    let start = (std::process::id() as usize).wrapping_mul(7919) % candidates.len();
    let dir = reservation_dir();
    for port in candidates.iter().cycle().skip(start).take(candidates.len()) {
        let Some(lock) = reserve(&dir, *port) else {
            continue;
        };
        if TcpListener::bind(("127.0.0.1", *port)).is_ok() {
            HELD.lock().unwrap_or_else(|p| p.into_inner()).push(lock);
            return *port;
        }
    }
    panic!(
        "no loopback port outside the ephemeral range {:?} could be reserved and bound",
        ephemeral_range()
    )
}

/// Every port from [`LOWEST`] up that lies outside `ephemeral`.
fn candidates(ephemeral: &RangeInclusive<u16>) -> Vec<u16> {
    (LOWEST..=u16::MAX)
        .filter(|p| !ephemeral.contains(p))
        .collect()
}

/// The folder of reservation files, shared by every test process of this user.
fn reservation_dir() -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    // `/proc/self` belongs to this process's user.
    let uid = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
    let dir = std::env::temp_dir().join(format!("reticle-test-ports-{uid}"));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// An exclusive, non-blocking lock on `port`'s reservation file, or `None` when another process
/// (or this one) holds it. The kernel releases it when the holder exits, however it exits.
fn reserve(dir: &std::path::Path, port: u16) -> Option<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(port.to_string()))
        .ok()?;
    file.try_lock().ok()?;
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_lie_outside_the_ephemeral_range_and_are_never_handed_out_twice() {
        let ephemeral = ephemeral_range();
        let picked: Vec<u16> = (0..20).map(|_| free_port()).collect();
        for port in &picked {
            assert!(!ephemeral.contains(port), "{port} is ephemeral");
            assert!(*port >= LOWEST);
        }
        let mut unique = picked.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), picked.len(), "{picked:?}");
    }

    #[test]
    fn a_reserved_port_is_refused_to_every_other_holder() {
        let port = free_port();
        // The control: the same reservation asked again (as another process would) is refused
        // while this process holds it.
        assert!(reserve(&reservation_dir(), port).is_none());
    }

    #[test]
    fn candidates_skip_the_whole_ephemeral_range() {
        let c = candidates(&(32768..=60999));
        assert!(c.contains(&32767) && c.contains(&61000) && c.contains(&LOWEST));
        assert!(!c.contains(&32768) && !c.contains(&60999));
    }
}
