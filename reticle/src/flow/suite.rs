//! The suite verdict, folded from verdicts: a flow's is its replays' when they all agree, and
//! flaky (`unknown`, never `yes`) when they disagree; the suite is `yes` only when every flow is
//! `yes`, `no` when any flow is steadily `no`, otherwise `unknown`. Read by the `reticle_verify`
//! tool and the `reticle verify` command alike; it must not replay anything.

/// The verdict words a suite folds, for the `reticle verify` command (which reaches the verdict
/// room only through this one).
pub use crate::verdict::Verified;

/// The most replays of one flow a verify makes.
pub const MAX_REPEAT: u32 = 5;

/// The reason word of a flow that could not run (not saved, unreadable, a secret missing, no
/// page for it).
pub const COULD_NOT_RUN: &str = "could_not_run";

/// The suite's verdict from its flows' verdicts.
pub fn suite_verdict(flows: &[Verified]) -> Verified {
    if flows.is_empty() {
        Verified::Unknown
    } else if flows.iter().all(|v| *v == Verified::Yes) {
        Verified::Yes
    } else if flows.contains(&Verified::No) {
        Verified::No
    } else {
        Verified::Unknown
    }
}

/// One flow's verdict from its replays' verdicts: theirs when they agree, else flaky.
pub fn flow_verdict(replays: &[Verified]) -> (Verified, bool) {
    match replays {
        [first, rest @ ..] if rest.iter().all(|v| v == first) => (*first, false),
        [] => (Verified::Unknown, false),
        _ => (Verified::Unknown, true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verified::{No, Unknown, Yes};

    #[test]
    fn the_suite_is_yes_only_when_every_flow_is() {
        assert_eq!(suite_verdict(&[Yes, Yes]), Yes);
        assert_eq!(suite_verdict(&[Yes, Unknown]), Unknown);
        assert_eq!(suite_verdict(&[Unknown, No, Yes]), No);
        assert_eq!(suite_verdict(&[]), Unknown);
    }

    #[test]
    fn replays_that_disagree_are_flaky_never_yes() {
        assert_eq!(flow_verdict(&[Yes, Yes]), (Yes, false));
        assert_eq!(flow_verdict(&[No, No]), (No, false));
        assert_eq!(flow_verdict(&[Yes, No]), (Unknown, true));
        assert_eq!(flow_verdict(&[Yes, Unknown, Yes]), (Unknown, true));
    }
}
