//! Which document answers for a session: the probe the tab-history and session-adoption tests
//! share. It sends a status snapshot through the bridge and reads the title; it asserts nothing.

use std::time::Duration;

use harness::{BridgeClient, poll};
use serde_json::json;

/// How long one probe command may wait for the page's answer.
const PROBE: Duration = Duration::from_secs(3);
/// How long a document gets to come to answer for a session.
const BOUND: Duration = Duration::from_secs(30);

/// The title of the document that answers for session `id` now, if one answers within
/// [`PROBE`].
pub async fn answering_title(client: &BridgeClient, id: &str) -> Option<String> {
    let answer = client
        .try_command(Some(id), "snapshot", json!({"mode": "status"}), Some(PROBE))
        .await
        .ok()?;
    (answer["outcome"] == "answered" && answer["ok"] == true)
        .then(|| {
            answer["result"]["status"]["title"]
                .as_str()
                .map(str::to_string)
        })
        .flatten()
}

/// Waits until the document titled `title` answers for session `id`.
pub async fn wait_answering(client: &BridgeClient, id: &str, title: &str) {
    poll::until(
        &format!("'{title}' answering for {id}"),
        BOUND,
        async || (answering_title(client, id).await.as_deref() == Some(title)).then_some(()),
    )
    .await;
}
