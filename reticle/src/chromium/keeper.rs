//! The keeper: a small process between a launcher and its Chromium. It starts Chromium in a
//! process group of its own (told to die with the keeper), says its pid, and ends the whole group
//! when Chromium exits or its own parent does (even killed: it watches its parent id), then
//! removes the profile. It must not remove anything but the profile it was handed.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::{Pid, getppid};

/// The first argument that turns `reticle` into a keeper (not a subcommand anyone types).
pub const KEEPER_ARG: &str = "__chromium-keeper";

/// The line the keeper writes on stderr, before Chromium's own lines, naming Chromium's pid.
pub const PID_LINE: &str = "reticle chromium-keeper: chromium pid ";

/// How often the keeper looks whether Chromium or its own parent has gone.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// How long the profile's removal is retried while Chromium's helpers let go of it.
const RELEASE_BOUND: Duration = Duration::from_secs(5);

/// Whether this process was started as a keeper.
pub fn asked() -> bool {
    std::env::args_os().nth(1).is_some_and(|a| a == KEEPER_ARG)
}

/// The keeper's arguments after [`KEEPER_ARG`]: the profile, the binary, then Chromium's own.
pub fn arguments(
    profile: &std::path::Path,
    binary: &std::path::Path,
    args: &[String],
) -> Vec<OsString> {
    let mut all = vec![
        OsString::from(KEEPER_ARG),
        profile.as_os_str().to_owned(),
        binary.as_os_str().to_owned(),
    ];
    all.extend(args.iter().map(OsString::from));
    all
}

/// Runs the keeper: the process's arguments are [`arguments`]. Its exit code is Chromium's.
pub fn keep() -> ExitCode {
    let mut args = std::env::args_os().skip(2);
    let (Some(profile), Some(binary)) = (args.next(), args.next()) else {
        eprintln!("reticle chromium-keeper: expected a profile and a Chromium binary");
        return ExitCode::from(2);
    };
    let profile = PathBuf::from(profile);
    let parent = getppid();
    let mut command = Command::new(&binary);
    command
        .args(args)
        .env("TMPDIR", &profile)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // SAFETY: between fork and exec the closure makes two async-signal-safe system calls only.
    unsafe {
        command.pre_exec(|| {
            nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            Ok(())
        });
    }
    let mut chromium = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "reticle chromium-keeper: {} did not start: {e}",
                PathBuf::from(&binary).display()
            );
            let _ = std::fs::remove_dir_all(&profile);
            return ExitCode::from(1);
        }
    };
    eprintln!("{PID_LINE}{}", chromium.id());
    let group = Pid::from_raw(i32::try_from(chromium.id()).unwrap_or(0));
    let code = loop {
        if let Ok(Some(status)) = chromium.try_wait() {
            break status.code().unwrap_or(1);
        }
        if getppid() != parent {
            let _ = killpg(group, Signal::SIGKILL);
            let _ = chromium.wait();
            break 1;
        }
        std::thread::sleep(WATCH_EVERY);
    };
    // Chromium's helpers (its zygote, renderers) share its group: none outlives it.
    let _ = killpg(group, Signal::SIGKILL);
    crate::store::remove_dir_released(&profile, RELEASE_BOUND);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
