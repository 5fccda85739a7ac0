//! Whether an element's name, as the page described it, is the name asked for: as Testing
//! Library matches, after NFC and whitespace folding, whole and case-sensitive when exact, a
//! case-insensitive substring otherwise. A name the page cut ("…") can make it [`Match::CantTell`].

use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

/// The SDKs cut a long name or text and end it with this.
const CUT: char = '…';

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match {
    Yes,
    No,
    CantTell,
}

fn fold(s: &str) -> String {
    let nfc: String = s.nfc().collect();
    nfc.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `actual` (from a descriptor, perhaps cut) against `wanted`.
pub(crate) fn matches(actual: &str, wanted: &str, exact: bool) -> Match {
    let (a, w) = (fold(actual), fold(wanted));
    let (a, w) = if exact {
        (a, w)
    } else {
        (a.to_lowercase(), w.to_lowercase())
    };
    let hit = if exact {
        a == w
    } else {
        !w.is_empty() && a.contains(&w)
    };
    if hit {
        return Match::Yes;
    }
    let Some(kept) = a.strip_suffix(CUT).map(str::trim_end) else {
        return Match::No;
    };
    // What the page cut away could hold the rest of the words.
    let could = if exact { w.starts_with(kept) } else { true };
    if could { Match::CantTell } else { Match::No }
}

/// Holds a page's `query` elements to a target's whole name (the published 2.0.0 SDK ignores
/// `exact`): one named otherwise is no match; one whose cut name can't tell stays, so the target
/// is ambiguous rather than wrong. True when it held any back.
pub(crate) fn hold_to_name(elements: &mut Value, name: Option<&str>) -> bool {
    let (Some(name), Some(list)) = (name, elements.as_array_mut()) else {
        return false;
    };
    let before = list.len();
    list.retain(|e| matches(e["name"].as_str().unwrap_or(""), name, true) != Match::No);
    list.len() < before
}

#[cfg(test)]
mod tests {
    use super::{Match, matches};

    #[test]
    fn exact_is_whole_and_case_sensitive_after_folding() {
        assert_eq!(matches("Add", "Add", true), Match::Yes);
        assert_eq!(matches("  Add\n", " Add ", true), Match::Yes);
        assert_eq!(matches("Cafe\u{301}", "Café", true), Match::Yes);
        assert_eq!(matches("Add todo", "Add", true), Match::No);
        assert_eq!(matches("add", "Add", true), Match::No);
    }

    #[test]
    fn substring_only_when_not_exact() {
        assert_eq!(matches("Add todo", "add", false), Match::Yes);
        assert_eq!(matches("Remove", "add", false), Match::No);
        assert_eq!(matches("Remove", "", false), Match::No);
    }

    #[test]
    fn a_cut_name_cannot_tell_unless_its_kept_part_already_differs() {
        let long = format!("{}…", "a".repeat(100));
        assert_eq!(matches(&long, &"a".repeat(120), true), Match::CantTell);
        assert_eq!(matches(&long, &"b".repeat(120), true), Match::No);
        assert_eq!(matches(&long, "zzz", false), Match::CantTell);
    }
}
