//! Evaluating one predicate over a window and the live page. Three-valued per predicate: pass,
//! fail, or unknown (the page could not be read, or went away). Every result carries the evidence
//! that decided it, per child for composites.

use serde::Serialize;
use serde_json::{Map, Value};

use super::predicate::{NetMatch, Predicate, StateExpect};
use super::probe::{PageProbe, Read};
use super::window::{ObservedEvent, Window};
use crate::wire::KnownEventType;

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
        Predicate::Net(m) => {
            let seen = window
                .of(KnownEventType::NetRequest)
                .filter(|e| net_matches(m, e))
                .count() as u64;
            counted(kind, &describe_net(m), seen, m.count, m.absent)
        }
        Predicate::Console { level, absent } => {
            let seen = window
                .events
                .iter()
                .filter(|e| e.kind.known().and_then(KnownEventType::console_level) == Some(level))
                .count() as u64;
            counted(
                kind,
                &format!("console {level} messages"),
                seen,
                None,
                *absent,
            )
        }
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
            absent,
        } => Evaluation::from_read(kind, probe.element(query).await, |facts| {
            let what = facts
                .description
                .clone()
                .unwrap_or_else(|| "the element".into());
            match (facts.count, absent, value) {
                (0, true, _) => {
                    Evaluation::leaf(kind, Status::Pass, "no element matches, as expected")
                }
                (n, true, _) => Evaluation::contradiction(
                    kind,
                    format!("{n} element(s) match, expected none ({what})"),
                ),
                (0, false, _) => Evaluation::leaf(kind, Status::Fail, "no element matches"),
                (_, false, Some(want)) if facts.value.as_deref() == Some(want.as_str()) => {
                    Evaluation::leaf(kind, Status::Pass, format!("{what} has the value '{want}'"))
                }
                (_, false, Some(want)) => Evaluation::contradiction(
                    kind,
                    format!(
                        "{what} has the value {:?}, not '{want}'",
                        facts.value.unwrap_or_default()
                    ),
                ),
                (n, false, None) => {
                    Evaluation::leaf(kind, Status::Pass, format!("{n} element(s) match: {what}"))
                }
            }
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
    format!("requests ({})", parts.join(" "))
}

/// Requests that reported `net.pending` and no `net.request` with the same id.
fn requests_in_flight(window: &Window) -> usize {
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
    use crate::verdict::predicate::{ElementQuery, parse};
    use crate::verdict::probe::{ElementFacts, StateFacts};
    use serde_json::json;

    /// A page with fixed answers (a test double for the live page; the real one is the bridge).
    #[derive(Default)]
    pub struct FixedPage {
        pub url: String,
        pub elements: usize,
        pub value: Option<String>,
        pub text: bool,
        pub state: Option<Value>,
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

    #[test]
    fn paths_of_urls() {
        assert_eq!(path_of("http://h:1/a/b?q#f"), "/a/b");
        assert_eq!(path_of("http://h:1"), "/");
    }
}
