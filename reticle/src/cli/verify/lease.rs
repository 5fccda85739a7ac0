//! A verify job's lease on the session it is about to drive, through `reticle_lease` (the lease
//! book every agent uses): taken once the job's page has connected and before its flow replays,
//! let go when the flow is done. A session another holder leased is refused by name and never
//! driven; each job is its own agent, so two jobs never share a lease.
//!
//! It takes and lets go of leases; it must not replay or judge a flow.

use serde_json::{Value, json};

use super::client::ToolClient;
use crate::config::{env, switch_on};
use crate::tools::ToolName;

/// A job's lease on one session.
pub enum Lease {
    /// The lease book's view of it (holder, expiry), as `reticle_lease` answered.
    Held(Value),
    /// The test stand-in took none.
    NotTaken,
}

/// The agent id job `number` of run `run_tag` names itself with on its MCP stream.
pub fn job_agent(run_tag: &str, number: usize) -> String {
    format!("verify-{run_tag}-j{number}")
}

async fn lease_call(client: &ToolClient, args: Value) -> Result<Value, String> {
    match client
        .call(
            ToolName::Run.as_str(),
            json!({"tool": ToolName::Lease.as_str(), "args": args}),
        )
        .await?
    {
        (answer, false) => Ok(answer),
        (refusal, true) => Err(refusal["reason"]
            .as_str()
            .unwrap_or("reticle_lease refused without a reason")
            .to_string()),
    }
}

/// Leases `session` for the job whose link `client` is; why not (another holder has it, named,
/// or the call failed) when it cannot.
pub async fn acquire(client: &ToolClient, session: &str) -> Result<Lease, String> {
    if switch_on(env::TEST_STAND_IN_VERIFY_SKIPS_LEASES) {
        return Ok(Lease::NotTaken);
    }
    let answer = lease_call(client, json!({"action": "acquire", "sessionId": session})).await?;
    Ok(Lease::Held(answer["lease"].clone()))
}

/// Lets go of every lease the job holds (its one session's); the record of the lease for the
/// flow: what was held and what the lease book says it let go of (or why it could not).
pub async fn release(client: &ToolClient, lease: &Lease) -> Value {
    let Lease::Held(held) = lease else {
        return json!({"held": null, "released": []});
    };
    match lease_call(client, json!({"action": "release"})).await {
        Ok(answer) => json!({"held": held, "released": answer["released"]}),
        Err(why) => json!({"held": held, "releaseFailed": why}),
    }
}
