//! The golden protocol 1 messages (`reticle/src/wire/fixtures/`): one hello, command, command
//! result and event with every field present, which the SDK's tests read too
//! (`sdk/test/wire-golden.test.js`). Here each must decode and encode back to itself, so every
//! field name in it is one the daemon reads and writes in that spelling. The control runs the same
//! check on the edited copies in `edits.json`, which the SDK's tests must refuse as well.

use std::path::Path;

use reticle::wire::messages::decode;
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/wire/fixtures");

/// The messages, by file name, and the `kind` each holds.
const GOLDEN: &[(&str, &str)] = &[
    ("hello.json", "hello"),
    ("command.json", "command"),
    ("command_result.json", "command_result"),
    ("event.json", "event"),
];

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(name))
        .unwrap_or_else(|e| panic!("cannot read the fixture {name}: {e}"))
}

/// Whether the daemon reads `text` as a protocol 1 message and writes it back unchanged.
fn daemon_reads_back(text: &str) -> Result<(), String> {
    let message = decode(text).map_err(|e| format!("refused: {e}"))?;
    let given: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let written = serde_json::to_value(&message).map_err(|e| e.to_string())?;
    if written != given {
        return Err(format!("read as {written}, not {given}"));
    }
    Ok(())
}

#[test]
fn every_golden_message_reads_and_writes_back_unchanged() {
    for (name, kind) in GOLDEN {
        let text = fixture(name);
        assert_eq!(daemon_reads_back(&text), Ok(()), "{name}");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["kind"], *kind, "{name}");
    }
}

#[test]
fn control_every_edited_copy_is_refused() {
    let edits: Value = serde_json::from_str(&fixture("edits.json")).unwrap();
    let edits = edits["edits"].as_array().expect("edits.json lists edits");
    assert!(edits.len() >= GOLDEN.len(), "too few edits to be a control");
    for edit in edits {
        let (file, from, to) = (
            edit["fixture"].as_str().unwrap(),
            edit["from"].as_str().unwrap(),
            edit["to"].as_str().unwrap(),
        );
        let text = fixture(file);
        assert!(
            text.contains(from),
            "the edit `{from}` no longer applies to {file}"
        );
        let edited = text.replacen(from, to, 1);
        assert!(
            daemon_reads_back(&edited).is_err(),
            "{file} with `{from}` edited into `{to}` was read back unchanged"
        );
    }
}
