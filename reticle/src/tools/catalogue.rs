//! The catalogue: which tools this daemon advertises, in order, with a version (bumped by hand
//! when tool shapes change) and a hash of the advertised definitions (so any change, including a
//! test's edit, is visible). Fixed for a daemon life; read at start.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::Value;

use super::{sessions, testing};
use crate::config::env;
use crate::wire::CatalogueSummary;

/// The catalogue's revision. Bump it when a tool's name, schema or meaning changes.
pub const CATALOGUE_VERSION: &str = "1";

/// Which implementation a tool name runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Sessions,
    TestSleep,
    TestEcho,
}

impl ToolKind {
    fn definition(self) -> Tool {
        let (name, description, schema) = match self {
            ToolKind::Sessions => (sessions::NAME, sessions::DESCRIPTION, sessions::schema()),
            ToolKind::TestSleep => (
                testing::SLEEP,
                "Test only: wait `ms` milliseconds, then answer.",
                testing::sleep_schema(),
            ),
            ToolKind::TestEcho => (
                testing::ECHO,
                "Test only: answer with the arguments given.",
                testing::echo_schema(),
            ),
        };
        let schema = match schema {
            Value::Object(map) => map,
            _ => Default::default(),
        };
        Tool::new(
            Cow::Borrowed(name),
            Cow::Borrowed(description),
            Arc::new(schema),
        )
    }

    fn by_name(name: &str) -> Option<Self> {
        [ToolKind::Sessions, ToolKind::TestSleep, ToolKind::TestEcho]
            .into_iter()
            .find(|kind| kind.definition().name == name)
    }
}

/// The tools one daemon life advertises.
#[derive(Debug, Clone)]
pub struct Catalogue {
    entries: Vec<(ToolKind, Tool)>,
    hash: String,
}

impl Catalogue {
    /// The product catalogue.
    pub fn standard() -> Self {
        Self::of(vec![ToolKind::Sessions])
    }

    fn of(kinds: Vec<ToolKind>) -> Self {
        let entries: Vec<(ToolKind, Tool)> =
            kinds.into_iter().map(|k| (k, k.definition())).collect();
        let tools: Vec<&Tool> = entries.iter().map(|(_, t)| t).collect();
        let text = serde_json::to_string(&tools).unwrap_or_default();
        let hash = format!("{:016x}", fnv1a(text.as_bytes()));
        Self { entries, hash }
    }

    /// The standard catalogue with a test's edits applied: a comma-separated list of `+name`
    /// (add a test tool) and `-name` (remove a tool). Any name it cannot apply is an error.
    pub fn with_edits(edits: &str) -> Result<Self, String> {
        let mut kinds = vec![ToolKind::Sessions];
        for edit in edits.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (add, name) = match edit.split_at(1) {
                ("+", name) => (true, name),
                ("-", name) => (false, name),
                _ => {
                    return Err(format!(
                        "{}: '{edit}' must start with + (add) or - (remove)",
                        env::TEST_CATALOGUE
                    ));
                }
            };
            let kind = ToolKind::by_name(name)
                .ok_or_else(|| format!("{}: no tool named '{name}'", env::TEST_CATALOGUE))?;
            kinds.retain(|k| *k != kind);
            if add {
                kinds.push(kind);
            }
        }
        Ok(Self::of(kinds))
    }

    /// The catalogue for this daemon life: standard, or edited by `RETICLE_TEST_CATALOGUE`.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(env::TEST_CATALOGUE) {
            Ok(edits) if !edits.trim().is_empty() => Self::with_edits(&edits),
            _ => Ok(Self::standard()),
        }
    }

    /// The advertised definitions, in order.
    pub fn tools(&self) -> Vec<Tool> {
        self.entries.iter().map(|(_, t)| t.clone()).collect()
    }

    /// The implementation behind a name, if advertised.
    pub fn find(&self, name: &str) -> Option<ToolKind> {
        self.entries
            .iter()
            .find(|(_, t)| t.name == name)
            .map(|(k, _)| *k)
    }

    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// Version, hash and size, as `/status` and each MCP stream report them.
    pub fn summary(&self) -> CatalogueSummary {
        CatalogueSummary {
            version: CATALOGUE_VERSION.to_string(),
            hash: self.hash.clone(),
            tools: self.entries.len(),
        }
    }
}

/// 64-bit FNV-1a: a stable content hash (not a security measure).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_change_the_hash_and_the_tools() {
        let standard = Catalogue::standard();
        assert_eq!(standard.find("reticle_sessions"), Some(ToolKind::Sessions));
        let edited = Catalogue::with_edits("+reticle_test_echo").unwrap();
        assert_ne!(standard.hash(), edited.hash());
        assert_eq!(edited.tools().len(), 2);
        let removed = Catalogue::with_edits("-reticle_sessions").unwrap();
        assert!(removed.find("reticle_sessions").is_none());
        assert_eq!(
            Catalogue::with_edits("").unwrap().hash(),
            standard.hash(),
            "the same tools hash the same"
        );
    }

    #[test]
    fn an_edit_it_cannot_apply_is_named() {
        assert!(
            Catalogue::with_edits("+no_such_tool")
                .unwrap_err()
                .contains("no_such_tool")
        );
        assert!(Catalogue::with_edits("reticle_sessions").is_err());
    }
}
