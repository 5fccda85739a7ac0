//! The layering check: dependencies between the rooms of `reticle/src` point one way, and inside
//! `tools/` its tiers do (chokepoint, families, leaves). Every `crate::…` and `super::…` path of
//! every file (comments and literals skipped) is resolved to the room (or tier) it names; an edge
//! the rank table or the tier rule does not allow fails with file, line and edge. Plain string
//! parsing, no dependency; it judges edges only.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Which room may import which: the one rank table. A room not listed here fails the check, so a
/// new room must be placed before it is used. Reading bottom to top:
const RANKS: &[(&str, &[&str])] = &[
    // The bottom: the one contract (protocol vocabulary, limits, close codes, trace names), then
    // the pure logic that speaks it and knows no other room.
    ("wire", &[]),
    ("config", &[]),
    ("store", &[]),
    ("verdict", &["wire"]),
    // The flow domain (a step's shape, flows, the flow store, runs, the suite verdict): below the
    // tools and the command line, which both read it.
    ("flow", &["wire", "store", "verdict"]),
    // What the rooms serving on the daemon's HTTP plane share (loopback, the refusal body): a
    // leaf, so the bridge and the MCP endpoint need not reach up into `http` for it.
    ("plane", &[]),
    // An app's dev stack and the snippet that loads the served SDK: pure reading and planning,
    // shared by `reticle init`, `reticle doctor` and `reticle_sessions`' next action.
    ("wiring", &["store"]),
    // A small HTTP/1.1 GET client over one TCP connection, for the `/status` probe and the
    // proxy's daemon stream: a leaf, so neither needs a general HTTP client.
    ("http_get", &[]),
    ("auth", &["config", "wire", "store"]),
    // The process: settings, state dir, lock, log, activity, heartbeat, signals.
    ("daemon", &["config", "wire", "store"]),
    ("trace", &["config", "wire", "daemon"]),
    // The Chromium launcher and its keeper, shared by `reticle verify` and the driven browser.
    ("chromium", &["config", "store"]),
    // Client-side truth about a port, shared by the CLI and the proxy.
    ("probe", &["config", "wire", "daemon", "http_get"]),
    // The rooms that serve, each taking only the state it needs: the tools drive the bridge, the
    // MCP endpoint runs tools.
    ("bridge", &["config", "wire", "auth", "daemon", "plane"]),
    // The tabs the daemon drives in a Chromium of its own or one it attached to.
    ("drive", &["config", "wire", "plane", "chromium"]),
    // (`plane` for what is loopback: `reticle_sessions` probes only a loopback dev server.)
    (
        "tools",
        &[
            "config", "wire", "store", "verdict", "flow", "plane", "daemon", "bridge", "wiring",
            "drive",
        ],
    ),
    // (`drive` for a stream's `--drive` ask: its loopback check and what it wants opened.)
    (
        "mcp",
        &["config", "wire", "daemon", "plane", "tools", "drive"],
    ),
    // The stdio proxy shares `wire`, `mcp` (JSON-RPC, the handshake) and `probe` with the
    // daemon, never the CLI; it reads the daemon's stream with `http_get`, and a refusal of it
    // with `plane` (the one refusal body).
    (
        "proxy",
        &[
            "config", "wire", "plane", "daemon", "probe", "mcp", "http_get",
        ],
    ),
    // The one place that assembles the rooms into a daemon life; it is handed the router, so it
    // never imports `http`.
    (
        "assembly",
        &[
            "config", "wire", "plane", "auth", "daemon", "trace", "probe", "bridge", "tools", "mcp",
        ],
    ),
    // The top: the router and the command line, imported by nothing but the entry.
    (
        "http",
        &[
            "config", "wire", "plane", "auth", "daemon", "bridge", "tools", "mcp", "assembly",
        ],
    ),
    (
        "cli",
        &[
            "config", "wire", "store", "flow", "plane", "auth", "daemon", "trace", "probe",
            "bridge", "tools", "mcp", "proxy", "assembly", "http", "wiring", "chromium", "drive",
        ],
    ),
];

/// The crate root (`lib.rs`) declares the rooms; it may name any of them.
const ROOT: &str = "lib";

/// One edge the rank table does not allow.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    file: String,
    line: usize,
    from: String,
    to: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: room `{}` refers to room `{}`",
            self.file, self.line, self.from, self.to
        )
    }
}

fn allowed(from: &str) -> Option<&'static [&'static str]> {
    RANKS
        .iter()
        .find(|(room, _)| *room == from)
        .map(|(_, may)| *may)
}

/// The room a module path belongs to.
fn room_of(path: &[String]) -> String {
    match path {
        [] => ROOT.to_string(),
        [first, ..] => first.clone(),
    }
}

/// The module path of a file under `src/`: `daemon/state.rs` is `daemon::state`, `bridge/mod.rs` is
/// `bridge`, `lib.rs` is the root.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            parts.push(stem.to_string());
        }
    }
    parts
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    PathSep,
    Punct(char),
}

/// Code tokens with their line, comments and string/char literals dropped.
fn tokens(source: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let count_lines =
        |from: usize, to: usize| chars[from..to].iter().filter(|c| **c == '\n').count();
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let start = i;
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += count_lines(start, i);
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            line += count_lines(start, i.min(chars.len()));
        } else if c == '\'' {
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                // A lifetime or label: skip the quote, the name follows as a word.
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let raw_quote = chars.get(i).copied();
            let hashes = chars[i..].iter().take_while(|c| **c == '#').count();
            let is_raw = matches!(word.as_str(), "r" | "br" | "cr")
                && (raw_quote == Some('"') || (hashes > 0 && chars.get(i + hashes) == Some(&'"')));
            if is_raw {
                let open = i;
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                i += hashes + 1;
                let rest: String = chars[i..].iter().collect();
                i += rest.find(&close).map_or(rest.chars().count(), |at| {
                    rest[..at].chars().count() + close.chars().count()
                });
                line += count_lines(open, i.min(chars.len()));
            } else if matches!(word.as_str(), "b" | "c") && raw_quote == Some('"') {
                // A byte or C string: the quote is handled as a string next round.
            } else if matches!(word.as_str(), "b") && raw_quote == Some('\'') {
                // A byte char: handled as a char next round.
            } else {
                out.push((Token::Word(word), line));
            }
        } else if c == ':' && next == Some(':') {
            out.push((Token::PathSep, line));
            i += 2;
        } else {
            out.push((Token::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// Parses the path tree starting at `at` (just past `crate::` or the last `super::`), appending
/// every path it names (from `prefix`) to `paths`; returns where it stopped.
fn path_tree(
    toks: &[(Token, usize)],
    mut at: usize,
    prefix: Vec<String>,
    paths: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix;
    loop {
        match toks.get(at).map(|(t, _)| t) {
            Some(Token::Word(w)) => {
                if w != "self" {
                    path.push(w.clone());
                }
                at += 1;
                if toks.get(at).map(|(t, _)| t) == Some(&Token::PathSep) {
                    at += 1;
                    continue;
                }
                paths.push(path);
                return at;
            }
            Some(Token::Punct('{')) => {
                at += 1;
                loop {
                    match toks.get(at).map(|(t, _)| t) {
                        Some(Token::Punct('}')) => return at + 1,
                        Some(Token::Punct(',')) => at += 1,
                        None => return at,
                        _ => {
                            let before = at;
                            at = path_tree(toks, at, path.clone(), paths);
                            // Skip an `as name` rename, and anything not a path.
                            while let Some((t, _)) = toks.get(at) {
                                if matches!(t, Token::Punct(',') | Token::Punct('}')) {
                                    break;
                                }
                                at += 1;
                            }
                            if at == before {
                                at += 1;
                            }
                        }
                    }
                }
            }
            _ => {
                // `*`, a turbofish or the end: the path so far is what is named.
                paths.push(path);
                return at;
            }
        }
    }
}

/// Every edge a file at `module` (its module path) draws, as (line, target module path).
fn references(source: &str, module: &[String]) -> Vec<(usize, Vec<String>)> {
    scoped_references(source, module)
        .into_iter()
        .map(|(line, target, _)| (line, target))
        .collect()
}

/// Every edge a file draws, as (line, target module path, whether it is drawn inside an inline
/// `mod tests`).
fn scoped_references(source: &str, module: &[String]) -> Vec<(usize, Vec<String>, bool)> {
    let toks = tokens(source);
    let mut found = Vec::new();
    // Inline modules (`mod tests { .. }`) with the brace depth they opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        let (tok, line) = &toks[i];
        let here = || {
            let mut m = module.to_vec();
            m.extend(inline.iter().map(|(name, _)| name.clone()));
            m
        };
        match tok {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth -= 1;
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Token::Word(w) if w == "mod" => {
                if let (Some((Token::Word(name), _)), Some((Token::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth));
                }
            }
            Token::Word(w) if w == "crate" || w == "super" => {
                let after_dollar = i > 0 && toks[i - 1].0 == Token::Punct('$');
                // `pub(in crate::tools)` names where an item is visible, not an edge.
                let visibility = i > 0 && toks[i - 1].0 == Token::Word("in".into());
                if !after_dollar
                    && !visibility
                    && toks.get(i + 1).map(|(t, _)| t) == Some(&Token::PathSep)
                {
                    let mut base = if w == "crate" { Vec::new() } else { here() };
                    let mut at = i;
                    if w == "crate" {
                        at += 2;
                    } else {
                        while toks.get(at).map(|(t, _)| t) == Some(&Token::Word("super".into()))
                            && toks.get(at + 1).map(|(t, _)| t) == Some(&Token::PathSep)
                        {
                            base.pop();
                            at += 2;
                        }
                    }
                    let mut paths = Vec::new();
                    let end = path_tree(&toks, at, base, &mut paths);
                    let in_tests = inline.iter().any(|(name, _)| name == "tests");
                    found.extend(paths.into_iter().map(|p| (*line, p, in_tests)));
                    // Braces of a use group are consumed by the tree, not counted as blocks.
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The edges of one file that the rank table does not allow.
fn check_source(file: &str, module: &[String], source: &str) -> Vec<Violation> {
    let from = room_of(module);
    let may = allowed(&from);
    let mut out = Vec::new();
    for (line, target) in references(source, module) {
        // A crate-root item (`crate::VERSION`) is no room.
        let Some(first) = target.first() else {
            continue;
        };
        if first.starts_with(char::is_uppercase) {
            continue;
        }
        let to = room_of(&target);
        let ok = to == from
            || from == ROOT
            || may.is_some_and(|may| may.contains(&to.as_str()) && allowed(&to).is_some());
        if !ok {
            out.push(Violation {
                file: file.to_string(),
                line,
                from: from.clone(),
                to,
            });
        }
    }
    out
}

/// Inside `tools/`, three tiers point one way: the chokepoint (and the registry it runs) above
/// the families (one folder each), above the leaves every family shares. A leaf imports no
/// family and not the chokepoint; a family imports neither the chokepoint nor another family.
/// Test modules may drive a tool through the chokepoint, so edges drawn in `mod tests` are not
/// judged here.
const TOOLS_CHOKEPOINT: &[&str] = &["chokepoint", "registry"];
const TOOLS_FAMILIES: &[&str] = &[
    "page", "sessions", "leases", "flows", "meta", "testing", "driving",
];

/// Whether `tools/<name>` is a module (a file or a folder), not an item the room re-exports.
fn is_tools_module(name: &str) -> bool {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
    tools.join(format!("{name}.rs")).is_file() || tools.join(name).is_dir()
}

/// Where a module sits inside `tools/` (`tools` for the room itself and what it re-exports), or
/// `None` outside it.
fn tools_tier(path: &[String]) -> Option<String> {
    let [room, rest @ ..] = path else {
        return None;
    };
    if room != "tools" {
        return None;
    }
    Some(match rest.first() {
        None => "tools".to_string(),
        Some(item) if !is_tools_module(item) => "tools".to_string(),
        Some(module) if TOOLS_CHOKEPOINT.contains(&module.as_str()) => {
            "tools::chokepoint".to_string()
        }
        Some(module) if TOOLS_FAMILIES.contains(&module.as_str()) => format!("tools::{module}"),
        Some(_) => "tools::leaf".to_string(),
    })
}

/// The edges of one file under `tools/` that its tier may not draw.
fn check_tools_tiers(file: &str, module: &[String], source: &str) -> Vec<Violation> {
    let Some(from) = tools_tier(module) else {
        return Vec::new();
    };
    let is_family =
        |tier: &str| tier != "tools::leaf" && tier != "tools::chokepoint" && tier != "tools";
    let mut out = Vec::new();
    for (line, target, in_tests) in scoped_references(source, module) {
        let Some(to) = tools_tier(&target) else {
            continue;
        };
        if in_tests || from == to || from == "tools" || from == "tools::chokepoint" {
            continue;
        }
        // The room's own re-exports are for other rooms; inside it, name the module.
        let refused = to == "tools"
            || to == "tools::chokepoint"
            || (from == "tools::leaf" && is_family(&to))
            || (is_family(&from) && is_family(&to));
        if refused {
            out.push(Violation {
                file: file.to_string(),
                line,
                from: from.clone(),
                to,
            });
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn rooms_import_only_what_the_rank_table_allows() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
    let mut tools_edges: BTreeSet<(String, String)> = BTreeSet::new();
    for path in files {
        let relative = path.strip_prefix(&src).expect("under src");
        // The binary's entry is its own crate: it imports `reticle::cli`, nothing else.
        if relative == Path::new("main.rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("readable source");
        let module = module_path(relative);
        let name = format!("reticle/src/{}", relative.display());
        for (_, target) in references(&source, &module) {
            if target
                .first()
                .is_some_and(|f| !f.starts_with(char::is_uppercase))
            {
                edges.insert((room_of(&module), room_of(&target)));
            }
        }
        violations.extend(check_source(&name, &module, &source));
        violations.extend(check_tools_tiers(&name, &module, &source));
        for (_, target, _) in scoped_references(&source, &module) {
            if let (Some(from), Some(to)) = (tools_tier(&module), tools_tier(&target)) {
                tools_edges.insert((from, to));
            }
        }
    }
    assert!(
        tools_edges.len() > 10,
        "the checker found too few edges inside tools to be reading it: {tools_edges:?}"
    );
    assert!(
        edges.len() > 20,
        "the checker found too few edges to be reading the tree: {edges:?}"
    );
    assert!(
        violations.is_empty(),
        "back-imports (see the rank table in reticle/tests/layering.rs):\n{}",
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn a_back_import_into_http_is_reported_with_file_line_and_edge() {
    let source = "//! A tool.\n\nuse crate::bridge::Bridge;\nuse crate::http::AppState;\n";
    let module = module_path(Path::new("tools/context.rs"));
    let found = check_source("reticle/src/tools/context.rs", &module, source);
    assert_eq!(
        found,
        vec![Violation {
            file: "reticle/src/tools/context.rs".into(),
            line: 4,
            from: "tools".into(),
            to: "http".into(),
        }]
    );
}

#[test]
fn grouped_inline_and_super_paths_are_all_resolved() {
    let source = r#"
use crate::{wire::Limits, cli::{Exit, describe}};
// crate::http::ignored in a comment
const S: &str = "crate::http::ignored in a string";
fn f() { let _ = crate::proxy::run(); }
mod tests {
    use super::*;
    use super::super::super::cli::Exit;
}
"#;
    let module = module_path(Path::new("bridge/routes.rs"));
    let found: Vec<(usize, String)> = check_source("x.rs", &module, source)
        .into_iter()
        .map(|v| (v.line, v.to))
        .collect();
    assert_eq!(
        found,
        vec![
            (2, "cli".to_string()),
            (2, "cli".to_string()),
            (5, "proxy".to_string()),
            (8, "cli".to_string()),
        ]
    );
}

#[test]
fn the_assembly_sits_above_the_serving_rooms_and_below_http() {
    let run = module_path(Path::new("assembly/run.rs"));
    assert!(check_source("run.rs", &run, "use crate::bridge::Bridge;").is_empty());
    assert!(check_source("run.rs", &run, "use crate::tools::ToolHost;").is_empty());
    // Controls: the assembly reaching up to the router, and any room it assembles (or the
    // process below them) reaching up to it, are each refused.
    assert_eq!(
        check_source("run.rs", &run, "use crate::http::router;")[0].to,
        "http"
    );
    for below in [
        "daemon/state.rs",
        "bridge/mod.rs",
        "tools/context.rs",
        "mcp/mod.rs",
    ] {
        let module = module_path(Path::new(below));
        let found = check_source(below, &module, "use crate::assembly::AppState;");
        assert_eq!(
            found.first().map(|v| v.to.as_str()),
            Some("assembly"),
            "{below} importing the assembly must be refused"
        );
    }
    let state = module_path(Path::new("daemon/state.rs"));
    assert_eq!(
        check_source("state.rs", &state, "use crate::bridge::Bridge;")[0].to,
        "bridge"
    );
    let unknown = module_path(Path::new("newroom/mod.rs"));
    assert_eq!(
        check_source("n.rs", &unknown, "use crate::wire::Limits;")[0].from,
        "newroom"
    );
}

#[test]
fn the_flow_room_sits_below_the_tools_and_the_command_line() {
    let model = module_path(Path::new("flow/model.rs"));
    assert!(check_source("model.rs", &model, "use crate::store::workspace::Folder;").is_empty());
    assert_eq!(
        check_source("model.rs", &model, "use crate::tools::args::Target;")[0].to,
        "tools"
    );
    let verify = module_path(Path::new("cli/verify/mod.rs"));
    assert!(check_source("mod.rs", &verify, "use crate::flow::store::load_flow;").is_empty());
    let tools = module_path(Path::new("tools/flows/verify.rs"));
    assert!(
        check_source(
            "verify.rs",
            &tools,
            "use crate::flow::suite::suite_verdict;"
        )
        .is_empty()
    );
}

#[test]
fn inside_tools_a_leaf_imports_no_family_and_a_family_no_chokepoint() {
    let leaf = module_path(Path::new("tools/judging.rs"));
    let family = module_path(Path::new("tools/meta/run.rs"));
    let chokepoint = module_path(Path::new("tools/chokepoint.rs"));
    let tiers = |module: &[String], source: &str| -> Vec<String> {
        check_tools_tiers("x.rs", module, source)
            .into_iter()
            .map(|v| format!("{} -> {}", v.from, v.to))
            .collect()
    };
    // The allowed directions.
    assert!(tiers(&leaf, "use super::refusal::Refusal;").is_empty());
    assert!(
        tiers(
            &family,
            "use crate::tools::call::Call;\nuse super::tools::Tools;"
        )
        .is_empty()
    );
    assert!(tiers(&chokepoint, "use super::leases::lease::held_refusal;").is_empty());
    // Each rule's control: the edge it forbids goes red.
    assert_eq!(
        tiers(&leaf, "use super::page::assert::Assert;"),
        ["tools::leaf -> tools::page"]
    );
    assert_eq!(
        tiers(&family, "use crate::tools::chokepoint::run_tool;"),
        ["tools::meta -> tools::chokepoint"]
    );
    assert_eq!(
        tiers(
            &family,
            "fn f() { super::super::registry::REGISTRY.len(); }"
        ),
        ["tools::meta -> tools::chokepoint"]
    );
    assert_eq!(
        tiers(&family, "use crate::tools::flows::flow::Flow;"),
        ["tools::meta -> tools::flows"]
    );
    assert_eq!(
        tiers(&leaf, "use crate::tools::run_tool;"),
        ["tools::leaf -> tools"]
    );
    // A test module may drive a tool through the chokepoint.
    assert!(tiers(&family, "mod tests {\n    use crate::tools::run_tool;\n}").is_empty());
}
