//! `RETICLE_TRACE`: a tracing-subscriber layer writing one JSON line per closed span into the
//! daemon log, names from [`crate::wire::trace`]. A root span opens a call; every span under it
//! inherits the call, and ids are never reused, so a parent that never closed (the hung-call
//! signature) is detectable. Test only: [`Breakage`] writes a broken trace on purpose.
//!
//! It writes lines; it must not decide what is traced.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::json;
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use crate::daemon::DaemonLog;
use crate::wire::trace::{TRACE_EVENT, key, span};

/// The environment variable that turns tracing on (`1`, `true`, `on`, `yes`).
pub const TRACE_VAR: &str = crate::config::env::TRACE;

/// Whether `RETICLE_TRACE` asks for traces.
pub fn enabled() -> bool {
    crate::config::switch_on(TRACE_VAR)
}

/// Whether the test-only stand-in switch (`RETICLE_TEST_STAND_IN_BROKEN_TRACE`) asks for a
/// broken trace, for the gate's negative control of the trace checker.
pub fn stand_in_broken() -> bool {
    crate::config::switch_on(crate::config::env::TEST_STAND_IN_BROKEN_TRACE)
}

/// The stand-in's broken trace: each of the first calls breaks one invariant, so a checker that
/// reads it must find every kind of violation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Breakage {
    /// Call 1: its root line is never written (a call without a root, and its children closed
    /// under a parent that never closed: an orphan).
    NoRoot,
    /// Call 2: its settle line is never written.
    NoSettle,
    /// Call 3: its root is written failed, without an error.
    FailedWithoutError,
}

impl Breakage {
    /// What the stand-in does to a span of call `call` named `span`, if anything.
    fn of(call: u64, span: &str, depth: u64) -> Option<Self> {
        match (call, span, depth) {
            (1, span::TOOL_HANDLER, 0) => Some(Self::NoRoot),
            (2, span::SETTLE, _) => Some(Self::NoSettle),
            (3, span::TOOL_HANDLER, 0) => Some(Self::FailedWithoutError),
            _ => None,
        }
    }
}

/// Writes closed spans to the daemon log, one line each: `{"t", "event":"trace", "span", "id",
/// "parent", "depth", "callId", "ok", "ms", "error"?, "rpcId"?}`. A root's `callId` is
/// `p<pid>-c<n>` and its `rpcId` the JSON-RPC id its call arrived with. A span reports failure
/// by recording `ok = false` and `error = "<sentence>"` before it closes.
#[derive(Debug)]
pub struct TraceLayer {
    log: Arc<DaemonLog>,
    next_span: AtomicU64,
    next_call: AtomicU64,
    /// The stand-in switch: write a broken trace on purpose.
    broken: bool,
}

impl TraceLayer {
    pub fn new(log: Arc<DaemonLog>) -> Self {
        Self {
            log,
            next_span: AtomicU64::new(1),
            next_call: AtomicU64::new(1),
            broken: false,
        }
    }

    /// The stand-in for the gate's trace controls: a layer that breaks its trace ([`Breakage`]).
    pub fn broken(self, broken: bool) -> Self {
        Self { broken, ..self }
    }
}

/// What the layer keeps on each open span.
#[derive(Debug)]
struct SpanFacts {
    id: String,
    parent: Option<String>,
    depth: u64,
    call_id: String,
    /// The call's number, counted from 1 in this daemon.
    call: u64,
    opened: Instant,
    ok: bool,
    error: Option<String>,
    rpc_id: Option<String>,
}

#[derive(Default)]
struct Outcome {
    ok: Option<bool>,
    error: Option<String>,
    rpc_id: Option<String>,
}

impl Visit for Outcome {
    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == key::OK {
            self.ok = Some(value);
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == key::ERROR {
            self.error = Some(value.chars().take(300).collect());
        } else if field.name() == key::RPC_ID {
            self.rpc_id = Some(value.to_string());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == key::ERROR {
            self.error = Some(format!("{value:?}").chars().take(300).collect());
        }
    }
}

impl<S> Layer<S> for TraceLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent = span.parent().and_then(|p| {
            p.extensions()
                .get::<SpanFacts>()
                .map(|f| (f.id.clone(), f.depth, f.call_id.clone(), f.call))
        });
        let (parent, depth, call_id, call) = match parent {
            Some((pid, depth, call_id, call)) => (Some(pid), depth + 1, call_id, call),
            None => {
                let n = self.next_call.fetch_add(1, Ordering::Relaxed);
                (None, 0, format!("p{}-c{n}", std::process::id()), n)
            }
        };
        let mut outcome = Outcome::default();
        attrs.record(&mut outcome);
        span.extensions_mut().insert(SpanFacts {
            id: format!("s{}", self.next_span.fetch_add(1, Ordering::Relaxed)),
            parent,
            depth,
            call_id,
            call,
            opened: Instant::now(),
            ok: outcome.ok.unwrap_or(true),
            error: outcome.error,
            rpc_id: outcome.rpc_id,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut outcome = Outcome::default();
        values.record(&mut outcome);
        if let Some(facts) = span.extensions_mut().get_mut::<SpanFacts>() {
            if let Some(ok) = outcome.ok {
                facts.ok = ok;
            }
            if outcome.error.is_some() {
                facts.error = outcome.error;
            }
            if outcome.rpc_id.is_some() {
                facts.rpc_id = outcome.rpc_id;
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let name = span.name();
        let extensions = span.extensions();
        let Some(facts) = extensions.get::<SpanFacts>() else {
            return;
        };
        let breakage = self
            .broken
            .then(|| Breakage::of(facts.call, name, facts.depth))
            .flatten();
        if matches!(breakage, Some(Breakage::NoRoot | Breakage::NoSettle)) {
            return;
        }
        let mut line = json!({
            key::SPAN: name,
            key::ID: facts.id,
            key::PARENT: facts.parent,
            key::DEPTH: facts.depth,
            key::CALL_ID: facts.call_id,
            key::OK: facts.ok,
            key::MS: facts.opened.elapsed().as_secs_f64() * 1000.0,
        });
        if let Some(error) = &facts.error {
            line[key::ERROR] = json!(error);
        }
        if let Some(rpc_id) = &facts.rpc_id {
            line[key::RPC_ID] = json!(rpc_id);
        }
        if breakage == Some(Breakage::FailedWithoutError) {
            line[key::OK] = json!(false);
        }
        self.log.event(TRACE_EVENT, line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn closed_spans_become_lines_a_checker_can_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.log");
        let log = Arc::new(DaemonLog::open(&path, dir.path().join("d.log.1"), "i").unwrap());
        let subscriber = tracing_subscriber::registry().with(TraceLayer::new(log));
        tracing::subscriber::with_default(subscriber, || {
            let root = tracing::info_span!(
                "tool.handler",
                ok = tracing::field::Empty,
                error = tracing::field::Empty
            );
            root.in_scope(|| {
                let child = tracing::info_span!("browser.command");
                drop(child);
                let settle = tracing::info_span!("settle");
                drop(settle);
            });
            root.record("ok", false);
            root.record("error", "no session");
        });
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        let root = lines.iter().find(|l| l["span"] == "tool.handler").unwrap();
        assert_eq!(root["depth"], 0);
        assert_eq!(root["ok"], false);
        assert_eq!(root["error"], "no session");
        for child in lines.iter().filter(|l| l["span"] != "tool.handler") {
            assert_eq!(child["parent"], root["id"]);
            assert_eq!(child["callId"], root["callId"]);
            assert_eq!(child["depth"], 1);
            assert_eq!(child["event"], TRACE_EVENT);
        }
    }
}
