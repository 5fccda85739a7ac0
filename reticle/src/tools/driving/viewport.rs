//! `reticle_viewport`: the driven tab's viewport (width, height, device scale factor, mobile)
//! set over DevTools emulation and remembered for the session. It refuses on a person's tab,
//! where there is no DevTools; it proves nothing about the app.

use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use serde_json::{Value, json};

use crate::tools::call::Call;
use crate::tools::driven::driven_tab;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::ViewportArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};

/// The widest and tallest viewport accepted, in CSS pixels.
const MAX_SIDE: u32 = 8192;

async fn viewport(call: &Call<'_>, a: ViewportArgs) -> Result<Value, Refusal> {
    let tool = call.tool.as_str();
    if !(1..=MAX_SIDE).contains(&a.width) || !(1..=MAX_SIDE).contains(&a.height) {
        return Err(Refusal::bad_arguments(
            tool,
            &format!("width and height must be 1 to {MAX_SIDE} CSS pixels"),
        ));
    }
    let scale = a.device_scale_factor.unwrap_or(1.0);
    if !(0.5..=4.0).contains(&scale) {
        return Err(Refusal::bad_arguments(
            tool,
            "deviceScaleFactor must be 0.5 to 4",
        ));
    }
    let mobile = a.mobile.unwrap_or(false);
    let tab = driven_tab(call).await?;
    let page = tab.page().await.map_err(|why| lost(tool, &why))?;
    let params =
        SetDeviceMetricsOverrideParams::new(i64::from(a.width), i64::from(a.height), scale, mobile);
    tokio::time::timeout(crate::tools::driven::DEVTOOLS_BOUND, page.execute(params))
        .await
        .map_err(|_| {
            lost(
                tool,
                "the tab did not answer DevTools in time (a busy page never does)",
            )
        })?
        .map_err(|e| lost(tool, &e.to_string()))?;
    let applied = json!({
        "width": a.width, "height": a.height, "deviceScaleFactor": scale, "mobile": mobile,
    });
    call.ctx
        .host
        .remember(&tab.session, |m| m.viewport = Some(applied.clone()));
    Ok(json!({ "applied": true, "viewport": applied }))
}

fn lost(tool: &str, why: &str) -> Refusal {
    Refusal::new(
        format!("{tool}: the driven tab's DevTools link failed ({why}); nothing was changed"),
        "call again (a browser that died is launched again), or reticle_sessions to see the tab",
    )
}

/// `reticle_viewport`, as the registry knows it.
pub struct Viewport;

impl Tool for Viewport {
    const NAME: ToolName = ToolName::Viewport;
    const TITLE: &'static str = "Set the viewport";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str =
        "Set a driven tab's viewport (width, height, deviceScaleFactor, mobile) over DevTools.";
    const OUTPUT: &'static [&'static str] = &["applied", "viewport"];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = ViewportArgs;

    fn run<'a>(call: &'a Call<'a>, a: ViewportArgs) -> Answer<'a> {
        Box::pin(viewport(call, a))
    }
}
