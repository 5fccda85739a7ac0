//! Predicates and the verdict: what an agent asserts about the page, how it is judged over an
//! observation window, and the one decision that turns that into `verified: yes | no | unknown`
//! with a reason from a closed set. Pure logic: page reads come through [`probe::PageProbe`],
//! events through [`window::Window`]; this room never talks to a socket itself.

// The verdict and its reason.
pub mod decide;
// One predicate over a window and the page, with evidence per child.
pub mod evaluate;
// The predicate kinds and their strict parser (errors list the accepted fields).
pub mod predicate;
// Reading the live page (elements, text, stores, route) during evaluation.
pub mod probe;
// Re-evaluating a predicate as events arrive, within a bound.
pub mod wait;
// The observed events of a window and what was lost from it.
pub mod window;

pub use decide::{Verdict, VerdictReason, Verified, decide};
pub use evaluate::{Evaluation, Status, evaluate};
pub use predicate::{Predicate, PredicateError, parse};
pub use wait::{Observation, Waited, wait_until};
pub use window::{CaptureLoss, ObservedEvent, Window};
