//! Private files in a private directory: a directory is checked to be the user's own and closed
//! to others; files are opened without following a link (`O_NOFOLLOW`), created mode 0600 and,
//! when new, created exclusively (`O_EXCL`, or a temporary file linked or renamed into place).
//! This module opens, creates and checks; it must not decide what the files hold.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Mode of every file Reticle creates for itself.
pub const FILE_MODE: u32 = 0o600;
/// Mode of a directory Reticle creates for itself.
pub const DIR_MODE: u32 = 0o700;

/// The id of the user this process acts as.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { nix::libc::geteuid() }
}

/// Why an existing directory cannot hold private files, as a sentence naming it and the fix;
/// `None` when it is a directory owned by this user that no one else can write to.
pub fn directory_problem(dir: &Path) -> Option<String> {
    let meta = match fs::metadata(dir) {
        Ok(meta) => meta,
        Err(err) => return Some(format!("{} cannot be read: {err}", dir.display())),
    };
    if !meta.is_dir() {
        return Some(format!("{} exists and is not a directory", dir.display()));
    }
    if meta.uid() != effective_uid() {
        return Some(format!(
            "{} is owned by uid {}, not by you (uid {}): another user could read or replace what Reticle keeps there; use a directory of your own",
            dir.display(),
            meta.uid(),
            effective_uid()
        ));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o022 != 0 {
        return Some(format!(
            "{} is writable by other users (mode {mode:o}): they could plant files or links there; run `chmod 700 {}`",
            dir.display(),
            dir.display()
        ));
    }
    None
}

/// The links directly inside `dir` (Reticle's own files are never links).
pub fn links_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .map(|e| e.path())
        .collect()
}

fn options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(FILE_MODE).custom_flags(nix::libc::O_NOFOLLOW);
    options
}

/// Names a link where a private file was expected, so the error says what to remove.
fn named(path: &Path, err: io::Error) -> io::Error {
    if err.raw_os_error() == Some(nix::libc::ELOOP) {
        io::Error::new(
            err.kind(),
            format!(
                "{} is a symbolic link, and Reticle does not follow links to its own files: remove it",
                path.display()
            ),
        )
    } else {
        err
    }
}

/// Opens `path` for appending, creating it 0600; never through a link.
pub fn open_append(path: &Path) -> io::Result<File> {
    options()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| named(path, e))
}

/// Opens `path` for reading and writing, creating it 0600 (never truncating); never through a
/// link.
pub fn open_read_write(path: &Path) -> io::Result<File> {
    options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| named(path, e))
}

/// Opens an existing `path` for reading; never through a link.
pub fn open_read(path: &Path) -> io::Result<File> {
    options().read(true).open(path).map_err(|e| named(path, e))
}

/// Reads an existing `path` as text; never through a link.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let mut text = String::new();
    io::Read::read_to_string(&mut open_read(path)?, &mut text)?;
    Ok(text)
}

/// A fresh temporary file beside `path`, created exclusively 0600: its path and the open file.
fn temporary_beside(path: &Path) -> io::Result<(PathBuf, File)> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(io::Error::other)?;
    let suffix: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
    let temp = dir.join(format!(".{name}.{suffix}.tmp"));
    let file = options().write(true).create_new(true).open(&temp)?;
    Ok((temp, file))
}

/// Replaces `path` with a new 0600 file holding `bytes`: written to an exclusive temporary file
/// and renamed over it, so a link planted at `path` is replaced, never followed.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    super::off_the_runtime(|| replace_here(path, bytes))
}

fn replace_here(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (temp, mut file) = temporary_beside(path)?;
    let result = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&temp, path));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Creates `path` holding `bytes`, 0600, only if nothing is there: the whole content appears at
/// once (a temporary file hard-linked into place, which never replaces). `Ok(false)` when
/// something already was there, and then it is left as it was.
pub fn create_once(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    super::off_the_runtime(|| create_once_here(path, bytes))
}

fn create_once_here(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    let (temp, mut file) = temporary_beside(path)?;
    let linked = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::hard_link(&temp, path));
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(err),
    }
}

/// Makes an open file readable and writable by its owner only; the mode it had before when it
/// was open to others, else `None`.
pub fn tighten(file: &File) -> io::Result<Option<u32>> {
    let mode = file.metadata()?.permissions().mode() & 0o777;
    if mode & 0o077 == 0 {
        return Ok(None);
    }
    file.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
    Ok(Some(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_never_followed_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "kept").unwrap();
        let link = dir.path().join("daemon.log");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let err = open_append(&link).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(read_to_string(&link).is_err());
        assert_eq!(links_in(dir.path()), vec![link.clone()]);
        replace(&link, b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "kept");
        assert!(
            !fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(mode(&link), FILE_MODE);
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn create_once_never_replaces_and_tighten_says_what_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        assert!(create_once(&path, b"first").unwrap());
        assert!(!create_once(&path, b"second").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "first");
        assert_eq!(mode(&path), FILE_MODE);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(tighten(&open_read(&path).unwrap()).unwrap(), Some(0o644));
        assert_eq!(mode(&path), FILE_MODE);
        assert_eq!(tighten(&open_read(&path).unwrap()).unwrap(), None);
    }

    #[test]
    fn a_directory_open_to_others_is_named_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(directory_problem(dir.path()), None);
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let problem = directory_problem(dir.path()).unwrap();
        assert!(problem.contains("chmod 700"), "{problem}");
        assert!(
            problem.contains(&dir.path().display().to_string()),
            "{problem}"
        );
    }
}
