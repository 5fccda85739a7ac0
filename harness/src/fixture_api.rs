//! The fixture app's API (`apps/e2e/API.md`): `GET /api/health`, `GET /api/quote` (a body with a
//! known word and a sensitive value), `POST /api/login` answering as
//! the fault mode in force says (`ok`, `error` → 500, `slow` → late), and `POST /api/fault` to
//! set that mode. The harness drives `/api/fault`; the app never calls it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// The login endpoint's behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Ok,
    Error,
    Slow(Duration),
}

type Shared = Arc<Mutex<Fault>>;

/// The `/api` routes, with their own fault state.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let fault: Shared = Arc::new(Mutex::new(Fault::Ok));
    Router::new()
        .route(
            "/health",
            get(|| async { axum::Json(json!({ "ok": true })) }),
        )
        .route("/quote", get(|| async { axum::Json(quote()) }))
        .route("/login", post(login_create))
        .route("/fault", post(fault_update))
        .with_state(fault)
}

/// The quote endpoint's body: the word a body check looks for, and a value it must never see.
pub fn quote() -> Value {
    json!({ "ok": true, "quote": "serendipity", "token": "fixture-secret" })
}

fn answer(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

fn bad(sentence: &str) -> Response {
    answer(
        StatusCode::BAD_REQUEST,
        json!({ "ok": false, "error": sentence }),
    )
}

async fn login_create(State(fault): State<Shared>, body: String) -> Response {
    let Ok(body) = serde_json::from_str::<Value>(&body) else {
        return bad("the body is not JSON");
    };
    let user = body
        .get("user")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty());
    let (Some(user), Some(_)) = (user, body.get("password").and_then(Value::as_str)) else {
        return bad("user (a non-empty string) and password (a string) are required");
    };
    let mode = *fault.lock().unwrap_or_else(|p| p.into_inner());
    match mode {
        Fault::Error => answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({ "ok": false, "error": "injected fault" }),
        ),
        Fault::Slow(delay) => {
            tokio::time::sleep(delay).await;
            answer(StatusCode::OK, json!({ "ok": true, "user": user }))
        }
        Fault::Ok => answer(StatusCode::OK, json!({ "ok": true, "user": user })),
    }
}

async fn fault_update(State(fault): State<Shared>, body: String) -> Response {
    let Ok(body) = serde_json::from_str::<Value>(&body) else {
        return bad("the body is not JSON");
    };
    let delay = match body.get("delayMs") {
        None => 0,
        Some(value) => match value.as_u64() {
            Some(ms) if ms <= 60_000 => ms,
            _ => return bad("delayMs must be an integer from 0 to 60000"),
        },
    };
    let mode = match body.get("mode").and_then(Value::as_str) {
        Some("ok") => Fault::Ok,
        Some("error") => Fault::Error,
        Some("slow") => Fault::Slow(Duration::from_millis(delay)),
        _ => return bad("mode must be ok, error or slow"),
    };
    *fault.lock().unwrap_or_else(|p| p.into_inner()) = mode;
    let word = match mode {
        Fault::Ok => "ok",
        Fault::Error => "error",
        Fault::Slow(_) => "slow",
    };
    answer(
        StatusCode::OK,
        json!({ "ok": true, "mode": word, "delayMs": delay }),
    )
}
