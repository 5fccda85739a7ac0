//! `reset_peer`: answers the first data (or end of stream) with a TCP RST to both peers,
//! immediately or `timeout` milliseconds later.
//!
//! Both sockets are closed with `SO_LINGER` 0, so each peer reads `ECONNRESET`, not a clean
//! end, and nothing after the trigger is delivered. The trigger time survives updates. It must
//! not pass data through; discarding it is the fault.

use std::any::Any;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{Kind, PipeFuture, Recv, Stateful, Stub, Toxic};

/// Resets the connection after the first data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResetPeer {
    /// Milliseconds between the first data and the reset; 0 resets at once.
    pub timeout: u64,
}

/// When data (or the end) first arrived.
struct Triggered(Option<Instant>);

impl Kind for ResetPeer {
    const NAME: &'static str = "reset_peer";
}

impl Stateful for ResetPeer {
    fn new_state(&self) -> Box<dyn Any + Send> {
        Box::new(Triggered(None))
    }
}

impl Toxic for ResetPeer {
    fn pipe<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a> {
        Box::pin(async move {
            loop {
                if let Some(at) = stub.state::<Triggered>().0 {
                    if stub
                        .sleep_until(at + Duration::from_millis(self.timeout))
                        .await
                        .is_err()
                    {
                        return;
                    }
                    stub.reset();
                    return;
                }
                match stub.recv().await {
                    Recv::Chunk(_) | Recv::End => {
                        stub.state::<Triggered>().0 = Some(Instant::now());
                    }
                    Recv::Stopped => return,
                }
            }
        })
    }

    fn stateful(&self) -> Option<&dyn Stateful> {
        Some(self)
    }
}
