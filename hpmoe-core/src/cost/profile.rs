//! Machine cost profiles: the rates and latencies of one die, each a named field with its
//! source, loadable and overridable from TOML or JSON.
//!
//! Source markers follow `hardware.md`: \[S\] stated by the named source, \[D\] derived from
//! stated figures, \[U\] an unverified guess. [`GUESSES`] lists every field that is a guess
//! (or a weak or bounded figure) with the range the sensitivity study sweeps.
//!
//! Topology (how many cores and ranks) is not here: it is [`crate::model::MachineProfile`].

use serde::{Deserialize, Serialize};
use std::path::Path;

pub use super::profile_error::ProfileError;
use std::sync::Arc;

/// Rates, latencies and overheads of one die, in natural units. See the [module docs](self).
///
/// All figures are per core unless the name says otherwise. Times are in ns, rates in
/// bytes or FLOP per cycle (scaled by [`clock_ghz`](Self::clock_ghz)) or GB/s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostProfile {
    /// Name, for reports.
    pub name: String,
    /// Core clock, GHz.
    /// 910B: 1.8 \[S\] (CANN platform file). A3: 1.85 \[S\] (CloudMatrix384 paper, measured die).
    pub clock_ghz: f64,
    /// Peak BF16 FLOP per cycle of one AIC. \[S\] cube 16×16×16 = 4096 MAC/cycle × 2
    /// (≈14.75 TFLOP/s at 1.8 GHz; the A3 die's ≈15.2 TFLOP/s at 1.85 GHz is consistent \[D\]).
    pub cube_flops_per_cycle: f64,
    /// Fraction of the cube's peak a matmul tile sustains (pipeline fill, L1→L0 staging,
    /// tails). \[U\] 0.8; swept 0.5–1.0.
    pub cube_efficiency: f64,
    /// FLOP per cycle of one AIV. \[U\] one 256-byte repeat (128 BF16 lanes) per cycle.
    pub vector_flops_per_cycle: f64,
    /// Bytes per cycle one core reads from global memory when the data is not in L2 (HBM).
    /// \[S\] 32 (CANN platform file); 32 B × 24 cores × 1.8 GHz ≈ 1.38 TB/s, consistent
    /// with the die's ≈1.6 TB/s HBM \[U\].
    pub gm_read_bytes_per_cycle: f64,
    /// Bytes per cycle one core reads when the data is in L2. \[S\] 110.
    pub l2_read_bytes_per_cycle: f64,
    /// Bytes per cycle an AIC writes to global memory (through L2). \[S\] L2 write 86.
    pub aic_write_bytes_per_cycle: f64,
    /// Bytes per cycle an AIV writes to global memory. \[S\] UB→GM 64.
    pub aiv_write_bytes_per_cycle: f64,
    /// Fraction of L2-eligible reads that hit L2: re-reads of an operand that other
    /// instances of the same family also read, and reads of data written earlier in the
    /// kernel on the same rank (see [`crate::cost::FamilyTraffic`]). \[U\] 0.9; swept 0.5–1.0.
    pub l2_hit_rate: f64,
    /// Latency of a global-memory read, cycles. \[S\] ≈300 (public Ascend cost models).
    /// Charged once per counter wait: the poll that sees the counter reach its target.
    pub gm_read_latency_cycles: f64,
    /// Latency of a global-memory write, cycles. \[S\] ≈150. Charged on the signalling core
    /// per signal (an atomic add), after which the signal is visible on its own rank.
    pub gm_write_latency_cycles: f64,
    /// Fixed cost of one tile instance: reading its table entry, setting up its ops and
    /// their first DMA. \[U\] 500 ns (one global-memory read alone is ≈170 ns \[S\]); swept
    /// 100–2000.
    pub tile_overhead_ns: f64,
    /// One-way bandwidth a die injects into the network, GB/s: every put to another die
    /// shares it (a put to the die itself is a local copy). \[F\] fitted, with
    /// [`cross_server_gb_per_s`](Self::cross_server_gb_per_s), to the measured A3 dispatch and
    /// combine bandwidth at EP 8–128 (hardware.md; see [`FITTED`](crate::cost::FITTED)). The stated peak is higher:
    /// ">392 GB/s one way per NPU" \[S\] over its two dies is 196 \[D\]. Swept 50–196.
    pub link_gb_per_s: f64,
    /// One-way bandwidth a die takes in from the network, GB/s: every put landing on the die
    /// shares it. \[F\] tied to [`link_gb_per_s`](Self::link_gb_per_s) (a full-duplex port, the
    /// same rate each way): a balanced all-to-all whose ranks send to different destinations at
    /// any moment never fills it, so the measured table cannot tell it apart. Swept 50–196.
    pub ejection_gb_per_s: f64,
    /// One-way bandwidth a die's puts to *other servers* share, GB/s: the unified bus's second
    /// tier (the switches between servers of the super-node). \[F\] fitted with
    /// [`link_gb_per_s`](Self::link_gb_per_s) to the measured table (see [`FITTED`](crate::cost::FITTED)): the drop
    /// of the measured bandwidth from EP 16 (one server) to EP 128 (eight servers). 910B:
    /// \[U\] 25, one 200 Gb/s RoCE port per die. Swept 25–196.
    pub cross_server_gb_per_s: f64,
    /// Latency from a put's last byte (or a remote signal's issue) to its arrival on another
    /// die of the same server, ns. \[S\] "<1 µs" on the unified bus; 1000 is the stated bound.
    /// Swept 250–2000.
    pub link_latency_ns: f64,
    /// The same latency to a die of another server (one more switch tier), ns. \[U\] 2000;
    /// swept 1000–5000.
    pub cross_server_latency_ns: f64,
    /// Core time to set up one put (descriptor, address translation) before its first byte
    /// leaves, ns. \[U\] 1000; swept 0–5000. After its last byte the putting core also waits
    /// for the put's completion (the quiet before its signals): a round trip of the path's
    /// latency, charged from the latencies above, no constant of its own.
    pub put_setup_ns: f64,
    /// Dies per package. A3: \[S\] 2 (CloudMatrix384 paper). 910B: 1. Ranks are dies, numbered
    /// package by package.
    pub dies_per_package: u32,
    /// Packages per server: dies `dies_per_package × packages_per_server` apart are on
    /// different servers. \[S\] 8 NPUs per server on A3 (CloudMatrix384 paper); \[U\] 8 on 910B
    /// servers too. All servers of an EP group are taken to be in one unified-bus super-node
    /// (48 servers, 768 dies, on A3), so no put crosses RoCE.
    pub packages_per_server: u32,
    /// HBM bandwidth of one die, GB/s, shared by all its cores' reads from HBM (cold reads and
    /// L2 misses) and writes. A3: \[S/D\] 3.2 TB/s per package over two dies. 910B: \[U\] the
    /// same 1600. Swept 800–1600.
    pub hbm_gb_per_s: f64,
    /// Baseline only: launch and inter-kernel synchronisation of one whole-device kernel, ns.
    /// \[S, weak\] ≈10 µs (range 5–20 µs).
    pub kernel_launch_ns: f64,
    /// Baseline only: host-driven collective synchronisation around one all-to-all, ns.
    /// \[U\] 35 µs, the middle of a guessed 20–50 µs.
    pub host_collective_sync_ns: f64,
}

/// A profile field whose value is a guess (or a weak or bounded figure), and the range the
/// sensitivity study sweeps it over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Guess {
    /// Field name, as in TOML/JSON.
    pub field: &'static str,
    /// Source marker as in hardware.md: "U", "D" or "S, weak".
    pub marker: &'static str,
    /// Lowest value swept, in the field's own unit.
    pub low: f64,
    /// Highest value swept, in the field's own unit.
    pub high: f64,
}

/// Every guessed field, with its sweep range. The defaults of both presets lie inside.
pub const GUESSES: &[Guess] = &[
    Guess { field: "cube_efficiency", marker: "U", low: 0.5, high: 1.0 },
    Guess { field: "vector_flops_per_cycle", marker: "U", low: 64.0, high: 256.0 },
    Guess { field: "l2_hit_rate", marker: "U", low: 0.5, high: 1.0 },
    Guess { field: "tile_overhead_ns", marker: "U", low: 100.0, high: 2000.0 },
    Guess { field: "link_gb_per_s", marker: "F", low: 50.0, high: 196.0 },
    Guess { field: "ejection_gb_per_s", marker: "F tied", low: 50.0, high: 196.0 },
    Guess { field: "cross_server_gb_per_s", marker: "F", low: 25.0, high: 196.0 },
    Guess { field: "link_latency_ns", marker: "S <1us", low: 250.0, high: 2000.0 },
    Guess { field: "cross_server_latency_ns", marker: "U", low: 1000.0, high: 5000.0 },
    Guess { field: "put_setup_ns", marker: "U", low: 0.0, high: 5000.0 },
    Guess { field: "hbm_gb_per_s", marker: "S/D", low: 800.0, high: 1600.0 },
    Guess { field: "kernel_launch_ns", marker: "S, weak", low: 5000.0, high: 20000.0 },
    Guess { field: "host_collective_sync_ns", marker: "U", low: 20000.0, high: 50000.0 },
];

/// \[F\] The A3 die's injection (and ejection) bandwidth, GB/s: see [`FITTED`](crate::cost::FITTED).
const A3_LINK_GB_PER_S: f64 = 112.0;
/// \[F\] The A3 die's bandwidth to other servers, GB/s: see [`FITTED`](crate::cost::FITTED).
const A3_CROSS_SERVER_GB_PER_S: f64 = 61.0;

/// Names accepted by [`CostProfile::preset`] and by the `base` key of a profile file.
pub const PRESETS: &[&str] = &["ascend910b", "ascend_a3_die"];

impl CostProfile {
    /// An Ascend 910B die (A2, dav-c220), figures from hardware.md's 910B section.
    pub fn ascend910b() -> Self {
        CostProfile {
            name: "ascend910b".into(),
            clock_ghz: 1.8,
            cube_flops_per_cycle: 8192.0,
            cube_efficiency: 0.8,
            vector_flops_per_cycle: 128.0,
            gm_read_bytes_per_cycle: 32.0,
            l2_read_bytes_per_cycle: 110.0,
            aic_write_bytes_per_cycle: 86.0,
            aiv_write_bytes_per_cycle: 64.0,
            l2_hit_rate: 0.9,
            gm_read_latency_cycles: 300.0,
            gm_write_latency_cycles: 150.0,
            tile_overhead_ns: 500.0,
            link_gb_per_s: 196.0,
            ejection_gb_per_s: 196.0,
            cross_server_gb_per_s: 25.0,
            link_latency_ns: 1000.0,
            cross_server_latency_ns: 2000.0,
            put_setup_ns: 1000.0,
            dies_per_package: 1,
            packages_per_server: 8,
            hbm_gb_per_s: 1600.0,
            kernel_launch_ns: 10_000.0,
            host_collective_sync_ns: 35_000.0,
        }
    }

    /// One die of an Ascend A3 (910C) package. Clock, topology, HBM and latency from the
    /// CloudMatrix384 paper (hardware.md's A3 section); the network's bandwidths fitted to
    /// the measured all-to-all table ([`FITTED`](crate::cost::FITTED)); per-core rates and latencies \[U\] taken
    /// from the 910B, whose core design the A3 die shares (24 AIC + 48 AIV).
    pub fn ascend_a3_die() -> Self {
        CostProfile {
            name: "ascend_a3_die".into(),
            clock_ghz: 1.85,
            link_gb_per_s: A3_LINK_GB_PER_S,
            ejection_gb_per_s: A3_LINK_GB_PER_S,
            cross_server_gb_per_s: A3_CROSS_SERVER_GB_PER_S,
            dies_per_package: 2,
            packages_per_server: 8,
            hbm_gb_per_s: 1600.0,
            ..Self::ascend910b()
        }
    }

    /// A preset by name (see [`PRESETS`]).
    pub fn preset(name: &str) -> Result<Self, ProfileError> {
        match name {
            "ascend910b" => Ok(Self::ascend910b()),
            "ascend_a3_die" => Ok(Self::ascend_a3_die()),
            _ => Err(ProfileError::UnknownPreset { name: name.to_string() }),
        }
    }

    /// Reads a profile from TOML. The document may name a preset with `base = "..."` and
    /// then give only the fields it overrides; without `base`, every field is required.
    /// Unknown fields are errors. The result is [validated](Self::validate).
    ///
    /// ```
    /// use hpmoe_core::cost::CostProfile;
    /// let p = CostProfile::from_toml_str("base = \"ascend_a3_die\"\nname = \"mine\"\ntile_overhead_ns = 800").unwrap();
    /// assert_eq!((p.name.as_str(), p.clock_ghz, p.tile_overhead_ns), ("mine", 1.85, 800.0));
    /// ```
    pub fn from_toml_str(text: &str) -> Result<Self, ProfileError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| ProfileError::Toml(Arc::new(e)))?;
        let value = serde_json::to_value(table).map_err(|e| ProfileError::Json { toml: true, error: Arc::new(e) })?;
        Self::from_value(value)
    }

    /// Reads a profile from JSON, with the same rules as [`from_toml_str`](Self::from_toml_str).
    pub fn from_json_str(text: &str) -> Result<Self, ProfileError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ProfileError::Json { toml: false, error: Arc::new(e) })?;
        Self::from_value(value)
    }

    /// A preset name (see [`PRESETS`]) or, otherwise, a profile file read by [`load`](Self::load):
    /// what a `--profile NAME|FILE` option takes.
    pub fn from_spec(spec: &str) -> Result<Self, ProfileError> {
        if PRESETS.contains(&spec) { Self::preset(spec) } else { Self::load(Path::new(spec)) }
    }

    /// Reads a profile file: `.json` as JSON, anything else as TOML.
    pub fn load(path: &Path) -> Result<Self, ProfileError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ProfileError::Read { path: path.to_path_buf(), error: Arc::new(e) })?;
        let parsed = if path.extension().is_some_and(|e| e == "json") {
            Self::from_json_str(&text)
        } else {
            Self::from_toml_str(&text)
        };
        parsed.map_err(|e| ProfileError::InFile { path: path.to_path_buf(), error: Box::new(e) })
    }

    /// The profile as a complete TOML document (every field), to copy and edit.
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).expect("a profile of strings and numbers serialises to TOML")
    }

    /// The same profile with one numeric field replaced, by its TOML/JSON name, validated.
    pub fn with_field(&self, field: &str, value: f64) -> Result<Self, ProfileError> {
        let mut v = serde_json::to_value(self).expect("a profile serialises to JSON");
        let obj = v.as_object_mut().expect("a profile is a JSON object");
        match obj.get(field) {
            Some(serde_json::Value::Number(_)) => {}
            _ => return Err(ProfileError::NotNumeric { field: field.to_string() }),
        }
        let number = serde_json::Number::from_f64(value)
            .ok_or_else(|| ProfileError::NotFinite { field: field.to_string(), value })?;
        obj.insert(field.into(), serde_json::Value::Number(number));
        let p: CostProfile = serde_json::from_value(v).map_err(|e| ProfileError::Fields(Arc::new(e)))?;
        p.validate()?;
        Ok(p)
    }

    /// A numeric field by its TOML/JSON name.
    pub fn field(&self, field: &str) -> Option<f64> {
        serde_json::to_value(self).ok()?.get(field)?.as_f64()
    }

    fn from_value(mut value: serde_json::Value) -> Result<Self, ProfileError> {
        let obj = value.as_object_mut().ok_or(ProfileError::NotATable)?;
        let merged = match obj.remove("base") {
            None => value,
            Some(serde_json::Value::String(base)) => {
                let mut merged = serde_json::to_value(Self::preset(&base)?).expect("a profile serialises to JSON");
                let target = merged.as_object_mut().expect("a profile is a JSON object");
                for (k, v) in obj.iter() {
                    target.insert(k.clone(), v.clone());
                }
                merged
            }
            Some(other) => return Err(ProfileError::BaseNotAName { got: other.to_string() }),
        };
        let p: CostProfile = serde_json::from_value(merged).map_err(|e| ProfileError::Fields(Arc::new(e)))?;
        p.validate()?;
        Ok(p)
    }

    /// Checks that rates are positive and finite, fractions lie in (0, 1] (hit rate in
    /// [0, 1]) and times are finite and non-negative.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let positive = [
            ("clock_ghz", self.clock_ghz),
            ("cube_flops_per_cycle", self.cube_flops_per_cycle),
            ("vector_flops_per_cycle", self.vector_flops_per_cycle),
            ("gm_read_bytes_per_cycle", self.gm_read_bytes_per_cycle),
            ("l2_read_bytes_per_cycle", self.l2_read_bytes_per_cycle),
            ("aic_write_bytes_per_cycle", self.aic_write_bytes_per_cycle),
            ("aiv_write_bytes_per_cycle", self.aiv_write_bytes_per_cycle),
            ("link_gb_per_s", self.link_gb_per_s),
            ("ejection_gb_per_s", self.ejection_gb_per_s),
            ("cross_server_gb_per_s", self.cross_server_gb_per_s),
            ("hbm_gb_per_s", self.hbm_gb_per_s),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(ProfileError::NotPositive { field: name, value: v });
            }
        }
        if !(self.cube_efficiency > 0.0 && self.cube_efficiency <= 1.0) {
            let (field, value, range) = ("cube_efficiency", self.cube_efficiency, "(0, 1]");
            return Err(ProfileError::OutOfRange { field, value, range });
        }
        if !(0.0..=1.0).contains(&self.l2_hit_rate) {
            let (field, value, range) = ("l2_hit_rate", self.l2_hit_rate, "[0, 1]");
            return Err(ProfileError::OutOfRange { field, value, range });
        }
        let times = [
            ("gm_read_latency_cycles", self.gm_read_latency_cycles),
            ("gm_write_latency_cycles", self.gm_write_latency_cycles),
            ("tile_overhead_ns", self.tile_overhead_ns),
            ("link_latency_ns", self.link_latency_ns),
            ("cross_server_latency_ns", self.cross_server_latency_ns),
            ("put_setup_ns", self.put_setup_ns),
            ("kernel_launch_ns", self.kernel_launch_ns),
            ("host_collective_sync_ns", self.host_collective_sync_ns),
        ];
        for (name, v) in times {
            // Bounded so that conversions to integer ns cannot overflow.
            if !(v.is_finite() && (0.0..1e15).contains(&v)) {
                return Err(ProfileError::BadTime { field: name, value: v });
            }
        }
        if self.dies_per_package == 0 || self.packages_per_server == 0 {
            return Err(ProfileError::EmptyTopology);
        }
        Ok(())
    }

    /// Cycles to ns.
    fn cycles_ns(&self, cycles: f64) -> f64 {
        cycles / self.clock_ghz
    }

    /// A per-cycle rate as an integral per-second rate (at least 1).
    fn per_s(&self, per_cycle: f64) -> u64 {
        ((per_cycle * self.clock_ghz * 1e9).round() as u64).max(1)
    }

    /// Sustained matmul FLOP/s of one AIC (peak × efficiency).
    pub fn aic_flops_per_s(&self) -> u64 {
        self.per_s(self.cube_flops_per_cycle * self.cube_efficiency)
    }

    /// FLOP/s of one AIV.
    pub fn aiv_flops_per_s(&self) -> u64 {
        self.per_s(self.vector_flops_per_cycle)
    }

    /// Bytes/s one core reads from HBM.
    pub fn gm_read_bytes_per_s(&self) -> u64 {
        self.per_s(self.gm_read_bytes_per_cycle)
    }

    /// Bytes/s one core reads from L2.
    pub fn l2_read_bytes_per_s(&self) -> u64 {
        self.per_s(self.l2_read_bytes_per_cycle)
    }

    /// Bytes/s one AIC writes.
    pub fn aic_write_bytes_per_s(&self) -> u64 {
        self.per_s(self.aic_write_bytes_per_cycle)
    }

    /// Bytes/s one AIV writes.
    pub fn aiv_write_bytes_per_s(&self) -> u64 {
        self.per_s(self.aiv_write_bytes_per_cycle)
    }

    /// The link's one-way bandwidth, bytes/s.
    pub fn link_bytes_per_s(&self) -> u64 {
        ((self.link_gb_per_s * 1e9).round() as u64).max(1)
    }

    /// A die's ejection bandwidth, bytes/s.
    pub fn ejection_bytes_per_s(&self) -> u64 {
        ((self.ejection_gb_per_s * 1e9).round() as u64).max(1)
    }

    /// A die's bandwidth to other servers, bytes/s.
    pub fn cross_server_bytes_per_s(&self) -> u64 {
        ((self.cross_server_gb_per_s * 1e9).round() as u64).max(1)
    }

    /// A die's HBM bandwidth, bytes/s.
    pub fn hbm_bytes_per_s(&self) -> u64 {
        ((self.hbm_gb_per_s * 1e9).round() as u64).max(1)
    }

    /// Dies per server.
    pub fn dies_per_server(&self) -> u32 {
        self.dies_per_package.saturating_mul(self.packages_per_server).max(1)
    }

    /// Whether ranks (dies) `a` and `b` are on different servers.
    pub fn crosses_server(&self, a: u32, b: u32) -> bool {
        a / self.dies_per_server() != b / self.dies_per_server()
    }

    /// Latency from rank `a` to rank `b` (another rank), ns, rounded up.
    pub fn latency_between(&self, a: u32, b: u32) -> u64 {
        if self.crosses_server(a, b) { self.cross_server_latency_ns.ceil() as u64 } else { self.link_latency() }
    }

    /// The quiet after a put within a server: the core waits a round trip for the put's
    /// completion, ns.
    pub fn put_quiet_ns(&self) -> u64 {
        self.link_latency().saturating_mul(2)
    }

    /// The put setup time, ns, rounded up.
    pub fn put_setup(&self) -> u64 {
        self.put_setup_ns.ceil() as u64
    }

    /// Core time of one counter poll (a global-memory read), ns, rounded up.
    pub fn poll_ns(&self) -> u64 {
        self.cycles_ns(self.gm_read_latency_cycles).ceil() as u64
    }

    /// Core time to issue one signal (an atomic add in global memory), ns, rounded up.
    pub fn signal_issue_ns(&self) -> u64 {
        self.cycles_ns(self.gm_write_latency_cycles).ceil() as u64
    }

    /// The link latency, ns, rounded up.
    pub fn link_latency(&self) -> u64 {
        self.link_latency_ns.ceil() as u64
    }

    /// The per-tile overhead, ns, rounded up.
    pub fn tile_overhead(&self) -> u64 {
        self.tile_overhead_ns.ceil() as u64
    }

    /// The kernel launch overhead, ns, rounded up.
    pub fn kernel_launch(&self) -> u64 {
        self.kernel_launch_ns.ceil() as u64
    }

    /// The host collective synchronisation per all-to-all, ns, rounded up.
    pub fn host_collective_sync(&self) -> u64 {
        self.host_collective_sync_ns.ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_cite_hardware_md_figures() {
        let b = CostProfile::ascend910b();
        b.validate().unwrap();
        // 4096 MAC × 2 × 1.8 GHz = 14.7456 TFLOP/s peak; 80 % sustained.
        assert_eq!(CostProfile { cube_efficiency: 1.0, ..b.clone() }.aic_flops_per_s(), 14_745_600_000_000);
        assert_eq!(b.gm_read_bytes_per_s(), 57_600_000_000);
        assert_eq!(b.l2_read_bytes_per_s(), 198_000_000_000);
        assert_eq!(b.poll_ns(), 167); // 300 cycles at 1.8 GHz
        assert_eq!(b.signal_issue_ns(), 84); // 150 cycles
        let a3 = CostProfile::ascend_a3_die();
        a3.validate().unwrap();
        // ≈15.2 TFLOP/s per AIC at 1.85 GHz, as the CloudMatrix384 paper measures.
        let peak = CostProfile { cube_efficiency: 1.0, ..a3.clone() }.aic_flops_per_s() as f64;
        assert!((peak / 15.2e12 - 1.0).abs() < 0.01, "{peak}");
        // Fitted figures lie below the stated peaks they stand for.
        assert!(a3.link_bytes_per_s() <= 196_000_000_000 && a3.cross_server_bytes_per_s() <= a3.link_bytes_per_s());
        assert_eq!((a3.dies_per_server(), a3.hbm_bytes_per_s()), (16, 1_600_000_000_000));
        assert!(!a3.crosses_server(0, 15) && a3.crosses_server(15, 16));
        assert_eq!((a3.latency_between(0, 15), a3.latency_between(0, 16)), (1000, 2000));
        for f in crate::cost::FITTED {
            assert!(a3.field(f.field).is_some(), "{}", f.field);
        }
    }

    #[test]
    fn every_guess_names_a_numeric_field_and_brackets_the_defaults() {
        for p in [CostProfile::ascend910b(), CostProfile::ascend_a3_die()] {
            for g in GUESSES {
                let v = p.field(g.field).unwrap_or_else(|| panic!("no field {}", g.field));
                assert!(g.low <= v && v <= g.high, "{} = {v} outside {}..{}", g.field, g.low, g.high);
                p.with_field(g.field, g.low).unwrap();
                p.with_field(g.field, g.high).unwrap();
            }
        }
    }

    #[test]
    fn toml_and_json_override_a_base_and_round_trip() {
        let p =
            CostProfile::from_toml_str("base = \"ascend910b\"\nlink_gb_per_s = 150\ncube_efficiency = 0.7\n").unwrap();
        assert_eq!(p, CostProfile { link_gb_per_s: 150.0, cube_efficiency: 0.7, ..CostProfile::ascend910b() });
        let j = CostProfile::from_json_str(r#"{"base": "ascend_a3_die", "l2_hit_rate": 0.5}"#).unwrap();
        assert_eq!(j, CostProfile { l2_hit_rate: 0.5, ..CostProfile::ascend_a3_die() });
        // A full document needs no base.
        let full = CostProfile::ascend_a3_die().to_toml_string();
        assert_eq!(CostProfile::from_toml_str(&full).unwrap(), CostProfile::ascend_a3_die());
        let json = serde_json::to_string(&CostProfile::ascend910b()).unwrap();
        assert_eq!(CostProfile::from_json_str(&json).unwrap(), CostProfile::ascend910b());
    }

    #[test]
    fn bad_profiles_are_refused_with_the_field_named() {
        let err = |text: &str| CostProfile::from_toml_str(text).unwrap_err().to_string();
        assert!(err("base = \"ascend910b\"\nlink_gbps = 1").contains("link_gbps"), "unknown field");
        assert!(err("base = \"h100\"").contains("unknown profile `h100`"));
        assert!(err("base = \"ascend910b\"\nclock_ghz = 0").contains("clock_ghz"));
        assert_eq!(
            CostProfile::from_toml_str("base = \"ascend910b\"\nclock_ghz = 0"),
            Err(ProfileError::NotPositive { field: "clock_ghz", value: 0.0 })
        );
        assert_eq!(CostProfile::preset("h100"), Err(ProfileError::UnknownPreset { name: "h100".into() }));
        assert!(err("base = \"ascend910b\"\nl2_hit_rate = 1.5").contains("l2_hit_rate"));
        assert!(err("base = \"ascend910b\"\ntile_overhead_ns = -1").contains("tile_overhead_ns"));
        assert!(err("clock_ghz = 1.8").contains("missing field"), "no base: every field required");
        assert!(err("base = 3").contains("preset name"));
        assert_eq!(CostProfile::from_json_str("[1]"), Err(ProfileError::NotATable));
        assert_eq!(
            CostProfile::ascend910b().with_field("name", 1.0),
            Err(ProfileError::NotNumeric { field: "name".into() })
        );
        assert!(CostProfile::ascend910b().with_field("cube_efficiency", 0.0).is_err());
    }

    #[test]
    fn load_picks_the_format_by_extension() {
        let dir = std::env::temp_dir().join(format!("hpmoe-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let toml_path = dir.join("p.toml");
        std::fs::write(&toml_path, "base = \"ascend910b\"\ntile_overhead_ns = 250\n").unwrap();
        assert_eq!(CostProfile::load(&toml_path).unwrap().tile_overhead_ns, 250.0);
        let json_path = dir.join("p.json");
        std::fs::write(&json_path, r#"{"base": "ascend910b", "tile_overhead_ns": 260}"#).unwrap();
        assert_eq!(CostProfile::load(&json_path).unwrap().tile_overhead_ns, 260.0);
        let missing = CostProfile::load(&dir.join("none.toml")).unwrap_err();
        assert!(matches!(&missing, ProfileError::Read { path, .. } if path.ends_with("none.toml")), "{missing}");
        assert!(missing.to_string().contains("cannot read profile"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
