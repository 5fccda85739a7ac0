//! The agent's stdin and stdout, each on its own thread: stdin is split into bounded lines and
//! handed to the actor as [`Input`]s; stdout writes the lines the actor emits, in order, and
//! remembers whether a write ever failed. No protocol here: bytes and lines only.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;

use super::Input;
use crate::proxy::lines::LineSplitter;
use crate::proxy::settings::MAX_LINE_BYTES;

/// Where the actor writes to the agent: one JSON line per message.
pub(super) struct AgentOut {
    lines: std::sync::mpsc::Sender<String>,
    broken: Arc<AtomicBool>,
}

impl AgentOut {
    pub(super) fn new(lines: std::sync::mpsc::Sender<String>, broken: Arc<AtomicBool>) -> Self {
        Self { lines, broken }
    }

    /// Writes one message, encoded as a line of JSON (no newline).
    pub(super) fn write_line(&self, mut line: String) {
        line.push('\n');
        let _ = self.lines.send(line);
    }

    /// Whether a write to stdout has failed (the agent stopped reading).
    pub(super) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::SeqCst)
    }
}

pub(super) fn read_stdin(tx: mpsc::UnboundedSender<Input>) {
    let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                for line in splitter.feed(&buf[..n]) {
                    if tx.send(Input::Stdin(line)).is_err() {
                        return;
                    }
                }
            }
        }
    }
    if let Some(line) = splitter.finish() {
        let _ = tx.send(Input::Stdin(line));
    }
    let _ = tx.send(Input::StdinClosed);
}

pub(super) fn write_stdout(rx: std::sync::mpsc::Receiver<String>, broken: Arc<AtomicBool>) {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    while let Ok(first) = rx.recv() {
        let mut ok = out.write_all(first.as_bytes()).is_ok();
        while let Ok(more) = rx.try_recv() {
            ok = ok && out.write_all(more.as_bytes()).is_ok();
        }
        ok = ok && out.flush().is_ok();
        if !ok {
            broken.store(true, Ordering::SeqCst);
        }
    }
}
