//! The HTTP plane's page check: a request a web page sent (it carries an `Origin`, or failing
//! that a `Referer`) is served only when that page is on loopback or listed in
//! `RETICLE_ALLOWED_ORIGINS`; `Origin: null` (sandboxed frames, `file:`) is refused. Requests
//! with neither header (the CLI, the proxy, MCP clients) pass untouched. It covers every route
//! but the bridge's upgrade, which judges the Origin itself ([`crate::bridge::origin`]). It
//! admits or refuses; it must not route.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::bridge::Bridge;
use crate::bridge::origin::{AllowedOrigins, is_loopback_web_origin};
use crate::plane::refusal;

/// Middleware refusing requests a page on a foreign origin sent.
pub async fn refuse_foreign_pages(
    State(bridge): State<Bridge>,
    request: Request,
    next: Next,
) -> Response {
    match foreign_page(request.headers(), &bridge.config().allowed_origins) {
        None => next.run(request).await,
        Some(sentence) => refusal(StatusCode::FORBIDDEN, &sentence),
    }
}

/// The sentence refusing the page that sent these headers, or `None` when no foreign page did.
pub fn foreign_page(headers: &HeaderMap, allowed: &AllowedOrigins) -> Option<String> {
    let named = |name: header::HeaderName| {
        headers
            .get(name)
            .map(|value| value.to_str().unwrap_or("(not text)").trim().to_string())
    };
    let (which, page) = match named(header::ORIGIN) {
        Some(origin) => ("Origin", origin),
        None => ("Referer", named(header::REFERER)?),
    };
    if is_loopback_web_origin(&page)
        || allowed.contains(&page)
        || allowed.contains(&origin_of(&page))
    {
        return None;
    }
    Some(format!(
        "forbidden: a request from a web page ({which}: {}) is served only from loopback or an origin in RETICLE_ALLOWED_ORIGINS",
        crate::wire::messages::clip(&page, 200)
    ))
}

/// The `scheme://authority` part of a URL (the whole text when it has no path).
fn origin_of(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    format!("{scheme}://{authority}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn foreign_origins_and_referers_are_refused() {
        let none = AllowedOrigins::default();
        for pairs in [
            vec![(header::ORIGIN, "https://evil.example")],
            vec![(header::ORIGIN, "null")],
            vec![(header::ORIGIN, "http://localhost.evil.example")],
            vec![(header::REFERER, "https://evil.example/page?x=1")],
            vec![
                (header::ORIGIN, "https://evil.example"),
                (header::REFERER, "http://localhost:5173/"),
            ],
        ] {
            let refused = foreign_page(&headers(&pairs), &none);
            assert!(refused.is_some(), "{pairs:?}");
        }
    }

    #[test]
    fn tools_loopback_pages_and_listed_origins_pass() {
        let listed = AllowedOrigins::parse("https://dev.test");
        for pairs in [
            vec![],
            vec![(header::ORIGIN, "http://localhost:5173")],
            vec![(header::REFERER, "http://127.0.0.1:3000/app/index.html")],
            vec![(header::ORIGIN, "https://dev.test")],
            vec![(header::REFERER, "https://dev.test/some/page")],
        ] {
            let refused = foreign_page(&headers(&pairs), &listed);
            assert_eq!(refused, None, "{pairs:?}");
        }
    }
}
