//! The proxy log (`proxy-<port>.log` in the state dir, event names in [`super::super::events`]);
//! stderr when the file cannot be had. The supervisor is its only writer; this module decides
//! where lines go, never what they say.

use std::path::Path;

use serde_json::{Value, json};

use crate::daemon::{DaemonLog, StateDir};

pub(super) struct ProxyLog {
    file: Option<DaemonLog>,
}

impl ProxyLog {
    /// The log of the proxy on `port`, in the state dir named by the environment.
    pub(super) fn open(port: u16) -> Self {
        let state = StateDir::from_env();
        let path = state.root().join(format!("proxy-{port}.log"));
        match state.ensure().and_then(|()| Self::at(&path)) {
            Ok(log) => log,
            Err(err) => {
                crate::proxy::stderr::say(format_args!(
                    "reticle mcp: cannot open the proxy log {} ({err}); logging to stderr",
                    path.display()
                ));
                Self { file: None }
            }
        }
    }

    /// A log at `path`, rolled to `path.1`, for one proxy run.
    pub(super) fn at(path: &Path) -> std::io::Result<Self> {
        let mut rolled = path.as_os_str().to_owned();
        rolled.push(".1");
        let run = uuid::Uuid::new_v4().to_string();
        let file = DaemonLog::open(path, rolled.into(), &run)?;
        Ok(Self { file: Some(file) })
    }

    pub(super) fn event(&self, event: &str, fields: Value) {
        match &self.file {
            Some(file) => file.event(event, fields),
            None => crate::proxy::stderr::say(format_args!(
                "{}",
                json!({ "event": event, "fields": fields })
            )),
        }
    }
}
