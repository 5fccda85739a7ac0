//! Embeds the browser SDK (`../sdk/reticle.js` and `../sdk/src/**/*.js`) into the binary, so the
//! SDK the daemon serves always matches the daemon's protocol, bundled into one module
//! (`build/sdk_bundle.rs`) so a page fetches one file. Writes `$OUT_DIR/sdk_files.rs`: `SDK_FILES`
//! (path under `/sdk/`, contents: the bundle as `reticle.js`) and `SDK_DIGEST` (a hash of every
//! SDK file, the cache tag in the served URLs). It reads the SDK; it must not change it.
//!
//! Also stamps the build: `RETICLE_BUILD_ID` is a hash of this crate's manifest, its sources and
//! the SDK, equal in `reticle` and `reticle-mcp` exactly when both were built from the same code,
//! so `reticle mcp` never hands over to a `reticle-mcp` left from another build.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "build/sdk_bundle.rs"]
mod sdk_bundle;

fn main() {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
    println!(
        "cargo:rerun-if-changed={}",
        sdk.join("reticle.js").display()
    );
    println!("cargo:rerun-if-changed={}", sdk.join("src").display());
    let mut files = vec![sdk.join("reticle.js")];
    collect(&sdk.join("src"), &mut files, &|path| {
        path.extension().is_some_and(|e| e == "js")
    });
    files.sort();
    // FNV-1a over each relative path and its contents.
    let mut digest: u64 = FNV_START;
    for file in &files {
        let relative = file
            .strip_prefix(&sdk)
            .expect("under sdk/")
            .to_string_lossy()
            .replace('\\', "/");
        let contents = std::fs::read(file).expect("an SDK file reads");
        digest = fnv(digest, relative.bytes().chain(contents));
        println!("cargo:rerun-if-changed={}", file.display());
    }
    let bundle = sdk_bundle::bundle(&sdk, "reticle.js")
        .unwrap_or_else(|why| panic!("the browser SDK could not be bundled: {why}"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let bundled = out.join("reticle-sdk-bundle.js");
    std::fs::write(&bundled, bundle).expect("OUT_DIR is writable");
    let mut table = String::from("pub const SDK_FILES: &[(&str, &str)] = &[\n");
    let _ = writeln!(table, "    (\"reticle.js\", include_str!({bundled:?})),");
    table.push_str("];\n");
    let _ = writeln!(table, "pub const SDK_DIGEST: &str = \"{digest:016x}\";");
    let build_id = source_digest(digest);
    println!("cargo:rustc-env=RETICLE_BUILD_ID={build_id:016x}");
    let contract = wire_contract(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/wire/fixtures"));
    println!(
        "cargo:rustc-env=RETICLE_WIRE_CONTRACT={:012x}",
        contract >> 16
    );
    std::fs::write(out.join("sdk_files.rs"), table).expect("OUT_DIR is writable");
}

/// FNV-1a, continued from the SDK's digest, over the manifest and every file under `src/` (their
/// paths and contents, in name order).
fn source_digest(sdk_digest: u64) -> u64 {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    println!(
        "cargo:rerun-if-changed={}",
        crate_dir.join("Cargo.toml").display()
    );
    println!("cargo:rerun-if-changed={}", crate_dir.join("src").display());
    let mut files = vec![crate_dir.join("Cargo.toml")];
    collect(&crate_dir.join("src"), &mut files, &|_| true);
    files.sort();
    let mut digest = sdk_digest;
    for file in files {
        let relative = file
            .strip_prefix(crate_dir)
            .unwrap_or(&file)
            .to_string_lossy()
            .into_owned();
        let contents = std::fs::read(&file).unwrap_or_default();
        digest = fnv(digest, relative.bytes().chain(contents));
    }
    digest
}

/// The wire contract's fingerprint: FNV-1a over the field names of the golden protocol 1
/// messages (every key of each, in name order, file by file), so it moves exactly when a field
/// is added, renamed or dropped, and not when a fixture's values change.
fn wire_contract(fixtures: &Path) -> u64 {
    let mut digest = FNV_START;
    for name in [
        "command.json",
        "command_result.json",
        "event.json",
        "hello.json",
    ] {
        let file = fixtures.join(name);
        println!("cargo:rerun-if-changed={}", file.display());
        let text = std::fs::read_to_string(&file).expect("a golden fixture reads");
        let mut keys = json_keys(&text);
        keys.sort();
        keys.dedup();
        let line = format!("{name}:{};", keys.join(","));
        digest = fnv(digest, line.bytes());
    }
    digest
}

/// Every object key in `json` (a string followed by `:`), as written.
fn json_keys(json: &str) -> Vec<String> {
    let (mut keys, mut chars) = (Vec::new(), json.chars().peekable());
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut text = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => text.extend(chars.next()),
                '"' => break,
                c => text.push(c),
            }
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek() == Some(&':') {
            keys.push(text);
        }
    }
    keys
}

/// FNV-1a's offset basis.
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over `bytes`, continued from `digest`.
fn fnv(digest: u64, bytes: impl Iterator<Item = u8>) -> u64 {
    bytes.fold(digest, |digest, byte| {
        (digest ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every file under `dir` that `keep` takes; each directory is watched for new files.
fn collect(dir: &Path, files: &mut Vec<PathBuf>, keep: &dyn Fn(&Path) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(&path, files, keep);
        } else if keep(&path) {
            files.push(path);
        }
    }
}
