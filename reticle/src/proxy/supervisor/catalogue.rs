//! The daemon's tool catalogue as the supervisor remembers it across sessions: the summary last
//! connected (to tell the agent when a new daemon's differs) and the last `tools/list` result as
//! it arrived, with its catalogue, to answer a `tools/list` while the open session announced the
//! same catalogue (a `list_changed` forgets it), or while no daemon is reachable.
//!
//! It decides nothing about when to answer or notify.

use std::sync::Arc;

use crate::wire::CatalogueSummary;

#[derive(Debug, Default)]
pub(super) struct Catalogue {
    /// The catalogue of the daemon last connected.
    last: Option<CatalogueSummary>,
    /// The last `tools/list` result (JSON text), with the catalogue it came from.
    tools: Option<(CatalogueSummary, Arc<str>)>,
}

impl Catalogue {
    /// A session opened announcing `now`. Returns the catalogue it replaces when the two differ
    /// (the agent must hear `notifications/tools/list_changed` first); the cached list is then
    /// forgotten.
    pub(super) fn session_opened(
        &mut self,
        now: Option<&CatalogueSummary>,
    ) -> Option<CatalogueSummary> {
        let changed = match (&self.last, now) {
            (Some(before), Some(now)) => {
                (before.version != now.version || before.hash != now.hash).then(|| before.clone())
            }
            _ => None,
        };
        if changed.is_some() {
            self.tools = None;
        }
        if let Some(now) = now {
            self.last = Some(now.clone());
        }
        changed
    }

    /// The daemon said its tool list changed.
    pub(super) fn forget_tools(&mut self) {
        self.tools = None;
    }

    /// A `tools/list` result (its JSON text) from a session on catalogue `from`.
    pub(super) fn remember_list(&mut self, from: CatalogueSummary, result: Arc<str>) {
        self.tools = Some((from, result));
    }

    /// The cached `tools/list` result, if it came from `current`, the catalogue the session open
    /// now announced.
    pub(super) fn list_of(&self, current: &CatalogueSummary) -> Option<&str> {
        self.tools
            .as_ref()
            .filter(|(tag, _)| tag == current)
            .map(|(_, result)| &**result)
    }

    /// The cached `tools/list` result, if it came from the catalogue last connected.
    pub(super) fn cached_list(&self) -> Option<&str> {
        self.tools
            .as_ref()
            .filter(|(tag, _)| self.last.as_ref() == Some(tag))
            .map(|(_, result)| &**result)
    }
}
