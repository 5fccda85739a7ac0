//! A store path as agents write it (`todos.items[3].title`, `prefs["dark.mode"]`) in the form every
//! protocol 1 page reads: dotted segments, an array index as a segment (`todos.items.3.title`),
//! which is all the published `@reticlehq/browser` 2.0.0 walks (it splits on `.`).
//! Must not: do I/O, or decide verdicts (the caller turns an unreadable path into `unknown`).

/// How a path goes to the page. A path with a key no dotted form can carry (one holding `.`, or
/// empty) is sent as written: Reticle's own SDK reads the brackets, and a page that did not say
/// which key was missing (a `missing` field in its answer, which only Reticle's SDK sends)
/// cannot have read it, so its "not found" proves nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatePath {
    /// The dotted form, which every protocol 1 page reads.
    Dotted(String),
    /// No dotted form carries it: sent as written, which only an SDK that parses brackets reads.
    AsWritten(String),
}

/// The field of a `state_read` answer in which Reticle's SDK names the key it did not find: a
/// page that sends it walked the path itself.
pub const MISSING_KEY_FIELD: &str = "missing";

impl StatePath {
    /// Reads `path` (`a.b`, `a[0]`, `a["k"]`, `a['k']`, mixed).
    pub fn parse(path: &str) -> Self {
        match segments(path) {
            Some(keys) if keys.iter().all(|k| !k.is_empty() && !k.contains('.')) => {
                StatePath::Dotted(keys.join("."))
            }
            _ => StatePath::AsWritten(path.to_string()),
        }
    }

    /// What to send as the command's `path`.
    pub fn as_sent(&self) -> &str {
        match self {
            StatePath::Dotted(path) | StatePath::AsWritten(path) => path,
        }
    }

    /// Whether a page's "not found" for this path proves the path is absent: always for a dotted
    /// path; for one sent as written, only when the page named the missing key (`answer` is the
    /// page's `state_read` result).
    pub fn absence_is_proved(&self, answer: &serde_json::Value) -> bool {
        match self {
            StatePath::Dotted(_) => true,
            StatePath::AsWritten(_) => answer.get(MISSING_KEY_FIELD).is_some(),
        }
    }

    /// Why a "not found" for this path is not an answer, for evidence.
    pub fn why_unproved(&self) -> String {
        format!(
            "the path '{}' names a key that holds '.' or is empty, which only Reticle's SDK reads; this page's SDK answered \"not found\" without naming the missing key, so it may not have read the path at all (the published @reticlehq/browser 2.0.0 reads dotted paths only)",
            self.as_sent()
        )
    }
}

/// The keys of `path`, or `None` when it is not a well-formed path.
fn segments(path: &str) -> Option<Vec<String>> {
    let mut keys = Vec::new();
    let mut rest = path;
    let mut after_key = false;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let (key, tail) = bracketed(inner)?;
            keys.push(key);
            rest = tail;
            after_key = true;
        } else if let Some(tail) = rest.strip_prefix('.') {
            if !after_key {
                return None;
            }
            rest = tail;
            after_key = false;
            if rest.is_empty() || rest.starts_with('.') {
                return None;
            }
        } else {
            if after_key {
                return None;
            }
            let end = rest.find(['.', '[', ']']).unwrap_or(rest.len());
            if end == 0 {
                return None;
            }
            keys.push(rest[..end].to_string());
            rest = &rest[end..];
            after_key = true;
        }
    }
    Some(keys)
}

/// One bracketed key after its `[`: digits, or a quoted key; the key and what follows `]`.
fn bracketed(inner: &str) -> Option<(String, &str)> {
    let quote = inner.chars().next()?;
    if quote == '"' || quote == '\'' {
        let body = &inner[1..];
        let close = body.find(quote)?;
        let tail = body[close + 1..].strip_prefix(']')?;
        return Some((body[..close].to_string(), tail));
    }
    let close = inner.find(']')?;
    let index = &inner[..close];
    if index.is_empty() || !index.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((index.to_string(), &inner[close + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bracket_indexes_and_quoted_keys_become_dotted_segments() {
        for (written, dotted) in [
            ("todos.items[3].title", "todos.items.3.title"),
            ("items[0]", "items.0"),
            ("grid[1][2]", "grid.1.2"),
            ("user.name", "user.name"),
            ("prefs[\"theme\"].dark", "prefs.theme.dark"),
            ("prefs['theme']", "prefs.theme"),
            ("already.3.dotted", "already.3.dotted"),
            ("", ""),
        ] {
            assert_eq!(
                StatePath::parse(written),
                StatePath::Dotted(dotted.into()),
                "{written}"
            );
        }
    }

    #[test]
    fn a_key_no_dotted_form_carries_or_a_malformed_path_is_sent_as_written() {
        for written in [
            "prefs[\"dark.mode\"]",
            "a[\"\"]",
            "a..b",
            ".a",
            "a.",
            "a[x]",
            "a[1",
            "a]b",
            "a[\"b]",
            "a[0]b",
        ] {
            assert_eq!(
                StatePath::parse(written),
                StatePath::AsWritten(written.into()),
                "{written}"
            );
        }
    }

    #[test]
    fn only_a_page_naming_the_missing_key_proves_an_as_written_path_absent() {
        let dotted = StatePath::parse("a[1]");
        let written = StatePath::parse("a[\"b.c\"]");
        let ours = json!({"found": false, "missing": "b.c"});
        let published = json!({"found": false, "availableKeys": ["x"]});
        assert!(dotted.absence_is_proved(&published));
        assert!(written.absence_is_proved(&ours));
        assert!(!written.absence_is_proved(&published));
        assert!(written.why_unproved().contains("a[\"b.c\"]"));
    }
}
