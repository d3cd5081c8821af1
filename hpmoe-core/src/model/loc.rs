//! Source locations carried by every IR node.
//!
//! A [`Loc`] is an optional [`LocId`], an opaque index: [`Loc::NONE`] for a node with no
//! known origin (generated, or built without location tracking). It is the crate's one
//! sentinel type ([`OptId`]) under its own name, so "no location" is the same `u32::MAX` it
//! always was and a serialised taskflow reads as before (a bare number). The IR itself only
//! stores where a node came from as a [`SourcePos`] (file, line, column) when the producer
//! knows it; a front-end such as the proc-macro keeps its own side table (for instance of
//! `proc_macro2::Span`s) indexed by the same id, so diagnostics can be reported at the exact
//! token.

use crate::ids::OptId;
use serde::{Deserialize, Serialize};

crate::define_id! {
    /// A registered source location: its index in the taskflow's [`SourceMap`] (and in a
    /// front-end's side table of the same locations).
    pub struct LocId;
}

/// Opaque handle to the place in user code an IR node came from, or [`Loc::NONE`] (`OptId`'s
/// none: a node with no known origin, generated or built without location tracking; also the
/// default). Serialised as its raw `u32`, none as `u32::MAX`.
pub type Loc = OptId<LocId>;

/// A human-readable position: what a build script or the builder API can report.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SourcePos {
    /// The file, as the producer names it (relative to the crate, for `#[track_caller]` positions).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl std::fmt::Display for SourcePos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// The table that gives a [`Loc`] its [`SourcePos`], owned by the taskflow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceMap {
    positions: Vec<Option<SourcePos>>,
}

impl SourceMap {
    /// Registers a new location and returns its handle.
    pub fn add(&mut self, pos: Option<SourcePos>) -> Loc {
        let id = u32::try_from(self.positions.len()).expect("more than 2^32 source locations");
        assert!(id != u32::MAX, "more than 2^32 - 1 source locations");
        self.positions.push(pos);
        Loc::some(LocId::new(id))
    }

    /// Registers the caller's caller position (for builder methods marked `#[track_caller]`).
    #[track_caller]
    pub fn here(&mut self) -> Loc {
        let l = std::panic::Location::caller();
        self.add(Some(SourcePos { file: l.file().to_string(), line: l.line(), column: l.column() }))
    }

    /// The position of `loc`, if it is this map's and its producer knew it.
    pub fn get(&self, loc: Loc) -> Option<&SourcePos> {
        self.positions.get(loc.get()?.index()).and_then(Option::as_ref)
    }

    /// Number of locations registered (with or without a position).
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether no location was registered.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}
