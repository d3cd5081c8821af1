//! Run over bound of the DeepSeek-V3 layer's passes across several shapes at once: the check to
//! make before calling a scheduler change a gain.
//!
//! ```sh
//! cargo run --release -p hpmoe-examples --example ratio_sweep [-- --tokens N,N..] [--profile NAME|FILE]
//!                                                             [--save FILE] [--against FILE]
//! ```
//!
//! The simulated run of a static schedule is sensitive to details of the plan that the plan's
//! own model cannot see: two plans with the same planned makespan, their puts in another order,
//! can run 2% apart (docs/history.md, "Receivers the plan crowds (stop 34)"). So a lever measured on one shape says
//! little. This prices every cell of a fixed matrix — the balanced forward, backward and training
//! step at EP 8, 16 and 32, the INT8 forward at EP 8 and 16, the natural forward, backward and
//! training step at EP 8 and 16 (routing seed 42) — at each token count per rank of `--tokens`
//! (3072, 3584, 4096 and 8192 by default; 4096 alone is the main job's shape), and prints the
//! simulated run over its lower bound per cell and the mean per row. `--save FILE` writes the
//! figures as JSON; `--against FILE` prints, instead of the ratios, how far each cell moved
//! from a saved run, in points (ratio × 100), and each row's mean change: build main, save;
//! build the change, compare. Cells run on every core; about four minutes on two.

use hpmoe_core::cost::CostProfile;
use hpmoe_examples::ExampleError;
use hpmoe_examples::cli::Options;
use hpmoe_examples::priced::{LayerSpec, NaturalSpec, PricedLayer};
use hpmoe_examples::report::ROUTING_SEED;
use hpmoe_host::moe::{DispatchPrecision, Pass};
use hpmoe_host::sim;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// One row of the matrix: a pass of one layer at one EP.
#[derive(Clone, Copy, Debug)]
struct Row {
    pass: Pass,
    precision: DispatchPrecision,
    natural: bool,
    ep: u32,
}

impl Row {
    /// How the row is named in the output and in saved files.
    fn label(&self) -> String {
        let routing = if self.natural { "natural " } else { "" };
        let dispatch = if self.precision == DispatchPrecision::Int8 { "INT8 " } else { "" };
        format!("{routing}{dispatch}{} EP {}", self.pass.name(), self.ep)
    }
}

/// The rows priced, in print order.
fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    let mut add = |pass, precision, natural, eps: &[u32]| {
        rows.extend(eps.iter().map(|&ep| Row { pass, precision, natural, ep }));
    };
    for pass in Pass::ALL {
        add(pass, DispatchPrecision::Bf16, false, &[8, 16, 32]);
    }
    add(Pass::Forward, DispatchPrecision::Int8, false, &[8, 16]);
    for pass in Pass::ALL {
        add(pass, DispatchPrecision::Bf16, true, &[8, 16]);
    }
    rows
}

/// One priced cell, as saved.
#[derive(Clone, Debug)]
struct Cell {
    /// [`Row::label`].
    row: String,
    tokens: u64,
    /// The simulated run over its lower bound.
    ratio: f64,
    /// The scheduler's planned makespan and the simulated run's, µs.
    planned_us: f64,
    run_us: f64,
}

impl Cell {
    /// Its JSON object, as `--save` writes it.
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "row": self.row, "tokens": self.tokens, "ratio": self.ratio,
            "planned_us": self.planned_us, "run_us": self.run_us,
        })
    }

    /// The cell of a JSON object `--save` wrote, `None` if it is not one.
    fn from_json(v: &serde_json::Value) -> Option<Cell> {
        Some(Cell {
            row: v.get("row")?.as_str()?.to_string(),
            tokens: v.get("tokens")?.as_u64()?,
            ratio: v.get("ratio")?.as_f64()?,
            planned_us: v.get("planned_us")?.as_f64()?,
            run_us: v.get("run_us")?.as_f64()?,
        })
    }
}

/// Plans and simulates `row` at `tokens` tokens per rank.
fn price(row: Row, tokens: u64, profile: &CostProfile) -> Result<Cell, ExampleError> {
    let natural = row.natural.then(|| NaturalSpec::seeded(ROUTING_SEED));
    let spec = LayerSpec { ep: row.ep, tokens, pass: row.pass, precision: row.precision, natural };
    let layer = PricedLayer::new(&spec, profile.clone())?;
    let tf = &layer.taskflow;
    let compiled = hpmoe_core::compile(tf, &layer.plan).map_err(|d| ExampleError::plan(tf, d))?;
    let simulate = |e| ExampleError::Simulate { taskflow: tf.name.clone(), error: e };
    let run = sim::simulate(&compiled, &layer.run).map_err(simulate)?;
    let bound = sim::lower_bound(&compiled.expanded, &tf.profile, &layer.run).map_err(simulate)?;
    Ok(Cell {
        row: row.label(),
        tokens,
        ratio: run.makespan_ns as f64 / bound.ns().max(1) as f64,
        planned_us: compiled.placement.makespan_ns as f64 / 1e3,
        run_us: run.makespan_ns as f64 / 1e3,
    })
}

fn run() -> Result<(), ExampleError> {
    let known = ["--tokens", "--profile", "--save", "--against"];
    let opts = Options::from_env(&known, &known.join(", "))?;
    let mut tokens: Vec<u64> = opts.list_u32("--tokens")?.into_iter().map(u64::from).collect();
    if tokens.is_empty() {
        tokens = vec![3072, 3584, 4096, 8192];
    }
    let profile = opts.profile()?;
    let against = match opts.value("--against") {
        Some(path) => Some(read_cells(&path)?),
        None => None,
    };

    let rows = rows();
    let jobs: Vec<(Row, u64)> = rows.iter().flat_map(|&r| tokens.iter().map(move |&t| (r, t))).collect();
    let results: Mutex<Vec<Option<Result<Cell, ExampleError>>>> = Mutex::new(vec![None; jobs.len()]);
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(row, t)) = jobs.get(i) else { break };
                    let cell = price(row, t, &profile);
                    eprintln!(
                        "  {} at {t} tokens: {}",
                        row.label(),
                        cell.as_ref().map_or("error".into(), |c| format!("{:.3}x", c.ratio))
                    );
                    results.lock().expect("no worker panics")[i] = Some(cell);
                }
            });
        }
    });
    let mut cells = Vec::new();
    let mut failed = Vec::new();
    for (result, &(row, t)) in results.into_inner().expect("no worker panics").into_iter().zip(&jobs) {
        match result.expect("every job ran") {
            Ok(cell) => cells.push(cell),
            // A shape the token count does not fit (e.g. natural routing's whole row blocks).
            Err(e) => failed.push(format!("{} at {t} tokens: {e}", row.label())),
        }
    }

    print_table(&rows, &tokens, &cells, against.as_deref());
    for f in &failed {
        println!("not priced: {f}");
    }
    if let Some(path) = opts.value("--save") {
        let list = serde_json::Value::Array(cells.iter().map(Cell::to_json).collect());
        let json = serde_json::to_string_pretty(&list).map_err(|e| ExampleError::Json(e.into()))?;
        std::fs::write(&path, json + "\n").map_err(|e| ExampleError::io("write", &path, e))?;
        println!("saved to {path}");
    }
    Ok(())
}

/// The cells saved at `path` by `--save`.
fn read_cells(path: &str) -> Result<Vec<Cell>, ExampleError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExampleError::io("read", path, e))?;
    let list: Vec<serde_json::Value> = serde_json::from_str(&text).map_err(|e| ExampleError::Json(e.into()))?;
    // A saved file holds only cells; anything else is another file.
    list.iter()
        .map(|v| {
            Cell::from_json(v).ok_or_else(|| {
                let not_a_cell = std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not a saved cell: {v}"));
                ExampleError::io("read", path, not_a_cell)
            })
        })
        .collect()
}

/// One line per row: each token count's ratio and the row's mean; against saved cells, each
/// cell's change in points and the mean change over the cells both runs priced.
fn print_table(rows: &[Row], tokens: &[u64], cells: &[Cell], against: Option<&[Cell]>) {
    let key = |c: &Cell| (c.row.clone(), c.tokens);
    let now: BTreeMap<_, _> = cells.iter().map(|c| (key(c), c.ratio)).collect();
    let before: Option<BTreeMap<_, _>> = against.map(|a| a.iter().map(|c| (key(c), c.ratio)).collect());
    let columns: String = tokens.iter().map(|t| format!(" {:>8}", format!("{t} tok"))).collect();
    match before {
        None => println!("run over bound{:>19}{columns} {:>8}", "", "mean"),
        Some(_) => println!("change in points (x 100) against the saved run{columns} {:>8}", "mean"),
    }
    for row in rows {
        let label = row.label();
        let (mut line, mut sum, mut n) = (format!("{label:<33}"), 0.0, 0);
        for &t in tokens {
            let here = now.get(&(label.clone(), t)).copied();
            let value = match (&before, here) {
                (None, Some(r)) => Some(r),
                (Some(b), Some(r)) => b.get(&(label.clone(), t)).map(|&old| (r - old) * 100.0),
                (_, None) => None,
            };
            match value {
                Some(v) => {
                    line += &if before.is_some() { format!(" {v:>+8.1}") } else { format!(" {v:>8.3}") };
                    (sum, n) = (sum + v, n + 1);
                }
                None => line += &format!(" {:>8}", "-"),
            }
        }
        if n > 0 {
            let mean = sum / f64::from(n);
            line += &if before.is_some() { format!(" {mean:>+8.2}") } else { format!(" {mean:>8.4}") };
        }
        println!("{line}");
    }
}
