//! The files an emulated run reads and writes: every tensor of every rank as raw little-endian
//! elements (`rankR/NAME.bin`), the way the generated launcher expects them.

use super::{EmulateError, InputProblem};
use hpmoe_core::model::{DType, Taskflow, TensorDecl, TensorKind};
use hpmoe_host::exec::tensor::poison;
use hpmoe_host::exec::{HostTensor, Inputs};
use std::path::{Path, PathBuf};

/// A run's private folder (inputs, outputs, blobs), removed when dropped.
#[derive(Debug)]
pub(crate) struct RunDir(PathBuf);

impl RunDir {
    pub(crate) fn new(cache: &Path, kernel: &str) -> Result<RunDir, EmulateError> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let dir = cache.join("runs").join(format!("{kernel}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| EmulateError::io(&dir, e))?;
        Ok(RunDir(dir))
    }
    pub(crate) fn root(&self) -> &Path {
        &self.0
    }
    pub(crate) fn data(&self) -> PathBuf {
        self.0.join("data")
    }
    pub(crate) fn out(&self) -> PathBuf {
        self.0.join("out")
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if std::env::var_os("HPMOE_EMU_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The bytes of a tensor, little-endian, `size_bytes` per element.
pub(crate) fn to_bytes(t: &HostTensor) -> Vec<u8> {
    let size = t.dtype().size_bytes() as usize;
    let mut out = Vec::with_capacity(t.len() * size);
    for &b in t.bits() {
        out.extend_from_slice(&b.to_le_bytes()[..size]);
    }
    out
}

/// A tensor from its little-endian bytes.
pub(crate) fn from_bytes(dtype: DType, shape: &[u64], bytes: &[u8]) -> Option<HostTensor> {
    let size = dtype.size_bytes() as usize;
    let n = hpmoe_host::exec::tensor::element_count(shape)?;
    if bytes.len() != n * size {
        return None;
    }
    let bits = bytes
        .chunks_exact(size)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..size].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect();
    Some(HostTensor::from_bits(dtype, shape, bits))
}

/// The starting contents of tensor `decl` on `rank`: the input's data, or poison (as the host
/// executor starts them, so results compare bit for bit even where nothing writes).
fn initial(decl: &TensorDecl, rank: u32, inputs: &Inputs) -> Result<Vec<u8>, EmulateError> {
    if decl.kind == TensorKind::Input {
        let t = inputs
            .get(&decl.name, rank)
            .ok_or_else(|| EmulateError::Input(InputProblem::Missing { tensor: decl.name.clone(), rank }))?;
        if t.dtype() != decl.dtype || t.shape() != decl.shape.as_slice() {
            return Err(EmulateError::Input(InputProblem::Shape {
                tensor: decl.name.clone(),
                rank,
                got: (t.dtype(), t.shape().to_vec()),
                declared: (decl.dtype, decl.shape.to_vec()),
            }));
        }
        return Ok(to_bytes(t));
    }
    let n = hpmoe_host::exec::tensor::element_count(&decl.shape)
        .ok_or_else(|| EmulateError::Input(InputProblem::TooLarge { tensor: decl.name.clone() }))?;
    let size = decl.dtype.size_bytes() as usize;
    let cell = poison(decl.dtype).to_le_bytes();
    Ok(cell[..size].repeat(n))
}

/// Writes every tensor of every rank under `dir/rankR/`.
pub(crate) fn write_tensors(dir: &Path, tf: &Taskflow, inputs: &Inputs) -> Result<(), EmulateError> {
    for rank in 0..tf.profile.ranks {
        let rd = dir.join(format!("rank{rank}"));
        std::fs::create_dir_all(&rd).map_err(|e| EmulateError::io(&rd, e))?;
        for decl in &tf.tensors {
            let path = rd.join(format!("{}.bin", decl.name));
            std::fs::write(&path, initial(decl, rank, inputs)?).map_err(|e| EmulateError::io(&path, e))?;
        }
    }
    Ok(())
}

/// Reads every tensor of every rank back from `dir/rankR/`.
pub(crate) fn read_tensors(dir: &Path, tf: &Taskflow) -> Result<Vec<Vec<HostTensor>>, EmulateError> {
    (0..tf.profile.ranks)
        .map(|rank| {
            tf.tensors
                .iter()
                .map(|decl| {
                    let path = dir.join(format!("rank{rank}")).join(format!("{}.bin", decl.name));
                    let bytes = std::fs::read(&path).map_err(|e| EmulateError::io(&path, e))?;
                    from_bytes(decl.dtype, &decl.shape, &bytes).ok_or_else(|| EmulateError::TensorFile {
                        path: path.clone(),
                        bytes: bytes.len(),
                        tensor: decl.name.clone(),
                    })
                })
                .collect()
        })
        .collect()
}
