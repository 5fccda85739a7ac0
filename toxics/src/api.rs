//! The REST API, in Toxiproxy's shapes: proxies and their toxics under
//! `/proxies/{proxy}/toxics/{toxic}`, plus `/populate`, `/reset` and `/version`.
//!
//! It owns the route table, request parsing and the status of each success; every failure is an
//! [`ApiError`] written by its one writer. It must not hold state of its own: everything lives in
//! the [`ProxyCollection`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use indexmap::IndexMap;
use serde::Serialize;

use crate::collection::ProxyCollection;
use crate::error::ApiError;
use crate::proxy::{ProxyConfig, ProxyInfo, ProxyPatch};
use crate::toxic::{ToxicPatch, ToxicSpec};

/// The version `GET /version` reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

type Shared = State<Arc<ProxyCollection>>;
type ApiResult<T> = Result<T, ApiError>;

/// The route table. Handlers are named `<resource>_<action>`.
pub fn routes(collection: Arc<ProxyCollection>) -> Router {
    Router::new()
        .route("/reset", post(reset_state))
        .route("/proxies", get(proxy_index).post(proxy_create))
        .route("/populate", post(populate))
        .route(
            "/proxies/{proxy}",
            get(proxy_show)
                .post(proxy_update)
                .patch(proxy_update)
                .delete(proxy_delete),
        )
        .route(
            "/proxies/{proxy}/toxics",
            get(toxic_index).post(toxic_create),
        )
        .route(
            "/proxies/{proxy}/toxics/{toxic}",
            get(toxic_show)
                .post(toxic_update)
                .patch(toxic_update)
                .delete(toxic_delete),
        )
        .route("/version", get(version))
        .fallback(|| async { ApiError::route_not_found() })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .layer(middleware::map_response(json_errors))
        .layer(middleware::from_fn(stop_browsers))
        .with_state(collection)
}

/// Refuse requests whose user agent is a web browser (Toxiproxy's rule, and ours: a page
/// open in the developer's browser must not be able to reach this API).
async fn stop_browsers(headers: HeaderMap, request: Request, next: Next) -> Response {
    let browser = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ua| ua.starts_with("Mozilla/"));
    if browser {
        return ApiError::browser_refused().into_response();
    }
    next.run(request).await
}

/// Errors that did not come from a handler (axum's own rejections: a path that does not
/// decode, a body over the limit) are rewritten into the `{"error", "status"}` shape, so a
/// client sees one error format whatever failed.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_lowercase());
    ApiError::new(text, status).into_response()
}

/// A request body, read as JSON whatever its content type (as Toxiproxy does).
fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request_body().with_detail(e))
}

async fn proxy_index(State(c): Shared) -> Json<IndexMap<String, ProxyInfo>> {
    Json(
        c.all()
            .into_iter()
            .map(|p| (p.name().to_owned(), p.info()))
            .collect(),
    )
}

async fn proxy_create(State(c): Shared, body: Bytes) -> ApiResult<(StatusCode, Json<ProxyInfo>)> {
    let config: ProxyConfig = parse(&body)?;
    let proxy = c.create(config)?;
    Ok((StatusCode::CREATED, Json(proxy.info())))
}

/// The body of a populate answer: the proxies, and on failure the error beside them.
#[derive(Serialize)]
struct PopulateAnswer {
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    proxies: Vec<ProxyInfo>,
}

async fn populate(State(c): Shared, body: Bytes) -> ApiResult<(StatusCode, Json<PopulateAnswer>)> {
    let configs: Vec<ProxyConfig> = parse(&body)?;
    let (proxies, error) = match c.populate(configs) {
        Ok(proxies) => (proxies, None),
        Err(failed) => (failed.done, Some(failed.error)),
    };
    let status = error
        .as_ref()
        .map(ApiError::status_code)
        .unwrap_or(StatusCode::CREATED);
    Ok((
        status,
        Json(PopulateAnswer {
            status: error.as_ref().map(|e| e.status),
            error: error.map(|e| e.error),
            proxies: proxies.iter().map(|p| p.info()).collect(),
        }),
    ))
}

async fn proxy_show(State(c): Shared, Path(proxy): Path<String>) -> ApiResult<Json<ProxyInfo>> {
    Ok(Json(c.get(&proxy)?.info()))
}

async fn proxy_update(
    State(c): Shared,
    Path(proxy): Path<String>,
    body: Bytes,
) -> ApiResult<Json<ProxyInfo>> {
    let proxy = c.get(&proxy)?;
    let patch: ProxyPatch = parse(&body)?;
    proxy.update(patch)?;
    Ok(Json(proxy.info()))
}

async fn proxy_delete(State(c): Shared, Path(proxy): Path<String>) -> ApiResult<StatusCode> {
    c.remove(&proxy)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn toxic_index(
    State(c): Shared,
    Path(proxy): Path<String>,
) -> ApiResult<Json<Vec<ToxicSpec>>> {
    let proxy = c.get(&proxy)?;
    Ok(Json(proxy.toxics().iter().map(|t| t.spec()).collect()))
}

async fn toxic_create(
    State(c): Shared,
    Path(proxy): Path<String>,
    body: Bytes,
) -> ApiResult<Json<ToxicSpec>> {
    let proxy = c.get(&proxy)?;
    let spec = ToxicSpec::from_json(&body)?;
    let (toxic, applied) = proxy.add_toxic(spec)?;
    applied.wait().await;
    Ok(Json(toxic.spec()))
}

async fn toxic_show(
    State(c): Shared,
    Path((proxy, toxic)): Path<(String, String)>,
) -> ApiResult<Json<ToxicSpec>> {
    let proxy = c.get(&proxy)?;
    let toxic = proxy.toxic(&toxic).ok_or_else(ApiError::toxic_not_found)?;
    Ok(Json(toxic.spec()))
}

async fn toxic_update(
    State(c): Shared,
    Path((proxy, toxic)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<Json<ToxicSpec>> {
    let proxy = c.get(&proxy)?;
    if proxy.toxic(&toxic).is_none() {
        return Err(ApiError::toxic_not_found());
    }
    let patch = ToxicPatch::from_json(&body)?;
    let (toxic, applied) = proxy.update_toxic(&toxic, patch)?;
    applied.wait().await;
    Ok(Json(toxic.spec()))
}

async fn toxic_delete(
    State(c): Shared,
    Path((proxy, toxic)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let proxy = c.get(&proxy)?;
    proxy.remove_toxic(&toxic)?.wait().await;
    Ok(StatusCode::NO_CONTENT)
}

async fn reset_state(State(c): Shared) -> ApiResult<StatusCode> {
    c.reset()?.wait().await;
    Ok(StatusCode::NO_CONTENT)
}

async fn version() -> impl IntoResponse {
    Json(serde_json::json!({ "version": VERSION, "server": "toxics" }))
}
