//! The FAIL path of the MoE jobs: a wrong host result is reported, not hidden, and the job's
//! exit status is a failure.

use hpmoe_examples::report::{self, HostConfig, Job};
use hpmoe_examples::{ExampleError, host_check};
use hpmoe_host::exec::OpImpls;
use hpmoe_host::exec::moe_reference::{moe_inputs, moe_reference};
use hpmoe_host::moe::MoeShape;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A job over tiny layers (fast at every EP) whose host check compares against a reference
/// with one value changed, or fails to run at all.
fn job(broken: &'static str) -> Job<'static> {
    let run = move |profile: &hpmoe_core::cost::CostProfile| {
        let shape = MoeShape::tiny(2);
        let tf = shape.taskflow().map_err(ExampleError::Shape)?;
        let inputs = moe_inputs(&shape, 7);
        let mut expected = moe_reference(&shape, &inputs).map_err(ExampleError::Reference)?;
        match broken {
            "value" => {
                let mut values = expected[1].to_f32();
                values[5] += 1.0;
                expected[1] = hpmoe_host::exec::HostTensor::from_f32(expected[1].dtype(), expected[1].shape(), &values);
            }
            _ => return Err(ExampleError::MissingOutput { output: "out".into(), rank: 0 }),
        }
        host_check(&tf, &OpImpls::builtin(), profile, &inputs, "out", &expected)
    };
    Job {
        title: "tiny layer with a broken reference",
        folder: "host_check_fail",
        taskflow: &|_, _| MoeShape::tiny(2).taskflow().map_err(ExampleError::Shape),
        emit: Default::default(),
        headers: &[],
        notes: &[],
        extra: None,
        routed: None,
        variant: None,
        training: None,
        readme_timelines: false,
        host_checks: vec![HostConfig {
            name: "tiny(2)".into(),
            description: "MoeShape::tiny(2)".into(),
            run: Box::new(run),
        }],
        emulator_checks: Vec::new(),
    }
}

/// Runs the job as `main` would, in an output folder of its own: the tests of this file run in
/// parallel, and one removing a shared folder while another writes into it made them flaky.
fn run(job: &Job<'_>) -> Result<bool, ExampleError> {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("hpmoe-host-check-fail-{}-{run}", std::process::id()));
    let args = ["--out", out.to_str().unwrap(), "--json"].map(String::from).to_vec();
    let outcome = report::run_with(job, args);
    let _ = std::fs::remove_dir_all(&out);
    outcome
}

#[test]
fn a_wrong_value_fails_the_job() {
    let job = job("value");
    let verdict = report::host_checks(&job, &hpmoe_core::cost::CostProfile::ascend_a3_die());
    let failure = verdict.failure.expect("the changed value is found");
    assert!(failure.starts_with("tiny(2): rank 1 out: "), "{failure}");
    assert!(matches!(run(&job), Ok(false)));
    let code = report::exit_code(run(&job));
    assert_eq!(format!("{code:?}"), format!("{:?}", ExitCode::FAILURE));
}

#[test]
fn a_check_that_cannot_run_fails_the_job() {
    let job = job("run");
    let verdict = report::host_checks(&job, &hpmoe_core::cost::CostProfile::ascend_a3_die());
    assert_eq!(verdict.failure.as_deref(), Some("tiny(2): the run has no `out` on rank 0"));
    assert!(matches!(run(&job), Ok(false)));
    assert_eq!(format!("{:?}", report::exit_code(Ok(true))), format!("{:?}", ExitCode::SUCCESS));
    assert_eq!(format!("{:?}", report::exit_code(Err(ExampleError::NoRanks))), format!("{:?}", ExitCode::FAILURE));
}
