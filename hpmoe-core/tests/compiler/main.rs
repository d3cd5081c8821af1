//! The compiler's integration tests through its public API, one module per area (one test binary
//! for the crate: linking one binary instead of one per file is most of what it saves the test
//! build): the checks and their messages, the front-end (`syntax*`), ordered accumulation,
//! the certificate check, the `fence` op's relaying, properties and robustness over random and arbitrary taskflows, the cost
//! of the transposed matmuls, and the schedule table's forms (`table`).

mod accumulation;
mod certify;
mod checks;
mod fence;
mod properties;
mod robustness;
mod syntax;
mod syntax_alias;
mod syntax_fuzz;
mod table;
mod transposed_matmul;
