//! Runnable examples of hpmoe live in `examples/examples/`.
