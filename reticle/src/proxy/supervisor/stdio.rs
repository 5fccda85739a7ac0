//! The agent's stdin and stdout, as bytes and lines: stdin split into bounded lines handed to the
//! actor as [`Input`]s, stdout written in order without an agent that stops reading ever
//! stalling the actor. Neither descriptor is switched to non-blocking mode (the agent may share
//! its file description); a read happens only after `poll` says it will not wait.
//!
//! It must not know the protocol.

use std::cell::OnceCell;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{MsgFlags, send};
use nix::sys::stat::{SFlag, fstat};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc;

use super::Input;
use crate::proxy::lines::LineSplitter;
use crate::proxy::settings::MAX_LINE_BYTES;

/// How many bytes one read of stdin takes at most.
const READ_CHUNK: usize = 64 * 1024;

/// Starts serving the agent's stdin and stdout for the actor; must run inside the runtime.
/// stdin is read on the runtime thread when its poller can watch it (a pipe, a socket, a
/// terminal), else (a file, `/dev/null`) on a thread of its own.
/// Returns where the actor writes (its writer thread, once started, is joined when it drops).
pub(super) fn start(inputs: mpsc::UnboundedSender<Input>) -> AgentOut {
    // SAFETY: fd 0 stays open, and names the same description, for the process's whole life.
    match unsafe { AsyncFd::register_with_interest(std::io::stdin(), Interest::READABLE) } {
        Ok(stdin) => drop(tokio::spawn(read_ready(stdin, inputs))),
        Err(_) => drop(std::thread::spawn(move || read_blocking(inputs))),
    }
    // SAFETY: as fd 0 above, fd 1 is never closed while the process runs.
    let direct = DirectOut::detect(unsafe { BorrowedFd::borrow_raw(nix::libc::STDOUT_FILENO) });
    AgentOut {
        direct,
        queued: Arc::new(AtomicUsize::new(0)),
        broken: Arc::new(AtomicBool::new(false)),
        writer: OnceCell::new(),
    }
}

/// Where the actor writes to the agent: one JSON line per message, in order, remembering whether
/// a write ever failed. A write that cannot block (an empty pipe, a socket with room) happens on
/// the actor's thread, any other through a writer thread started the first time one is needed.
pub(super) struct AgentOut {
    /// How to write without the writer thread, when stdout allows it.
    direct: Option<DirectOut>,
    /// Lines handed to the writer thread and not yet written out by it.
    queued: Arc<AtomicUsize>,
    broken: Arc<AtomicBool>,
    /// The writer thread, started by the first line that cannot be written directly (an agent
    /// that reads promptly over a pipe or socket never needs it).
    writer: OnceCell<Writer>,
}

/// The writer thread and its queue.
struct Writer {
    lines: std::sync::mpsc::Sender<String>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AgentOut {
    /// Every line through `lines` (for tests that read the actor's output off a channel).
    #[cfg(test)]
    pub(super) fn queued_only(lines: std::sync::mpsc::Sender<String>) -> Self {
        Self {
            direct: None,
            queued: Arc::new(AtomicUsize::new(0)),
            broken: Arc::new(AtomicBool::new(false)),
            writer: OnceCell::from(Writer {
                lines,
                thread: None,
            }),
        }
    }

    fn writer(&self) -> &Writer {
        self.writer.get_or_init(|| {
            let (lines, queue) = std::sync::mpsc::channel::<String>();
            let (broken, queued) = (self.broken.clone(), self.queued.clone());
            let thread = std::thread::spawn(move || write_queued(queue, broken, queued));
            Writer {
                lines,
                thread: Some(thread),
            }
        })
    }

    /// Writes one message, encoded as a line of JSON (no newline). Written here when nothing is
    /// queued before it and stdout takes it without waiting; the rest goes to the writer thread.
    pub(super) fn write_line(&self, line: String) {
        let mut line = crate::mcp::jsonrpc::as_sent(line);
        line.push('\n');
        if let Some(direct) = &self.direct
            && self.queued.load(Ordering::Acquire) == 0
        {
            match direct.try_write(line.as_bytes()) {
                Direct::All => return,
                Direct::Failed => {
                    self.broken.store(true, Ordering::SeqCst);
                    return;
                }
                Direct::Part(written) => drop(line.drain(..written)),
                Direct::NotNow => {}
            }
        }
        self.queued.fetch_add(1, Ordering::AcqRel);
        if self.writer().lines.send(line).is_err() {
            self.queued.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Whether a write to stdout has failed (the agent stopped reading).
    pub(super) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::SeqCst)
    }
}

impl Drop for AgentOut {
    /// Lets the writer thread write what it holds, then waits for it.
    fn drop(&mut self) {
        if let Some(Writer { lines, thread }) = self.writer.take() {
            drop(lines);
            if let Some(thread) = thread {
                let _ = thread.join();
            }
        }
    }
}

/// What a direct write did.
#[derive(Debug, PartialEq, Eq)]
enum Direct {
    All,
    /// Only this many bytes went out; the rest must follow through the writer thread.
    Part(usize),
    /// Nothing written: it could have waited.
    NotNow,
    /// The agent's end is gone.
    Failed,
}

/// A stdout that can be written without waiting and without changing its flags.
#[derive(Debug)]
enum DirectOut {
    /// A pipe, written only while empty (the agent has read everything before): a write no
    /// larger than the pipe then never waits. Not used when stderr is the same pipe (the worker
    /// inherits stderr and could fill it between the check and the write).
    Pipe {
        fd: BorrowedFd<'static>,
        capacity: usize,
    },
    /// A socket, written with `MSG_DONTWAIT`, which may take part of a line.
    Socket { fd: BorrowedFd<'static> },
}

impl DirectOut {
    fn detect(fd: BorrowedFd<'static>) -> Option<Self> {
        let stat = fstat(fd).ok()?;
        let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
        if kind == SFlag::S_IFSOCK {
            return Some(Self::Socket { fd });
        }
        if kind != SFlag::S_IFIFO {
            return None;
        }
        let stderr = fstat(std::io::stderr().as_fd()).ok();
        if stderr.is_some_and(|err| err.st_ino == stat.st_ino && err.st_dev == stat.st_dev) {
            return None;
        }
        let capacity = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETPIPE_SZ).ok()?;
        Some(Self::Pipe {
            fd,
            capacity: usize::try_from(capacity).ok()?,
        })
    }

    fn try_write(&self, bytes: &[u8]) -> Direct {
        match self {
            Self::Pipe { fd, capacity } => {
                if bytes.len() > *capacity || unread_bytes(*fd) != Some(0) {
                    return Direct::NotNow;
                }
                match write_all(*fd, bytes) {
                    Ok(()) => Direct::All,
                    Err(_) => Direct::Failed,
                }
            }
            Self::Socket { fd } => {
                let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
                match send(fd.as_raw_fd(), bytes, flags) {
                    Ok(n) if n == bytes.len() => Direct::All,
                    Ok(n) => Direct::Part(n),
                    Err(Errno::EAGAIN | Errno::EINTR) => Direct::NotNow,
                    Err(_) => Direct::Failed,
                }
            }
        }
    }
}

/// Bytes written into a pipe and not yet read (`FIONREAD`, which a pipe answers at either end).
fn unread_bytes(fd: BorrowedFd<'_>) -> Option<usize> {
    let mut unread: nix::libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which outlives the call.
    let rc = unsafe { nix::libc::ioctl(fd.as_raw_fd(), nix::libc::FIONREAD, &mut unread) };
    if rc < 0 {
        return None;
    }
    usize::try_from(unread).ok()
}

fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8]) -> nix::Result<()> {
    while !bytes.is_empty() {
        match nix::unistd::write(fd, bytes) {
            Ok(0) => return Err(Errno::EPIPE),
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::EINTR) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Whether a read of `fd` would return at once (data, end of file or an error).
fn readable_now(fd: BorrowedFd<'_>) -> bool {
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
}

/// Reads stdin on the runtime: the poller says when, `poll` confirms, a plain read takes it.
async fn read_ready<T: AsFd + AsRawFd>(stdin: AsyncFd<T>, inputs: mpsc::UnboundedSender<Input>) {
    let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let Ok(mut ready) = stdin.readable().await else {
            break;
        };
        let fd = stdin.get_ref().as_fd();
        if !readable_now(fd) {
            ready.clear_ready();
            continue;
        }
        match nix::unistd::read(fd, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if !hand_over(&mut splitter, &buf[..n], &inputs) {
                    return;
                }
            }
            Err(Errno::EINTR | Errno::EAGAIN) => {}
            Err(_) => break,
        }
    }
    finish(splitter, &inputs);
}

/// Reads stdin on a thread of its own, for what the poller cannot watch.
fn read_blocking(inputs: mpsc::UnboundedSender<Input>) {
    let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if !hand_over(&mut splitter, &buf[..n], &inputs) {
                    return;
                }
            }
        }
    }
    finish(splitter, &inputs);
}

/// Feeds a chunk; false once the actor is gone.
fn hand_over(
    splitter: &mut LineSplitter,
    chunk: &[u8],
    inputs: &mpsc::UnboundedSender<Input>,
) -> bool {
    splitter
        .feed(chunk)
        .into_iter()
        .all(|line| inputs.send(Input::Stdin(line)).is_ok())
}

fn finish(mut splitter: LineSplitter, inputs: &mpsc::UnboundedSender<Input>) {
    if let Some(line) = splitter.finish() {
        let _ = inputs.send(Input::Stdin(line));
    }
    let _ = inputs.send(Input::StdinClosed);
}

/// The writer thread: writes what the actor queued, in order, and counts it off once flushed.
fn write_queued(
    queue: std::sync::mpsc::Receiver<String>,
    broken: Arc<AtomicBool>,
    queued: Arc<AtomicUsize>,
) {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    while let Ok(first) = queue.recv() {
        let mut ok = out.write_all(first.as_bytes()).is_ok();
        let mut taken = 1;
        while let Ok(more) = queue.try_recv() {
            ok = ok && out.write_all(more.as_bytes()).is_ok();
            taken += 1;
        }
        ok = ok && out.flush().is_ok();
        if !ok {
            broken.store(true, Ordering::SeqCst);
        }
        queued.fetch_sub(taken, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::OwnedFd;

    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};

    use super::*;

    /// A `'static` view of a descriptor the test keeps open for its whole run.
    fn leak(fd: OwnedFd) -> BorrowedFd<'static> {
        let fd: &'static OwnedFd = Box::leak(Box::new(fd));
        fd.as_fd()
    }

    fn read_some(fd: &OwnedFd) -> Vec<u8> {
        let mut buf = vec![0u8; 1 << 20];
        let n = nix::unistd::read(fd, &mut buf).unwrap();
        buf.truncate(n);
        buf
    }

    #[test]
    fn an_empty_pipe_is_written_directly_and_one_holding_unread_bytes_is_not() {
        let (reader, writer) = nix::unistd::pipe().unwrap();
        let capacity = 1 << 16;
        let out = DirectOut::Pipe {
            fd: leak(writer),
            capacity,
        };
        assert_eq!(out.try_write(b"one\n"), Direct::All);
        assert_eq!(
            out.try_write(b"two\n"),
            Direct::NotNow,
            "the agent has not read 'one'"
        );
        assert_eq!(read_some(&reader), b"one\n");
        assert_eq!(out.try_write(b"two\n"), Direct::All);
        let too_big = vec![b'x'; capacity + 1];
        assert_eq!(read_some(&reader), b"two\n");
        assert_eq!(
            out.try_write(&too_big),
            Direct::NotNow,
            "larger than the pipe could wait"
        );
    }

    #[test]
    fn a_pipe_whose_reader_is_gone_is_a_failure_not_a_wait() {
        let (reader, writer) = nix::unistd::pipe().unwrap();
        drop(reader);
        let out = DirectOut::Pipe {
            fd: leak(writer),
            capacity: 1 << 16,
        };
        assert_eq!(out.try_write(b"lost\n"), Direct::Failed);
    }

    #[test]
    fn a_full_socket_takes_part_or_nothing_and_never_waits() {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::empty(),
        )
        .unwrap();
        let out = DirectOut::Socket { fd: leak(ours) };
        let chunk = vec![b'y'; 1 << 16];
        let mut outcomes = Vec::new();
        for _ in 0..64 {
            let outcome = out.try_write(&chunk);
            let done = outcome == Direct::NotNow;
            outcomes.push(outcome);
            if done {
                break;
            }
        }
        assert_eq!(outcomes.first(), Some(&Direct::All));
        assert_eq!(
            outcomes.last(),
            Some(&Direct::NotNow),
            "a peer that never reads fills the socket: {outcomes:?}"
        );
        drop(theirs);
    }

    #[test]
    fn lines_keep_their_order_across_direct_and_queued_writes() {
        let (reader, writer) = nix::unistd::pipe().unwrap();
        let writer = leak(writer);
        let (lines, queue) = std::sync::mpsc::channel::<String>();
        let mut out = AgentOut::queued_only(lines);
        out.direct = Some(DirectOut::Pipe {
            fd: writer,
            capacity: 1 << 16,
        });
        out.write_line("1".into());
        out.write_line("2".into());
        out.write_line("3".into());
        assert_eq!(out.queued.load(Ordering::Acquire), 2, "'1' went directly");
        assert_eq!(read_some(&reader), b"1\n");
        out.write_line("4".into());
        assert_eq!(
            out.queued.load(Ordering::Acquire),
            3,
            "an empty pipe is not enough while lines wait in the queue"
        );
        let queued: Vec<String> = queue.try_iter().collect();
        assert_eq!(queued, ["2\n", "3\n", "4\n"]);
    }

    #[tokio::test]
    async fn stdin_on_a_pipe_is_read_on_the_runtime_to_the_last_unterminated_line() {
        let (reader, writer) = nix::unistd::pipe().unwrap();
        // SAFETY: the test owns `reader` and keeps it open while watched.
        let watched = unsafe { AsyncFd::register_with_interest(reader, Interest::READABLE) }
            .expect("a pipe can be watched");
        let (inputs, mut received) = mpsc::unbounded_channel();
        let reading = tokio::spawn(read_ready(watched, inputs));
        write_all(writer.as_fd(), b"{\"a\":1}\n{\"b\"").unwrap();
        write_all(writer.as_fd(), b":2}").unwrap();
        drop(writer);
        reading.await.unwrap();
        let mut got = Vec::new();
        while let Ok(input) = received.try_recv() {
            got.push(format!("{input:?}"));
        }
        assert_eq!(
            got,
            [
                format!(
                    "{:?}",
                    Input::Stdin(crate::proxy::lines::Line::Text(b"{\"a\":1}".to_vec()))
                ),
                format!(
                    "{:?}",
                    Input::Stdin(crate::proxy::lines::Line::Text(b"{\"b\":2}".to_vec()))
                ),
                format!("{:?}", Input::StdinClosed),
            ]
        );
    }

    #[test]
    fn a_file_cannot_be_watched_so_stdin_from_a_file_gets_a_thread() {
        let file = tempfile::tempfile().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _entered = runtime.enter();
        // SAFETY: the test owns `file` and keeps it open while registered.
        let registered = unsafe { AsyncFd::register_with_interest(file, Interest::READABLE) };
        assert!(registered.is_err());
    }
}
