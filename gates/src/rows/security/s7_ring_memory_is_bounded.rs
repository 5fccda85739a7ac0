//! S7: pages flooding worst-case frames grow the daemon's resident memory by a bounded amount.
//! Its flood (also the `bench-ring-memory` binary's), scenario, judge and the judge's unit
//! tests.

use std::time::Duration;

use harness::wire_page::WirePage;
use harness::{BridgeClient, OwnedDaemon, poll};
use reticle::config::env;
use serde_json::json;

use super::{BOUND, observed};
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{could_not_start, judged, observe, settle};
use crate::scenarios::memory::resident_kb;
use crate::scenarios::{GateEnv, Ran};

/// Sessions flooding at once in the gate (the bench runs 32).
pub const FLOOD_SESSIONS: usize = 4;

/// Worst-case frames each session sends.
pub const FLOOD_FRAMES: usize = 12;

/// What the rings of the flooding sessions may add to the daemon's resident memory: the byte
/// bound of each session's ring (8 MiB) twice over, plus 64 MiB for buffers and the allocator.
pub const FLOOD_GROWTH_BOUND_KB: u64 = (FLOOD_SESSIONS as u64 * 2 * 8 + 64) * 1024;

/// An event frame just under the 1 MiB frame limit whose data is an array of zeros: the shape
/// that costs the most memory once parsed.
pub fn worst_case_frame(session: &str) -> String {
    let zeros = "0,".repeat((reticle::wire::limits::MAX_FRAME_BYTES - 256) / 2);
    format!(
        r#"{{"kind":"event","event":{{"t":1,"type":"signal","sessionId":"{session}","data":{{"name":"flood","zeros":[{}0]}}}}}}"#,
        zeros
    )
}

/// Opens `sessions` pages on `daemon`, each sending `frames` worst-case frames, and waits until
/// the daemon has stored or dropped every one; the pages, to be dropped once measured.
pub async fn flood(
    daemon: &OwnedDaemon,
    token: &str,
    sessions: usize,
    frames: usize,
) -> Result<Vec<WirePage>, String> {
    let client = BridgeClient::new(daemon.port());
    let mut pages = Vec::new();
    for i in 0..sessions {
        let id = format!("flood-{i}");
        let page = WirePage::open(daemon.port(), None)
            .await
            .map_err(|e| e.to_string())?;
        page.hello(&id, Some(token)).await;
        poll::within(BOUND, async || client.session(&id).await.map(|_| ()))
            .await
            .ok_or_else(|| format!("session {id} never appeared"))?;
        pages.push(page);
    }
    for (i, page) in pages.iter().enumerate() {
        let frame = worst_case_frame(&format!("flood-{i}"));
        page.send_burst(std::iter::repeat_n(frame, frames)).await;
    }
    for i in 0..sessions {
        let id = format!("flood-{i}");
        poll::within(Duration::from_secs(60), async || {
            let entry = client.session(&id).await?;
            let counters = &entry["counters"];
            let seen = counters["eventsStored"].as_u64()? + counters["eventsDropped"].as_u64()?;
            (seen >= frames as u64).then_some(())
        })
        .await
        .ok_or_else(|| format!("session {id} never took its {frames} frames"))?;
    }
    Ok(pages)
}

/// S7: [`FLOOD_SESSIONS`] pages each send [`FLOOD_FRAMES`] worst-case frames; the daemon's
/// resident memory may grow by at most [`FLOOD_GROWTH_BOUND_KB`].
pub async fn ring_memory_is_bounded(_env: &GateEnv) -> Ran {
    const FAULT: &str = "worst_case_frames";
    let history = History::new();
    let builder = OwnedDaemon::builder()
        .env(env::HARNESS_ROUTES, "1")
        .env(env::MAX_EVENTS_PER_SECOND, "100000");
    let (daemon, token) = match super::kit::daemon(builder).await {
        Ok(started) => started,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let before = resident_kb(daemon.pid());
    let flooded = flood(&daemon, &token, FLOOD_SESSIONS, FLOOD_FRAMES).await;
    history.fault(
        FAULT,
        flooded.is_ok(),
        json!({ "sessions": FLOOD_SESSIONS, "frames": FLOOD_FRAMES, "error": flooded.as_ref().err() }),
    );
    let after = resident_kb(daemon.pid());
    observe(
        &history,
        "resident",
        json!({ "beforeKb": before, "afterKb": after, "boundKb": FLOOD_GROWTH_BOUND_KB }),
    );
    drop(flooded);
    daemon.shutdown().await;
    judged(history, judge_ring_memory)
}

/// S7's judge: growth past the bound is silent (nothing tells anyone memory ran away).
pub fn judge_ring_memory(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        let Some(resident) = observed(ops, "resident").first().map(|o| o.value.clone()) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "resident memory was not observed",
            ));
        };
        let (Some(before), Some(after), Some(bound)) = (
            resident["beforeKb"].as_u64(),
            resident["afterKb"].as_u64(),
            resident["boundKb"].as_u64(),
        ) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!("unreadable VmRSS: {resident}"),
            ));
        };
        let grown = after.saturating_sub(before);
        let outcome = if grown <= bound {
            RowOutcome::Survived
        } else {
            RowOutcome::Silent
        };
        Ok(Judgement::new(
            outcome,
            format!(
                "resident memory grew {} MiB (bound {} MiB)",
                grown / 1024,
                bound / 1024
            ),
        ))
    })
}

/// S7 in the row table.
pub const S7: RowGate = RowGate {
    id: "S7",
    file: file!(),
    scenario: |env| Box::pin(ring_memory_is_bounded(env)),
    judge: judge_ring_memory,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative controls: each judge fed the history the old behaviour produced scores `silent`,
    //! and fed the fixed behaviour's history scores its target.
    use super::*;
    use crate::rows::security::test_history::fault;
    use serde_json::Value;

    #[test]
    fn memory_past_the_bound_is_silent() {
        let old = History::new();
        fault(&old, "worst_case_frames", json!({}));
        observe(
            &old,
            "resident",
            json!({ "beforeKb": 20_000, "afterKb": 1_500_000, "boundKb": FLOOD_GROWTH_BOUND_KB }),
        );
        assert_eq!(judge_ring_memory(&old.ops()).outcome, RowOutcome::Silent);
    }

    #[test]
    fn the_worst_case_frame_fits_the_frame_limit() {
        let frame = worst_case_frame("flood-31");
        assert!(frame.len() <= reticle::wire::limits::MAX_FRAME_BYTES);
        assert!(serde_json::from_str::<Value>(&frame).is_ok());
    }
}
