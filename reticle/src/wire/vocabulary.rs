//! Protocol 1's vocabulary: the command names a page answers and the event types a page
//! reports. An event type outside the list is kept as [`EventType::Other`] (stored and counted,
//! never a reason to drop the page); a command name outside the list is the caller's to send.

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
            pub fn as_str(&self) -> &'static str {
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
    }
}

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
}
