//! `noop`: passes everything through untouched.
//!
//! It is the hidden head of every chain (the point where a link can be paused) and what a
//! stage runs when its toxicity roll misses, so a chain keeps its shape either way. It must
//! not buffer, delay or reorder anything.

use serde::{Deserialize, Serialize};

use super::{Kind, PipeFuture, Recv, Stub, Toxic};

/// Passes data through unchanged. No attributes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Noop {}

impl Kind for Noop {
    const NAME: &'static str = "noop";
}

impl Toxic for Noop {
    fn pipe<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a> {
        Box::pin(forward(stub))
    }
}

/// Forward chunks until the input ends (then pass the end on) or the stub stops.
pub(crate) async fn forward(stub: &mut Stub) {
    loop {
        match stub.recv().await {
            Recv::Chunk(chunk) => {
                if stub.send(chunk).await.is_err() {
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
}
