//! The SDK the daemon serves, tested from outside: a page on a loopback origin loads it with
//! one line (no port or token in the page's code) and shows up in `reticle_sessions` through the
//! real proxy; a request with a non-loopback `Origin` gets neither the pairing token nor CORS;
//! the entry is a short-lived redirect to a versioned, long-cached module: one file, the SDK's
//! modules bundled at build time, which exports what `sdk/reticle.js` exports.

mod support;

use reqwest::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, LOCATION, ORIGIN};
use serde_json::{Value, json};
use support::tools::ToolRig;

const LOOPBACK_ORIGIN: &str = "http://localhost:5173";
const FOREIGN_ORIGIN: &str = "https://example.com";

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_loopback_page_loads_the_served_sdk_in_one_line_and_is_listed() {
    let rig = ToolRig::start(&[]).await;
    let page = format!(
        r#"<!doctype html><html><head><title>Served SDK</title></head><body>
<button>Served</button>
<script type="module">
import('http://127.0.0.1:{port}/sdk/reticle.js').then((r) => r.connect({{ session: 'served-sdk', present: false }}));
</script></body></html>"#,
        port = rig.daemon.port()
    );
    rig.app.page("/served.html", page);
    let url = rig.app.url("/served.html");
    assert!(
        !url.contains(&rig.daemon.token()),
        "the page carries no token"
    );
    let _tab = rig.open_at(&url, "served-sdk").await;
    let found = rig
        .ok("reticle_query", json!({"role": "button", "name": "Served"}))
        .await;
    assert_eq!(
        found["elements"].as_array().map(Vec::len),
        Some(1),
        "{found}"
    );
}

#[tokio::test]
async fn only_a_loopback_origin_gets_the_token_and_cors() {
    let rig = ToolRig::start(&[]).await;
    let base = format!("http://127.0.0.1:{}", rig.daemon.port());
    let client = http();
    let get = async |path: &str, origin: Option<&str>| {
        let mut request = client.get(format!("{base}{path}"));
        if let Some(origin) = origin {
            request = request.header(ORIGIN, origin);
        }
        request.send().await.unwrap()
    };

    let paired = get("/sdk/pairing", Some(LOOPBACK_ORIGIN)).await;
    assert_eq!(paired.status(), 200);
    assert_eq!(
        paired.headers()[ACCESS_CONTROL_ALLOW_ORIGIN],
        LOOPBACK_ORIGIN
    );
    assert_eq!(paired.headers()[CACHE_CONTROL], "no-store");
    let body: Value = paired.json().await.unwrap();
    assert_eq!(body["token"], rig.daemon.token().as_str());

    for origin in [
        Some(FOREIGN_ORIGIN),
        Some("null"),
        Some("http://localhost.example.com"),
        None,
    ] {
        let refused = get("/sdk/pairing", origin).await;
        assert_eq!(refused.status(), 403, "{origin:?}");
        assert!(
            refused.headers().get(ACCESS_CONTROL_ALLOW_ORIGIN).is_none(),
            "{origin:?}"
        );
        let text = refused.text().await.unwrap();
        assert!(!text.contains(&rig.daemon.token()), "{origin:?}: {text}");
    }

    let entry = get("/sdk/reticle.js", Some(LOOPBACK_ORIGIN)).await;
    assert_eq!(entry.status(), 302);
    assert_eq!(entry.headers()[CACHE_CONTROL], "no-cache");
    let location = entry.headers()[LOCATION].to_str().unwrap().to_string();
    assert!(
        location.starts_with("/sdk/") && location.ends_with("/reticle.js"),
        "{location}"
    );
    let module = get(&location, Some(LOOPBACK_ORIGIN)).await;
    assert_eq!(module.status(), 200);
    assert_eq!(
        module.headers()[ACCESS_CONTROL_ALLOW_ORIGIN],
        LOOPBACK_ORIGIN
    );
    assert!(
        module.headers()[CACHE_CONTROL]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    let source = module.text().await.unwrap();
    assert!(
        source.contains("export function connect"),
        "the entry module"
    );
    assert!(
        !source.contains("from './") && !source.contains("from '../"),
        "one module that imports no other"
    );
    assert!(
        !source.contains(&rig.daemon.token()),
        "the module embeds no token"
    );
    let core = get(&location, Some(FOREIGN_ORIGIN)).await;
    // The modules hold no secret, but a foreign page gets nothing from the daemon: every HTTP
    // route refuses a non-loopback Origin (S8).
    assert_eq!(core.status(), 403, "a foreign origin is refused");
    assert!(
        core.headers().get(ACCESS_CONTROL_ALLOW_ORIGIN).is_none(),
        "no CORS for a foreign origin"
    );
    // One file: the modules are inside it, so none is fetched on its own.
    let module_alone = get(
        &location.replace("reticle.js", "src/core.js"),
        Some(LOOPBACK_ORIGIN),
    )
    .await;
    assert_eq!(module_alone.status(), 404, "the SDK is served as one file");
    let stale = get("/sdk/0.0.0-old/reticle.js", Some(LOOPBACK_ORIGIN)).await;
    assert_eq!(stale.status(), 404, "another tag is not this daemon's SDK");
}

/// The served bundle, loaded as a module by Node, exports exactly what `sdk/reticle.js` does, and
/// a page built on it works as one built on the modules (every browser gate loads it). Control: the
/// same check on a copy with one export dropped fails.
#[tokio::test]
async fn the_one_served_file_exports_what_the_entry_module_exports() {
    let rig = ToolRig::start(&[]).await;
    let client = http();
    let base = format!("http://127.0.0.1:{}", rig.daemon.port());
    let entry = client
        .get(format!("{base}/sdk/reticle.js"))
        .header(ORIGIN, LOOPBACK_ORIGIN)
        .send()
        .await
        .unwrap();
    let location = entry.headers()[LOCATION].to_str().unwrap().to_string();
    let bundle = client
        .get(format!("{base}{location}"))
        .header(ORIGIN, LOOPBACK_ORIGIN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let exports_of = |name: &str, source: &str| -> Result<Vec<String>, String> {
        let file = dir.path().join(name);
        std::fs::write(&file, source).unwrap();
        let script = format!(
            "const m = await import({:?}); console.log(JSON.stringify(Object.keys(m).sort()));",
            format!("file://{}", file.display())
        );
        let out = std::process::Command::new("node")
            .args(["--input-type=module", "-e", &script])
            .output()
            .map_err(|e| format!("node did not start: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
    };
    let entry_exports = exports_of(
        "entry.mjs",
        &format!(
            "export * from {:?}; export {{ default }} from {:?};",
            format!("file://{}/../sdk/reticle.js", env!("CARGO_MANIFEST_DIR")),
            format!("file://{}/../sdk/reticle.js", env!("CARGO_MANIFEST_DIR"))
        ),
    )
    .expect("the entry module loads in node");
    assert!(
        entry_exports.contains(&"connect".to_string()),
        "{entry_exports:?}"
    );
    assert_eq!(
        exports_of("bundle.mjs", &bundle).expect("the bundle loads in node"),
        entry_exports
    );
    let dropped = bundle.replacen("export function signal", "function signal", 1);
    assert_ne!(
        exports_of("dropped.mjs", &dropped).expect("the edited bundle loads"),
        entry_exports,
        "control: a bundle missing an export is told apart"
    );
}
