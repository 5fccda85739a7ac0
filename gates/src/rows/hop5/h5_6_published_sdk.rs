//! H5.6: every tool family and action on the fixture page, once with our SDK and once with
//! another (the published 2.0.0; a stand-in in the control), through the real proxy in
//! Chromium; a difference that is not a documented 2.0.0 limitation is silent. This module
//! runs the two stacks and judges the recorded matrix; the probes live in [`crate::compat`].

use serde_json::{Value, json};

use crate::compat::stack::Stack;
use crate::compat::{Cell, Matrix, Sdk, probes};
use crate::fault;
use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, observe};
use crate::scenarios::{GateEnv, Ran};

/// The row: ours against the published 2.0.0.
pub async fn published_sdk_agrees(env: &GateEnv) -> Ran {
    agrees(env, Sdk::Published).await.0
}

/// Runs the probes with our SDK and with `other`; the judged run and the matrix (none when a
/// stack did not start).
pub async fn agrees(env: &GateEnv, other: Sdk) -> (Ran, Option<Matrix>) {
    let history = History::new();
    let ours = match probe_with(Sdk::Ours, env).await {
        Ok(cells) => cells,
        Err(why) => return (could_not_start(history, fault::OTHER_SDK, &why), None),
    };
    control(
        &history,
        "with our SDK every probe reached the page",
        !ours.iter().any(|c| c.verdict == "call failed"),
        json!({ "cells": ours.len() }),
    );
    let theirs = match probe_with(other, env).await {
        Ok(cells) => cells,
        Err(why) => return (could_not_start(history, fault::OTHER_SDK, &why), None),
    };
    history.fault(fault::OTHER_SDK, true, json!({ "sdk": other.label() }));
    let matrix = Matrix::compare((Sdk::Ours, ours.as_slice()), (other, theirs.as_slice()));
    for row in &matrix.rows {
        observe(
            &history,
            MATRIX_ROW,
            json!({
                "probe": row.probe, "ours": row.reference, "other": row.other,
                "holds": row.outcome.holds(),
            }),
        );
    }
    let ran = judged(history, judge_matrix);
    (ran, Some(matrix))
}

async fn probe_with(sdk: Sdk, env: &GateEnv) -> Result<Vec<Cell>, String> {
    let stack = Stack::start(sdk, &env.reticle).await?;
    Ok(probes::run(&stack).await)
}

/// The observation of one row of the matrix: `{"probe", "ours", "other", "holds"}`.
const MATRIX_ROW: &str = "matrix_row";

/// Survived when every row of the matrix the history recorded holds; silent, naming the rows,
/// when one does not. Read from the history alone: the other SDK as the fault names it, each
/// row as observed.
pub fn judge_matrix(ops: &[Op]) -> Judgement {
    if let Err(inconclusive) = controls_held(ops) {
        return inconclusive;
    }
    let other = match judge::established_fault(ops) {
        Ok(fault) => fault.value["sdk"].as_str().unwrap_or("?"),
        Err(inconclusive) => return inconclusive,
    };
    let rows: Vec<&Value> = ops
        .iter()
        .filter(|o| o.actor == Actor::Harness && o.f == MATRIX_ROW)
        .map(|o| &o.value)
        .collect();
    let failures: Vec<&&Value> = rows.iter().filter(|r| r["holds"] != true).collect();
    if failures.is_empty() {
        return Judgement::new(
            RowOutcome::Survived,
            format!(
                "{} probes: {other} agrees with {} on each or the difference is a documented limitation",
                rows.len(),
                Sdk::Ours.label()
            ),
        );
    }
    let text = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let named: Vec<String> = failures
        .iter()
        .map(|r| {
            format!(
                "{} ({} vs {})",
                text(&r["probe"]),
                text(&r["ours"]),
                text(&r["other"])
            )
        })
        .collect();
    Judgement::new(
        RowOutcome::Silent,
        format!(
            "{} of {} probes differ under {other}: {}",
            failures.len(),
            rows.len(),
            named.join("; ")
        ),
    )
}

/// H5.6 in the row table.
pub const H5_6: RowGate = RowGate {
    id: "H5.6",
    file: file!(),
    scenario: |env| Box::pin(published_sdk_agrees(env)),
    judge: judge_matrix,
    controls: &[],
};
