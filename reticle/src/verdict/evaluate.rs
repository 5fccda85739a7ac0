//! Evaluating one predicate over a window and the live page. Three-valued per predicate: pass,
//! fail, or unknown (the page could not be read, or went away). Every result carries the evidence
//! that decided it, per child for composites. A check whose evidence the page's SDK does not
//! provide (a response body it did not capture, an element state it does not report) is unknown
//! and says so; it is never read as a pass or a failure.

use serde::Serialize;
use serde_json::{Map, Value};

use super::predicate::{NetMatch, Predicate, StateExpect};
use super::probe::{ElementFacts, PageProbe, Read};
use super::window::{ObservedEvent, Window};
use crate::wire::KnownEventType;
use crate::wire::vocabulary::{NET_BODY, NET_BODY_TRUNCATED};

/// The three values of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    Unknown,
}

/// One predicate's evaluation and the evidence behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluation {
    pub kind: &'static str,
    pub status: Status,
    /// What was matched or observed, in one sentence.
    pub evidence: String,
    /// A failure backed by an observation that contradicts the claim (a different value, a
    /// present element that should be absent), rather than by evidence that never appeared.
    pub contradicted: bool,
    /// The page went away while this was being read.
    pub observation_lost: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Evaluation>,
}

impl Evaluation {
    /// The evaluation of a check whose page went away before it could be read.
    pub fn lost(kind: &'static str, why: impl Into<String>) -> Self {
        Self {
            observation_lost: true,
            ..Self::leaf(kind, Status::Unknown, why)
        }
    }

    /// The evaluation of a check that could not be made; `why` says why.
    pub fn unknown(kind: &'static str, why: impl Into<String>) -> Self {
        Self::leaf(kind, Status::Unknown, why)
    }

    fn leaf(kind: &'static str, status: Status, evidence: impl Into<String>) -> Self {
        Self {
            kind,
            status,
            evidence: evidence.into(),
            contradicted: false,
            observation_lost: false,
            children: Vec::new(),
        }
    }

    fn contradiction(kind: &'static str, evidence: impl Into<String>) -> Self {
        Self {
            contradicted: true,
            ..Self::leaf(kind, Status::Fail, evidence)
        }
    }

    fn from_read<T>(
        kind: &'static str,
        read: Read<T>,
        judge: impl FnOnce(T) -> Evaluation,
    ) -> Self {
        match read {
            Read::Seen(value) => judge(value),
            Read::Lost => Self {
                observation_lost: true,
                ..Self::leaf(
                    kind,
                    Status::Unknown,
                    "the page went away while it was being read",
                )
            },
            Read::Unreadable(why) => Self::leaf(
                kind,
                Status::Unknown,
                format!("could not read the page: {why}"),
            ),
        }
    }
}

/// Evaluates `predicate` over `window`, reading the page through `probe` where needed.
pub async fn evaluate<P: PageProbe + Send>(
    predicate: &Predicate,
    window: &Window,
    probe: &mut P,
) -> Evaluation {
    Box::pin(evaluate_inner(predicate, window, probe)).await
}

async fn evaluate_inner<P: PageProbe + Send>(
    predicate: &Predicate,
    window: &Window,
    probe: &mut P,
) -> Evaluation {
    let kind = predicate.kind();
    match predicate {
        Predicate::Signal {
            name,
            count,
            data_matches,
        } => {
            let seen = window
                .of(KnownEventType::Signal)
                .filter(|e| e.data.get("name").and_then(Value::as_str) == Some(name.as_str()))
                .filter(|e| {
                    data_matches
                        .as_ref()
                        .is_none_or(|want| subset(want, e.data.get("data").unwrap_or(&Value::Null)))
                })
                .count() as u64;
            counted(kind, &format!("signal '{name}'"), seen, *count, false)
        }
        Predicate::Net(m) => net(kind, m, window),
        Predicate::Console {
            level,
            contains,
            absent,
        } => {
            let seen = window
                .events
                .iter()
                .filter(|e| console_matches(level.as_deref(), contains.as_deref(), e))
                .count() as u64;
            counted(
                kind,
                &describe_console(level.as_deref(), contains.as_deref()),
                seen,
                None,
                *absent,
            )
        }
        Predicate::Animation => Evaluation::from_read(kind, probe.animations().await, |facts| {
            if facts.running.is_empty() {
                Evaluation::leaf(
                    kind,
                    Status::Pass,
                    format!(
                        "no animation running ({} in the document, none running)",
                        facts.total
                    ),
                )
            } else {
                Evaluation::leaf(
                    kind,
                    Status::Fail,
                    format!(
                        "{} animation(s) still running: {}",
                        facts.running.len(),
                        facts.running.join(", ")
                    ),
                )
            }
        }),
        Predicate::Settled { quiet_ms } => {
            let in_flight = requests_in_flight(window);
            if in_flight > 0 {
                Evaluation::leaf(
                    kind,
                    Status::Fail,
                    format!("{in_flight} request(s) still in flight"),
                )
            } else if window.quiet_for_ms >= *quiet_ms {
                Evaluation::leaf(
                    kind,
                    Status::Pass,
                    format!("quiet for {} ms (needed {quiet_ms})", window.quiet_for_ms),
                )
            } else {
                Evaluation::leaf(
                    kind,
                    Status::Fail,
                    format!(
                        "quiet for only {} ms (needs {quiet_ms})",
                        window.quiet_for_ms
                    ),
                )
            }
        }
        Predicate::Route { contains, pathname } => {
            Evaluation::from_read(kind, probe.route().await, |url| {
                let path = path_of(&url);
                let ok = contains.as_ref().is_none_or(|c| url.contains(c.as_str()))
                    && pathname.as_ref().is_none_or(|p| path == *p);
                let status = if ok { Status::Pass } else { Status::Fail };
                Evaluation::leaf(kind, status, format!("the page is at {url}"))
            })
        }
        Predicate::State {
            store,
            path,
            expect,
        } => Evaluation::from_read(kind, probe.state(store, path).await, |facts| {
            let at = format!("{store}.{path}");
            match (expect, facts.found) {
                (StateExpect::Exists(want), found) if *want == found => Evaluation::leaf(
                    kind,
                    Status::Pass,
                    format!("{at} {}", if found { "exists" } else { "does not exist" }),
                ),
                (StateExpect::Exists(true), false) | (StateExpect::Equals(_), false) => {
                    Evaluation::leaf(
                        kind,
                        Status::Fail,
                        format!(
                            "{at} not found; available keys there: {}",
                            facts.available_keys.join(", ")
                        ),
                    )
                }
                (StateExpect::Exists(_), _) => {
                    Evaluation::contradiction(kind, format!("{at} exists with {}", facts.value))
                }
                (StateExpect::Equals(want), true) if *want == facts.value => {
                    Evaluation::leaf(kind, Status::Pass, format!("{at} is {}", facts.value))
                }
                (StateExpect::Equals(want), true) => {
                    Evaluation::contradiction(kind, format!("{at} is {}, not {want}", facts.value))
                }
            }
        }),
        Predicate::Element {
            query,
            value,
            state,
            absent,
        } => Evaluation::from_read(kind, probe.element(query).await, |facts| {
            element(kind, &facts, value.as_deref(), state.as_deref(), *absent)
        }),
        Predicate::Text { contains, absent } => {
            Evaluation::from_read(kind, probe.text(contains).await, |present| {
                match (present, absent) {
                    (true, false) => {
                        Evaluation::leaf(kind, Status::Pass, format!("the page shows '{contains}'"))
                    }
                    (false, true) => Evaluation::leaf(
                        kind,
                        Status::Pass,
                        format!("the page does not show '{contains}'"),
                    ),
                    (false, false) => Evaluation::leaf(
                        kind,
                        Status::Fail,
                        format!("the page does not show '{contains}'"),
                    ),
                    (true, true) => {
                        Evaluation::contradiction(kind, format!("the page shows '{contains}'"))
                    }
                }
            })
        }
        Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
            let mut children = Vec::with_capacity(predicates.len());
            for child in predicates {
                children.push(Box::pin(evaluate_inner(child, window, probe)).await);
            }
            let all = matches!(predicate, Predicate::AllOf { .. });
            let any_status = |s: Status| children.iter().any(|c| c.status == s);
            let status = match (
                all,
                any_status(Status::Fail),
                any_status(Status::Unknown),
                any_status(Status::Pass),
            ) {
                (true, true, _, _) => Status::Fail,
                (true, false, true, _) => Status::Unknown,
                (true, false, false, _) => Status::Pass,
                (false, _, _, true) => Status::Pass,
                (false, _, true, false) => Status::Unknown,
                (false, _, false, false) => Status::Fail,
            };
            let failed: Vec<&Evaluation> = children
                .iter()
                .filter(|c| c.status == Status::Fail)
                .collect();
            Evaluation {
                kind,
                status,
                evidence: format!(
                    "{} of {} passed",
                    children.iter().filter(|c| c.status == Status::Pass).count(),
                    children.len()
                ),
                contradicted: status == Status::Fail && failed.iter().any(|c| c.contradicted),
                observation_lost: children.iter().any(|c| c.observation_lost),
                children,
            }
        }
        Predicate::Not { predicate: inner } => {
            let child = Box::pin(evaluate_inner(inner, window, probe)).await;
            let status = match child.status {
                Status::Pass => Status::Fail,
                Status::Fail => Status::Pass,
                Status::Unknown => Status::Unknown,
            };
            Evaluation {
                kind,
                status,
                evidence: format!(
                    "the inner {} {}",
                    child.kind,
                    if child.status == Status::Pass {
                        "held"
                    } else {
                        "did not hold"
                    }
                ),
                contradicted: status == Status::Fail,
                observation_lost: child.observation_lost,
                children: vec![child],
            }
        }
    }
}

/// Judges what an element query found against the expected value, state and absence.
fn element(
    kind: &'static str,
    facts: &ElementFacts,
    value: Option<&str>,
    state: Option<&str>,
    absent: bool,
) -> Evaluation {
    let what = facts
        .description
        .clone()
        .unwrap_or_else(|| "the element".into());
    match (facts.count, absent, value) {
        (0, true, _) => Evaluation::leaf(kind, Status::Pass, "no element matches, as expected"),
        (0, false, _) => Evaluation::leaf(kind, Status::Fail, "no element matches"),
        (n, true, _) if state.is_none() => Evaluation::contradiction(
            kind,
            format!("{n} element(s) match, expected none ({what})"),
        ),
        (_, false, Some(want)) if facts.value.as_deref() != Some(want) => {
            Evaluation::contradiction(
                kind,
                format!(
                    "{what} has the value {:?}, not '{want}'",
                    facts.value.clone().unwrap_or_default()
                ),
            )
        }
        (n, _, _) => match state {
            Some(state) => element_state(kind, facts, state, absent),
            None => match value {
                Some(want) => {
                    Evaluation::leaf(kind, Status::Pass, format!("{what} has the value '{want}'"))
                }
                None => {
                    Evaluation::leaf(kind, Status::Pass, format!("{n} element(s) match: {what}"))
                }
            },
        },
    }
}

/// Judges whether some matching element is in `state` (with `absent`: that none is).
fn element_state(
    kind: &'static str,
    facts: &ElementFacts,
    state: &str,
    absent: bool,
) -> Evaluation {
    let in_state = facts
        .states
        .iter()
        .filter(|states| states.iter().any(|s| s == state))
        .count();
    let reported = facts.reported_states.iter().any(|s| s == state);
    let what = facts
        .description
        .clone()
        .unwrap_or_else(|| "the element".into());
    match (in_state, reported, absent) {
        (0, false, _) => Evaluation::unknown(
            kind,
            format!(
                "{} element(s) match, but the page's SDK does not report whether an element is {state} (it reports: {}); the published @reticlehq/browser 2.0.0 reports only protocol 1's states, so this needs Reticle's SDK",
                facts.count,
                facts.reported_states.join(", ")
            ),
        ),
        (0, true, false) => Evaluation::contradiction(
            kind,
            format!(
                "{} element(s) match and none is {state} ({what})",
                facts.count
            ),
        ),
        (0, true, true) => Evaluation::leaf(
            kind,
            Status::Pass,
            format!(
                "{} element(s) match and none is {state}, as expected",
                facts.count
            ),
        ),
        (n, _, false) => Evaluation::leaf(
            kind,
            Status::Pass,
            format!("{n} matching element(s) are {state}: {what}"),
        ),
        (n, _, true) => Evaluation::contradiction(
            kind,
            format!("{n} matching element(s) are {state}, expected none ({what})"),
        ),
    }
}

/// Judges a `net` predicate. Without `bodyContains` it counts matching requests; with it, a
/// matching request whose body the page did not capture (or captured only in part, without the
/// text) can still be the one that decides, so only a judgement no such body could change
/// stands, and anything else is unknown.
fn net(kind: &'static str, m: &NetMatch, window: &Window) -> Evaluation {
    let matched: Vec<&ObservedEvent> = window
        .of(KnownEventType::NetRequest)
        .filter(|e| net_matches(m, e))
        .collect();
    let Some(needle) = &m.body_contains else {
        return counted(
            kind,
            &describe_net(m),
            matched.len() as u64,
            m.count,
            m.absent,
        );
    };
    let (mut seen, mut uncaptured) = (0u64, 0usize);
    for event in &matched {
        match body_holds(event, needle) {
            Some(true) => seen += 1,
            Some(false) => {}
            None => uncaptured += 1,
        }
    }
    let judged = counted(kind, &describe_net(m), seen, m.count, m.absent);
    let presence_proved = judged.status == Status::Pass && !m.absent && m.count.is_none();
    if uncaptured == 0 || judged.contradicted || presence_proved {
        judged
    } else {
        Evaluation::unknown(
            kind,
            format!(
                "{uncaptured} matching request(s) came without a complete captured response body, so whether it contains '{needle}' is unknown (the published @reticlehq/browser 2.0.0 never captures bodies; Reticle's SDK captures them, bounded, when a predicate asks)"
            ),
        )
    }
}

/// Whether a request's captured body contains `needle`: `None` when the body was not captured,
/// or was cut short without it.
fn body_holds(event: &ObservedEvent, needle: &str) -> Option<bool> {
    let body = event.data.get(NET_BODY).and_then(Value::as_str)?;
    if body.contains(needle) {
        Some(true)
    } else if event.data.get(NET_BODY_TRUNCATED) == Some(&Value::Bool(true)) {
        None
    } else {
        Some(false)
    }
}

fn console_matches(level: Option<&str>, contains: Option<&str>, event: &ObservedEvent) -> bool {
    let Some(seen_level) = event.kind.known().and_then(KnownEventType::console_level) else {
        return false;
    };
    let message = event
        .data
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("");
    level.is_none_or(|want| want == seen_level) && contains.is_none_or(|c| message.contains(c))
}

fn describe_console(level: Option<&str>, contains: Option<&str>) -> String {
    let mut what = format!("console {} messages", level.unwrap_or("(any level)"));
    if let Some(c) = contains {
        what.push_str(&format!(" containing '{c}'"));
    }
    what
}

/// Judges a count of matching events against an optional exact count and absence.
fn counted(
    kind: &'static str,
    what: &str,
    seen: u64,
    count: Option<u64>,
    absent: bool,
) -> Evaluation {
    match (absent, count) {
        (true, _) if seen == 0 => {
            Evaluation::leaf(kind, Status::Pass, format!("no {what}, as expected"))
        }
        (true, _) => Evaluation::contradiction(kind, format!("{seen} {what} seen, expected none")),
        (false, Some(want)) if seen == want => {
            Evaluation::leaf(kind, Status::Pass, format!("{seen} {what} seen"))
        }
        (false, Some(want)) if seen > want => {
            Evaluation::contradiction(kind, format!("{seen} {what} seen, expected {want}"))
        }
        (false, Some(want)) => Evaluation::leaf(
            kind,
            Status::Fail,
            format!("{seen} {what} seen, expected {want}"),
        ),
        (false, None) if seen > 0 => {
            Evaluation::leaf(kind, Status::Pass, format!("{seen} {what} seen"))
        }
        (false, None) => Evaluation::leaf(kind, Status::Fail, format!("no {what} seen")),
    }
}

fn net_matches(m: &NetMatch, event: &ObservedEvent) -> bool {
    let d = &event.data;
    let method = d.get("method").and_then(Value::as_str).unwrap_or("");
    let url = d.get("url").and_then(Value::as_str).unwrap_or("");
    m.method
        .as_ref()
        .is_none_or(|want| method.eq_ignore_ascii_case(want))
        && m.url_contains
            .as_ref()
            .is_none_or(|want| url.contains(want.as_str()))
        && m.status
            .is_none_or(|want| d.get("status").and_then(Value::as_u64) == Some(want as u64))
        && m.ok
            .is_none_or(|want| d.get("ok").and_then(Value::as_bool) == Some(want))
}

fn describe_net(m: &NetMatch) -> String {
    let mut parts = vec![m.method.clone().unwrap_or_else(|| "any".into())];
    if let Some(u) = &m.url_contains {
        parts.push(format!("*{u}*"));
    }
    if let Some(s) = m.status {
        parts.push(format!("status {s}"));
    }
    if let Some(ok) = m.ok {
        parts.push(if ok { "ok".into() } else { "not ok".into() });
    }
    if let Some(b) = &m.body_contains {
        parts.push(format!("body containing '{b}'"));
    }
    format!("requests ({})", parts.join(" "))
}

/// Requests that reported `net.pending` and no `net.request` with the same id.
pub(super) fn requests_in_flight(window: &Window) -> usize {
    let id = |e: &ObservedEvent| e.data.get("id").map(Value::to_string);
    let done: std::collections::HashSet<String> = window
        .of(KnownEventType::NetRequest)
        .filter_map(id)
        .collect();
    window
        .of(KnownEventType::NetPending)
        .filter_map(id)
        .filter(|i| !done.contains(i))
        .count()
}

/// Whether every key of `want` is in `have` with an equal value (shallow).
fn subset(want: &Map<String, Value>, have: &Value) -> bool {
    want.iter().all(|(k, v)| have.get(k) == Some(v))
}

/// The path of a URL, or the URL itself when it has no scheme.
fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    path.split(['?', '#']).next().unwrap_or("/").to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::verdict::decide::{Context, Verified, decide};
    use crate::verdict::predicate::{ElementQuery, parse};
    use crate::verdict::probe::{AnimationFacts, ElementFacts, StateFacts};
    use crate::verdict::window::CaptureLoss;
    use serde_json::json;

    /// A page with fixed answers (a test double for the live page; the real one is the bridge).
    #[derive(Default)]
    pub struct FixedPage {
        pub url: String,
        pub elements: usize,
        pub value: Option<String>,
        pub text: bool,
        pub state: Option<Value>,
        /// The states of each matching element.
        pub element_states: Vec<Vec<String>>,
        /// The states the page reports; `None` reports protocol 1's.
        pub reported_states: Option<Vec<String>>,
        /// The animations answer; `None` when the page cannot answer it.
        pub animations: Option<AnimationFacts>,
        pub gone: bool,
    }

    impl PageProbe for FixedPage {
        async fn element(&mut self, _: &ElementQuery) -> Read<ElementFacts> {
            if self.gone {
                return Read::Lost;
            }
            Read::Seen(ElementFacts {
                count: self.elements,
                value: self.value.clone(),
                description: Some("button 'Save'".into()),
                states: self.element_states.clone(),
                reported_states: self.reported_states.clone().unwrap_or_else(|| {
                    crate::wire::vocabulary::PROTOCOL_ELEMENT_STATES
                        .iter()
                        .map(|s| s.to_string())
                        .collect()
                }),
            })
        }
        async fn text(&mut self, _: &str) -> Read<bool> {
            if self.gone {
                Read::Lost
            } else {
                Read::Seen(self.text)
            }
        }
        async fn state(&mut self, _: &str, _: &str) -> Read<StateFacts> {
            if self.gone {
                return Read::Lost;
            }
            Read::Seen(StateFacts {
                found: self.state.is_some(),
                value: self.state.clone().unwrap_or(Value::Null),
                available_keys: vec!["user".into()],
            })
        }
        async fn route(&mut self) -> Read<String> {
            if self.gone {
                Read::Lost
            } else {
                Read::Seen(self.url.clone())
            }
        }
        async fn animations(&mut self) -> Read<AnimationFacts> {
            match (&self.animations, self.gone) {
                (_, true) => Read::Lost,
                (Some(facts), false) => Read::Seen(facts.clone()),
                (None, false) => Read::Unreadable("the page refused animations".into()),
            }
        }
    }

    pub fn event(kind: KnownEventType, data: Value) -> ObservedEvent {
        ObservedEvent {
            cursor: 0,
            t: 0,
            kind: kind.into(),
            data,
        }
    }

    async fn eval(p: Value, window: &Window, page: &mut FixedPage) -> Evaluation {
        evaluate(&parse(&p).unwrap(), window, page).await
    }

    #[tokio::test]
    async fn window_kinds_count_and_absence() {
        let w = Window::new(
            vec![
                event(
                    KnownEventType::Signal,
                    json!({"name":"saved","data":{"id":3}}),
                ),
                event(
                    KnownEventType::NetRequest,
                    json!({"id":1,"method":"POST","url":"/api/login","status":500,"ok":false}),
                ),
                event(KnownEventType::ConsoleError, json!({"message":"boom"})),
            ],
            0,
            1000,
        );
        let page = &mut FixedPage::default();
        assert_eq!(
            eval(
                json!({"kind":"signal","name":"saved","dataMatches":{"id":3}}),
                &w,
                page
            )
            .await
            .status,
            Status::Pass
        );
        assert_eq!(
            eval(
                json!({"kind":"signal","name":"saved","dataMatches":{"id":4}}),
                &w,
                page
            )
            .await
            .status,
            Status::Fail
        );
        assert_eq!(
            eval(
                json!({"kind":"net","urlContains":"/login","status":200}),
                &w,
                page
            )
            .await
            .status,
            Status::Fail
        );
        let absent = eval(
            json!({"kind":"console","level":"error","absent":true}),
            &w,
            page,
        )
        .await;
        assert!(absent.status == Status::Fail && absent.contradicted);
        assert_eq!(
            eval(json!({"kind":"settled","quietMs":500}), &w, page)
                .await
                .status,
            Status::Pass
        );
    }

    #[tokio::test]
    async fn page_kinds_and_contradictions() {
        let w = Window::default();
        let page = &mut FixedPage {
            url: "http://127.0.0.1:1/done?x=1".into(),
            elements: 1,
            value: Some("ada".into()),
            text: true,
            state: Some(json!(2)),
            ..Default::default()
        };
        assert_eq!(
            eval(json!({"kind":"route","pathname":"/done"}), &w, page)
                .await
                .status,
            Status::Pass
        );
        let wrong = eval(
            json!({"kind":"state","store":"app","path":"n","equals":3}),
            &w,
            page,
        )
        .await;
        assert!(
            wrong.status == Status::Fail && wrong.contradicted,
            "{wrong:?}"
        );
        assert_eq!(
            eval(
                json!({"kind":"element","testid":"name","value":"ada"}),
                &w,
                page
            )
            .await
            .status,
            Status::Pass
        );
        assert_eq!(
            eval(
                json!({"kind":"not","predicate":{"kind":"text","contains":"x"}}),
                &w,
                page
            )
            .await
            .status,
            Status::Fail
        );
        page.gone = true;
        let lost = eval(
            json!({"kind":"allOf","predicates":[{"kind":"text","contains":"x"}]}),
            &w,
            page,
        )
        .await;
        assert!(lost.status == Status::Unknown && lost.observation_lost);
    }

    fn states(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// The verdict `p` gets over `window` and `page`.
    async fn verdict_of(p: Value, window: &Window, page: &mut FixedPage) -> Verified {
        let evaluation = eval(p, window, page).await;
        let context = Context {
            losses: window.losses.clone(),
            ..Context::default()
        };
        decide(evaluation, &context).verified
    }

    #[tokio::test]
    async fn element_states_pass_fail_and_are_unknown_where_the_page_does_not_report_them() {
        let w = Window::default();
        let checked = json!({"kind":"element","role":"checkbox","state":"checked"});
        let page = &mut FixedPage {
            elements: 1,
            element_states: vec![states(&["checked", "focused"])],
            ..Default::default()
        };
        assert_eq!(verdict_of(checked.clone(), &w, page).await, Verified::Yes);
        page.element_states = vec![states(&["focused"])];
        let not_checked = eval(checked.clone(), &w, page).await;
        assert!(
            not_checked.status == Status::Fail && not_checked.contradicted,
            "{not_checked:?}"
        );
        assert_eq!(
            eval(
                json!({"kind":"element","role":"checkbox","state":"checked","absent":true}),
                &w,
                page
            )
            .await
            .status,
            Status::Pass
        );
        // A state outside protocol 1's that the page does not say it reports: unknown.
        let pressed = json!({"kind":"element","testid":"bold","state":"pressed"});
        let unreported = eval(pressed.clone(), &w, page).await;
        assert_eq!(unreported.status, Status::Unknown, "{unreported:?}");
        assert!(unreported.evidence.contains("2.0.0"), "{unreported:?}");
        assert_eq!(
            verdict_of(json!({"kind":"not","predicate":pressed.clone()}), &w, page).await,
            Verified::Unknown
        );
        page.reported_states = Some(states(&["checked", "pressed", "selected"]));
        assert_eq!(verdict_of(pressed.clone(), &w, page).await, Verified::No);
        page.element_states = vec![states(&["pressed"])];
        assert_eq!(verdict_of(pressed, &w, page).await, Verified::Yes);
        // Nothing matches: no state was observed, and it is no pass.
        page.elements = 0;
        page.element_states.clear();
        assert_eq!(verdict_of(checked, &w, page).await, Verified::No);
        page.gone = true;
        assert_eq!(
            verdict_of(
                json!({"kind":"element","testid":"x","state":"expanded"}),
                &w,
                page
            )
            .await,
            Verified::Unknown
        );
    }

    #[tokio::test]
    async fn console_contains_matches_the_message_at_any_level_or_the_named_one() {
        let w = Window::new(
            vec![
                event(
                    KnownEventType::ConsoleWarn,
                    json!({"message":"disk almost full"}),
                ),
                event(
                    KnownEventType::ErrorUncaught,
                    json!({"message":"boom: bad state"}),
                ),
            ],
            0,
            1000,
        );
        let page = &mut FixedPage::default();
        for (p, want) in [
            (json!({"kind":"console","contains":"boom"}), Verified::Yes),
            (
                json!({"kind":"console","level":"error","contains":"boom"}),
                Verified::Yes,
            ),
            (
                json!({"kind":"console","level":"warn","contains":"boom"}),
                Verified::No,
            ),
            (
                json!({"kind":"console","contains":"nothing like it"}),
                Verified::No,
            ),
            (
                json!({"kind":"console","contains":"boom","absent":true}),
                Verified::No,
            ),
        ] {
            assert_eq!(verdict_of(p.clone(), &w, page).await, want, "{p}");
        }
        // A window that lost events observed nothing trustworthy: unknown, even for an absence.
        let mut lossy = Window::new(vec![], 0, 1000);
        lossy.losses.push(CaptureLoss::BufferLoss { evicted: 3 });
        assert_eq!(
            verdict_of(
                json!({"kind":"console","contains":"boom","absent":true}),
                &lossy,
                page
            )
            .await,
            Verified::Unknown
        );
    }

    #[tokio::test]
    async fn body_contains_needs_a_captured_body_and_is_unknown_without_one() {
        let request = |body: Option<&str>, truncated: bool| {
            let mut data = json!({"id":1,"method":"GET","url":"/api/quote","status":200,"ok":true});
            if let Some(b) = body {
                data[crate::wire::vocabulary::NET_BODY] = json!(b);
            }
            if truncated {
                data[crate::wire::vocabulary::NET_BODY_TRUNCATED] = json!(true);
            }
            event(KnownEventType::NetRequest, data)
        };
        let page = &mut FixedPage::default();
        let p = json!({"kind":"net","urlContains":"/api/quote","bodyContains":"serendipity"});
        let holds = Window::new(
            vec![request(Some(r#"{"word":"serendipity"}"#), false)],
            0,
            0,
        );
        assert_eq!(verdict_of(p.clone(), &holds, page).await, Verified::Yes);
        let other = Window::new(vec![request(Some(r#"{"word":"luck"}"#), false)], 0, 0);
        assert_eq!(verdict_of(p.clone(), &other, page).await, Verified::No);
        // The published SDK never captures bodies: the request is there, its body is not.
        let uncaptured = Window::new(vec![request(None, false)], 0, 0);
        let e = eval(p.clone(), &uncaptured, page).await;
        assert_eq!(e.status, Status::Unknown, "{e:?}");
        assert!(e.evidence.contains("2.0.0"), "{e:?}");
        assert_eq!(
            verdict_of(p.clone(), &uncaptured, page).await,
            Verified::Unknown
        );
        let cut = Window::new(vec![request(Some(r#"{"word":"lu"#), true)], 0, 0);
        assert_eq!(verdict_of(p.clone(), &cut, page).await, Verified::Unknown);
        let absent = json!({"kind":"net","urlContains":"/api/quote","bodyContains":"serendipity","absent":true});
        assert_eq!(
            verdict_of(absent, &uncaptured, page).await,
            Verified::Unknown
        );
        // One captured body proves presence whatever the others hold.
        let mixed = Window::new(
            vec![request(None, false), request(Some("serendipity"), false)],
            0,
            0,
        );
        assert_eq!(verdict_of(p, &mixed, page).await, Verified::Yes);
    }

    #[tokio::test]
    async fn animation_settles_when_nothing_runs_and_is_unknown_when_unread() {
        let w = Window::default();
        let page = &mut FixedPage {
            animations: Some(AnimationFacts {
                total: 2,
                running: vec![],
            }),
            ..Default::default()
        };
        let p = json!({"kind":"animation"});
        assert_eq!(verdict_of(p.clone(), &w, page).await, Verified::Yes);
        page.animations = Some(AnimationFacts {
            total: 1,
            running: vec!["pulse".into()],
        });
        let running = eval(p.clone(), &w, page).await;
        assert!(
            running.status == Status::Fail && running.evidence.contains("pulse"),
            "{running:?}"
        );
        page.animations = None;
        assert_eq!(verdict_of(p.clone(), &w, page).await, Verified::Unknown);
        page.gone = true;
        assert_eq!(verdict_of(p, &w, page).await, Verified::Unknown);
    }

    #[test]
    fn paths_of_urls() {
        assert_eq!(path_of("http://h:1/a/b?q#f"), "/a/b");
        assert_eq!(path_of("http://h:1"), "/");
    }
}
