//! The daemon log: one JSON object per line, `{"t": <RFC 3339>, "event": ..., "pid": ...,
//! "instance": ..., ...fields}`, appended (0600, never through a link) and rolled to `<log>.1`
//! past [`ROLL_BYTES`].
//! This module writes lines and reads the tail back as text ([`read_tail`]); it must not
//! interpret them (that is [`super::life`]).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::life::TAIL_BYTES;

/// A log past this size is moved aside to `<log>.1` before the next line.
pub const ROLL_BYTES: u64 = 8 * 1024 * 1024;

/// The current time as RFC 3339 (UTC, millisecond precision).
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let now = now
        .replace_nanosecond(now.millisecond() as u32 * 1_000_000)
        .unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string())
}

/// An append-only JSON-lines log, safe to share between tasks.
#[derive(Debug)]
pub struct DaemonLog {
    path: PathBuf,
    rolled: PathBuf,
    pid: u32,
    instance: String,
    sink: Mutex<Sink>,
}

#[derive(Debug)]
struct Sink {
    file: File,
    size: u64,
}

impl DaemonLog {
    /// Opens (creating) the log at `path` for the daemon life `instance`.
    pub fn open(path: &Path, rolled: PathBuf, instance: &str) -> io::Result<Self> {
        let file = open_append(path)?;
        let size = file.metadata()?.len();
        Ok(Self {
            path: path.to_path_buf(),
            rolled,
            pid: std::process::id(),
            instance: instance.to_string(),
            sink: Mutex::new(Sink { file, size }),
        })
    }

    /// Appends one event. `fields` must be a JSON object (anything else is recorded under
    /// `detail`). Write failures are swallowed: losing a log line must never end the daemon.
    pub fn event(&self, event: &str, fields: Value) {
        let mut line = Map::new();
        line.insert("t".into(), Value::String(now_rfc3339()));
        line.insert("event".into(), Value::String(event.to_string()));
        line.insert("pid".into(), Value::from(self.pid));
        line.insert("instance".into(), Value::String(self.instance.clone()));
        match fields {
            Value::Object(map) => line.extend(map),
            Value::Null => {}
            other => {
                line.insert("detail".into(), other);
            }
        }
        let mut text = Value::Object(line).to_string();
        text.push('\n');
        let Ok(mut sink) = self.sink.lock() else {
            return;
        };
        if sink.size + text.len() as u64 > ROLL_BYTES && sink.size > 0 {
            let _ = fs::rename(&self.path, &self.rolled);
            if let Ok(file) = open_append(&self.path) {
                sink.file = file;
                sink.size = 0;
            }
        }
        if sink.file.write_all(text.as_bytes()).is_ok() {
            sink.size += text.len() as u64;
        }
    }

    pub fn instance(&self) -> &str {
        &self.instance
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    crate::store::private::open_append(path)
}

/// The last [`TAIL_BYTES`] of a file, from a line boundary.
pub fn read_tail(path: &std::path::Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = crate::store::private::open_read(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TAIL_BYTES);
    let _ = file.seek(SeekFrom::Start(start));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if start > 0 {
        text.split_once('\n')
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_start_with_time_and_event_and_carry_identity() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.log");
        let log = DaemonLog::open(&path, dir.path().join("d.log.1"), "inst-1").unwrap();
        log.event("daemon_alive", json!({"uptimeMs": 5}));
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\"t\":\""), "{text}");
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["event"], "daemon_alive");
        assert_eq!(line["instance"], "inst-1");
        assert_eq!(line["uptimeMs"], 5);
        let t = line["t"].as_str().unwrap();
        time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).unwrap();
    }

    #[test]
    fn rolls_past_the_limit_keeping_one_generation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.log");
        fs::write(&path, vec![b'x'; ROLL_BYTES as usize]).unwrap();
        let log = DaemonLog::open(&path, dir.path().join("d.log.1"), "i").unwrap();
        log.event("daemon_alive", json!({}));
        assert_eq!(
            fs::metadata(dir.path().join("d.log.1")).unwrap().len(),
            ROLL_BYTES
        );
        assert!(fs::metadata(&path).unwrap().len() < 1024);
    }
}
