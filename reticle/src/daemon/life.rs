//! Reading a daemon log back: split it into lives (by `instance`) and say how each one ended.
//! A life with an exit line ended `clean` or `signalled`; a life whose process is gone without
//! one `died_silently`. Pure over text plus a liveness oracle; it must not touch the port.

use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::events;

/// How much of the end of a log is read back.
pub const TAIL_BYTES: u64 = 512 * 1024;

/// One daemon life as its log lines tell it.
#[derive(Debug, Clone, PartialEq)]
pub struct Life {
    pub instance: String,
    pub pid: u32,
    pub first_seen: OffsetDateTime,
    pub last_seen: OffsetDateTime,
    pub last_beat: Option<OffsetDateTime>,
    pub beat_every_ms: Option<u64>,
    pub exit: Option<ExitLine>,
    pub start_failure: Option<String>,
}

/// The `daemon_exit` line of a life.
#[derive(Debug, Clone, PartialEq)]
pub struct ExitLine {
    pub at: OffsetDateTime,
    pub reason: String,
    pub signal: Option<String>,
}

/// How a life ended, or that it has not.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LifeEnd {
    /// It wrote an exit line with no signal behind it (idle shutdown, for example).
    Clean,
    /// It caught a signal and wrote an exit line naming it.
    Signalled,
    /// Its process is gone and it wrote no exit line: killed, or crashed.
    DiedSilently,
    /// Its process still exists: it has not ended.
    NotEnded,
}

/// What `reticle status` reports as the last exit on a port.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LastExit {
    /// `clean`, `signalled`, `died_silently` or `unknown`.
    pub kind: String,
    /// A sentence saying why, from the exit line or from the silence.
    pub reason: String,
    /// When it happened (the exit line, or the last line heard), RFC 3339.
    pub at: Option<String>,
    pub pid: Option<u32>,
    pub instance: Option<String>,
}

impl LastExit {
    /// Nothing in the log says how the last daemon ended.
    pub fn unknown(reason: &str) -> Self {
        Self {
            kind: "unknown".into(),
            reason: reason.into(),
            at: None,
            pid: None,
            instance: None,
        }
    }
}

/// Splits log text into lives, oldest first. Lines that do not parse are skipped.
pub fn lives(text: &str) -> Vec<Life> {
    let mut out: Vec<Life> = Vec::new();
    for raw in text.lines() {
        let Ok(Value::Object(line)) = serde_json::from_str::<Value>(raw.trim()) else {
            continue;
        };
        let (Some(instance), Some(pid), Some(at)) = (
            line.get("instance").and_then(Value::as_str),
            line.get("pid").and_then(Value::as_u64),
            line.get("t")
                .and_then(Value::as_str)
                .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok()),
        ) else {
            continue;
        };
        let event = line.get("event").and_then(Value::as_str).unwrap_or("");
        let index = match out.iter().position(|l| l.instance == instance) {
            Some(i) => i,
            None => {
                out.push(Life {
                    instance: instance.to_string(),
                    pid: pid as u32,
                    first_seen: at,
                    last_seen: at,
                    last_beat: None,
                    beat_every_ms: None,
                    exit: None,
                    start_failure: None,
                });
                out.len() - 1
            }
        };
        let life = &mut out[index];
        life.last_seen = at;
        match event {
            events::ALIVE => {
                life.last_beat = Some(at);
                life.beat_every_ms = line.get("everyMs").and_then(Value::as_u64);
            }
            events::EXIT => {
                life.exit = Some(ExitLine {
                    at,
                    reason: line
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("unstated")
                        .to_string(),
                    signal: line
                        .get("signal")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                });
            }
            events::START_FAILED => {
                life.start_failure = Some(
                    line.get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("unstated")
                        .to_string(),
                );
            }
            _ => {}
        }
    }
    out
}

impl Life {
    /// How this life ended, asking `alive` whether its process still exists.
    pub fn end(&self, alive: impl Fn(u32) -> bool) -> LifeEnd {
        match &self.exit {
            Some(exit) if exit.signal.is_some() => LifeEnd::Signalled,
            Some(_) => LifeEnd::Clean,
            None if alive(self.pid) => LifeEnd::NotEnded,
            None => LifeEnd::DiedSilently,
        }
    }

    /// Whether this life ever served: a failed start is not a life that can exit.
    pub fn ran(&self) -> bool {
        self.start_failure.is_none()
    }

    /// The report for this life's end; `None` when it has not ended.
    pub fn last_exit(&self, alive: impl Fn(u32) -> bool, now: OffsetDateTime) -> Option<LastExit> {
        let fmt = |t: OffsetDateTime| t.format(&Rfc3339).ok();
        let (kind, reason, at) = match self.end(alive) {
            LifeEnd::NotEnded => return None,
            LifeEnd::Clean => {
                let exit = self.exit.as_ref()?;
                ("clean", format!("exited: {}", exit.reason), exit.at)
            }
            LifeEnd::Signalled => {
                let exit = self.exit.as_ref()?;
                let signal = exit.signal.clone().unwrap_or_default();
                (
                    "signalled",
                    format!("stopped by {signal} ({})", exit.reason),
                    exit.at,
                )
            }
            LifeEnd::DiedSilently => {
                let heard = self.last_beat.unwrap_or(self.last_seen);
                let silent_ms = (now - heard).whole_milliseconds().max(0);
                let beat = self
                    .beat_every_ms
                    .map(|ms| format!(" (heartbeat every {ms} ms)"))
                    .unwrap_or_default();
                (
                    "died_silently",
                    format!(
                        "process {} is gone with no exit line; last heard {silent_ms} ms ago{beat}: killed (SIGKILL, OOM) or crashed",
                        self.pid
                    ),
                    heard,
                )
            }
        };
        Some(LastExit {
            kind: kind.into(),
            reason,
            at: fmt(at),
            pid: Some(self.pid),
            instance: Some(self.instance.clone()),
        })
    }
}

/// The last exit among `lives`, skipping the life `running` (the instance answering now) and
/// lives that never started.
pub fn last_exit(
    lives: &[Life],
    running: Option<&str>,
    alive: impl Fn(u32) -> bool + Copy,
    now: OffsetDateTime,
) -> LastExit {
    lives
        .iter()
        .rev()
        .filter(|l| l.ran() && Some(l.instance.as_str()) != running)
        .find_map(|l| l.last_exit(alive, now))
        .unwrap_or_else(|| LastExit::unknown("the log records no ended daemon on this port"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t: &str, event: &str, instance: &str, extra: &str) -> String {
        format!(
            r#"{{"t":"2026-01-01T00:00:{t}Z","event":"{event}","pid":7,"instance":"{instance}"{extra}}}"#
        )
    }

    fn now() -> OffsetDateTime {
        OffsetDateTime::parse("2026-01-01T00:01:00Z", &Rfc3339).unwrap()
    }

    #[test]
    fn exit_with_signal_is_signalled_and_without_is_clean() {
        let text = [
            line("01", events::START, "a", ""),
            line(
                "02",
                events::EXIT,
                "a",
                r#","reason":"signal","signal":"SIGTERM""#,
            ),
            line("03", events::START, "b", ""),
            line("04", events::EXIT, "b", r#","reason":"idle""#),
        ]
        .join("\n");
        let all = lives(&text);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].end(|_| false), LifeEnd::Signalled);
        assert_eq!(all[1].end(|_| false), LifeEnd::Clean);
        assert_eq!(last_exit(&all, None, |_| false, now()).kind, "clean");
        assert_eq!(
            last_exit(&all, Some("b"), |_| false, now()).kind,
            "signalled"
        );
    }

    #[test]
    fn silence_without_exit_is_died_silently_only_when_the_process_is_gone() {
        let text = [
            line("01", events::START, "a", ""),
            line("02", events::ALIVE, "a", r#","everyMs":1000"#),
            "garbage that is not json".to_string(),
        ]
        .join("\n");
        let all = lives(&text);
        assert_eq!(all[0].end(|_| false), LifeEnd::DiedSilently);
        assert_eq!(all[0].end(|_| true), LifeEnd::NotEnded);
        let exit = last_exit(&all, None, |_| false, now());
        assert_eq!(exit.kind, "died_silently");
        assert!(exit.reason.contains("58000 ms"), "{}", exit.reason);
    }

    #[test]
    fn failed_starts_and_empty_logs_are_not_exits() {
        let text = line("01", events::START_FAILED, "a", r#","reason":"port held""#);
        assert_eq!(
            last_exit(&lives(&text), None, |_| false, now()).kind,
            "unknown"
        );
        assert_eq!(
            last_exit(&lives(""), None, |_| false, now()).kind,
            "unknown"
        );
    }
}
