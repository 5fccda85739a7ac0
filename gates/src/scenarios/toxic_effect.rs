//! Whether a toxic touched the traffic: the effect each toxic of H2.7's rounds must leave in the
//! calls made while it was installed before its round proves anything (a toxic nothing crossed
//! is a fault that did not happen). Pure over a history; the calls' answers are
//! `link::judge_rounds`'s to judge.

// The effects, by toxic:
// - `latency`: some call under it took at least the least delay it adds (latency - jitter).
// - `bandwidth` and `slicer`: some call took at least the time its own bytes need at the rate
//   (the answer's bytes downstream, the request's upstream).
// - a cutting toxic (`limit_data`, `timeout`, `reset_peer`): some call was answered -32001.
// - `slow_close` delays only a connection's close, which no call does: its effect cannot be
//   shown per call, and the evidence says so instead of claiming it.

use crate::history::Op;

/// One call made under a toxic: its invoke and its first answer.
pub struct Under<'a> {
    pub invoke: &'a Op,
    pub answer: &'a Op,
}

impl Under<'_> {
    fn took_ms(&self) -> f64 {
        self.answer.at_ms - self.invoke.at_ms
    }

    /// The bytes of this call that crossed the link in `stream`'s direction, at least.
    fn bytes(&self, stream: &str) -> f64 {
        let crossed = if stream == "upstream" {
            &self.invoke.value["params"]
        } else {
            &self.answer.value["result"]
        };
        crossed.to_string().len() as f64
    }

    fn lost_the_link(&self) -> bool {
        self.answer.value["code"] == reticle::mcp::jsonrpc::TRANSPORT_LOST
    }
}

/// The effect `fault` (a recorded toxic: its `spec` and `effect`) left on the calls `under` it:
/// `Ok` with what was seen, or `Err` with why the history shows none.
pub fn shown(fault: &Op, under: &[Under<'_>]) -> Result<String, String> {
    let spec = &fault.value["spec"];
    let kind = spec["type"]
        .as_str()
        .ok_or("the fault records no toxic spec")?;
    let stream = spec["stream"].as_str().unwrap_or("downstream");
    let attribute = |name: &str| {
        spec["attributes"][name]
            .as_f64()
            .ok_or_else(|| format!("the {kind} spec records no `{name}`"))
    };
    if fault.value["effect"] == "cuts" {
        let lost = under.iter().filter(|c| c.lost_the_link()).count();
        return if lost > 0 {
            Ok(format!("{kind} cut {lost} of {} calls", under.len()))
        } else {
            Err(format!(
                "none of the {} calls under {kind} lost the link",
                under.len()
            ))
        };
    }
    let slowest = under.iter().map(Under::took_ms).fold(0.0_f64, f64::max);
    match kind {
        "latency" => {
            // Each delay is drawn from latency ± jitter: the least it adds is latency - jitter.
            let jitter = spec["attributes"]["jitter"].as_f64().unwrap_or(0.0);
            let delay = (attribute("latency")? - jitter).max(0.0);
            if under.iter().any(|c| c.took_ms() >= delay) {
                Ok(format!(
                    "latency: slowest call {slowest:.0} ms ≥ the {delay:.0} ms it adds at least"
                ))
            } else {
                Err(format!(
                    "no call under latency took the {delay:.0} ms it adds at least (slowest {slowest:.0} ms)"
                ))
            }
        }
        "bandwidth" => {
            let bytes_per_ms = attribute("rate")? * 1024.0 / 1000.0;
            slowed(kind, under, |c| c.bytes(stream) / bytes_per_ms)
        }
        "slicer" => {
            let size = attribute("average_size")?.max(1.0);
            let delay_us = attribute("delay")?;
            slowed(kind, under, |c| {
                (c.bytes(stream) / size) * delay_us / 1000.0
            })
        }
        "slow_close" => {
            Ok("slow_close: no close under it, its delay is not provable per call".into())
        }
        other => Err(format!("no effect is known for the toxic `{other}`")),
    }
}

/// Some call under `kind` took at least the time `needs` says its bytes need.
fn slowed(
    kind: &str,
    under: &[Under<'_>],
    needs: impl Fn(&Under<'_>) -> f64,
) -> Result<String, String> {
    match under
        .iter()
        .find(|c| c.took_ms() >= needs(c) && needs(c) > 0.0)
    {
        Some(call) => Ok(format!(
            "{kind}: a call took {:.0} ms, its bytes need {:.0} ms",
            call.took_ms(),
            needs(call)
        )),
        None => Err(format!(
            "no call under {kind} took the time its bytes need at the configured rate"
        )),
    }
}

/// The spec a hand-built history records for a toxic (tests).
#[cfg(test)]
pub fn spec_json(kind: &str, stream: &str, attributes: serde_json::Value) -> serde_json::Value {
    serde_json::json!({ "type": kind, "stream": stream, "attributes": attributes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{History, OpType};
    use serde_json::{Value, json};

    /// Whether a `kind` toxic (`effect`, configured with `attributes`) shows its effect on one
    /// call answered at once with `answer`.
    fn shows(kind: &str, effect: &str, attributes: Value, answer: Value) -> bool {
        let h = History::new();
        h.fault(
            crate::fault::TOXIC,
            true,
            json!({ "toxic": kind, "effect": effect, "spec": spec_json(kind, "downstream", attributes) }),
        );
        h.invoke("tools/call", json!({ "id": 1, "params": {} }));
        h.complete(OpType::Ok, "tools/call", answer);
        let ops = h.ops();
        shown(
            &ops[0],
            &[Under {
                invoke: &ops[1],
                answer: &ops[2],
            }],
        )
        .is_ok()
    }

    #[test]
    fn a_toxic_that_touched_nothing_shows_no_effect() {
        let answered = json!({ "id": 1, "result": {} });
        let big = json!({ "id": 1, "result": { "text": "x".repeat(200_000) } });
        let slow = json!({ "latency": 60_000, "jitter": 0 });
        assert!(!shows("latency", "degrades", slow, answered.clone()));
        assert!(!shows("bandwidth", "degrades", json!({ "rate": 1 }), big));
        assert!(!shows(
            "limit_data",
            "cuts",
            json!({ "bytes": 10 }),
            answered
        ));
    }

    #[test]
    fn an_effect_is_seen_when_the_calls_show_it() {
        let answered = json!({ "id": 1, "result": {} });
        let zero = json!({ "latency": 0, "jitter": 0 });
        assert!(shows("latency", "degrades", zero, answered.clone()));
        let lost =
            json!({ "id": 1, "code": reticle::mcp::jsonrpc::TRANSPORT_LOST, "message": "lost" });
        assert!(shows("reset_peer", "cuts", json!({ "timeout": 0 }), lost));
        assert!(
            !shows("latency", "degrades", json!({}), answered),
            "a spec without its delay proves nothing"
        );
    }
}
