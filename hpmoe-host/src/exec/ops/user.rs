//! The reference bodies of a `#[taskflow]` program's own ops (`#[op] fn …`) as executor ops,
//! so a taskflow written in the DSL runs on the host executor like a builder-made one.

use super::{Arg, ArgDesc, OpError, OpImpls, RefOp, UserOpProblem};
use hpmoe_core::dsl::{Program, TileData, UserOp};

/// A DSL user op seen through [`RefOp`]: its arguments are loaded as `f32` [`TileData`]
/// (row-major, the box's shape), the user's body runs on them, and the arguments the op's
/// signature writes are stored back (rounded to their tensors' element types).
#[derive(Debug)]
struct UserOpAdapter(&'static UserOp);

impl RefOp for UserOpAdapter {
    fn check(&self, args: &[ArgDesc]) -> Result<(), OpError> {
        if args.len() == self.0.params {
            Ok(())
        } else {
            Err(self.error(UserOpProblem::Regions { expected: self.0.params, got: args.len() }))
        }
    }

    fn run(&self, args: &[Arg<'_>]) -> Result<(), OpError> {
        let mut data: Vec<TileData> = args
            .iter()
            .map(|a| {
                let shape: Vec<usize> = a.desc().shape.iter().map(|&d| d as usize).collect();
                TileData::new(&shape, a.load()).ok_or_else(|| self.error(UserOpProblem::ValuesDoNotFit))
            })
            .collect::<Result<_, _>>()?;
        self.0.run(&mut data).map_err(|e| self.error(UserOpProblem::Body(e)))?;
        for (arg, out) in args.iter().zip(&data) {
            if arg.desc().access.writes() {
                if out.values.len() != arg.desc().elements() {
                    return Err(self.error(UserOpProblem::ChangedSize { param: arg.desc().param.clone() }));
                }
                arg.store(&out.values)?;
            }
        }
        Ok(())
    }
}

impl UserOpAdapter {
    fn error(&self, problem: UserOpProblem) -> OpError {
        OpError::UserOp { op: self.0.name.to_string(), problem: Box::new(problem) }
    }
}

impl OpImpls {
    /// The built-in reference ops plus `program`'s own ops, ready for
    /// [`Executor::for_program`](crate::exec::Executor::for_program).
    ///
    /// # Errors
    /// [`OpError::AlreadyRegistered`] if one of the program's ops has a built-in op's name.
    pub fn for_program(program: &Program) -> Result<OpImpls, OpError> {
        let mut impls = OpImpls::builtin();
        for op in program.user_ops {
            impls.register(op.name, UserOpAdapter(op))?;
        }
        Ok(impls)
    }
}
