//! An SVG timeline of one rank, one panel per run on a shared time axis — for example the
//! taskflow above its kernel-by-kernel baseline — small enough to put in a README.
//!
//! Each panel has one thin row per core (AIC rows, then AIV rows) with a bar per tile in
//! its family's colour and light grey while the core waits on a counter, a `link` row that
//! is dark while at least one put is on the rank's link, and optional markers (the
//! baseline's kernel starts). Bars of one family that follow each other on a row within
//! half a pixel are drawn as one, and waits shorter than half a pixel are left out, so the
//! file stays small at any size of taskflow.

use super::Labels;
use crate::sim::{Baseline, SimResult};
use std::fmt::Write;

/// One run to draw.
#[derive(Clone, Debug)]
pub struct Panel<'a> {
    /// The panel's heading, e.g. `taskflow (one kernel): 11542.0 µs`.
    pub title: String,
    /// The run whose per-core tiles the panel draws.
    pub result: &'a SimResult,
    /// Labelled instants (ns) drawn as dashed lines.
    pub markers: Vec<(u64, String)>,
}

impl<'a> Panel<'a> {
    /// A taskflow's simulated run.
    pub fn taskflow(result: &'a SimResult) -> Self {
        Panel {
            title: format!("taskflow (one kernel): {:.1} µs", result.makespan_ns as f64 / 1e3),
            result,
            markers: Vec::new(),
        }
    }

    /// A kernel-by-kernel baseline, with a marker where each kernel's tiles may start.
    pub fn baseline(b: &'a Baseline, labels: &Labels) -> Self {
        Panel {
            title: format!("kernel by kernel: {:.1} µs", b.result.makespan_ns as f64 / 1e3),
            result: &b.result,
            markers: b.kernels.iter().map(|k| (k.start_ns, labels.family(k.family).to_string())).collect(),
        }
    }
}

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 70.0;
const ROW: f64 = 3.0;
const LINK_ROW: f64 = 10.0;
/// Twenty colours: a taskflow of up to twenty families (the training step has sixteen) gives
/// each its own; the first ten are the forward's.
const PALETTE: [&str; 20] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    "#a0cbe8", "#ffbe7d", "#8cd17d", "#b6992d", "#499894", "#79706e", "#d37295", "#d4a6c8", "#6b4c9a", "#2f4b7c",
];
/// Height of one legend line; the legend wraps onto more lines when it is wider than the plot.
const LEGEND_LINE: f64 = 16.0;
const WAIT: &str = "#dddddd";

/// The colour of family `f`.
fn colour(f: usize) -> &'static str {
    PALETTE[f % PALETTE.len()]
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Bars `(start, end, colour)` merged when one follows the previous of the same colour
/// within `gap` ns. Input sorted by start.
fn merge(bars: &[(u64, u64, &'static str)], gap: u64) -> Vec<(u64, u64, &'static str)> {
    let mut out: Vec<(u64, u64, &'static str)> = Vec::new();
    for &(a, b, c) in bars {
        match out.last_mut() {
            Some(last) if last.2 == c && a <= last.1.saturating_add(gap) => last.1 = last.1.max(b),
            _ => out.push((a, b, c)),
        }
    }
    out
}

/// Round tick spacing: 1, 2 or 5 × 10^k ns, about `target` ticks over `span`.
fn tick_step(span: u64, target: u64) -> u64 {
    let raw = (span / target.max(1)).max(1);
    let mut step = 1u64;
    while step.saturating_mul(10) <= raw {
        step *= 10;
    }
    [1, 2, 5, 10].iter().map(|m| step * m).find(|&s| s >= raw).unwrap_or(step * 10)
}

/// The SVG of rank `rank` in every panel, on one time axis. See the [module docs](self).
pub fn svg_timeline(panels: &[Panel<'_>], rank: u32, labels: &Labels) -> String {
    let span = panels.iter().map(|p| p.result.makespan_ns).max().unwrap_or(0).max(1);
    let plot = WIDTH - LEFT - RIGHT;
    let x = |t: u64| LEFT + t as f64 / span as f64 * plot;
    let gap = (span as f64 / plot * 0.5) as u64;
    let mut body = String::new();
    // Legend: one entry per family, then the wait and link keys, wrapped at the plot's width.
    let mut entries: Vec<(String, &str, f64)> = (0..labels.families())
        .map(|f| {
            let name = escape(labels.family(f));
            let width = 30.0 + 7.5 * name.len() as f64;
            (name, colour(f), width)
        })
        .collect();
    entries.push(("waiting on a counter".into(), WAIT, 160.0));
    entries.push(("link busy".into(), "#333", 80.0));
    let (mut lx, mut ly) = (LEFT, 10.0);
    for (name, fill, width) in &entries {
        if lx > LEFT && lx + width > WIDTH {
            (lx, ly) = (LEFT, ly + LEGEND_LINE);
        }
        let _ = write!(
            body,
            r#"<rect x="{lx:.1}" y="{ly}" width="10" height="10" fill="{fill}"/><text x="{:.1}" y="{}">{name}</text>"#,
            lx + 14.0,
            ly + 9.0
        );
        lx += width;
    }
    let mut y = 30.0 + (ly - 10.0);
    for panel in panels {
        let r = panel.result;
        let cpr = r.cores_per_rank;
        y += 18.0;
        let _ = write!(body, r#"<text x="{LEFT}" y="{y:.1}" font-weight="bold">{}</text>"#, escape(&panel.title));
        y += 6.0;
        let top = y;
        // Per local core of `rank`: its bars, in start order.
        let mut rows: Vec<Vec<(u64, u64, &'static str)>> = vec![Vec::new(); cpr as usize];
        for t in r.tiles.iter().filter(|t| cpr > 0 && r.rank_of_core(t.core).raw() == rank) {
            let row = &mut rows[r.local_core(t.core) as usize];
            // Waits under half a pixel are invisible; dropping them lets the tiles around merge.
            if t.waits && t.start_ns > t.arrive_ns.saturating_add(gap) {
                row.push((t.arrive_ns, t.start_ns, WAIT));
            }
            row.push((t.start_ns, t.end_ns, colour(t.family.index())));
        }
        for (local, row) in rows.iter_mut().enumerate() {
            row.sort_by_key(|b| (b.0, b.1));
            let ry = top + local as f64 * ROW;
            for (a, b, c) in merge(row, gap) {
                let w = (x(b) - x(a)).max(0.2);
                let _ = write!(
                    body,
                    r#"<rect x="{:.1}" y="{ry:.1}" width="{w:.1}" height="{:.1}" fill="{c}"/>"#,
                    x(a),
                    ROW - 0.5
                );
            }
        }
        let aic = r.aic_per_rank.min(cpr);
        let group = |body: &mut String, from: u32, to: u32, name: &str| {
            if to > from {
                let (y0, y1) = (top + f64::from(from) * ROW, top + f64::from(to) * ROW);
                let _ = write!(
                    body,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{name} ×{}</text><line x1="{:.1}" y1="{y0:.1}" x2="{:.1}" y2="{y1:.1}" stroke="black"/>"#,
                    LEFT - 8.0,
                    (y0 + y1) / 2.0 + 4.0,
                    to - from,
                    LEFT - 4.0,
                    LEFT - 4.0
                );
            }
        };
        group(&mut body, 0, aic, "AIC");
        group(&mut body, aic, cpr, "AIV");
        y = top + f64::from(cpr) * ROW + 3.0;
        let mut busy: Vec<(u64, u64, &'static str)> =
            r.flows.iter().filter(|f| f.rank.raw() == rank).map(|f| (f.start_ns, f.end_ns, "#333")).collect();
        busy.sort_by_key(|b| (b.0, b.1));
        let _ =
            write!(body, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">link</text>"#, LEFT - 8.0, y + LINK_ROW - 1.0);
        for (a, b, c) in merge(&busy, gap) {
            let _ = write!(
                body,
                r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{LINK_ROW}" fill="{c}"/>"#,
                x(a),
                (x(b) - x(a)).max(0.2)
            );
        }
        y += LINK_ROW;
        // Labels alternate above and below the rows, so that close markers stay readable.
        for (i, (t, name)) in panel.markers.iter().enumerate() {
            let label_y = if i % 2 == 0 { top - 1.0 } else { y + 9.0 };
            let _ = write!(
                body,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{y:.1}" stroke="#555" stroke-dasharray="2,2"/><text x="{:.1}" y="{label_y:.1}" font-size="9">{}</text>"##,
                x(*t),
                top - 2.0,
                x(*t),
                x(*t) + 2.0,
                escape(name)
            );
        }
        y += 12.0;
    }
    // Time axis.
    y += 4.0;
    let _ = write!(body, r#"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="black"/>"#, LEFT + plot);
    let step = tick_step(span, 10);
    let mut t = 0;
    while t <= span {
        let _ = write!(
            body,
            r#"<line x1="{:.2}" y1="{y:.1}" x2="{:.2}" y2="{:.1}" stroke="black"/><text x="{:.2}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x(t),
            x(t),
            y + 4.0,
            x(t),
            y + 16.0,
            t as f64 / 1e3
        );
        t += step;
    }
    let _ =
        write!(body, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">µs (rank {rank})</text>"#, LEFT + plot, y + 30.0);
    let height = y + 40.0;
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height:.0}\" viewBox=\"0 0 {WIDTH} {height:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{body}\n</svg>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_of_a_family_merge_across_small_gaps_only() {
        let bars = [(0, 10, "a"), (11, 20, "a"), (30, 40, "a"), (40, 50, "b")];
        assert_eq!(merge(&bars, 1), vec![(0, 20, "a"), (30, 40, "a"), (40, 50, "b")]);
        assert_eq!(merge(&bars, 0), bars.to_vec());
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(10_000, 10), 1_000);
        assert_eq!(tick_step(13_000, 10), 2_000);
        assert_eq!(tick_step(45_000, 10), 5_000);
        assert_eq!(tick_step(3, 10), 1);
    }

    #[test]
    fn families_have_distinct_colours_up_to_twenty() {
        let colours: std::collections::BTreeSet<&str> = (0..20).map(colour).collect();
        assert_eq!(colours.len(), 20);
        assert!(!colours.contains(WAIT));
    }

    #[test]
    fn escapes_names() {
        assert_eq!(escape("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
    }
}
