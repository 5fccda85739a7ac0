//! Every Chromium the project launches runs with the product's flags (`CHROMIUM_FLAGS`: what a
//! headless Chromium needs as root, offline, without background traffic), seen from outside in
//! the process's own `/proc/<pid>/cmdline`: the one `reticle verify` launches (with its first
//! flow's URL on the command line) and the harness's. The control is the argument list verify's
//! browser had before this was checked: chromiumoxide wrote each flag as `----name`, which
//! Chromium ignores without a word.
//!
//! Each also keeps its temporary files inside its own profile, so a killed browser leaves
//! nothing in the shared temporary dir (a day of test runs had left 3,272 there). The
//! control is Chromium launched without a temporary dir of its own, as both were before.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use gates::scenarios::verify_rig::{VerifyRig, browser_argv, click_flow, singleton_dir};
use harness::poll;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use reticle::config::CHROMIUM_FLAGS;

/// The product flags `argv` lacks, and any argument Chromium would not read as a switch.
fn flag_faults(argv: &[String]) -> Vec<String> {
    let mut faults: Vec<String> = CHROMIUM_FLAGS
        .iter()
        .filter(|flag| !argv.iter().any(|arg| arg == *flag))
        .map(|flag| format!("missing {flag}"))
        .collect();
    faults.extend(
        argv.iter()
            .filter(|arg| arg.starts_with("---"))
            .map(|arg| format!("unreadable {arg}")),
    );
    faults
}

#[test]
fn the_check_goes_red_on_the_arguments_verify_used_to_pass() {
    let before = "/usr/lib/chromium/chromium --show-component-extension-options \
        --enable-gpu-rasterization --no-default-browser-check --disable-pings --media-router=0 \
        --enable-remote-extensions --load-extension= ----disable-sync --no-sandbox \
        --remote-debugging-port=0 ----disable-gpu --disable-setuid-sandbox \
        ----disable-background-networking ----no-first-run --mute-audio ----disable-quic \
        ----no-sandbox ----disable-component-update --disable-extensions \
        --user-data-dir=/tmp/reticle-verify-c954e187620b44b39ca4fe3ac5e99007-1 \
        --hide-scrollbars --headless";
    let argv: Vec<String> = before.split_whitespace().map(String::from).collect();
    let faults = flag_faults(&argv);
    assert!(
        faults.contains(&"missing --disable-gpu".to_string()),
        "{faults:?}"
    );
    assert!(
        faults.contains(&"unreadable ----disable-quic".to_string()),
        "{faults:?}"
    );
}

#[tokio::test]
async fn verify_launches_chromium_with_every_product_flag_and_the_first_flow_on_its_command_line() {
    let rig = VerifyRig::start().await.expect("the rig starts");
    // A step that waits long, so the browser is surely running when its arguments are read.
    rig.save(click_flow(
        "slow",
        "counter-increment",
        "never.sent",
        20_000,
    ))
    .await
    .expect("the flow is saved");
    let url = rig.url("");
    let (ran, seen) = rig
        .verify_killing_browser(&harness::binaries::reticle(), &url, &[])
        .await;
    let argv: Vec<String> = serde_json::from_value(seen["argv"].clone()).unwrap_or_default();
    assert!(
        !argv.is_empty(),
        "verify's browser was not seen: {seen} {}",
        ran.said()
    );
    assert_eq!(flag_faults(&argv), Vec::<String>::new(), "{argv:?}");
    assert!(argv.iter().any(|a| a == "--headless"), "{argv:?}");
    assert!(
        argv.iter()
            .any(|arg| arg.starts_with("http://") && arg.contains("-j1-f1")),
        "the first flow's URL is on Chromium's command line: {argv:?}"
    );
    let singleton: Option<PathBuf> = serde_json::from_value(seen["singletonDir"].clone()).ok();
    assert_eq!(left_behind(singleton.as_deref()), None, "{seen}");
    rig.daemon.shutdown().await;
}

/// What a killed Chromium left on disk: its singleton socket's directory, when it outlived the
/// browser (or was never seen).
fn left_behind(singleton: Option<&Path>) -> Option<String> {
    match singleton {
        None => Some("the browser's singleton socket was not seen".into()),
        Some(dir) if dir.exists() => Some(format!("{} outlived the browser", dir.display())),
        Some(_) => None,
    }
}

/// Kills the Chromium with `pid` and waits, with a bound, until its process is gone (a dead
/// process, reaped or not, shows no arguments).
async fn kill_browser(pid: i32) {
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    poll::within(Duration::from_secs(10), async || {
        browser_argv(pid).is_empty().then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_killed_harness_browser_leaves_nothing_in_the_shared_temporary_dir() {
    let browser = harness::Browser::launch().await.expect("chromium starts");
    let pid = i32::try_from(browser.pid().expect("the browser's pid")).expect("a pid");
    let singleton = singleton_dir(&browser_argv(pid));
    kill_browser(pid).await;
    drop(browser);
    assert_eq!(left_behind(singleton.as_deref()), None);
}

/// The control: Chromium launched as the harness and verify used to (no `TMPDIR` of its own),
/// killed, leaves its singleton socket's directory in the shared temporary dir.
#[tokio::test]
async fn the_check_goes_red_on_a_browser_launched_without_a_temporary_dir_of_its_own() {
    let profile = tempfile::tempdir().expect("a profile dir");
    let mut command = std::process::Command::new(harness::browser::CHROMIUM);
    command
        .arg("--headless")
        .args(CHROMIUM_FLAGS)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--remote-debugging-port=0")
        .arg("about:blank")
        .env_remove("TMPDIR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    harness::marker::mark(&mut command);
    let mut child = command.spawn().expect("chromium starts");
    let pid = i32::try_from(child.id()).expect("a pid");
    let singleton = poll::within(Duration::from_secs(30), async || {
        singleton_dir(&browser_argv(pid))
    })
    .await;
    let _ = child.kill();
    let _ = child.wait();
    let verdict = left_behind(singleton.as_deref());
    if let Some(dir) = &singleton {
        let _ = std::fs::remove_dir_all(dir);
    }
    assert!(
        verdict.is_some_and(|why| why.contains("outlived the browser")),
        "{singleton:?}"
    );
}

#[tokio::test]
async fn the_harness_browser_runs_with_every_product_flag() {
    let browser = harness::Browser::launch().await.expect("chromium starts");
    let pid = browser.pid().expect("the browser's pid");
    let argv = browser_argv(i32::try_from(pid).expect("a pid"));
    browser.close().await;
    assert!(!argv.is_empty(), "the harness's browser was not seen");
    assert_eq!(flag_faults(&argv), Vec::<String>::new(), "{argv:?}");
}
