//! What one tool declares, and the [`Registration`] the registry keeps of it: its name, its
//! description, its principal result fields, how it uses a session, its argument type (the input
//! schema is generated from it) and what it does ([`Tool::run`]). A family member declares only
//! its name, description and schema. Modelled on the toxics' registry; this module must not list
//! the tools (that is `tools::registry`) nor run a call's checks (the chokepoint does).

use std::fmt;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::args::{self, schema_of};
use super::names::ToolName;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;

/// What a handler answers, in time.
pub type Answer<'a> = BoxFuture<'a, Result<Value, Refusal>>;

/// How a tool uses a browser session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionUse {
    /// None: it never resolves one.
    None,
    /// It takes one when one can be had (the only one, or `sessionId`), and runs without.
    Optional,
    /// It drives or reads a page: it resolves one before it runs and carries the `session`
    /// block in its result.
    Bound,
}

/// What a tool may do to its world, as MCP hosts read it (the `annotations` hints of
/// `tools/list`): hosts approve reads without asking and run them side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads the page, the daemon's books or the catalogue; calling it again changes nothing.
    Reads,
    /// Adds (a note, a lease, a recording) and never removes or replaces what exists.
    Adds,
    /// Drives the page or replaces what exists: a click may delete a record in the app, a save
    /// may overwrite a flow.
    Changes,
    /// Goes to any URL the caller names, beyond the app; the same URL again changes nothing.
    Navigates,
    /// Runs any other tool by name, so it may do what any of them does.
    Dispatches,
}

impl Effect {
    /// The MCP hints: (readOnly, destructive, idempotent, openWorld).
    pub const fn hints(self) -> (bool, bool, bool, bool) {
        match self {
            Effect::Reads => (true, false, true, false),
            Effect::Adds => (false, false, false, false),
            Effect::Changes => (false, true, false, false),
            Effect::Navigates => (false, true, true, true),
            Effect::Dispatches => (false, true, false, true),
        }
    }
}

/// One tool, as its family file declares it.
pub trait Tool: 'static {
    const NAME: ToolName;
    /// A few words a host shows a person in place of the name.
    const TITLE: &'static str;
    /// What it may do to its world (with a family, the most any of its actions does).
    const EFFECT: Effect;
    /// One sentence (or two), as advertised.
    const DESCRIPTION: &'static str;
    /// The principal fields of its result (every result may also be a refusal
    /// `{ok:false, reason, recovery}`, and live results carry `session`).
    const OUTPUT: &'static [&'static str] = &[];
    const SESSION: SessionUse = SessionUse::None;
    /// Whether it (with its family `action`) changes a session's page or its state, and so is
    /// refused on a session another holder has leased. Reading tools stay open to every agent.
    const DRIVES_SESSION: bool = false;
    /// The family `action`s that open a page of their own (a driven browser's launch): they
    /// resolve no session and check no lease.
    const OPENING_ACTIONS: &'static [&'static str] = &[];
    /// Its arguments, parsed strictly before it runs.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// Its input schema, generated from [`Tool::Args`].
    fn input_schema() -> Map<String, Value> {
        schema_of::<Self::Args>()
    }

    /// Does what the tool does, given a checked call and its parsed arguments.
    fn run<'a>(call: &'a Call<'a>, args: Self::Args) -> Answer<'a>;
}

/// A call's arguments, parsed and ready to run once the call is checked.
pub struct Prepared(Box<dyn for<'a> FnOnce(&'a Call<'a>) -> Answer<'a> + Send>);

impl Prepared {
    fn of<F>(run: F) -> Self
    where
        F: for<'a> FnOnce(&'a Call<'a>) -> Answer<'a> + Send + 'static,
    {
        Self(Box::new(run))
    }

    /// Runs the handler on the checked call.
    pub fn run<'a>(self, call: &'a Call<'a>) -> Answer<'a> {
        (self.0)(call)
    }
}

/// Parses a call's arguments into a handler ready to run; the error names the field at fault.
type Preparer = fn(&Map<String, Value>) -> Result<Prepared, String>;

/// One entry of the registry.
#[derive(Clone, Copy)]
pub struct Registration {
    pub name: ToolName,
    pub description: &'static str,
    /// Its title and effect; `None` for a family member, which is advertised as its family.
    pub shown: Option<(&'static str, Effect)>,
    pub output: &'static [&'static str],
    pub session: SessionUse,
    pub drives_session: bool,
    /// [`Tool::OPENING_ACTIONS`].
    pub opening_actions: &'static [&'static str],
    input_schema: fn() -> Map<String, Value>,
    /// Parses the arguments into a runnable handler; `None` for a family member, which is
    /// reached as its family.
    prepare: Option<Preparer>,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .finish()
    }
}

impl Registration {
    /// The registration of tool `T`.
    pub const fn of<T: Tool>() -> Self {
        Self {
            name: T::NAME,
            description: T::DESCRIPTION,
            shown: Some((T::TITLE, T::EFFECT)),
            output: T::OUTPUT,
            session: T::SESSION,
            drives_session: T::DRIVES_SESSION,
            opening_actions: T::OPENING_ACTIONS,
            input_schema: T::input_schema,
            prepare: Some(prepare::<T>),
        }
    }

    /// A family member `name`, whose input schema is that of `A`.
    pub const fn member<A: JsonSchema>(name: ToolName, description: &'static str) -> Self {
        Self {
            name,
            description,
            shown: None,
            output: &[],
            session: SessionUse::None,
            drives_session: false,
            opening_actions: &[],
            input_schema: schema_of::<A>,
            prepare: None,
        }
    }

    /// The input schema, generated from the argument type.
    pub fn input_schema(&self) -> Map<String, Value> {
        (self.input_schema)()
    }

    /// Parses `arguments` strictly into a handler ready to run; the error names the field.
    pub fn prepare(&self, arguments: &Map<String, Value>) -> Result<Prepared, String> {
        match self.prepare {
            Some(prepare) => prepare(arguments),
            None => Err("a family member is reached through its family".into()),
        }
    }

    /// Whether it resolves a session before it runs.
    pub fn session_bound(&self) -> bool {
        self.session == SessionUse::Bound
    }
}

fn prepare<T: Tool>(arguments: &Map<String, Value>) -> Result<Prepared, String> {
    let parsed: T::Args = args::parse(arguments)?;
    Ok(Prepared::of(move |call| T::run(call, parsed)))
}
