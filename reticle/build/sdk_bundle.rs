//! The browser SDK as one ES module: its entry (`sdk/reticle.js`) with every module it imports,
//! in dependency order, each in a scope of its own, so a page fetches one file where it fetched
//! one per module. It reads the SDK's own modules, which keep to a plain subset of ES module
//! syntax (named imports from relative paths, `export` before a declaration); anything outside
//! that subset fails the build with the file and the line, never a bundle that loads wrongly.
//! It must not change the SDK's files or how a page imports the SDK.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// One module: its named imports (module, imported name, local name), the names it exports,
/// and its code with the import statements and the `export` keywords taken out.
struct Module {
    imports: Vec<(String, String, String)>,
    exports: Vec<String>,
    body: String,
}

/// The bundle of the entry `entry` (a path relative to `root`), or why the SDK cannot be bundled.
pub fn bundle(root: &Path, entry: &str) -> Result<String, String> {
    let mut modules = BTreeMap::new();
    let mut order = Vec::new();
    visit(root, entry, &mut modules, &mut order, &mut Vec::new())?;
    for (path, module) in &modules {
        for (from, imported, _) in &module.imports {
            if !modules[from].exports.contains(imported) {
                return Err(format!(
                    "{path} imports `{imported}` from {from}, which does not export it"
                ));
            }
        }
    }
    let mut out = String::from(
        "// The Reticle browser SDK, one module built from sdk/reticle.js and the modules it imports\n\
         // (each below in a scope of its own, named for its path). Built by the daemon; edit the\n\
         // modules, not this file.\n",
    );
    for path in &order {
        let module = &modules[path];
        let scope = scope_name(path);
        if path == entry {
            out.push_str(&format!("\n// ── {path}\n"));
            out.push_str(&import_lines(module));
            out.push_str(&module.body);
        } else {
            out.push_str(&format!("\n// ── {path}\nconst {scope} = (() => {{\n"));
            out.push_str(&import_lines(module));
            out.push_str(&module.body);
            out.push_str(&format!(
                "\nreturn {{ {} }};\n}})();\n",
                module.exports.join(", ")
            ));
        }
    }
    Ok(out)
}

/// Reads `path` and, first, every module it imports; `order` lists each once, after its imports.
fn visit(
    root: &Path,
    path: &str,
    modules: &mut BTreeMap<String, Module>,
    order: &mut Vec<String>,
    stack: &mut Vec<String>,
) -> Result<(), String> {
    if modules.contains_key(path) {
        return Ok(());
    }
    if stack.iter().any(|p| p == path) {
        return Err(format!(
            "the SDK's modules import each other in a circle ({} -> {path}); one bundle needs them in one order",
            stack.join(" -> ")
        ));
    }
    let file = root.join(path);
    println!("cargo:rerun-if-changed={}", file.display());
    let source = std::fs::read_to_string(&file)
        .map_err(|e| format!("{path}: cannot be read for the bundle: {e}"))?;
    let module = parse(path, &source, stack.is_empty())?;
    stack.push(path.to_string());
    for (from, _, _) in &module.imports {
        visit(root, from, modules, order, stack)?;
    }
    stack.pop();
    order.push(path.to_string());
    modules.insert(path.to_string(), module);
    Ok(())
}

/// Splits a module into its imports, its exports and the rest; the entry (`is_entry`) keeps its
/// `export` keywords, since the bundle is the entry.
fn parse(path: &str, source: &str, is_entry: bool) -> Result<Module, String> {
    let mut imports = Vec::new();
    let mut exports = Vec::new();
    let mut body = String::with_capacity(source.len());
    let mut lines = source.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let at = || format!("{path}:{}", n + 1);
        if let Some(rest) = line.strip_prefix("import ") {
            // `import { a, b as c } from './x.js';`, perhaps over several lines.
            let mut statement = rest.to_string();
            while !statement.trim_end().ends_with(';') {
                let (_, more) = lines
                    .next()
                    .ok_or_else(|| format!("{}: an import that never ends", at()))?;
                statement.push(' ');
                statement.push_str(more);
            }
            let (names, from) = statement
                .trim()
                .strip_prefix('{')
                .and_then(|s| s.split_once('}'))
                .ok_or_else(|| {
                    format!("{}: only `import {{ ... }} from '...'` is bundled", at())
                })?;
            let from = from
                .trim()
                .strip_prefix("from")
                .map(str::trim)
                .and_then(|s| s.strip_suffix(';'))
                .map(|s| s.trim_matches(|c| c == '\'' || c == '"'))
                .filter(|s| s.starts_with("./") || s.starts_with("../"))
                .ok_or_else(|| format!("{}: only relative imports are bundled", at()))?;
            let module = resolve(path, from);
            for name in names.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let (imported, local) = name
                    .split_once(" as ")
                    .map_or((name, name), |(a, b)| (a.trim(), b.trim()));
                imports.push((module.clone(), imported.to_string(), local.to_string()));
            }
            body.push('\n');
            continue;
        }
        if line.starts_with("export {") || line.starts_with("export default") {
            // The entry's own export list stays as it is: the bundle is the entry.
            body.push_str(line);
            body.push('\n');
            continue;
        }
        if let Some(rest) = line.strip_prefix("export ") {
            let name = ["async function ", "function ", "const ", "class ", "let "]
                .iter()
                .find_map(|kw| rest.strip_prefix(kw))
                .map(|s| {
                    s.trim_start_matches('*')
                        .trim_start()
                        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                        .next()
                        .unwrap_or("")
                })
                .filter(|s| !s.is_empty())
                .ok_or_else(|| {
                    format!("{}: only `export` before a declaration is bundled", at())
                })?;
            exports.push(name.to_string());
            body.push_str(if is_entry { line } else { rest });
            body.push('\n');
            continue;
        }
        body.push_str(line);
        body.push('\n');
    }
    Ok(Module {
        imports,
        exports,
        body,
    })
}

/// The path of `from`, imported by the module at `path`, relative to the SDK's root.
fn resolve(path: &str, from: &str) -> String {
    let mut parts: Vec<String> = Path::new(path)
        .parent()
        .map(|p| {
            p.components()
                .filter_map(|c| match c {
                    Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    for c in PathBuf::from(from).components() {
        match c {
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

/// The constant a module's exports are kept in: `__reticle_` and its path's words.
fn scope_name(path: &str) -> String {
    let words: String = path
        .trim_end_matches(".js")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("__reticle_{words}")
}

/// `const { a, b: c } = __reticle_x;` for each module a module imports from.
fn import_lines(module: &Module) -> String {
    let mut by_module: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (from, imported, local) in &module.imports {
        let binding = if imported == local {
            imported.clone()
        } else {
            format!("{imported}: {local}")
        };
        by_module.entry(from).or_default().push(binding);
    }
    by_module
        .iter()
        .map(|(from, names)| format!("const {{ {} }} = {};\n", names.join(", "), scope_name(from)))
        .collect()
}
