//! [`FixtureApp`]: the fixture app on an ephemeral loopback port. It serves `apps/e2e/` at `/`, the
//! SDK at `/sdk/` (or a negative control's stand-in), the fixture API under `/api/` (see
//! `apps/e2e/API.md`), directories a test mounts and pages a test writes inline.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::fixture_api;

/// The repository root (where `apps/` and `sdk/` live).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("harness/ sits in the repository root")
        .to_path_buf()
}

/// A page a test wrote.
#[derive(Debug, Clone)]
struct Written {
    content_type: String,
    body: String,
    /// Served `no-cache` instead of `no-store`, so the back/forward cache may keep it.
    cacheable: bool,
}

/// Pages a test wrote, by path.
type Pages = Arc<Mutex<HashMap<String, Written>>>;

/// Options for a [`FixtureApp`].
#[derive(Debug, Default)]
pub struct FixtureAppBuilder {
    mounts: Vec<(String, PathBuf)>,
    sdk: Option<PathBuf>,
}

impl FixtureAppBuilder {
    /// Serves `dir` under `/<prefix>/`.
    pub fn mount(mut self, prefix: &str, dir: impl Into<PathBuf>) -> Self {
        self.mounts
            .push((format!("/{}", prefix.trim_matches('/')), dir.into()));
        self
    }

    /// Serves `dir` at `/sdk/` instead of the repository's `sdk/` (a stand-in SDK).
    pub fn sdk(mut self, dir: impl Into<PathBuf>) -> Self {
        self.sdk = Some(dir.into());
        self
    }

    /// Binds an ephemeral loopback port and serves until the app is dropped.
    pub async fn start(self) -> FixtureApp {
        let root = repo_root();
        let pages: Pages = Arc::default();
        let sdk = self.sdk.unwrap_or_else(|| root.join("sdk"));
        let mut router = Router::new()
            .nest("/api", fixture_api::router())
            .nest_service("/sdk", ServeDir::new(sdk));
        for (prefix, dir) in self.mounts {
            router = router.nest_service(&prefix, ServeDir::new(dir));
        }
        let router = router
            .fallback(serve_page_or_app)
            .with_state(AppFiles {
                pages: pages.clone(),
                app: root.join("apps").join("e2e"),
            })
            .layer(SetResponseHeaderLayer::if_not_present(
                header::CACHE_CONTROL,
                HeaderValue::from_static("no-store"),
            ))
            // The sandboxed iframe has an opaque origin: its module imports are CORS requests.
            .layer(SetResponseHeaderLayer::overriding(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("an ephemeral loopback port for the fixture app");
        let addr = listener.local_addr().expect("a bound address");
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move { stopped.cancelled().await })
                .await;
        });
        FixtureApp { addr, pages, stop }
    }
}

#[derive(Clone)]
struct AppFiles {
    pages: Pages,
    app: PathBuf,
}

async fn serve_page_or_app(State(files): State<AppFiles>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    let page = files
        .pages
        .lock()
        .ok()
        .and_then(|pages| pages.get(&path).cloned());
    if let Some(page) = page {
        let cache = if page.cacheable {
            "no-cache"
        } else {
            "no-store"
        };
        return (
            [
                (header::CONTENT_TYPE, page.content_type),
                (header::CACHE_CONTROL, cache.to_string()),
            ],
            page.body,
        )
            .into_response();
    }
    use tower::ServiceExt;
    match ServeDir::new(&files.app).oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// The fixture app, served until dropped. Everything is served `no-store`, so a reload always
/// fetches what is on disk, except pages written with [`FixtureApp::history_page`]: those are
/// `no-cache`, which leaves them eligible for Chromium's back/forward cache as people's apps are
/// (Chromium keeps a `no-store` page that holds a socket out of it).
#[derive(Debug)]
pub struct FixtureApp {
    addr: SocketAddr,
    pages: Pages,
    stop: CancellationToken,
}

impl FixtureApp {
    /// Serves the fixture app with no extra mounts.
    pub async fn start() -> Self {
        Self::builder().start().await
    }

    pub fn builder() -> FixtureAppBuilder {
        FixtureAppBuilder::default()
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.addr.port())
    }

    /// Serves `html` at `path` (replacing any page there).
    pub fn page(&self, path: &str, html: impl Into<String>) {
        self.file(path, "text/html; charset=utf-8", html);
    }

    /// Serves `html` at `path` as an app's dev server would (`no-cache`), so Chromium's
    /// back/forward cache may keep the page when its tab navigates away.
    pub fn history_page(&self, path: &str, html: impl Into<String>) {
        self.write(path, "text/html; charset=utf-8", html.into(), true);
    }

    /// Serves `body` at `path` with `content_type`.
    pub fn file(&self, path: &str, content_type: &str, body: impl Into<String>) {
        self.write(path, content_type, body.into(), false);
    }

    fn write(&self, path: &str, content_type: &str, body: String, cacheable: bool) {
        if let Ok(mut pages) = self.pages.lock() {
            pages.insert(
                path.to_string(),
                Written {
                    content_type: content_type.to_string(),
                    body,
                    cacheable,
                },
            );
        }
    }
}

impl Drop for FixtureApp {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
