//! What both proxy processes (`reticle mcp` and `reticle mcp-worker`) do first: read their
//! settings and build their single-threaded runtime, saying on stderr why when either fails. It
//! must not start anything else.

use std::process::ExitCode;

use tokio::runtime::Runtime;

use super::settings::Settings;

/// The settings and runtime of the proxy process `program` on `port`, or the exit code to end
/// with (2 for unusable settings) once the reason is on stderr.
pub fn boot(program: &str, port: u16) -> Result<(Settings, Runtime), ExitCode> {
    let settings = Settings::from_env(port).map_err(|err| {
        crate::proxy::stderr::say(format_args!("{program}: {err}"));
        ExitCode::from(2)
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| {
            crate::proxy::stderr::say(format_args!(
                "{program}: cannot start the async runtime: {err}"
            ));
            ExitCode::FAILURE
        })?;
    Ok((settings, runtime))
}
