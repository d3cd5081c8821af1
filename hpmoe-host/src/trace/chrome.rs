//! Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open.
//!
//! One process per rank; in it one track per core (`aic0`, …, `aiv47`, in core order) and
//! the link's puts on `link` tracks below them (concurrent puts on separate lanes, each
//! put on the first lane free at its start). On a core track: a slice per tile named by
//! its family (the instance's coordinates in its args), a `wait` slice while the core is
//! blocked on a counter and a `signal` slice while it issues signals. A flow arrow goes
//! from each tile whose signal released a wait to the tile that waited, when they ran on
//! different cores. Timestamps are µs with ns precision.

use super::Labels;
use crate::sim::SimResult;
use serde_json::{Value, json};

/// The Chrome trace of `result`. Deterministic: equal results give identical text.
pub fn chrome_trace(result: &SimResult, labels: &Labels) -> String {
    let cpr = result.cores_per_rank.max(1);
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut events: Vec<Value> = Vec::new();
    let lanes = link_lanes(result);
    for rank in 0..result.ranks {
        events.push(json!({"ph": "M", "name": "process_name", "pid": rank, "args": {"name": format!("rank {rank}")}}));
        events.push(json!({"ph": "M", "name": "process_sort_index", "pid": rank, "args": {"sort_index": rank}}));
        for local in 0..cpr {
            let name = if local < result.aic_per_rank {
                format!("aic{local}")
            } else {
                format!("aiv{}", local - result.aic_per_rank)
            };
            events.push(json!({"ph": "M", "name": "thread_name", "pid": rank, "tid": local, "args": {"name": name}}));
            events.push(
                json!({"ph": "M", "name": "thread_sort_index", "pid": rank, "tid": local, "args": {"sort_index": local}}),
            );
        }
        let lane_count =
            lanes.iter().zip(&result.flows).filter(|(_, f)| f.rank.raw() == rank).map(|(l, _)| l + 1).max();
        for lane in 0..lane_count.unwrap_or(0) {
            let tid = cpr + lane;
            events.push(json!({"ph": "M", "name": "thread_name", "pid": rank, "tid": tid, "args": {"name": format!("link {lane}")}}));
            events.push(
                json!({"ph": "M", "name": "thread_sort_index", "pid": rank, "tid": tid, "args": {"sort_index": tid}}),
            );
        }
    }
    let mut arrows = 0u64;
    for t in &result.tiles {
        let (rank, local) = (result.rank_of_core(t.core).raw(), result.local_core(t.core));
        if t.start_ns > t.arrive_ns && t.waits {
            events.push(json!({"ph": "X", "name": "wait", "cat": "sync", "pid": rank, "tid": local,
                "ts": us(t.arrive_ns), "dur": us(t.start_ns - t.arrive_ns)}));
        }
        events.push(
            json!({"ph": "X", "name": labels.family(t.family.index()), "cat": "tile", "pid": rank, "tid": local,
            "ts": us(t.start_ns), "dur": us(t.end_ns - t.start_ns),
            "args": {"instance": labels.instance(t.node), "node": t.node}}),
        );
        if t.done_ns > t.end_ns {
            events.push(json!({"ph": "X", "name": "signal", "cat": "sync", "pid": rank, "tid": local,
                "ts": us(t.end_ns), "dur": us(t.done_ns - t.end_ns)}));
        }
        if let Some(p) = t.released_by {
            let src = &result.tiles[p.index()];
            if src.core != t.core {
                // The start binds to the producer's last instant, the end to the waiter's slice.
                let from = src.end_ns.saturating_sub(1).max(src.start_ns);
                events.push(json!({"ph": "s", "id": arrows, "name": "signal", "cat": "dep",
                    "pid": result.rank_of_core(src.core).raw(), "tid": result.local_core(src.core), "ts": us(from)}));
                events.push(json!({"ph": "f", "bp": "e", "id": arrows, "name": "signal", "cat": "dep",
                    "pid": rank, "tid": local, "ts": us(t.start_ns)}));
                arrows += 1;
            }
        }
    }
    for (f, &lane) in result.flows.iter().zip(&lanes) {
        events.push(json!({"ph": "X", "name": "put", "cat": "link", "pid": f.rank, "tid": cpr + lane,
            "ts": us(f.start_ns), "dur": us(f.end_ns - f.start_ns),
            "args": {"instance": labels.instance(f.node), "bytes": f.bytes, "landed_us": us(f.delivered_ns)}}));
    }
    let doc = json!({"displayTimeUnit": "ns", "traceEvents": events});
    doc.to_string()
}

/// Per flow (in `result.flows` order): its lane on its rank's link, the first lane free
/// at its start.
fn link_lanes(result: &SimResult) -> Vec<u32> {
    let mut order: Vec<usize> = (0..result.flows.len()).collect();
    order.sort_by_key(|&i| (result.flows[i].rank, result.flows[i].start_ns, result.flows[i].node));
    let mut lanes = vec![0u32; result.flows.len()];
    let mut busy_until: Vec<Vec<u64>> = vec![Vec::new(); result.ranks as usize];
    for i in order {
        let f = &result.flows[i];
        let ends = &mut busy_until[f.rank.index()];
        let lane = match ends.iter().position(|&e| e <= f.start_ns) {
            Some(l) => l,
            None => {
                ends.push(0);
                ends.len() - 1
            }
        };
        ends[lane] = f.end_ns;
        lanes[i] = lane as u32;
    }
    lanes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{FlowRecord, TileRecord};
    use hpmoe_core::ids::{CoreId, FamilyId, NodeId, RankId};

    fn labels() -> Labels {
        let mut tf = hpmoe_core::model::Taskflow::new("t", hpmoe_core::model::MachineProfile::small(1, 1));
        tf.tile("a", hpmoe_core::model::CoreKind::Aic, |t| {
            t.grid("i", 2);
        });
        tf.tile("b", hpmoe_core::model::CoreKind::Aiv, |t| {
            t.grid("j", 1);
        });
        let exp = hpmoe_core::expand::Expanded {
            space: hpmoe_core::expand::InstanceSpace::new(1, [smallvec::smallvec![2], smallvec::smallvec![1]]),
            dag: hpmoe_core::graph::Dag::from_pairs(3, &[]),
            family_core: vec![hpmoe_core::model::CoreKind::Aic, hpmoe_core::model::CoreKind::Aiv],
            family_work: vec![Default::default(); 2],
            rotation: vec![0; 3].into(),
        };
        Labels::new(&tf, &exp)
    }

    #[test]
    fn tracks_slices_lanes_and_arrows() {
        let tile = |node, family, core, arrive, start, end, done, released_by: Option<u32>| TileRecord {
            node: NodeId::new(node),
            family: FamilyId::new(family),
            core: CoreId::new(core),
            arrive_ns: arrive,
            start_ns: start,
            end_ns: end,
            done_ns: done,
            released_by: released_by.map(NodeId::new),
            waits: released_by.is_some(),
            computes: true,
        };
        let flow = |node, start, end| FlowRecord {
            node: NodeId::new(node),
            rank: RankId::new(0),
            to: RankId::new(1),
            bytes: 8,
            start_ns: start,
            end_ns: end,
            delivered_ns: end + 5,
        };
        let result = SimResult {
            ranks: 1,
            cores_per_rank: 3,
            aic_per_rank: 1,
            makespan_ns: 3000,
            tiles: vec![
                tile(0, 0, 0, 0, 0, 1000, 1010, None),
                tile(1, 0, 0, 1010, 1010, 2000, 2000, None),
                tile(2, 1, 1, 0, 1500, 3000, 3000, Some(0)),
            ],
            // Two overlapping puts take two lanes; the third reuses lane 0.
            flows: vec![flow(0, 0, 100), flow(1, 50, 150), flow(2, 120, 130)],
            ..SimResult::default()
        };
        assert_eq!(link_lanes(&result), vec![0, 1, 0]);
        let text = chrome_trace(&result, &labels());
        let doc: Value = serde_json::from_str(&text).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        let named = |ph: &str, name: &str| events.iter().filter(|e| e["ph"] == ph && e["name"] == name).count();
        assert_eq!(named("X", "a"), 2);
        assert_eq!(named("X", "b"), 1);
        assert_eq!(named("X", "wait"), 1);
        assert_eq!(named("X", "signal"), 1);
        assert_eq!(named("X", "put"), 3);
        assert_eq!((named("s", "signal"), named("f", "signal")), (1, 1));
        let threads: Vec<&str> =
            events.iter().filter(|e| e["name"] == "thread_name").map(|e| e["args"]["name"].as_str().unwrap()).collect();
        assert_eq!(threads, vec!["aic0", "aiv0", "aiv1", "link 0", "link 1"]);
        let b = events.iter().find(|e| e["name"] == "b").unwrap();
        assert_eq!(
            (b["ts"].as_f64(), b["dur"].as_f64(), b["args"]["instance"].as_str()),
            (Some(1.5), Some(1.5), Some("b(j=0)"))
        );
        let arrow_start = events.iter().find(|e| e["ph"] == "s").unwrap();
        assert_eq!((arrow_start["tid"].as_u64(), arrow_start["ts"].as_f64()), (Some(0), Some(0.999)));
        assert_eq!(text, chrome_trace(&result, &labels()), "deterministic");
    }
}
