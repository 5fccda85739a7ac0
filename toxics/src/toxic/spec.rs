//! The wire shape of a toxic, as Toxiproxy spells it:
//! `{"name", "type", "stream", "toxicity", "attributes"}`.
//!
//! It owns [`ToxicSpec`] (what a client asks for, with Toxiproxy's defaults), [`ToxicPatch`]
//! (what an update may change) and [`InstalledToxic`] (a validated toxic in a proxy's chain).
//! It must not touch links; installing into a proxy is [`crate::proxy`]'s job.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::{Kind, Toxic, lookup};
use crate::direction::Direction;
use crate::error::ApiError;

/// A toxic as a client describes it.
///
/// Build one from a typed toxic, `ToxicSpec::new(Latency { latency: 100, jitter: 10 })`, or
/// from a wire name and JSON attributes with [`ToxicSpec::of_type`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToxicSpec {
    /// Unique per proxy. Empty means the default, `<type>_<stream>`.
    #[serde(default)]
    pub name: String,
    /// The registered wire name (`latency`, `reset_peer`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Which direction it disturbs. Defaults to downstream.
    #[serde(default)]
    pub stream: Direction,
    /// The chance, in `[0, 1]`, that a connection gets this toxic. Defaults to 1.
    #[serde(default = "full_toxicity")]
    pub toxicity: f32,
    /// The toxic's own settings, in Toxiproxy's units.
    #[serde(default)]
    pub attributes: Value,
}

fn full_toxicity() -> f32 {
    1.0
}

impl ToxicSpec {
    /// A downstream spec for a typed toxic, toxicity 1, default name.
    pub fn new<T: Kind>(toxic: T) -> Self {
        Self {
            name: String::new(),
            kind: T::NAME.to_owned(),
            stream: Direction::Downstream,
            toxicity: 1.0,
            attributes: serde_json::to_value(&toxic).expect("toxic attributes serialize"),
        }
    }

    /// A downstream spec for a wire name and raw attributes, toxicity 1, default name.
    pub fn of_type(kind: impl Into<String>, attributes: Value) -> Self {
        Self {
            name: String::new(),
            kind: kind.into(),
            stream: Direction::Downstream,
            toxicity: 1.0,
            attributes,
        }
    }

    /// The same spec on another direction.
    pub fn stream(mut self, stream: Direction) -> Self {
        self.stream = stream;
        self
    }

    /// The same spec on the client-to-server direction.
    pub fn upstream(self) -> Self {
        self.stream(Direction::Upstream)
    }

    /// The same spec with another toxicity.
    pub fn toxicity(mut self, toxicity: f32) -> Self {
        self.toxicity = toxicity;
        self
    }

    /// The same spec with an explicit name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The name it will be installed under.
    pub fn resolved_name(&self) -> String {
        if self.name.is_empty() {
            format!("{}_{}", self.kind, self.stream)
        } else {
            self.name.clone()
        }
    }

    /// Parse a create request the way Toxiproxy does: bad JSON and bad attributes are 400
    /// `bad request body`, a bad stream is 400 `stream was invalid`, an unknown type is 400
    /// `invalid toxic type`. Toxicity outside `[0, 1]` is also refused (Toxiproxy takes it).
    pub fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(default)]
            name: String,
            #[serde(rename = "type", default)]
            kind: String,
            stream: Option<String>,
            toxicity: Option<f32>,
            #[serde(default)]
            attributes: Value,
        }
        let raw: Raw = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request_body().with_detail(e))?;
        let stream = match raw.stream {
            None => Direction::Downstream,
            Some(s) => s.parse().map_err(|_| ApiError::invalid_stream())?,
        };
        Ok(Self {
            name: raw.name,
            kind: raw.kind,
            stream,
            toxicity: raw.toxicity.unwrap_or(1.0),
            attributes: raw.attributes,
        })
    }

    /// Validate and build the toxic.
    pub fn install(self) -> Result<InstalledToxic, ApiError> {
        let registration = lookup(&self.kind).ok_or_else(ApiError::invalid_toxic_type)?;
        check_toxicity(self.toxicity)?;
        let (toxic, attributes) = registration.build(self.attributes.clone())?;
        Ok(InstalledToxic {
            name: self.resolved_name(),
            kind: registration.name,
            stream: self.stream,
            toxicity: self.toxicity,
            attributes,
            toxic,
        })
    }
}

fn check_toxicity(t: f32) -> Result<(), ApiError> {
    if (0.0..=1.0).contains(&t) {
        Ok(())
    } else {
        Err(ApiError::invalid_toxicity())
    }
}

/// What an update may change: attributes (merged field by field over the current ones) and
/// toxicity. Name, type and stream are fixed once installed, as in Toxiproxy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToxicPatch {
    /// Attributes to replace; fields left out keep their values.
    #[serde(default)]
    pub attributes: Value,
    /// New toxicity, if given.
    #[serde(default)]
    pub toxicity: Option<f32>,
}

impl ToxicPatch {
    /// Parse an update request body.
    pub fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        serde_json::from_slice(body).map_err(|e| ApiError::bad_request_body().with_detail(e))
    }
}

/// A validated toxic in a proxy's chain: its wire identity and its behaviour.
#[derive(Clone)]
pub struct InstalledToxic {
    /// Unique per proxy.
    pub name: String,
    /// The registered wire name.
    pub kind: &'static str,
    /// The direction it disturbs.
    pub stream: Direction,
    /// The chance a connection gets it.
    pub toxicity: f32,
    /// The normalised attributes (every field present), as reported back on the wire.
    pub attributes: Value,
    /// The behaviour, shared by every link that carries it.
    pub(crate) toxic: Arc<dyn Toxic>,
}

impl InstalledToxic {
    /// The wire form.
    pub fn spec(&self) -> ToxicSpec {
        ToxicSpec {
            name: self.name.clone(),
            kind: self.kind.to_owned(),
            stream: self.stream,
            toxicity: self.toxicity,
            attributes: self.attributes.clone(),
        }
    }

    /// This toxic with `patch` applied.
    pub fn patched(&self, patch: ToxicPatch) -> Result<InstalledToxic, ApiError> {
        let mut attributes = self.attributes.clone();
        match (attributes.as_object_mut(), patch.attributes) {
            (_, Value::Null) => {}
            (Some(current), Value::Object(changes)) => current.extend(changes),
            (_, other) => {
                return Err(ApiError::bad_request_body()
                    .with_detail(format!("attributes must be an object, not {other}")));
            }
        }
        let toxicity = patch.toxicity.unwrap_or(self.toxicity);
        check_toxicity(toxicity)?;
        let registration = lookup(self.kind).ok_or_else(ApiError::invalid_toxic_type)?;
        let (toxic, attributes) = registration.build(attributes)?;
        Ok(InstalledToxic {
            name: self.name.clone(),
            kind: self.kind,
            stream: self.stream,
            toxicity,
            attributes,
            toxic,
        })
    }

    /// How many chunks the channel into this toxic's stage holds (at least one).
    pub(crate) fn buffer_size(&self) -> usize {
        self.toxic
            .buffered()
            .map(|b| b.buffer_size())
            .unwrap_or(1)
            .max(1)
    }
}

impl fmt::Debug for InstalledToxic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InstalledToxic")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("stream", &self.stream)
            .field("toxicity", &self.toxicity)
            .field("attributes", &self.attributes)
            .finish()
    }
}

impl Serialize for InstalledToxic {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.spec().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toxic::Latency;
    use serde_json::json;

    #[test]
    fn defaults_follow_toxiproxy() {
        let spec = ToxicSpec::from_json(br#"{"type":"latency"}"#).unwrap();
        assert_eq!(spec.stream, Direction::Downstream);
        assert_eq!(spec.toxicity, 1.0);
        assert_eq!(spec.resolved_name(), "latency_downstream");
        let installed = spec.install().unwrap();
        assert_eq!(
            serde_json::to_value(&installed).unwrap(),
            json!({"name":"latency_downstream","type":"latency","stream":"downstream",
                   "toxicity":1.0,"attributes":{"latency":0,"jitter":0}})
        );
    }

    #[test]
    fn create_errors_carry_toxiproxy_statuses() {
        let bad_stream = ToxicSpec::from_json(br#"{"type":"latency","stream":"x"}"#);
        assert_eq!(bad_stream.unwrap_err(), ApiError::invalid_stream());
        let bad_type = ToxicSpec::from_json(br#"{"type":"nope"}"#)
            .unwrap()
            .install();
        assert_eq!(bad_type.unwrap_err(), ApiError::invalid_toxic_type());
        assert_eq!(ToxicSpec::from_json(b"{").unwrap_err().status, 400);
        let too_toxic = ToxicSpec::new(Latency::default()).toxicity(1.5).install();
        assert_eq!(too_toxic.unwrap_err().status, 400);
    }

    #[test]
    fn a_patch_merges_attributes_and_keeps_identity() {
        let t = ToxicSpec::new(Latency {
            latency: 100,
            jitter: 10,
        })
        .upstream()
        .install()
        .unwrap();
        let p = t
            .patched(ToxicPatch {
                attributes: json!({"latency": 200}),
                toxicity: Some(0.5),
            })
            .unwrap();
        assert_eq!(p.attributes, json!({"latency": 200, "jitter": 10}));
        assert_eq!(p.toxicity, 0.5);
        assert_eq!(p.name, "latency_upstream");
    }
}
