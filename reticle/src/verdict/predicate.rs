//! The predicate language, parsed strictly: an unknown kind or field is an error that lists what
//! that kind accepts, and nothing is evaluated. The accepted fields of each kind are defined once
//! in [`KINDS`], which the parser, the error messages and the schema all read; the words a field
//! takes from a closed set (console levels, element states) are defined here once too.

use serde::Serialize;
use serde_json::{Map, Value};

/// Each kind and the fields it accepts (besides `kind`).
pub const KINDS: &[(&str, &[&str])] = &[
    ("signal", &["name", "count", "dataMatches"]),
    (
        "net",
        &[
            "method",
            "urlContains",
            "status",
            "ok",
            "bodyContains",
            "count",
            "absent",
        ],
    ),
    ("route", &["contains", "pathname"]),
    ("state", &["store", "path", "equals", "exists"]),
    (
        "element",
        &[
            "role",
            "name",
            "text",
            "label",
            "placeholder",
            "testid",
            "alt",
            "css",
            "exact",
            "value",
            "state",
            "absent",
        ],
    ),
    ("text", &["contains", "absent"]),
    ("console", &["level", "contains", "absent"]),
    ("settled", &["quietMs"]),
    ("animation", &[]),
    ("allOf", &["predicates"]),
    ("anyOf", &["predicates"]),
    ("not", &["predicate"]),
];

/// How deep composites may nest.
pub const MAX_DEPTH: usize = 8;
/// How many children a composite may have.
pub const MAX_CHILDREN: usize = 32;

/// The console levels a `console` predicate may name.
pub const CONSOLE_LEVELS: &[&str] = &["log", "info", "warn", "error", "debug"];

/// The states an `element` predicate may ask a matching element to be in.
pub const ELEMENT_STATES: &[&str] = &["checked", "disabled", "expanded", "selected", "pressed"];

/// A parsed predicate.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Predicate {
    Signal {
        name: String,
        count: Option<u64>,
        data_matches: Option<Map<String, Value>>,
    },
    Net(NetMatch),
    Route {
        contains: Option<String>,
        pathname: Option<String>,
    },
    State {
        store: String,
        path: String,
        expect: StateExpect,
    },
    Element {
        query: ElementQuery,
        value: Option<String>,
        /// One of [`ELEMENT_STATES`]: some matching element must be in it.
        state: Option<String>,
        absent: bool,
    },
    Text {
        contains: String,
        absent: bool,
    },
    Console {
        /// Any level when absent.
        level: Option<String>,
        contains: Option<String>,
        absent: bool,
    },
    Settled {
        quiet_ms: u64,
    },
    /// No animation or transition is running in the page.
    Animation,
    AllOf {
        predicates: Vec<Predicate>,
    },
    AnyOf {
        predicates: Vec<Predicate>,
    },
    Not {
        predicate: Box<Predicate>,
    },
}

/// What a `net` predicate matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetMatch {
    pub method: Option<String>,
    pub url_contains: Option<String>,
    pub status: Option<u16>,
    pub ok: Option<bool>,
    /// Text the response body must contain (the page's SDK captures bodies only when asked).
    pub body_contains: Option<String>,
    pub count: Option<u64>,
    pub absent: bool,
}

/// What a `state` predicate expects at its path.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StateExpect {
    Equals(Value),
    Exists(bool),
}

/// How an `element` predicate finds its element (the SDK's `match` query).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ElementQuery {
    pub role: Option<String>,
    pub name: Option<String>,
    pub text: Option<String>,
    pub label: Option<String>,
    pub placeholder: Option<String>,
    pub testid: Option<String>,
    pub alt: Option<String>,
    pub css: Option<String>,
    /// `false` asks for `name` (and the text fields) as a substring; by default a name is
    /// matched whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<bool>,
}

impl ElementQuery {
    /// Whether the query names no element (it gives no field but, at most, `exact`).
    pub fn names_nothing(&self) -> bool {
        *self
            == Self {
                exact: self.exact,
                ..Self::default()
            }
    }
}

impl Predicate {
    /// The kind word.
    pub fn kind(&self) -> &'static str {
        match self {
            Predicate::Signal { .. } => "signal",
            Predicate::Net(_) => "net",
            Predicate::Route { .. } => "route",
            Predicate::State { .. } => "state",
            Predicate::Element { .. } => "element",
            Predicate::Text { .. } => "text",
            Predicate::Console { .. } => "console",
            Predicate::Settled { .. } => "settled",
            Predicate::Animation => "animation",
            Predicate::AllOf { .. } => "allOf",
            Predicate::AnyOf { .. } => "anyOf",
            Predicate::Not { .. } => "not",
        }
    }

    /// True when passing this predicate only shows that something is present on the page, not
    /// that the app did anything (element or text presence with no consequence beside it).
    pub fn presence_only(&self) -> bool {
        match self {
            Predicate::Element { absent: false, .. } | Predicate::Text { absent: false, .. } => {
                true
            }
            Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
                predicates.iter().all(Predicate::presence_only)
            }
            _ => false,
        }
    }

    /// True when the predicate waits for the page to go quiet somewhere inside.
    pub fn mentions_settled(&self) -> bool {
        match self {
            Predicate::Settled { .. } => true,
            Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
                predicates.iter().any(Predicate::mentions_settled)
            }
            Predicate::Not { predicate } => predicate.mentions_settled(),
            _ => false,
        }
    }

    /// True when a pass could be undone by events still to come (an absence over the window,
    /// a `not` over window evidence): such a pass is final only at the end of the wait.
    pub fn provisional(&self) -> bool {
        match self {
            Predicate::Net(m) => m.absent || m.count.is_some(),
            Predicate::Console { absent, .. } => *absent,
            Predicate::Signal { count, .. } => count.is_some(),
            Predicate::Not { predicate } => predicate.window_only(),
            Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
                predicates.iter().any(Predicate::provisional)
            }
            _ => false,
        }
    }

    /// True when every check inside reads the live page (no signal, request, console line or
    /// quiet time from the window): only then can a quiet page's contradiction be final, since
    /// a window event still to come (a signal from a timer) could change an `anyOf` or a `not`.
    pub fn reads_page_only(&self) -> bool {
        match self {
            Predicate::Route { .. }
            | Predicate::State { .. }
            | Predicate::Element { .. }
            | Predicate::Text { .. }
            | Predicate::Animation => true,
            Predicate::Signal { .. }
            | Predicate::Net(_)
            | Predicate::Console { .. }
            | Predicate::Settled { .. } => false,
            Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
                predicates.iter().all(Predicate::reads_page_only)
            }
            Predicate::Not { predicate } => predicate.reads_page_only(),
        }
    }

    /// True when a `net` predicate somewhere inside needs response bodies, which the page's SDK
    /// captures only when asked.
    pub fn needs_bodies(&self) -> bool {
        match self {
            Predicate::Net(m) => m.body_contains.is_some(),
            Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
                predicates.iter().any(Predicate::needs_bodies)
            }
            Predicate::Not { predicate } => predicate.needs_bodies(),
            _ => false,
        }
    }

    /// True when the predicate reads only the event window (no page reads).
    pub fn window_only(&self) -> bool {
        match self {
            Predicate::Signal { .. }
            | Predicate::Net(_)
            | Predicate::Console { .. }
            | Predicate::Settled { .. } => true,
            Predicate::Route { .. }
            | Predicate::State { .. }
            | Predicate::Element { .. }
            | Predicate::Text { .. }
            | Predicate::Animation => false,
            Predicate::AllOf { predicates } | Predicate::AnyOf { predicates } => {
                predicates.iter().all(Predicate::window_only)
            }
            Predicate::Not { predicate } => predicate.window_only(),
        }
    }
}

/// Why a predicate did not parse: a sentence naming the problem and what the kind accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("that predicate did not parse ({at}): {problem}. {accepted}")]
pub struct PredicateError {
    /// Where in the predicate (`predicate`, `predicate.predicates[1]`, ...).
    pub at: String,
    pub problem: String,
    /// What the kind accepts, or the list of kinds.
    pub accepted: String,
}

/// Parses a predicate from JSON, strictly.
pub fn parse(value: &Value) -> Result<Predicate, PredicateError> {
    parse_at(value, "predicate", 0)
}

fn kinds_list() -> String {
    format!(
        "Kinds: {}",
        KINDS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
    )
}

fn parse_at(value: &Value, at: &str, depth: usize) -> Result<Predicate, PredicateError> {
    let err = |problem: String, accepted: String| PredicateError {
        at: at.to_string(),
        problem,
        accepted,
    };
    let Value::Object(map) = value else {
        return Err(err(
            format!("expected an object with a `kind`, got {}", type_word(value)),
            kinds_list(),
        ));
    };
    if depth > MAX_DEPTH {
        return Err(err(
            format!("composites nest deeper than {MAX_DEPTH}"),
            kinds_list(),
        ));
    }
    let Some(kind) = map.get("kind").and_then(Value::as_str) else {
        return Err(err("missing the string field `kind`".into(), kinds_list()));
    };
    let Some((kind, fields)) = KINDS.iter().find(|(k, _)| *k == kind) else {
        return Err(err(format!("unknown kind '{}'", clip(kind)), kinds_list()));
    };
    let accepted = format!("{kind} accepts: {}", fields.join(", "));
    if let Some(unknown) = map
        .keys()
        .find(|k| k.as_str() != "kind" && !fields.contains(&k.as_str()))
    {
        return Err(err(
            format!("unknown field '{}' for kind {kind}", clip(unknown)),
            accepted,
        ));
    }
    let f = Fields {
        map,
        at,
        accepted: &accepted,
    };
    Ok(match *kind {
        "signal" => Predicate::Signal {
            name: f.required_str("name")?,
            count: f.opt_u64("count")?,
            data_matches: f.opt_object("dataMatches")?,
        },
        "net" => Predicate::Net(NetMatch {
            method: f.opt_str("method")?.map(|m| m.to_ascii_uppercase()),
            url_contains: f.opt_str("urlContains")?,
            status: f.opt_u64("status")?.map(|s| s.min(u16::MAX as u64) as u16),
            ok: f.opt_bool("ok")?,
            body_contains: f.opt_nonempty_str("bodyContains")?,
            count: f.opt_u64("count")?,
            absent: f.opt_bool("absent")?.unwrap_or(false),
        }),
        "route" => {
            let (contains, pathname) = (f.opt_str("contains")?, f.opt_str("pathname")?);
            if contains.is_none() && pathname.is_none() {
                return Err(err(
                    "route needs `contains` or `pathname`".into(),
                    accepted.clone(),
                ));
            }
            Predicate::Route { contains, pathname }
        }
        "state" => {
            let expect = match (map.get("equals"), f.opt_bool("exists")?) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        "give `equals` or `exists`, not both".into(),
                        accepted.clone(),
                    ));
                }
                (Some(v), None) => StateExpect::Equals(v.clone()),
                (None, Some(e)) => StateExpect::Exists(e),
                (None, None) => StateExpect::Exists(true),
            };
            Predicate::State {
                store: f.required_str("store")?,
                path: f.required_str("path")?,
                expect,
            }
        }
        "element" => {
            let query = ElementQuery {
                role: f.opt_str("role")?,
                name: f.opt_str("name")?,
                text: f.opt_str("text")?,
                label: f.opt_str("label")?,
                placeholder: f.opt_str("placeholder")?,
                testid: f.opt_str("testid")?,
                alt: f.opt_str("alt")?,
                css: f.opt_str("css")?,
                exact: f.opt_bool("exact")?,
            };
            if query.names_nothing() {
                return Err(err("element needs at least one of role, text, label, placeholder, testid, alt, css".into(), accepted.clone()));
            }
            Predicate::Element {
                query,
                value: f.opt_str("value")?,
                state: f.opt_word("state", "element state", ELEMENT_STATES)?,
                absent: f.opt_bool("absent")?.unwrap_or(false),
            }
        }
        "text" => Predicate::Text {
            contains: f.required_str("contains")?,
            absent: f.opt_bool("absent")?.unwrap_or(false),
        },
        "console" => {
            let level = f.opt_word("level", "console level", CONSOLE_LEVELS)?;
            let contains = f.opt_nonempty_str("contains")?;
            if level.is_none() && contains.is_none() {
                return Err(err(
                    "console needs `level` or `contains`".into(),
                    accepted.clone(),
                ));
            }
            Predicate::Console {
                level,
                contains,
                absent: f.opt_bool("absent")?.unwrap_or(false),
            }
        }
        "settled" => Predicate::Settled {
            quiet_ms: f.opt_u64("quietMs")?.unwrap_or(500).clamp(1, 60_000),
        },
        "animation" => Predicate::Animation,
        "allOf" | "anyOf" => {
            let Some(Value::Array(children)) = map.get("predicates") else {
                return Err(err(
                    format!("{kind} needs `predicates`, an array"),
                    accepted.clone(),
                ));
            };
            if children.is_empty() || children.len() > MAX_CHILDREN {
                return Err(err(
                    format!(
                        "{kind} needs 1 to {MAX_CHILDREN} predicates, got {}",
                        children.len()
                    ),
                    accepted.clone(),
                ));
            }
            let predicates = children
                .iter()
                .enumerate()
                .map(|(i, c)| parse_at(c, &format!("{at}.predicates[{i}]"), depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            if *kind == "allOf" {
                Predicate::AllOf { predicates }
            } else {
                Predicate::AnyOf { predicates }
            }
        }
        _ => {
            let Some(inner) = map.get("predicate") else {
                return Err(err("not needs `predicate`".into(), accepted.clone()));
            };
            Predicate::Not {
                predicate: Box::new(parse_at(inner, &format!("{at}.predicate"), depth + 1)?),
            }
        }
    })
}

struct Fields<'a> {
    map: &'a Map<String, Value>,
    at: &'a str,
    accepted: &'a str,
}

impl Fields<'_> {
    fn wrong(&self, field: &str, want: &str, got: &Value) -> PredicateError {
        PredicateError {
            at: self.at.to_string(),
            problem: format!("`{field}` must be {want}, got {}", type_word(got)),
            accepted: self.accepted.to_string(),
        }
    }

    fn opt_str(&self, field: &str) -> Result<Option<String>, PredicateError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(Value::String(s)) if s.chars().count() <= 2048 => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong(field, "a string of at most 2048 characters", v)),
        }
    }

    fn required_str(&self, field: &str) -> Result<String, PredicateError> {
        match self.opt_str(field)? {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(PredicateError {
                at: self.at.to_string(),
                problem: format!("missing the required string `{field}`"),
                accepted: self.accepted.to_string(),
            }),
        }
    }

    /// An optional word from `vocabulary`; another word is refused, listing the vocabulary.
    fn opt_word(
        &self,
        field: &str,
        what: &str,
        vocabulary: &[&str],
    ) -> Result<Option<String>, PredicateError> {
        match self.opt_str(field)? {
            Some(word) if !vocabulary.contains(&word.as_str()) => Err(PredicateError {
                at: self.at.to_string(),
                problem: format!("unknown {what} '{}'", clip(&word)),
                accepted: format!("{field} is one of: {}", vocabulary.join(", ")),
            }),
            other => Ok(other),
        }
    }

    /// An optional string that, when given, must not be empty (an empty needle matches
    /// everything and proves nothing).
    fn opt_nonempty_str(&self, field: &str) -> Result<Option<String>, PredicateError> {
        match self.opt_str(field)? {
            Some(s) if s.is_empty() => Err(PredicateError {
                at: self.at.to_string(),
                problem: format!("`{field}` must not be empty"),
                accepted: self.accepted.to_string(),
            }),
            other => Ok(other),
        }
    }

    fn opt_u64(&self, field: &str) -> Result<Option<u64>, PredicateError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.wrong(field, "a whole number", v)),
        }
    }

    fn opt_bool(&self, field: &str) -> Result<Option<bool>, PredicateError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.wrong(field, "true or false", v)),
        }
    }

    fn opt_object(&self, field: &str) -> Result<Option<Map<String, Value>>, PredicateError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m.clone())),
            Some(v) => Err(self.wrong(field, "an object", v)),
        }
    }
}

fn type_word(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Echoes user text back at most 64 characters long.
fn clip(text: &str) -> String {
    if text.chars().count() > 64 {
        format!("{}…", text.chars().take(64).collect::<String>())
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_kind() {
        for p in [
            json!({"kind":"signal","name":"saved","count":1,"dataMatches":{"id":3}}),
            json!({"kind":"net","method":"post","urlContains":"/api","status":200,"ok":true,"count":1}),
            json!({"kind":"route","pathname":"/done"}),
            json!({"kind":"state","store":"app","path":"user.name","equals":"ada"}),
            json!({"kind":"element","testid":"x","absent":true}),
            json!({"kind":"text","contains":"Welcome"}),
            json!({"kind":"console","level":"error","absent":true}),
            json!({"kind":"settled"}),
            json!({"kind":"element","role":"checkbox","state":"checked"}),
            json!({"kind":"console","contains":"boom"}),
            json!({"kind":"net","urlContains":"/api","bodyContains":"ok"}),
            json!({"kind":"animation"}),
            json!({"kind":"allOf","predicates":[{"kind":"settled"},{"kind":"not","predicate":{"kind":"text","contains":"x"}}]}),
        ] {
            let parsed = parse(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
            assert_eq!(parsed.kind(), p["kind"].as_str().unwrap());
        }
    }

    #[test]
    fn refusals_name_the_problem_and_list_what_the_kind_accepts() {
        let e = parse(&json!({"kind":"net","urlcontains":"/api"})).unwrap_err();
        assert!(e.problem.contains("urlcontains"), "{e}");
        assert!(e.accepted.contains("urlContains"), "{e}");
        let e = parse(&json!({"kind":"allOf","predicates":[{"kind":"signal"}]})).unwrap_err();
        assert_eq!(e.at, "predicate.predicates[0]");
        assert!(e.to_string().contains("name"), "{e}");
        for bad in [
            json!(null),
            json!("signal"),
            json!({}),
            json!({"kind":"magic"}),
            json!({"kind":"route"}),
            json!({"kind":"console","level":"shout"}),
            json!({"kind":"console"}),
            json!({"kind":"console","contains":""}),
            json!({"kind":"element","testid":"x","state":"sparkly"}),
            json!({"kind":"net","bodyContains":""}),
            json!({"kind":"animation","name":"spin"}),
            json!({"kind":"state","store":"a","path":"b","equals":1,"exists":true}),
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let mut p = json!({"kind":"settled"});
        for _ in 0..100 {
            p = json!({"kind":"not","predicate":p});
        }
        assert!(parse(&p).is_err());
    }

    #[test]
    fn presence_only_is_told_apart_from_consequences() {
        assert!(
            parse(&json!({"kind":"text","contains":"Hi"}))
                .unwrap()
                .presence_only()
        );
        assert!(!parse(&json!({"kind":"allOf","predicates":[{"kind":"text","contains":"Hi"},{"kind":"signal","name":"s"}]})).unwrap().presence_only());
    }
}
