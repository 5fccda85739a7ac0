//! Toxics: the faults a link can carry, one file each, registered under Toxiproxy's wire names.
//!
//! A toxic is a config struct (its attributes, in Toxiproxy's units) plus one behaviour,
//! [`Toxic::pipe`]; extra abilities are opt-in ([`Buffered`], [`Stateful`], [`Cleanup`]). This
//! module owns the contract, the [`REGISTRY`] and the wire shapes ([`ToxicSpec`],
//! [`InstalledToxic`]). It must not own sockets or chains: `chain` and [`crate::proxy`] do.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ApiError;

mod spec;
mod stub;

pub mod bandwidth;
pub mod latency;
pub mod limit_data;
pub mod noop;
pub mod reset_peer;
pub mod slicer;
pub mod slow_close;
pub mod timeout;

pub use bandwidth::Bandwidth;
pub use latency::Latency;
pub use limit_data::LimitData;
pub use noop::Noop;
pub use reset_peer::ResetPeer;
pub use slicer::Slicer;
pub use slow_close::SlowClose;
pub use spec::{InstalledToxic, ToxicPatch, ToxicSpec};
pub use stub::{Chunk, Recv, Stopped, Stub};
pub(crate) use stub::{Input, Msg, Output};
pub use timeout::Timeout;

/// The future a toxic's behaviour runs as. Boxed so toxics can live behind `dyn Toxic`.
pub type PipeFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// One fault's behaviour on one direction of one connection.
///
/// ```text
///            noop (hidden head)      latency          bandwidth
/// source ──▶ [ stub ] ──channel──▶ [ stub ] ──chan──▶ [ stub ] ──▶ destination
/// ```
///
/// `pipe` runs until the input ends (then it calls [`Stub::close`]), the toxic closes or resets
/// the link itself, or the stub is stopped. Every wait must go through the stub
/// ([`Stub::recv`], [`Stub::send`], [`Stub::sleep_until`]) so it can be interrupted, and on an
/// interrupt the toxic hands back any chunk it holds with [`Stub::keep`]: no byte is dropped
/// because a toxic was updated, added or removed.
pub trait Toxic: fmt::Debug + Send + Sync + 'static {
    /// Move data from `stub`'s input to its output, disturbed as this toxic specifies.
    fn pipe<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a>;

    /// Opt in to a larger input buffer (see [`Buffered`]).
    fn buffered(&self) -> Option<&dyn Buffered> {
        None
    }
    /// Opt in to per-connection state that survives updates (see [`Stateful`]).
    fn stateful(&self) -> Option<&dyn Stateful> {
        None
    }
    /// Opt in to a last word when removed from a live link (see [`Cleanup`]).
    fn cleanup(&self) -> Option<&dyn Cleanup> {
        None
    }
}

/// A toxic whose input channel should hold more than one chunk, so upstream stages keep
/// reading while it waits (latency buffers 1024 chunks, as Toxiproxy's does).
pub trait Buffered {
    /// How many chunks the channel into this toxic holds.
    fn buffer_size(&self) -> usize;
}

/// A toxic that keeps state per connection, created when the toxic joins the link and kept
/// across updates until the link ends (limit_data counts bytes already sent).
pub trait Stateful {
    /// A fresh state for one link; read it back with [`Stub::state`].
    fn new_state(&self) -> Box<dyn Any + Send>;
}

/// A toxic that must act when it is removed from a live link (timeout closes the link,
/// because the data it swallowed is gone and the stream is no longer whole).
pub trait Cleanup {
    /// Runs with the toxic's stub just before the toxic leaves the chain. It may close it.
    fn cleanup<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a>;
}

/// A toxic that can be named on the wire: its attributes are its serde fields.
pub trait Kind: Toxic + Serialize + DeserializeOwned + Default + Clone {
    /// The snake_case wire name (`"latency"`, `"reset_peer"`).
    const NAME: &'static str;
}

/// A toxic built from attributes, and its attributes with every default filled in.
pub type Built = (Arc<dyn Toxic>, Value);

/// One entry of the registry: a wire name and how to build the toxic from its attributes.
#[derive(Clone, Copy)]
pub struct Registration {
    /// The wire name, the `type` field of a toxic.
    pub name: &'static str,
    /// Parses attributes into the toxic and its normalised attributes (defaults filled in).
    build: fn(Value) -> Result<Built, serde_json::Error>,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .finish()
    }
}

impl Registration {
    /// The registration of toxic type `T`.
    pub const fn of<T: Kind>() -> Self {
        Self {
            name: T::NAME,
            build: build::<T>,
        }
    }

    /// Build the toxic from its JSON attributes; absent fields take their defaults (0), unknown
    /// fields are refused so a misspelt attribute cannot silently do nothing.
    pub fn build(&self, attributes: Value) -> Result<Built, ApiError> {
        (self.build)(attributes).map_err(|e| ApiError::bad_request_body().with_detail(e))
    }
}

fn build<T: Kind>(attributes: Value) -> Result<Built, serde_json::Error> {
    let attributes = if attributes.is_null() {
        Value::Object(Default::default())
    } else {
        attributes
    };
    let toxic: T = serde_json::from_value(attributes)?;
    let normalised = serde_json::to_value(&toxic)?;
    Ok((Arc::new(toxic), normalised))
}

/// Every toxic this proxy knows, by wire name. `noop` is registered too, as in Toxiproxy.
pub const REGISTRY: &[Registration] = &[
    Registration::of::<Noop>(),
    Registration::of::<Latency>(),
    Registration::of::<Bandwidth>(),
    Registration::of::<SlowClose>(),
    Registration::of::<Timeout>(),
    Registration::of::<ResetPeer>(),
    Registration::of::<Slicer>(),
    Registration::of::<LimitData>(),
];

/// The registration for a wire name.
pub fn lookup(name: &str) -> Option<&'static Registration> {
    REGISTRY.iter().find(|r| r.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_name_is_unique_snake_case_and_builds_from_empty_attributes() {
        let mut seen = std::collections::HashSet::new();
        for r in REGISTRY {
            assert!(seen.insert(r.name), "duplicate {}", r.name);
            assert!(r.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            r.build(Value::Null).expect("defaults build");
        }
        for name in [
            "latency",
            "bandwidth",
            "slow_close",
            "timeout",
            "reset_peer",
            "slicer",
            "limit_data",
        ] {
            assert!(lookup(name).is_some(), "{name} is not registered");
        }
    }

    #[test]
    fn unknown_attributes_and_negative_numbers_are_refused() {
        let latency = lookup("latency").unwrap();
        assert_eq!(
            latency
                .build(serde_json::json!({"latencyy": 5}))
                .unwrap_err()
                .status,
            400
        );
        assert!(latency.build(serde_json::json!({"latency": -5})).is_err());
        let (_, attrs) = latency.build(serde_json::json!({"latency": 5})).unwrap();
        assert_eq!(attrs, serde_json::json!({"latency": 5, "jitter": 0}));
    }
}
