//! The REST API through a real HTTP client: shapes, statuses and effects, as Toxiproxy's
//! README and server define them.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use toxics::Server;

/// A thin JSON client over reqwest.
struct Api {
    base: String,
    http: reqwest::Client,
}

impl Api {
    fn new(server: &toxics::ServerHandle) -> Self {
        Self {
            base: server.url(),
            http: reqwest::Client::new(),
        }
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> (u16, Value) {
        let resp = req.send().await.expect("the API answers");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text:?}"))
        };
        (status, body)
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.send(self.http.get(format!("{}{path}", self.base)))
            .await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(self.http.post(format!("{}{path}", self.base)).json(&body))
            .await
    }

    async fn post_raw(&self, path: &str, body: &'static str) -> (u16, Value) {
        self.send(self.http.post(format!("{}{path}", self.base)).body(body))
            .await
    }

    async fn delete(&self, path: &str) -> (u16, Value) {
        self.send(self.http.delete(format!("{}{path}", self.base)))
            .await
    }
}

fn listen_of(proxy: &Value) -> SocketAddr {
    proxy["listen"].as_str().unwrap().parse().unwrap()
}

async fn setup() -> (Origin, toxics::ServerHandle, Api) {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let server = Server::builder()
        .seed(3)
        .serve("127.0.0.1:0")
        .await
        .unwrap();
    let api = Api::new(&server);
    (origin, server, api)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_reports_the_crate_version() {
    let (_o, _s, api) = setup().await;
    let (status, body) = api.get("/version").await;
    assert_eq!(status, 200);
    assert_eq!(body["version"], toxics::api::VERSION);
}

/// Create, show, list, update, delete, with the statuses Toxiproxy uses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_lives_and_dies_through_the_api() {
    let (origin, _s, api) = setup().await;
    let upstream = origin.addr.to_string();
    let (status, created) = api
        .post(
            "/proxies",
            json!({"name": "db", "listen": "127.0.0.1:0", "upstream": upstream}),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(created["name"], "db");
    assert_eq!(created["upstream"], upstream);
    assert_eq!(created["enabled"], true);
    assert_eq!(created["toxics"], json!([]));
    let listen = listen_of(&created);
    assert_ne!(listen.port(), 0, "the real port is reported");
    assert_eq!(probe(listen, REQUEST, PATIENCE).await.bytes, pattern(1000));

    let (status, shown) = api.get("/proxies/db").await;
    assert_eq!((status, &shown), (200, &created));
    let (status, all) = api.get("/proxies").await;
    assert_eq!(status, 200);
    assert_eq!(all, json!({"db": created}));

    let (status, updated) = api.post("/proxies/db", json!({"enabled": false})).await;
    assert_eq!(status, 200);
    assert_eq!(updated["enabled"], false);
    assert!(refused(listen).await);
    let (status, updated) = api.post("/proxies/db", json!({"enabled": true})).await;
    assert_eq!(status, 200);
    assert_eq!(updated["enabled"], true);
    assert_eq!(listen_of(&updated), listen, "re-enabled on the same port");
    assert_eq!(probe(listen, REQUEST, PATIENCE).await.bytes.len(), 1000);

    let (status, body) = api.delete("/proxies/db").await;
    assert_eq!((status, body), (204, Value::Null));
    assert!(refused(listen).await);
    let (status, body) = api.get("/proxies/db").await;
    assert_eq!(status, 404);
    assert_eq!(body, json!({"error": "proxy not found", "status": 404}));
}

/// A disabled proxy cuts the connections it carried and refuses new ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabling_a_proxy_cuts_its_connections() {
    let origin = Origin::start(Mode::Echo).await;
    let server = Server::start("127.0.0.1:0").await.unwrap();
    let api = Api::new(&server);
    let (_, created) = api
        .post(
            "/proxies",
            json!({"name": "echo", "upstream": origin.addr.to_string()}),
        )
        .await;
    let listen = listen_of(&created);
    let mut live = tokio::net::TcpStream::connect(listen).await.unwrap();
    assert_eq!(exchange(&mut live, b"before").await, b"before");
    let (status, _) = api.post("/proxies/echo", json!({"enabled": false})).await;
    assert_eq!(status, 200);
    let cut = probe_on(&mut live, b"", PATIENCE).await;
    assert!(matches!(cut.end, End::Eof | End::Reset), "{cut:?}");
    assert!(refused(listen).await);
}

/// Changing the upstream restarts the proxy onto the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updating_the_upstream_redirects_new_connections() {
    let (origin, _s, api) = setup().await;
    let other = Origin::start(Mode::Reply(7)).await;
    let (_, created) = api
        .post(
            "/proxies",
            json!({"name": "p", "upstream": origin.addr.to_string()}),
        )
        .await;
    let (status, updated) = api
        .post("/proxies/p", json!({"upstream": other.addr.to_string()}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(updated["upstream"], other.addr.to_string());
    let listen = listen_of(&created);
    assert_eq!(probe(listen, REQUEST, PATIENCE).await.bytes, pattern(7));
}

/// Proxy errors: 409 for a taken name, 400 for a missing field, bad JSON or a non-loopback
/// listen address, 404 for an unknown proxy; each in `{"error", "status"}`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_errors_have_toxiproxy_shapes() {
    let (origin, _s, api) = setup().await;
    let up = origin.addr.to_string();
    assert_eq!(
        api.post("/proxies", json!({"name": "a", "upstream": up}))
            .await
            .0,
        201
    );
    assert_eq!(
        api.post("/proxies", json!({"name": "a", "upstream": up}))
            .await,
        (409, json!({"error": "proxy already exists", "status": 409}))
    );
    assert_eq!(
        api.post("/proxies", json!({"upstream": up})).await,
        (
            400,
            json!({"error": "missing required field: name", "status": 400})
        )
    );
    assert_eq!(
        api.post("/proxies", json!({"name": "b"})).await,
        (
            400,
            json!({"error": "missing required field: upstream", "status": 400})
        )
    );
    let (status, body) = api.post_raw("/proxies", "{not json").await;
    assert_eq!(status, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("bad request body")
    );
    assert_eq!(body["status"], 400);
    let (status, body) = api
        .post(
            "/proxies",
            json!({"name": "c", "listen": "0.0.0.0:0", "upstream": up}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("loopback"));
    assert_eq!(
        api.post("/proxies/nope", json!({"enabled": false})).await,
        (404, json!({"error": "proxy not found", "status": 404}))
    );
    assert_eq!(api.delete("/proxies/nope").await.0, 404);
    assert_eq!(api.get("/proxies/nope/toxics").await.0, 404);
    assert_eq!(
        api.post("/proxies/nope/toxics", json!({"type": "latency"}))
            .await
            .0,
        404
    );
}

/// Toxics: create with defaults, list, show, update (attributes merge), delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toxic_lives_and_dies_through_the_api() {
    let (origin, _s, api) = setup().await;
    let (_, proxy) = api
        .post(
            "/proxies",
            json!({"name": "p", "upstream": origin.addr.to_string()}),
        )
        .await;
    let listen = listen_of(&proxy);
    let (status, toxic) = api
        .post(
            "/proxies/p/toxics",
            json!({"type": "limit_data", "attributes": {"bytes": 10}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        toxic,
        json!({"name": "limit_data_downstream", "type": "limit_data", "stream": "downstream",
               "toxicity": 1.0, "attributes": {"bytes": 10}})
    );
    assert_eq!(probe(listen, REQUEST, PATIENCE).await.bytes, pattern(10));

    assert_eq!(
        api.get("/proxies/p/toxics").await,
        (200, json!([toxic.clone()]))
    );
    assert_eq!(
        api.get("/proxies/p/toxics/limit_data_downstream").await,
        (200, toxic.clone())
    );
    assert_eq!(api.get("/proxies/p").await.1["toxics"], json!([toxic]));

    let (status, updated) = api
        .post(
            "/proxies/p/toxics/limit_data_downstream",
            json!({"attributes": {"bytes": 20}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(updated["attributes"], json!({"bytes": 20}));
    assert_eq!(updated["toxicity"], 1.0);
    assert_eq!(probe(listen, REQUEST, PATIENCE).await.bytes, pattern(20));

    let (status, body) = api.delete("/proxies/p/toxics/limit_data_downstream").await;
    assert_eq!((status, body), (204, Value::Null));
    assert_eq!(api.get("/proxies/p/toxics").await, (200, json!([])));
    assert_eq!(probe(listen, REQUEST, PATIENCE).await.bytes.len(), 1000);
}

/// Named toxics on both streams; toxicity and upstream are honoured on the wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toxic_fields_round_trip() {
    let (origin, _s, api) = setup().await;
    api.post(
        "/proxies",
        json!({"name": "p", "upstream": origin.addr.to_string()}),
    )
    .await;
    let (status, t) = api
        .post(
            "/proxies/p/toxics",
            json!({"name": "slow", "type": "latency", "stream": "UPSTREAM", "toxicity": 0.5,
                   "attributes": {"latency": 100}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        t,
        json!({"name": "slow", "type": "latency", "stream": "upstream", "toxicity": 0.5,
               "attributes": {"latency": 100, "jitter": 0}})
    );
}

/// Toxic errors: 409 for a taken name, 400 for a bad stream, type, toxicity, attribute or
/// body, 404 for an unknown toxic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toxic_errors_have_toxiproxy_shapes() {
    let (origin, _s, api) = setup().await;
    api.post(
        "/proxies",
        json!({"name": "p", "upstream": origin.addr.to_string()}),
    )
    .await;
    assert_eq!(
        api.post("/proxies/p/toxics", json!({"type": "latency"}))
            .await
            .0,
        200
    );
    assert_eq!(
        api.post("/proxies/p/toxics", json!({"type": "latency"}))
            .await,
        (409, json!({"error": "toxic already exists", "status": 409}))
    );
    assert_eq!(
        api.post(
            "/proxies/p/toxics",
            json!({"type": "latency", "stream": "sideways"})
        )
        .await,
        (
            400,
            json!({"error": "stream was invalid, can be either upstream or downstream",
                   "status": 400})
        )
    );
    assert_eq!(
        api.post("/proxies/p/toxics", json!({"type": "gremlins"}))
            .await,
        (400, json!({"error": "invalid toxic type", "status": 400}))
    );
    assert_eq!(
        api.post(
            "/proxies/p/toxics",
            json!({"type": "timeout", "toxicity": 2.0})
        )
        .await
        .0,
        400
    );
    let (status, body) = api
        .post(
            "/proxies/p/toxics",
            json!({"type": "timeout", "attributes": {"timeuot": 5}}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("timeuot"));
    assert_eq!(api.post_raw("/proxies/p/toxics", "[").await.0, 400);
    let missing = json!({"error": "toxic not found", "status": 404});
    assert_eq!(
        api.get("/proxies/p/toxics/nope").await,
        (404, missing.clone())
    );
    assert_eq!(
        api.post("/proxies/p/toxics/nope", json!({"toxicity": 0.1}))
            .await,
        (404, missing.clone())
    );
    assert_eq!(api.delete("/proxies/p/toxics/nope").await, (404, missing));
}

/// Reset removes every toxic and re-enables every proxy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_heals_everything() {
    let (origin, _s, api) = setup().await;
    let up = origin.addr.to_string();
    let (_, a) = api
        .post("/proxies", json!({"name": "a", "upstream": up}))
        .await;
    api.post("/proxies", json!({"name": "b", "upstream": up}))
        .await;
    api.post(
        "/proxies/a/toxics",
        json!({"type": "timeout", "attributes": {"timeout": 0}}),
    )
    .await;
    api.post(
        "/proxies/b/toxics",
        json!({"type": "latency", "stream": "upstream"}),
    )
    .await;
    api.post("/proxies/b", json!({"enabled": false})).await;
    let (status, body) = api.post("/reset", Value::Null).await;
    assert_eq!((status, body), (204, Value::Null));
    let (_, all) = api.get("/proxies").await;
    for name in ["a", "b"] {
        assert_eq!(all[name]["enabled"], true, "{name}");
        assert_eq!(all[name]["toxics"], json!([]), "{name}");
    }
    assert_eq!(
        probe(listen_of(&a), REQUEST, PATIENCE).await.bytes.len(),
        1000
    );
}

/// Populate creates, keeps an unchanged proxy (and its toxics), and replaces a changed one;
/// a bad entry fails the call with the error beside the proxies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn populate_creates_keeps_and_replaces() {
    let (origin, _s, api) = setup().await;
    let other = Origin::start(Mode::Reply(3)).await;
    let up = origin.addr.to_string();
    let (status, body) = api
        .post(
            "/populate",
            json!([{"name": "one", "listen": "127.0.0.1:0", "upstream": up},
                   {"name": "two", "listen": "localhost:0", "upstream": up}]),
        )
        .await;
    assert_eq!(status, 201);
    let proxies = body["proxies"].as_array().unwrap();
    assert_eq!(proxies.len(), 2);
    let one = listen_of(&proxies[0]);
    api.post("/proxies/one/toxics", json!({"type": "latency"}))
        .await;

    let (status, body) = api
        .post(
            "/populate",
            json!([{"name": "one", "listen": one.to_string(), "upstream": up},
                   {"name": "two", "upstream": other.addr.to_string()}]),
        )
        .await;
    assert_eq!(status, 201);
    let proxies = body["proxies"].as_array().unwrap();
    assert_eq!(proxies[0]["toxics"].as_array().unwrap().len(), 1, "kept");
    assert_eq!(proxies[1]["upstream"], other.addr.to_string(), "replaced");
    assert_eq!(
        probe(listen_of(&proxies[1]), REQUEST, PATIENCE).await.bytes,
        pattern(3)
    );

    let (status, body) = api.post("/populate", json!([{"name": "three"}])).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "missing required field: upstream at proxy 1");
    assert_eq!(body["status"], 400);
    assert_eq!(body["proxies"], json!([]));
}

/// Browsers are refused; unknown routes and methods answer in the same error shape.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsers_unknown_routes_and_methods_are_refused() {
    let (_o, _s, api) = setup().await;
    let (status, body) = api
        .send(
            api.http
                .get(format!("{}/proxies", api.base))
                .header("User-Agent", "Mozilla/5.0 (X11; Linux x86_64)"),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            403,
            json!({"error": "user agent not allowed", "status": 403})
        )
    );
    assert_eq!(api.get("/nowhere").await.0, 404);
    // A path that does not decode is refused by the router itself, still in the same shape.
    let (status, body) = api.get("/proxies/%FF").await;
    assert_eq!(status, 400);
    assert_eq!(body["status"], 400);
    assert!(body["error"].is_string());
    let (status, body) = api.delete("/proxies").await;
    assert_eq!(status, 405);
    assert_eq!(body["status"], 405);
}

/// The API answers while a toxic holds a connection hostage: a change to a blackholed link
/// does not block on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_do_not_wait_on_stuck_connections() {
    let origin = Origin::start(Mode::Sink).await;
    let server = Server::start("127.0.0.1:0").await.unwrap();
    let api = Api::new(&server);
    let (_, p) = api
        .post(
            "/proxies",
            json!({"name": "p", "upstream": origin.addr.to_string()}),
        )
        .await;
    api.post(
        "/proxies/p/toxics",
        json!({"type": "timeout", "stream": "upstream", "attributes": {"timeout": 0}}),
    )
    .await;
    let mut stuck = tokio::net::TcpStream::connect(listen_of(&p)).await.unwrap();
    use tokio::io::AsyncWriteExt;
    stuck.write_all(&pattern(100_000)).await.unwrap();
    let answered = tokio::time::timeout(
        Duration::from_secs(10),
        api.post(
            "/proxies/p/toxics",
            json!({"type": "latency", "stream": "upstream"}),
        ),
    )
    .await
    .expect("the API answered");
    assert_eq!(answered.0, 200);
}
