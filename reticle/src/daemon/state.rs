//! The state dir (`RETICLE_STATE_DIR`, else `~/.reticle`, mode 0700) and the per-port file names
//! inside it. This module names and creates paths; it must not read or write their contents.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config::env;

/// The directory holding every daemon's lock, pid file and log.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// `RETICLE_STATE_DIR` if set and non-empty, else `$HOME/.reticle`.
    pub fn from_env() -> Self {
        let root = match std::env::var_os(env::STATE_DIR) {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => home_dir().join(".reticle"),
        };
        Self { root }
    }

    /// A state dir at an explicit path.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates the directory (0700) if it is missing. An existing directory keeps its mode.
    pub fn ensure(&self) -> io::Result<()> {
        match fs::metadata(&self.root) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a directory", self.root.display()),
            )),
            Err(_) => {
                fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&self.root)?;
                fs::set_permissions(&self.root, fs::Permissions::from_mode(0o700))
            }
        }
    }

    /// Why the directory cannot be used, as a sentence naming the path and the fix; `None` when
    /// a file can be created in it.
    pub fn problem(&self) -> Option<String> {
        let fix = format!(
            "Make it writable, or point Reticle elsewhere with {}=<dir>.",
            env::STATE_DIR
        );
        if let Err(err) = self.ensure() {
            return Some(format!(
                "Reticle cannot create its state directory {}: {err}. {fix}",
                self.root.display()
            ));
        }
        let probe = self
            .root
            .join(format!(".write-probe-{}", std::process::id()));
        match fs::write(&probe, b"") {
            Ok(()) => {
                let _ = fs::remove_file(&probe);
                None
            }
            Err(err) => Some(format!(
                "Reticle cannot write to its state directory {}: {err}. {fix}",
                self.root.display()
            )),
        }
    }

    /// The files that belong to the daemon on `port`.
    pub fn port_files(&self, port: u16) -> PortFiles {
        PortFiles {
            lock: self.root.join(format!("daemon-{port}.lock")),
            pid: self.root.join(format!("daemon-{port}.pid")),
            log: self.root.join(format!("daemon-{port}.log")),
        }
    }
}

/// The per-port files of one daemon.
#[derive(Debug, Clone)]
pub struct PortFiles {
    /// Held locked for the daemon's whole life: the port's arbiter.
    pub lock: PathBuf,
    /// The daemon's pid, for people and for `reticle stop`; never proof of life.
    pub pid: PathBuf,
    /// JSON lines, one per event, rolled at [`crate::daemon::log::ROLL_BYTES`].
    pub log: PathBuf,
}

impl PortFiles {
    /// The previous generation of the log.
    pub fn rolled_log(&self) -> PathBuf {
        let mut name = self.log.clone().into_os_string();
        name.push(".1");
        PathBuf::from(name)
    }

    /// The pid recorded in the pid file, if it holds one.
    pub fn recorded_pid(&self) -> Option<u32> {
        fs::read_to_string(&self.pid).ok()?.trim().parse().ok()
    }
}

fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_private_dir_and_names_port_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::at(tmp.path().join("nested/state"));
        assert!(dir.problem().is_none());
        let mode = fs::metadata(dir.root()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let files = dir.port_files(4411);
        assert!(files.lock.ends_with("daemon-4411.lock"));
        assert!(files.rolled_log().ends_with("daemon-4411.log.1"));
    }

    #[test]
    fn names_an_unwritable_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("not-a-dir");
        fs::write(&file, b"x").unwrap();
        let problem = StateDir::at(&file)
            .problem()
            .expect("a file is not a state dir");
        assert!(problem.contains("not-a-dir"), "{problem}");
        assert!(problem.contains(env::STATE_DIR), "{problem}");
    }
}
