//! trybuild cases for the hpmoe macros live in `tests/`.
