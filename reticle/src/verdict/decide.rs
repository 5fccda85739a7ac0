//! The verdict: `yes` only on positive evidence over a complete window, `no` only when the claim
//! was evaluated and did not hold (contradicted by an observation, or its evidence never came),
//! `unknown` whenever evidence is missing: the page went away, the window lost events, the page
//! could not be read, or it never settled. Each verdict carries one reason from a closed set.

use serde::Serialize;

use super::evaluate::{Evaluation, Status};
use super::window::CaptureLoss;

/// The three answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verified {
    Yes,
    No,
    Unknown,
}

impl Verified {
    /// Only `yes` is a pass; `unknown` never is.
    pub fn is_pass(self) -> bool {
        match self {
            Verified::Yes => true,
            Verified::No | Verified::Unknown => false,
        }
    }
}

/// Why, from a closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictReason {
    /// Positive evidence over a complete window.
    Proved,
    /// Evaluated over a complete window; the expected evidence never appeared.
    AssertionFailed,
    /// An observation contradicts the claim.
    Contradicted,
    /// The page went away mid-wait.
    ObservationLost,
    /// Events were lost from the window (transport gap or buffer eviction).
    UncleanCapture,
    /// The page never settled.
    Unsettled,
    /// The predicate could not be evaluated.
    Inconclusive,
}

/// A decided verdict with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub verified: Verified,
    pub reason: VerdictReason,
    /// One sentence saying why.
    pub because: String,
    /// For `unclean_capture`: what was lost (`transport_gap`, `buffer_loss`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<&'static str>,
    /// For a presence-only pass: what would prove a consequence instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<String>,
    pub evidence: Evaluation,
}

/// What the decision needs beyond the evaluation.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// What the window lost.
    pub losses: Vec<CaptureLoss>,
    /// For a wait without a predicate: whether the page settled.
    pub settled: Option<bool>,
    /// Whether the passing predicate only shows presence.
    pub presence_only: bool,
}

/// Advice attached to a presence-only pass.
pub const PRESENCE_ADVICE: &str = "this only shows that something is on the page, not that the app did it; assert a consequence too (a signal, a net call, a state value)";

/// Decides the verdict. The order is the policy: missing evidence outranks everything.
pub fn decide(evaluation: Evaluation, context: &Context) -> Verdict {
    let verdict = |verified, reason, because: String| Verdict {
        verified,
        reason,
        because,
        lost: Vec::new(),
        advice: None,
        evidence: evaluation.clone(),
    };
    if evaluation.observation_lost {
        return verdict(
            Verified::Unknown,
            VerdictReason::ObservationLost,
            "the page went away before the check could finish; this says nothing about the app"
                .into(),
        );
    }
    if !context.losses.is_empty() {
        let mut v = verdict(
            Verified::Unknown,
            VerdictReason::UncleanCapture,
            format!(
                "events were lost from the window ({}), so neither a pass nor a failure can be trusted",
                context
                    .losses
                    .iter()
                    .map(describe_loss)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        );
        v.lost = context.losses.iter().map(CaptureLoss::word).collect();
        v.lost.sort_unstable();
        v.lost.dedup();
        return v;
    }
    match evaluation.status {
        // Waiting for the page to settle was the whole check: a page that never settled has
        // not failed anything, it is still moving.
        Status::Fail | Status::Unknown if context.settled == Some(false) => verdict(
            Verified::Unknown,
            VerdictReason::Unsettled,
            format!(
                "the page never settled within the wait: {}",
                evaluation.evidence
            ),
        ),
        Status::Unknown => verdict(
            Verified::Unknown,
            VerdictReason::Inconclusive,
            format!("the check could not be evaluated: {}", evaluation.evidence),
        ),
        Status::Fail if evaluation.contradicted => verdict(
            Verified::No,
            VerdictReason::Contradicted,
            format!("observed the opposite: {}", first_failure(&evaluation)),
        ),
        Status::Fail => verdict(
            Verified::No,
            VerdictReason::AssertionFailed,
            format!(
                "the expected evidence never appeared: {}",
                first_failure(&evaluation)
            ),
        ),
        Status::Pass if context.settled == Some(false) => verdict(
            Verified::Unknown,
            VerdictReason::Unsettled,
            "the page never settled, so the outcome is not final".into(),
        ),
        Status::Pass => {
            let mut v = verdict(
                Verified::Yes,
                VerdictReason::Proved,
                format!("proved: {}", evaluation.evidence),
            );
            if context.presence_only {
                v.advice = Some(PRESENCE_ADVICE.into());
            }
            v
        }
    }
}

fn describe_loss(loss: &CaptureLoss) -> String {
    match loss {
        CaptureLoss::TransportGap { dropped } => {
            format!("the SDK dropped {dropped} event(s) while offline")
        }
        CaptureLoss::BufferLoss { evicted } => {
            format!("the daemon's buffer evicted {evicted} event(s)")
        }
        CaptureLoss::Reconnected { from_life, to_life } => format!(
            "the page's connection dropped and came back (session life {from_life} to {to_life})"
        ),
    }
}

/// The evidence of the deepest failing child, else of the whole.
fn first_failure(evaluation: &Evaluation) -> String {
    evaluation
        .children
        .iter()
        .find(|c| c.status == Status::Fail)
        .map(first_failure)
        .unwrap_or_else(|| evaluation.evidence.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::evaluate::evaluate;
    use crate::verdict::evaluate::tests::{FixedPage, event};
    use crate::verdict::predicate::parse;
    use crate::verdict::window::Window;
    use crate::wire::KnownEventType;
    use serde_json::{Value, json};

    async fn verdict_of(
        p: Value,
        window: Window,
        page: &mut FixedPage,
        settled: Option<bool>,
    ) -> Verdict {
        let predicate = parse(&p).unwrap();
        let evaluation = evaluate(&predicate, &window, page).await;
        let context = Context {
            losses: window.losses.clone(),
            settled,
            presence_only: predicate.presence_only(),
        };
        decide(evaluation, &context)
    }

    #[tokio::test]
    async fn true_is_yes_false_is_no_with_evidence() {
        let w = || {
            Window::new(
                vec![event(KnownEventType::Signal, json!({"name":"saved"}))],
                0,
                0,
            )
        };
        let page = &mut FixedPage::default();
        let yes = verdict_of(json!({"kind":"signal","name":"saved"}), w(), page, None).await;
        assert_eq!(
            (yes.verified, yes.reason),
            (Verified::Yes, VerdictReason::Proved)
        );
        let no = verdict_of(json!({"kind":"signal","name":"deleted"}), w(), page, None).await;
        assert_eq!(
            (no.verified, no.reason),
            (Verified::No, VerdictReason::AssertionFailed)
        );
        assert!(no.because.contains("deleted"), "{}", no.because);
        page.state = Some(json!(1));
        let contra = verdict_of(
            json!({"kind":"state","store":"s","path":"p","equals":2}),
            w(),
            page,
            None,
        )
        .await;
        assert_eq!(
            (contra.verified, contra.reason),
            (Verified::No, VerdictReason::Contradicted)
        );
    }

    #[tokio::test]
    async fn missing_evidence_is_unknown_never_no() {
        let page = &mut FixedPage {
            gone: true,
            ..Default::default()
        };
        let lost = verdict_of(
            json!({"kind":"text","contains":"Saved"}),
            Window::default(),
            page,
            None,
        )
        .await;
        assert_eq!(
            (lost.verified, lost.reason),
            (Verified::Unknown, VerdictReason::ObservationLost)
        );

        let gap = Window::new(
            vec![event(
                KnownEventType::TransportOverflow,
                json!({"dropped": 4}),
            )],
            0,
            0,
        );
        let page = &mut FixedPage::default();
        let unclean = verdict_of(json!({"kind":"signal","name":"saved"}), gap, page, None).await;
        assert_eq!(
            (unclean.verified, unclean.reason),
            (Verified::Unknown, VerdictReason::UncleanCapture)
        );
        assert_eq!(unclean.lost, vec!["transport_gap"]);

        let evicted = verdict_of(
            json!({"kind":"signal","name":"saved"}),
            Window::new(vec![], 9, 0),
            page,
            None,
        )
        .await;
        assert_eq!(evicted.lost, vec!["buffer_loss"]);

        let unsettled = verdict_of(
            json!({"kind":"settled"}),
            Window::new(vec![], 0, 10_000),
            page,
            Some(false),
        )
        .await;
        assert_eq!(unsettled.reason, VerdictReason::Unsettled);
    }

    #[tokio::test]
    async fn a_presence_only_pass_carries_advice() {
        let page = &mut FixedPage {
            text: true,
            ..Default::default()
        };
        let v = verdict_of(
            json!({"kind":"text","contains":"Saved"}),
            Window::default(),
            page,
            None,
        )
        .await;
        assert_eq!(v.verified, Verified::Yes);
        assert_eq!(v.advice.as_deref(), Some(PRESENCE_ADVICE));
        assert!(!Verified::Unknown.is_pass());
    }
}
