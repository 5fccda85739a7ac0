//! The zero-install script, run before a driven tab's own scripts in every document: it notes
//! whether the page opens a socket to the daemon itself (an app wired with either SDK), fetches
//! the daemon's served SDK meanwhile, and once the page has loaded connects it under the tab's
//! session id only when the page did not. It builds the script and reads its outcome; it must
//! not open tabs or decide bounds for the caller.

use chromiumoxide::Page;

use super::SdkSource;

/// The global the script keeps its outcome in (`pending`, `app`, `injected`, or why it failed).
pub const OUTCOME: &str = "__reticleDrive";

/// How long after the page's `load` an app gets to open its own socket to the daemon before the
/// SDK is injected (an app's SDK connects from its module scripts, which ran before `load`).
const APP_GRACE_MS: u64 = 10;

/// The script for the daemon on `port` and session `session`.
pub fn source(port: u16, session: &str) -> String {
    let session = serde_json::to_string(session).unwrap_or_else(|_| "\"\"".into());
    format!(
        r#"(() => {{
  const g = globalThis;
  if (g.{OUTCOME} || g.top !== g) return;
  g.{OUTCOME} = 'pending';
  const later = g.setTimeout.bind(g);
  const Native = g.WebSocket;
  let wired = false;
  if (typeof Native === 'function') {{
    g.WebSocket = new Proxy(Native, {{
      construct(target, args, newTarget) {{
        try {{
          const to = new URL(String(args[0]), g.location.href);
          if (to.port === '{port}' && to.pathname.startsWith('/reticle')) wired = true;
        }} catch (e) {{}}
        return Reflect.construct(target, args, newTarget === g.WebSocket ? target : newTarget);
      }},
    }});
  }}
  // Fetched while the page loads (importing it connects nothing), so only connecting is left
  // once the page is known to have no SDK of its own.
  const loading = import('http://127.0.0.1:{port}/sdk/reticle.js');
  loading.catch(() => {{}});
  const decide = () => {{
    if (wired || g[Symbol.for('reticle-rs.sdk.instance')]) {{ g.{OUTCOME} = 'app'; return; }}
    g.{OUTCOME} = 'injecting';
    loading.then(
      (sdk) => {{ const said = sdk.connect({{ session: {session} }}); g.{OUTCOME} = said && said.alreadyConnected ? 'app' : 'injected'; }},
      (e) => {{ g.{OUTCOME} = 'failed: ' + String((e && e.message) || e); }});
  }};
  const loaded = () => later(decide, {APP_GRACE_MS});
  if (g.document.readyState === 'complete') loaded();
  else g.addEventListener('load', loaded, {{ once: true }});
}})();"#
    )
}

/// What the script in `page`'s current document says, bounded by `bound`: where the SDK came
/// from, or why it could not be had.
pub async fn outcome(page: &Page, bound: std::time::Duration) -> Result<SdkSource, String> {
    let read = tokio::time::timeout(bound, page.evaluate(format!("String(globalThis.{OUTCOME})")))
        .await
        .map_err(|_| {
            format!(
                "the page did not answer DevTools within {} ms: it is busy (an endless loop in its scripts never lets it answer)",
                bound.as_millis()
            )
        })?
        .map_err(|e| format!("the page could not be read over DevTools: {e}"))?;
    let said = read.into_value::<String>().unwrap_or_default();
    match said.as_str() {
        "app" => Ok(SdkSource::App),
        "injected" => Ok(SdkSource::Injected),
        "pending" | "injecting" => Ok(SdkSource::Pending),
        "undefined" => Err("the page never ran Reticle's start-up script".into()),
        failed => Err(format!(
            "the daemon's SDK could not be loaded into the page ({})",
            failed.trim_start_matches("failed: ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_names_the_daemon_and_quotes_the_session() {
        let script = source(4411, "drive-\"x");
        assert!(script.contains("http://127.0.0.1:4411/sdk/reticle.js"));
        assert!(script.contains(r#"session: "drive-\"x""#));
        assert!(script.contains("to.port === '4411'"));
    }
}
