//! The zero-install script: it imports the daemon's served SDK and connects it under the driven
//! tab's session id, once per document (a page that already holds a Reticle SDK is left alone).
//! It builds and runs the script; it must not decide whether a page needs it.

use chromiumoxide::Page;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;

/// What injecting into the document already there came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Injected {
    /// The SDK loaded in the current document.
    Loaded,
    /// The current document refused it (its CSP); it was loaded again, CSP bypassed.
    ReloadedPastCsp(String),
}

/// How long the page gets to import the SDK, or to load again.
const INJECT_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// The global a document sets once the script ran, so it runs once per document.
const ONCE: &str = "__reticleInjected";

/// The script for the daemon on `port` and session `session`; it resolves to `"loaded"` or to
/// the import's error message.
pub fn source(port: u16, session: &str) -> String {
    let session = serde_json::to_string(session).unwrap_or_else(|_| "\"\"".into());
    format!(
        "(() => {{ if (globalThis.{ONCE}) return globalThis.{ONCE}; \
         globalThis.{ONCE} = import('http://127.0.0.1:{port}/sdk/reticle.js')\
         .then((sdk) => {{ sdk.connect({{ session: {session} }}); return 'loaded'; }}, \
         (e) => {{ globalThis.{ONCE} = undefined; return String(e && e.message || e); }}); \
         return globalThis.{ONCE}; }})()"
    )
}

/// Runs `source` in `page`'s current document; a refusal by the page's CSP reloads the page
/// (CSP is bypassed by then, and the script runs before the new document's own).
pub async fn into_current(page: &Page, source: &str) -> Result<Injected, String> {
    let params = EvaluateParams::builder()
        .expression(source)
        .await_promise(true)
        .build()
        .map_err(|e| format!("the SDK could not be injected: {e}"))?;
    let said = tokio::time::timeout(INJECT_BOUND, page.evaluate_expression(params))
        .await
        .map_err(|_| format!("the page did not run the injected SDK within {} s (a page busy in a loop never does)", INJECT_BOUND.as_secs()))?
        .map_err(|e| format!("the page did not run the injected SDK: {e}"))?
        .into_value::<String>()
        .unwrap_or_default();
    if said == "loaded" {
        return Ok(Injected::Loaded);
    }
    tokio::time::timeout(INJECT_BOUND, page.reload())
        .await
        .map_err(|_| {
            format!(
                "the page refused the SDK ({said}) and did not load again within {} s",
                INJECT_BOUND.as_secs()
            )
        })?
        .map_err(|e| {
            format!("the page refused the SDK ({said}) and could not be loaded again: {e}")
        })?;
    Ok(Injected::ReloadedPastCsp(said))
}
