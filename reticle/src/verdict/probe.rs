//! Reading the live page during evaluation. The tool layer implements [`PageProbe`] over the
//! bridge; tests implement it over fixed answers. A read either saw something, lost the page
//! (the observation itself is gone), or could not be made (and says why).

use serde_json::Value;

use super::predicate::ElementQuery;

/// The outcome of one page read.
#[derive(Debug, Clone, PartialEq)]
pub enum Read<T> {
    Seen(T),
    /// The page went away (tab closed, socket dropped) while reading.
    Lost,
    /// The read could not be made or understood; the sentence says why.
    Unreadable(String),
}

/// What an element query found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ElementFacts {
    pub count: usize,
    /// The first match's form value, when it has one.
    pub value: Option<String>,
    /// A short description of the first match, for evidence.
    pub description: Option<String>,
    /// The states of each match the page described (a bounded list, first match first).
    pub states: Vec<Vec<String>>,
    /// The states the page reports at all: a state outside this list is unknown, not absent.
    pub reported_states: Vec<String>,
}

/// What the page's animation list showed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnimationFacts {
    /// Animations and transitions in the document.
    pub total: usize,
    /// Those still running, named where the page names them.
    pub running: Vec<String>,
}

/// What a store read found.
#[derive(Debug, Clone, PartialEq)]
pub struct StateFacts {
    pub found: bool,
    pub value: Value,
    /// The keys available where the path stopped resolving.
    pub available_keys: Vec<String>,
}

/// Live reads the evaluator needs.
pub trait PageProbe {
    /// Elements matching `query`.
    fn element(&mut self, query: &ElementQuery) -> impl Future<Output = Read<ElementFacts>> + Send;
    /// Whether visible page text contains `text`.
    fn text(&mut self, text: &str) -> impl Future<Output = Read<bool>> + Send;
    /// A store's value at a dotted path.
    fn state(&mut self, store: &str, path: &str) -> impl Future<Output = Read<StateFacts>> + Send;
    /// The page's current URL.
    fn route(&mut self) -> impl Future<Output = Read<String>> + Send;
    /// The animations and transitions in the document.
    fn animations(&mut self) -> impl Future<Output = Read<AnimationFacts>> + Send;
}
