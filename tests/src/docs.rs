//! The workspace's own documents, for the tests that check them against
//! the files and the binaries.

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_owned()
}

/// The Markdown files below `dir`, sorted, outside `target/`, hidden
/// folders and the folders named in `skip`.
pub fn markdown_files(dir: &Path, skip: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, skip: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && !skip.contains(&name.as_str()) {
                    walk(&path, skip, out);
                }
            } else if name.ends_with(".md") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, skip, &mut out);
    out.sort();
    out
}
