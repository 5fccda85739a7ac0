//! The toxic chain: one direction of one connection, a chain of stages from the source socket to
//! the destination socket, each stage a task running one toxic on its [`Stub`].
//!
//! It owns the rewiring (add at the end, update in place, remove) by interrupting the stages
//! involved and moving their kept data and channels, so no byte is lost or reordered. It must not
//! decide which toxics exist; the connection task tells it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::connection::{ConnShared, Side};
use crate::direction::Direction;
use crate::rng::Rng;
use crate::toxic::{Input, InstalledToxic, Msg, Output, Stub, noop};

/// How long a toxic's cleanup may take before its connection is closed instead.
const CLEANUP_BOUND: Duration = Duration::from_secs(2);

/// One running stage.
struct Stage {
    /// Its toxic; `None` for the head, and for a removed toxic whose stage must stay to drain.
    toxic: Option<Arc<InstalledToxic>>,
    /// Cancelled to pause it.
    interrupt: CancellationToken,
    /// Gives the stub back when the stage stops.
    join: JoinHandle<Stub>,
}

/// The toxics on one direction of a connection, each a running stage.
///
/// ```text
///  source ─▶ [noop head] ─▶ [toxic 1] ─▶ … ─▶ [toxic n] ─▶ destination
///            reads socket    channel          writes socket
/// ```
///
/// With no toxics the head reads the source and writes the destination itself: one task, no
/// channel, which is why an idle proxy costs little.
///
/// ```text
///  source ─▶ [noop head] ─▶ [toxic 1] ─▶ … ─▶ [toxic n] ─▶ destination
///            reads socket    channel          writes socket
/// ```
///
/// With no toxics the head reads the source and writes the destination itself: one task, no
/// channel, which is why an idle proxy costs little.
pub(crate) struct ToxicChain {
    /// The connection both directions share.
    conn: Arc<ConnShared>,
    /// Stage 0 is the head; the last stage writes the destination.
    stages: Vec<Stage>,
    /// True once the tail has ended: changes are ignored from then on.
    dead: bool,
}

impl ToxicChain {
    /// Start a link carrying `chain`, in order.
    pub(crate) fn start(
        conn: Arc<ConnShared>,
        direction: Direction,
        chain: &[Arc<InstalledToxic>],
        rng: &mut Rng,
    ) -> Self {
        let (source, destination) = Side::ends(direction);
        let toxics: Vec<Option<Arc<InstalledToxic>>> = std::iter::once(None)
            .chain(chain.iter().cloned().map(Some))
            .collect();
        let mut stages = Vec::with_capacity(toxics.len());
        let mut input = Input::socket(source);
        for (i, toxic) in toxics.iter().enumerate() {
            let (output, next_input) = match toxics.get(i + 1) {
                Some(Some(next)) => {
                    let (tx, rx) = mpsc::channel(next.buffer_size());
                    (Output::Channel(tx), Input::Channel(rx))
                }
                _ => (Output::Socket(destination), Input::Detached),
            };
            let stub = new_stub(
                std::mem::replace(&mut input, next_input),
                output,
                &conn,
                toxic,
                rng,
            );
            stages.push(spawn(stub, toxic.clone()));
        }
        Self {
            conn,
            stages,
            dead: false,
        }
    }

    /// Append `toxic` after the current tail.
    pub(crate) async fn add(&mut self, toxic: Arc<InstalledToxic>, rng: &mut Rng) {
        if self.dead {
            return;
        }
        let last = self.stages.len() - 1;
        let Some(mut tail) = self.interrupt(last).await else {
            self.dead = true;
            return;
        };
        let (tx, rx) = mpsc::channel(toxic.buffer_size());
        let destination = std::mem::replace(&mut tail.output, Output::Channel(tx));
        let stub = new_stub(
            Input::Channel(rx),
            destination,
            &self.conn,
            &Some(toxic.clone()),
            rng,
        );
        let previous = self.stages[last].toxic.clone();
        self.stages[last] = spawn(tail, previous);
        self.stages.push(spawn(stub, Some(toxic)));
    }

    /// Restart the stage carrying `toxic.name` with the new settings.
    pub(crate) async fn update(&mut self, toxic: Arc<InstalledToxic>) {
        let Some(i) = self.position(&toxic.name) else {
            return;
        };
        if let Some(stub) = self.interrupt(i).await {
            self.stages[i] = spawn(stub, Some(toxic));
        }
    }

    /// Take the stage carrying `name` out of the chain.
    pub(crate) async fn remove(&mut self, name: &str) {
        let Some(i) = self.position(name) else {
            return;
        };
        let Some(mut current) = self.interrupt(i).await else {
            // It had already ended; the link is coming down around it.
            self.stages.remove(i);
            return;
        };
        let toxic = self.stages[i]
            .toxic
            .clone()
            .expect("only named stages are found");
        if let Some(cleanup) = toxic.toxic.cleanup() {
            current.interrupt = self.conn.done.child_token();
            let bounded = tokio::time::timeout(CLEANUP_BOUND, cleanup.cleanup(&mut current)).await;
            if bounded.is_err() {
                // The stages after it do not drain (a peer that stopped reading): rather than
                // hold up every later change, end the connection outright.
                tracing::warn!(toxic = %toxic.name, "cleanup did not finish; closing the connection");
                self.conn.close();
                self.stages.remove(i);
                return;
            }
            if current.closed {
                self.stages.remove(i);
                return;
            }
        }
        let Some(mut previous) = self.interrupt(i - 1).await else {
            // Nothing feeds this stage any more, but it may still hold data and the end of
            // the stream: keep it as a plain forwarder until it drains.
            self.stages[i] = spawn(current, None);
            return;
        };
        // Oldest first: what the removed stage held, what sat in its input, then what the
        // previous stage was trying to send it.
        let mut moved = std::mem::take(&mut current.kept);
        if let Input::Channel(mut rx) = std::mem::replace(&mut current.input, Input::Detached) {
            while let Ok(msg) = rx.try_recv() {
                moved.push_back(msg);
            }
        }
        if let Some(kind) = current.input_end {
            moved.push_back(Msg::Close(kind));
        }
        moved.append(&mut previous.kept);
        previous.kept = moved;
        previous.output = std::mem::replace(&mut current.output, Output::Gone);
        let previous_toxic = self.stages[i - 1].toxic.clone();
        self.stages[i - 1] = spawn(previous, previous_toxic);
        self.stages.remove(i);
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.stages
            .iter()
            .position(|s| s.toxic.as_ref().is_some_and(|t| t.name == name))
    }

    /// Pause stage `i` and take its stub back; `None` when it has ended for good.
    async fn interrupt(&mut self, i: usize) -> Option<Stub> {
        let stage = &mut self.stages[i];
        stage.interrupt.cancel();
        let stub = match (&mut stage.join).await {
            Ok(stub) => stub,
            Err(e) => {
                // A toxic panicked: the stream it carried is broken, so say so loudly by
                // closing the connection rather than leaving it hanging.
                tracing::error!(error = %e, "a toxic stage failed; closing the connection");
                self.conn.close();
                self.dead = true;
                return None;
            }
        };
        if stub.closed || self.conn.done.is_cancelled() {
            if i + 1 == self.stages.len() {
                self.dead = true;
            }
            return None;
        }
        Some(stub)
    }
}

fn new_stub(
    input: Input,
    output: Output,
    conn: &Arc<ConnShared>,
    toxic: &Option<Arc<InstalledToxic>>,
    rng: &mut Rng,
) -> Stub {
    let state = toxic
        .as_ref()
        .and_then(|t| t.toxic.stateful().map(|s| s.new_state()));
    Stub::new(input, output, conn.clone(), state, rng)
}

/// Run `stub` with `toxic` (or the noop) on a fresh interrupt token.
fn spawn(mut stub: Stub, toxic: Option<Arc<InstalledToxic>>) -> Stage {
    stub.interrupt = stub.conn.done.child_token();
    let interrupt = stub.interrupt.clone();
    let running = toxic.clone();
    let join = tokio::spawn(async move {
        if !stub.flush().await {
            return stub;
        }
        match &running {
            Some(t) if stub.roll < f64::from(t.toxicity) => t.toxic.pipe(&mut stub).await,
            _ => noop::forward(&mut stub).await,
        }
        stub
    });
    Stage {
        toxic,
        interrupt,
        join,
    }
}
