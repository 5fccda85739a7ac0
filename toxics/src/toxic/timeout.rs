//! `timeout`: lets nothing through, then cuts the connection after `timeout` milliseconds; with
//! `timeout` 0 it holds the connection open and silent while it is installed (a blackhole).
//!
//! The clock starts when the toxic joins the link and is not restarted by data or updates.
//! Swallowing data is its whole purpose; it must not pass any through.

use std::any::Any;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{Cleanup, Kind, PipeFuture, Recv, Stateful, Stub, Toxic};

/// Stops all data and closes the connection after a timeout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Timeout {
    /// Milliseconds before the connection is closed; 0 never closes it.
    pub timeout: u64,
}

/// When the toxic joined this link.
struct Since(Instant);

impl Kind for Timeout {
    const NAME: &'static str = "timeout";
}

impl Stateful for Timeout {
    fn new_state(&self) -> Box<dyn Any + Send> {
        Box::new(Since(Instant::now()))
    }
}

// Removing it from a live link closes that link, because the bytes it swallowed are gone and
// the stream can no longer be whole.
impl Cleanup for Timeout {
    fn cleanup<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a> {
        Box::pin(stub.close_connection())
    }
}

// The end of the input is swallowed like data (Toxiproxy's code passes it on, its README says
// the connection stays open; we follow the README, so a blackhole stays silent even when the
// other side hangs up).
impl Toxic for Timeout {
    fn pipe<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a> {
        Box::pin(async move {
            let deadline = (self.timeout > 0)
                .then(|| stub.state::<Since>().0 + Duration::from_millis(self.timeout));
            let expired = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::pin!(expired);
            // Swallow data until the deadline. The end of the input is swallowed too: the
            // peer must see silence, not a close, until the timeout says otherwise.
            loop {
                tokio::select! {
                    biased;
                    _ = &mut expired => {
                        stub.close_connection().await;
                        return;
                    }
                    got = stub.recv() => match got {
                        Recv::Chunk(_) => {}
                        Recv::End => break,
                        Recv::Stopped => return,
                    },
                }
            }
            tokio::select! {
                biased;
                _ = &mut expired => stub.close_connection().await,
                _ = stub.stopped() => {}
            }
        })
    }

    fn stateful(&self) -> Option<&dyn Stateful> {
        Some(self)
    }

    fn cleanup(&self) -> Option<&dyn Cleanup> {
        Some(self)
    }
}
