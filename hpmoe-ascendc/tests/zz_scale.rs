use hpmoe_ascendc::emulator::{EmulateOptions, Emulation};
use hpmoe_core::exec::moe_reference::{moe_inputs, moe_reference};
use hpmoe_core::moe::{MoeShape, Routing};
#[test]
#[ignore]
fn scale() {
    let base = MoeShape::tiny(4);
    let shapes = vec![
        ("tiny(4)", MoeShape::tiny(4)),
        (
            "r4 a4 t64 h256 i128 e8",
            MoeShape {
                ranks: 4,
                aic_per_rank: 4,
                tokens_per_rank: 64,
                hidden: 256,
                intermediate: 128,
                experts: 8,
                top_k: 2,
                row_block: 16,
                gmm1_cols: 64,
                gmm2_cols: 64,
                sum_rows: 16,
                routing: Routing::Balanced,
            },
        ),
        (
            "r8 a8 t128 h512 i256 e16",
            MoeShape {
                ranks: 8,
                aic_per_rank: 8,
                tokens_per_rank: 128,
                hidden: 512,
                intermediate: 256,
                experts: 16,
                top_k: 4,
                row_block: 32,
                gmm1_cols: 128,
                gmm2_cols: 128,
                sum_rows: 32,
                routing: Routing::Balanced,
            },
        ),
        (
            "r8 a24 t256 h1024 i512 e32",
            MoeShape {
                ranks: 8,
                aic_per_rank: 24,
                tokens_per_rank: 256,
                hidden: 1024,
                intermediate: 512,
                experts: 32,
                top_k: 8,
                row_block: 64,
                gmm1_cols: 256,
                gmm2_cols: 256,
                sum_rows: 32,
                routing: Routing::Balanced,
            },
        ),
    ];
    let _ = base;
    for (name, shape) in shapes {
        let tf = match shape.taskflow() {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{name}: {e}");
                continue;
            }
        };
        let c = hpmoe_core::plan(&tf).unwrap();
        let k = hpmoe_ascendc::emit(&tf, &c).unwrap();
        let t = std::time::Instant::now();
        let em = Emulation::build(&k, &EmulateOptions::default()).unwrap();
        let build = t.elapsed();
        let inputs = moe_inputs(&shape, 7);
        let run = em.run(&tf, &inputs);
        match run {
            Ok(run) => {
                let r = moe_reference(&shape, &inputs).unwrap();
                let ok =
                    (0..shape.ranks).all(|rk| run.get(rk, "out").unwrap().first_difference(&r[rk as usize]).is_none());
                eprintln!(
                    "{name}: instances/rank {} build {:?} run {:?} bitwise={ok}",
                    shape.instances_per_rank(),
                    build,
                    run.wall
                );
            }
            Err(e) => eprintln!(
                "{name}: build {:?} FAILED {}",
                build,
                e.to_string().lines().take(4).collect::<Vec<_>>().join(" | ")
            ),
        }
    }
}
