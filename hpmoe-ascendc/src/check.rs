//! Host syntax checks of generated kernels: `g++ -std=c++17 -fsyntax-only -Wall -Werror`
//! against the declaration-only AscendC + SHMEM headers of `devkit-decl/` and the shipped runtime
//! headers. What this can and cannot catch is in `devkit-decl/README.md`; it is how this
//! crate's tests check every generated kernel on a machine without a CANN toolkit.

use crate::error::ToolkitError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A syntax check of one C++ file.
#[derive(Clone, Debug)]
pub struct SyntaxCheck {
    compiler: String,
    includes: Vec<PathBuf>,
    defines: Vec<String>,
}

impl SyntaxCheck {
    /// `g++` with the declaration-only devkit headers and this crate's runtime headers on the
    /// include path.
    pub fn new() -> Self {
        SyntaxCheck {
            compiler: "g++".into(),
            includes: vec![
                crate::runtime::devkit_decl_dir().to_path_buf(),
                crate::runtime::source_include_dir().to_path_buf(),
            ],
            defines: Vec::new(),
        }
    }

    /// Uses another host compiler (`clang++`, a versioned `g++-12`).
    pub fn compiler(mut self, compiler: impl Into<String>) -> Self {
        self.compiler = compiler.into();
        self
    }

    /// Adds a folder to the include path (the generated kernel's folder, a user op header's).
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Self {
        self.includes.push(dir.into());
        self
    }

    /// Adds `-D<define>`.
    pub fn define(mut self, define: impl Into<String>) -> Self {
        self.defines.push(define.into());
        self
    }

    /// Whether the compiler can be run at all.
    pub fn available(&self) -> bool {
        Command::new(&self.compiler).arg("--version").output().is_ok_and(|o| o.status.success())
    }

    /// The command that checks `file`.
    pub fn command(&self, file: &Path) -> Command {
        let mut cmd = Command::new(&self.compiler);
        cmd.args(["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror"]);
        for dir in &self.includes {
            cmd.arg("-I").arg(dir);
        }
        for d in &self.defines {
            cmd.arg(format!("-D{d}"));
        }
        cmd.arg(file);
        cmd
    }

    /// Runs the check; a rejection holds the compiler's output.
    pub fn run(&self, file: &Path) -> Result<(), ToolkitError> {
        let compiler = PathBuf::from(&self.compiler);
        let out = self
            .command(file)
            .output()
            .map_err(|e| ToolkitError::CannotRun { compiler: compiler.clone(), reason: e.to_string() })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(ToolkitError::CompileFailed {
                compiler,
                source: file.to_path_buf(),
                output: format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
            })
        }
    }
}

impl Default for SyntaxCheck {
    fn default() -> Self {
        Self::new()
    }
}

/// The declaration CANN's kernel build generates for launching kernel `name` from the host
/// (`aclrtlaunch_NAME.h`: `ACLRT_LAUNCH_KERNEL(NAME)(blockDim, stream, args...)`), with
/// `kernel_args` pointer arguments. Write it beside a generated `NAME_launch.cpp` to check the
/// launcher's NPU build with [`SyntaxCheck`]; with a toolkit, the real one is generated instead.
pub fn aclrtlaunch_decl(name: &str, kernel_args: usize) -> String {
    let params: Vec<String> = (0..kernel_args).map(|i| format!("void* arg{i}")).collect();
    format!(
        "/* Declaration-only stand-in for the launch header CANN generates for kernel `{name}`. */\n\
         #ifndef HPMOE_DECL_ACLRTLAUNCH_{upper}_H\n\
         #define HPMOE_DECL_ACLRTLAUNCH_{upper}_H\n\
         #include <cstdint>\n\
         #include \"acl/acl.h\"\n\
         #ifndef ACLRT_LAUNCH_KERNEL\n\
         #define ACLRT_LAUNCH_KERNEL(kernel) aclrtlaunch_##kernel\n\
         #endif\n\
         extern \"C\" uint32_t aclrtlaunch_{name}(uint32_t blockDim, aclrtStream stream, {params});\n\
         #endif\n",
        upper = name.to_ascii_uppercase(),
        params = params.join(", ")
    )
}
