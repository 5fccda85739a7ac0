//! JSON-RPC 2.0 framing, shared by the daemon's MCP endpoint, the `reticle mcp` proxy and the
//! harness's clients: how one message is classified, the error codes, the error objects, and the
//! typed `data` of a [`TRANSPORT_LOST`] answer. It parses and builds values (and answer lines
//! around an already-encoded result); it must not route messages or perform I/O.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The text was not JSON.
pub const PARSE_ERROR: i32 = -32700;
/// The JSON was not a valid request object (or not one this server accepts, such as a batch).
pub const INVALID_REQUEST: i32 = -32600;
/// No such method.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// The method exists but its params are wrong.
pub const INVALID_PARAMS: i32 = -32602;
/// Something broke inside the server while handling the call.
pub const INTERNAL_ERROR: i32 = -32603;
/// The link to the daemon was lost or never established: nothing failed inside the call itself.
/// Only the proxy produces this code; the message says whether the call ran and what to do.
pub const TRANSPORT_LOST: i32 = -32001;

/// The `data` of a [`TRANSPORT_LOST`] answer: built by the proxy, read by every client that
/// classifies answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportLostData {
    pub population: LostPopulation,
    pub ran: Ran,
    /// The drop reason or obstacle, in the proxy's words.
    pub reason: String,
    pub port: u16,
}

impl TransportLostData {
    /// Reads the `data` of an error answer; `None` when it is not a transport-lost shape.
    pub fn read(data: &Value) -> Option<Self> {
        serde_json::from_value(data.clone()).ok()
    }
}

/// Which of the unanswered populations a [`TRANSPORT_LOST`] answer belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LostPopulation {
    /// Sent, then the stream dropped before the answer: it may have run.
    InFlightLost,
    /// Never sent: no daemon session could be had in time. It did not run.
    NeverSent,
    /// Its POST failed while the stream stayed up.
    PostFailed,
    /// Still owed when stdin closed and the drain bound ran out.
    OwedAtExit,
}

impl LostPopulation {
    /// Every population, in the order a call can meet them.
    pub const ALL: [LostPopulation; 4] = [
        LostPopulation::InFlightLost,
        LostPopulation::NeverSent,
        LostPopulation::PostFailed,
        LostPopulation::OwedAtExit,
    ];

    /// The wire word (its `serde` spelling), for logs and for judges reading an answer.
    pub const fn as_str(self) -> &'static str {
        match self {
            LostPopulation::InFlightLost => "in_flight_lost",
            LostPopulation::NeverSent => "never_sent",
            LostPopulation::PostFailed => "post_failed",
            LostPopulation::OwedAtExit => "owed_at_exit",
        }
    }
}

/// Whether a call answered [`TRANSPORT_LOST`] ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ran {
    /// It certainly did not run.
    No,
    /// It may or may not have run.
    Unknown,
}

impl Ran {
    /// The wire word (its `serde` spelling).
    pub const fn as_str(self) -> &'static str {
        match self {
            Ran::No => "no",
            Ran::Unknown => "unknown",
        }
    }
}

/// What kind of message a valid JSON-RPC object is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Has a method and an id: it must be answered exactly once.
    Request { id: Value, method: String },
    /// Has a method and no id: it is never answered.
    Notification { method: String },
    /// Has an id and a `result` or an `error`: it answers a request the other side sent.
    Response { id: Value },
}

/// A valid JSON-RPC 2.0 message: its kind and the whole object (so it can be re-sent, possibly
/// under another id).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub kind: Kind,
    pub object: Map<String, Value>,
}

impl Message {
    /// The id of a request or a response.
    pub fn id(&self) -> Option<&Value> {
        match &self.kind {
            Kind::Request { id, .. } | Kind::Response { id } => Some(id),
            Kind::Notification { .. } => None,
        }
    }

    fn set_id(&mut self, new: Value) {
        if let Kind::Request { id, .. } | Kind::Response { id } = &mut self.kind {
            *id = new.clone();
        }
        self.object.insert("id".into(), new);
    }

    /// The `params` member, if present.
    pub fn params(&self) -> Option<&Value> {
        self.object.get("params")
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match &self.kind {
            Kind::Request { method, .. } | Kind::Notification { method } => Some(method),
            Kind::Response { .. } => None,
        }
    }

    /// The object as one line of JSON.
    pub fn to_line(&self) -> String {
        Value::Object(self.object.clone()).to_string()
    }
}

/// A message that cannot be processed, with the error it must be answered with. `id` is the
/// request's id when it could be read, else `null` (as JSON-RPC requires).
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    pub code: i32,
    pub id: Value,
    pub reason: String,
}

impl Invalid {
    /// The error response for this message.
    pub fn response(&self) -> Value {
        error_response(&self.id, self.code, &self.reason, None)
    }
}

/// Classifies one message. Batches are refused: MCP removed them. A number id keeps the text
/// it was sent as (see [`as_sent`]).
pub fn parse(text: &str) -> Result<Message, Invalid> {
    let value: Value = serde_json::from_str(text).map_err(|err| Invalid {
        code: PARSE_ERROR,
        id: Value::Null,
        reason: format!("parse error: the message is not JSON ({err})"),
    })?;
    match classify(value) {
        Ok(mut message) => {
            if let Some(exact) = exact_number_id(text, message.id()) {
                message.set_id(exact);
            }
            Ok(message)
        }
        Err(mut invalid) => {
            if let Some(exact) = exact_number_id(text, Some(&invalid.id)) {
                invalid.id = exact;
            }
            Err(invalid)
        }
    }
}

/// Marks an id that stands in for a number id whose text serde would write back differently
/// (`1e3` as `1000.0`, `-0` as `-0.0`, a huge integer as a float): the mark and the text as
/// sent. Inside, such an id is this string (so it keys and logs as itself); [`as_sent`] writes
/// it back as the number it was.
const SENT_AS: &str = "\u{0}sent-as:";

/// The stand-in for `id`, when it is a number whose text in `text` re-encodes differently.
fn exact_number_id(text: &str, id: Option<&Value>) -> Option<Value> {
    #[derive(Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let written = match id? {
        Value::Number(number) => number.to_string(),
        _ => return None,
    };
    let sent = serde_json::from_str::<IdOnly>(text).ok()?.id?.get();
    (sent != written).then(|| Value::String(format!("{SENT_AS}{sent}")))
}

/// An answer line with its id written as the client sent it: an answer's id is its second
/// member (every answer here is built `{"jsonrpc":"2.0","id":..}`), so only that place is read.
pub fn as_sent(line: String) -> String {
    const HEAD: &str = r#"{"jsonrpc":"2.0","id":""#;
    const MARK: &str = r"\u0000sent-as:";
    let Some(rest) = line.strip_prefix(HEAD).and_then(|r| r.strip_prefix(MARK)) else {
        return line;
    };
    let Some(end) = rest.find('"') else {
        return line;
    };
    let number = &rest[..end];
    if number.is_empty()
        || !number
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return line;
    }
    format!("{}{number}{}", &HEAD[..HEAD.len() - 1], &rest[end + 1..])
}

/// Classifies a parsed JSON value.
pub fn classify(value: Value) -> Result<Message, Invalid> {
    let invalid = |id: Value, reason: &str| Invalid {
        code: INVALID_REQUEST,
        id,
        reason: format!("invalid request: {reason}"),
    };
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(invalid(
                Value::Null,
                "batches are not supported; send one JSON-RPC object per message",
            ));
        }
        _ => {
            return Err(invalid(
                Value::Null,
                "a JSON-RPC message must be a JSON object",
            ));
        }
    };
    let id = object.get("id").cloned();
    let readable_id = match &id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(readable_id, "\"jsonrpc\" must be \"2.0\""));
    }
    if let Some(id) = &id
        && !matches!(id, Value::String(_) | Value::Number(_))
    {
        return Err(invalid(
            Value::Null,
            "\"id\" must be a string or a number (MCP forbids null ids)",
        ));
    }
    match object.get("method") {
        Some(Value::String(method)) => {
            if let Some(params) = object.get("params")
                && !matches!(params, Value::Object(_) | Value::Array(_))
            {
                return Err(invalid(
                    readable_id,
                    "\"params\" must be an object or an array",
                ));
            }
            let method = method.clone();
            let kind = match id {
                Some(id) => Kind::Request { id, method },
                None => Kind::Notification { method },
            };
            Ok(Message { kind, object })
        }
        Some(_) => Err(invalid(readable_id, "\"method\" must be a string")),
        None => {
            let has_result = object.contains_key("result");
            let has_error = object.contains_key("error");
            match id {
                Some(id) if has_result != has_error => Ok(Message {
                    kind: Kind::Response { id },
                    object,
                }),
                Some(_) => Err(invalid(
                    readable_id,
                    "a response carries exactly one of \"result\" and \"error\"",
                )),
                None => Err(invalid(
                    Value::Null,
                    "the object has no \"method\" (a request or notification) and no \"id\" (a response)",
                )),
            }
        }
    }
}

/// `{"jsonrpc":"2.0","id":<id>,"error":{"code":..,"message":..[,"data":..]}}`.
pub fn error_response(id: &Value, code: i32, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<result>}`.
pub fn result_response(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<result>}` as text, around a result already encoded
/// (`result` must be one JSON value): the answer is written without decoding it again.
pub fn result_line(id: &Value, result: &str) -> String {
    let id = id.to_string();
    let mut line = String::with_capacity(result.len() + id.len() + 32);
    line.push_str(r#"{"jsonrpc":"2.0","id":"#);
    line.push_str(&id);
    line.push_str(r#","result":"#);
    line.push_str(result);
    line.push('}');
    line
}

/// `{"jsonrpc":"2.0","method":<method>}` (a notification without params).
pub fn notification(method: &str) -> Value {
    json!({ "jsonrpc": "2.0", "method": method })
}

/// A stable text key for an id, so `1` and `"1"` stay distinct.
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_line_is_the_answer_a_value_would_make() {
        for id in [json!(7), json!("c-1"), json!("q\"uote")] {
            let result = json!({"tools": [{"name": "a"}], "n": 1});
            let line = result_line(&id, &result.to_string());
            let parsed: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(parsed, result_response(&id, result));
        }
    }

    #[test]
    fn transport_lost_data_keeps_its_wire_words_and_order() {
        let data = TransportLostData {
            population: LostPopulation::InFlightLost,
            ran: Ran::Unknown,
            reason: "sse_ended".into(),
            port: 4400,
        };
        let line = serde_json::to_string(&data).unwrap();
        assert_eq!(
            line,
            r#"{"population":"in_flight_lost","ran":"unknown","reason":"sse_ended","port":4400}"#
        );
        assert_eq!(
            TransportLostData::read(&serde_json::from_str(&line).unwrap()),
            Some(data)
        );
        for (population, word) in [
            (LostPopulation::NeverSent, "never_sent"),
            (LostPopulation::PostFailed, "post_failed"),
            (LostPopulation::OwedAtExit, "owed_at_exit"),
        ] {
            assert_eq!(serde_json::to_value(population).unwrap(), word);
        }
        assert_eq!(serde_json::to_value(Ran::No).unwrap(), "no");
        // The words judges and logs use are the serde words.
        for population in LostPopulation::ALL {
            assert_eq!(
                serde_json::to_value(population).unwrap(),
                population.as_str()
            );
        }
        for ran in [Ran::No, Ran::Unknown] {
            assert_eq!(serde_json::to_value(ran).unwrap(), ran.as_str());
        }
    }

    fn code(text: &str) -> i32 {
        parse(text).unwrap_err().code
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        let request = parse(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#).unwrap();
        assert_eq!(
            request.kind,
            Kind::Request {
                id: json!(7),
                method: "tools/list".into()
            }
        );
        let note = parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert_eq!(
            note.kind,
            Kind::Notification {
                method: "notifications/initialized".into()
            }
        );
        let response = parse(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert_eq!(response.kind, Kind::Response { id: json!("a") });
    }

    #[test]
    fn garbage_gets_the_json_rpc_codes() {
        assert_eq!(code("not json"), PARSE_ERROR);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"meth"#), PARSE_ERROR);
        assert_eq!(code("[]"), INVALID_REQUEST);
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            INVALID_REQUEST
        );
        assert_eq!(code("42"), INVALID_REQUEST);
        assert_eq!(code(r#"{"id":1,"method":"ping"}"#), INVALID_REQUEST);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":5}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#),
            INVALID_REQUEST
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#), INVALID_REQUEST);
        assert_eq!(code(r#"{"jsonrpc":"2.0"}"#), INVALID_REQUEST);
    }

    #[test]
    fn an_invalid_request_keeps_its_id_when_readable() {
        let invalid = parse(r#"{"jsonrpc":"1.0","id":"abc","method":"ping"}"#).unwrap_err();
        assert_eq!(invalid.id, json!("abc"));
        let answer = invalid.response();
        assert_eq!(answer["id"], "abc");
        assert_eq!(answer["error"]["code"], INVALID_REQUEST);
        let unreadable = parse("nope").unwrap_err();
        assert_eq!(unreadable.response()["id"], Value::Null);
    }

    #[test]
    fn a_number_id_is_answered_with_the_text_it_was_sent_as() {
        for sent in [
            "1e3",
            "-0",
            "123456789012345678901234567890",
            "1.50",
            "7E+2",
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{sent},"method":"ping"}}"#);
            let message = parse(&text).unwrap();
            let id = message.id().unwrap().clone();
            let lines = [
                result_line(&id, "{}"),
                error_response(&id, INVALID_PARAMS, "no", None).to_string(),
                result_response(&id, json!({})).to_string(),
            ];
            for line in lines {
                let line = as_sent(line);
                let at = line.find(r#""id":"#).unwrap() + 5;
                assert_eq!(&line[at..at + sent.len()], sent, "{line}");
                assert!(serde_json::from_str::<Value>(&line).is_ok(), "{line}");
            }
            // Two ids serde reads as one number stay two requests.
            assert_ne!(id_key(&id), id_key(&json!(1000.0)));
        }
        // Controls: ids that re-encode as sent are left as they are, and the mark counts only
        // where an answer's id stands (a result may hold the same text anywhere else).
        let plain = parse(r#"{"jsonrpc":"2.0","id":12,"method":"ping"}"#).unwrap();
        assert_eq!(plain.id(), Some(&json!(12)));
        let inside = r#"{"jsonrpc":"2.0","id":3,"result":{"t":"\u0000sent-as:1e3"}}"#;
        assert_eq!(as_sent(inside.to_string()), inside);
        // A request refused for its shape keeps its id as sent too.
        let refused = parse(r#"{"jsonrpc":"1.0","id":1e3,"method":"ping"}"#).unwrap_err();
        assert!(as_sent(refused.response().to_string()).contains(r#""id":1e3,"#));
    }

    #[test]
    fn id_keys_keep_numbers_and_strings_apart() {
        assert_ne!(id_key(&json!(1)), id_key(&json!("1")));
    }
}
