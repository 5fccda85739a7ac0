//! Protocol 1's argument words: the action an `act` command performs and the mode of a
//! `snapshot`, each spelled once (its serde name is its wire word). The SDK's `protocol.js` spells
//! them too, and `reticle/tests/sdk_protocol_drift.rs` keeps the two alike. Words only: this
//! module must not check or run a command.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An enum of wire words: each variant's serde name, [`ALL`](Self) and `as_str` come from one
/// literal. No doc comment is given to the type, so a tool schema that takes it stays as lean as
/// before (schemars would copy the comment into every `inputSchema`).
macro_rules! argument_words {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $wire:literal,)* }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        $(#[$meta])*
        pub enum $name {
            $(#[serde(rename = $wire)] $variant,)*
        }

        impl $name {
            /// Every word, in protocol order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The wire word.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire,)* }
            }
        }
    };
}

// What an `act` command does to an element (the enum says it to an agent).
argument_words! {
    #[schemars(rename = "Action")]
    ActAction {
        Click = "click",
        Dblclick = "dblclick",
        Hover = "hover",
        Focus = "focus",
        Blur = "blur",
        Fill = "fill",
        Type = "type",
        Clear = "clear",
        Select = "select",
        Check = "check",
        Uncheck = "uncheck",
        Submit = "submit",
        Press = "press",
        ScrollIntoView = "scrollIntoView",
    }
}

// How long an `act` command lets the page settle before it answers: until the DOM and the
// network are quiet (`quiet`, the default), or the action's microtasks and one task (`task`),
// when the daemon observes what follows itself. A published 2.0.0 page ignores the field and
// waits one animation frame.
argument_words! {
    ActSettle {
        Quiet = "quiet",
        Task = "task",
    }
}

// What a `snapshot` outlines: the page, its controls only, or its status line.
argument_words! {
    SnapshotMode {
        Full = "full",
        Interactive = "interactive",
        Status = "status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_word_is_its_serde_name_and_reads_back() {
        for action in ActAction::ALL {
            let wire = serde_json::to_value(action).unwrap();
            assert_eq!(wire, action.as_str());
            assert_eq!(serde_json::from_value::<ActAction>(wire).unwrap(), *action);
        }
        for settle in ActSettle::ALL {
            let wire = serde_json::to_value(settle).unwrap();
            assert_eq!(wire, settle.as_str());
        }
        for mode in SnapshotMode::ALL {
            let wire = serde_json::to_value(mode).unwrap();
            assert_eq!(wire, mode.as_str());
            assert_eq!(serde_json::from_value::<SnapshotMode>(wire).unwrap(), *mode);
        }
        assert!(serde_json::from_str::<ActAction>("\"scroll_into_view\"").is_err());
    }
}
