//! The registry: every tool this daemon has, one line each, in one table ([`REGISTRY`]), and the
//! catalogues built over it. Adding a tool is its file in its family folder, its name in
//! `surface::names`, and one line here. This module lists; it must not run a call (the
//! chokepoint does) nor describe a tool (each tool's file does).

use super::surface::catalogue::{self, Catalogue, Surface};
use super::surface::registration::Registration;
use super::{driving, flows, leases, meta, page, sessions, testing};
use crate::config::env;

/// Every tool and family member, by family.
pub const REGISTRY: &[Registration] = &[
    Registration::of::<sessions::sessions::Sessions>(),
    Registration::of::<sessions::session::Session>(),
    sessions::session::YIELD,
    sessions::session::RESUME,
    sessions::session::END_SESSION,
    sessions::session::MESSAGES,
    Registration::of::<page::snapshot::Snapshot>(),
    Registration::of::<page::query::Query>(),
    Registration::of::<page::inspect::Inspect>(),
    Registration::of::<page::navigate::Navigate>(),
    Registration::of::<page::act::Act>(),
    Registration::of::<page::act_sequence::ActSequence>(),
    Registration::of::<page::act_and_wait::ActAndWait>(),
    Registration::of::<page::observe::Observe>(),
    Registration::of::<page::wait_for::WaitFor>(),
    Registration::of::<page::assert::Assert>(),
    Registration::of::<page::network::Network>(),
    Registration::of::<page::console::Console>(),
    Registration::of::<page::state::State>(),
    Registration::of::<page::capabilities::Capabilities>(),
    Registration::of::<page::clock::Clock>(),
    Registration::of::<page::baseline::Baseline>(),
    page::baseline::BASELINE_SAVE,
    page::baseline::BASELINE_LIST,
    page::baseline::BASELINE_DIFF,
    Registration::of::<meta::feedback::Feedback>(),
    Registration::of::<meta::tools::Tools>(),
    Registration::of::<meta::run::Run>(),
    Registration::of::<flows::flow_save::FlowSave>(),
    Registration::of::<flows::flow::Flow>(),
    flows::flow::FLOW_LIST,
    flows::flow::FLOW_LOAD,
    flows::flow::FLOW_DELETE,
    Registration::of::<flows::flow_replay::FlowReplay>(),
    Registration::of::<flows::flow_heal::FlowHeal>(),
    Registration::of::<flows::replay::Replay>(),
    Registration::of::<flows::verify::Verify>(),
    flows::verify::FLOW_VERIFY,
    Registration::of::<flows::run_export::RunExport>(),
    Registration::of::<flows::record::Record>(),
    flows::record::RECORD_START,
    flows::record::RECORD_STOP,
    Registration::of::<flows::flow_save_recorded::FlowSaveRecorded>(),
    Registration::of::<leases::lease::Lease>(),
    leases::lease::LEASE_ACQUIRE,
    leases::lease::LEASE_RELEASE,
    Registration::of::<driving::viewport::Viewport>(),
    Registration::of::<driving::refresh::Refresh>(),
    Registration::of::<driving::network_mock::NetworkMock>(),
    Registration::of::<sessions::wait_ready::WaitReady>(),
    Registration::of::<testing::test_sleep::TestSleep>(),
    Registration::of::<testing::test_echo::TestEcho>(),
];

/// The catalogues of this daemon are built over [`REGISTRY`]; these constructors live here so
/// the catalogue itself (a leaf) never names the families.
impl Catalogue {
    /// The product catalogue on the default surface.
    pub fn standard() -> Self {
        Self::for_surface(Surface::Default)
    }

    /// The product catalogue on `surface`.
    pub fn for_surface(surface: Surface) -> Self {
        Catalogue::over(REGISTRY, surface, catalogue::advertised_on(surface), &[])
    }

    /// The catalogue on `surface` with a test's edits applied: a comma-separated list of
    /// `+name` (add a test tool) and `-name` (remove a tool). Any name it cannot apply is an
    /// error.
    pub fn with_edits(edits: &str, surface: Surface) -> Result<Self, String> {
        Catalogue::edited(REGISTRY, edits, surface)
    }

    /// The catalogue for this daemon life: the surface `RETICLE_ADVERTISE_ALL_TOOLS` asks for,
    /// edited by `RETICLE_TEST_CATALOGUE`.
    pub fn from_env() -> Result<Self, String> {
        let surface = Surface::from_env();
        match std::env::var(env::TEST_CATALOGUE) {
            Ok(edits) if !edits.trim().is_empty() => Self::with_edits(&edits, surface),
            _ => Ok(Self::for_surface(surface)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::tools::surface::names::{Standing, ToolName};

    #[test]
    fn every_name_is_registered_once_and_only_members_have_no_handler() {
        let mut seen = HashSet::new();
        for registration in REGISTRY {
            assert!(
                seen.insert(registration.name),
                "{} twice",
                registration.name
            );
            let member = matches!(registration.name.standing(), Standing::Member { .. });
            let refusal = registration.prepare(&serde_json::Map::new()).err();
            assert_eq!(
                refusal.as_deref() == Some("a family member is reached through its family"),
                member,
                "{}",
                registration.name
            );
            assert!(!registration.description.is_empty());
        }
        for name in ToolName::ALL {
            assert!(seen.contains(name), "{name} has no registration");
        }
    }

    #[test]
    fn a_tool_that_drives_a_session_is_never_hinted_read_only() {
        use crate::tools::surface::registration::Effect;
        let mut reads = 0;
        for registration in REGISTRY {
            let member = matches!(registration.name.standing(), Standing::Member { .. });
            let Some((title, effect)) = registration.shown else {
                assert!(member, "{} has no title or effect", registration.name);
                continue;
            };
            assert!(!title.is_empty() && title.len() <= 32, "{title}");
            let read_only = effect.hints().0;
            assert!(
                !(registration.drives_session && read_only),
                "{} drives a session but is hinted read-only",
                registration.name
            );
            reads += usize::from(effect == Effect::Reads);
        }
        // Control: the rule has something to hold; reads exist and are hinted read-only.
        assert!(reads > 5 && Effect::Reads.hints().0 && !Effect::Changes.hints().0);
    }
}
