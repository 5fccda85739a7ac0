//! H2.5: the daemon restarted with another catalogue: `tools/list_changed` reaches the client
//! before anything from the new daemon. Its scenario and judge.

use harness::{OwnedDaemon, free_port};
use serde_json::{Value, json};

use crate::fault;
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::agent::RawAgent;
use crate::scenarios::agent_kit;
use crate::scenarios::agent_kit::answered_once_after_fault;
use crate::scenarios::kit::{BOUND, judged, observe};
use crate::scenarios::{GateEnv, Ran, proxy_options};

/// H2.5: the daemon restarted with another catalogue. The client must receive
/// `notifications/tools/list_changed` before anything from the new daemon, and the listing it
/// then gets is the new daemon's. Control: a restart with the same catalogue announces nothing.
pub async fn catalogue_changes_across_a_restart(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("a private state dir");
    let port = free_port();
    let daemon = |catalogue: Option<&str>| {
        let builder = OwnedDaemon::builder().port(port).state_dir(state.path());
        match catalogue {
            Some(edit) => builder.env(reticle::config::env::TEST_CATALOGUE, edit),
            None => builder,
        }
    };
    let first = daemon(None).start().await;
    let first_hash = first
        .status()
        .await
        .and_then(|s| s.catalogue)
        .map(|c| c.hash);
    let mut raw = RawAgent::start(&history, proxy_options(env, port, state.path()));
    let names = |answer: &Option<Value>| -> Vec<String> {
        answer
            .as_ref()
            .and_then(|a| a["result"]["tools"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    };
    let notices = |raw: &RawAgent| {
        raw.received()
            .iter()
            .filter(|v| v["method"] == "notifications/tools/list_changed")
            .count()
    };
    let before = if raw.initialize(BOUND).await.is_some() {
        names(&raw.call("tools/list", json!({}), BOUND).await)
    } else {
        Vec::new()
    };
    // Control: the same catalogue in a new daemon life.
    drop(first);
    let same = daemon(None).start().await;
    let control = names(&raw.call("tools/list", json!({}), BOUND).await);
    let control_notices = notices(&raw);
    drop(same);
    let changed = daemon(Some("+reticle_test_echo")).start().await;
    let changed_hash = changed
        .status()
        .await
        .and_then(|s| s.catalogue)
        .map(|c| c.hash);
    history.fault(
        fault::RESTART_WITH_ANOTHER_CATALOGUE,
        !before.is_empty() && first_hash.is_some() && changed_hash != first_hash,
        json!({ "before": first_hash, "after": changed_hash, "catalogueBefore": before }),
    );
    let listing = raw.send("tools/list", json!({})).await;
    let after = names(&raw.answer(&listing, BOUND).await);
    let echoed = raw
        .call(
            "tools/call",
            json!({"name": "reticle_test_echo", "arguments": {"a": 1}}),
            BOUND,
        )
        .await
        .is_some_and(|a| a.get("result").is_some());
    raw.settle();
    let received = raw.received();
    let notice_at = received
        .iter()
        .position(|v| v["method"] == "notifications/tools/list_changed");
    let listed_at = received.iter().position(|v| v.get("id") == Some(&listing));
    let count = notices(&raw);
    observe(
        &history,
        LIST_CHANGED,
        json!({ "count": count, "noticeAt": notice_at, "listingAt": listed_at, "controlNotices": control_notices,
                "controlListing": control, "listing": after, "newToolServed": echoed }),
    );
    judged(history, judge_catalogue_change)
}

/// The observation of the notices and listings the client received across the restarts:
/// `{"count", "noticeAt", "listingAt", "controlNotices", "controlListing", "listing",
/// "newToolServed"}`.
const LIST_CHANGED: &str = "list_changed";

/// H2.5's judge, from the history alone: the control (same catalogue) announced nothing and
/// listed the catalogue the fault recorded before; then exactly one `list_changed`, received
/// before the new listing, which is the old catalogue plus the new tool, and the new tool served
/// (observed).
pub fn judge_catalogue_change(ops: &[Op]) -> Judgement {
    if let Err(unproven) = answered_once_after_fault(ops) {
        return unproven;
    }
    let names = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect()
    };
    let before = judge::established_fault(ops)
        .map(|f| names(&f.value["catalogueBefore"]))
        .unwrap_or_default();
    let seen = agent_kit::last_observed(ops, LIST_CHANGED)
        .map(|o| o.value.clone())
        .unwrap_or_default();
    let control_notices = seen["controlNotices"].as_u64().unwrap_or(0);
    let control = names(&seen["controlListing"]);
    if control_notices != 0 || control != before {
        return Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the control (same catalogue) got {control_notices} notice(s) and {control:?}: the check proves nothing"
            ),
        );
    }
    let count = seen["count"].as_u64().unwrap_or(0);
    let after = names(&seen["listing"]);
    let echoed = seen["newToolServed"] == true;
    let first = matches!(
        (seen["noticeAt"].as_u64(), seen["listingAt"].as_u64()),
        (Some(n), Some(l)) if n < l
    );
    let mut edited = before;
    edited.push("reticle_test_echo".to_string());
    if count == 1 && first && after == edited && echoed {
        Judgement::new(
            RowOutcome::Surfaced,
            "list_changed arrived before the new daemon's catalogue, which is served; the control (same catalogue) announced nothing",
        )
    } else {
        Judgement::new(
            RowOutcome::Silent,
            format!(
                "{count} list_changed (first: {first}) for a changed catalogue; listing {after:?}; new tool served: {echoed}"
            ),
        )
    }
}

/// H2.5 in the row table.
pub const H2_5: RowGate = RowGate {
    id: "H2.5",
    file: file!(),
    scenario: |env| Box::pin(catalogue_changes_across_a_restart(env)),
    judge: judge_catalogue_change,
    controls: &[],
};
