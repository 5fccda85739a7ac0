//! The published SDK, built at test time: `@reticlehq/browser@2.0.0` and `@reticlehq/core@2.0.0`
//! installed from the npm registry into a temporary directory and bundled for the page with
//! esbuild (the recipe in the reference notes, §13). Nothing of it is committed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The published versions under test.
pub const BROWSER_PACKAGE: &str = "@reticlehq/browser@2.0.0";
pub const CORE_PACKAGE: &str = "@reticlehq/core@2.0.0";
/// The bundle's file name inside the directory.
pub const BUNDLE: &str = "reticle-sdk.mjs";

/// A directory holding the bundled published SDK; removed on drop.
pub struct PublishedSdk {
    dir: tempfile::TempDir,
}

impl PublishedSdk {
    /// Installs and bundles; `Err` names the step that failed and what it said.
    pub fn build() -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        std::fs::write(dir.path().join("package.json"), "{\"private\":true}")
            .map_err(|e| e.to_string())?;
        run(
            dir.path(),
            "npm",
            &[
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                CORE_PACKAGE,
                BROWSER_PACKAGE,
                "esbuild",
            ],
        )?;
        run(
            dir.path(),
            "npx",
            &[
                "--no-install",
                "esbuild",
                "node_modules/@reticlehq/browser/dist/index.js",
                "--bundle",
                "--format=esm",
                "--platform=browser",
                "--target=es2022",
                "--log-level=error",
                &format!("--outfile={BUNDLE}"),
            ],
        )?;
        Ok(Self { dir })
    }

    /// The directory to serve.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The bundle's path.
    pub fn bundle(&self) -> PathBuf {
        self.dir.path().join(BUNDLE)
    }
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {} failed: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
