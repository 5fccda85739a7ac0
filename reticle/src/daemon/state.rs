//! The state dir (`RETICLE_STATE_DIR`, else `~/.reticle`; never a shared directory) and the
//! per-port file names inside it. It is created 0700, and an existing one is used only when it is
//! the user's own, closed to other users and holds no links. This module names, creates and
//! checks paths; it must not read or write their contents.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config::env;
use crate::store::private;

/// Where an unresolved state dir points: under a device, so no file can exist or be made there
/// and readers find no records, while [`StateDir::problem`] stops every writer.
const UNRESOLVED_ROOT: &str = "/dev/null/reticle-state-dir-unset";

/// The directory holding every daemon's lock, pid file and log.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
    /// Neither `RETICLE_STATE_DIR` nor `HOME` named a place.
    unresolved: bool,
}

impl StateDir {
    /// `RETICLE_STATE_DIR` if set and non-empty, else `$HOME/.reticle`; with neither, a state dir
    /// whose [`problem`](Self::problem) says so (there is no shared fallback).
    pub fn from_env() -> Self {
        match std::env::var_os(env::STATE_DIR) {
            Some(dir) if !dir.is_empty() => Self::at(dir),
            _ => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
                Some(home) => Self::at(PathBuf::from(home).join(".reticle")),
                None => Self {
                    root: PathBuf::from(UNRESOLVED_ROOT),
                    unresolved: true,
                },
            },
        }
    }

    /// A state dir at an explicit path.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            unresolved: false,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates the directory (0700) if it is missing; an existing one must be the user's own
    /// and closed to other users.
    pub fn ensure(&self) -> io::Result<()> {
        if self.unresolved {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "neither HOME nor {} is set, and Reticle never falls back to a shared directory such as /tmp; set {}=<a directory of yours> (or HOME)",
                    env::STATE_DIR,
                    env::STATE_DIR
                ),
            ));
        }
        if fs::symlink_metadata(&self.root).is_err() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(private::DIR_MODE)
                .create(&self.root)?;
            fs::set_permissions(&self.root, fs::Permissions::from_mode(private::DIR_MODE))?;
        }
        match private::directory_problem(&self.root) {
            Some(problem) => Err(io::Error::new(io::ErrorKind::PermissionDenied, problem)),
            None => Ok(()),
        }
    }

    /// Why the directory cannot be used, as a sentence naming the path and the fix; `None` when
    /// it is private and a file can be created in it.
    pub fn problem(&self) -> Option<String> {
        let fix = format!(
            "Fix that, or point Reticle elsewhere with {}=<dir>.",
            env::STATE_DIR
        );
        if let Err(err) = self.ensure() {
            return Some(format!(
                "Reticle cannot use {} as its state directory: {err}. {fix}",
                self.root.display()
            ));
        }
        let links = private::links_in(&self.root);
        if !links.is_empty() {
            let names: Vec<String> = links.iter().map(|l| l.display().to_string()).collect();
            return Some(format!(
                "Reticle's state directory {} holds a symbolic link ({}), and Reticle never follows links to its own files: remove it",
                self.root.display(),
                names.join(", ")
            ));
        }
        let probe = self
            .root
            .join(format!(".write-probe-{}", std::process::id()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .map(drop)
        {
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
        private::read_to_string(&self.pid).ok()?.trim().parse().ok()
    }

    /// Records `pid` in the pid file: a fresh 0600 file renamed into place, never written
    /// through a link.
    pub fn record_pid(&self, pid: u32) -> io::Result<()> {
        private::replace(&self.pid, pid.to_string().as_bytes())
    }
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

    #[test]
    fn a_dir_open_to_others_or_holding_a_link_is_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let problem = StateDir::at(tmp.path()).problem().expect("0777 is refused");
        assert!(problem.contains("chmod 700"), "{problem}");
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", tmp.path().join("daemon-1.log")).unwrap();
        let problem = StateDir::at(tmp.path())
            .problem()
            .expect("a link is refused");
        assert!(problem.contains("daemon-1.log"), "{problem}");
    }
}
