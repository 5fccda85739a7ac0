//! Drift between the two spellings of protocol 1: the daemon's (`reticle::wire`) and the browser
//! SDK's (`sdk/src/protocol.js`). Reads protocol.js's exported constants as text and compares
//! the protocol version, wire contract, socket path, message kinds, event types, command names, act actions,
//! act settle modes, snapshot modes, close codes and limits with the Rust vocabulary. Where the two differ by
//! design the difference is written out below, with its reason; any other difference fails. A
//! control runs the same comparison on edited copies of protocol.js and requires each edit to be
//! caught.

use std::collections::{BTreeMap, BTreeSet};

use reticle::wire::args::{ActAction, ActSettle, SnapshotMode};
use reticle::wire::close::{self, code};
use reticle::wire::limits;
use reticle::wire::{
    Command, CommandName, CommandResult, Event, EventMessage, EventType, Hello, KnownEventType,
    Message,
};

const PROTOCOL_JS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../sdk/src/protocol.js");
const LIMITS_RS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/wire/limits.rs");

/// Protocol 1 event types the SDK does not emit. The daemon's vocabulary is the published 2.0.0
/// SDK's and its later additions; this SDK emits a subset (console.info and console.debug go out
/// as `console.log` with `data.level`). Every other known type must be in `EventType`.
const EVENT_TYPES_THE_SDK_DOES_NOT_EMIT: &[&str] = &[
    "net.stream",
    "net.detail",
    "console.info",
    "console.debug",
    "visible.shown",
    "visible.hidden",
    "anim.start",
    "anim.end",
    "scroll.position",
    "reveal.shown",
    "storage.change",
    "human.control",
    "human.mark",
    "perf",
    "render.commit",
    "focus.change",
    "truncated",
    "blind-spot",
    "sdk.failed",
    "download",
];

/// Protocol 1 commands the SDK does not answer (it replies `unknown command`): no tool of this
/// daemon sends them.
const COMMANDS_THE_SDK_DOES_NOT_ANSWER: &[&str] = &["storage_read", "capture", "impact"];

/// `CloseCode` entries the daemon never sends: `NORMAL` is the SDK's own close on `disconnect()`.
const SDK_ONLY_CLOSE_CODES: &[(&str, u16)] = &[("NORMAL", 1000)];
/// Codes the daemon sends that the SDK does not name: `GOING_AWAY` (a daemon shutting down) is
/// an ordinary drop to the SDK, which reconnects.
const DAEMON_ONLY_CLOSE_CODES: &[u16] = &[code::GOING_AWAY];
/// The close codes both name, by the SDK's key.
fn shared_close_codes() -> BTreeMap<&'static str, u16> {
    BTreeMap::from([
        ("POLICY", code::POLICY),
        ("TOO_BIG", code::TOO_BIG),
        ("TRY_AGAIN_LATER", code::TRY_AGAIN_LATER),
    ])
}

/// The SDK's `Limits` keys and the daemon limit each must equal.
fn shared_limits() -> BTreeMap<&'static str, (&'static str, u64)> {
    let id = ("MAX_ID_CHARS", limits::MAX_ID_CHARS as u64);
    BTreeMap::from([
        (
            "MAX_FRAME_BYTES",
            ("MAX_FRAME_BYTES", limits::MAX_FRAME_BYTES as u64),
        ),
        ("MAX_SESSION_ID", id),
        ("MAX_COMMAND_ID", id),
        ("MAX_COMMAND_NAME", id),
        ("MAX_REF", id),
        ("MAX_URL", ("MAX_URL_CHARS", limits::MAX_URL_CHARS as u64)),
        (
            "MAX_TITLE",
            ("MAX_TITLE_CHARS", limits::MAX_TITLE_CHARS as u64),
        ),
        (
            "MAX_TOKEN",
            ("MAX_TOKEN_CHARS", limits::MAX_TOKEN_CHARS as u64),
        ),
        (
            "MAX_ERROR",
            ("MAX_ERROR_CHARS", limits::MAX_ERROR_CHARS as u64),
        ),
        (
            "MAX_ADAPTERS",
            ("MAX_ADAPTERS", limits::MAX_ADAPTERS as u64),
        ),
    ])
}

/// `Limits` entries the daemon does not check: what the SDK's own API accepts.
const SDK_ONLY_LIMITS: &[&str] = &["MAX_STORE_NAME", "MAX_SIGNAL_NAME"];
/// Constants of `limits.rs` the SDK spells as scalars of the same name, compared by value.
const SHARED_SCALARS: &[&str] = &["WS_PATH"];
/// Daemon limits the SDK does not need to know: the daemon's own close frames, capacity,
/// timeouts and rate cap, none of which a page can stay inside by choice.
const DAEMON_ONLY_LIMITS: &[&str] = &[
    "PROTOCOL_VERSION",
    "MAX_CLOSE_REASON_BYTES",
    "MAX_SESSIONS",
    "MAX_PENDING_HANDSHAKES",
    "HELLO_TIMEOUT",
    "LIVENESS_BOUND",
    "FROZEN_DOCUMENT_BOUND",
    "COMMAND_TIMEOUT",
    "MAX_EVENTS_PER_SECOND",
];

/// A value in protocol.js: a quoted string, a product of integers, or a reference
/// `Object.KEY` to another export.
#[derive(Debug, Clone, PartialEq)]
enum JsValue {
    Text(String),
    Number(u64),
    Reference(String),
}

fn js_value(text: &str) -> Result<JsValue, String> {
    let text = text.trim().trim_end_matches(',').trim();
    if let Some(quoted) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        return Ok(JsValue::Text(quoted.to_string()));
    }
    if text.contains('.') && !text.contains(' ') {
        return Ok(JsValue::Reference(text.to_string()));
    }
    text.split('*')
        .map(|factor| factor.trim().parse::<u64>())
        .product::<Result<u64, _>>()
        .map(JsValue::Number)
        .map_err(|_| format!("cannot read the value `{text}`"))
}

/// The body of `export const <name> = <opening>` up to the first `closing`, as text.
fn export_body<'a>(
    js: &'a str,
    name: &str,
    opening: &str,
    closing: &str,
) -> Result<&'a str, String> {
    let head = format!("export const {name} = {opening}");
    let start = js
        .find(&head)
        .ok_or_else(|| format!("protocol.js has no `{head}`"))?
        + head.len();
    let end = js[start..]
        .find(closing)
        .ok_or_else(|| format!("`{name}` in protocol.js never closes"))?;
    Ok(&js[start..start + end])
}

/// The `KEY: value` entries of `export const <name> = Object.freeze({ ... })`, comments skipped.
fn frozen_object(js: &str, name: &str) -> Result<BTreeMap<String, JsValue>, String> {
    let body = export_body(js, name, "Object.freeze({", "});")?;
    let mut entries = BTreeMap::new();
    let mut in_comment = false;
    for line in body.lines().map(str::trim) {
        if in_comment || line.starts_with("/*") {
            in_comment = !line.contains("*/");
            continue;
        }
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        for entry in entries_of(line) {
            let (key, value) = entry.split_once(':').ok_or_else(|| {
                format!("`{name}` has an entry that is not `KEY: value`: {entry}")
            })?;
            entries.insert(key.trim().to_string(), js_value(value)?);
        }
    }
    if entries.is_empty() {
        return Err(format!("`{name}` in protocol.js is empty"));
    }
    Ok(entries)
}

/// The `KEY: value` entries on one line (one, or several as in `{ A: 'a', B: 'b' }`), split at
/// the commas outside quotes.
fn entries_of(line: &str) -> Vec<&str> {
    let line = line.trim_start_matches('{').trim_end_matches('}').trim();
    let mut out = Vec::new();
    let mut quoted = false;
    let mut start = 0;
    for (at, c) in line.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            ',' if !quoted => {
                out.push(line[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    out.push(line[start..].trim());
    out.retain(|entry| !entry.is_empty());
    out
}

/// The value of `export const <name> = <value>;`.
fn scalar(js: &str, name: &str) -> Result<JsValue, String> {
    let head = format!("export const {name} = ");
    let start = js
        .find(&head)
        .ok_or_else(|| format!("protocol.js has no `{head}`"))?
        + head.len();
    let end = js[start..]
        .find(';')
        .ok_or_else(|| format!("`{name}` never ends"))?;
    js_value(&js[start..start + end])
}

fn texts(entries: &BTreeMap<String, JsValue>, name: &str) -> Result<BTreeSet<String>, String> {
    entries
        .iter()
        .map(|(key, value)| match value {
            JsValue::Text(text) => Ok(text.clone()),
            other => Err(format!("{name}.{key} is {other:?}, not a name")),
        })
        .collect()
}

fn number(value: &JsValue, what: &str) -> Result<u64, String> {
    match value {
        JsValue::Number(n) => Ok(*n),
        other => Err(format!("{what} is {other:?}, not a number")),
    }
}

/// The message kinds as the daemon writes them: one message of each kind, serialized.
fn rust_message_kinds() -> BTreeSet<String> {
    let samples = [
        Message::Hello(Hello {
            protocol_version: limits::PROTOCOL_VERSION,
            session_id: "s".into(),
            url: String::new(),
            title: String::new(),
            project_id: None,
            adapters: Vec::new(),
            token: None,
            has_capabilities: None,
            sdk_version: None,
            contract: None,
        }),
        Message::Command(Command {
            id: "c".into(),
            session_id: None,
            name: CommandName::Snapshot.as_str().into(),
            args: Default::default(),
        }),
        Message::CommandResult(CommandResult {
            id: "c".into(),
            ok: true,
            result: None,
            error: None,
        }),
        Message::Event(EventMessage {
            event: Event {
                t: 0.0,
                kind: EventType::Known(KnownEventType::Signal),
                session_id: "s".into(),
                element_ref: None,
                data: Default::default(),
                seq: None,
            },
        }),
    ];
    // Adding a message kind breaks this match: add its sample above.
    let covered: BTreeSet<usize> = samples
        .iter()
        .map(|message| match message {
            Message::Hello(_) => 0,
            Message::Command(_) => 1,
            Message::CommandResult(_) => 2,
            Message::Event(_) => 3,
        })
        .collect();
    assert_eq!(covered.len(), samples.len(), "one sample per message kind");
    samples
        .iter()
        .map(|message| {
            serde_json::to_value(message).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Names in `a` and not in `b`.
fn missing(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Vec<String> {
    a.difference(b).cloned().collect()
}

fn owned(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// Every difference between `js` (protocol.js's text) and the Rust vocabulary that is not one of
/// the differences written out above.
fn drift(js: &str, limits_rs: &str) -> Vec<String> {
    match compare(js, limits_rs) {
        Ok(differences) => differences,
        Err(unreadable) => vec![unreadable],
    }
}

fn compare(js: &str, limits_rs: &str) -> Result<Vec<String>, String> {
    let mut differences = Vec::new();

    let version = number(&scalar(js, "PROTOCOL_VERSION")?, "PROTOCOL_VERSION")?;
    if version != u64::from(limits::PROTOCOL_VERSION) {
        differences.push(format!(
            "protocol version: sdk {version}, daemon {}",
            limits::PROTOCOL_VERSION
        ));
    }

    let contract = scalar(js, "WIRE_CONTRACT")?;
    if contract != JsValue::Text(reticle::wire::CONTRACT.to_string()) {
        differences.push(format!(
            "wire contract: sdk {contract:?}, daemon {:?} (the fingerprint of the golden messages' field names: give protocol.js the daemon's)",
            reticle::wire::CONTRACT
        ));
    }

    let ws_path = scalar(js, "WS_PATH")?;
    if ws_path != JsValue::Text(limits::WS_PATH.to_string()) {
        differences.push(format!(
            "socket path: sdk {ws_path:?}, daemon {:?}",
            limits::WS_PATH
        ));
    }

    let js_kinds = texts(&frozen_object(js, "MessageKind")?, "MessageKind")?;
    let rust_kinds = rust_message_kinds();
    if js_kinds != rust_kinds {
        differences.push(format!(
            "message kinds: sdk {js_kinds:?}, daemon {rust_kinds:?}"
        ));
    }

    let js_events = texts(&frozen_object(js, "EventType")?, "EventType")?;
    let rust_events: BTreeSet<String> = KnownEventType::ALL
        .iter()
        .map(|k| k.as_str().to_string())
        .collect();
    let not_emitted = owned(EVENT_TYPES_THE_SDK_DOES_NOT_EMIT);
    for name in missing(&js_events, &rust_events) {
        differences.push(format!(
            "event type {name:?}: the sdk emits it, the daemon does not know it"
        ));
    }
    for name in missing(&rust_events, &js_events) {
        if !not_emitted.contains(&name) {
            differences.push(format!(
                "event type {name:?}: the daemon knows it, the sdk does not name it"
            ));
        }
    }
    for name in js_events.intersection(&not_emitted) {
        differences.push(format!(
            "event type {name:?} is listed as not emitted, yet the sdk names it"
        ));
    }
    let churn = export_body(js, "CHURN_EVENT_TYPES", "Object.freeze(", ");")?;
    for quoted in churn.split('\'').skip(1).step_by(2) {
        if !rust_events.contains(quoted) {
            differences.push(format!(
                "churn event type {quoted:?} is not a protocol 1 type"
            ));
        }
    }

    let js_commands = texts(&frozen_object(js, "CommandName")?, "CommandName")?;
    let rust_commands: BTreeSet<String> = CommandName::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .collect();
    let unanswered = owned(COMMANDS_THE_SDK_DOES_NOT_ANSWER);
    let answered_by_design: BTreeSet<String> =
        rust_commands.difference(&unanswered).cloned().collect();
    if js_commands != answered_by_design {
        differences.push(format!(
            "commands: the sdk answers {js_commands:?}, the daemon expects {answered_by_design:?}"
        ));
    }

    // The argument words: each JS frozen object against its Rust enum's wire words.
    for (object, words, what) in [
        (
            "ActAction",
            ActAction::ALL
                .iter()
                .map(|a| a.as_str())
                .collect::<Vec<_>>(),
            "act actions",
        ),
        (
            "SnapshotMode",
            SnapshotMode::ALL.iter().map(|m| m.as_str()).collect(),
            "snapshot modes",
        ),
        (
            "ActSettleMode",
            ActSettle::ALL.iter().map(|m| m.as_str()).collect(),
            "act settle modes",
        ),
    ] {
        let in_js = texts(&frozen_object(js, object)?, object)?;
        let in_rust = owned(&words);
        if in_js != in_rust {
            differences.push(format!("{what}: sdk {in_js:?}, daemon {in_rust:?}"));
        }
    }

    let js_codes = frozen_object(js, "CloseCode")?;
    let mut expected_codes: BTreeMap<String, u16> = shared_close_codes()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for (key, value) in SDK_ONLY_CLOSE_CODES {
        expected_codes.insert(key.to_string(), *value);
    }
    let js_codes: BTreeMap<String, u64> = js_codes
        .iter()
        .map(|(k, v)| Ok((k.clone(), number(v, &format!("CloseCode.{k}"))?)))
        .collect::<Result<_, String>>()?;
    let expected_codes: BTreeMap<String, u64> = expected_codes
        .into_iter()
        .map(|(k, v)| (k, u64::from(v)))
        .collect();
    if js_codes != expected_codes {
        differences.push(format!(
            "close codes: sdk {js_codes:?}, expected {expected_codes:?}"
        ));
    }
    let named: BTreeSet<u16> = shared_close_codes()
        .into_values()
        .chain(DAEMON_ONLY_CLOSE_CODES.iter().copied())
        .collect();
    let sent: BTreeSet<u16> = code::ALL.iter().copied().collect();
    if named != sent {
        differences.push(format!(
            "close codes the daemon sends {sent:?}, accounted for {named:?}"
        ));
    }

    let starts = frozen_object(js, "CloseReasonStart")?;
    let in_use = JsValue::Text(close::SESSION_IN_USE.to_string());
    if starts.get("SESSION_IN_USE") != Some(&in_use) || starts.len() != 1 {
        differences.push(format!(
            "close reason starts: sdk {starts:?}, daemon SESSION_IN_USE {:?}",
            close::SESSION_IN_USE
        ));
    }

    let js_limits = frozen_object(js, "Limits")?;
    let shared = shared_limits();
    for (key, value) in &js_limits {
        if SDK_ONLY_LIMITS.contains(&key.as_str()) {
            continue;
        }
        match shared.get(key.as_str()) {
            None => differences.push(format!("Limits.{key} has no daemon limit")),
            Some((rust, want)) => {
                let have = number(value, &format!("Limits.{key}"))?;
                if have != *want {
                    differences.push(format!(
                        "Limits.{key} is {have}, the daemon's {rust} is {want}"
                    ));
                }
            }
        }
    }
    for key in shared.keys() {
        if !js_limits.contains_key(*key) {
            differences.push(format!("Limits.{key} is missing from the sdk"));
        }
    }
    let accounted: BTreeSet<&str> = shared
        .values()
        .map(|(rust, _)| *rust)
        .chain(DAEMON_ONLY_LIMITS.iter().copied())
        .chain(SHARED_SCALARS.iter().copied())
        .collect();
    for line in limits_rs.lines() {
        let Some(name) = line
            .trim()
            .strip_prefix("pub const ")
            .and_then(|rest| rest.split(':').next())
        else {
            continue;
        };
        if !accounted.contains(name) {
            differences.push(format!(
                "the daemon limit {name} is neither in the sdk nor daemon-only"
            ));
        }
    }
    Ok(differences)
}

fn sources() -> (String, String) {
    (
        std::fs::read_to_string(PROTOCOL_JS).expect("sdk/src/protocol.js"),
        std::fs::read_to_string(LIMITS_RS).expect("reticle/src/wire/limits.rs"),
    )
}

#[test]
fn the_sdk_and_the_daemon_spell_protocol_1_alike() {
    let (js, limits_rs) = sources();
    assert_eq!(drift(&js, &limits_rs), Vec::<String>::new());
}

#[test]
fn control_every_kind_of_edit_to_protocol_js_is_caught() {
    let (js, limits_rs) = sources();
    let edits = [
        (
            "export const PROTOCOL_VERSION = 1;",
            "export const PROTOCOL_VERSION = 2;",
        ),
        (
            "export const WIRE_CONTRACT = '",
            "export const WIRE_CONTRACT = '0",
        ),
        (
            "COMMAND_RESULT: 'command_result',",
            "COMMAND_RESULT: 'commandResult',",
        ),
        ("SIGNAL: 'signal',", "SIGNAL: 'signals',"),
        ("SIGNAL: 'signal',", "SIGNAL: 'signal',\n  PERF: 'perf',"),
        ("'anim.start'", "'anim.begin'"),
        (
            "SCROLL: 'scroll',",
            "SCROLL: 'scroll',\n  CAPTURE: 'capture',",
        ),
        ("CLOCK: 'clock',", ""),
        ("TOO_BIG: 1009,", "TOO_BIG: 1010,"),
        (
            "SESSION_IN_USE: 'session in use',",
            "SESSION_IN_USE: 'session taken',",
        ),
        ("NORMAL: 1000,", "NORMAL: 1000,\n  GOING_AWAY: 1001,"),
        (
            "MAX_FRAME_BYTES: 1024 * 1024,",
            "MAX_FRAME_BYTES: 4 * 1024 * 1024,",
        ),
        ("MAX_URL: 4096,", "MAX_URL: 2048,"),
        ("MAX_TITLE: 512,", ""),
        (
            "MAX_ADAPTERS: 32,",
            "MAX_ADAPTERS: 32,\n  MAX_SESSIONS: 32,",
        ),
        ("export const MessageKind", "export const MessageKinds"),
        (
            "export const WS_PATH = '/reticle';",
            "export const WS_PATH = '/bridge';",
        ),
        (
            "SCROLL_INTO_VIEW: 'scrollIntoView',",
            "SCROLL_INTO_VIEW: 'scroll_into_view',",
        ),
        ("PRESS: 'press',", ""),
        ("STATUS: 'status' }", "STATUS: 'status', DIFF: 'diff' }"),
        ("TASK: 'task' }", "TASK: 'tick' }"),
    ];
    for (from, to) in edits {
        assert!(
            js.contains(from),
            "the control's edit `{from}` no longer applies"
        );
        let edited = js.replacen(from, to, 1);
        assert!(
            !drift(&edited, &limits_rs).is_empty(),
            "editing `{from}` into `{to}` went unnoticed"
        );
    }
    let extra_limit = format!("{limits_rs}\npub const MAX_NEW_THING: usize = 1;\n");
    assert!(
        !drift(&js, &extra_limit).is_empty(),
        "a new daemon limit went unnoticed"
    );
}
