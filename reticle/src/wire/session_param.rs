//! The `__reticle_session` URL query parameter: the session id a page is asked to connect as,
//! stamped on a URL by whoever opens or navigates the page (`reticle verify`, the daemon's own
//! navigations), and read back from a hello's URL. Both SDKs read it; protocol 1 guarantees
//! the hello carries the page's `url`, so the daemon can read it whatever the page's SDK did.
//! Pure text work: it must not look anything up.

use url::Url;

use super::limits::MAX_ID_CHARS;

/// The query parameter (`SESSION_URL_PARAM` in our SDK, `RETICLE_URL_PARAM.SESSION` in 2.0.0).
pub const SESSION_URL_PARAM: &str = "__reticle_session";

/// The session id `url` asks its page to connect as: the parameter's first non-empty value, 1 to
/// [`MAX_ID_CHARS`] characters; `None` when the URL does not parse or asks for none.
pub fn asked_session(url: &str) -> Option<String> {
    let parsed = Url::parse(url).ok()?;
    parsed
        .query_pairs()
        .find(|(key, value)| key == SESSION_URL_PARAM && !value.is_empty())
        .map(|(_, value)| value.into_owned())
        .filter(|id| id.chars().count() <= MAX_ID_CHARS)
}

/// `url` asking its page to connect as `session`: an earlier value of the parameter is replaced,
/// every other part (other parameters, their order, the fragment) kept. A URL that does not
/// parse as absolute gets the parameter appended before its fragment.
pub fn with_session(url: &str, session: &str) -> String {
    if let Ok(mut parsed) = Url::parse(url) {
        let kept: Vec<(String, String)> = parsed
            .query_pairs()
            .filter(|(key, _)| key != SESSION_URL_PARAM)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        parsed
            .query_pairs_mut()
            .clear()
            .extend_pairs(kept)
            .append_pair(SESSION_URL_PARAM, session);
        return parsed.into();
    }
    let (base, fragment) = match url.split_once('#') {
        Some((base, fragment)) => (base, Some(fragment)),
        None => (url, None),
    };
    let joiner = if base.contains('?') { '&' } else { '?' };
    let mut out = format!("{base}{joiner}{SESSION_URL_PARAM}={session}");
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_asked_session_is_read_from_the_query_only() {
        assert_eq!(
            asked_session("http://h:1/a?x=1&__reticle_session=v-1#f").as_deref(),
            Some("v-1")
        );
        assert_eq!(asked_session("http://h:1/a#__reticle_session=v-1"), None);
        assert_eq!(asked_session("http://h:1/a?__reticle_session="), None);
        assert_eq!(asked_session("not a url"), None);
        let long = "x".repeat(MAX_ID_CHARS + 1);
        assert_eq!(
            asked_session(&format!("http://h/?{SESSION_URL_PARAM}={long}")),
            None
        );
    }

    #[test]
    fn stamping_replaces_an_earlier_value_and_keeps_the_rest() {
        assert_eq!(
            with_session("http://h:1/?a=1#top", "s1"),
            "http://h:1/?a=1&__reticle_session=s1#top"
        );
        assert_eq!(
            with_session("http://h:1/app", "s1"),
            "http://h:1/app?__reticle_session=s1"
        );
        let twice = with_session(&with_session("http://h:1/app?b=2", "s1"), "s2");
        assert_eq!(twice, "http://h:1/app?b=2&__reticle_session=s2");
        assert_eq!(asked_session(&twice).as_deref(), Some("s2"));
        assert_eq!(
            with_session("/rel?a#f", "s1"),
            "/rel?a&__reticle_session=s1#f"
        );
    }
}
