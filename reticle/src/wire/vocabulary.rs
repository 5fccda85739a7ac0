//! Protocol 1's vocabulary: the command names a page answers, the event types a page reports and
//! the families they group in (the part of a type before its dot). An event type outside the list is kept as [`EventType::Other`] (stored and counted,
//! never a reason to drop the page); a command name outside the list is the caller's to send.
//! It also names the few result and event fields a daemon reads beyond protocol 1's guarantees
//! (captured bodies, reported element states), so that their absence is read as "not provided".

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $wire:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant,)* }

        impl $name {
            /// Every name, in protocol order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The wire spelling.
            pub const fn as_str(&self) -> &'static str {
                match self { $($name::$variant => $wire,)* }
            }

            fn from_wire(text: &str) -> Option<Self> {
                match text { $($wire => Some($name::$variant),)* _ => None }
            }
        }
    };
}

vocabulary! {
    /// The commands protocol 1 defines (the daemon sends them; the page answers).
    CommandName {
        Snapshot = "snapshot",
        Query = "query",
        Match = "match",
        Inspect = "inspect",
        Act = "act",
        ActSequence = "act_sequence",
        Animations = "animations",
        Clock = "clock",
        StateRead = "state_read",
        StorageRead = "storage_read",
        Capabilities = "capabilities",
        Scroll = "scroll",
        Navigate = "navigate",
        Refresh = "refresh",
        Capture = "capture",
        Narrate = "narrate",
        SessionConfig = "session_config",
        Presenter = "presenter",
        Flows = "flows",
        Impact = "impact",
        NetBodies = "net_bodies",
        Record = "record",
    }
}

// `net_bodies` is Reticle's SDK only: capture response bodies for a while. A page without it
// refuses, and a body it never captured makes a body check unknown.
// `record` is Reticle's SDK only too: `{action:"start"}` records a person's clicks and typing,
// `{action:"stop"}` ends it and sends the steps as one `flow.recorded` event before it answers. A
// published 2.0.0 page answers `unknown command 'record'`.

/// The `net.request` field holding a captured response body (bounded, sensitive values redacted).
pub const NET_BODY: &str = "body";
/// The `net.request` field saying the captured body was cut at the bound.
pub const NET_BODY_TRUNCATED: &str = "bodyTruncated";
/// The element states every protocol 1 page reports in a matched element's `states` (the
/// published 2.0.0 SDK reports exactly these among the ones a predicate may ask for).
pub const PROTOCOL_ELEMENT_STATES: &[&str] = &["checked", "disabled", "expanded"];
/// The `match` result field in which a page lists every state it reports (Reticle's SDK sends it;
/// without it, [`PROTOCOL_ELEMENT_STATES`] is all a daemon may assume).
pub const STATES_REPORTED: &str = "statesReported";
/// The `match` result field by which a page says it matched names as the query's `exact` asked
/// (Reticle's SDK sends `true`; the published 2.0.0 SDK ignores `exact` and matches a name whole).
pub const EXACT_HONOURED: &str = "exactHonoured";

vocabulary! {
    /// The event types protocol 1 names (those of the published 2.0.0 SDK and the later
    /// additions that still speak protocol 1).
    KnownEventType {
        DomAdded = "dom.added",
        DomRemoved = "dom.removed",
        DomAttr = "dom.attr",
        DomText = "dom.text",
        NetRequest = "net.request",
        NetPending = "net.pending",
        NetStream = "net.stream",
        NetDetail = "net.detail",
        RouteChange = "route.change",
        ConsoleLog = "console.log",
        ConsoleInfo = "console.info",
        ConsoleDebug = "console.debug",
        ConsoleWarn = "console.warn",
        ConsoleError = "console.error",
        ErrorUncaught = "error.uncaught",
        VisibleShown = "visible.shown",
        VisibleHidden = "visible.hidden",
        AnimStart = "anim.start",
        AnimEnd = "anim.end",
        ScrollPosition = "scroll.position",
        RevealShown = "reveal.shown",
        Signal = "signal",
        StateChange = "state.change",
        StorageChange = "storage.change",
        PageHealth = "page.health",
        FlowRecorded = "flow.recorded",
        TransportOverflow = "transport.overflow",
        HumanControl = "human.control",
        HumanMark = "human.mark",
        Perf = "perf",
        RenderCommit = "render.commit",
        FocusChange = "focus.change",
        Truncated = "truncated",
        BlindSpot = "blind-spot",
        SdkFailed = "sdk.failed",
        Download = "download",
    }
}

vocabulary! {
    /// The families event types group in: a type `<family>.<what>` belongs to `<family>`.
    EventFamily {
        Dom = "dom",
        Net = "net",
        Route = "route",
        Console = "console",
        Error = "error",
        Visible = "visible",
        Anim = "anim",
        Scroll = "scroll",
        Reveal = "reveal",
        State = "state",
        Storage = "storage",
        Page = "page",
        Flow = "flow",
        Transport = "transport",
        Human = "human",
        Render = "render",
        Focus = "focus",
        Sdk = "sdk",
    }
}

impl KnownEventType {
    /// The console level an event counts at: `console.<level>` at its own level, an uncaught
    /// error at `error`; other types at none.
    pub fn console_level(self) -> Option<&'static str> {
        match self {
            KnownEventType::ErrorUncaught => KnownEventType::ConsoleError.console_level(),
            _ => match split_family(self.as_str()) {
                Some((EventFamily::Console, level)) => Some(level),
                _ => None,
            },
        }
    }
}

/// The family of the event type `text` and what follows its dot, when the family is named.
fn split_family(text: &str) -> Option<(EventFamily, &str)> {
    let (family, member) = text.split_once('.')?;
    Some((EventFamily::from_wire(family)?, member))
}

impl AsRef<str> for CommandName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for CommandName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A command name outside protocol 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a protocol 1 command")]
pub struct UnknownCommand(pub String);

impl FromStr for CommandName {
    type Err = UnknownCommand;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::from_wire(text).ok_or_else(|| UnknownCommand(text.to_string()))
    }
}

/// An event's type: one of protocol 1's, or a name this daemon does not know (kept verbatim).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EventType {
    Known(KnownEventType),
    Other(String),
}

impl EventType {
    /// Reads a wire name; never fails.
    pub fn parse(text: &str) -> Self {
        KnownEventType::from_wire(text).map_or_else(|| Self::Other(text.to_string()), Self::Known)
    }

    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            EventType::Known(known) => known.as_str(),
            EventType::Other(name) => name,
        }
    }

    /// Whether the daemon knows this type.
    pub fn is_known(&self) -> bool {
        matches!(self, EventType::Known(_))
    }

    /// The protocol 1 type, when the daemon knows it.
    pub fn known(&self) -> Option<KnownEventType> {
        match self {
            EventType::Known(known) => Some(*known),
            EventType::Other(_) => None,
        }
    }

    /// Whether this type is `<family>.<something>`, known or not.
    pub fn in_family(&self, family: EventFamily) -> bool {
        self.family() == Some(family)
    }

    /// The family this type is in, known type or not (`dom.future` is in [`EventFamily::Dom`]).
    pub fn family(&self) -> Option<EventFamily> {
        split_family(self.as_str()).map(|(family, _)| family)
    }

    /// Evidence worth keeping under a flood: network, errors and warnings, routes, signals,
    /// storage, and the SDK's own loss markers. These get a reserve above the rate cap.
    pub fn is_high_value(&self) -> bool {
        use KnownEventType as K;
        matches!(
            self,
            EventType::Known(
                K::NetRequest
                    | K::NetPending
                    | K::NetStream
                    | K::NetDetail
                    | K::ConsoleError
                    | K::ConsoleWarn
                    | K::ErrorUncaught
                    | K::RouteChange
                    | K::Signal
                    | K::StorageChange
                    | K::FlowRecorded
                    | K::TransportOverflow
                    | K::Truncated
                    | K::BlindSpot
            )
        )
    }
}

impl PartialEq<KnownEventType> for EventType {
    fn eq(&self, known: &KnownEventType) -> bool {
        self.known() == Some(*known)
    }
}

impl From<KnownEventType> for EventType {
    fn from(known: KnownEventType) -> Self {
        EventType::Known(known)
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EventType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Ok(EventType::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips_and_unknown_types_are_kept() {
        for name in CommandName::ALL {
            assert_eq!(name.as_str().parse::<CommandName>().unwrap(), *name);
        }
        for known in KnownEventType::ALL {
            assert_eq!(EventType::parse(known.as_str()), EventType::Known(*known));
        }
        let other = EventType::parse("future.thing");
        assert_eq!(other, EventType::Other("future.thing".into()));
        assert!(!other.is_known());
        assert_eq!(
            serde_json::to_string(&other).unwrap(),
            "\"future.thing\"",
            "an unknown type is written back verbatim"
        );
        assert!("nope".parse::<CommandName>().is_err());
    }

    #[test]
    fn every_dotted_known_type_belongs_to_a_named_family() {
        for known in KnownEventType::ALL {
            let dotted = known.as_str().contains('.');
            assert_eq!(
                EventType::Known(*known).family().is_some(),
                dotted,
                "{known:?}"
            );
        }
        assert!(EventType::parse("dom.future").in_family(EventFamily::Dom));
        assert!(!EventType::parse("domino").in_family(EventFamily::Dom));
    }

    #[test]
    fn console_levels_follow_the_console_family_and_uncaught_errors_count_as_errors() {
        assert_eq!(KnownEventType::ConsoleWarn.console_level(), Some("warn"));
        assert_eq!(KnownEventType::ErrorUncaught.console_level(), Some("error"));
        assert_eq!(KnownEventType::Signal.console_level(), None);
    }
}
