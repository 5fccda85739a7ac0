//! The SDK compatibility suite's vocabulary: which SDK a page runs ([`Sdk`]), one probe's
//! verdict ([`Cell`]), the documented limitations of the published 2.0.0 SDK
//! ([`LIMITATIONS`]), and the matrix that compares two runs of the same probes ([`Matrix`]) and
//! renders it for `docs/sdk-compat.md`. `stack` runs the page and `probes` the tools.
//!
//! This module compares and renders; it must not start processes or call tools itself.

pub mod probes;
pub mod stack;

use std::fmt::Write as _;

/// Which SDK the fixture page imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sdk {
    /// Ours (`sdk/`), served at `/sdk/` as the fixture app does.
    Ours,
    /// The published `@reticlehq/browser` 2.0.0, bundled at test time, behind a thin adapter
    /// that maps the fixture's calls onto its API.
    Published,
    /// A stand-in: ours with `registerStore` made a no-op, so the state tool finds nothing (the
    /// negative control: a broken SDK must make the matrix differ).
    BrokenState,
}

impl Sdk {
    /// The column heading.
    pub fn label(self) -> &'static str {
        match self {
            Sdk::Ours => "our SDK",
            Sdk::Published => "published 2.0.0",
            Sdk::BrokenState => "stand-in (state broken)",
        }
    }
}

/// One probe's verdict under one SDK: the probe's family and name, and a short deterministic
/// description of what the agent got (`ok ...` or `refused`) and what the page did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub family: String,
    pub probe: String,
    pub verdict: String,
}

/// A known, accepted difference of the published 2.0.0 SDK: the probe it affects and why.
pub struct Limitation {
    pub probe: &'static str,
    pub reason: &'static str,
}

/// The documented 2.0.0 limitations. A difference on any other probe fails the suite; a listed
/// probe that no longer differs fails it too (the list must not outlive the limitation).
pub const LIMITATIONS: &[Limitation] = &[
    Limitation {
        probe: "assert an element by a part of its name, exact false",
        reason: "2.0.0 ignores `exact` and matches a name whole, so an element found by a part of its name only is unknown, never no",
    },
    Limitation {
        probe: "query by css",
        reason: "protocol 1's query has no `css` criterion (ours adds it); 2.0.0 ignores the field and matches nothing",
    },
    Limitation {
        probe: "query a password field by role and label",
        reason: "2.0.0 resolves roles with Testing Library's queryAllByRole (its dom/query.js), where an input of type password has no role, so `textbox` never matches it; ours counts it as a textbox. Query a password field by label or testid to reach it under both",
    },
    Limitation {
        probe: "act_and_wait until element selected",
        reason: "protocol 1's element states are checked, disabled, expanded (and visibility, focus); 2.0.0 does not report `selected`, so the verdict is unknown, never a guess",
    },
    Limitation {
        probe: "act_and_wait until element pressed",
        reason: "2.0.0 does not report `pressed` (aria-pressed) among an element's states, so the verdict is unknown, never a guess",
    },
    Limitation {
        probe: "act_and_wait until net bodyContains",
        reason: "2.0.0 never captures response bodies (it refuses `net_bodies`), so a body check is unknown, never a guess",
    },
];

/// How one probe compares across the two SDKs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Same,
    Differs,
    /// A documented limitation, with its reason.
    Unsupported(&'static str),
    /// A documented limitation that no longer differs.
    StaleLimitation,
}

impl Outcome {
    /// Whether this outcome is acceptable.
    pub fn holds(&self) -> bool {
        matches!(self, Outcome::Same | Outcome::Unsupported(_))
    }

    fn word(&self) -> String {
        match self {
            Outcome::Same => "same".into(),
            Outcome::Differs => "**differs**".into(),
            Outcome::Unsupported(why) => format!("unsupported: {why}"),
            Outcome::StaleLimitation => "**listed as a limitation but same**".into(),
        }
    }
}

/// One row of the matrix.
#[derive(Debug, Clone)]
pub struct MatrixRow {
    pub family: String,
    pub probe: String,
    pub reference: String,
    pub other: String,
    pub outcome: Outcome,
}

/// The probes of a reference run and another run, side by side.
#[derive(Debug, Clone)]
pub struct Matrix {
    pub reference: Sdk,
    pub other: Sdk,
    pub rows: Vec<MatrixRow>,
}

impl Matrix {
    /// Compares two runs probe by probe (a probe one run lacks reads "not reached").
    pub fn compare(reference: (Sdk, &[Cell]), other: (Sdk, &[Cell])) -> Self {
        let rows = reference
            .1
            .iter()
            .map(|cell| {
                let theirs = other
                    .1
                    .iter()
                    .find(|c| c.probe == cell.probe)
                    .map_or_else(|| "not reached".to_string(), |c| c.verdict.clone());
                let limitation = LIMITATIONS.iter().find(|l| l.probe == cell.probe);
                let outcome = match (theirs == cell.verdict, limitation) {
                    (true, None) => Outcome::Same,
                    (true, Some(_)) => Outcome::StaleLimitation,
                    (false, Some(l)) if other.0 == Sdk::Published => Outcome::Unsupported(l.reason),
                    (false, _) => Outcome::Differs,
                };
                MatrixRow {
                    family: cell.family.clone(),
                    probe: cell.probe.clone(),
                    reference: cell.verdict.clone(),
                    other: theirs,
                    outcome,
                }
            })
            .collect();
        Self {
            reference: reference.0,
            other: other.0,
            rows,
        }
    }

    /// The rows that fail: unexplained differences and stale limitations.
    pub fn failures(&self) -> Vec<&MatrixRow> {
        self.rows.iter().filter(|r| !r.outcome.holds()).collect()
    }

    /// The matrix as the markdown `docs/sdk-compat.md` holds.
    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "# SDK compatibility matrix\n\n\
             Every tool family and action, called through the real proxy (`reticle mcp`) on the \
             fixture app in Chromium, once with our SDK and once with the published \
             `@reticlehq/browser` 2.0.0. Generated by `gates/tests/hop5_sdk_compat.rs` \
             (`RETICLE_WRITE_SDK_COMPAT=1` rewrites it; otherwise the test checks it) and gated \
             by inventory row H5.6. A difference fails unless it is a documented 2.0.0 \
             limitation (`gates/src/compat/mod.rs`, `LIMITATIONS`).\n\n",
        );
        let _ = writeln!(
            out,
            "| family | probe | {} | {} | outcome |\n|---|---|---|---|---|",
            self.reference.label(),
            self.other.label()
        );
        for row in &self.rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                row.family,
                row.probe,
                cell_text(&row.reference),
                cell_text(&row.other),
                row.outcome.word()
            );
        }
        out.push_str(BEHAVIOURS);
        out
    }
}

/// What the matrix cannot show, written under it: behaviours of the two SDKs around the
/// connection, each with the test that holds it.
const BEHAVIOURS: &str = "\n## Behaviours outside the matrix\n\n\
- Two documents on one session id (S9: a same-origin iframe or a popup sharing the tab's \
sessionStorage, a duplicated tab). The daemon refuses the second document's hello with close \
1008 `session in use: …` while the first document's socket answers a ping within 2 s, and hands \
the session over only when it does not (a reconnect after the old socket died). Our SDK reads the \
reason, takes a session id of its own (kept in memory, not in the shared sessionStorage), warns \
once naming both ids and reconnects at once (`gates/src/scenarios/shared_session.rs`, row S9). The \
published 2.0.0 reads no close reason and takes no id of its own: it retries the same id every \
second and is refused each time (one entry in `/status` `refused` and the daemon log per retry) \
while the first page lives, and gets the session on its first retry after that page is gone. It \
never takes the session from a live page, so commands always land in the document holding the \
id (`gates/tests/hop5_published_sdk.rs`, \
`a_second_published_page_on_a_live_session_id_is_refused_never_swapped_in`).\n";

fn cell_text(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(probe: &str, verdict: &str) -> Cell {
        Cell {
            family: "f".into(),
            probe: probe.into(),
            verdict: verdict.into(),
        }
    }

    #[test]
    fn a_difference_fails_and_a_missing_probe_reads_not_reached() {
        let ours = [cell("a", "ok"), cell("b", "ok"), cell("c", "ok")];
        let theirs = [cell("a", "ok"), cell("b", "refused")];
        let matrix = Matrix::compare((Sdk::Ours, &ours[..]), (Sdk::Published, &theirs[..]));
        let failed: Vec<_> = matrix.failures().iter().map(|r| r.probe.clone()).collect();
        assert_eq!(failed, ["b", "c"]);
        assert_eq!(matrix.rows[2].other, "not reached");
        assert!(
            matrix
                .markdown()
                .contains("| f | b | ok | refused | **differs** |")
        );
    }
}
