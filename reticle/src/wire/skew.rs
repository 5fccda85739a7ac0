//! Version skew: a peer (a page's SDK, an agent's `reticle mcp`) on another build than the
//! daemon it reached. A peer on the daemon's wire contract is fine whatever its version; one
//! that names no contract is judged by its version (an older build, from before the field); one
//! on another contract disagrees for real. It words the finding and its fix; it decides nothing.

/// The two pairs a skew is reported for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pair {
    /// A page's SDK against the daemon.
    Sdk,
    /// Another Reticle process (an agent's `reticle mcp`) against the daemon.
    Daemon,
}

impl Pair {
    pub const fn as_str(self) -> &'static str {
        match self {
            Pair::Sdk => "sdk",
            Pair::Daemon => "daemon",
        }
    }

    /// What the person runs to bring the peer into line.
    pub fn fix(self) -> &'static str {
        match self {
            Pair::Sdk => {
                "Reload the page so it loads the SDK this daemon serves (/sdk/reticle.js); a page that imports @reticlehq/browser from npm needs a build that speaks protocol 1, then a restart of its dev server"
            }
            Pair::Daemon => {
                "A daemon keeps serving its own code until it restarts: run `reticle stop` and retry, and this agent's next call starts the daemon of its own build (other agents on it reconnect by themselves)"
            }
        }
    }
}

/// The sentence for peer `what` (`"the page"`) on `version` and `contract` (either may be
/// unknown) against this daemon's, or `None` when they agree.
pub fn describe(
    pair: Pair,
    what: &str,
    version: Option<&str>,
    contract: Option<&str>,
) -> Option<String> {
    let (own_version, own_contract) = (crate::VERSION, super::CONTRACT);
    let versions = match version {
        Some(version) => format!("{what} is {version}; this daemon is {own_version}"),
        None => format!("{what} is on an unknown version; this daemon is {own_version}"),
    };
    let finding = match contract {
        Some(contract) if contract == own_contract => return None,
        Some(contract) => format!(
            "version skew: {versions}, and they speak different wire contracts ({contract} against {own_contract}): a real mismatch, not a patch difference"
        ),
        None if version.is_none_or(|v| v == own_version) => return None,
        None => format!(
            "version skew: {versions}, on a build too old to say which wire contract it speaks"
        ),
    };
    Some(format!("{finding}. {}.", pair.fix()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_another_contract_or_an_older_version_without_one_is_skew() {
        let own = Some(crate::wire::CONTRACT);
        assert_eq!(describe(Pair::Sdk, "the page", Some("9.9.9"), own), None);
        assert_eq!(
            describe(Pair::Sdk, "the page", None, None),
            None,
            "the published 2.0.0 says neither"
        );
        assert_eq!(
            describe(Pair::Sdk, "the page", Some(crate::VERSION), None),
            None
        );
        let other = describe(Pair::Sdk, "the page", Some("0.0.1"), Some("deadbeefdead")).unwrap();
        assert!(
            other.contains("the page is 0.0.1") && other.contains("deadbeefdead"),
            "{other}"
        );
        assert!(
            other.contains("@reticlehq/") && other.contains("restart"),
            "{other}"
        );
        let old = describe(Pair::Daemon, "the agent's reticle mcp", Some("0.0.1"), None).unwrap();
        assert!(
            old.contains("too old") && old.contains("reticle stop"),
            "{old}"
        );
    }
}
