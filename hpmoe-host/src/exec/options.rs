//! How a run behaves: time limits, spinning, memory and thread limits, and the two hooks
//! tests use to perturb a run (a per-tile hook for delays or panics, and dropped signals).

use hpmoe_core::ids::{CoreId, NodeId, RankId};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The tile a worker is about to run, as the [`RunOptions::tile_hook`] sees it.
#[derive(Clone, Copy, Debug)]
pub struct TileInfo<'a> {
    /// Global node id (`rank * instances_per_rank + local`).
    pub node: NodeId,
    /// The rank the tile instance runs on (`node / instances_per_rank`).
    pub rank: RankId,
    /// Global core id running it.
    pub core: CoreId,
    /// The tile family's name.
    pub family: &'a str,
    /// Grid coordinates.
    pub coords: &'a [u64],
}

/// Called on the worker's thread before each tile's guard and ops (so for guarded tiles that
/// skip their body too); a panic in it counts as the tile's.
pub type TileHook = Arc<dyn Fn(&TileInfo<'_>) + Send + Sync>;

/// Options of one run of the [`Executor`](super::Executor).
#[derive(Clone)]
pub struct RunOptions {
    /// Longest a wait may last, and longest a tile may run, before the run stops with an
    /// error. After a stop, workers get this long again to finish the tile they are in;
    /// threads still busy after that are abandoned (named in the error), so no join is
    /// unbounded. Default 5 s.
    pub timeout: Duration,
    /// Spin iterations of a wait before its thread parks. Default 64.
    pub spin: u32,
    /// Run before every tile, on its worker: inject delays (sleep) or faults (panic).
    pub tile_hook: Option<TileHook>,
    /// Fault injection: these nodes run, but never send their signals.
    pub drop_signals_of: Vec<NodeId>,
    /// Refuse to start a run whose tensors (all ranks) need more host memory than this.
    /// Default 4 GiB.
    pub max_host_bytes: u64,
    /// Stack size of each worker thread. Default 1 MiB.
    pub stack_bytes: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: Duration::from_secs(5),
            spin: 64,
            tile_hook: None,
            drop_signals_of: Vec::new(),
            max_host_bytes: 4 << 30,
            stack_bytes: 1 << 20,
        }
    }
}

impl RunOptions {
    /// Sets [`RunOptions::timeout`].
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets [`RunOptions::tile_hook`], replacing any hook set before.
    pub fn with_tile_hook(mut self, hook: impl Fn(&TileInfo<'_>) + Send + Sync + 'static) -> Self {
        self.tile_hook = Some(Arc::new(hook));
        self
    }

    /// Adds `node` (a global node id) to [`RunOptions::drop_signals_of`]: it runs but never
    /// signals, so whoever waits on it times out (fault injection for the executor's own tests).
    pub fn dropping_signals_of(mut self, node: NodeId) -> Self {
        self.drop_signals_of.push(node);
        self
    }
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("timeout", &self.timeout)
            .field("spin", &self.spin)
            .field("tile_hook", &self.tile_hook.as_ref().map(|_| "set"))
            .field("drop_signals_of", &self.drop_signals_of)
            .field("max_host_bytes", &self.max_host_bytes)
            .field("stack_bytes", &self.stack_bytes)
            .finish()
    }
}
