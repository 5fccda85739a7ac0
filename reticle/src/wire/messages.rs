//! Protocol 1's four message kinds, `hello`, `command`, `command_result` and `event`, one JSON
//! object per WebSocket text frame, told apart by `kind`. Unknown keys are stripped (the
//! published SDK and newer ones send extra fields); required fields, lengths and counts are
//! checked against [`super::limits`]. This module decodes and encodes; it must not act.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::limits::{
    MAX_ADAPTERS, MAX_ERROR_CHARS, MAX_ID_CHARS, MAX_TITLE_CHARS, MAX_TOKEN_CHARS, MAX_URL_CHARS,
    PROTOCOL_VERSION,
};
use super::vocabulary::EventType;

/// One protocol 1 message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Message {
    /// Page → daemon, the first frame on every socket: who the page is.
    Hello(Hello),
    /// Daemon → page: run a command.
    Command(Command),
    /// Page → daemon: the answer to a command, matched by id.
    CommandResult(CommandResult),
    /// Page → daemon: something the page observed.
    Event(EventMessage),
}

/// A page introducing itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// Must be [`PROTOCOL_VERSION`]; anything else is refused naming both versions.
    pub protocol_version: u32,
    /// The page's session id; a hello with a connected id replaces that socket.
    pub session_id: String,
    /// The page's URL at connect time.
    pub url: String,
    /// The page's title at connect time.
    pub title: String,
    /// The project the page belongs to, when its build says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// Framework adapters the page registered (`react`, ...).
    pub adapters: Vec<String>,
    /// The pairing token the page was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<Secret>,
    /// Whether the page registered capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_capabilities: Option<bool>,
    /// The SDK's own version, when it says (ours does; the published 2.0.0 does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdk_version: Option<String>,
    /// The wire contract the SDK speaks ([`crate::wire::CONTRACT`]), when it says (ours does;
    /// the published 2.0.0 does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
}

/// A string that never appears in `Debug` output.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// A command for a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Command {
    /// Unique among this session's commands; the result carries it back.
    pub id: String,
    /// The session the command is for; a page drops commands addressed to another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// A protocol 1 command name (see [`super::CommandName`]).
    pub name: String,
    /// The command's arguments, always an object.
    #[serde(default)]
    pub args: Map<String, Value>,
}

/// A page's answer to a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandResult {
    /// The id of the command answered.
    pub id: String,
    /// Whether the command ran; `false` is the page refusing or failing, with `error`.
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The envelope of one event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventMessage {
    pub event: Event,
}

/// Something a page observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Page milliseconds since connect; the daemon restamps with its own clock.
    pub t: f64,
    /// What kind of observation; an unknown type is kept verbatim.
    #[serde(rename = "type")]
    pub kind: EventType,
    /// The page's session id; the daemon restamps with the socket's session.
    pub session_id: String,
    /// The element the event is about, as a page ref (`e12`).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub element_ref: Option<String>,
    /// The event's payload, always an object.
    #[serde(default)]
    pub data: Map<String, Value>,
    /// The SDK's own sequence number, when it sends one (a gap marker carries the first lost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// Why a frame is not a protocol 1 message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not JSON at all (or not UTF-8).
    #[error("not JSON")]
    NotJson,
    /// JSON, but not a protocol 1 message: an unknown kind, a missing or mistyped field.
    #[error("{0}")]
    Schema(String),
    /// A field past one of the protocol's limits.
    #[error("{field} is longer than {max}")]
    Limit { field: &'static str, max: usize },
    /// A hello for another protocol version; `page` is the version as the page sent it.
    #[error("protocol version {page}, not {PROTOCOL_VERSION}")]
    Version { page: String },
}

/// The parts of a refused frame worth reporting (read leniently, for `/status`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameClues {
    pub kind: Option<String>,
    pub session_id: Option<String>,
    pub url: Option<String>,
    pub sdk_version: Option<String>,
}

/// Decodes and checks one frame.
pub fn decode(text: &str) -> Result<Message, DecodeError> {
    match serde_json::from_str::<Message>(text) {
        Ok(message) => {
            message.check()?;
            Ok(message)
        }
        Err(err) => Err(classify(text, &err)),
    }
}

fn classify(text: &str, err: &serde_json::Error) -> DecodeError {
    use serde_json::error::Category;
    match err.classify() {
        Category::Syntax | Category::Eof | Category::Io => DecodeError::NotJson,
        Category::Data => {
            // A hello from another protocol version may differ in any field: name the version
            // rather than the first field that failed.
            if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text)
                && map.get("kind").and_then(Value::as_str) == Some("hello")
                && let Some(version) = map.get("protocolVersion")
                && version.as_u64() != Some(u64::from(PROTOCOL_VERSION))
                && (version.is_number() || version.is_string())
            {
                return DecodeError::Version {
                    page: clip(&version_text(version), 16),
                };
            }
            DecodeError::Schema(clip(&err.to_string(), 80))
        }
    }
}

fn version_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads what can be read of a frame that failed to decode, for the refusal record.
pub fn clues(text: &str) -> FrameClues {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
        return FrameClues::default();
    };
    let field =
        |name: &str, max: usize| map.get(name).and_then(Value::as_str).map(|s| clip(s, max));
    FrameClues {
        kind: field("kind", 32),
        session_id: field("sessionId", MAX_ID_CHARS),
        url: field("url", 512),
        sdk_version: field("sdkVersion", 64),
    }
}

/// Cuts a string to `max` characters.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => text[..end].to_string(),
        None => text.to_string(),
    }
}

fn within(field: &'static str, value: &str, min: usize, max: usize) -> Result<(), DecodeError> {
    let chars = value.chars().count();
    if chars > max {
        return Err(DecodeError::Limit { field, max });
    }
    if chars < min {
        return Err(DecodeError::Schema(format!("{field} is empty")));
    }
    Ok(())
}

impl Message {
    /// Checks the protocol's version, lengths and counts.
    pub fn check(&self) -> Result<(), DecodeError> {
        match self {
            Message::Hello(hello) => {
                if hello.protocol_version != PROTOCOL_VERSION {
                    return Err(DecodeError::Version {
                        page: hello.protocol_version.to_string(),
                    });
                }
                within("sessionId", &hello.session_id, 1, MAX_ID_CHARS)?;
                within("url", &hello.url, 0, MAX_URL_CHARS)?;
                within("title", &hello.title, 0, MAX_TITLE_CHARS)?;
                if let Some(project) = &hello.project_id {
                    within("projectId", project, 1, MAX_ID_CHARS)?;
                }
                if hello.adapters.len() > MAX_ADAPTERS {
                    return Err(DecodeError::Limit {
                        field: "adapters",
                        max: MAX_ADAPTERS,
                    });
                }
                for adapter in &hello.adapters {
                    within("adapters[]", adapter, 0, MAX_ID_CHARS)?;
                }
                if let Some(token) = &hello.token {
                    within("token", &token.0, 0, MAX_TOKEN_CHARS)?;
                }
                if let Some(version) = &hello.sdk_version {
                    within("sdkVersion", version, 0, MAX_ID_CHARS)?;
                }
                if let Some(contract) = &hello.contract {
                    within("contract", contract, 0, MAX_ID_CHARS)?;
                }
                Ok(())
            }
            Message::Command(command) => {
                within("id", &command.id, 1, MAX_ID_CHARS)?;
                within("name", &command.name, 1, MAX_ID_CHARS)?;
                if let Some(session) = &command.session_id {
                    within("sessionId", session, 1, MAX_ID_CHARS)?;
                }
                Ok(())
            }
            Message::CommandResult(result) => {
                within("id", &result.id, 1, MAX_ID_CHARS)?;
                if let Some(error) = &result.error {
                    within("error", error, 0, MAX_ERROR_CHARS)?;
                }
                Ok(())
            }
            Message::Event(EventMessage { event }) => {
                within("event.sessionId", &event.session_id, 1, MAX_ID_CHARS)?;
                if let Some(element) = &event.element_ref {
                    within("event.ref", element, 0, MAX_ID_CHARS)?;
                }
                if !event.t.is_finite() {
                    return Err(DecodeError::Schema("event.t is not a finite number".into()));
                }
                within("event.type", event.kind.as_str(), 1, MAX_ID_CHARS)
            }
        }
    }

    /// Encodes as one JSON text frame.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("protocol messages always serialize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::vocabulary::KnownEventType;
    use serde_json::json;

    /// The hello the published 2.0.0 SDK sends, byte for byte in its key order.
    const PUBLISHED_HELLO: &str = r#"{"kind":"hello","protocolVersion":1,"sessionId":"s0b7f1c9e-1f7d-4a53-9a57-8a3c3f1d2e4b","projectId":"proj-1","url":"http://localhost:5173/app?x=1","title":"T","adapters":[],"token":"tok123","hasCapabilities":false}"#;

    #[test]
    fn the_published_hello_decodes() {
        let Message::Hello(hello) = decode(PUBLISHED_HELLO).unwrap() else {
            panic!("a hello")
        };
        assert_eq!(hello.project_id.as_deref(), Some("proj-1"));
        assert_eq!(hello.token, Some(Secret("tok123".into())));
        assert!(
            !format!("{hello:?}").contains("tok123"),
            "tokens stay out of Debug"
        );
    }

    #[test]
    fn unknown_keys_are_stripped_not_refused() {
        let newer = json!({
            "kind": "hello", "protocolVersion": 1, "sessionId": "s1", "url": "u", "title": "t",
            "adapters": [], "contract": "abc", "redactKeys": ["x"], "sdkVersion": "3.0.0"
        });
        let message = decode(&newer.to_string()).unwrap();
        let encoded: Value = serde_json::from_str(&message.encode()).unwrap();
        assert!(encoded.get("redactKeys").is_none());
        assert_eq!(encoded["sdkVersion"], "3.0.0");
        assert_eq!(
            encoded["contract"], "abc",
            "the contract is read (version skew)"
        );

        let event = json!({"kind":"event","event":{"t":2,"type":"page.health","sessionId":"s1",
            "documentId":"d1","editEpoch":3,"seq":7,"data":{"hidden":false}}});
        let Message::Event(EventMessage { event }) = decode(&event.to_string()).unwrap() else {
            panic!("an event")
        };
        assert_eq!(event.kind, EventType::Known(KnownEventType::PageHealth));
        assert_eq!(event.seq, Some(7));
    }

    #[test]
    fn an_unknown_event_type_is_kept_not_refused() {
        let frame = r#"{"kind":"event","event":{"t":1,"type":"quantum.flux","sessionId":"s"}}"#;
        let Message::Event(EventMessage { event }) = decode(frame).unwrap() else {
            panic!("an event")
        };
        assert_eq!(event.kind, EventType::Other("quantum.flux".into()));
        assert!(event.data.is_empty(), "data defaults to an empty object");
    }

    #[test]
    fn malformed_frames_are_named() {
        assert_eq!(decode("{not json"), Err(DecodeError::NotJson));
        assert_eq!(decode(""), Err(DecodeError::NotJson));
        assert!(matches!(
            decode(r#"{"kind":"shout"}"#),
            Err(DecodeError::Schema(_))
        ));
        assert!(matches!(decode(r#"[1,2]"#), Err(DecodeError::Schema(_))));
        // Missing required fields.
        assert!(matches!(
            decode(r#"{"kind":"hello","protocolVersion":1,"sessionId":"s"}"#),
            Err(DecodeError::Schema(_))
        ));
        // args must be an object.
        assert!(matches!(
            decode(r#"{"kind":"command","id":"c1","name":"snapshot","args":[]}"#),
            Err(DecodeError::Schema(_))
        ));
        // data must be an object.
        assert!(matches!(
            decode(r#"{"kind":"event","event":{"t":1,"type":"signal","sessionId":"s","data":3}}"#),
            Err(DecodeError::Schema(_))
        ));
    }

    #[test]
    fn limits_are_enforced_at_their_edges() {
        let hello = |session: &str, title: &str, adapters: usize| {
            json!({"kind":"hello","protocolVersion":1,"sessionId":session,"url":"u","title":title,
                   "adapters": vec!["a"; adapters]})
            .to_string()
        };
        assert!(decode(&hello(&"s".repeat(128), &"t".repeat(512), 32)).is_ok());
        assert_eq!(
            decode(&hello(&"s".repeat(129), "t", 0)),
            Err(DecodeError::Limit {
                field: "sessionId",
                max: 128
            })
        );
        assert_eq!(
            decode(&hello("s", &"t".repeat(513), 0)),
            Err(DecodeError::Limit {
                field: "title",
                max: 512
            })
        );
        assert_eq!(
            decode(&hello("s", "t", 33)),
            Err(DecodeError::Limit {
                field: "adapters",
                max: 32
            })
        );
        assert!(matches!(
            decode(&hello("", "t", 0)),
            Err(DecodeError::Schema(_))
        ));
        // Limits count characters, so a non-ASCII title of 512 characters is within.
        assert!(decode(&hello("s", &"é".repeat(512), 0)).is_ok());
    }

    #[test]
    fn another_version_is_named_even_when_its_shape_differs() {
        let v2 = json!({"kind":"hello","protocolVersion":2,"sessionId":"s","url":"u","title":"t","adapters":[]});
        assert_eq!(
            decode(&v2.to_string()),
            Err(DecodeError::Version { page: "2".into() })
        );
        let v3_other_shape = json!({"kind":"hello","protocolVersion":3,"page":{"id":"s"}});
        assert_eq!(
            decode(&v3_other_shape.to_string()),
            Err(DecodeError::Version { page: "3".into() })
        );
        let clues = clues(&v2.to_string());
        assert_eq!(clues.session_id.as_deref(), Some("s"));
    }

    #[test]
    fn commands_and_results_round_trip() {
        let command = Message::Command(Command {
            id: "c1".into(),
            session_id: Some("s1".into()),
            name: "snapshot".into(),
            args: json!({"mode":"interactive"}).as_object().unwrap().clone(),
        });
        assert_eq!(
            command.encode(),
            r#"{"kind":"command","id":"c1","sessionId":"s1","name":"snapshot","args":{"mode":"interactive"}}"#
        );
        assert_eq!(decode(&command.encode()).unwrap(), command);
        let result =
            r#"{"kind":"command_result","id":"c4","ok":false,"error":"unknown command 'nope'"}"#;
        let Message::CommandResult(parsed) = decode(result).unwrap() else {
            panic!("a result")
        };
        assert!(!parsed.ok);
        assert_eq!(parsed.error.as_deref(), Some("unknown command 'nope'"));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,200}") {
            let _ = decode(&text);
        }
    }
}
