use hpmoe_macros::taskflow;

#[taskflow(profile = small(1), ranks = 2)]
struct Flow;

fn main() {}
