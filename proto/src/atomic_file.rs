//! Files replaced whole: an [`AtomicFile`] is written beside its destination
//! and renamed over it once synced, so a reader, a crash or a failed write
//! leaves the old file or the whole new one, never a part of one.
//!
//! The worker's caches (blobs, speeds, build records), the CLI's stored
//! logins, certificates and exports write through it; the store's backup,
//! which SQLite writes itself, syncs its directory with [`sync_dir`].

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes buffered before a write reaches the part file.
const BUFFER_BYTES: usize = 256 << 10;

/// Distinguishes the part files of one process.
static PARTS: AtomicU64 = AtomicU64::new(0);

/// A new content for `dest`, written to a part file in `dest`'s directory
/// (`.NAME.PID-N.part`, so the rename never crosses file systems).
///
/// Invariant: until [`AtomicFile::commit`] returns `Ok`, `dest` is as it
/// was; dropped uncommitted (or after a failed commit), the part file is
/// removed.
#[derive(Debug)]
pub struct AtomicFile {
    dest: PathBuf,
    part: PathBuf,
    /// `Some` until [`AtomicFile::commit`], which consumes the value, takes
    /// it to close the file before the rename.
    out: Option<BufWriter<File>>,
    /// The part file was renamed over `dest`.
    committed: bool,
}

impl AtomicFile {
    /// Starts a new content for `dest`, created with the usual permissions
    /// (0666 less the umask on Unix). The directory must exist.
    pub fn create(dest: &Path) -> io::Result<AtomicFile> {
        AtomicFile::open(dest, OpenOptions::new())
    }

    /// [`AtomicFile::create`], readable and writable by the owner only
    /// (0600 on Unix) from the part file's first byte: for secrets.
    pub fn create_private(dest: &Path) -> io::Result<AtomicFile> {
        #[allow(unused_mut)]
        let mut options = OpenOptions::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        AtomicFile::open(dest, options)
    }

    fn open(dest: &Path, mut options: OpenOptions) -> io::Result<AtomicFile> {
        let name = dest.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} names no file", dest.display()),
            )
        })?;
        let dir = dest.parent().unwrap_or(Path::new(""));
        let mut part_name = std::ffi::OsString::from(".");
        part_name.push(name);
        part_name.push(format!(
            ".{}-{}.part",
            std::process::id(),
            PARTS.fetch_add(1, Ordering::Relaxed)
        ));
        let part = dir.join(part_name);
        let file = options.write(true).create_new(true).open(&part)?;
        Ok(AtomicFile {
            dest: dest.to_owned(),
            part,
            out: Some(BufWriter::with_capacity(BUFFER_BYTES, file)),
            committed: false,
        })
    }

    /// The file this content replaces.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Sets the new content's permissions (an executable's 0755, say).
    pub fn set_permissions(&mut self, permissions: Permissions) -> io::Result<()> {
        self.out().get_ref().set_permissions(permissions)
    }

    /// Flushes and syncs the content, then renames it over the destination
    /// (and syncs the directory entry where the platform can). On `Err` the
    /// destination is as it was.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self
            .out
            .take()
            .expect("open until commit")
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.part, &self.dest)?;
        self.committed = true;
        // Only Unix opens a directory to sync it; a file system that cannot
        // sync one keeps the rename all the same.
        #[cfg(unix)]
        let _ = sync_dir(&self.dest);
        Ok(())
    }

    fn out(&mut self) -> &mut BufWriter<File> {
        self.out.as_mut().expect("open until commit")
    }
}

/// Syncs the directory holding `path` (`.` for a bare name), so a rename or
/// a new file there survives a crash.
pub fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            self.out = None;
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

/// Replaces `dest` with `bytes` through an [`AtomicFile`].
pub fn write(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    fill(AtomicFile::create(dest)?, bytes)
}

/// [`write`] through [`AtomicFile::create_private`]: for secrets.
pub fn write_private(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    fill(AtomicFile::create_private(dest)?, bytes)
}

fn fill(mut file: AtomicFile, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xq-atomic-file-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_destination_changes_only_on_commit() {
        let dir = temp_dir("commit");
        let dest = dir.join("out.txt");
        std::fs::write(&dest, "old").unwrap();
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"new content").unwrap();
        file.flush().unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
        assert_eq!(
            names(&dir).len(),
            2,
            "the part sits beside: {:?}",
            names(&dir)
        );
        file.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new content");
        assert_eq!(names(&dir), ["out.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dropped_uncommitted_it_leaves_the_old_file_and_no_part() {
        let dir = temp_dir("drop");
        let dest = dir.join("out.txt");
        std::fs::write(&dest, "old").unwrap();
        {
            let mut file = AtomicFile::create(&dest).unwrap();
            file.write_all(&[7; BUFFER_BYTES * 3]).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
        assert_eq!(names(&dir), ["out.txt"]);
        {
            let _never = AtomicFile::create(&dir.join("new.txt")).unwrap();
        }
        assert_eq!(names(&dir), ["out.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_rename_keeps_the_destination_and_removes_the_part() {
        let dir = temp_dir("rename");
        let dest = dir.join("taken");
        std::fs::create_dir_all(dest.join("inside")).unwrap();
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"bytes").unwrap();
        assert!(file.commit().is_err(), "a full directory is not replaced");
        assert!(dest.join("inside").is_dir());
        assert_eq!(names(&dir), ["taken"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn write_replaces_and_a_path_without_a_name_is_refused() {
        let dir = temp_dir("write");
        let dest = dir.join("speeds.json");
        write(&dest, b"1").unwrap();
        write(&dest, b"22").unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "22");
        let e = AtomicFile::create(Path::new("/")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("names no file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn private_files_are_the_owners_from_the_first_byte() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("private");
        let dest = dir.join("credentials.toml");
        let mut file = AtomicFile::create_private(&dest).unwrap();
        file.write_all(b"token").unwrap();
        let part = dir.join(&names(&dir)[0]);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&part), 0o600);
        file.set_permissions(Permissions::from_mode(0o700)).unwrap();
        file.commit().unwrap();
        assert_eq!(mode(&dest), 0o700);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
