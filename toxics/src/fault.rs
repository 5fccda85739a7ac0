//! The fault shape for everything that is not a TCP hop: a kind, a target, parameters.
//!
//! ```json
//! {"kind": "sigstop", "target": {"type": "process", "role": "daemon"}, "params": {"hold_ms": 500}}
//! ```
//!
//! Families: stdio (`delay`, `garbage`, `close_stdin`, `kill_stdio_owner`, and the
//! `lsof_kill_recipe` an agent uses to clear a port, which kills whatever holds it, clients
//! included), process (`sigkill`, `sigstop`, `sigterm`, `squat_port`, `read_only_state_dir`),
//! browser (`close_tab`, `reload`, `background`, `offline`). This module owns the vocabulary as plain serde data: the names,
//! which target each kind takes, its parameters, and how it heals. It must not carry a fault
//! out; executors belong to the harness.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::direction::Direction;

/// Which part of the system a fault disturbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// The stdio link between an agent and `reticle mcp`.
    Stdio,
    /// A process the harness owns, its port or its state directory.
    Process,
    /// The browser tab a session lives in.
    Browser,
}

/// Every non-TCP fault, by wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// Hold stdio bytes back for a while.
    Delay,
    /// Write bytes that are not protocol into a stdio stream.
    Garbage,
    /// Close the server's stdin.
    CloseStdin,
    /// SIGKILL the process that owns the stdio pipes.
    KillStdioOwner,
    /// `lsof -ti tcp:PORT | xargs kill -9`: kill every process holding a port, clients too.
    LsofKillRecipe,
    /// SIGKILL a process.
    Sigkill,
    /// SIGSTOP a process (SIGCONT heals it).
    Sigstop,
    /// SIGTERM a process.
    Sigterm,
    /// Bind a port before its owner does.
    SquatPort,
    /// Make a state directory read-only.
    ReadOnlyStateDir,
    /// Close the tab mid-command.
    CloseTab,
    /// Reload the tab.
    Reload,
    /// Send the tab to the background.
    Background,
    /// Take the tab offline (through CDP).
    Offline,
}

/// How a fault is undone, for the heal phase that ends every scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heal {
    /// An inverse action undoes it (named here for the executor and the history).
    Undo(&'static str),
    /// What it broke is gone: the target must be started (or opened) again.
    Respawn,
    /// It happens once and leaves nothing installed.
    Transient,
}

impl FaultKind {
    /// Every kind, in declaration order.
    pub const ALL: [FaultKind; 14] = [
        FaultKind::Delay,
        FaultKind::Garbage,
        FaultKind::CloseStdin,
        FaultKind::KillStdioOwner,
        FaultKind::LsofKillRecipe,
        FaultKind::Sigkill,
        FaultKind::Sigstop,
        FaultKind::Sigterm,
        FaultKind::SquatPort,
        FaultKind::ReadOnlyStateDir,
        FaultKind::CloseTab,
        FaultKind::Reload,
        FaultKind::Background,
        FaultKind::Offline,
    ];

    /// The snake_case wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Delay => "delay",
            FaultKind::Garbage => "garbage",
            FaultKind::CloseStdin => "close_stdin",
            FaultKind::KillStdioOwner => "kill_stdio_owner",
            FaultKind::LsofKillRecipe => "lsof_kill_recipe",
            FaultKind::Sigkill => "sigkill",
            FaultKind::Sigstop => "sigstop",
            FaultKind::Sigterm => "sigterm",
            FaultKind::SquatPort => "squat_port",
            FaultKind::ReadOnlyStateDir => "read_only_state_dir",
            FaultKind::CloseTab => "close_tab",
            FaultKind::Reload => "reload",
            FaultKind::Background => "background",
            FaultKind::Offline => "offline",
        }
    }

    /// The family it belongs to.
    pub fn family(self) -> Family {
        match self {
            FaultKind::Delay
            | FaultKind::Garbage
            | FaultKind::CloseStdin
            | FaultKind::KillStdioOwner
            | FaultKind::LsofKillRecipe => Family::Stdio,
            FaultKind::Sigkill
            | FaultKind::Sigstop
            | FaultKind::Sigterm
            | FaultKind::SquatPort
            | FaultKind::ReadOnlyStateDir => Family::Process,
            FaultKind::CloseTab
            | FaultKind::Reload
            | FaultKind::Background
            | FaultKind::Offline => Family::Browser,
        }
    }

    /// The kind of target it takes.
    pub fn target_type(self) -> TargetType {
        match self {
            FaultKind::Delay
            | FaultKind::Garbage
            | FaultKind::CloseStdin
            | FaultKind::KillStdioOwner => TargetType::Stdio,
            FaultKind::Sigkill | FaultKind::Sigstop | FaultKind::Sigterm => TargetType::Process,
            FaultKind::LsofKillRecipe | FaultKind::SquatPort => TargetType::Port,
            FaultKind::ReadOnlyStateDir => TargetType::Path,
            FaultKind::CloseTab
            | FaultKind::Reload
            | FaultKind::Background
            | FaultKind::Offline => TargetType::Tab,
        }
    }

    /// How it is undone.
    pub fn heal(self) -> Heal {
        match self {
            FaultKind::Delay => Heal::Undo("stop delaying"),
            FaultKind::Garbage | FaultKind::Reload => Heal::Transient,
            FaultKind::CloseStdin
            | FaultKind::KillStdioOwner
            | FaultKind::LsofKillRecipe
            | FaultKind::Sigkill
            | FaultKind::Sigterm
            | FaultKind::CloseTab => Heal::Respawn,
            FaultKind::Sigstop => Heal::Undo("SIGCONT"),
            FaultKind::SquatPort => Heal::Undo("release the port"),
            FaultKind::ReadOnlyStateDir => Heal::Undo("restore the directory's mode"),
            FaultKind::Background => Heal::Undo("bring the tab to the foreground"),
            FaultKind::Offline => Heal::Undo("go back online"),
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FaultKind {
    type Err = FaultError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FaultKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| FaultError::UnknownKind(s.to_owned()))
    }
}

impl Serialize for FaultKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FaultKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(D::Error::custom)
    }
}

/// What a fault is aimed at. Roles are the harness's names for what it owns (`daemon`,
/// `mcp`, `fixture_app`, `browser`); the harness resolves them to pids and pipes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Target {
    /// A process, by role.
    Process {
        /// The role of the process.
        role: String,
    },
    /// The stdio pipes of a process, by the role of the process on the server end.
    Stdio {
        /// The role of the process whose stdin/stdout carry the link.
        role: String,
    },
    /// A TCP port on loopback.
    Port {
        /// The port number.
        port: u16,
    },
    /// A directory.
    Path {
        /// Its path.
        path: PathBuf,
    },
    /// A browser tab.
    Tab {
        /// The session living in it; absent means the scenario's current tab.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
}

/// The kinds of [`Target`], for saying which one a fault needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetType {
    /// [`Target::Process`].
    Process,
    /// [`Target::Stdio`].
    Stdio,
    /// [`Target::Port`].
    Port,
    /// [`Target::Path`].
    Path,
    /// [`Target::Tab`].
    Tab,
}

impl TargetType {
    /// The wire name (the `type` field of a target).
    pub fn as_str(self) -> &'static str {
        match self {
            TargetType::Process => "process",
            TargetType::Stdio => "stdio",
            TargetType::Port => "port",
            TargetType::Path => "path",
            TargetType::Tab => "tab",
        }
    }
}

impl Target {
    /// Which kind of target this is.
    pub fn target_type(&self) -> TargetType {
        match self {
            Target::Process { .. } => TargetType::Process,
            Target::Stdio { .. } => TargetType::Stdio,
            Target::Port { .. } => TargetType::Port,
            Target::Path { .. } => TargetType::Path,
            Target::Tab { .. } => TargetType::Tab,
        }
    }
}

/// Parameters of `delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StdioDelay {
    /// Milliseconds each chunk is held back.
    pub ms: u64,
    /// `upstream` is agent to server (stdin), `downstream` server to agent (stdout; default).
    #[serde(default)]
    pub stream: Direction,
}

/// Parameters of `garbage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StdioGarbage {
    /// How many bytes of non-protocol data to write.
    pub bytes: usize,
    /// Which stream gets them (default downstream, the server's stdout).
    #[serde(default)]
    pub stream: Direction,
    /// Seed for the bytes, so a run can be replayed; the harness's seed when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// Parameters of a fault that stays for a while and then heals itself, or stays until the
/// heal phase when `hold_ms` is absent (`sigstop`, `background`, `offline`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hold {
    /// Milliseconds before the fault heals itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_ms: Option<u64>,
}

/// Parameters of a fault that has none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// A fault's parameters; the variant names the kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Params {
    /// `delay`: hold a stdio stream back.
    Delay(StdioDelay),
    /// `garbage`: write non-protocol bytes into a stdio stream.
    Garbage(StdioGarbage),
    /// `close_stdin`.
    CloseStdin,
    /// `kill_stdio_owner`.
    KillStdioOwner,
    /// `lsof_kill_recipe`.
    LsofKillRecipe,
    /// `sigkill`.
    Sigkill,
    /// `sigstop`, optionally continued after a while.
    Sigstop(Hold),
    /// `sigterm`.
    Sigterm,
    /// `squat_port`.
    SquatPort,
    /// `read_only_state_dir`.
    ReadOnlyStateDir,
    /// `close_tab`.
    CloseTab,
    /// `reload`.
    Reload,
    /// `background`, optionally brought back after a while.
    Background(Hold),
    /// `offline`, optionally back online after a while.
    Offline(Hold),
}

impl Params {
    /// The kind these parameters belong to.
    pub fn kind(&self) -> FaultKind {
        match self {
            Params::Delay(_) => FaultKind::Delay,
            Params::Garbage(_) => FaultKind::Garbage,
            Params::CloseStdin => FaultKind::CloseStdin,
            Params::KillStdioOwner => FaultKind::KillStdioOwner,
            Params::LsofKillRecipe => FaultKind::LsofKillRecipe,
            Params::Sigkill => FaultKind::Sigkill,
            Params::Sigstop(_) => FaultKind::Sigstop,
            Params::Sigterm => FaultKind::Sigterm,
            Params::SquatPort => FaultKind::SquatPort,
            Params::ReadOnlyStateDir => FaultKind::ReadOnlyStateDir,
            Params::CloseTab => FaultKind::CloseTab,
            Params::Reload => FaultKind::Reload,
            Params::Background(_) => FaultKind::Background,
            Params::Offline(_) => FaultKind::Offline,
        }
    }

    /// Parse the parameters of `kind` from JSON (absent or null means `{}`).
    pub fn parse(kind: FaultKind, params: Value) -> Result<Params, FaultError> {
        let params = if params.is_null() {
            Value::Object(Default::default())
        } else {
            params
        };
        let bad = |source| FaultError::BadParams { kind, source };
        let none = |p: Value| serde_json::from_value::<NoParams>(p).map_err(bad);
        let hold = |p: Value| serde_json::from_value::<Hold>(p).map_err(bad);
        Ok(match kind {
            FaultKind::Delay => Params::Delay(serde_json::from_value(params).map_err(bad)?),
            FaultKind::Garbage => Params::Garbage(serde_json::from_value(params).map_err(bad)?),
            FaultKind::CloseStdin => none(params).map(|_| Params::CloseStdin)?,
            FaultKind::KillStdioOwner => none(params).map(|_| Params::KillStdioOwner)?,
            FaultKind::LsofKillRecipe => none(params).map(|_| Params::LsofKillRecipe)?,
            FaultKind::Sigkill => none(params).map(|_| Params::Sigkill)?,
            FaultKind::Sigstop => Params::Sigstop(hold(params)?),
            FaultKind::Sigterm => none(params).map(|_| Params::Sigterm)?,
            FaultKind::SquatPort => none(params).map(|_| Params::SquatPort)?,
            FaultKind::ReadOnlyStateDir => none(params).map(|_| Params::ReadOnlyStateDir)?,
            FaultKind::CloseTab => none(params).map(|_| Params::CloseTab)?,
            FaultKind::Reload => none(params).map(|_| Params::Reload)?,
            FaultKind::Background => Params::Background(hold(params)?),
            FaultKind::Offline => Params::Offline(hold(params)?),
        })
    }

    /// The parameters as JSON.
    pub fn to_value(&self) -> Value {
        let v = match self {
            Params::Delay(p) => serde_json::to_value(p),
            Params::Garbage(p) => serde_json::to_value(p),
            Params::Sigstop(p) | Params::Background(p) | Params::Offline(p) => {
                serde_json::to_value(p)
            }
            _ => serde_json::to_value(NoParams {}),
        };
        v.expect("fault parameters serialize")
    }
}

/// One non-TCP fault: what, aimed at what, how. Build with [`Fault::new`], which checks the
/// target fits the kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What it is aimed at.
    target: Target,
    /// What it does (and so its kind).
    params: Params,
}

/// A fault description that does not hold together.
#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    /// No fault has that name.
    #[error("unknown fault kind `{0}`")]
    UnknownKind(String),
    /// The parameters do not fit the kind.
    #[error("bad parameters for `{kind}`: {source}")]
    BadParams {
        /// The kind being parsed.
        kind: FaultKind,
        /// What serde found wrong.
        #[source]
        source: serde_json::Error,
    },
    /// The target is of the wrong type for the kind.
    #[error("`{kind}` takes a {expected} target, not a {found} one")]
    WrongTarget {
        /// The fault kind.
        kind: FaultKind,
        /// The target type it takes.
        expected: &'static str,
        /// The target type it was given.
        found: &'static str,
    },
}

impl Fault {
    /// A fault, checked: the target must be of the type the kind takes.
    pub fn new(target: Target, params: Params) -> Result<Fault, FaultError> {
        let kind = params.kind();
        if target.target_type() != kind.target_type() {
            return Err(FaultError::WrongTarget {
                kind,
                expected: kind.target_type().as_str(),
                found: target.target_type().as_str(),
            });
        }
        Ok(Fault { target, params })
    }

    /// Parse the JSON form.
    pub fn from_json(json: &str) -> Result<Fault, FaultError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            kind: String,
            target: Value,
            #[serde(default)]
            params: Value,
        }
        let raw: Raw = serde_json::from_str(json).map_err(|source| FaultError::BadParams {
            kind: FaultKind::Delay,
            source,
        })?;
        Self::from_raw(raw.kind, raw.target, raw.params)
    }

    fn from_raw(kind: String, target: Value, params: Value) -> Result<Fault, FaultError> {
        let kind: FaultKind = kind.parse()?;
        let target: Target = serde_json::from_value(target)
            .map_err(|source| FaultError::BadParams { kind, source })?;
        Fault::new(target, Params::parse(kind, params)?)
    }

    /// Its kind.
    pub fn kind(&self) -> FaultKind {
        self.params.kind()
    }

    /// Its family.
    pub fn family(&self) -> Family {
        self.kind().family()
    }

    /// What it is aimed at.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Its parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// How it is undone.
    pub fn heal(&self) -> Heal {
        self.kind().heal()
    }
}

impl Serialize for Fault {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            kind: FaultKind,
            target: &'a Target,
            params: Value,
        }
        Wire {
            kind: self.kind(),
            target: &self.target,
            params: self.params.to_value(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Fault {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Wire {
            kind: String,
            target: Value,
            #[serde(default)]
            params: Value,
        }
        let w = Wire::deserialize(d)?;
        Fault::from_raw(w.kind, w.target, w.params).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_round_trips_its_name_and_has_one_family() {
        for kind in FaultKind::ALL {
            assert_eq!(kind.as_str().parse::<FaultKind>().unwrap(), kind);
            let _ = kind.family();
        }
        assert!("sigquit".parse::<FaultKind>().is_err());
        let stdio: Vec<_> = FaultKind::ALL
            .iter()
            .filter(|k| k.family() == Family::Stdio)
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            stdio,
            [
                "delay",
                "garbage",
                "close_stdin",
                "kill_stdio_owner",
                "lsof_kill_recipe"
            ]
        );
    }

    #[test]
    fn a_fault_round_trips_through_json() {
        let f = Fault::from_json(
            r#"{"kind":"sigstop","target":{"type":"process","role":"daemon"},"params":{"hold_ms":500}}"#,
        )
        .unwrap();
        assert_eq!(f.kind(), FaultKind::Sigstop);
        assert_eq!(f.family(), Family::Process);
        assert_eq!(f.heal(), Heal::Undo("SIGCONT"));
        let back: Fault = serde_json::from_value(serde_json::to_value(&f).unwrap()).unwrap();
        assert_eq!(back, f);
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            json!({"kind":"sigstop","target":{"type":"process","role":"daemon"},"params":{"hold_ms":500}})
        );
    }

    #[test]
    fn params_default_and_are_checked() {
        let f = Fault::from_json(r#"{"kind":"offline","target":{"type":"tab"}}"#).unwrap();
        assert_eq!(f.params(), &Params::Offline(Hold { hold_ms: None }));
        let delay = Fault::from_json(
            r#"{"kind":"delay","target":{"type":"stdio","role":"mcp"},"params":{"ms":200}}"#,
        )
        .unwrap();
        assert_eq!(
            delay.params(),
            &Params::Delay(StdioDelay {
                ms: 200,
                stream: Direction::Downstream
            })
        );
        let err = Fault::from_json(
            r#"{"kind":"sigkill","target":{"type":"process","role":"daemon"},"params":{"signal":9}}"#,
        );
        assert!(matches!(err, Err(FaultError::BadParams { .. })));
    }

    #[test]
    fn the_target_must_fit_the_kind() {
        let err = Fault::from_json(
            r#"{"kind":"squat_port","target":{"type":"process","role":"daemon"}}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`squat_port` takes a port target, not a process one"
        );
        assert!(Fault::new(Target::Port { port: 4400 }, Params::LsofKillRecipe).is_ok());
        assert!(
            Fault::new(
                Target::Path {
                    path: "/tmp/x".into()
                },
                Params::ReadOnlyStateDir
            )
            .is_ok()
        );
    }
}
