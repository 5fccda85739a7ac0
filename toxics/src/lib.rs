//! The nemesis: specified faults for every hop of Reticle.
//!
//! For TCP hops, a fault proxy that speaks Toxiproxy's REST API and toxic vocabulary, embedded
//! ([`Server::start`]) or standalone (`toxics serve`). It must not know anything about what the
//! product does with the bytes it disturbs. (The gates name every other fault they record, stdio,
//! process and browser, in `gates::fault`.)
//!
//! # Layout
//! - [`server`]: the embeddable server, [`Server`] and [`ServerHandle`]. Start here.
//! - [`api`]: the REST routes, Toxiproxy's shapes; [`error`]: the one error they return.
//! - [`collection`]: every proxy by name; [`proxy`]: one proxy, its listener, its chains.
//! - `connection`: one accepted connection and its two toxic chains; `chain`: one direction,
//!   a chain of stages behind a hidden noop head.
//! - [`toxic`]: the toxic contract, the registry and one file per toxic.
//! - [`guard`]: faults installed from Rust heal when their guard drops.
//! - [`direction`]: upstream and downstream; [`rng`]: seeded randomness.
//!
//! # Example
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use toxics::{ProxyConfig, Server, ToxicSpec, toxic::Latency};
//! let server = Server::builder().seed(7).serve("127.0.0.1:0").await?;
//! let proxy = server.proxies().create(ProxyConfig::new("daemon", "127.0.0.1:4400"))?;
//! let slow = proxy.inject(ToxicSpec::new(Latency { latency: 250, jitter: 0 })).await?;
//! // ... connect to proxy.listen_addr() and observe ...
//! drop(slow); // healed
//! # Ok(()) }
//! ```

pub mod api;
mod chain;
pub mod collection;
mod connection;
pub mod direction;
pub mod error;
pub mod guard;
pub mod proxy;
pub mod rng;
pub mod server;
pub mod toxic;

pub use collection::{PopulateError, ProxyCollection};
pub use direction::Direction;
pub use error::ApiError;
pub use guard::{DownGuard, ToxicGuard};
pub use proxy::{Applied, Proxy, ProxyConfig, ProxyInfo, ProxyPatch};
pub use server::{Server, ServerHandle};
pub use toxic::{InstalledToxic, ToxicPatch, ToxicSpec};
