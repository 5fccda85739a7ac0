//! The project's workspace, `<project>/.reticle/`: one root per daemon life, holding `flows/`,
//! `baselines/`, `runs/`, `capsules/`, `heals/` and `project.json`, each file a JSON object
//! stamped with [`FORMAT_FIELD`] and written atomically. A bad file or unknown format is refused
//! by name with the fix, never overwritten; names are checked ([`check_name`]) so no caller can
//! reach outside its folder.
//! It stores and reads JSON documents; it must not decide what they mean.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::{keep_newest, private, write_atomic, write_in_place};

/// The workspace's directory name inside the project.
pub const DIR_NAME: &str = ".reticle";
/// The field every stored document carries its format in.
pub const FORMAT_FIELD: &str = "format";
/// The one format this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;
/// The project file's name at the root.
pub const PROJECT_FILE: &str = "project.json";
/// The longest name a stored document may have (without `.json`).
pub const MAX_NAME_CHARS: usize = 100;

/// A folder of the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folder {
    Flows,
    Baselines,
    Runs,
    Capsules,
    Heals,
}

impl Folder {
    /// Every folder, in the order `reticle status` lists them.
    pub const ALL: [Folder; 5] = [
        Folder::Flows,
        Folder::Baselines,
        Folder::Runs,
        Folder::Capsules,
        Folder::Heals,
    ];

    /// The folder's directory name.
    pub const fn dir_name(self) -> &'static str {
        match self {
            Folder::Flows => "flows",
            Folder::Baselines => "baselines",
            Folder::Runs => "runs",
            Folder::Capsules => "capsules",
            Folder::Heals => "heals",
        }
    }

    /// Whether the folder holds what people review and commit (flows, baselines, heals: CI's
    /// `reticle verify` on a fresh clone reads them), rather than what one machine's sessions
    /// left behind (runs, capsules: bounded, and they hold what a session saw).
    pub const fn committed(self) -> bool {
        match self {
            Folder::Flows | Folder::Baselines | Folder::Heals => true,
            Folder::Runs | Folder::Capsules => false,
        }
    }

    /// How many files the folder keeps (newest first), when it is bounded.
    pub const fn kept(self) -> Option<usize> {
        match self {
            Folder::Runs => Some(500),
            Folder::Capsules => Some(50),
            Folder::Flows | Folder::Baselines | Folder::Heals => None,
        }
    }
}

/// Why a document could not be stored or read. Every variant names the file and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    #[error(
        "'{name}' is not a usable name: use 1 to {MAX_NAME_CHARS} letters, digits, '.', '_' or '-', not starting with '.'"
    )]
    BadName { name: String },
    #[error(
        "{path} is not valid JSON ({why}); fix it or move it aside: Reticle will not read or overwrite it"
    )]
    BadJson { path: String, why: String },
    #[error(
        "{path} has format {found}, and this Reticle reads format {FORMAT_VERSION} only; upgrade Reticle or move the file aside: it will not be read or overwritten"
    )]
    UnknownFormat { path: String, found: String },
    #[error("{path} could not be {doing}: {why}")]
    Io {
        path: String,
        doing: &'static str,
        why: String,
    },
}

impl StoreError {
    /// The fix, in a few words, for a caller to say after the error.
    pub fn recovery(&self) -> &'static str {
        match self {
            StoreError::BadName { .. } => "use a name of letters, digits, '.', '_' or '-'",
            StoreError::BadJson { .. } | StoreError::UnknownFormat { .. } => {
                "mend the file or move it aside, then call again"
            }
            StoreError::Io { .. } => "check the workspace directory's permissions and free space",
        }
    }
}

/// One listed document: its name and either its content or why it cannot be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub name: String,
    pub document: Result<Value, StoreError>,
}

/// How a workspace writes its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// [`write_atomic`]: a reader sees the old file or the whole new one.
    Atomic,
    /// Test only, the durability row's negative control: [`write_in_place`].
    InPlaceStandIn,
}

/// The workspace of one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
    writes: Writes,
}

impl Workspace {
    /// The workspace of the project at `project_dir`: `<project_dir>/.reticle`.
    pub fn of_project(project_dir: &Path) -> Self {
        Self {
            root: project_dir.join(DIR_NAME),
            writes: Writes::Atomic,
        }
    }

    /// The workspace of another project, written the way this one is.
    pub fn for_project(&self, project_dir: &Path) -> Self {
        Self {
            root: project_dir.join(DIR_NAME),
            writes: self.writes,
        }
    }

    /// This workspace writing its files the way `writes` says (a stand-in for a test).
    pub fn writing(self, writes: Writes) -> Self {
        Self { writes, ..self }
    }

    /// The workspace root (`.../.reticle`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of `folder`.
    pub fn folder(&self, folder: Folder) -> PathBuf {
        self.root.join(folder.dir_name())
    }

    /// Stores `document` (a JSON object) as `folder/<name>.json`, stamped with the format, and
    /// prunes a bounded folder. An existing file that cannot be read is refused, not replaced.
    /// Returns the path written.
    pub fn save(
        &self,
        folder: Folder,
        name: &str,
        document: &Map<String, Value>,
    ) -> Result<PathBuf, StoreError> {
        check_name(name)?;
        let dir = self.folder(folder);
        let file = format!("{name}.json");
        self.write_document(&dir, &file, document)?;
        if let Some(kept) = folder.kept() {
            keep_newest(&dir, kept, ".json");
        }
        Ok(dir.join(file))
    }

    /// The document `folder/<name>.json`, `None` when there is none.
    pub fn load(&self, folder: Folder, name: &str) -> Result<Option<Value>, StoreError> {
        check_name(name)?;
        read_document(&self.folder(folder).join(format!("{name}.json")))
    }

    /// Deletes `folder/<name>.json`; whether there was one.
    pub fn delete(&self, folder: Folder, name: &str) -> Result<bool, StoreError> {
        check_name(name)?;
        let path = self.folder(folder).join(format!("{name}.json"));
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(io_error(&path, "deleted", &err)),
        }
    }

    /// Every document of `folder`, by name; an unreadable one is listed with its refusal.
    pub fn list(&self, folder: Folder) -> Vec<Listed> {
        let dir = self.folder(folder);
        let Ok(entries) = fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".json"))
                    .filter(|n| check_name(n).is_ok())
                    .map(str::to_string)
            })
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|name| {
                let document = read_document(&dir.join(format!("{name}.json")))
                    .and_then(|d| d.ok_or_else(|| gone(&dir, &name)));
                Listed { name, document }
            })
            .collect()
    }

    /// Stores `project.json`.
    pub fn save_project(&self, document: &Map<String, Value>) -> Result<PathBuf, StoreError> {
        self.write_document(&self.root, PROJECT_FILE, document)?;
        Ok(self.root.join(PROJECT_FILE))
    }

    /// The project file, `None` when there is none.
    pub fn load_project(&self) -> Result<Option<Value>, StoreError> {
        read_document(&self.root.join(PROJECT_FILE))
    }

    fn write_document(
        &self,
        dir: &Path,
        file: &str,
        document: &Map<String, Value>,
    ) -> Result<(), StoreError> {
        let path = dir.join(file);
        // A file this build cannot read is the user's to mend: refuse rather than replace it.
        read_document(&path)?;
        let mut stamped = Map::new();
        stamped.insert(FORMAT_FIELD.into(), json!(FORMAT_VERSION));
        for (key, value) in document {
            if key != FORMAT_FIELD {
                stamped.insert(key.clone(), value.clone());
            }
        }
        let mut bytes = serde_json::to_vec_pretty(&Value::Object(stamped))
            .map_err(|e| io_error(&path, "encoded", &io::Error::other(e)))?;
        bytes.push(b'\n');
        match self.writes {
            Writes::Atomic => write_atomic(dir, file, &bytes),
            Writes::InPlaceStandIn => write_in_place(dir, file, &bytes),
        }
        .map_err(|e| io_error(&path, "written", &e))
    }
}

/// Where and how a file's JSON is broken, in words (serde's own text reads like a crash trace).
fn json_fault(err: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match err.classify() {
        Category::Eof => "it ends before the document does",
        Category::Syntax => "a syntax error",
        Category::Data => "a value of the wrong kind",
        Category::Io => "it could not be read",
    };
    format!("{what}, line {} column {}", err.line(), err.column())
}

/// A fresh name for a document of a bounded folder: `<epoch ms>-<pid>-<n>`, which sorts by age
/// the way the folder's pruning keeps the newest.
pub fn stamped_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let millis = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    format!(
        "{millis}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Checks a document name: 1 to [`MAX_NAME_CHARS`] of `[A-Za-z0-9._-]`, not starting with '.'.
pub fn check_name(name: &str) -> Result<(), StoreError> {
    let fine = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if fine {
        Ok(())
    } else {
        Err(StoreError::BadName {
            name: name.chars().take(MAX_NAME_CHARS + 1).collect(),
        })
    }
}

/// Reads one document without following a link: `None` when absent; bad JSON, a non-object or
/// an unknown format is refused by name.
fn read_document(path: &Path) -> Result<Option<Value>, StoreError> {
    let text = match private::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io_error(path, "read", &err)),
    };
    let shown = path.display().to_string();
    let value: Value = serde_json::from_str(&text).map_err(|e| StoreError::BadJson {
        path: shown.clone(),
        why: json_fault(&e),
    })?;
    match value.get(FORMAT_FIELD) {
        Some(Value::Number(n)) if n.as_u64() == Some(FORMAT_VERSION) => Ok(Some(value)),
        _ if !value.is_object() => Err(StoreError::BadJson {
            path: shown,
            why: "the document is not a JSON object".into(),
        }),
        found => Err(StoreError::UnknownFormat {
            path: shown,
            found: found.map_or_else(|| "(none)".to_string(), Value::to_string),
        }),
    }
}

fn gone(dir: &Path, name: &str) -> StoreError {
    io_error(
        &dir.join(format!("{name}.json")),
        "read",
        &io::Error::from(io::ErrorKind::NotFound),
    )
}

fn io_error(path: &Path, doing: &'static str, err: &io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        doing,
        why: err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::of_project(dir.path());
        (dir, ws)
    }

    #[test]
    fn a_saved_document_carries_the_format_and_loads_back() {
        let (dir, ws) = workspace();
        let path = ws
            .save(Folder::Flows, "sign-in", &doc(json!({"name": "sign-in"})))
            .unwrap();
        assert_eq!(path, dir.path().join(".reticle/flows/sign-in.json"));
        let loaded = ws.load(Folder::Flows, "sign-in").unwrap().unwrap();
        assert_eq!(loaded[FORMAT_FIELD], json!(FORMAT_VERSION));
        assert_eq!(loaded["name"], "sign-in");
        assert_eq!(ws.load(Folder::Flows, "other").unwrap(), None);
        assert!(ws.delete(Folder::Flows, "sign-in").unwrap());
        assert!(!ws.delete(Folder::Flows, "sign-in").unwrap());
        ws.save_project(&doc(json!({"runs": 0}))).unwrap();
        assert_eq!(ws.load_project().unwrap().unwrap()["runs"], 0);
    }

    #[test]
    fn names_that_could_leave_the_folder_are_refused() {
        let (_dir, ws) = workspace();
        for bad in ["", "../x", ".hidden", "a/b", "x\u{0}", &"n".repeat(101)] {
            assert!(
                matches!(
                    ws.save(Folder::Flows, bad, &Map::new()),
                    Err(StoreError::BadName { .. })
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn bad_json_is_refused_by_name_never_overwritten_and_listed() {
        let (_dir, ws) = workspace();
        ws.save(Folder::Flows, "good", &doc(json!({"a": 1})))
            .unwrap();
        let broken = ws.folder(Folder::Flows).join("broken.json");
        fs::write(&broken, b"{\"format\":1,").unwrap();
        let err = ws.load(Folder::Flows, "broken").unwrap_err();
        assert!(matches!(err, StoreError::BadJson { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains("broken.json") && message.contains("move it aside"),
            "{message}"
        );
        assert!(ws.save(Folder::Flows, "broken", &Map::new()).is_err());
        assert_eq!(fs::read(&broken).unwrap(), b"{\"format\":1,");
        let listed = ws.list(Folder::Flows);
        let names: Vec<&str> = listed.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["broken", "good"]);
        assert!(listed[0].document.is_err() && listed[1].document.is_ok());
    }

    #[test]
    fn an_unknown_format_is_refused_and_kept() {
        let (_dir, ws) = workspace();
        fs::create_dir_all(ws.folder(Folder::Baselines)).unwrap();
        let future = ws.folder(Folder::Baselines).join("home.json");
        fs::write(&future, b"{\"format\":2}").unwrap();
        let err = ws.load(Folder::Baselines, "home").unwrap_err();
        assert!(
            matches!(&err, StoreError::UnknownFormat { found, .. } if found == "2"),
            "{err:?}"
        );
        assert!(err.to_string().contains("upgrade Reticle"));
        assert!(ws.save(Folder::Baselines, "home", &Map::new()).is_err());
        assert_eq!(fs::read(&future).unwrap(), b"{\"format\":2}");
        fs::write(ws.root().join(PROJECT_FILE), b"{}").unwrap();
        assert!(matches!(
            ws.load_project(),
            Err(StoreError::UnknownFormat { .. })
        ));
    }

    #[test]
    fn runs_keep_the_newest_and_unbounded_folders_keep_all() {
        assert_eq!(Folder::Runs.kept(), Some(500));
        assert_eq!(Folder::Flows.kept(), None);
        let (_dir, ws) = workspace();
        let runs = ws.folder(Folder::Runs);
        fs::create_dir_all(&runs).unwrap();
        for i in 0..505u64 {
            fs::write(runs.join(format!("{}-r.json", 1000 + i)), b"{\"format\":1}").unwrap();
        }
        ws.save(Folder::Runs, "2000-r", &Map::new()).unwrap();
        let listed = ws.list(Folder::Runs);
        assert_eq!(listed.len(), 500);
        assert_eq!(listed[0].name, "1006-r");
        assert_eq!(listed[499].name, "2000-r");
    }
}
