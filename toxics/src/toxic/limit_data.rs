//! `limit_data`: lets `bytes` bytes through, then closes the connection.
//!
//! The count is per connection and direction and survives updates. The chunk that crosses the
//! limit is cut at the limit; what follows is not delivered. It must not deliver a byte past
//! the limit.

use std::any::Any;

use serde::{Deserialize, Serialize};

use super::{Kind, PipeFuture, Recv, Stateful, Stub, Toxic};

/// Closes the connection after a number of bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitData {
    /// Bytes to transmit before the connection is closed.
    pub bytes: u64,
}

/// Bytes already let through on this link.
struct Transmitted(u64);

impl Kind for LimitData {
    const NAME: &'static str = "limit_data";
}

impl Stateful for LimitData {
    fn new_state(&self) -> Box<dyn Any + Send> {
        Box::new(Transmitted(0))
    }
}

impl Toxic for LimitData {
    fn pipe<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a> {
        Box::pin(async move {
            let sent = stub.state::<Transmitted>().0;
            if sent > 0 && sent >= self.bytes {
                stub.close_connection().await;
                return;
            }
            loop {
                match stub.recv().await {
                    Recv::Chunk(mut chunk) => {
                        let sent = stub.state::<Transmitted>().0;
                        let room = self.bytes.saturating_sub(sent) as usize;
                        let take = chunk.data.len().min(room);
                        if take > 0 {
                            chunk.data.truncate(take);
                            // Counted before the write: if an interrupt keeps it, it is still
                            // delivered when the stage resumes.
                            stub.state::<Transmitted>().0 += take as u64;
                            if stub.send(chunk).await.is_err() {
                                return;
                            }
                        }
                        if stub.state::<Transmitted>().0 >= self.bytes {
                            stub.close_connection().await;
                            return;
                        }
                    }
                    Recv::End => {
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
