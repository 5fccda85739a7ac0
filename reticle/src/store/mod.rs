//! The on-disk stores: atomic writes (temporary file, fsync, rename, fsync of the directory) and
//! bounded directories (only the newest files kept); [`private`] holds the state dir's files and
//! [`workspace`] the project's `.reticle/`. A rewritten file keeps its mode and owner, a new one
//! is 0600, and a syncing write runs [`off_the_runtime`] so an fsync never holds up the daemon.
//!
//! This room writes files; it must not decide what goes in them.

pub mod private;
pub mod workspace;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The glob (gitignore syntax) every temporary file [`write_atomic`] leaves behind on a crash
/// matches: `.<name>.tmp-<pid>`, in the target's own folder.
pub const SCRATCH_GLOB: &str = ".*.tmp-*";

/// Writes `bytes` to `dir/name` atomically: a reader sees the old file or the whole new one. An
/// existing file keeps its mode and owner (refused when the owner cannot be kept); a new one is
/// readable by its owner only.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    off_the_runtime(|| write_atomic_here(dir, name, bytes))
}

fn write_atomic_here(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let target = dir.join(name);
    let existing = fs::metadata(&target).ok();
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(private::FILE_MODE)
            .open(&temp)?;
        if let Some(meta) = &existing {
            keep_owner_and_mode(&file, meta)?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, &target)?;
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

/// The stand-in for the durability row's negative control: writes `bytes` to `dir/name` in
/// place, truncating first (a reader, or a kill, between the two sees an empty or partial
/// file). Never used unless a workspace is built with [`workspace::Writes::InPlaceStandIn`].
pub fn write_in_place(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    off_the_runtime(|| write_in_place_here(dir, name, bytes))
}

fn write_in_place_here(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(private::FILE_MODE)
        .open(dir.join(name))?;
    file.sync_all()?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Runs `work`, which blocks on the disk (an fsync), without holding up the async runtime it is
/// called from: on a multi-thread runtime's worker, the worker's other tasks move to a fresh
/// thread meanwhile (`block_in_place`); anywhere else (no runtime, a single-thread one, a
/// blocking-pool thread) it simply runs.
pub fn off_the_runtime<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) if runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// The most bytes a text file Reticle reads may hold; a larger one is refused, never read.
pub const READ_LIMIT: u64 = 4 * 1024 * 1024;

/// The text of the file at `path`, or `None` when there is none. Bounded: only a regular file
/// of at most [`READ_LIMIT`] bytes is read (a device, a pipe or a huge file planted in a cloned
/// repository is refused, naming why); it is opened non-blocking, so a pipe cannot hang it.
pub fn read_if_present(path: &Path) -> io::Result<Option<String>> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file (a device, a pipe or a folder), so it is not read",
        ));
    }
    if meta.len() > READ_LIMIT {
        return Err(too_large(meta.len()));
    }
    let mut text = String::new();
    file.take(READ_LIMIT + 1).read_to_string(&mut text)?;
    if text.len() as u64 > READ_LIMIT {
        return Err(too_large(text.len() as u64));
    }
    Ok(Some(text))
}

fn too_large(bytes: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("it holds {bytes} bytes, more than the {READ_LIMIT} Reticle reads"),
    )
}

/// [`read_if_present`] for `relative` inside `project`, refusing a link that leads out of the
/// project (a cloned repository may plant one pointing anywhere on the machine).
pub fn read_inside(project: &Path, relative: &Path) -> io::Result<Option<String>> {
    let path = project.join(relative);
    let linked = fs::symlink_metadata(&path).is_ok_and(|meta| meta.file_type().is_symlink());
    if linked {
        let inside = match (fs::canonicalize(&path), fs::canonicalize(project)) {
            (Ok(target), Ok(root)) => target.starts_with(root),
            _ => false,
        };
        if !inside {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a link that leads out of the project, so it is not followed",
            ));
        }
    }
    read_if_present(&path)
}

/// Gives the new `file` the owner and mode of the file it replaces.
fn keep_owner_and_mode(file: &File, old: &fs::Metadata) -> io::Result<()> {
    let new = file.metadata()?;
    if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
        std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).map_err(|err| {
            io::Error::new(
                err.kind(),
                format!(
                    "it belongs to uid {} gid {} and a rewrite could not keep that owner ({err})",
                    old.uid(),
                    old.gid()
                ),
            )
        })?;
    }
    file.set_permissions(fs::Permissions::from_mode(
        old.permissions().mode() & 0o7777,
    ))
}

/// How often [`remove_dir_released`] tries again.
const RELEASE_RETRY: std::time::Duration = std::time::Duration::from_millis(20);

/// Removes directory `dir` that other processes may still be writing into for a moment (a
/// killed browser's profile, whose helper processes outlive it briefly: a removal racing their
/// last writes stops half-way), trying again until it is gone or `bound` has passed. Whether it
/// is gone.
pub fn remove_dir_released(dir: &Path, bound: std::time::Duration) -> bool {
    let started = std::time::Instant::now();
    loop {
        let _ = fs::remove_dir_all(dir);
        if fs::symlink_metadata(dir).is_err() {
            return true;
        }
        if started.elapsed() >= bound {
            return false;
        }
        std::thread::sleep(RELEASE_RETRY);
    }
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
    fn a_read_is_bounded_and_never_follows_a_link_out_of_the_project() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "kept out").unwrap();
        let project = tempfile::tempdir().unwrap();
        let p = project.path();
        std::fs::write(p.join("plain"), "read").unwrap();
        std::os::unix::fs::symlink(p.join("plain"), p.join("inside")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), p.join("out")).unwrap();
        nix::unistd::mkfifo(&p.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        File::create(p.join("huge"))
            .unwrap()
            .set_len(READ_LIMIT + 1)
            .unwrap();

        let read = |name: &str| read_inside(p, Path::new(name));
        assert_eq!(read("plain").unwrap().as_deref(), Some("read"));
        assert_eq!(read("inside").unwrap().as_deref(), Some("read"));
        assert_eq!(read("missing").unwrap(), None);
        let out = read("out").unwrap_err().to_string();
        assert!(out.contains("leads out of the project"), "{out}");
        let pipe = read("pipe").unwrap_err().to_string();
        assert!(pipe.contains("not a regular file"), "{pipe}");
        let huge = read("huge").unwrap_err().to_string();
        assert!(huge.contains("more than"), "{huge}");
        // Control: the link out is an ordinary file to a reader not scoped to the project.
        assert_eq!(
            read_if_present(&p.join("out")).unwrap().as_deref(),
            Some("kept out")
        );
    }

    /// On a runtime with one worker, whether a task that blocks waiting for a neighbour task
    /// (spawned just before, onto the same worker) sees it run: through [`off_the_runtime`] when
    /// `off`, else blocking the worker itself.
    fn neighbour_runs_while_blocked(off: bool) -> bool {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            tokio::spawn(async move {
                let (tx, rx) = std::sync::mpsc::channel::<()>();
                tokio::spawn(async move {
                    let _ = tx.send(());
                });
                let wait = || rx.recv_timeout(std::time::Duration::from_secs(2)).is_ok();
                if off { off_the_runtime(wait) } else { wait() }
            })
            .await
            .unwrap()
        })
    }

    #[test]
    fn a_blocking_section_leaves_the_one_worker_to_the_other_tasks() {
        assert!(neighbour_runs_while_blocked(true));
        // Control: the same wait on the worker itself starves its neighbour until it gives up.
        assert!(!neighbour_runs_while_blocked(false));
        // Outside any runtime the section simply runs.
        assert_eq!(off_the_runtime(|| 7), 7);
    }

    #[test]
    fn a_directory_still_written_into_is_removed_once_its_writer_lets_go() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("profile");
        fs::create_dir_all(dir.join("a/b")).unwrap();
        // A writer that keeps adding files for a while, as a killed browser's helpers do.
        let busy = dir.join("a/b");
        let writer = std::thread::spawn(move || {
            for n in 0..200 {
                let _ = fs::create_dir_all(&busy);
                let _ = fs::write(busy.join(format!("f{n}")), b"x");
            }
        });
        let gone = remove_dir_released(&dir, std::time::Duration::from_secs(30));
        writer.join().unwrap();
        // The writer may have re-made the dir after the last removal: one more settles it.
        let gone = gone && remove_dir_released(&dir, std::time::Duration::from_secs(30));
        assert!(gone && !dir.exists());
        assert!(remove_dir_released(
            &root.path().join("never-made"),
            std::time::Duration::ZERO
        ));
    }

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

    #[test]
    fn a_rewrite_keeps_the_mode_and_a_new_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let mode = |name: &str| {
            fs::metadata(dir.path().join(name))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        write_atomic(dir.path(), "new.json", b"{}").unwrap();
        assert_eq!(mode("new.json"), 0o600);
        fs::write(dir.path().join("kept.json"), b"{}").unwrap();
        fs::set_permissions(
            dir.path().join("kept.json"),
            fs::Permissions::from_mode(0o640),
        )
        .unwrap();
        write_atomic(dir.path(), "kept.json", b"{\"a\":1}").unwrap();
        assert_eq!(mode("kept.json"), 0o640);
    }
}
