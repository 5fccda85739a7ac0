//! Every tool name, once. A name is a [`ToolName`]; its wire spelling comes from here and
//! nowhere else. Family members (reached through their family's `action`) are names too, so a
//! sweep can address each behaviour, and each knows its family and action.

use std::fmt;

macro_rules! tool_names {
    ($($variant:ident = $wire:literal,)*) => {
        /// A tool's name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ToolName { $($variant,)* }

        impl ToolName {
            /// Every name, in catalogue order.
            pub const ALL: &'static [ToolName] = &[$(ToolName::$variant,)*];

            /// The wire spelling.
            pub const fn as_str(self) -> &'static str {
                match self { $(ToolName::$variant => $wire,)* }
            }

            /// The name a wire spelling stands for.
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($wire => Some(ToolName::$variant),)* _ => None }
            }
        }
    };
}

tool_names! {
    Sessions = "reticle_sessions",
    Snapshot = "reticle_snapshot",
    Query = "reticle_query",
    Inspect = "reticle_inspect",
    Navigate = "reticle_navigate",
    Act = "reticle_act",
    ActSequence = "reticle_act_sequence",
    ActAndWait = "reticle_act_and_wait",
    Observe = "reticle_observe",
    WaitFor = "reticle_wait_for",
    Assert = "reticle_assert",
    Network = "reticle_network",
    Console = "reticle_console",
    State = "reticle_state",
    Feedback = "reticle_feedback",
    Session = "reticle_session",
    Tools = "reticle_tools",
    Run = "reticle_run",
    // Members of `reticle_session`.
    Yield = "reticle_yield",
    Resume = "reticle_resume",
    EndSession = "reticle_end_session",
    Messages = "reticle_messages",
    // Advertised only under RETICLE_ADVERTISE_ALL_TOOLS.
    Capabilities = "reticle_capabilities",
    Clock = "reticle_clock",
    FlowSave = "reticle_flow_save",
    FlowReplay = "reticle_flow_replay",
    FlowHeal = "reticle_flow_heal",
    Replay = "reticle_replay",
    Verify = "reticle_verify",
    RunExport = "reticle_run_export",
    Flow = "reticle_flow",
    // Members of `reticle_flow`.
    FlowList = "reticle_flow_list",
    FlowLoad = "reticle_flow_load",
    FlowDelete = "reticle_flow_delete",
    Baseline = "reticle_baseline",
    // Members of `reticle_baseline`.
    BaselineSave = "reticle_baseline_save",
    BaselineList = "reticle_baseline_list",
    BaselineDiff = "reticle_baseline_diff",
    // Members of `reticle_verify`.
    FlowVerify = "reticle_flow_verify",
    Lease = "reticle_lease",
    // Members of `reticle_lease`.
    LeaseAcquire = "reticle_lease_acquire",
    LeaseRelease = "reticle_lease_release",
    // Recording (advertised only under RETICLE_ADVERTISE_ALL_TOOLS).
    Record = "reticle_record",
    // Members of `reticle_record`.
    RecordStart = "reticle_record_start",
    RecordStop = "reticle_record_stop",
    FlowSaveRecorded = "reticle_flow_save_recorded",
    // A page under control (advertised only under RETICLE_ADVERTISE_ALL_TOOLS).
    Viewport = "reticle_viewport",
    Refresh = "reticle_refresh",
    WaitReady = "reticle_wait_ready",
    NetworkMock = "reticle_network_mock",
    // Only when a test asks for them (RETICLE_TEST_CATALOGUE).
    TestSleep = "reticle_test_sleep",
    TestEcho = "reticle_test_echo",
}

/// Where a tool stands in the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Advertised on every surface.
    Default,
    /// Advertised only when every tool is (`RETICLE_ADVERTISE_ALL_TOOLS`); always reachable
    /// through `reticle_run`.
    Extended,
    /// A family member: reached as its family with an `action`.
    Member {
        family: ToolName,
        action: &'static str,
    },
    /// Exists only when a test edits the catalogue.
    Test,
}

/// A family member reached through `family`'s `action`.
const fn member(family: ToolName, action: &'static str) -> Standing {
    Standing::Member { family, action }
}

impl ToolName {
    /// Where this tool stands.
    pub const fn standing(self) -> Standing {
        use ToolName as T;
        match self {
            T::Yield => member(T::Session, "yield"),
            T::Resume => member(T::Session, "resume"),
            T::EndSession => member(T::Session, "end"),
            T::Messages => member(T::Session, "messages"),
            T::FlowList => member(T::Flow, "list"),
            T::FlowLoad => member(T::Flow, "load"),
            T::FlowDelete => member(T::Flow, "delete"),
            T::BaselineSave => member(T::Baseline, "save"),
            T::BaselineList => member(T::Baseline, "list"),
            T::BaselineDiff => member(T::Baseline, "diff"),
            T::FlowVerify => member(T::Verify, "flows"),
            T::LeaseAcquire => member(T::Lease, "acquire"),
            T::LeaseRelease => member(T::Lease, "release"),
            T::RecordStart => member(T::Record, "start"),
            T::RecordStop => member(T::Record, "stop"),
            T::Capabilities
            | T::Clock
            | T::FlowSave
            | T::FlowReplay
            | T::Verify
            | T::RunExport
            | T::Flow
            | T::Baseline
            | T::Lease
            | T::Record
            | T::FlowSaveRecorded
            | T::FlowHeal
            | T::Replay
            | T::Viewport
            | T::Refresh
            | T::WaitReady
            | T::NetworkMock => Standing::Extended,
            T::TestSleep | T::TestEcho => Standing::Test,
            _ => Standing::Default,
        }
    }

    /// The members of a family with the action that reaches each (empty for other tools).
    pub fn members(self) -> Vec<(ToolName, &'static str)> {
        ToolName::ALL
            .iter()
            .filter_map(|m| match m.standing() {
                Standing::Member { family, action } if family == self => Some((*m, action)),
                _ => None,
            })
            .collect()
    }

    /// The two meta tools, which are composed over the catalogue rather than run through it.
    pub const fn is_meta(self) -> bool {
        matches!(self, ToolName::Tools | ToolName::Run)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips_and_members_know_their_family() {
        for name in ToolName::ALL {
            assert_eq!(ToolName::parse(name.as_str()), Some(*name));
            assert!(name.as_str().starts_with("reticle_"));
        }
        let actions: Vec<&str> = ToolName::Session
            .members()
            .iter()
            .map(|(_, a)| *a)
            .collect();
        assert_eq!(actions, ["yield", "resume", "end", "messages"]);
        let flow: Vec<&str> = ToolName::Flow.members().iter().map(|(_, a)| *a).collect();
        assert_eq!(flow, ["list", "load", "delete"]);
        let baseline: Vec<&str> = ToolName::Baseline
            .members()
            .iter()
            .map(|(_, a)| *a)
            .collect();
        assert_eq!(baseline, ["save", "list", "diff"]);
        let verify: Vec<&str> = ToolName::Verify.members().iter().map(|(_, a)| *a).collect();
        assert_eq!(verify, ["flows"]);
        let lease: Vec<&str> = ToolName::Lease.members().iter().map(|(_, a)| *a).collect();
        assert_eq!(lease, ["acquire", "release"]);
        let record: Vec<&str> = ToolName::Record.members().iter().map(|(_, a)| *a).collect();
        assert_eq!(record, ["start", "stop"]);
        assert!(ToolName::parse("reticle_nope").is_none());
    }
}
