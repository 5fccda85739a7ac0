//! Whether the app answers at the URL before any browser opens it: a TCP connection to the URL's
//! host and port, tried again until the bound while it is refused (CI often starts the dev
//! server a moment before `reticle verify`). Nothing listening is named as what it is
//! ("connection refused at URL"), never as a page that does not load the SDK. This module
//! connects and closes; it must not speak HTTP or launch anything.

use std::time::{Duration, Instant};

use tokio::net::TcpStream;

/// How often a refused connection is tried again.
const RETRY: Duration = Duration::from_millis(100);
/// How long one connection attempt may take.
const ATTEMPT_BOUND: Duration = Duration::from_millis(1000);

/// Waits until something accepts a connection at `url`'s host and port, for at most `bound`;
/// the sentence naming what went wrong otherwise.
pub async fn app_listens(url: &str, bound: Duration) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("'{url}' is not a URL ({e})"))?;
    let (Some(host), Some(port)) = (parsed.host_str(), parsed.port_or_known_default()) else {
        return Err(format!("'{url}' names no host to open"));
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let deadline = Instant::now() + bound;
    loop {
        let attempt =
            tokio::time::timeout(ATTEMPT_BOUND, TcpStream::connect((host.as_str(), port))).await;
        let why = match attempt {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(err)) if err.kind() == std::io::ErrorKind::ConnectionRefused => {
                format!(
                    "connection refused at {url}: nothing listens on {host}:{port} (tried for {} ms); start the app first (its dev server, such as `npm run dev`), or pass the URL it serves",
                    bound.as_millis()
                )
            }
            Ok(Err(err)) => {
                return Err(format!(
                    "{url} cannot be reached: {host}:{port} {err}; pass the URL a browser opens the app at"
                ));
            }
            Err(_) => format!(
                "{url} does not answer: a connection to {host}:{port} was not accepted within {} ms",
                ATTEMPT_BOUND.as_millis()
            ),
        };
        if Instant::now() + RETRY >= deadline {
            return Err(why);
        }
        tokio::time::sleep(RETRY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listening_app_is_found_and_a_closed_port_is_named_as_refused() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}/app?x=1");
        assert_eq!(app_listens(&url, Duration::ZERO).await, Ok(()));
        drop(listener);
        let why = app_listens(&url, Duration::ZERO).await.unwrap_err();
        assert!(
            why.starts_with(&format!("connection refused at {url}")),
            "{why}"
        );
        assert!(!why.contains("SDK"), "{why}");
    }

    #[tokio::test]
    async fn a_url_without_a_host_is_refused_in_words() {
        let why = app_listens("http://", Duration::ZERO).await.unwrap_err();
        assert!(
            why.contains("not a URL") || why.contains("no host"),
            "{why}"
        );
    }
}
