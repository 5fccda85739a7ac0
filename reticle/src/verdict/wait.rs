//! Waiting for a predicate: evaluate it now, then again whenever the page reports events (or a
//! short poll passes), until it holds, the page goes away for good, it can no longer hold (a
//! window contradiction, or a page contradiction the page stayed quiet on:
//! [`contradiction_quiet`]), or the bound runs out; then evaluate once more. Events come from the
//! [`Observation`] trait, so this room still never talks to a socket.

use std::time::Duration;

use tokio::time::Instant;

use super::evaluate::{Evaluation, Status, evaluate, requests_in_flight};
use super::predicate::Predicate;
use super::probe::PageProbe;
use super::window::Window;

/// How often a wait re-reads the page when nothing is reported (page reads, quiet time).
pub const POLL: Duration = Duration::from_millis(100);
/// How often a wait over events only re-evaluates when nothing is reported (quiet time).
pub const QUIET_POLL: Duration = Duration::from_millis(50);

/// The least a wait's last read may run past its bound: a read begun just before the bound, or
/// the one read of a zero bound, gets this long to be answered.
pub const MIN_OVERRUN: Duration = Duration::from_millis(300);

/// How far past `bound` a wait may end: a tenth of it, at least [`MIN_OVERRUN`]. A page that never
/// answers cannot stretch a wait further (each read is bounded by it).
pub fn overrun(bound: Duration) -> Duration {
    (bound / 10).max(MIN_OVERRUN)
}

/// The least time a page must stay quiet on a contradiction before it is final.
pub const MIN_CONTRADICTION_QUIET: Duration = Duration::from_millis(500);

/// How long the page must have stayed quiet within a wait (no DOM change, no route change, no
/// request in flight) while it contradicts a page-read predicate (an element present that should
/// be absent, a different value or state, a different route) before the `no` is final: a quarter
/// of the bound, at least [`MIN_CONTRADICTION_QUIET`], never past the bound. A page still moving
/// could yet come round, so it is waited for until the bound.
pub fn contradiction_quiet(bound: Duration) -> Duration {
    (bound / 4).max(MIN_CONTRADICTION_QUIET).min(bound)
}

/// What a wait observes: a window over the page's events, the live page, and news of either.
pub trait Observation: PageProbe + Send {
    /// Every page read, and any wait for the page to come back, must end by `deadline`: a read
    /// not answered by then is unreadable. Sources that read no page ignore it.
    fn answer_by(&mut self, deadline: Instant) {
        let _ = deadline;
    }

    /// The window as it stands now.
    fn window(&mut self) -> Window;

    /// Resolves when something may have changed (an event arrived, the page went away) or
    /// after `poll`, whichever is first.
    fn changed(&mut self, poll: Duration) -> impl Future<Output = ()> + Send;

    /// Whether the page is still there. When it went away, waits (within its own grace) for it
    /// to come back under the same session id, and carries on with it; `false` when it did not.
    fn recover(&mut self) -> impl Future<Output = bool> + Send;
}

/// The end of a wait.
#[derive(Debug, Clone)]
pub struct Waited {
    /// The last evaluation: the one that decided the wait.
    pub evaluation: Evaluation,
    /// The window it was made over.
    pub window: Window,
    /// How long the wait took.
    pub waited: Duration,
    /// The bound ran out before the predicate held.
    pub timed_out: bool,
}

/// Evaluates `predicate` over `source` until it holds, the page is lost, it is contradicted in a
/// way more events cannot undo, or `bound` passes (a zero bound evaluates once).
pub async fn wait_until<O: Observation>(
    predicate: &Predicate,
    source: &mut O,
    bound: Duration,
) -> Waited {
    let started = Instant::now();
    let deadline = started + bound;
    let last_answer = deadline + overrun(bound);
    source.answer_by(last_answer);
    let poll = if predicate.window_only() && !predicate.mentions_settled() {
        POLL * 5
    } else if predicate.window_only() {
        QUIET_POLL
    } else {
        POLL
    };
    loop {
        if !source.recover().await {
            let window = source.window();
            return Waited {
                evaluation: Evaluation::lost(
                    predicate.kind(),
                    "the page went away during the wait and did not come back",
                ),
                window,
                waited: started.elapsed(),
                timed_out: false,
            };
        }
        let window = source.window();
        // A source that does not bound its reads is bounded here all the same.
        let Ok(evaluation) =
            tokio::time::timeout_at(last_answer, evaluate(predicate, &window, source)).await
        else {
            return Waited {
                evaluation: Evaluation::unknown(
                    predicate.kind(),
                    format!(
                        "the page did not answer within the wait's bound of {} ms",
                        bound.as_millis()
                    ),
                ),
                window,
                waited: started.elapsed(),
                timed_out: true,
            };
        };
        let contradicted = evaluation.status == Status::Fail && evaluation.contradicted;
        let final_fail = contradicted
            && if predicate.window_only() {
                !predicate.mentions_settled()
            } else {
                predicate.reads_page_only()
                    && quiet_within(&window, started.elapsed()) >= contradiction_quiet(bound)
            };
        // A pass that later events could undo (an absence over the window) is only final when
        // the bound has run out.
        let provisional = evaluation.status == Status::Pass && predicate.provisional();
        let done = (evaluation.status == Status::Pass && !provisional) || final_fail;
        if evaluation.observation_lost && source.recover().await {
            // The page came back mid-read: read it again.
            continue;
        }
        let now = Instant::now();
        if done || evaluation.observation_lost || now >= deadline {
            return Waited {
                timed_out: !done && !provisional && !evaluation.observation_lost,
                evaluation,
                window,
                waited: started.elapsed(),
            };
        }
        let remaining = deadline - now;
        let _ = tokio::time::timeout(remaining, source.changed(poll.min(remaining))).await;
    }
}

/// How long the page has been quiet within a wait that has run `elapsed`: no activity event for
/// that long and no request in flight (a quiet spell from before the wait does not count).
fn quiet_within(window: &Window, elapsed: Duration) -> Duration {
    if requests_in_flight(window) > 0 {
        return Duration::ZERO;
    }
    Duration::from_millis(window.quiet_for_ms).min(elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::evaluate::tests::{FixedPage, event};
    use crate::verdict::predicate::{ElementQuery, parse};
    use crate::verdict::probe::{AnimationFacts, ElementFacts, Read, StateFacts};
    use crate::wire::KnownEventType;
    use serde_json::json;

    /// A scripted source: events appear one per `changed`, the page can be lost.
    struct Script {
        page: FixedPage,
        events: Vec<crate::verdict::ObservedEvent>,
        pending: Vec<crate::verdict::ObservedEvent>,
        gone_after: Option<usize>,
        changes: usize,
        comes_back: bool,
        /// The page has done nothing for a long while (else it is always busy).
        quiet: bool,
    }

    impl PageProbe for Script {
        async fn element(&mut self, q: &ElementQuery) -> Read<ElementFacts> {
            self.page.element(q).await
        }
        async fn text(&mut self, t: &str) -> Read<bool> {
            self.page.text(t).await
        }
        async fn state(&mut self, s: &str, p: &str) -> Read<StateFacts> {
            self.page.state(s, p).await
        }
        async fn route(&mut self) -> Read<String> {
            self.page.route().await
        }
        async fn animations(&mut self) -> Read<AnimationFacts> {
            self.page.animations().await
        }
    }

    impl Observation for Script {
        fn window(&mut self) -> Window {
            Window::new(
                self.events.clone(),
                0,
                if self.quiet { 3_600_000 } else { 0 },
            )
        }
        async fn changed(&mut self, poll: Duration) {
            self.changes += 1;
            if self.pending.is_empty() {
                tokio::time::sleep(poll).await;
            } else {
                self.events.push(self.pending.remove(0));
            }
            if self.gone_after == Some(self.changes) {
                self.page.gone = true;
            }
        }
        async fn recover(&mut self) -> bool {
            if self.page.gone && self.comes_back {
                self.page.gone = false;
            }
            !self.page.gone
        }
    }

    fn script(pending: Vec<crate::verdict::ObservedEvent>) -> Script {
        Script {
            page: FixedPage::default(),
            events: vec![],
            pending,
            gone_after: None,
            changes: 0,
            comes_back: false,
            quiet: false,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn waits_for_the_event_that_makes_it_hold() {
        let p = parse(&json!({"kind":"signal","name":"saved"})).unwrap();
        let mut s = script(vec![
            event(KnownEventType::Signal, json!({"name":"other"})),
            event(KnownEventType::Signal, json!({"name":"saved"})),
        ]);
        let waited = wait_until(&p, &mut s, Duration::from_secs(5)).await;
        assert_eq!(waited.evaluation.status, Status::Pass);
        assert!(!waited.timed_out);
        assert_eq!(s.changes, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_bound_of_zero_evaluates_once_and_the_bound_ends_a_wait() {
        let p = parse(&json!({"kind":"signal","name":"saved"})).unwrap();
        let mut s = script(vec![event(KnownEventType::Signal, json!({"name":"saved"}))]);
        let once = wait_until(&p, &mut s, Duration::ZERO).await;
        assert_eq!(once.evaluation.status, Status::Fail);
        assert_eq!(s.changes, 0);
        let mut never = script(vec![]);
        let waited = wait_until(&p, &mut never, Duration::from_secs(2)).await;
        assert!(waited.timed_out);
        assert_eq!(waited.evaluation.status, Status::Fail);
    }

    #[tokio::test(start_paused = true)]
    async fn a_page_that_goes_away_ends_the_wait_as_lost_unless_it_comes_back() {
        let p = parse(&json!({"kind":"text","contains":"Saved"})).unwrap();
        let mut s = script(vec![]);
        s.gone_after = Some(1);
        let waited = wait_until(&p, &mut s, Duration::from_secs(30)).await;
        assert!(waited.evaluation.observation_lost);
        assert!(!waited.timed_out);

        let mut back = script(vec![]);
        back.gone_after = Some(1);
        back.comes_back = true;
        back.page.text = false;
        let waited = wait_until(&p, &mut back, Duration::from_millis(500)).await;
        assert!(!waited.evaluation.observation_lost);
        assert!(waited.timed_out);
    }

    /// A page whose every read hangs; it bounds its reads by `answer_by` only when `honours`.
    struct Hung {
        honours: bool,
        by: Option<Instant>,
    }

    impl Hung {
        async fn hang<T>(&self) -> Read<T> {
            match (self.honours, self.by) {
                (true, Some(by)) => {
                    tokio::time::sleep_until(by).await;
                    Read::Unreadable("no answer by the deadline".into())
                }
                _ => std::future::pending().await,
            }
        }
    }

    impl PageProbe for Hung {
        async fn element(&mut self, _: &ElementQuery) -> Read<ElementFacts> {
            self.hang().await
        }
        async fn text(&mut self, _: &str) -> Read<bool> {
            self.hang().await
        }
        async fn state(&mut self, _: &str, _: &str) -> Read<StateFacts> {
            self.hang().await
        }
        async fn route(&mut self) -> Read<String> {
            self.hang().await
        }
        async fn animations(&mut self) -> Read<AnimationFacts> {
            self.hang().await
        }
    }

    impl Observation for Hung {
        fn answer_by(&mut self, deadline: Instant) {
            self.by = Some(deadline);
        }
        fn window(&mut self) -> Window {
            Window::new(vec![], 0, 0)
        }
        async fn changed(&mut self, poll: Duration) {
            tokio::time::sleep(poll).await;
        }
        async fn recover(&mut self) -> bool {
            true
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_page_that_never_answers_ends_the_wait_within_a_tenth_of_its_bound() {
        let p = parse(&json!({"kind":"element","testid":"save"})).unwrap();
        for honours in [true, false] {
            for bound in [
                Duration::ZERO,
                Duration::from_secs(3),
                Duration::from_secs(20),
            ] {
                let mut page = Hung { honours, by: None };
                let started = Instant::now();
                // Paused time: the outer bound fails the test, rather than hanging it, when a
                // wait is not ended by its own.
                let waited = tokio::time::timeout(
                    Duration::from_secs(120),
                    wait_until(&p, &mut page, bound),
                )
                .await
                .expect("the wait ended by its own bound");
                let took = started.elapsed();
                assert_eq!(waited.evaluation.status, Status::Unknown, "{bound:?}");
                assert!(took <= bound + overrun(bound), "{bound:?}: {took:?}");
                if honours {
                    assert_eq!(page.by, Some(started + bound + overrun(bound)));
                }
            }
        }
        // Past its least overrun a wait ends within a tenth of its bound.
        assert_eq!(overrun(Duration::from_secs(3)), Duration::from_millis(300));
        assert_eq!(overrun(Duration::ZERO), MIN_OVERRUN);
    }

    #[tokio::test(start_paused = true)]
    async fn an_exceeded_count_cannot_be_undone_so_the_wait_ends_early() {
        let p = parse(&json!({"kind":"console","level":"error","absent":true})).unwrap();
        let mut s = script(vec![event(
            KnownEventType::ConsoleError,
            json!({"message":"x"}),
        )]);
        let waited = wait_until(&p, &mut s, Duration::from_secs(60)).await;
        assert!(waited.evaluation.contradicted);
        assert!(!waited.timed_out);
    }

    #[tokio::test(start_paused = true)]
    async fn a_page_contradiction_is_final_once_the_page_stayed_quiet_on_it() {
        // An element present that should be absent: observed the opposite.
        let p = parse(&json!({"kind":"element","testid":"spinner","absent":true})).unwrap();
        let bound = Duration::from_secs(4);
        let mut quiet = script(vec![]);
        quiet.page.elements = 1;
        quiet.quiet = true;
        let started = Instant::now();
        let waited = wait_until(&p, &mut quiet, bound).await;
        assert!(waited.evaluation.contradicted && !waited.timed_out);
        let took = started.elapsed();
        assert!(
            took >= contradiction_quiet(bound) && took <= contradiction_quiet(bound) + POLL,
            "{took:?}"
        );

        // Control: a page still moving may yet come round, so it is waited for to the bound.
        let mut busy = script(vec![]);
        busy.page.elements = 1;
        let waited = wait_until(&p, &mut busy, bound).await;
        assert!(waited.timed_out && waited.evaluation.status == Status::Fail);

        // Control: evidence that never came is no contradiction, however quiet the page.
        let present = parse(&json!({"kind":"element","testid":"saved"})).unwrap();
        let mut empty = script(vec![]);
        empty.quiet = true;
        let waited = wait_until(&present, &mut empty, bound).await;
        assert!(waited.timed_out && !waited.evaluation.contradicted);
        // Control: a window event still to come could yet make an `anyOf` hold.
        let either = parse(&json!({"kind":"anyOf","predicates":[
            {"kind":"element","testid":"spinner","absent":true},
            {"kind":"signal","name":"saved"}]}))
        .unwrap();
        let mut mixed = script(vec![]);
        mixed.page.elements = 1;
        mixed.quiet = true;
        let waited = wait_until(&either, &mut mixed, bound).await;
        assert!(waited.timed_out, "{waited:?}");
        assert_eq!(
            contradiction_quiet(Duration::from_millis(200)),
            Duration::from_millis(200)
        );
        assert_eq!(
            contradiction_quiet(Duration::from_secs(1)),
            MIN_CONTRADICTION_QUIET
        );
    }
}
