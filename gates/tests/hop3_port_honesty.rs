//! Port honesty (H3.1): a squatter on the port makes `serve` fail naming the holder and never
//! print a started line, `status` says `foreign`, and `doctor` names the obstacle. Control: on a
//! free port the same commands say `free` and `serve` starts a daemon. `status` without `--json`
//! also says it in the words a script written for the reference reads. H3.8: a port that is an
//! outgoing connection's source port is named as such, with its holder, by `serve`, `status`,
//! `doctor`, `kill` and `stop`; control: once the connection is released, `serve` starts there.

use std::net::{TcpListener, TcpStream};

use gates::history::OpType;
use gates::judge::RowOutcome;
use gates::rows::hop3::h3_8_connection_on_the_port::{SourcePort, connection_on_the_port};
use gates::scenarios::GateEnv;
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

    // A script written for the reference reads `status` without `--json`, stdout and stderr
    // together, for these words.
    let text = run(state.path(), &["status", "--port", &port_arg]).await;
    assert!(
        text.said().contains(r#""presence":"foreign""#)
            && text.said().contains(r#""running":false"#),
        "{}",
        text.said()
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
    let text = run(state.path(), &["status", "--port", &port]).await;
    assert!(
        text.said().contains(r#""presence":"free""#),
        "{}",
        text.said()
    );

    let serve = run(state.path(), &["serve", "--port", &port]).await;
    assert!(serve.ok(), "{serve:?}");
    assert!(serve.stdout.contains("started"), "{}", serve.stdout);
    let status = run(state.path(), &["status", "--port", &port, "--json"]).await;
    assert_eq!(status.json()["presence"], "daemon");
    let text = run(state.path(), &["status", "--port", &port]).await;
    for word in [r#""running":true"#, r#""pid":"#, r#""sessionCount":0"#] {
        assert!(text.said().contains(word), "{word}: {}", text.said());
    }
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

#[tokio::test]
async fn a_port_held_by_an_outgoing_connection_is_named_by_every_command() {
    let state = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let _accepted = listener.accept().unwrap();
    let port = client.local_addr().unwrap().port().to_string();
    let me = std::process::id().to_string();
    let names_the_connection = |said: &str| {
        said.contains(&format!("port {port} is held by"))
            && said.contains(&me)
            && said.contains("outgoing connection")
            && said.contains("another port")
    };

    let serve = run(state.path(), &["serve", "--port", &port]).await;
    assert!(!serve.ok(), "{serve:?}");
    assert!(names_the_connection(&serve.stderr), "{}", serve.stderr);
    assert!(!serve.stderr.contains("cannot see"), "{}", serve.stderr);

    let status = run(state.path(), &["status", "--port", &port, "--json"]).await;
    let report = status.json();
    assert_eq!(report["presence"], "outbound", "{report}");
    assert_eq!(report["running"], false);
    assert!(names_the_connection(report["diagnosis"].as_str().unwrap()));
    let text = run(state.path(), &["status", "--port", &port]).await;
    assert!(!text.stdout.contains("free"), "{}", text.stdout);

    let doctor = run(state.path(), &["doctor", "--port", &port]).await;
    assert!(!doctor.ok(), "{doctor:?}");
    assert!(names_the_connection(&doctor.stdout), "{}", doctor.stdout);
    assert!(
        doctor.stdout.contains("ephemeral range"),
        "{}",
        doctor.stdout
    );

    for args in [["kill", "--port", &port], ["stop", "--port", &port]] {
        let ran = run(state.path(), &args).await;
        assert!(!ran.ok(), "{args:?}: {ran:?}");
        assert!(
            names_the_connection(&ran.stderr),
            "{args:?}: {}",
            ran.stderr
        );
    }
    assert!(harness::ports::pid_alive(std::process::id()));
    drop(client);
}

#[tokio::test]
async fn a_port_held_by_an_outgoing_connection_scores_surfaced_and_serve_starts_once_it_closes() {
    let env = GateEnv {
        reticle: harness::binaries::reticle(),
    };
    let held = connection_on_the_port(&env, SourcePort::Held).await;
    assert_eq!(
        held.judgement.outcome,
        RowOutcome::Surfaced,
        "{:?}: {:?}",
        held.judgement,
        held.history.ops()
    );
    let released = connection_on_the_port(&env, SourcePort::Released).await;
    let ops = released.history.ops();
    let serve = ops
        .iter()
        .rfind(|op| op.f == "serve" && op.op_type != OpType::Invoke)
        .expect("serve was called");
    assert_eq!(serve.op_type, OpType::Ok, "{ops:?}");
    let status = ops
        .iter()
        .find(|op| op.f == "status" && op.op_type != OpType::Invoke)
        .expect("status was called");
    assert!(
        status.value["stdout"]
            .as_str()
            .is_some_and(|out| out.contains("\"presence\":\"free\"")),
        "{ops:?}"
    );
}

#[tokio::test]
async fn doctor_warns_only_about_a_port_inside_the_ephemeral_range() {
    let state = tempfile::tempdir().unwrap();
    let outside = free_port().to_string();
    let doctor = run(state.path(), &["doctor", "--port", &outside, "--json"]).await;
    let findings = doctor.json()["findings"].clone();
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["check"] != "range"),
        "{findings}"
    );
    let inside = harness::ports::ephemeral_range().start().to_string();
    let doctor = run(state.path(), &["doctor", "--port", &inside, "--json"]).await;
    let findings = doctor.json()["findings"].clone();
    let range = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "range")
        .unwrap_or_else(|| panic!("no range warning: {findings}"));
    assert_eq!(range["warning"], true);
    assert_eq!(range["ok"], true, "a hazard is not an obstacle");
}
