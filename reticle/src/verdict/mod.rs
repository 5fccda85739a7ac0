//! Predicates and the verdict: what an agent asserts about the page, how it is judged over an
//! observation window, and the one decision that turns that into `verified: yes | no | unknown`
//! with a reason from a closed set. Pure logic: page reads come through [`probe::PageProbe`],
//! events through [`window::Window`]; this room never talks to a socket itself.
//!
//! # Layout
//! - [`predicate`]: the predicate kinds and their strict parser (errors list the accepted fields).
//! - [`window`]: the observed events of a window and what was lost from it.
//! - [`probe`]: reading the live page (elements, text, stores, route) during evaluation.
//! - [`evaluate`]: one predicate over a window and the page, with evidence per child.
//! - [`wait`]: re-evaluating a predicate as events arrive, within a bound.
//! - [`decide`]: the verdict and its reason.

pub mod decide;
pub mod evaluate;
pub mod predicate;
pub mod probe;
pub mod wait;
pub mod window;

pub use decide::{Verdict, VerdictReason, Verified, decide};
pub use evaluate::{Evaluation, Status, evaluate};
pub use predicate::{Predicate, PredicateError, parse};
pub use wait::{Observation, Waited, wait_until};
pub use window::{CaptureLoss, ObservedEvent, Window};
