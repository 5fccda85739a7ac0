//! The steps of `reticle init`, each returning the line it prints: merge Reticle into one client's
//! config file (in the client's format, JSON or TOML), add the SDK's lines to the app's
//! development build (with `--write`), make sure the pairing token exists, and
//! check that clients can find `reticle`. A step changes only what its line names, and nothing at
//! all in a dry run.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::clients::{COMMAND, Client, Format, SERVER_NAME, command_line, mcp_args};
use super::locations::{ConfigFile, find_executable};
use super::merge::{self, Change, ConfigRefusal, Merged};
use super::merge_toml;
use super::report::{Mark, Step, TokenSource};
use crate::auth::token::{PairingToken, TOKEN_FILE, TokenError, TokenSource as TokenOrigin};
use crate::config::env;
use crate::daemon::StateDir;
use crate::wiring::{AppEdit, Detected, detect, plan};

/// Writes (or, in a dry run, plans) Reticle's entry in the client's config `file`.
pub fn wire_client(file: &ConfigFile, port: u16, dry_run: bool) -> Step {
    let client = file.client;
    let shown = format!("{} ({})", file.shown, client.label());
    let path = &file.path;
    let existing = match crate::store::read_if_present(path) {
        Ok(existing) => existing,
        Err(err) => {
            return Step::new(
                Mark::Failed,
                format!(
                    "{shown}: cannot be read as text ({err}); nothing was written to it. Fix it or move it away, then run `reticle init` again."
                ),
            );
        }
    };
    let merged = match merge_into(existing.as_deref(), client, port) {
        Ok(merged) => merged,
        Err(refusal) => {
            return Step::new(
                Mark::Failed,
                format!(
                    "{shown} {refusal}; nothing was written to it. Fix the file (or add {} by hand), then run `reticle init` again.",
                    by_hand(client, port)
                ),
            );
        }
    };
    let command = command_line(port);
    if merged.change == Change::Unchanged {
        return Step::new(
            Mark::Unchanged,
            format!("{shown}: already starts `{command}`; unchanged"),
        );
    }
    let would = if dry_run { "would be " } else { "" };
    let what = match merged.change {
        Change::Created => format!("{would}created, starting `{command}`"),
        Change::Added => format!(
            "{would}added the {SERVER_NAME} server, starting `{command}` (kept {} other server(s))",
            merged.other_servers
        ),
        Change::Updated | Change::Unchanged => {
            format!("{would}updated the {SERVER_NAME} server to start `{command}`")
        }
    };
    if dry_run {
        return Step::new(Mark::Done, format!("{shown}: {what}"));
    }
    match write_through_links(path, merged.text.as_bytes()) {
        Ok(()) => Step::new(Mark::Done, format!("{shown}: {what}")),
        Err(err) => Step::new(
            Mark::Failed,
            format!(
                "{shown}: cannot be written ({err}); it was left as it was. Make {} writable, then run `reticle init` again.",
                path.parent().unwrap_or(path).display()
            ),
        ),
    }
}

/// Wires the app's development build (with `write`), or prints exactly what that would change:
/// the file, and the lines added to it. A stack it does not wire, or a file it cannot read or
/// parse, is named with the manual line, and nothing is written. Also says whether the app's
/// build loads the SDK once the step is done.
pub fn wire_app(project: &Path, port: u16, write: bool, dry_run: bool) -> (Step, bool) {
    let manual = format!(
        "add this line to your app's development build by hand: {}",
        super::report::one_line(port)
    );
    let not_wired = |mark: Mark, text: String| (Step::new(mark, text), false);
    let stack = match detect(project) {
        Detected::Supported(stack) => stack,
        Detected::NoApp => {
            return not_wired(
                Mark::Unchanged,
                format!(
                    "app: none here yet (no package.json naming Vite or Next.js, no index.html); run `reticle init --write` once there is one, or {manual}"
                ),
            );
        }
        Detected::Unsupported(why) => {
            return not_wired(Mark::NeedsUser, format!("app: {why}; {manual}"));
        }
        Detected::Unreadable { file, why } => {
            return not_wired(
                Mark::NeedsUser,
                format!("app: {} {why}; it was left alone: {manual}", file.display()),
            );
        }
    };
    let shown = format!("{} ({} app)", stack.file().display(), stack.label());
    let path = project.join(stack.file());
    let existing = match crate::store::read_if_present(&path) {
        Ok(existing) => existing,
        Err(err) => {
            return not_wired(
                Mark::NeedsUser,
                format!("{shown}: cannot be read as text ({err}); it was left alone: {manual}"),
            );
        }
    };
    let (text, what) = match plan(&stack, existing.as_deref(), port) {
        AppEdit::Unchanged => {
            let line = format!("{shown}: already loads the daemon's SDK in development; unchanged");
            return (Step::new(Mark::Unchanged, line), true);
        }
        AppEdit::Refused(why) => {
            return not_wired(
                Mark::NeedsUser,
                format!("{shown} {why}; it was left alone: {manual}"),
            );
        }
        AppEdit::Create { text } => (text, "created with these lines"),
        AppEdit::Change {
            text,
            replaced: true,
        } => (text, "Reticle's lines replaced by these"),
        AppEdit::Change {
            text,
            replaced: false,
        } => (text, "these lines added"),
    };
    let lines = indented(&stack.snippet(port));
    if dry_run || !write {
        let how = if dry_run {
            "dry run"
        } else {
            "run `reticle init --write` to make the change"
        };
        return not_wired(
            Mark::NeedsUser,
            format!("{shown}: not changed ({how}); these are the lines it would get:\n{lines}"),
        );
    }
    let created = existing.is_none();
    match write_through_links(&path, text.as_bytes()).and_then(|()| {
        // A source file it creates is the app's like any other (the private mode is for
        // Reticle's own files); a file it changes keeps its mode.
        if created {
            fs::set_permissions(&path, fs::Permissions::from_mode(SOURCE_FILE_MODE))
        } else {
            Ok(())
        }
    }) {
        Ok(()) => (
            Step::new(Mark::Done, format!("{shown}: {what}:\n{lines}")),
            true,
        ),
        Err(err) => not_wired(
            Mark::Failed,
            format!("{shown}: cannot be written ({err}); it was left as it was"),
        ),
    }
}

/// The line for the app's stores `reticle init` cannot register itself (Redux's, Zustand's:
/// they live in the app's own modules): the exact lines to add where the store is created.
/// None when the app has none (Pinia's are registered by the snippet itself).
pub fn stores_by_hand(project: &Path, port: u16) -> Option<Step> {
    let Detected::Supported(stack) = detect(project) else {
        return None;
    };
    let (label, lines) = crate::wiring::stores_by_hand(project, &stack, port)?;
    Some(Step::new(
        Mark::NeedsUser,
        format!(
            "stores: {label}'s store lives in your own code, so init cannot register it; add these lines where it is created (with your store's name and variable) so `reticle_state` reads it:\n{}",
            indented(&lines)
        ),
    ))
}

/// The mode of an app source file `reticle init --write` creates (`instrumentation-client.js`).
const SOURCE_FILE_MODE: u32 = 0o644;

fn indented(snippet: &str) -> String {
    snippet
        .lines()
        .map(|line| format!("      {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Merges Reticle's entry into `existing`, in the client's format.
fn merge_into(existing: Option<&str>, client: Client, port: u16) -> Result<Merged, ConfigRefusal> {
    match client.format() {
        Format::Json {
            servers_at,
            new_file,
        } => merge::merge(existing, servers_at, new_file, &client.entry_fields(port)),
        Format::Toml { table } => merge_toml::merge(existing, table, COMMAND, &mcp_args(port)),
    }
}

/// Reticle's entry as the user would add it to the client's file by hand.
fn by_hand(client: Client, port: u16) -> String {
    match client.format() {
        Format::Json { servers_at, .. } => {
            let path = servers_at
                .last()
                .expect("a client names where its servers are");
            format!(
                "\"{SERVER_NAME}\": {} under \"{}\"",
                serde_json::Value::Object(client.entry_fields(port)),
                path.join("\".\"")
            )
        }
        Format::Toml { table } => {
            let args: Vec<String> = mcp_args(port).iter().map(|a| format!("\"{a}\"")).collect();
            format!(
                "a table [{table}.{SERVER_NAME}] with command = \"{COMMAND}\" and args = [{}]",
                args.join(", ")
            )
        }
    }
}

/// Writes atomically to the file `path` names, following a symlink to its target so that a
/// linked config stays linked.
fn write_through_links(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", target.display()),
        ));
    };
    crate::store::write_atomic(dir, &name.to_string_lossy(), bytes)
}

/// Makes sure the page has a pairing token to present: `RETICLE_TOKEN`, or the token file in the
/// state dir (created 0600 unless this is a dry run). The token it reports on is checked: a bad
/// one fails the step naming it and the fix, and a file readable by others is tightened (said).
pub fn provision_token(dry_run: bool) -> (Step, Option<TokenSource>) {
    let failed = |why: String| {
        (
            Step::new(Mark::Failed, format!("pairing token: {why}")),
            None,
        )
    };
    if std::env::var_os(env::TOKEN).is_some() {
        return match std::env::var(env::TOKEN)
            .map_err(|_| "is not valid UTF-8")
            .and_then(PairingToken::from_value)
        {
            Ok(_) => (
                Step::new(
                    Mark::Unchanged,
                    format!(
                        "pairing token: {} is set and a daemon started with it uses its value; set it in your agent's environment too",
                        env::TOKEN
                    ),
                ),
                Some(TokenSource::Environment),
            ),
            Err(why) => failed(TokenError::BadVariable { why: why.into() }.to_string()),
        };
    }
    let state = StateDir::from_env();
    let path = state.root().join(TOKEN_FILE);
    let source = Some(TokenSource::File(path.clone()));
    let shown = path.display();
    if dry_run {
        let planned = match crate::store::private::read_to_string(&path) {
            Ok(text) => {
                match PairingToken::from_value(text.trim_end_matches(['\n', '\r']).to_string()) {
                    Ok(_) => {
                        return (
                            Step::new(
                                Mark::Unchanged,
                                format!("pairing token: already in {shown}"),
                            ),
                            source,
                        );
                    }
                    Err(why) => {
                        return failed(
                            TokenError::BadFile {
                                path: path.clone(),
                                why: why.into(),
                            }
                            .to_string(),
                        );
                    }
                }
            }
            Err(_) => format!("would be created in {shown}"),
        };
        return (
            Step::new(Mark::Done, format!("pairing token: {planned}")),
            source,
        );
    }
    if let Some(problem) = state.problem() {
        return failed(problem);
    }
    match PairingToken::load_or_provision(state.root()) {
        Ok(loaded) => {
            let (mark, text) = match loaded.source {
                TokenOrigin::Created => (
                    Mark::Done,
                    format!("created {shown} (readable only by you)"),
                ),
                TokenOrigin::Tightened(mode) => (
                    Mark::Done,
                    format!(
                        "already in {shown}, which was readable by others (mode {mode:o}); it is now readable only by you (0600)"
                    ),
                ),
                TokenOrigin::File | TokenOrigin::Environment => {
                    (Mark::Unchanged, format!("already in {shown}"))
                }
            };
            (Step::new(mark, format!("pairing token: {text}")), source)
        }
        Err(err) => failed(err.to_string()),
    }
}

/// Checks that a client starting `reticle` by name finds a program: the configs name no path.
pub fn check_on_path() -> Step {
    let path = std::env::var_os("PATH").unwrap_or_default();
    match find_executable(COMMAND, &path) {
        Some(found) => Step::new(
            Mark::Done,
            format!(
                "clients will start `{COMMAND}` from PATH: {}",
                found.display()
            ),
        ),
        None => {
            let this_dir = std::env::current_exe()
                .ok()
                .and_then(|exe| exe.parent().map(Path::to_path_buf));
            let fix = match this_dir {
                Some(dir) => format!("put {} on PATH", dir.display()),
                None => "put the directory holding `reticle` on PATH".to_string(),
            };
            Step::new(
                Mark::NeedsUser,
                format!(
                    "no `{COMMAND}` on PATH, and the clients start it by name: {fix} (or run `cargo install --path reticle`) in the environment your agent starts from"
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::init::clients::Scope;
    use crate::cli::init::locations::Roots;

    /// `client`'s project config under `project`.
    fn in_project(project: &Path, client: Client) -> ConfigFile {
        Roots::from_env(project)
            .config_file(client, Scope::Project)
            .unwrap()
            .expect("the client has a project config")
    }

    #[test]
    fn a_malformed_config_is_refused_by_name_and_left_byte_for_byte() {
        let project = tempfile::tempdir().unwrap();
        let path = project.path().join(".mcp.json");
        fs::write(&path, "{ not json").unwrap();
        let step = wire_client(&in_project(project.path(), Client::ClaudeCode), 4401, false);
        assert_eq!(step.mark, Mark::Failed, "{step}");
        assert!(
            step.text
                .starts_with(".mcp.json (Claude Code) is not valid JSON"),
            "{step}"
        );
        assert!(step.text.contains("nothing was written"), "{step}");
        assert!(step.text.contains("run `reticle init` again"), "{step}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "{ not json");
    }

    #[test]
    fn a_dry_run_writes_nothing() {
        let project = tempfile::tempdir().unwrap();
        let step = wire_client(&in_project(project.path(), Client::Cursor), 4401, true);
        assert_eq!(step.mark, Mark::Done);
        assert!(step.text.contains("would be created"), "{step}");
        assert!(!project.path().join(".cursor").exists());
    }

    #[test]
    fn a_linked_config_stays_linked() {
        let project = tempfile::tempdir().unwrap();
        let shared = project.path().join("shared.json");
        fs::write(&shared, r#"{"mcpServers": {}}"#).unwrap();
        std::os::unix::fs::symlink(&shared, project.path().join(".mcp.json")).unwrap();
        let step = wire_client(&in_project(project.path(), Client::ClaudeCode), 4401, false);
        assert_eq!(step.mark, Mark::Done, "{step}");
        let link = fs::symlink_metadata(project.path().join(".mcp.json")).unwrap();
        assert!(link.file_type().is_symlink());
        assert!(fs::read_to_string(&shared).unwrap().contains("\"reticle\""));
    }

    #[test]
    fn an_app_file_it_creates_is_an_ordinary_source_file_and_a_changed_one_keeps_its_mode() {
        let project = tempfile::tempdir().unwrap();
        fs::create_dir_all(project.path().join("app")).unwrap();
        fs::write(
            project.path().join("package.json"),
            r#"{"dependencies":{"next":"16.4.6"}}"#,
        )
        .unwrap();
        let (step, wired) = wire_app(project.path(), 4400, true, false);
        assert!(wired && step.mark == Mark::Done, "{step}");
        let created = project.path().join("instrumentation-client.js");
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&created), SOURCE_FILE_MODE);
        fs::write(&created, "console.log(1);\n").unwrap();
        fs::set_permissions(&created, fs::Permissions::from_mode(0o640)).unwrap();
        let (step, _) = wire_app(project.path(), 4400, true, false);
        assert_eq!(step.mark, Mark::Done, "{step}");
        assert_eq!(mode(&created), 0o640);
    }
}

/// Every client's file, in both formats: what is written, that a second run changes nothing,
/// that the file's mode is kept, and that a malformed file is refused by name and left alone.
#[cfg(test)]
mod per_client {
    use super::*;
    use crate::cli::init::clients::Scope;
    use crate::cli::init::locations::Roots;

    /// Each client's config as a user-scope file in a private home, and the home.
    fn user_files() -> (tempfile::TempDir, Vec<ConfigFile>) {
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("project");
        let roots = Roots::for_home(&project, home.path());
        let files = Client::ALL
            .iter()
            .map(|client| roots.config_file(*client, Scope::User).unwrap().unwrap())
            .collect();
        (home, files)
    }

    /// Text that is not valid in the file's format.
    fn malformed(client: Client) -> &'static str {
        match client.format() {
            Format::Json { .. } => "{ \"servers\": ",
            Format::Toml { .. } => "[mcp_servers.docs\ncommand = 1\n",
        }
    }

    #[test]
    fn each_clients_written_file_is_what_its_documentation_gives() {
        let (_home, files) = user_files();
        for file in &files {
            let step = wire_client(file, 4401, false);
            assert_eq!(step.mark, Mark::Done, "{step}");
            assert!(
                step.text
                    .contains("created, starting `reticle mcp --port 4401`"),
                "{step}"
            );
            let name = format!("{:?}", file.client).to_lowercase();
            insta::assert_snapshot!(name, fs::read_to_string(&file.path).unwrap());
        }
    }

    #[test]
    fn a_second_run_changes_nothing_in_any_client_file() {
        let (_home, files) = user_files();
        for file in &files {
            assert_eq!(wire_client(file, 4401, false).mark, Mark::Done);
            let before = fs::read(&file.path).unwrap();
            let second = wire_client(file, 4401, false);
            assert_eq!(second.mark, Mark::Unchanged, "{second}");
            assert!(second.text.ends_with("unchanged"), "{second}");
            assert_eq!(fs::read(&file.path).unwrap(), before, "{}", file.shown);
        }
    }

    #[test]
    fn a_private_file_stays_private_when_reticle_is_added() {
        let (_home, files) = user_files();
        for file in &files {
            fs::create_dir_all(file.path.parent().unwrap()).unwrap();
            fs::write(&file.path, "").unwrap();
            fs::set_permissions(&file.path, fs::Permissions::from_mode(0o600)).unwrap();
            let step = wire_client(file, 4401, false);
            assert_eq!(step.mark, Mark::Done, "{step}");
            let mode = fs::metadata(&file.path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", file.shown);
        }
    }

    #[test]
    fn a_malformed_file_of_each_client_is_refused_by_name_and_left_byte_for_byte() {
        let (_home, files) = user_files();
        for file in &files {
            let broken = malformed(file.client);
            fs::create_dir_all(file.path.parent().unwrap()).unwrap();
            fs::write(&file.path, broken).unwrap();
            let step = wire_client(file, 4401, false);
            assert_eq!(step.mark, Mark::Failed, "{step}");
            let named = format!("{} ({}) is not valid", file.shown, file.client.label());
            assert!(step.text.starts_with(&named), "{step}");
            assert!(step.text.contains("nothing was written"), "{step}");
            assert!(step.text.contains("by hand"), "{step}");
            assert!(step.text.contains("run `reticle init` again"), "{step}");
            assert_eq!(fs::read_to_string(&file.path).unwrap(), broken);
        }
    }

    #[test]
    fn the_by_hand_entry_names_the_clients_own_shape() {
        assert_eq!(
            by_hand(Client::Codex, 4401),
            "a table [mcp_servers.reticle] with command = \"reticle\" and args = [\"mcp\", \"--port\", \"4401\"]"
        );
        assert_eq!(
            by_hand(Client::OpenCode, 4400),
            "\"reticle\": {\"type\":\"local\",\"command\":[\"reticle\",\"mcp\"]} under \"mcp\""
        );
    }
}
