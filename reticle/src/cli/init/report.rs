//! How `reticle init` speaks: one line per step, led by its mark, and the closing note on loading
//! the SDK (shorter once the app's build loads it).
//! The marks are defined here once; this module formats and must not decide outcomes.

use std::fmt;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// The step changed what it had to (or would, in a dry run).
    Done,
    /// Nothing needed changing.
    Unchanged,
    /// The step cannot be finished by `reticle init`: the line says what the user must do.
    NeedsUser,
    /// The step failed; nothing was changed by it, and the line says why and how to fix it.
    Failed,
}

impl Mark {
    /// The mark as printed at the start of the line.
    pub fn glyph(self) -> &'static str {
        match self {
            Mark::Done => "[✓]",
            Mark::Unchanged => "[=]",
            Mark::NeedsUser => "[⚠]",
            Mark::Failed => "[✗]",
        }
    }
}

/// One step's outcome, as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub mark: Mark,
    pub text: String,
}

impl Step {
    pub fn new(mark: Mark, text: impl Into<String>) -> Self {
        Self {
            mark,
            text: text.into(),
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.mark.glyph(), self.text)
    }
}

/// Where the page's pairing token comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// The token file in the state dir.
    File(std::path::PathBuf),
    /// `RETICLE_TOKEN`, which the daemon prefers over the file.
    Environment,
}

/// The one line an app's development build adds: the daemon's own SDK, which pairs itself.
pub fn one_line(port: u16) -> String {
    format!(
        "import('http://127.0.0.1:{port}/sdk/reticle.js').then((r) => r.connect({{ session: 'my-tab' }}));"
    )
}

/// The closing note: the one line the app needs (or the manual `connect()` call), and where
/// the token is for the manual way.
///
/// The token itself is not printed. It is what keeps other pages in the same browser (and a
/// DNS-rebinding site) from driving the app through the daemon, and this output ends up in
/// places a secret should not: an agent's transcript when the agent runs `reticle init`, CI
/// logs, a pasted bug report. Naming the file and the command that reads it costs the developer
/// one `cat`, and only someone who can read the state dir (mode 0700) gets it.
pub fn sdk_note(port: u16, token: &TokenSource, app_wired: bool) -> String {
    let token_line = match token {
        TokenSource::File(path) => format!(
            "The pairing token is the content of {path} (read it with `cat {path}`).",
            path = path.display()
        ),
        TokenSource::Environment => {
            "The pairing token is the value of RETICLE_TOKEN (the daemon uses it instead of the token file).".to_string()
        }
    };
    let served = if app_wired {
        "Your app's development build loads the daemon's own SDK (the lines above), which pairs pages on a loopback origin itself.".to_string()
    } else {
        format!(
            "Load the SDK in your app's development build with one line (the daemon serves its own SDK and pairs pages on a loopback origin itself), or let `reticle init --write` add it:\n\n    {}",
            one_line(port)
        )
    };
    [
        served,
        String::new(),
        "Or serve a copy of the SDK with your app and pass the port and the pairing token yourself:".to_string(),
        String::new(),
        "    import { connect } from '/sdk/reticle.js';".to_string(),
        format!("    connect({{ port: {port}, token: '<pairing token>' }});"),
        String::new(),
        token_line,
        "Pass it to the page the way your app passes dev-only settings, and keep it out of version control.".to_string(),
        "Then restart your agent (or reload its MCP servers) so it reads the new configuration.".to_string(),
    ]
    .join("\n")
}

/// The note for a project that depends on the published SDK (`@reticlehq/browser` 2.0.0): it
/// has no `port` option, so it is given the daemon's bridge URL and the pairing token; a fixed
/// `session` keeps the tab's id across reloads, where `'auto'` takes a new one on each.
pub fn published_sdk_note(port: u16) -> String {
    [
        format!(
            "This project depends on the published SDK {}. It has no `port` option: pass it the daemon's URL and the pairing token (the file named below), in development only:",
            crate::wiring::PUBLISHED_SDK
        ),
        String::new(),
        format!("    import {{ reticle }} from '{}';", crate::wiring::PUBLISHED_SDK),
        format!(
            "    if (import.meta.env.DEV) reticle.connect({{ url: 'ws://127.0.0.1:{port}/reticle', token: '<pairing token>', session: 'my-app' }});"
        ),
        String::new(),
        "A fixed `session` keeps the tab's id across reloads; 'auto' takes a new id on every reload.".to_string(),
    ]
    .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_sdk_note_gives_the_url_and_the_token_and_no_port_option() {
        let note = published_sdk_note(4401);
        assert!(
            note.contains("reticle.connect({ url: 'ws://127.0.0.1:4401/reticle', token: '<pairing token>', session: 'my-app' })"),
            "{note}"
        );
        assert!(note.contains("from '@reticlehq/browser'"), "{note}");
        assert!(!note.contains("port:"), "{note}");
    }

    #[test]
    fn each_mark_has_its_own_glyph() {
        let glyphs = [Mark::Done, Mark::Unchanged, Mark::NeedsUser, Mark::Failed].map(Mark::glyph);
        assert_eq!(glyphs, ["[✓]", "[=]", "[⚠]", "[✗]"]);
        assert_eq!(
            Step::new(Mark::Unchanged, ".mcp.json: unchanged").to_string(),
            "[=] .mcp.json: unchanged"
        );
    }

    #[test]
    fn the_note_names_the_port_and_the_token_file_but_not_a_token() {
        let note = sdk_note(4401, &TokenSource::File("/s/pairing-token".into()), false);
        assert!(note.contains("connect({ port: 4401, token: '<pairing token>' })"));
        assert!(note.contains("cat /s/pairing-token"));
        let from_env = sdk_note(4400, &TokenSource::Environment, true);
        assert!(!from_env.contains("r.connect({ session"));
        assert!(from_env.contains("RETICLE_TOKEN"));
        assert!(from_env.contains("port: 4400"));
        assert!(note.contains(
            "import('http://127.0.0.1:4401/sdk/reticle.js').then((r) => r.connect({ session: 'my-tab' }));"
        ));
    }
}
