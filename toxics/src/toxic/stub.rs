//! The stub: everything one toxic sees of the link it sits in.
//!
//! Every wait a toxic makes goes through here, so every wait is interruptible and no interrupted
//! write loses bytes. It must not decide what a toxic does with the data, nor rewire itself: the
//! chain does that.

use std::any::Any;
use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::connection::{ConnShared, Side};
use crate::rng::Rng;

/// How much a head stage asks the socket for in one read.
const READ_SIZE: usize = 32 * 1024;

/// A piece of the stream, with the time the proxy read it (latency measures from there).
#[derive(Debug, Clone)]
pub struct Chunk {
    /// The bytes, in stream order.
    pub data: Bytes,
    /// When the proxy read these bytes from the source socket, or when a previous toxic
    /// released them.
    pub at: Instant,
}

impl Chunk {
    /// A chunk read now.
    pub fn new(data: impl Into<Bytes>) -> Self {
        Self {
            data: data.into(),
            at: Instant::now(),
        }
    }
}

/// How a link's output ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CloseKind {
    /// The source sent FIN: pass a FIN on (a half close); the other direction carries on.
    Eof,
    /// The link failed or a toxic cut it: close the whole connection, both sides, with FIN.
    Drop,
}

/// What travels between stages.
#[derive(Debug)]
pub(crate) enum Msg {
    Data(Chunk),
    Close(CloseKind),
}

/// Where a stage reads from.
pub(crate) enum Input {
    /// The source socket (only the hidden head reads it).
    Socket { side: Side, buf: BytesMut },
    /// The previous stage.
    Channel(mpsc::Receiver<Msg>),
    /// Nothing: the input was moved elsewhere while rewiring.
    Detached,
}

impl Input {
    pub(crate) fn socket(side: Side) -> Self {
        Input::Socket {
            side,
            buf: BytesMut::new(),
        }
    }
}

/// Where a stage writes to.
pub(crate) enum Output {
    /// The destination socket (only the tail writes it).
    Socket(Side),
    /// The next stage.
    Channel(mpsc::Sender<Msg>),
    /// Closed: this stage has ended its output.
    Gone,
}

/// What [`Stub::recv`] found.
#[derive(Debug)]
pub enum Recv {
    /// The next piece of the stream.
    Chunk(Chunk),
    /// The input has ended. Call [`Stub::close`] (now or after a delay) and return.
    End,
    /// The stub was interrupted or the connection is gone: return now, after handing back
    /// anything held with [`Stub::keep`].
    Stopped,
}

/// The stub was interrupted, or its output is gone. A toxic that sees this returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// One stage of a link, as a toxic sees it: its input (the source socket for the hidden head,
/// else a channel from the previous stage), its output (a channel to the next stage, or the
/// destination socket for the tail), its interrupt token, the data handed back on an interrupt,
/// its per-connection state and its share of the seeded randomness.
pub struct Stub {
    /// Where chunks come from.
    pub(crate) input: Input,
    /// Where chunks go.
    pub(crate) output: Output,
    /// The connection both sockets belong to (for reading, writing and ending it).
    pub(crate) conn: Arc<ConnShared>,
    /// Cancelled to pause this stage (a child of the connection's token, so a dead
    /// connection also stops it).
    pub(crate) interrupt: CancellationToken,
    /// Messages not yet written to the output, oldest first, flushed before the toxic runs
    /// again. This is how an interrupt avoids dropping data.
    pub(crate) kept: VecDeque<Msg>,
    /// How the input ended, once it has; later `recv` calls return `End` again.
    pub(crate) input_end: Option<CloseKind>,
    /// True once this stage has ended its output; the stage is then finished for good.
    pub(crate) closed: bool,
    /// The toxic's per-connection state, when it is [`super::Stateful`].
    pub(crate) state: Option<Box<dyn Any + Send>>,
    /// This stage's own generator, seeded from the connection's.
    pub(crate) rng: Rng,
    /// The toxicity roll, drawn once when the stage was created: the toxic runs while
    /// `roll < toxicity`, so raising toxicity later reaches the same connections first.
    pub(crate) roll: f64,
}

impl Stub {
    pub(crate) fn new(
        input: Input,
        output: Output,
        conn: Arc<ConnShared>,
        state: Option<Box<dyn Any + Send>>,
        rng: &mut Rng,
    ) -> Self {
        Self {
            interrupt: conn.done.child_token(),
            input,
            output,
            conn,
            kept: VecDeque::new(),
            input_end: None,
            closed: false,
            state,
            roll: rng.unit(),
            rng: Rng::new(rng.next_u64()),
        }
    }

    /// Wait for the next chunk, the end of the input, or an interrupt. Cancel-safe.
    pub async fn recv(&mut self) -> Recv {
        if self.input_end.is_some() {
            return Recv::End;
        }
        if self.interrupt.is_cancelled() {
            return Recv::Stopped;
        }
        match &mut self.input {
            Input::Detached => Recv::Stopped,
            Input::Channel(rx) => {
                let msg = tokio::select! {
                    biased;
                    _ = self.interrupt.cancelled() => return Recv::Stopped,
                    msg = rx.recv() => msg,
                };
                match msg {
                    Some(Msg::Data(chunk)) => Recv::Chunk(chunk),
                    Some(Msg::Close(kind)) => {
                        self.input_end = Some(kind);
                        Recv::End
                    }
                    // The previous stage vanished without a word: treat it as a failure.
                    None => {
                        self.input_end = Some(CloseKind::Drop);
                        Recv::End
                    }
                }
            }
            Input::Socket { side, buf } => {
                let socket = self.conn.socket(*side);
                loop {
                    tokio::select! {
                        biased;
                        _ = self.interrupt.cancelled() => return Recv::Stopped,
                        ready = socket.readable() => {
                            if ready.is_err() {
                                self.input_end = Some(CloseKind::Drop);
                                return Recv::End;
                            }
                        }
                    }
                    if buf.capacity() - buf.len() < READ_SIZE / 4 {
                        buf.reserve(READ_SIZE);
                    }
                    match socket.try_read_buf(buf) {
                        Ok(0) => {
                            self.input_end = Some(CloseKind::Eof);
                            return Recv::End;
                        }
                        Ok(_) => return Recv::Chunk(Chunk::new(buf.split().freeze())),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                        Err(_) => {
                            self.input_end = Some(CloseKind::Drop);
                            return Recv::End;
                        }
                    }
                }
            }
        }
    }

    /// Write a chunk to the output. On an interrupt the unwritten part is kept and written
    /// first when the stage resumes; the caller just returns.
    pub async fn send(&mut self, chunk: Chunk) -> Result<(), Stopped> {
        match self.emit(Msg::Data(chunk)).await {
            Ok(()) => Ok(()),
            Err(Some(rest)) => {
                self.kept.push_back(rest);
                Err(Stopped)
            }
            Err(None) => Err(Stopped),
        }
    }

    /// Hand back a chunk this toxic read but has not written, because it was interrupted.
    /// It is written (undisturbed) before anything else when the stage resumes.
    pub fn keep(&mut self, chunk: Chunk) {
        if !chunk.data.is_empty() {
            self.kept.push_back(Msg::Data(chunk));
        }
    }

    /// Sleep until `deadline`, or until interrupted.
    pub async fn sleep_until(&mut self, deadline: Instant) -> Result<(), Stopped> {
        tokio::select! {
            biased;
            _ = self.interrupt.cancelled() => Err(Stopped),
            _ = tokio::time::sleep_until(deadline) => Ok(()),
        }
    }

    /// Sleep for `duration`, or until interrupted.
    pub async fn sleep(&mut self, duration: Duration) -> Result<(), Stopped> {
        self.sleep_until(Instant::now() + duration).await
    }

    /// True once interrupted (or once the connection is gone).
    pub fn is_stopped(&self) -> bool {
        self.interrupt.is_cancelled()
    }

    /// End this stage's output. After the input ended, this passes the same end on (a FIN
    /// stays a half close). Before it ended, this cuts the whole connection: both sides see
    /// their socket closed, after the data already written.
    pub async fn close(&mut self) {
        let kind = self.input_end.unwrap_or(CloseKind::Drop);
        if let Err(Some(msg)) = self.emit(Msg::Close(kind)).await {
            self.kept.push_back(msg);
        }
    }

    /// Cut the whole connection after the data already written, whatever the input did: both
    /// peers see their stream end (timeout and limit_data end this way).
    pub async fn close_connection(&mut self) {
        if let Err(Some(msg)) = self.emit(Msg::Close(CloseKind::Drop)).await {
            self.kept.push_back(msg);
        }
    }

    /// Wait until this stub is interrupted (or its connection is gone).
    pub async fn stopped(&mut self) {
        self.interrupt.cancelled().await
    }

    /// Reset the connection now: both sockets are closed with `SO_LINGER` 0, so both peers
    /// get a TCP RST and data still in flight inside the proxy is discarded.
    pub fn reset(&mut self) {
        self.conn.reset();
        self.closed = true;
        self.output = Output::Gone;
    }

    /// This stage's generator (seeded; see [`crate::rng`]).
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// The toxic's per-connection state.
    ///
    /// # Panics
    /// When the toxic did not create a state of type `T` through [`super::Stateful`]: that is
    /// a bug in the toxic, not a condition of the network.
    pub fn state<T: Any + Send>(&mut self) -> &mut T {
        self.state
            .as_mut()
            .and_then(|s| s.downcast_mut::<T>())
            .expect("toxic read a state it did not create through Stateful::new_state")
    }

    /// Write what an interrupt left behind. False when the stage must not run its toxic now
    /// (interrupted again, or its output ended).
    pub(crate) async fn flush(&mut self) -> bool {
        while let Some(msg) = self.kept.pop_front() {
            match self.emit(msg).await {
                Ok(()) => {}
                Err(Some(rest)) => {
                    self.kept.push_front(rest);
                    return false;
                }
                Err(None) => {
                    self.kept.clear();
                    return false;
                }
            }
        }
        !self.closed
    }

    /// Deliver one message to the output. `Err(Some(msg))`: interrupted, `msg` is what is
    /// left to deliver. `Err(None)`: the output is gone (the stage is now closed).
    async fn emit(&mut self, msg: Msg) -> Result<(), Option<Msg>> {
        match &mut self.output {
            Output::Gone => Err(None),
            Output::Channel(tx) => {
                let delivered = {
                    let permit = tokio::select! {
                        biased;
                        _ = self.interrupt.cancelled() => return Err(Some(msg)),
                        permit = tx.reserve() => permit,
                    };
                    match permit {
                        Ok(permit) => {
                            let closing = matches!(msg, Msg::Close(_));
                            permit.send(msg);
                            Some(closing)
                        }
                        // The next stage is gone, so the link is coming down.
                        Err(_) => None,
                    }
                };
                match delivered {
                    Some(closing) => {
                        if closing {
                            self.finish();
                        }
                        Ok(())
                    }
                    None => {
                        self.finish();
                        Err(None)
                    }
                }
            }
            Output::Socket(side) => {
                let side = *side;
                match msg {
                    Msg::Close(CloseKind::Eof) => {
                        self.conn.half_close(side);
                        self.finish();
                        Ok(())
                    }
                    Msg::Close(CloseKind::Drop) => {
                        self.conn.close();
                        self.finish();
                        Ok(())
                    }
                    Msg::Data(mut chunk) => {
                        let socket = self.conn.socket(side);
                        while !chunk.data.is_empty() {
                            tokio::select! {
                                biased;
                                _ = self.interrupt.cancelled() => return Err(Some(Msg::Data(chunk))),
                                ready = socket.writable() => {
                                    if ready.is_err() {
                                        self.conn.close();
                                        self.finish();
                                        return Err(None);
                                    }
                                }
                            }
                            match socket.try_write(&chunk.data) {
                                Ok(n) => chunk.data.advance(n),
                                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                                Err(_) => {
                                    // The destination hung up: nothing more can be delivered
                                    // either way, so the whole connection goes.
                                    self.conn.close();
                                    self.finish();
                                    return Err(None);
                                }
                            }
                        }
                        Ok(())
                    }
                }
            }
        }
    }

    fn finish(&mut self) {
        self.closed = true;
        self.output = Output::Gone;
    }
}
