//! `slow_close`: holds the end of the stream back for `delay` milliseconds.
//!
//! Data passes untouched; only the FIN (or close) that follows it waits. The wait is counted
//! from when the end arrived, so an update does not restart it. It must not delay data.

use std::any::Any;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{Kind, PipeFuture, Recv, Stateful, Stub, Toxic};

/// Delays the close of the connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SlowClose {
    /// Milliseconds between the end of the input and the end of the output.
    pub delay: u64,
}

/// When the input ended, once it has.
struct EndSeen(Option<Instant>);

impl Kind for SlowClose {
    const NAME: &'static str = "slow_close";
}

impl Stateful for SlowClose {
    fn new_state(&self) -> Box<dyn Any + Send> {
        Box::new(EndSeen(None))
    }
}

impl Toxic for SlowClose {
    fn pipe<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a> {
        Box::pin(async move {
            loop {
                match stub.recv().await {
                    Recv::Chunk(chunk) => {
                        if stub.send(chunk).await.is_err() {
                            return;
                        }
                    }
                    Recv::End => {
                        let since = *stub.state::<EndSeen>().0.get_or_insert_with(Instant::now);
                        let due = since + Duration::from_millis(self.delay);
                        if stub.sleep_until(due).await.is_err() {
                            return;
                        }
                        stub.close().await;
                        return;
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
