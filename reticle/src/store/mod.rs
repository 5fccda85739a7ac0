//! The on-disk workspace: atomic writes (temporary file, fsync, rename, fsync of the directory)
//! and bounded directories (only the newest files kept). Used for `.reticle/capsules/` and the
//! feedback outbox. This room writes files; it must not decide what goes in them.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `dir/name` atomically: a reader sees the old file or the whole new one.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, dir.join(name))?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Deletes all but the `keep` newest files ending in `suffix` (by name: names start with a
/// timestamp).
pub fn keep_newest(dir: &Path, keep: usize, suffix: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix) && !n.starts_with('.'))
        .collect();
    if names.len() <= keep {
        return;
    }
    names.sort_by_key(|n| {
        let stamp: u128 = n
            .split('-')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (stamp, n.clone())
    });
    let excess = names.len() - keep;
    for name in names.into_iter().take(excess) {
        let _ = fs::remove_file(dir.join(name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_whole_and_the_directory_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..7u64 {
            write_atomic(dir.path(), &format!("{}-x.json", 1000 + i), b"{}").unwrap();
        }
        keep_newest(dir.path(), 3, ".json");
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["1004-x.json", "1005-x.json", "1006-x.json"]);
    }
}
