//! Heartbeat and the last exit (H3.4, H3.6): a SIGKILLed daemon reads `died_silently`; the tidy
//! control (`reticle stop`) reads `signalled`; idle shutdown reads `clean` with its reason.

use std::time::Duration;

use harness::cli::run;
use harness::{OwnedDaemon, poll};
use nix::sys::signal::Signal;

const BOUND: Duration = Duration::from_secs(15);

fn count_events(log: &std::path::Path, event: &str) -> usize {
    let needle = format!("\"event\":\"{event}\"");
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&needle))
        .count()
}

#[tokio::test]
async fn sigkill_is_reported_as_died_silently() {
    let mut daemon = OwnedDaemon::builder()
        .env("RETICLE_HEARTBEAT_MS", "50")
        .start()
        .await;
    let log = daemon.log_path();
    poll::until("two heartbeats", BOUND, async || {
        (count_events(&log, "daemon_alive") >= 2).then_some(())
    })
    .await;
    let beat = std::fs::read_to_string(&log).unwrap();
    assert!(beat.contains("\"everyMs\":50"), "{beat}");

    daemon.signal(Signal::SIGKILL);
    poll::until("the daemon to die", BOUND, async || {
        daemon.has_exited().then_some(())
    })
    .await;
    let port = daemon.port().to_string();
    let status = run(daemon.state_dir(), &["status", "--port", &port, "--json"]).await;
    let report = status.json();
    assert_eq!(report["presence"], "free");
    assert_eq!(report["lastExit"]["kind"], "died_silently", "{report}");
    assert_eq!(report["lastExit"]["pid"], daemon.pid());
    assert!(
        report["lastExit"]["reason"]
            .as_str()
            .unwrap()
            .contains("no exit line")
    );
}

#[tokio::test]
async fn control_a_tidy_stop_is_signalled_not_died_silently() {
    let mut daemon = OwnedDaemon::builder()
        .env("RETICLE_HEARTBEAT_MS", "50")
        .start()
        .await;
    let port = daemon.port().to_string();
    let stop = run(daemon.state_dir(), &["stop", "--port", &port]).await;
    assert!(stop.ok(), "{stop:?}");
    poll::until("the daemon to exit", BOUND, async || {
        daemon.has_exited().then_some(())
    })
    .await;
    let report = run(daemon.state_dir(), &["status", "--port", &port, "--json"])
        .await
        .json();
    assert_eq!(report["lastExit"]["kind"], "signalled", "{report}");
    assert!(
        report["lastExit"]["reason"]
            .as_str()
            .unwrap()
            .contains("SIGTERM")
    );
}

#[tokio::test]
async fn idle_shutdown_fires_is_logged_and_reported_clean() {
    let mut daemon = OwnedDaemon::builder()
        .env("RETICLE_IDLE_SHUTDOWN_MS", "200")
        .start()
        .await;
    poll::until("idle shutdown", BOUND, async || {
        daemon.has_exited().then_some(())
    })
    .await;
    assert_eq!(count_events(&daemon.log_path(), "daemon_idle"), 1);
    let port = daemon.port().to_string();
    let report = run(daemon.state_dir(), &["status", "--port", &port, "--json"])
        .await
        .json();
    assert_eq!(report["lastExit"]["kind"], "clean", "{report}");
    assert!(
        report["lastExit"]["reason"]
            .as_str()
            .unwrap()
            .contains("idle")
    );
}

#[tokio::test]
async fn control_idle_shutdown_zero_never_fires() {
    let mut daemon = OwnedDaemon::builder()
        .env("RETICLE_IDLE_SHUTDOWN_MS", "0")
        .env("RETICLE_HEARTBEAT_MS", "20")
        .start()
        .await;
    let log = daemon.log_path();
    // Twenty beats prove time passed well beyond the 200 ms bound used above.
    poll::until("twenty heartbeats", BOUND, async || {
        (count_events(&log, "daemon_alive") >= 20).then_some(())
    })
    .await;
    assert!(!daemon.has_exited());
    assert_eq!(count_events(&log, "daemon_idle"), 0);
    assert!(daemon.status().await.is_some());
}
