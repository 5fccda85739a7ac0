//! Subcommands that are not built in: `reticle <name> ...` runs `reticle-<name> ...`, looked up
//! next to this binary first and then on PATH, as git and cargo do.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use super::Exit;

/// Replaces this process with `reticle-<name>`, passing the remaining arguments.
pub fn dispatch(args: Vec<OsString>) -> Result<(), Exit> {
    let mut args = args.into_iter();
    let Some(name) = args.next() else {
        return Err(Exit::usage("no command given; see `reticle --help`"));
    };
    let name = name.to_string_lossy().into_owned();
    let program = format!("reticle-{name}");
    let Some(path) = find(&program) else {
        return Err(Exit::usage(format!(
            "'{name}' is not a reticle command and no `{program}` was found next to this binary or on PATH; see `reticle --help`"
        )));
    };
    let err = std::process::Command::new(&path).args(args).exec();
    Err(Exit::failure(format!(
        "cannot run {}: {err}",
        path.display()
    )))
}

fn find(program: &str) -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(program)));
    let on_path = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    beside
        .into_iter()
        .chain(on_path)
        .find(|candidate| candidate.is_file())
}
