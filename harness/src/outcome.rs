//! Three-valued outcomes: a check passed, failed, or proved nothing because the harness could not
//! establish what it needed (the transport died, the fault could not be injected).

use std::fmt;

/// What a check established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail { because: String },
    Inconclusive { because: String },
}

impl Outcome {
    /// Attributes a "did the app connect" check: a dead transport makes absence prove nothing.
    pub fn attribute(connected: bool, transport_alive_throughout: bool) -> Self {
        match (connected, transport_alive_throughout) {
            (true, _) => Outcome::Pass,
            (false, false) => Outcome::Inconclusive {
                because: "nothing connected, but the daemon was not listening for the whole window; this says nothing about the app".into(),
            },
            (false, true) => Outcome::Fail {
                because: "the daemon listened for the whole window and nothing connected".into(),
            },
        }
    }

    /// Only a pass is a pass.
    pub fn is_pass(&self) -> bool {
        match self {
            Outcome::Pass => true,
            Outcome::Fail { .. } | Outcome::Inconclusive { .. } => false,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Pass => f.write_str("pass"),
            Outcome::Fail { because } => write!(f, "fail: {because}"),
            Outcome::Inconclusive { because } => write!(f, "inconclusive: {because}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_transport_is_inconclusive_never_a_fail() {
        assert_eq!(Outcome::attribute(true, false), Outcome::Pass);
        assert!(matches!(
            Outcome::attribute(false, false),
            Outcome::Inconclusive { .. }
        ));
        assert!(matches!(
            Outcome::attribute(false, true),
            Outcome::Fail { .. }
        ));
        assert!(!Outcome::attribute(false, false).is_pass());
    }
}
