//! Port arbitration: an exclusive `flock` on `daemon-<port>.lock`, held for the daemon's whole
//! life. Of two daemons racing for one port exactly one gets it; the other learns who holds it
//! from the lock file's contents. The kernel drops the lock when the holder dies, so a crashed
//! predecessor can never wedge the port. The file is created 0600 and never opened through a
//! link. This module must not bind sockets.

use std::fs::{File, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::store::private;

/// What the holder writes into the lock file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LockHolder {
    pub pid: u32,
    pub instance: String,
    pub started_at: String,
}

/// A held port lock. Dropping it releases the port.
#[derive(Debug)]
pub struct PortLock {
    file: File,
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another Reticle daemon already owns this port{}", describe(.0))]
    Held(Option<LockHolder>),
    #[error("cannot open the port lock {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

fn describe(holder: &Option<LockHolder>) -> String {
    match holder {
        Some(h) => format!(
            " (pid {}, instance {}, started {})",
            h.pid, h.instance, h.started_at
        ),
        None => String::new(),
    }
}

/// The outcome of a successful acquisition: the lock and whatever a dead predecessor left.
#[derive(Debug)]
pub struct Acquired {
    pub lock: PortLock,
    /// The holder recorded by a previous life whose lock is now free (it ended, tidily or not).
    pub previous: Option<LockHolder>,
}

impl PortLock {
    /// Takes the lock without waiting and records `holder` in it.
    pub fn acquire(path: &Path, holder: &LockHolder) -> Result<Acquired, LockError> {
        let io_err = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut file = private::open_read_write(path).map_err(io_err)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(LockError::Held(holder_of_held_lock(&mut file)));
            }
            Err(TryLockError::Error(err)) => return Err(io_err(err)),
        }
        let previous = read_holder(&mut file);
        let body = serde_json::to_vec(holder)
            .map_err(io::Error::other)
            .map_err(io_err)?;
        file.set_len(0).map_err(io_err)?;
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        file.write_all(&body).map_err(io_err)?;
        Ok(Acquired {
            lock: PortLock { file },
            previous,
        })
    }

    /// Empties the lock file before release, so a later reader finds no stale holder.
    pub fn release(self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

/// Reads whoever is recorded in a lock file (held or not), without locking it.
pub fn recorded_holder(path: &Path) -> Option<LockHolder> {
    let mut file = private::open_read(path).ok()?;
    read_holder(&mut file)
}

/// Whether the lock on `path` is held right now by some process.
pub fn is_held(path: &Path) -> bool {
    let Ok(file) = private::open_read(path) else {
        return false;
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}

/// The holder writes its record right after it takes the lock, so a racer that lost by a hair
/// may find the file still empty: look again briefly before giving up on naming it.
fn holder_of_held_lock(file: &mut File) -> Option<LockHolder> {
    for _ in 0..HOLDER_RECORD_LOOKS {
        if let Some(holder) = read_holder(file) {
            return Some(holder);
        }
        std::thread::sleep(HOLDER_RECORD_PAUSE);
    }
    None
}

const HOLDER_RECORD_LOOKS: usize = 100;
const HOLDER_RECORD_PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

fn read_holder(file: &mut File) -> Option<LockHolder> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(pid: u32) -> LockHolder {
        LockHolder {
            pid,
            instance: format!("i{pid}"),
            started_at: "now".into(),
        }
    }

    #[test]
    fn second_acquirer_is_refused_and_told_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("daemon-1.lock");
        let first = PortLock::acquire(&path, &holder(1)).unwrap();
        assert!(is_held(&path));
        match PortLock::acquire(&path, &holder(2)) {
            Err(LockError::Held(Some(h))) => assert_eq!(h.pid, 1),
            other => panic!("expected Held, got {other:?}"),
        }
        first.lock.release();
        assert!(!is_held(&path));
        let again = PortLock::acquire(&path, &holder(3)).unwrap();
        assert_eq!(
            again.previous, None,
            "a tidy release leaves no holder behind"
        );
    }

    #[test]
    fn a_dead_holder_is_reported_as_previous() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("daemon-1.lock");
        std::fs::write(&path, serde_json::to_vec(&holder(99)).unwrap()).unwrap();
        let got = PortLock::acquire(&path, &holder(5)).unwrap();
        assert_eq!(got.previous.map(|h| h.pid), Some(99));
        assert_eq!(recorded_holder(&path).map(|h| h.pid), Some(5));
    }
}
