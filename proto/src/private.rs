//! Files and folders only their owner may read or enter: created that way
//! from the start (0600 and 0700 on Unix), so no other user of a shared host
//! sees them even for a moment. Elsewhere the platform's defaults hold.
//!
//! The coordinator's database and backups (password, token and session
//! hashes, uploaded engines) and the worker's caches (the engines it runs)
//! are made with these; secrets written whole go through
//! [`crate::atomic_file::write_private`].

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::path::Path;

/// Creates `path` empty, readable and writable by its owner only, unless it
/// exists (then it is left as it is): whether it was created.
pub fn create_file_if_missing(path: &Path) -> io::Result<bool> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Creates `dir` and its missing parents, each new one open to its owner
/// only; folders that exist are left as they are.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// The permission bits (of 0o077) that let users other than the owner at
/// `path`; 0 where the platform has no such bits or `path` cannot be read.
pub fn open_to_others(path: &Path) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).map_or(0, |m| m.permissions().mode() & 0o077)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        0
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn files_and_folders_are_made_private_and_existing_ones_left_alone() {
        let root = std::env::temp_dir().join(format!("xq-private-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("a/b");
        create_dir_all(&dir).unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&dir), 0o700);
        let file = dir.join("db");
        assert!(create_file_if_missing(&file).unwrap());
        assert_eq!(mode(&file), 0o600);
        assert_eq!(open_to_others(&file), 0);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&file, "kept").unwrap();
        assert!(!create_file_if_missing(&file).unwrap());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept");
        assert_eq!(open_to_others(&file), 0o044);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
