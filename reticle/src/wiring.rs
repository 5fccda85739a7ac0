//! Wiring an app: detect the project's dev stack (Vite, Next.js, plain HTML; anything else named
//! unsupported, with the manual line), plan the development-only snippet loading the daemon's
//! SDK in the stack's first entry file ([`AppEdit`]), and tell whether a project is wired. The
//! snippet sits between markers, so a second run changes nothing. Pure: `reticle init --write`
//! writes. This room must not write files, nor ever put the snippet where a production build
//! would keep it.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// The comment that opens the snippet (the same text in every file kind).
const BEGIN: &str = "reticle:begin";
/// The comment that closes it.
const END: &str = "reticle:end";

/// A dev stack `reticle init` knows how to wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stack {
    /// Vite: the module `index.html` loads, kept only while `import.meta.env.DEV`. With
    /// `pinia` (the app depends on Pinia) the snippet also registers the app's Pinia stores.
    Vite { entry: PathBuf, pinia: bool },
    /// Next.js 15.3 or later: `instrumentation-client`, kept only in development.
    Next { entry: PathBuf },
    /// An HTML page served by any server: loaded only on a loopback host.
    PlainHtml { page: PathBuf },
}

impl Stack {
    pub fn label(&self) -> &'static str {
        match self {
            Stack::Vite { .. } => "Vite",
            Stack::Next { .. } => "Next.js",
            Stack::PlainHtml { .. } => "plain HTML",
        }
    }

    /// The file the snippet goes in, relative to the project.
    pub fn file(&self) -> &Path {
        match self {
            Stack::Vite { entry, .. } | Stack::Next { entry } => entry,
            Stack::PlainHtml { page } => page,
        }
    }

    /// The snippet for this stack, markers included, ending with a newline. The SDK's URL is
    /// held in a variable, never written as the import's literal specifier: a type checker
    /// (`tsc`, `vue-tsc`, `next build`) resolves a literal specifier as a module and fails the
    /// build (TS2307) on a URL; a variable leaves the import typed `any` and compiles alike in
    /// JavaScript and TypeScript. A failed import is tried again ([`retrying_import`]).
    pub fn snippet(&self, port: u16) -> String {
        let url = format!("http://127.0.0.1:{port}/sdk/reticle.js");
        let (guard, hint) = (self.guard(), self.bundler_hint());
        match self {
            Stack::Vite { pinia, .. } => format!(
                "// {BEGIN}: added by `reticle init --write`; Vite keeps it in development only\n\
                 if ({guard}) {{\n{}}}\n\
                 // {END}\n",
                retrying_import(&url, hint, "  ", if *pinia { PINIA_STORES } else { &[] })
            ),
            Stack::Next { .. } => format!(
                "// {BEGIN}: added by `reticle init --write`; Next.js keeps it in development only\n\
                 if ({guard}) {{\n{}}}\n\
                 // {END}\n",
                retrying_import(&url, hint, "  ", &[])
            ),
            Stack::PlainHtml { .. } => format!(
                "<!-- {BEGIN}: added by `reticle init --write`; it loads only on a loopback host -->\n\
                 <script type=\"module\">\n\
                 if ({guard}) {{\n{}}}\n\
                 </script>\n\
                 <!-- {END} -->\n",
                retrying_import(&url, hint, "  ", &[])
            ),
        }
    }

    /// The condition that keeps the SDK out of everything but development, for this stack.
    fn guard(&self) -> &'static str {
        match self {
            Stack::Vite { .. } => "import.meta.env.DEV",
            Stack::Next { .. } => "process.env.NODE_ENV === 'development'",
            Stack::PlainHtml { .. } => {
                "['localhost', '127.0.0.1', '[::1]'].includes(location.hostname)"
            }
        }
    }

    /// The bundler's comment that leaves the SDK's URL import alone, for this stack.
    fn bundler_hint(&self) -> &'static str {
        match self {
            Stack::Vite { .. } => "/* @vite-ignore */ ",
            Stack::Next { .. } => "/* webpackIgnore: true */ /* turbopackIgnore: true */ ",
            Stack::PlainHtml { .. } => "",
        }
    }
}

/// What the snippet runs once the SDK is connected, in an app on Pinia: every store of the
/// app's Pinia (the active one, installed by the app's `app.use(createPinia())`) is registered
/// under its id, those already created and, through a Pinia plugin, each one created later, so
/// `reticle_state` reads them with no line of the user's. It imports `pinia` by name, so it is
/// the instance the app uses, and type-checks against Pinia's own types.
const PINIA_STORES: &[&str] = &[
    "import('pinia').then(({ getActivePinia }) => {",
    "  const pinia = getActivePinia();",
    "  if (!pinia) return;",
    "  for (const id of Object.keys(pinia.state.value)) sdk.registerStore(id, () => pinia.state.value[id]);",
    "  pinia.use(({ store }) => {",
    "    sdk.registerStore(store.$id, () => store.$state);",
    "  });",
    "});",
];

/// The store libraries whose stores the snippet cannot reach by itself (they live in the
/// app's own modules), by the package that gives them away, with the line that registers one.
const STORES_BY_HAND: &[(&str, &str, &str)] = &[
    (
        "@reduxjs/toolkit",
        "Redux",
        "registerStore('redux', () => store.getState())",
    ),
    (
        "redux",
        "Redux",
        "registerStore('redux', () => store.getState())",
    ),
    (
        "zustand",
        "Zustand",
        "registerStore('todos', () => useTodos.getState())",
    ),
];

/// Stores the project's app keeps that `reticle init` cannot register itself: the library,
/// and the exact lines to add where the store is created (for the stack's build, with the
/// daemon on `port`). `None` when there are none (or Pinia's, which the snippet registers).
pub fn stores_by_hand(project: &Path, stack: &Stack, port: u16) -> Option<(String, String)> {
    let manifest = readable_manifest(project)?;
    let (_, label, call) = STORES_BY_HAND
        .iter()
        .find(|(package, _, _)| depends_on(&manifest, package))?;
    let url = format!("http://127.0.0.1:{port}/sdk/reticle.js");
    let (guard, hint) = (stack.guard(), stack.bundler_hint());
    let lines = format!(
        "const reticleSdk = '{url}';\nif ({guard}) import({hint}reticleSdk).then((sdk) => sdk.{call});"
    );
    Some((label.to_string(), lines))
}

/// The most a failed import waits before it is tried again, in milliseconds.
pub const RETRY_CAP_MS: u32 = 2000;

/// The statements that load the SDK from `url` and connect it, trying again (every 250 ms more,
/// up to [`RETRY_CAP_MS`]) while the daemon does not answer, each line led by `indent`. Each
/// attempt asks for a URL of its own (`?attempt=N`): a browser keeps a failed module import and
/// would answer the same URL with the same failure. The first failure says so once on the
/// console. `hint` is the bundler's comment that leaves the import alone; `then` is what runs
/// once the SDK is connected (with the module as `sdk`).
fn retrying_import(url: &str, hint: &str, indent: &str, then: &[&str]) -> String {
    let connected: Vec<String> = if then.is_empty() {
        vec!["    (sdk) => sdk.connect(),".to_string()]
    } else {
        std::iter::once("    (sdk) => {".to_string())
            .chain(std::iter::once("      sdk.connect();".to_string()))
            .chain(then.iter().map(|line| format!("      {line}")))
            .chain(std::iter::once("    },".to_string()))
            .collect()
    };
    [
        format!("const reticleSdk = '{url}';"),
        "const loadReticle = (attempt = 0) => {".to_string(),
        format!("  import({hint}`${{reticleSdk}}?attempt=${{attempt}}`).then("),
    ]
    .into_iter()
    .chain(connected)
    .chain([
        "    () => {".to_string(),
        "      if (attempt === 0) console.info(`reticle: no daemon answers at ${reticleSdk} yet; trying again until one does`);".to_string(),
        format!("      setTimeout(() => loadReticle(attempt + 1), Math.min(250 * (attempt + 1), {RETRY_CAP_MS}));"),
        "    },".to_string(),
        "  );".to_string(),
        "};".to_string(),
        "loadReticle();".to_string(),
    ])
    .map(|line| format!("{indent}{line}\n"))
    .collect()
}

/// What `reticle init` found the project to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detected {
    Supported(Stack),
    /// A stack it does not wire (the reason names it); the user adds the line by hand.
    Unsupported(String),
    /// Nothing here is an app yet: no package.json naming a stack, no index.html.
    NoApp,
    /// A file it needed could not be read or parsed: named, and left alone.
    Unreadable {
        file: PathBuf,
        why: String,
    },
}

/// Frameworks whose dev build `reticle init` does not wire, by the package that gives them away.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("@angular/core", "Angular"),
    ("nuxt", "Nuxt"),
    ("@sveltejs/kit", "SvelteKit"),
    ("astro", "Astro"),
    ("react-scripts", "Create React App"),
    ("@remix-run/dev", "Remix"),
    ("gatsby", "Gatsby"),
];

/// The published SDK's package: a project depending on it wires it itself, with the daemon's
/// URL and the pairing token (it has no `port` option).
pub const PUBLISHED_SDK: &str = "@reticlehq/browser";

/// Whether the project's package.json names the published SDK ([`PUBLISHED_SDK`]) among its
/// dependencies. An unreadable or missing manifest names nothing.
pub fn depends_on_published_sdk(project: &Path) -> bool {
    readable_manifest(project).is_some_and(|manifest| depends_on(&manifest, PUBLISHED_SDK))
}

/// The project's package.json, when there is one that reads as JSON.
fn readable_manifest(project: &Path) -> Option<Value> {
    let text = read(project, "package.json").ok().flatten()?;
    serde_json::from_str(&text).ok()
}

/// Whether `manifest` names `package` among its dependencies or dev dependencies.
fn depends_on(manifest: &Value, package: &str) -> bool {
    ["dependencies", "devDependencies"]
        .iter()
        .any(|key| manifest[key].get(package).is_some())
}

/// Reads what it needs under `project` and says which stack it is.
pub fn detect(project: &Path) -> Detected {
    let manifest_path = project.join("package.json");
    let manifest = match read(project, "package.json") {
        Ok(None) => None,
        Ok(Some(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(value) => Some(value),
            Err(err) => return unreadable(&manifest_path, format!("is not valid JSON ({err})")),
        },
        Err(detected) => return detected,
    };
    let has = |name: &str| manifest.as_ref().is_some_and(|m| depends_on(m, name));
    if has("next") {
        return detect_next(project, manifest.as_ref());
    }
    if let Some((_, name)) = UNSUPPORTED.iter().find(|(package, _)| has(package)) {
        return Detected::Unsupported(format!("{name} is not wired by `reticle init`"));
    }
    let page = match read(project, "index.html") {
        Ok(Some(page)) => page,
        Ok(None) if manifest.is_none() => return Detected::NoApp,
        Ok(None) if has("vite") => {
            return unreadable(
                &project.join("index.html"),
                "does not exist, and Vite starts from it".into(),
            );
        }
        Ok(None) => {
            return Detected::Unsupported(
                "package.json names neither Vite nor Next.js, and there is no index.html".into(),
            );
        }
        Err(detected) => return detected,
    };
    if has("vite") {
        return match module_entry(&page) {
            Some(entry) if !inside_the_project(&entry) => unreadable(
                &project.join("index.html"),
                format!(
                    "loads its entry module from {}, which lies outside the project; init edits only files inside --dir",
                    entry.display()
                ),
            ),
            Some(entry) => Detected::Supported(Stack::Vite {
                entry,
                pinia: has("pinia"),
            }),
            None => unreadable(
                &project.join("index.html"),
                "loads no module script with a local src (`<script type=\"module\" src=\"/src/...\">`), so the entry module is unknown".into(),
            ),
        };
    }
    Detected::Supported(Stack::PlainHtml {
        page: PathBuf::from("index.html"),
    })
}

/// Next.js runs `instrumentation-client` in the browser before the app from 15.3 on.
fn detect_next(project: &Path, manifest: Option<&Value>) -> Detected {
    let installed = read(project, "node_modules/next/package.json")
        .ok()
        .flatten()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|m| m["version"].as_str().map(str::to_string));
    let declared = manifest.and_then(|m| {
        ["dependencies", "devDependencies"]
            .iter()
            .find_map(|key| m[key]["next"].as_str().map(str::to_string))
    });
    let version = installed.or(declared).unwrap_or_default();
    if !next_runs_client_instrumentation(&version) {
        return Detected::Unsupported(format!(
            "Next.js '{version}' has no instrumentation-client (it came in 15.3)"
        ));
    }
    let under_src = project.join("src/app").is_dir() || project.join("src/pages").is_dir();
    let typescript = project.join("tsconfig.json").is_file();
    let dir = if under_src { "src/" } else { "" };
    let existing = ["ts", "js"]
        .iter()
        .map(|ext| PathBuf::from(format!("{dir}instrumentation-client.{ext}")))
        .find(|path| project.join(path).is_file());
    let entry = existing.unwrap_or_else(|| {
        PathBuf::from(format!(
            "{dir}instrumentation-client.{}",
            if typescript { "ts" } else { "js" }
        ))
    });
    Detected::Supported(Stack::Next { entry })
}

/// Whether a Next.js version (or a range's lower bound: `^15.3.0`, `~16.0.1`, `16`) is 15.3+.
fn next_runs_client_instrumentation(version: &str) -> bool {
    let digits = version.trim_start_matches(|c: char| !c.is_ascii_digit());
    let mut parts = digits.split('.').map(|p| {
        p.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse::<u32>()
            .ok()
    });
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), _) if major >= 16 => true,
        (Some(15), Some(minor)) => minor >= 3,
        _ => false,
    }
}

/// The local module `index.html` loads first (`<script type="module" src="/src/main.js">`).
fn module_entry(page: &str) -> Option<PathBuf> {
    page.match_indices("<script").find_map(|(at, _)| {
        let tag = &page[at..at + page[at..].find('>')?];
        if !tag.contains("type=\"module\"") && !tag.contains("type='module'") {
            return None;
        }
        let src = attribute(tag, "src")?;
        let local = src.strip_prefix('/').unwrap_or(src);
        (!local.is_empty() && !src.contains("://") && !local.starts_with('/'))
            .then(|| PathBuf::from(local))
    })
}

/// Whether a path relative to the project stays inside it: no `..` step, no root.
fn inside_the_project(relative: &Path) -> bool {
    relative
        .components()
        .all(|part| matches!(part, Component::Normal(_) | Component::CurDir))
}

/// An attribute's value, quoted (`src="/a.js"`, `src='/a.js'`) or bare (`src=/a.js`).
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let value = &tag[tag.find(&format!("{name}="))? + name.len() + 1..];
    match value.chars().next()? {
        quote @ ('"' | '\'') => {
            let rest = &value[1..];
            Some(&rest[..rest.find(quote)?])
        }
        _ => value.split(char::is_whitespace).next(),
    }
}

/// What the file must become.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppEdit {
    /// The snippet is there, as it should be.
    Unchanged,
    /// The file is created with the snippet alone.
    Create { text: String },
    /// The snippet is added (or an older one replaced): the whole new text.
    Change { text: String, replaced: bool },
    /// The file cannot take the snippet: why (named to the user; the file is left alone).
    Refused(String),
}

/// Plans the snippet in `existing` (the file's text, `None` when it does not exist).
pub fn plan(stack: &Stack, existing: Option<&str>, port: u16) -> AppEdit {
    let snippet = stack.snippet(port);
    let Some(text) = existing else {
        return match stack {
            Stack::Next { .. } => AppEdit::Create { text: snippet },
            _ => AppEdit::Refused("does not exist".into()),
        };
    };
    if let Some((start, end)) = marked_block(text) {
        if text[start..end] == snippet {
            return AppEdit::Unchanged;
        }
        let text = format!("{}{snippet}{}", &text[..start], &text[end..]);
        return AppEdit::Change {
            text,
            replaced: true,
        };
    }
    let text = match stack {
        Stack::Vite { .. } | Stack::Next { .. } => format!("{snippet}{text}"),
        Stack::PlainHtml { .. } => {
            let lower = text.to_ascii_lowercase();
            let Some(at) = lower.find("</head>").or_else(|| lower.find("</body>")) else {
                return AppEdit::Refused("has neither </head> nor </body> to put it before".into());
            };
            format!("{}{snippet}{}", &text[..at], &text[at..])
        }
    };
    AppEdit::Change {
        text,
        replaced: false,
    }
}

/// The byte range of an existing snippet, from its opening line to the end of its closing line.
fn marked_block(text: &str) -> Option<(usize, usize)> {
    let begin = text.find(BEGIN)?;
    let start = text[..begin].rfind('\n').map_or(0, |at| at + 1);
    let end_marker = begin + text[begin..].find(END)?;
    let end = text[end_marker..]
        .find('\n')
        .map_or(text.len(), |at| end_marker + at + 1);
    Some((start, end))
}

/// Whether a project's app loads the daemon's served SDK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wiring {
    /// The stack's entry file holds Reticle's snippet, for the daemon on `port`.
    Wired { file: PathBuf, port: Option<u16> },
    /// The stack was found, and its entry file does not hold the snippet.
    NotWired { file: PathBuf },
    /// Nothing can be told: no app, a stack `reticle init` does not wire, an unreadable file.
    Unknown(String),
}

/// Reads the project's entry file and says whether it is wired.
pub fn wiring(project: &Path) -> Wiring {
    let stack = match detect(project) {
        Detected::Supported(stack) => stack,
        Detected::NoApp => {
            return Wiring::Unknown(
                "no app found (no package.json naming Vite or Next.js, no index.html)".into(),
            );
        }
        Detected::Unsupported(why) => return Wiring::Unknown(why),
        Detected::Unreadable { file, why } => {
            return Wiring::Unknown(format!("{} {why}", file.display()));
        }
    };
    let file = stack.file().to_path_buf();
    match read(project, &file.to_string_lossy()) {
        Ok(Some(text)) => match marked_block(&text) {
            Some((start, end)) => Wiring::Wired {
                port: block_port(&text[start..end]),
                file,
            },
            None => Wiring::NotWired { file },
        },
        Ok(None) => Wiring::NotWired { file },
        Err(_) => Wiring::Unknown(format!("{} cannot be read", file.display())),
    }
}

/// The daemon port a snippet loads the SDK from (`http://127.0.0.1:<port>/sdk/reticle.js`).
fn block_port(block: &str) -> Option<u16> {
    let at = block.find("127.0.0.1:")? + "127.0.0.1:".len();
    let digits: String = block[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn read(project: &Path, relative: &str) -> Result<Option<String>, Detected> {
    let path = project.join(relative);
    crate::store::read_inside(project, Path::new(relative))
        .map_err(|err| unreadable(&path, format!("cannot be read as text ({err})")))
}

fn unreadable(file: &Path, why: String) -> Detected {
    Detected::Unreadable {
        file: file.to_path_buf(),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    const VITE_PAGE: &str = "<html><body><div id=\"app\"></div>\n<script type=\"module\" src=\"/src/main.js\"></script></body></html>";

    #[test]
    fn a_project_on_the_published_sdk_is_told_by_its_dependencies() {
        let on = project(&[(
            "package.json",
            r#"{"devDependencies":{"@reticlehq/browser":"2.0.0"}}"#,
        )]);
        assert!(depends_on_published_sdk(on.path()));
        let off = project(&[("package.json", r#"{"dependencies":{"vite":"8"}}"#)]);
        assert!(!depends_on_published_sdk(off.path()));
        let broken = project(&[("package.json", "{ not json")]);
        assert!(!depends_on_published_sdk(broken.path()));
    }

    /// An app on Pinia gets a snippet that registers its stores; a second plan changes nothing.
    /// Control: the same app without Pinia gets no Pinia line.
    #[test]
    fn an_app_on_pinia_registers_its_stores_and_others_are_told_the_line_to_add() {
        let pinia = project(&[
            (
                "package.json",
                r#"{"dependencies":{"vue":"3","pinia":"3"},"devDependencies":{"vite":"8"}}"#,
            ),
            ("index.html", VITE_PAGE),
        ]);
        let Detected::Supported(stack) = detect(pinia.path()) else {
            panic!("a Vite app")
        };
        assert_eq!(
            stack,
            Stack::Vite {
                entry: "src/main.js".into(),
                pinia: true
            }
        );
        let snippet = stack.snippet(4400);
        assert!(
            snippet.contains("import('pinia').then(({ getActivePinia })"),
            "{snippet}"
        );
        assert!(snippet.contains("pinia.use(({ store })"), "{snippet}");
        assert!(
            snippet.contains("sdk.registerStore(store.$id, () => store.$state)"),
            "{snippet}"
        );
        let AppEdit::Change { text, .. } = plan(&stack, Some("console.log(1)\n"), 4400) else {
            panic!("the snippet is added")
        };
        assert_eq!(plan(&stack, Some(&text), 4400), AppEdit::Unchanged);
        assert_eq!(stores_by_hand(pinia.path(), &stack, 4400), None);
        let plain = Stack::Vite {
            entry: "src/main.js".into(),
            pinia: false,
        };
        assert!(!plain.snippet(4400).contains("pinia"));

        let redux = project(&[(
            "package.json",
            r#"{"dependencies":{"react":"19","@reduxjs/toolkit":"2"}}"#,
        )]);
        let (label, lines) = stores_by_hand(redux.path(), &plain, 4401).unwrap();
        assert_eq!(label, "Redux");
        assert_eq!(
            lines,
            "const reticleSdk = 'http://127.0.0.1:4401/sdk/reticle.js';\n\
             if (import.meta.env.DEV) import(/* @vite-ignore */ reticleSdk).then((sdk) => sdk.registerStore('redux', () => store.getState()));"
        );
        let zustand = project(&[("package.json", r#"{"dependencies":{"zustand":"5"}}"#)]);
        let next = Stack::Next {
            entry: "instrumentation-client.ts".into(),
        };
        let (label, lines) = stores_by_hand(zustand.path(), &next, 4400).unwrap();
        assert_eq!(label, "Zustand");
        assert!(
            lines.contains("process.env.NODE_ENV === 'development'"),
            "{lines}"
        );
        assert!(lines.contains("useTodos.getState()"), "{lines}");
    }

    #[test]
    fn each_stack_is_told_by_its_files() {
        let vite = project(&[
            ("package.json", r#"{"devDependencies":{"vite":"^8.3.4"}}"#),
            ("index.html", VITE_PAGE),
        ]);
        assert_eq!(
            detect(vite.path()),
            Detected::Supported(Stack::Vite {
                entry: "src/main.js".into(),
                pinia: false,
            })
        );
        let next = project(&[
            ("package.json", r#"{"dependencies":{"next":"16.0.1"}}"#),
            ("tsconfig.json", "{}"),
            ("src/app/page.tsx", ""),
        ]);
        assert_eq!(
            detect(next.path()),
            Detected::Supported(Stack::Next {
                entry: "src/instrumentation-client.ts".into()
            })
        );
        let plain = project(&[("index.html", "<html><head></head></html>")]);
        assert_eq!(
            detect(plain.path()),
            Detected::Supported(Stack::PlainHtml {
                page: "index.html".into()
            })
        );
    }

    #[test]
    fn what_it_cannot_wire_is_named_and_never_guessed() {
        let old_next = project(&[("package.json", r#"{"dependencies":{"next":"^14.2.0"}}"#)]);
        assert!(
            matches!(detect(old_next.path()), Detected::Unsupported(why) if why.contains("15.3"))
        );
        let angular = project(&[
            ("package.json", r#"{"dependencies":{"@angular/core":"19"}}"#),
            ("index.html", "<html></html>"),
        ]);
        assert!(
            matches!(detect(angular.path()), Detected::Unsupported(why) if why.contains("Angular"))
        );
        assert_eq!(detect(project(&[]).path()), Detected::NoApp);
        let express = project(&[("package.json", r#"{"dependencies":{"express":"5"}}"#)]);
        assert!(matches!(detect(express.path()), Detected::Unsupported(_)));
        let broken = project(&[("package.json", "{ not json")]);
        assert!(
            matches!(detect(broken.path()), Detected::Unreadable { file, .. } if file.ends_with("package.json"))
        );
        let no_entry = project(&[
            ("package.json", r#"{"devDependencies":{"vite":"8"}}"#),
            (
                "index.html",
                "<html><script src=\"https://cdn/x.js\"></script></html>",
            ),
        ]);
        assert!(
            matches!(detect(no_entry.path()), Detected::Unreadable { file, .. } if file.ends_with("index.html"))
        );
    }

    #[test]
    fn the_entry_is_read_from_quoted_and_bare_sources_and_odd_markup_never_panics() {
        for page in [
            "<script type=\"module\" src=\"/src/main.ts\"></script>",
            "<script type='module' src='/src/main.ts'></script>",
            "<script type=\"module\" src=/src/main.ts></script>",
        ] {
            assert_eq!(
                module_entry(page),
                Some(PathBuf::from("src/main.ts")),
                "{page}"
            );
        }
        assert!(inside_the_project(Path::new("src/main.ts")));
        assert!(inside_the_project(Path::new("./src/main.ts")));
        assert!(!inside_the_project(Path::new("src/../../outside.js")));
        assert!(!inside_the_project(Path::new("../outside.js")));
        for odd in [
            "<script type=\"module\" src=é/x.js>",
            "<script type=\"module\" src=\"",
            "<script type=\"module\" src=",
            "<script",
        ] {
            let _ = module_entry(odd);
        }
    }

    #[test]
    fn next_versions_from_15_3_run_client_instrumentation() {
        for yes in ["15.3.0", "^15.3.1", "~16.0.1", "16", ">=15.4"] {
            assert!(next_runs_client_instrumentation(yes), "{yes}");
        }
        for no in ["15.2.9", "^14.2.0", "latest", ""] {
            assert!(!next_runs_client_instrumentation(no), "{no}");
        }
    }

    #[test]
    fn a_second_plan_changes_nothing_and_an_older_snippet_is_replaced() {
        let stack = Stack::Vite {
            entry: "src/main.js".into(),
            pinia: false,
        };
        let original = "import './style.css'\nconsole.log(1)\n";
        let AppEdit::Change { text, replaced } = plan(&stack, Some(original), 4400) else {
            panic!("the first plan adds the snippet")
        };
        assert!(!replaced);
        assert!(text.starts_with("// reticle:begin") && text.ends_with(original));
        assert_eq!(plan(&stack, Some(&text), 4400), AppEdit::Unchanged);
        let AppEdit::Change {
            text: moved,
            replaced,
        } = plan(&stack, Some(&text), 4401)
        else {
            panic!("another port replaces the snippet")
        };
        assert!(replaced && moved.contains("127.0.0.1:4401") && !moved.contains(":4400"));
        assert!(moved.ends_with(original));
    }

    #[test]
    fn a_project_is_told_wired_by_its_entry_and_the_port_is_read_back() {
        let vite = project(&[
            ("package.json", r#"{"devDependencies":{"vite":"^8.3.4"}}"#),
            ("index.html", VITE_PAGE),
            ("src/main.js", "console.log(1)\n"),
        ]);
        assert_eq!(
            wiring(vite.path()),
            Wiring::NotWired {
                file: "src/main.js".into()
            }
        );
        let stack = Stack::Vite {
            entry: "src/main.js".into(),
            pinia: false,
        };
        let AppEdit::Change { text, .. } = plan(&stack, Some("console.log(1)\n"), 4411) else {
            panic!("the snippet is added")
        };
        std::fs::write(vite.path().join("src/main.js"), text).unwrap();
        assert_eq!(
            wiring(vite.path()),
            Wiring::Wired {
                file: "src/main.js".into(),
                port: Some(4411)
            }
        );
        assert!(matches!(wiring(project(&[]).path()), Wiring::Unknown(_)));
    }

    #[test]
    fn every_snippet_retries_with_a_fresh_url_and_never_imports_a_literal_url() {
        let stacks = [
            Stack::Vite {
                entry: "src/main.ts".into(),
                pinia: false,
            },
            Stack::Vite {
                entry: "src/main.ts".into(),
                pinia: true,
            },
            Stack::Next {
                entry: "instrumentation-client.ts".into(),
            },
            Stack::PlainHtml {
                page: "index.html".into(),
            },
        ];
        for stack in stacks {
            let snippet = stack.snippet(4400);
            assert!(snippet.contains("?attempt=${attempt}"), "{snippet}");
            assert!(
                snippet.contains("setTimeout(() => loadReticle(attempt + 1)"),
                "{snippet}"
            );
            assert!(!snippet.contains("import('http"), "{snippet}");
            assert!(!snippet.contains("import(\"http"), "{snippet}");
            assert_eq!(block_port(&snippet), Some(4400));
        }
    }

    #[test]
    fn a_page_takes_the_snippet_before_its_head_closes_or_is_refused() {
        let page = Stack::PlainHtml {
            page: "index.html".into(),
        };
        let AppEdit::Change { text, .. } = plan(
            &page,
            Some("<html><HEAD><title>x</title></HEAD><body></body></html>"),
            4400,
        ) else {
            panic!("a page with a head takes it")
        };
        assert!(text.contains("<!-- reticle:end -->\n</HEAD>"), "{text}");
        assert!(text.contains("location.hostname"));
        assert!(matches!(
            plan(&page, Some("just text"), 4400),
            AppEdit::Refused(_)
        ));
        assert!(matches!(plan(&page, None, 4400), AppEdit::Refused(_)));
        let next = Stack::Next {
            entry: "instrumentation-client.js".into(),
        };
        assert!(
            matches!(plan(&next, None, 4400), AppEdit::Create { text } if text.contains("NODE_ENV === 'development'"))
        );
    }
}
