//! Where a client's config is on this machine: the directories a [`Location`] is relative to,
//! read once from the environment (`HOME`, `XDG_CONFIG_HOME`, `CODEX_HOME`, `PATH`) the way the
//! clients read them, the config file they resolve to with the name `reticle init` prints for
//! it, and whether the client is here at all (its settings or its program). It looks only at
//! whether a file exists (to pick the name a client's existing config has, and to find a
//! client); it must not read or write one.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::clients::{Base, Client, Evidence, Location, Scope};

/// The directories configs live under.
#[derive(Debug, Clone)]
pub struct Roots {
    project: PathBuf,
    home: Option<PathBuf>,
    config_home: Option<PathBuf>,
    codex_home: Option<PathBuf>,
    /// `PATH`, where a client's program is looked for.
    path: OsString,
}

/// One client's config file in one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    pub client: Client,
    pub path: PathBuf,
    /// How init's lines name it: relative to the project in the project scope, else in full.
    pub shown: String,
}

impl Roots {
    /// The roots for `project`, from this process's environment.
    pub fn from_env(project: &Path) -> Self {
        Self::from_vars(project, |name| std::env::var_os(name))
    }

    /// The roots for `project` with `home` as `$HOME` and no other variable set.
    #[cfg(test)]
    pub fn for_home(project: &Path, home: &Path) -> Self {
        let home = home.as_os_str().to_owned();
        Self::from_vars(project, move |name| (name == "HOME").then(|| home.clone()))
    }

    /// The roots for `project`, reading variables through `var`. An empty or relative value is
    /// ignored, as the clients ignore it.
    fn from_vars(project: &Path, var: impl Fn(&str) -> Option<OsString>) -> Self {
        let absolute = |name: &str| {
            var(name)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        let home = absolute("HOME");
        Self {
            project: project.to_path_buf(),
            config_home: absolute("XDG_CONFIG_HOME")
                .or_else(|| home.as_ref().map(|h| h.join(".config"))),
            codex_home: absolute("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex"))),
            home,
            path: var("PATH").unwrap_or_default(),
        }
    }

    fn root(&self, base: Base) -> Option<&PathBuf> {
        match base {
            Base::Project => Some(&self.project),
            Base::Home => self.home.as_ref(),
            Base::ConfigHome => self.config_home.as_ref(),
            Base::CodexHome => self.codex_home.as_ref(),
        }
    }

    /// What shows `client` is installed or configured here, as a phrase (`~/.cursor exists`,
    /// `` `codex` is on PATH ``), or `None` when nothing does: its config in either scope, a
    /// directory it keeps its settings in, or its program on PATH.
    pub fn found(&self, client: Client) -> Option<String> {
        let configs = [Scope::Project, Scope::User]
            .into_iter()
            .filter_map(|scope| self.config_file(client, scope).ok().flatten())
            .find(|file| file.path.exists())
            .map(|file| format!("{} exists", file.shown));
        let Evidence { homes, programs } = client.evidence();
        let settings = || {
            homes.iter().find_map(|(base, rel)| {
                let root = self.root(*base)?;
                let at = if rel.is_empty() {
                    root.clone()
                } else {
                    root.join(rel)
                };
                at.exists().then(|| format!("{} exists", at.display()))
            })
        };
        let program = || {
            programs.iter().find_map(|name| {
                find_executable(name, &self.path).map(|_| format!("`{name}` is on PATH"))
            })
        };
        configs.or_else(settings).or_else(program)
    }

    /// `client`'s config in `scope`. `Ok(None)`: the client has no config in that scope;
    /// `Err`: the environment names no home for it (the text says which variable to set).
    pub fn config_file(&self, client: Client, scope: Scope) -> Result<Option<ConfigFile>, String> {
        let Some(Location {
            base,
            path,
            or_existing,
        }) = client.location(scope)
        else {
            return Ok(None);
        };
        let root = self.root(base).ok_or_else(|| {
            format!(
                "{} ({}): HOME is not set to an absolute directory, so its user config cannot be found; set HOME (or use --scope project)",
                path,
                client.label()
            )
        })?;
        let path = match or_existing {
            Some(other) if !root.join(path).exists() && root.join(other).exists() => other,
            _ => path,
        };
        let full = root.join(path);
        let shown = match base {
            Base::Project => path.to_string(),
            _ => full.display().to_string(),
        };
        Ok(Some(ConfigFile {
            client,
            shown,
            path: full,
        }))
    }
}

/// The first executable file called `name` in the `PATH`-style list `path`.
pub fn find_executable(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(vars: &[(&str, &str)]) -> Roots {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Roots::from_vars(Path::new("/p"), move |name| {
            vars.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    fn path_of(roots: &Roots, client: Client, scope: Scope) -> PathBuf {
        roots.config_file(client, scope).unwrap().unwrap().path
    }

    #[test]
    fn project_configs_are_named_relative_to_the_project() {
        let file = roots(&[])
            .config_file(Client::Codex, Scope::Project)
            .unwrap()
            .unwrap();
        assert_eq!(file.path, Path::new("/p/.codex/config.toml"));
        assert_eq!(file.shown, ".codex/config.toml");
    }

    #[test]
    fn user_configs_live_under_home_and_the_homes_the_clients_honour() {
        let plain = roots(&[("HOME", "/h")]);
        assert_eq!(
            path_of(&plain, Client::Windsurf, Scope::User),
            Path::new("/h/.codeium/windsurf/mcp_config.json")
        );
        assert_eq!(
            path_of(&plain, Client::Codex, Scope::User),
            Path::new("/h/.codex/config.toml")
        );
        assert_eq!(
            path_of(&plain, Client::OpenCode, Scope::User),
            Path::new("/h/.config/opencode/opencode.json")
        );
        let moved = roots(&[
            ("HOME", "/h"),
            ("XDG_CONFIG_HOME", "/x"),
            ("CODEX_HOME", "/c"),
        ]);
        assert_eq!(
            path_of(&moved, Client::OpenCode, Scope::User),
            Path::new("/x/opencode/opencode.json")
        );
        assert_eq!(
            path_of(&moved, Client::Codex, Scope::User),
            Path::new("/c/config.toml")
        );
        let relative = roots(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "rel")]);
        assert_eq!(
            path_of(&relative, Client::OpenCode, Scope::User),
            Path::new("/h/.config/opencode/opencode.json")
        );
    }

    #[test]
    fn an_existing_jsonc_config_is_the_one_merged_into() {
        let project = tempfile::tempdir().unwrap();
        let roots = Roots::for_home(project.path(), Path::new("/h"));
        let file = |roots: &Roots| {
            roots
                .config_file(Client::OpenCode, Scope::Project)
                .unwrap()
                .unwrap()
        };
        assert_eq!(file(&roots).shown, "opencode.json");
        std::fs::write(project.path().join("opencode.jsonc"), "{}").unwrap();
        assert_eq!(file(&roots).shown, "opencode.jsonc");
        std::fs::write(project.path().join("opencode.json"), "{}").unwrap();
        assert_eq!(file(&roots).shown, "opencode.json");
    }

    /// A fake HOME: nothing there is nothing found; each kind of evidence alone is found, and
    /// named.
    #[test]
    fn a_client_is_found_by_its_config_its_settings_or_its_program() {
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("p");
        fs::create_dir_all(&project).unwrap();
        let bin = home.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        let with_path = |path: &Path| {
            let vars = [
                ("HOME", home.path().as_os_str().to_owned()),
                ("PATH", path.as_os_str().to_owned()),
            ];
            Roots::from_vars(&project, move |name| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
            })
        };
        let roots = with_path(&bin);
        for client in Client::ALL {
            assert_eq!(roots.found(client), None, "{client:?}");
        }
        fs::create_dir_all(home.path().join(".gemini")).unwrap();
        let gemini = roots.found(Client::Gemini).unwrap();
        assert!(gemini.ends_with("/.gemini exists"), "{gemini}");
        fs::write(project.join(".mcp.json"), "{}").unwrap();
        assert_eq!(
            roots.found(Client::ClaudeCode).as_deref(),
            Some(".mcp.json exists")
        );
        let codex = bin.join("codex");
        fs::write(&codex, "").unwrap();
        fs::set_permissions(&codex, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            roots.found(Client::Codex).as_deref(),
            Some("`codex` is on PATH")
        );
        // Control: the same program off PATH is not found.
        assert_eq!(with_path(&project).found(Client::Codex), None);
        assert_eq!(roots.found(Client::Cursor), None);
    }

    #[test]
    fn only_executable_files_count_as_found() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("reticle");
        fs::write(&file, "").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(find_executable("reticle", dir.path().as_os_str()), None);
        fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            find_executable("reticle", dir.path().as_os_str()),
            Some(file)
        );
    }

    #[test]
    fn without_home_a_user_config_is_refused_with_the_fix_and_windsurf_has_no_project_one() {
        let why = roots(&[])
            .config_file(Client::Gemini, Scope::User)
            .unwrap_err();
        assert!(why.contains("set HOME"), "{why}");
        assert_eq!(
            roots(&[]).config_file(Client::Windsurf, Scope::Project),
            Ok(None)
        );
    }
}
