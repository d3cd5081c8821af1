//! The SVG timelines the README shows: rank 0 of the simulated taskflow run above its
//! kernel-by-kernel baseline, for the forward and for the training step at [`TRACE_EP`]. The
//! main job draws them with every run; run with the README's settings (4096 tokens per rank,
//! the default cost profile) it also refreshes the committed copies under
//! [`ASSETS`], so the pictures move with the figures and a stale one shows in `git status`.

use super::measure::TRACE_EP;
use crate::ExampleError;
use hpmoe_host::sim;
use hpmoe_host::trace::{Labels, Panel, svg_timeline};
use std::path::{Path, PathBuf};

/// The README's images, relative to the workspace.
pub const ASSETS: &str = "examples/assets";

/// The rank the timelines draw.
pub const TIMELINE_RANK: u32 = 0;

/// The settings the README's figures and images are produced with: tokens per rank and the
/// cost profile's name.
pub const README_SETTINGS: (u64, &str) = (4096, "ascend_a3_die");

/// Rank `rank` of `cmp`'s taskflow run above its kernel-by-kernel baseline, on one time axis.
pub fn timeline_svg(cmp: &sim::Comparison, labels: &Labels, rank: u32) -> String {
    let panels = [Panel::taskflow(&cmp.taskflow), Panel::baseline(&cmp.baseline, labels)];
    svg_timeline(&panels, rank, labels)
}

/// The committed image of kernel `kernel`'s timeline (`moe_ffn` → `timeline_ep8_rank0.svg`,
/// `moe_ffn_training_step` → `training_step_ep8_rank0.svg`), relative to the workspace; `None`
/// for a kernel the README does not show.
pub fn asset_name(kernel: &str) -> Option<String> {
    let stem = match kernel {
        "moe_ffn" => "timeline",
        "moe_ffn_training_step" => "training_step",
        _ => return None,
    };
    Some(format!("{ASSETS}/{stem}_ep{TRACE_EP}_rank{TIMELINE_RANK}.svg"))
}

/// Writes `svg` to `OUT/epN/NAME_timeline.svg` and, when `readme` (the job runs with the
/// README's settings) and the kernel is one the README shows, to its committed copy under
/// `workspace` (only if it changed). Returns the committed copy's path when it was rewritten.
pub fn write_timeline(
    svg: &str,
    dir: &Path,
    kernel: &str,
    readme: Option<&Path>,
) -> Result<Option<PathBuf>, ExampleError> {
    let path = dir.join(format!("{kernel}_timeline.svg"));
    std::fs::write(&path, svg).map_err(|e| ExampleError::io("write", &path, e))?;
    let (Some(workspace), Some(asset)) = (readme, asset_name(kernel)) else { return Ok(None) };
    let asset = workspace.join(asset);
    if std::fs::read_to_string(&asset).is_ok_and(|old| old == svg) {
        return Ok(None);
    }
    std::fs::write(&asset, svg).map_err(|e| ExampleError::io("write", &asset, e))?;
    Ok(Some(asset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_readme_kernels_have_assets() {
        assert_eq!(asset_name("moe_ffn").as_deref(), Some("examples/assets/timeline_ep8_rank0.svg"));
        assert_eq!(asset_name("moe_ffn_training_step").as_deref(), Some("examples/assets/training_step_ep8_rank0.svg"));
        assert_eq!(asset_name("moe_ffn_backward"), None);
        assert_eq!(asset_name("moe_ffn_int8"), None);
    }

    /// The taskflow makespan in a timeline's first panel title, rounded to µs as the README
    /// writes it (`32 039`).
    fn makespan_us(svg: &str) -> String {
        let title = "taskflow (one kernel): ";
        let start = svg.find(title).expect("a taskflow panel") + title.len();
        let us: f64 = svg[start..].split(' ').next().unwrap().parse().unwrap();
        let digits = format!("{:.0}", us);
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                grouped.push(' ');
            }
            grouped.push(c);
        }
        grouped
    }

    /// The README's table cell in column `column` of the first row whose cells start with `first`.
    fn readme_cell(readme: &str, first: &[&str], column: usize) -> String {
        let row = readme
            .lines()
            .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
            .find(|cells| cells.len() > column && cells[1..].starts_with(first))
            .unwrap_or_else(|| panic!("a README table row starting with {first:?}"));
        row[column].to_string()
    }

    /// The committed pictures and the README's figures come from the same run of the main job:
    /// a table re-generated without its picture (or the reverse) fails here.
    #[test]
    fn the_committed_timelines_match_the_readme_figures() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let readme = std::fs::read_to_string(workspace.join("README.md")).unwrap();
        let svg = |kernel| std::fs::read_to_string(workspace.join(asset_name(kernel).unwrap())).unwrap();
        // First table: | EP | kernel-by-kernel µs | taskflow µs | ...
        assert_eq!(makespan_us(&svg("moe_ffn")), readme_cell(&readme, &["8"], 3));
        // Training table: | EP | pass | kernel-by-kernel µs | taskflow µs | ...
        assert_eq!(makespan_us(&svg("moe_ffn_training_step")), readme_cell(&readme, &["8", "training step"], 4));
    }

    #[test]
    fn the_committed_timelines_exist_and_are_named_in_the_readme() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let readme = std::fs::read_to_string(workspace.join("README.md")).unwrap();
        for kernel in ["moe_ffn", "moe_ffn_training_step"] {
            let asset = asset_name(kernel).unwrap();
            let svg = std::fs::read_to_string(workspace.join(&asset)).unwrap();
            assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"), "{asset}");
            assert!(readme.contains(&format!("]({asset})")), "the README shows {asset}");
        }
    }
}
