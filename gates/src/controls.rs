//! Negative controls: deliberately silent stand-ins run through real scenarios. Each must be
//! scored `silent`; if one is not, the checker behind it cannot fail and the gate fails.

use std::os::unix::fs::PermissionsExt;

use crate::judge::RowOutcome;
use crate::scenarios::{self, GateEnv};
use crate::scorecard::Control;

/// A `serve` that claims it started and exits 0 without binding anything (the reference's #115).
pub async fn stand_in_serve() -> Control {
    let dir = tempfile::tempdir().expect("a dir for the stand-in");
    let path = dir.path().join("reticle-stand-in");
    let script =
        "#!/bin/sh\necho \"started Reticle daemon (stand-in: nothing was bound)\"\nexit 0\n";
    let written = std::fs::write(&path, script)
        .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)));
    if let Err(err) = written {
        return Control {
            name: "stand-in serve exits 0 without binding",
            row: "H3.1",
            outcome: RowOutcome::Inconclusive,
            evidence: format!("could not write the stand-in: {err}"),
        };
    }
    let ran = scenarios::run("H3.1", &GateEnv { reticle: path }).await;
    Control {
        name: "stand-in serve exits 0 without binding",
        row: "H3.1",
        outcome: ran.judgement.outcome,
        evidence: ran.judgement.evidence,
    }
}

/// A stand-in page that, as its tab closes with a command pending, answers that command
/// `ok:false` "app failed": the page's loss blamed on the app, the wrong verdict H4.3 exists to
/// prevent. Run through H4.3's checker against a real daemon, it must be scored silent.
pub async fn stand_in_page_blames_the_app() -> Control {
    let ran = scenarios::bridge::stand_in_page_blames_the_app().await;
    Control {
        name: "stand-in page answers ok:false \"app failed\" as its tab closes",
        row: "H4.3",
        outcome: ran.judgement.outcome,
        evidence: ran.judgement.evidence,
    }
}

/// Every control, in order.
pub async fn all() -> Vec<Control> {
    vec![stand_in_serve().await, stand_in_page_blames_the_app().await]
}
