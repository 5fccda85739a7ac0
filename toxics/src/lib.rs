//! The nemesis: specified faults for every hop of Reticle.
//!
//! For TCP hops, a fault proxy that speaks Toxiproxy's REST API and toxic vocabulary, embedded
//! ([`Server::start`]) or standalone (`toxics serve`). It must not know anything about what the
//! product does with the bytes it disturbs. (The gates name every other fault they record, stdio,
//! process and browser, in `gates::fault`.)

// The crate's map. The REST routes, Toxiproxy's shapes; `error`: the one error they return.
pub mod api;
// One direction of a connection: a chain of stages behind a hidden noop head.
mod chain;
// Every proxy by name; `proxy`: one proxy, its listener, its chains.
pub mod collection;
// One accepted connection and its two toxic chains.
mod connection;
// Upstream and downstream; `rng`: seeded randomness.
pub mod direction;
pub mod error;
// Faults installed from Rust heal when their guard drops.
pub mod guard;
pub mod proxy;
pub mod rng;
// The embeddable server, `Server` and `ServerHandle`. Start here.
pub mod server;
// The toxic contract, the registry and one file per toxic.
pub mod toxic;

pub use collection::{PopulateError, ProxyCollection};
pub use direction::Direction;
pub use error::ApiError;
pub use guard::{DownGuard, ToxicGuard};
pub use proxy::{Applied, Proxy, ProxyConfig, ProxyInfo, ProxyPatch};
pub use server::{Server, ServerHandle};
pub use toxic::{InstalledToxic, ToxicPatch, ToxicSpec};
