//! What Reticle says about itself in the MCP handshake: its name, the protocol versions it
//! speaks, the instructions every agent receives, and the `initialize` result. Shared by the
//! daemon and the proxy (which answers `initialize` itself), so both say exactly the same thing.

use rmcp::model::{
    Implementation, InitializeRequestParams, InitializeResult, ProtocolVersion, ServerCapabilities,
    ToolsCapability,
};
use serde_json::Value;

use crate::tools::surface::names::{Standing, ToolName};

/// `serverInfo.name` in every handshake.
pub const SERVER_NAME: &str = "reticle";

/// The protocol versions Reticle speaks, newest first. All of them have an `initialize`
/// handshake; a client asking for a newer one is offered the newest here.
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The server instructions: what an agent must know before its first call.
pub const INSTRUCTIONS: &str = "Reticle drives your running web app from inside it and reports what really happened. \
Only reticle_act_and_wait and reticle_assert produce a verdict; every other tool moves or reads the app and proves nothing by itself, \
so a drive that ends without one of those two has no result. \
A verdict of verified: \"unknown\" is not a pass: it means Reticle could not tell what happened. Report it as unknown, and never weaken a check to make it pass. \
A call answered with error -32001 lost its link to the Reticle daemon: the message says whether it ran and what to do next.";

/// [`INSTRUCTIONS`] and the tools off the default list, which an agent would not know of:
/// each reached as `reticle_run {tool, args}`, a family with the actions its members take.
/// Read from the catalogue's names, so a tool added there is named here too.
pub fn instructions() -> String {
    let reachable: Vec<String> = ToolName::ALL
        .iter()
        .filter(|tool| tool.standing() == Standing::Extended)
        .map(|tool| {
            let actions: Vec<&str> = tool.members().iter().map(|(_, action)| *action).collect();
            if actions.is_empty() {
                tool.as_str().to_string()
            } else {
                format!("{} (action: {})", tool.as_str(), actions.join("|"))
            }
        })
        .collect();
    format!(
        "{INSTRUCTIONS} Beyond tools/list, these are reached through reticle_run {{\"tool\": name, \"args\": {{...}}}}, \
saved flows, replay, regression runs, baselines, recording, leases and the clock among them: {}. \
reticle_tools {{\"names\": [...]}} gives any tool's parameters.",
        reachable.join(", ")
    )
}

/// The version to answer with: the client's when Reticle speaks it, else the newest Reticle
/// speaks (the client then decides whether it can continue).
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|asked| SUPPORTED_VERSIONS.iter().find(|v| **v == asked))
        .copied()
        .unwrap_or(SUPPORTED_VERSIONS[0])
}

/// Reads `initialize` params; `Err` says what is wrong with them (answered -32602).
pub fn read_initialize(params: Option<&Value>) -> Result<InitializeRequestParams, String> {
    let params =
        params.ok_or("initialize needs params (protocolVersion, capabilities, clientInfo)")?;
    serde_json::from_value(params.clone())
        .map_err(|err| format!("initialize params are not valid: {err}"))
}

/// The `initialize` result for a client that asked for `requested`.
pub fn initialize_result(requested: Option<&str>) -> Value {
    let version: ProtocolVersion =
        serde_json::from_value(Value::String(negotiate(requested).to_string()))
            .unwrap_or(ProtocolVersion::V_2025_06_18);
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(true);
    let mut capabilities = ServerCapabilities::default();
    capabilities.tools = Some(tools);
    // `logging/setLevel` and `notifications/message` ([`super::logging`]).
    capabilities.logging = Some(Default::default());
    let result = InitializeResult::new(capabilities)
        .with_protocol_version(version)
        .with_server_info(Implementation::new(SERVER_NAME, crate::VERSION))
        .with_instructions(instructions());
    serde_json::to_value(result).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn supported_versions_are_echoed_and_others_get_the_newest() {
        assert_eq!(negotiate(Some("2024-11-05")), "2024-11-05");
        assert_eq!(negotiate(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate(Some("2099-01-01")), SUPPORTED_VERSIONS[0]);
        assert_eq!(negotiate(None), SUPPORTED_VERSIONS[0]);
    }

    #[test]
    fn the_result_names_reticle_and_says_what_a_verdict_is() {
        let result = initialize_result(Some("2025-03-26"));
        assert_eq!(result["protocolVersion"], "2025-03-26");
        assert_eq!(result["capabilities"]["logging"], json!({}));
        assert_eq!(result["serverInfo"]["name"], SERVER_NAME);
        assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
        let text = result["instructions"].as_str().unwrap();
        assert!(text.contains("reticle_act_and_wait") && text.contains("reticle_assert"));
        assert!(text.contains("\"unknown\" is not a pass"));
        assert!(text.starts_with(INSTRUCTIONS));
    }

    #[test]
    fn initialize_params_are_checked() {
        assert!(read_initialize(None).is_err());
        assert!(read_initialize(Some(&json!({"protocolVersion": 3}))).is_err());
        let ok = read_initialize(Some(&json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}
        })))
        .unwrap();
        assert_eq!(ok.protocol_version.as_str(), "2025-06-18");
    }

    #[test]
    fn the_instructions_name_every_tool_reached_only_through_reticle_run() {
        let text = instructions();
        let off_the_list: Vec<ToolName> = ToolName::ALL
            .iter()
            .copied()
            .filter(|tool| tool.standing() == Standing::Extended)
            .collect();
        assert!(off_the_list.contains(&ToolName::FlowSave));
        assert!(off_the_list.contains(&ToolName::Record));
        for tool in off_the_list {
            assert!(text.contains(tool.as_str()), "{tool} not named in: {text}");
        }
        assert!(
            text.contains("reticle_record (action: start|stop)"),
            "{text}"
        );
        // Control: a default tool is in tools/list already and is not repeated as reachable.
        let reachable = text.split("reticle_run {").nth(1).unwrap();
        assert!(!reachable.contains("reticle_snapshot"), "{reachable}");
    }
}
