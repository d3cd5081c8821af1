//! The large byte blobs a program embeds (its schedule table, its flag plan), in the form that
//! costs rustc least.
//!
//! A byte-string literal of a table of megabytes is several times its size in escaped text,
//! which the proc-macro bridge carries and rustc's lexer unescapes again. So a blob of at least
//! [`FILE_MIN_BYTES`] is written to a file in the build's output directory (rustc's `--out-dir`,
//! which cargo always passes: `target/<profile>/deps` or `…/examples`) and embedded with
//! `include_bytes!`. The file is named by the blob's contents (a 64-bit FNV-1a hash and the
//! length) and, if it exists, read back and compared before it is used, so a stale or damaged
//! file is replaced rather than trusted; it is written under a temporary name and renamed, so
//! builds running side by side never see half a file. rustc lists it among the crate's inputs,
//! so cargo rebuilds the crate if it disappears (after `cargo clean`, say), and a clean clone
//! needs nothing beforehand: the macro writes the file before rustc reads it.
//!
//! Without an output directory (rustc run by hand, an IDE's proc-macro server, this crate's
//! own tests), or if the file cannot be written, the blob is a literal as before: the embedded
//! bytes are the same either way.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Blobs this large or larger go to a file; smaller ones stay literals.
pub const FILE_MIN_BYTES: usize = 64 * 1024;

/// An expression of type `&'static [u8; N]` (coerced to `&[u8]` where it is used) holding
/// `bytes`: `include_bytes!` of a content-named file in rustc's output directory, or a literal.
pub fn embed(bytes: &[u8]) -> TokenStream {
    embed_in(bytes, rustc_out_dir().as_deref())
}

/// [`embed`] with the output directory given (`None`: always a literal).
fn embed_in(bytes: &[u8], out_dir: Option<&Path>) -> TokenStream {
    if bytes.len() >= FILE_MIN_BYTES
        && let Some(dir) = out_dir
        && let Ok(path) = write_blob(&dir.join("hpmoe-blobs"), bytes)
        && let Some(path) = path.to_str()
    {
        return quote!(::core::include_bytes!(#path));
    }
    let literal = Literal::byte_string(bytes);
    quote!(#literal)
}

/// The `--out-dir` of the rustc running this macro, made absolute (`include_bytes!` resolves a
/// relative path against the source file, not rustc's working directory).
fn rustc_out_dir() -> Option<PathBuf> {
    let mut args = std::env::args_os();
    while let Some(arg) = args.next() {
        let dir = if arg == "--out-dir" {
            args.next()?
        } else if let Some(dir) = arg.to_str().and_then(|a| a.strip_prefix("--out-dir=")) {
            dir.into()
        } else {
            continue;
        };
        return std::path::absolute(dir).ok();
    }
    None
}

/// Writes `bytes` to `dir/<hash>-<len>.bin` unless that file already holds exactly `bytes`;
/// returns its path.
fn write_blob(dir: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let path = dir.join(format!("{:016x}-{}.bin", fnv1a(bytes), bytes.len()));
    if fs::read(&path).is_ok_and(|old| old == bytes) {
        return Ok(path);
    }
    fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{:016x}-{}.{}.tmp", fnv1a(bytes), bytes.len(), std::process::id()));
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, &path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })?;
    Ok(path)
}

/// The 64-bit FNV-1a hash of `bytes`: names a blob's file (the contents are compared anyway).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh, empty directory under the system's temporary one, removed on drop.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("hpmoe-blob-test-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn big(seed: u8) -> Vec<u8> {
        (0..FILE_MIN_BYTES + 3).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
    }

    /// The path an `include_bytes!(..)` expansion names.
    fn included(tokens: &TokenStream) -> PathBuf {
        let text = tokens.to_string();
        let start = text.find("include_bytes ! (\"").expect("include_bytes!") + "include_bytes ! (\"".len();
        PathBuf::from(&text[start..text.rfind("\")").unwrap()])
    }

    #[test]
    fn small_blobs_and_builds_without_an_output_directory_get_literals() {
        let dir = TempDir::new("small");
        assert_eq!(embed_in(b"\x01a", Some(&dir.0)).to_string(), "b\"\\x01a\"");
        assert!(!embed_in(&big(0), None).to_string().contains("include_bytes"));
        assert!(!dir.0.join("hpmoe-blobs").exists());
    }

    #[test]
    fn a_large_blob_is_included_from_a_file_named_by_its_contents() {
        let dir = TempDir::new("large");
        let (a, b) = (big(0), big(1));
        let path_a = included(&embed_in(&a, Some(&dir.0)));
        assert_eq!(fs::read(&path_a).unwrap(), a);
        assert!(path_a.is_absolute() && path_a.starts_with(dir.0.join("hpmoe-blobs")));
        // Other contents, another file; the same contents, the same file, left as it was.
        let path_b = included(&embed_in(&b, Some(&dir.0)));
        assert_ne!(path_a, path_b);
        assert_eq!(fs::read(&path_b).unwrap(), b);
        let written = fs::metadata(&path_a).unwrap().modified().unwrap();
        assert_eq!(included(&embed_in(&a, Some(&dir.0))), path_a);
        assert_eq!(fs::metadata(&path_a).unwrap().modified().unwrap(), written);
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(dir.0.join("hpmoe-blobs")).unwrap().count(), 2);
    }

    #[test]
    fn a_stale_or_damaged_file_of_the_same_name_is_replaced() {
        let dir = TempDir::new("stale");
        let blob = big(2);
        let path = included(&embed_in(&blob, Some(&dir.0)));
        let mut damaged = blob.clone();
        damaged[7] ^= 1;
        fs::write(&path, &damaged).unwrap();
        assert_eq!(included(&embed_in(&blob, Some(&dir.0))), path);
        assert_eq!(fs::read(&path).unwrap(), blob);
    }

    #[test]
    fn an_unwritable_output_directory_falls_back_to_a_literal() {
        let dir = TempDir::new("unwritable");
        // A file where the blob directory should be: it cannot be created.
        fs::write(dir.0.join("hpmoe-blobs"), b"in the way").unwrap();
        let blob = big(3);
        let tokens = embed_in(&blob, Some(&dir.0));
        assert_eq!(tokens.to_string(), Literal::byte_string(&blob).to_string());
    }

    #[test]
    fn fnv1a_matches_its_reference_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
