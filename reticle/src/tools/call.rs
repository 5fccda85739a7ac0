//! [`Call`]: what a handler is given, and [`Route`], the way the call came. A `Call` is built by
//! the chokepoint only, after its checks; a handler holding one knows the call was checked.
//! This module must not run, check or dispatch anything; a nested call goes back through the
//! chokepoint by the entry it handed the call.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use super::context::ToolContext;
use super::refusal::{Refusal, ToolRefusal};
use super::surface::catalogue::Catalogue;
use super::surface::names::ToolName;
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
    /// How this call runs another through the chokepoint (given by the chokepoint).
    pub(super) nested: Nested,
    pub(super) _sealed: Sealed,
}

/// The chokepoint's entry for a call made from inside another: every check of a direct call,
/// reached by any catalogued name.
pub(super) type Nested = for<'a> fn(
    &'a ToolContext,
    &'a Catalogue,
    &'a str,
    Map<String, Value>,
) -> BoxFuture<'a, Result<CallToolResult, ToolRefusal>>;

/// The seal only the chokepoint puts on a [`Call`].
pub(super) struct Sealed;

impl Call<'_> {
    /// Runs tool `name` with `arguments` through the chokepoint, as `reticle_run` does: the
    /// target gets every check, span and decoration of a direct call.
    pub fn run_nested<'b>(
        &'b self,
        name: &'b str,
        arguments: Map<String, Value>,
    ) -> BoxFuture<'b, Result<CallToolResult, ToolRefusal>> {
        (self.nested)(self.ctx, self.catalogue, name, arguments)
    }

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
