//! The one process `stop` and `kill` may signal: the listener on the port, held through a pidfd
//! (`pidfd_open`, then `pidfd_send_signal`) opened before it is checked, so a pid that is reused
//! after the checks is never hit. `stop` also requires a Reticle daemon (`reticle … serve`);
//! `kill --force` takes any listener. A `/status` answer is never proof of which process to
//! signal: anything on the port can answer it. This module finds, checks and signals; it must not
//! decide what a command prints.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use nix::libc;
use nix::sys::signal::Signal;

use crate::probe::holders::{self, PortHolder};

/// A handle on one process: signals sent through it reach that process or nothing.
#[derive(Debug)]
pub struct ProcessHandle {
    fd: OwnedFd,
    pub pid: u32,
}

impl ProcessHandle {
    /// Opens a handle on the process `pid` names now.
    fn open(pid: u32) -> io::Result<Self> {
        let raw_pid = libc::pid_t::try_from(pid).map_err(io::Error::other)?;
        // SAFETY: pidfd_open takes a pid and flags and returns a new file descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, raw_pid, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the descriptor was just returned by the kernel and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        Ok(Self { fd, pid })
    }

    /// Sends `signal` to the process (an ended process is not an error: there is nothing to do).
    pub fn signal(&self, signal: Signal) -> io::Result<()> {
        // SAFETY: pidfd_send_signal takes our open pidfd, a signal number, no siginfo, no flags.
        let done = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.fd.as_raw_fd(),
                signal as libc::c_int,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        match done {
            0 => Ok(()),
            _ => match io::Error::last_os_error() {
                err if err.raw_os_error() == Some(libc::ESRCH) => Ok(()),
                err => Err(err),
            },
        }
    }
}

/// Whether `pid` runs a Reticle daemon: its program is `reticle` and it was started to `serve`.
pub fn is_reticle_daemon(pid: u32) -> bool {
    let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let mut args = raw.split(|b| *b == 0).filter(|a| !a.is_empty());
    let program = args
        .next()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .unwrap_or_default();
    let named_reticle = Path::new(&program)
        .file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with("reticle"));
    named_reticle && args.any(|a| a == b"serve")
}

/// A handle on `pid` once it is checked to be the listener on `port` (checked after the handle
/// is open, so the handle names the process that was checked); else the sentence saying why
/// nothing may be signalled.
pub fn listener_handle(pid: u32, port: u16) -> Result<ProcessHandle, String> {
    let handle = ProcessHandle::open(pid).map_err(|err| {
        format!("pid {pid} on port {port} cannot be reached ({err}); nothing was signalled")
    })?;
    let listeners = holders::listeners(port);
    if listeners.iter().any(|h| h.pid == pid) {
        return Ok(handle);
    }
    Err(format!(
        "port {port} names pid {pid} ({}) as its Reticle daemon, but pid {pid} is not the process listening on port {port} ({}); Reticle signals only the port's own listener, so nothing was signalled",
        holders::command_of(pid),
        describe_listeners(&listeners)
    ))
}

/// A handle on the Reticle daemon `pid` listening on `port`; else why nothing may be signalled.
pub fn daemon_handle(pid: u32, port: u16) -> Result<ProcessHandle, String> {
    let handle = listener_handle(pid, port)?;
    if is_reticle_daemon(pid) {
        return Ok(handle);
    }
    Err(format!(
        "the listener on port {port}, pid {pid} ({}), is not a Reticle daemon, so `reticle stop` did not signal it; `reticle kill --port {port} --force` ends it",
        holders::command_of(pid)
    ))
}

fn describe_listeners(listeners: &[PortHolder]) -> String {
    match listeners {
        [] => "no listener is visible to this user".to_string(),
        found => {
            let named: Vec<String> = found
                .iter()
                .map(|h| format!("the listener is {h}"))
                .collect();
            named.join("; ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listener_gets_a_handle_and_this_test_is_no_daemon() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = std::process::id();
        assert!(listener_handle(me, port).is_ok());
        let mut bystander = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let refused = listener_handle(bystander.id(), port).unwrap_err();
        assert!(refused.contains("nothing was signalled"), "{refused}");
        assert!(refused.contains(&port.to_string()), "{refused}");
        assert!(!is_reticle_daemon(me));
        let refused = daemon_handle(me, port).unwrap_err();
        assert!(refused.contains("not a Reticle daemon"), "{refused}");
        let handle = ProcessHandle::open(bystander.id()).unwrap();
        handle.signal(Signal::SIGKILL).unwrap();
        bystander.wait().unwrap();
        // The process is gone (and reaped): the handle reaches nothing, and says so quietly.
        handle.signal(Signal::SIGKILL).unwrap();
    }
}
