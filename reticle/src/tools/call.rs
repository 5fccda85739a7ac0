//! [`Call`]: what a handler is given, and [`Route`], the way the call came. A `Call` is built by
//! the chokepoint only, after its checks; a handler holding one knows the call was checked.
//! This module must not run, check or dispatch anything.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::catalogue::Catalogue;
use super::context::ToolContext;
use super::names::ToolName;
use super::refusal::Refusal;
use crate::bridge::Session;

/// Which route a call came by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `tools/call` (only advertised tools).
    Direct,
    /// `reticle_run` (any catalogued tool).
    Run,
}

/// Proof that a call came through [`super::run_tool`]: handlers take one, only the chokepoint
/// makes one.
pub struct Call<'a> {
    pub ctx: &'a ToolContext,
    pub catalogue: &'a Catalogue,
    pub tool: ToolName,
    /// The session this call resolved, for session-bound tools (and `reticle_session` when one
    /// could be had).
    pub session: Option<Arc<Session>>,
    /// The arguments as given (after the checks).
    pub arguments: Map<String, Value>,
    pub(super) _sealed: Sealed,
}

/// The seal only the chokepoint puts on a [`Call`].
pub(super) struct Sealed;

impl Call<'_> {
    /// The resolved session (session-bound tools always have one).
    pub fn session(&self) -> Result<&Arc<Session>, Refusal> {
        self.session.as_ref().ok_or_else(|| {
            Refusal::new(
                "this call has no browser session",
                "open the app in a browser with the Reticle SDK, then call reticle_sessions",
            )
        })
    }
}
