//! V1: `reticle verify` whose browser died mid-flow is never green. Its scenario, its judge and
//! the judge's unit tests; the stand-in verify that exits 0 whatever happened is its control.

use serde_json::json;

use crate::controls::StandIn;
use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, observe, settle};
use crate::scenarios::verify_rig::{VerifyRig, click_flow};
use crate::scenarios::{GateEnv, Ran};

/// V1: verify replays a flow whose step waits long on the page; its Chromium is killed
/// mid-flow. The run must exit 2 and say the browser died (control: the kill landed while the
/// flow's session was connected).
pub async fn browser_death_is_never_green(env: &GateEnv) -> Ran {
    const FAULT: &str = "verify_browser_killed";
    let history = History::new();
    let rig = match VerifyRig::start().await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    // The signal never comes on an unbroken page either: the step waits out its bound, so the
    // kill lands while the flow is replaying.
    let slow = click_flow("slow", "counter-increment", "never.sent", 20_000);
    if let Err(why) = rig.save(slow).await {
        return could_not_start(history, FAULT, &why);
    }
    let url = rig.url("");
    let (ran, kill) = rig.verify_killing_browser(&env.reticle, &url, &[]).await;
    control(
        &history,
        "the browser verify launched was killed while its flow's session was connected",
        kill["killed"] == true,
        kill.clone(),
    );
    history.fault(FAULT, kill["killed"] == true, kill);
    observe(
        &history,
        "verify",
        json!({"code": ran.code, "stdout": ran.stdout, "stderr": ran.stderr, judge::HUNG: ran.hung}),
    );
    rig.daemon.shutdown().await;
    judged(history, judge_browser_death)
}

/// V1's judge: exit 2 naming the dead browser is surfaced; any other exit (0 above all) silent.
pub fn judge_browser_death(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        judge::established_fault(ops)?;
        let verify = ops
            .iter()
            .find(|o| o.actor == Actor::Harness && o.f == "verify")
            .map(|o| &o.value)
            .ok_or_else(|| Judgement::new(RowOutcome::Inconclusive, "verify was not run"))?;
        let said = format!(
            "{}{}",
            verify["stdout"].as_str().unwrap_or(""),
            verify["stderr"].as_str().unwrap_or("")
        );
        Ok(match verify["code"].as_i64() {
            Some(2) if said.contains("browser") && said.contains("died") => Judgement::new(
                RowOutcome::Surfaced,
                "verify exited 2 and said the browser died",
            ),
            code => Judgement::new(
                RowOutcome::Silent,
                format!("verify's browser died mid-flow, and it exited {code:?}: {said}"),
            ),
        })
    })
}

/// V1 in the row table.
pub const V1: RowGate = RowGate {
    id: "V1",
    file: file!(),
    scenario: |env| Box::pin(browser_death_is_never_green(env)),
    judge: judge_browser_death,
    controls: &[StandIn::VerifyExits0],
};

#[cfg(test)]
mod tests {
    //! Negative control of the judge: a history where verify exited 0 after its browser died
    //! scores `silent`; exit 2 naming the death `surfaced`.
    use super::*;

    fn history(code: i64, stderr: &str) -> History {
        let history = History::new();
        control(&history, "killed", true, json!({}));
        history.fault("verify_browser_killed", true, json!({}));
        observe(
            &history,
            "verify",
            json!({"code": code, "stdout": "", "stderr": stderr, judge::HUNG: false}),
        );
        history
    }

    #[test]
    fn a_green_run_after_the_browser_died_is_silent() {
        let green = history(0, "verified: 1 flow(s): 1 yes");
        assert_eq!(
            judge_browser_death(&green.ops()).outcome,
            RowOutcome::Silent
        );
        let honest = history(2, "the browser of job 1 died during the flow");
        assert_eq!(
            judge_browser_death(&honest.ops()).outcome,
            RowOutcome::Surfaced
        );
    }
}
