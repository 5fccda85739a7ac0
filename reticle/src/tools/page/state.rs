//! `reticle_state`: a store the app registered, read by path; a wrong path answers `found:false`
//! with the keys that exist. It reads only.

use serde_json::{Map, Value, json};

use crate::tools::call::Call;
use crate::tools::commands::{ask, put};
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::StateArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::CommandName;
use crate::wire::state_path::StatePath;

/// What `reticle_state` says when the page registered no store: how to register one.
pub const NO_STORE_REGISTERED: &str = "this page registered no store, so there is no app state to read. Register each store once in the app's development build, with registerStore imported from the module that connect() comes from (the daemon's /sdk/reticle.js, or @reticlehq/browser): registerStore('todos', () => useTodosStore().$state) for Pinia, registerStore('app', store.getState) for Redux, registerStore('app', useAppStore.getState) for Zustand; then call reticle_state again";

async fn state(call: &Call<'_>, a: StateArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let path = a.path.as_deref().map(StatePath::parse);
    let mut args = Map::new();
    put(&mut args, "store", a.store);
    put(
        &mut args,
        "path",
        path.as_ref().map(|p| p.as_sent().to_string()),
    );
    put(&mut args, "depth", a.depth);
    let mut result = ask(session, CommandName::StateRead, Value::Object(args)).await?;
    if result.get("found") == Some(&json!(false)) {
        if result.get("availableKeys").is_none() {
            result["availableKeys"] = result.get("storeNames").cloned().unwrap_or(json!([]));
        }
        if let Some(path) = path.filter(|p| !p.absence_is_proved(&result)) {
            result["found"] = Value::Null;
            result["note"] = json!(path.why_unproved());
        }
    }
    let none_registered = result
        .get("storeNames")
        .and_then(Value::as_array)
        .is_some_and(|names| names.is_empty());
    if none_registered && result.get("note").is_none() {
        result["note"] = json!(NO_STORE_REGISTERED);
    }
    Ok(result)
}

/// `reticle_state`, as the registry knows it.
pub struct State;

impl Tool for State {
    const NAME: ToolName = ToolName::State;
    const TITLE: &'static str = "App state";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Read a store the app registered; a wrong path answers found:false with the keys that exist. Reads only.";
    const OUTPUT: &'static [&'static str] = &["found", "value", "availableKeys"];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = StateArgs;

    fn run<'a>(call: &'a Call<'a>, a: StateArgs) -> Answer<'a> {
        Box::pin(state(call, a))
    }
}
