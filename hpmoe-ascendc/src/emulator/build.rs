//! Compiling a kernel and its launcher against the CPU emulation, with a cache keyed by content.
//!
//! Two steps, each cached under the cache folder by a hash of everything that goes into it:
//! the emulator's own sources (`emulator/src/*.cpp`) into an archive, once per emulator version
//! and compiler; then the kernel (`NAME.cpp`) and its launcher (`NAME_launch.cpp`) with the runtime
//! headers and the user's headers, linked with that archive into `NAME_launch`. The table and flag
//! plan are read at run time, so a test that feeds another table reuses the binary.

use super::EmulateError;
use super::KernelSources;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Flags every emulated translation unit is compiled with. `-ffp-contract=off`: no fused
/// multiply-add, so float arithmetic is the one the sources spell, as the host reference's is.
pub const CXX_FLAGS: [&str; 6] = ["-std=c++17", "-O1", "-g0", "-pthread", "-ffp-contract=off", "-DHPMOE_EMULATOR"];

/// The emulator's sources in this crate (`emulator/`).
pub fn emulator_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/emulator"))
}

/// A stable 64-bit content hash, as 16 hex digits (for cache folder names).
pub(crate) fn digest(parts: &[&[u8]]) -> String {
    // DefaultHasher's algorithm is fixed for a given Rust release; the cache only has to be
    // consistent within one toolchain, and every key also names what it covers.
    let mut h = DefaultHasher::new();
    for p in parts {
        p.len().hash(&mut h);
        p.hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Every file under `dir` with one of `extensions`, sorted, as (relative path, contents).
fn sources(dir: &Path, extensions: &[&str]) -> Result<Vec<(PathBuf, Vec<u8>)>, EmulateError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| EmulateError::io(&d, e))?;
        for e in entries {
            let e = e.map_err(|e| EmulateError::io(&d, e))?;
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().and_then(|x| x.to_str()).is_some_and(|x| extensions.contains(&x)) {
                let bytes = std::fs::read(&path).map_err(|e| EmulateError::io(&path, e))?;
                out.push((path.strip_prefix(dir).unwrap_or(&path).to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn run(cmd: &mut Command) -> Result<(), EmulateError> {
    let shown = format!("{cmd:?}");
    let out =
        cmd.output().map_err(|e| EmulateError::NoCompiler { command: shown.clone(), error: std::sync::Arc::new(e) })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(EmulateError::Compile {
            command: shown,
            output: format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        })
    }
}

/// Publishes `tmp` as `done` (a folder), unless another process got there first.
fn publish(tmp: &Path, done: &Path) -> Result<(), EmulateError> {
    match std::fs::rename(tmp, done) {
        Ok(()) => Ok(()),
        Err(_) if done.exists() => {
            let _ = std::fs::remove_dir_all(tmp);
            Ok(())
        }
        Err(e) => Err(EmulateError::io(done, e)),
    }
}

/// Holds an exclusive lock on `done`'s lock file while alive: concurrent test processes wait for
/// one build of a shared archive or binary instead of all compiling it (2 cores in CI).
struct BuildLock(#[allow(dead_code)] std::fs::File);

fn lock(done: &Path) -> Result<BuildLock, EmulateError> {
    let path = done.with_extension("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| EmulateError::io(&path, e))?;
    file.lock().map_err(|e| EmulateError::io(&path, e))?;
    Ok(BuildLock(file))
}

/// A private scratch folder next to `done`.
fn scratch(done: &Path) -> Result<PathBuf, EmulateError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let tmp = done.with_extension(format!("tmp{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| EmulateError::io(&tmp, e))?;
    Ok(tmp)
}

/// The emulator archive (`libhpmoe_emu.a`) for `compiler`, built on first use.
pub(crate) fn emulator_archive(cache: &Path, compiler: &str) -> Result<PathBuf, EmulateError> {
    let dir = emulator_dir();
    let headers = sources(&dir.join("include"), &["h", "hpp"])?;
    let units = sources(&dir.join("src"), &["cpp", "h"])?;
    let mut key: Vec<&[u8]> = vec![compiler.as_bytes()];
    key.extend(CXX_FLAGS.iter().map(|f| f.as_bytes()));
    for (p, b) in headers.iter().chain(&units) {
        key.push(p.as_os_str().as_encoded_bytes());
        key.push(b);
    }
    let done = cache.join(format!("emu-{}", digest(&key)));
    let archive = done.join("libhpmoe_emu.a");
    let _lock = lock(&done)?;
    if archive.exists() {
        return Ok(archive);
    }
    let tmp = scratch(&done)?;
    let mut objects = Vec::new();
    for (rel, _) in units.iter().filter(|(p, _)| p.extension().is_some_and(|x| x == "cpp")) {
        let obj = tmp.join(rel.with_extension("o").file_name().expect("a file name"));
        run(Command::new(compiler)
            .args(CXX_FLAGS)
            .arg("-I")
            .arg(dir.join("include"))
            .arg("-c")
            .arg(dir.join("src").join(rel))
            .arg("-o")
            .arg(&obj))?;
        objects.push(obj);
    }
    run(Command::new("ar").arg("rcs").arg(tmp.join("libhpmoe_emu.a")).args(&objects))?;
    publish(&tmp, &done)?;
    Ok(archive)
}

/// `options.defines`, plus the kernel's wait bound ([`super::EmulateOptions::kernel_wait_timeout_us`])
/// unless they set it.
fn with_wait_bound(kernel: &KernelSources, options: &super::EmulateOptions) -> Vec<String> {
    let mut defines = options.defines.clone();
    let constant = kernel.header.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix("#define ")?;
        let word = rest.split_whitespace().next()?;
        word.ends_with("_WAIT_TIMEOUT_US").then(|| word.to_string())
    });
    if let (Some(us), Some(constant)) = (options.kernel_wait_timeout_us, constant)
        && !defines.iter().any(|d| d.starts_with(&format!("{constant}=")) || *d == constant)
    {
        defines.push(format!("{constant}={us}u"));
    }
    defines
}

/// The launcher binary of `kernel`, built on first use; the kernel folder holds its sources.
pub(crate) fn launcher_binary(
    cache: &Path,
    options: &super::EmulateOptions,
    kernel: &KernelSources,
) -> Result<PathBuf, EmulateError> {
    let (compiler, include_dirs) = (options.compiler.as_str(), &options.include_dirs);
    let defines = &with_wait_bound(kernel, options);
    let archive = emulator_archive(cache, compiler)?;
    let mut key: Vec<&[u8]> = vec![compiler.as_bytes(), archive.as_os_str().as_encoded_bytes()];
    key.extend(CXX_FLAGS.iter().map(|f| f.as_bytes()));
    key.extend([kernel.cpp.as_bytes(), kernel.header.as_bytes(), kernel.launcher.as_bytes()]);
    key.extend(defines.iter().map(|d| d.as_bytes()));
    key.extend(crate::runtime::RUNTIME_HEADERS.iter().chain(crate::runtime::HOST_HEADERS).map(|(_, t)| t.as_bytes()));
    for (path, text) in &options.runtime_overrides {
        key.extend([path.as_bytes(), text.as_bytes()]);
    }
    let mut user_headers = Vec::new();
    for d in include_dirs {
        user_headers.extend(sources(d, &["h", "hpp"])?);
    }
    for (p, b) in &user_headers {
        key.push(p.as_os_str().as_encoded_bytes());
        key.push(b);
    }
    let done = cache.join(format!("{}-{}", kernel.name, digest(&key)));
    let binary = done.join(format!("{}_launch", kernel.name));
    let _lock = lock(&done)?;
    if binary.exists() {
        return Ok(binary);
    }
    let tmp = scratch(&done)?;
    for (name, bytes) in kernel.files() {
        std::fs::write(tmp.join(&name), bytes).map_err(|e| EmulateError::io(&tmp.join(&name), e))?;
    }
    crate::runtime::write_runtime(&tmp.join("include")).map_err(|e| EmulateError::io(&tmp, e))?;
    for (path, text) in &options.runtime_overrides {
        let file = tmp.join("include").join(path);
        std::fs::write(&file, text).map_err(|e| EmulateError::io(&file, e))?;
    }
    let mut cmd = Command::new(compiler);
    cmd.args(CXX_FLAGS)
        .arg("-I")
        .arg(emulator_dir().join("include"))
        .arg("-I")
        .arg(&tmp)
        .arg("-I")
        .arg(tmp.join("include"));
    for d in include_dirs {
        cmd.arg("-I").arg(d);
    }
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    cmd.arg(tmp.join(format!("{}.cpp", kernel.name)))
        .arg(tmp.join(format!("{}_launch.cpp", kernel.name)))
        .arg(&archive)
        .arg("-o")
        .arg(tmp.join(format!("{}_launch", kernel.name)));
    run(&mut cmd)?;
    publish(&tmp, &done)?;
    Ok(binary)
}
