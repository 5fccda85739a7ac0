//! The `toxics` binary: its help explains, `serve` reports its real address and seed, answers
//! the API, refuses a non-loopback host, and exits cleanly on SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn toxics() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toxics"))
}

#[test]
fn help_explains_the_server() {
    let out = toxics().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Toxiproxy"), "{text}");
    assert!(text.contains("serve"), "{text}");

    let out = toxics().args(["serve", "--help"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--host",
        "--port",
        "--seed",
        "8474",
        "127.0.0.1",
        "/proxies",
    ] {
        assert!(text.contains(needle), "missing {needle}: {text}");
    }
}

/// Kills the child if the test fails before it exits on its own.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn serve_reports_its_address_answers_and_stops_on_sigterm() {
    let child = toxics()
        .args(["serve", "--port", "0", "--seed", "5"])
        .env("TOXICS_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("serve printed its address");
    assert!(line.contains("(seed 5)"), "{line}");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_owned();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let version: serde_json::Value = rt.block_on(async {
        reqwest::get(format!("{url}/version"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    assert_eq!(version["version"], toxics::api::VERSION);

    let pid = nix::unistd::Pid::from_raw(child.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "serve did not exit on SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status:?}");
}

#[test]
fn serve_creates_the_proxies_of_a_config_file() {
    let dir = std::env::temp_dir().join(format!("toxics-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("proxies.json");
    std::fs::write(
        &file,
        r#"[{"name": "db", "listen": "127.0.0.1:0", "upstream": "127.0.0.1:6379"}]"#,
    )
    .unwrap();
    let child = toxics()
        .args(["serve", "--port", "0", "--config"])
        .arg(&file)
        .env("TOXICS_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let found = loop {
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(line) if line.contains("proxy db listens on 127.0.0.1:") => break true,
            Ok(line) => seen.push(line),
            Err(_) => break false,
        }
    };
    assert!(found, "no proxy line in {seen:?}");

    std::fs::write(&file, "not json").unwrap();
    let out = toxics()
        .args(["serve", "--port", "0", "--config"])
        .arg(&file)
        .env("TOXICS_LOG", "off")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a proxy list"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_refuses_a_non_loopback_host() {
    let out = toxics()
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .env("TOXICS_LOG", "off")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("localhost-only"), "{err}");
}
