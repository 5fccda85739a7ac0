//! What a driven browser may open: dev-only and localhost-only, so a URL or a DevTools endpoint
//! whose host is not loopback is refused before anything starts, with the reason. It checks; it
//! must not open anything.

use url::Url;

/// `url` when it is an http(s) URL on a loopback host; else the sentence that refuses it.
pub fn loopback_url(url: &str) -> Result<String, String> {
    let parsed = Url::parse(url).map_err(|e| {
        format!("'{url}' is not a URL ({e}); give the app's address, e.g. http://localhost:5173/")
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "'{url}' is a {} URL; a driven browser opens a running web app, so only http: and https: are accepted",
            parsed.scheme()
        ));
    }
    loopback_host(&parsed, "the app")?;
    Ok(parsed.to_string())
}

/// `endpoint` when it is a DevTools endpoint (http, or ws for the browser's own URL) on a
/// loopback host; else the sentence that refuses it.
pub fn loopback_endpoint(endpoint: &str) -> Result<String, String> {
    let parsed = Url::parse(endpoint).map_err(|e| {
        format!("'{endpoint}' is not a DevTools endpoint ({e}); give e.g. http://127.0.0.1:9222")
    })?;
    if !matches!(parsed.scheme(), "http" | "ws") {
        return Err(format!(
            "'{endpoint}' is not a DevTools endpoint; give http://127.0.0.1:<port> of a Chromium started with --remote-debugging-port=<port>"
        ));
    }
    loopback_host(&parsed, "the DevTools endpoint")?;
    Ok(endpoint.trim_end_matches('/').to_string())
}

fn loopback_host(url: &Url, what: &str) -> Result<(), String> {
    let host = url.host_str().unwrap_or("");
    if crate::plane::host_is_loopback(host) {
        return Ok(());
    }
    Err(format!(
        "{what} is at '{host}', which is not this machine: Reticle is localhost-only and drives only loopback addresses (localhost, 127.0.0.1, [::1]); nothing was started"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_http_is_opened() {
        assert!(loopback_url("http://localhost:5173/").is_ok());
        assert!(loopback_url("http://127.0.0.1:3000/a?b=1").is_ok());
        assert!(loopback_url("http://[::1]:3000/").is_ok());
        for bad in [
            "https://example.com/",
            "http://10.0.0.2:3000/",
            "http://localhost.evil.example/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "not a url",
        ] {
            let why = loopback_url(bad).unwrap_err();
            assert!(!why.is_empty(), "{bad}");
        }
        assert!(
            loopback_url("http://evil.example/")
                .unwrap_err()
                .contains("localhost-only")
        );
    }

    #[test]
    fn only_loopback_devtools_is_attached() {
        assert_eq!(
            loopback_endpoint("http://127.0.0.1:9222/").unwrap(),
            "http://127.0.0.1:9222"
        );
        assert!(loopback_endpoint("ws://localhost:9222/devtools/browser/x").is_ok());
        assert!(
            loopback_endpoint("http://192.168.1.4:9222")
                .unwrap_err()
                .contains("localhost-only")
        );
        assert!(loopback_endpoint("ftp://127.0.0.1:9222").is_err());
    }
}
