//! `reticle_test_echo`, only when a test asks for it through `RETICLE_TEST_CATALOGUE`: it
//! answers with the arguments it was given.

use serde_json::{Map, Value, json};

use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Tool};

/// Answers with its arguments.
fn echo(call: &Call<'_>) -> Result<Value, Refusal> {
    Ok(json!({ "echo": call.arguments }))
}

/// `reticle_test_echo`, as the registry knows it.
pub struct TestEcho;

impl Tool for TestEcho {
    const NAME: ToolName = ToolName::TestEcho;
    const TITLE: &'static str = "Test echo";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Test only: answer with the arguments given.";
    type Args = Map<String, Value>;

    /// Any object: the echo takes whatever it is given.
    fn input_schema() -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("type".into(), json!("object"));
        map
    }

    fn run<'a>(call: &'a Call<'a>, _: Map<String, Value>) -> Answer<'a> {
        Box::pin(std::future::ready(echo(call)))
    }
}
