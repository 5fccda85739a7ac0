//! Port honesty (H3.1): a squatter on the port makes `serve` fail naming the holder and never
//! print a started line, `status` says `foreign`, and `doctor` names the obstacle. Control: on a
//! free port the same commands say `free` and `serve` starts a daemon.

use std::net::TcpListener;

use harness::cli::run;
use harness::free_port;

#[tokio::test]
async fn a_squatter_makes_serve_fail_naming_the_holder() {
    let state = tempfile::tempdir().unwrap();
    let squatter = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = squatter.local_addr().unwrap().port();
    let port_arg = port.to_string();
    let me = std::process::id().to_string();

    let serve = run(state.path(), &["serve", "--port", &port_arg]).await;
    assert!(!serve.ok(), "serve must fail on a held port: {serve:?}");
    assert!(
        serve.stderr.contains(&port_arg),
        "names the port: {}",
        serve.stderr
    );
    assert!(
        serve.stderr.contains(&me),
        "names the holder's pid: {}",
        serve.stderr
    );
    assert!(
        !serve.said().contains("started"),
        "never a started line: {}",
        serve.said()
    );

    let status = run(state.path(), &["status", "--port", &port_arg, "--json"]).await;
    let report = status.json();
    assert_eq!(report["presence"], "foreign");
    assert_eq!(report["running"], false);
    assert!(report["diagnosis"].as_str().unwrap().contains(&me));

    let doctor = run(state.path(), &["doctor", "--port", &port_arg]).await;
    assert!(!doctor.ok(), "doctor must report the obstacle: {doctor:?}");
    assert!(
        doctor.stdout.contains("not a Reticle daemon"),
        "{}",
        doctor.stdout
    );
    drop(squatter);
}

#[tokio::test]
async fn control_a_free_port_reads_free_and_serve_starts() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port().to_string();
    let status = run(state.path(), &["status", "--port", &port, "--json"]).await;
    assert_eq!(status.json()["presence"], "free");
    assert_eq!(status.json()["running"], false);

    let serve = run(state.path(), &["serve", "--port", &port]).await;
    assert!(serve.ok(), "{serve:?}");
    assert!(serve.stdout.contains("started"), "{}", serve.stdout);
    let status = run(state.path(), &["status", "--port", &port, "--json"]).await;
    assert_eq!(status.json()["presence"], "daemon");
    let again = run(state.path(), &["serve", "--port", &port]).await;
    assert!(
        again.ok() && again.stdout.contains("already serving"),
        "{again:?}"
    );
    let stop = run(state.path(), &["stop", "--port", &port]).await;
    assert!(stop.ok(), "{stop:?}");
}

#[tokio::test]
async fn an_unwritable_state_dir_is_named_by_serve_and_doctor() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("state-is-a-file");
    std::fs::write(&not_a_dir, b"").unwrap();
    let port = free_port().to_string();
    let serve = run(&not_a_dir, &["serve", "--port", &port]).await;
    assert!(!serve.ok());
    assert!(serve.stderr.contains("state-is-a-file"), "{}", serve.stderr);
    assert!(
        serve.stderr.contains("RETICLE_STATE_DIR"),
        "{}",
        serve.stderr
    );
    let doctor = run(&not_a_dir, &["doctor", "--port", &port]).await;
    assert!(!doctor.ok());
    let status = run(dir.path(), &["status", "--port", &port, "--json"]).await;
    // The port was only picked, never held: another test may bind it meanwhile, so the claim
    // is that no Reticle daemon was started there, not that the port is free.
    assert_ne!(status.json()["presence"], "daemon", "nothing was started");
}

#[tokio::test]
async fn bad_ports_get_a_sentence_not_a_panic() {
    let state = tempfile::tempdir().unwrap();
    for args in [
        &["serve", "--port", "0"][..],
        &["status", "--port", "http"][..],
        &["stop", "--port", "70000"][..],
    ] {
        let ran = run(state.path(), args).await;
        assert_eq!(ran.code, Some(2), "{args:?}: {ran:?}");
        assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    }
    let mut command = harness::cli::command(state.path(), &["status", "--json"]);
    command.env(reticle::config::env::PORT, "not-a-port");
    let output = assert_cmd::Command::from_std(command)
        .timeout(harness::cli::CLI_BOUND)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("RETICLE_PORT"));
}
