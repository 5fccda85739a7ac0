//! The posting ledger: a second pipe from the worker to the supervisor carrying only `posting`
//! reports, written before each POST leaves, so a call without one when the worker dies never
//! reached the daemon. The supervisor drains it whenever it reads the report pipe (no wake-up
//! per call); a full ledger sends down the report pipe instead, so nothing is lost or reordered.
//!
//! It moves lines; it must not read them.

use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};

use crate::config::env;

/// The descriptor number the worker finds its end of the ledger at.
pub const LEDGER_FD: RawFd = 3;

/// The worker's end: written without blocking.
#[derive(Debug)]
pub struct LedgerWriter(OwnedFd);

impl LedgerWriter {
    /// The ledger the supervisor passed to this process ([`env::POSTING_LEDGER_FD`] names it),
    /// made non-blocking and closed on exec (a daemon this worker starts must not hold it);
    /// `None` when none was passed or the descriptor is not usable.
    pub fn inherited() -> Option<Self> {
        let raw: RawFd = std::env::var(env::POSTING_LEDGER_FD).ok()?.parse().ok()?;
        if raw != LEDGER_FD {
            return None;
        }
        // SAFETY: the supervisor set this descriptor up for this process alone and named it in
        // the environment; nothing else in the worker opens or owns fd 3 by number.
        let fd = unsafe { BorrowedFd::borrow_raw(raw) };
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).ok()?;
        let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL).ok()?);
        fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).ok()?;
        // SAFETY: as above; from here this value owns it.
        Some(Self(unsafe { OwnedFd::from_raw_fd(raw) }))
    }

    /// Writes one whole line (at most `PIPE_BUF` bytes, so the kernel takes all of it or none),
    /// or gives it back when the ledger has no room or is gone.
    pub fn write_line<'a>(&self, line: &'a str) -> Result<(), &'a str> {
        match nix::unistd::write(self.0.as_fd(), line.as_bytes()) {
            Ok(n) if n == line.len() => Ok(()),
            _ => Err(line),
        }
    }
}

/// The supervisor's end: read without blocking, whole lines only.
#[derive(Debug)]
pub struct LedgerReader {
    fd: OwnedFd,
    /// A line's beginning, when a read ended inside it.
    partial: Vec<u8>,
}

impl LedgerReader {
    /// Takes the read end of a ledger pipe and makes it non-blocking (the pipe is this
    /// process's own).
    pub fn new(fd: OwnedFd) -> nix::Result<Self> {
        let flags = OFlag::from_bits_truncate(fcntl(&fd, FcntlArg::F_GETFL)?);
        fcntl(&fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
        Ok(Self {
            fd,
            partial: Vec::new(),
        })
    }

    /// Every whole line the ledger holds now, in order, without waiting.
    pub fn drain(&mut self) -> Vec<String> {
        let mut chunk = [0u8; 4096];
        loop {
            match nix::unistd::read(&self.fd, &mut chunk) {
                Ok(0) => break,
                Ok(n) => self.partial.extend_from_slice(&chunk[..n]),
                Err(Errno::EINTR) => continue,
                Err(_) => break,
            }
        }
        let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        let rest = self.partial.split_off(end + 1);
        let whole = std::mem::replace(&mut self.partial, rest);
        String::from_utf8_lossy(&whole)
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// A fresh ledger pipe: (the supervisor's read end, the end to pass to the worker), both closed
/// on exec until the worker's is placed at [`LEDGER_FD`] in the child.
pub fn pipe() -> nix::Result<(LedgerReader, OwnedFd)> {
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    Ok((LedgerReader::new(read)?, write))
}

/// In a freshly forked child, before exec: puts `fd` at [`LEDGER_FD`], open across exec. Only
/// async-signal-safe calls.
pub fn place_in_child(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: `fd` is open in the child (inherited from the parent's fork); dup2 and fcntl are
    // async-signal-safe.
    let placed = unsafe {
        if fd == LEDGER_FD {
            nix::libc::fcntl(fd, nix::libc::F_SETFD, 0)
        } else {
            nix::libc::dup2(fd, LEDGER_FD)
        }
    };
    if placed < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (LedgerReader, LedgerWriter) {
        let (reader, write) = pipe().unwrap();
        let flags = OFlag::from_bits_truncate(fcntl(&write, FcntlArg::F_GETFL).unwrap());
        fcntl(&write, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).unwrap();
        (reader, LedgerWriter(write))
    }

    #[test]
    fn lines_come_out_whole_and_in_order() {
        let (mut reader, writer) = pair();
        assert!(reader.drain().is_empty());
        for n in 0..3 {
            writer.write_line(&format!("line {n}\n")).unwrap();
        }
        assert_eq!(reader.drain(), ["line 0", "line 1", "line 2"]);
        assert!(reader.drain().is_empty(), "a drained ledger is empty");
    }

    #[test]
    fn a_line_cut_by_a_read_waits_for_its_end() {
        let (mut reader, writer) = pair();
        writer.write_line("whole\nhal").unwrap();
        assert_eq!(reader.drain(), ["whole"]);
        writer.write_line("f\n").unwrap();
        assert_eq!(reader.drain(), ["half"]);
    }

    #[test]
    fn a_full_ledger_gives_the_line_back_and_loses_none_it_took() {
        let (mut reader, writer) = pair();
        let line = format!("{}\n", "x".repeat(63));
        let mut taken = 0;
        let refused = loop {
            match writer.write_line(&line) {
                Ok(()) => taken += 1,
                Err(back) => break back,
            }
            assert!(taken < 1_000_000, "the pipe never filled");
        };
        assert_eq!(refused, line);
        let mut read = reader.drain().len();
        while read < taken {
            let more = reader.drain();
            assert!(!more.is_empty(), "lines were lost: {read} of {taken}");
            read += more.len();
        }
        assert_eq!(read, taken);
        writer.write_line(&line).unwrap();
        assert_eq!(reader.drain().len(), 1, "a drained ledger has room again");
    }

    #[test]
    fn a_closed_worker_end_gives_back_every_line() {
        let (mut reader, writer) = pair();
        writer.write_line("last\n").unwrap();
        drop(writer);
        assert_eq!(reader.drain(), ["last"]);
        assert!(reader.drain().is_empty());
    }
}
