//! Message shapes shared by the daemon and everything that talks to it. Defined once here and
//! imported; nothing in this module performs I/O.

pub mod status;

pub use status::{CatalogueSummary, SessionSummary, StatusReport};
