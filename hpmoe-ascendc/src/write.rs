//! Writing generated files without touching the ones that did not change, so that a build
//! which regenerates identical kernels does not make anything downstream rebuild.

use std::io;
use std::path::{Path, PathBuf};

/// What [`write_if_changed`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The file did not exist or differed; it now holds the new content.
    Written(PathBuf),
    /// The file already held exactly this content; it was not touched.
    Unchanged(PathBuf),
}

impl WriteOutcome {
    /// The file written or left alone.
    pub fn path(&self) -> &Path {
        match self {
            WriteOutcome::Written(p) | WriteOutcome::Unchanged(p) => p,
        }
    }

    /// Whether the file's content changed (so that whatever reads it must rebuild).
    pub fn was_written(&self) -> bool {
        matches!(self, WriteOutcome::Written(_))
    }
}

/// Writes `content` to `path` (creating parent folders) unless the file already holds exactly
/// that content. The new content goes to a temporary file in the same folder first and is then
/// renamed over the old one, so a reader never sees half a file.
pub fn write_if_changed(path: &Path, content: &[u8]) -> io::Result<WriteOutcome> {
    if let Ok(existing) = std::fs::read(path)
        && existing == content
    {
        return Ok(WriteOutcome::Unchanged(path.to_path_buf()));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Unique per process and per call: two threads writing the same path must not share one.
    static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let write = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_file_name(format!(".{file_name}.tmp{}-{write}", std::process::id()));
    std::fs::write(&tmp, content)?;
    std::fs::rename(&tmp, path)?;
    Ok(WriteOutcome::Written(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_only_changed_content() {
        let dir = std::env::temp_dir().join(format!("hpmoe-write-{}", std::process::id()));
        let path = dir.join("sub/a.txt");
        assert!(write_if_changed(&path, b"one").unwrap().was_written());
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(write_if_changed(&path, b"one").unwrap(), WriteOutcome::Unchanged(path.clone()));
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified, "untouched");
        assert!(write_if_changed(&path, b"two").unwrap().was_written());
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let leftovers: Vec<_> = std::fs::read_dir(dir.join("sub")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
