//! Typed indices: the ids of nodes, cores, counters, ranks and families as distinct types, a
//! vector indexed by one of them, and one packed optional id for "none".
//!
//! Every id is a `u32` in a newtype (`#[repr(transparent)]`, so it compiles to the same code
//! as the bare integer), so a core id cannot index a per-node vector and a counter cannot be
//! passed where a rank is expected. The value `u32::MAX` is reserved: it is what
//! [`OptId`] stores for "none", so an `OptId<K>` is as small as a `K` and a table of them is
//! a plain `u32` array. [`Id::new`] refuses the reserved value in debug builds, and
//! [`Id::try_new`] always does.
//!
//! The ids and what they number:
//!
//! | id | numbers | range |
//! |----|---------|-------|
//! | [`NodeId`] | expanded tile instances, all ranks (`rank * per_rank + local`) | `0..space.len()` |
//! | [`CoreId`] | global cores (`rank * cores_per_rank + local core`, AIC first) | `0..profile.total_cores()` |
//! | [`CounterId`] | event counters of one rank | `0..counters_per_rank[rank]` |
//! | [`RankId`] | ranks (expert-parallel size) | `0..profile.ranks` |
//! | [`FamilyId`] | tile families, in declaration order | `0..families` |
//!
//! The binary table stores raw `u32`s; the conversion is at its encode and decode boundary
//! ([`Id::raw`], [`Id::new`]). The graph type [`crate::graph::Csr`] is typed by its row and
//! target ids (node → node in the instance DAG, core → node in a placement's queues).
//!
//! ```
//! use hpmoe_core::ids::{CoreId, Id, IdVec, NodeId, OptId};
//!
//! let mut core_of: IdVec<NodeId, OptId<CoreId>> = IdVec::filled(3, OptId::NONE);
//! core_of[NodeId::new(1)] = OptId::some(CoreId::new(4));
//! assert_eq!(core_of[NodeId::new(1)].get(), Some(CoreId::new(4)));
//! assert!(core_of[NodeId::new(0)].is_none());
//! let placed: Vec<NodeId> = core_of.iter().filter(|(_, c)| c.is_some()).map(|(v, _)| v).collect();
//! assert_eq!(placed, [NodeId::new(1)]);
//! assert_eq!(size_of::<OptId<CoreId>>(), size_of::<u32>());
//! ```

use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// The raw value [`OptId`] uses for "none"; no id has it.
pub const RESERVED: u32 = u32::MAX;

/// A typed `u32` index (see the [module docs](self)).
pub trait Id: Copy + Eq + Ord + Hash + fmt::Debug + fmt::Display {
    /// The id with raw value `raw`.
    ///
    /// # Panics
    /// In debug builds, if `raw` is [`RESERVED`] (use [`Id::try_new`] for unchecked input).
    fn new(raw: u32) -> Self;

    /// The raw value.
    fn raw(self) -> u32;

    /// The id with raw value `raw`, or `None` for [`RESERVED`].
    fn try_new(raw: u32) -> Option<Self> {
        (raw != RESERVED).then(|| Self::new(raw))
    }

    /// The id of index `index`.
    ///
    /// # Panics
    /// If `index` does not fit an id (`index >= u32::MAX`).
    fn from_index(index: usize) -> Self {
        match u32::try_from(index) {
            Ok(raw) if raw != RESERVED => Self::new(raw),
            _ => panic!("index {index} does not fit a u32 id"),
        }
    }

    /// The raw value as a `usize`, for indexing.
    fn index(self) -> usize {
        self.raw() as usize
    }
}

/// Defines a `u32` id newtype implementing [`Id`], shown (`Debug` and `Display`) as its bare
/// number, so messages read as they did with bare integers. For ids of other crates and
/// private ones (a simulator's task ids, a clock store's slots).
///
/// ```
/// hpmoe_core::define_id! {
///     /// A slot of some arena.
///     pub struct SlotId;
/// }
/// use hpmoe_core::ids::{Id, OptId};
/// assert_eq!(OptId::some(SlotId::new(3)).get().map(SlotId::raw), Some(3));
/// ```
#[macro_export]
macro_rules! define_id {
    ($(#[$meta:meta])* $vis:vis struct $name:ident;) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        $vis struct $name(u32);

        #[allow(dead_code)]
        impl $name {
            /// The id with raw value `raw` (as `Id::new`, without importing the trait, and in
            /// `const`s).
            ///
            /// # Panics
            /// In debug builds, if `raw` is `u32::MAX` (reserved for `OptId`'s none).
            #[inline]
            pub const fn new(raw: u32) -> Self {
                debug_assert!(raw != $crate::ids::RESERVED, "u32::MAX is reserved for OptId's none");
                $name(raw)
            }

            /// The id of index `index` (as `Id::from_index`).
            ///
            /// # Panics
            /// If `index` does not fit an id.
            #[inline]
            pub fn from_index(index: usize) -> Self {
                <Self as $crate::ids::Id>::from_index(index)
            }

            /// The raw value.
            #[inline]
            pub const fn raw(self) -> u32 {
                self.0
            }

            /// The raw value as a `usize`, for indexing.
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl $crate::ids::Id for $name {
            #[inline]
            fn new(raw: u32) -> Self {
                $name::new(raw)
            }

            #[inline]
            fn raw(self) -> u32 {
                self.0
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(&self.0, f)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

define_id! {
    /// An expanded tile instance on some rank: `rank * per_rank + local`
    /// ([`crate::expand::InstanceSpace`]); a node of the instance DAG.
    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(transparent)]
    pub struct NodeId;
}

define_id! {
    /// A global core: `rank * cores_per_rank + local core`, a rank's AICs first
    /// ([`crate::model::MachineProfile::split_core`]).
    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(transparent)]
    pub struct CoreId;
}

define_id! {
    /// An event counter of one rank (counters are numbered per rank from 0; which rank is
    /// carried alongside, as in [`crate::schedule::Signal`]).
    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(transparent)]
    pub struct CounterId;
}

define_id! {
    /// A rank (one device of the expert-parallel group).
    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(transparent)]
    pub struct RankId;
}

define_id! {
    /// A tile family, in declaration order.
    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(transparent)]
    pub struct FamilyId;
}

/// An optional id packed into the id's own `u32`, [`RESERVED`] meaning none: the one
/// sentinel of the crate, as small as `K` (where `Option<K>` takes twice the room).
///
/// Ordered by raw value, so none comes after every id (as the bare `u32::MAX` sentinels it
/// replaces did).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct OptId<K> {
    raw: u32,
    id: PhantomData<K>,
}

impl<K: Id> OptId<K> {
    /// No id.
    pub const NONE: Self = OptId { raw: RESERVED, id: PhantomData };

    /// The id `id`.
    #[inline]
    pub fn some(id: K) -> Self {
        OptId { raw: id.raw(), id: PhantomData }
    }

    /// The id, if any.
    #[inline]
    pub fn get(self) -> Option<K> {
        (self.raw != RESERVED).then(|| K::new(self.raw))
    }

    /// Whether there is no id.
    #[inline]
    pub fn is_none(self) -> bool {
        self.raw == RESERVED
    }

    /// Whether there is an id.
    #[inline]
    pub fn is_some(self) -> bool {
        !self.is_none()
    }

    /// Whether this is `Some(id)`.
    #[inline]
    pub fn is(self, id: K) -> bool {
        self.raw == id.raw()
    }
}

impl<K: Id> Default for OptId<K> {
    fn default() -> Self {
        Self::NONE
    }
}

impl<K: Id> From<K> for OptId<K> {
    fn from(id: K) -> Self {
        Self::some(id)
    }
}

impl<K: Id> From<Option<K>> for OptId<K> {
    fn from(id: Option<K>) -> Self {
        id.map_or(Self::NONE, Self::some)
    }
}

impl<K: Id> From<OptId<K>> for Option<K> {
    fn from(id: OptId<K>) -> Self {
        id.get()
    }
}

impl<K: Id> fmt::Debug for OptId<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// Serialised as the raw `u32` ([`RESERVED`] for none), as the bare sentinels it replaces were.
impl<K> serde::Serialize for OptId<K> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(self.raw)
    }
}

/// Read from the raw `u32` [`OptId`]'s `Serialize` writes.
impl<'de, K> serde::Deserialize<'de> for OptId<K> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(OptId { raw: u32::deserialize(deserializer)?, id: PhantomData })
    }
}

/// A vector indexed by the id type `K` only: `v[k]` for a `K`, never a bare integer.
/// Iteration yields `(K, &V)`. The same memory and indexing code as the `Vec<V>` it wraps.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IdVec<K, V> {
    raw: Vec<V>,
    id: PhantomData<fn(K) -> K>,
}

impl<K: Id, V> IdVec<K, V> {
    /// An empty vector.
    pub fn new() -> Self {
        Self::from_vec(Vec::new())
    }

    /// An empty vector with room for `capacity` values.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::from_vec(Vec::with_capacity(capacity))
    }

    /// The vector whose value for id `k` is `raw[k.index()]`.
    pub fn from_vec(raw: Vec<V>) -> Self {
        IdVec { raw, id: PhantomData }
    }

    /// `len` copies of `value` (`vec![value; len]`).
    pub fn filled(len: usize, value: V) -> Self
    where
        V: Clone,
    {
        Self::from_vec(vec![value; len])
    }

    /// Number of values (ids `0..len`).
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Appends `value`, returning its id.
    ///
    /// # Panics
    /// If the new id does not fit (`len >= u32::MAX`).
    pub fn push(&mut self, value: V) -> K {
        let id = K::from_index(self.raw.len());
        self.raw.push(value);
        id
    }

    /// The value of `id`, if in range.
    pub fn get(&self, id: K) -> Option<&V> {
        self.raw.get(id.index())
    }

    /// The ids `0..len`.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator + use<K, V> {
        (0..self.raw.len()).map(K::from_index)
    }

    /// `(id, value)` in id order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> + ExactSizeIterator {
        self.raw.iter().enumerate().map(|(i, v)| (K::from_index(i), v))
    }

    /// `(id, value)` in id order, mutably.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (K, &mut V)> + ExactSizeIterator {
        self.raw.iter_mut().enumerate().map(|(i, v)| (K::from_index(i), v))
    }

    /// The values in id order, without their ids.
    pub fn values(&self) -> std::slice::Iter<'_, V> {
        self.raw.iter()
    }

    /// The values as a slice (index `k.index()` for id `k`).
    pub fn as_slice(&self) -> &[V] {
        &self.raw
    }

    /// The underlying vector.
    pub fn into_vec(self) -> Vec<V> {
        self.raw
    }

    /// The vector of `f(value)` for every value, in place when `W` has `V`'s layout.
    pub fn map<W>(self, f: impl FnMut(V) -> W) -> IdVec<K, W> {
        IdVec::from_vec(self.raw.into_iter().map(f).collect())
    }
}

impl<K: Id, V> Default for IdVec<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Id, V> From<Vec<V>> for IdVec<K, V> {
    fn from(raw: Vec<V>) -> Self {
        Self::from_vec(raw)
    }
}

impl<K: Id, V> FromIterator<V> for IdVec<K, V> {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        Self::from_vec(iter.into_iter().collect())
    }
}

impl<K: Id, V> Index<K> for IdVec<K, V> {
    type Output = V;

    #[inline]
    fn index(&self, id: K) -> &V {
        &self.raw[id.index()]
    }
}

impl<K: Id, V> IndexMut<K> for IdVec<K, V> {
    #[inline]
    fn index_mut(&mut self, id: K) -> &mut V {
        &mut self.raw[id.index()]
    }
}

impl<K, V: fmt::Debug> fmt::Debug for IdVec<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.raw.fmt(f)
    }
}

impl<K: Id, V: PartialEq> PartialEq<Vec<V>> for IdVec<K, V> {
    fn eq(&self, other: &Vec<V>) -> bool {
        self.raw == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_optional_ids_are_as_small_as_u32() {
        assert_eq!(size_of::<NodeId>(), 4);
        assert_eq!(size_of::<OptId<NodeId>>(), 4);
        assert_eq!(size_of::<IdVec<NodeId, u64>>(), size_of::<Vec<u64>>());
    }

    #[test]
    fn optional_ids_round_trip() {
        for raw in [0, 1, 7, 1 << 20, RESERVED - 1] {
            let id = CoreId::new(raw);
            let packed = OptId::some(id);
            assert!(packed.is_some() && !packed.is_none() && packed.is(id));
            assert_eq!(packed.get(), Some(id));
            assert_eq!(OptId::from(Some(id)), packed);
            assert_eq!(Option::<CoreId>::from(packed), Some(id));
            assert_eq!(format!("{packed:?}"), format!("Some({raw})"));
        }
        let none = OptId::<CoreId>::NONE;
        assert!(none.is_none() && none.get().is_none());
        assert_eq!(OptId::<CoreId>::from(None), none);
        assert_eq!(OptId::<CoreId>::default(), none);
        assert_eq!(format!("{none:?}"), "None");
    }

    #[test]
    fn none_orders_after_every_id() {
        assert!(OptId::some(CounterId::new(RESERVED - 1)) < OptId::NONE);
        assert!(OptId::some(CounterId::new(0)) < OptId::some(CounterId::new(1)));
    }

    #[test]
    fn the_reserved_value_is_no_id() {
        assert_eq!(RankId::try_new(RESERVED), None);
        assert_eq!(RankId::try_new(3), Some(RankId::new(3)));
        assert!(std::panic::catch_unwind(|| FamilyId::from_index(RESERVED as usize)).is_err());
        assert!(std::panic::catch_unwind(|| FamilyId::from_index(usize::MAX)).is_err());
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "reserved")]
    fn new_refuses_the_reserved_value_in_debug_builds() {
        let _ = NodeId::new(RESERVED);
    }

    #[test]
    fn ids_show_as_their_number_and_serialise_as_it() {
        let id = NodeId::new(42);
        assert_eq!(format!("{id} {id:?}"), "42 42");
        assert_eq!(serde_json::to_string(&id).unwrap(), "42");
        assert_eq!(serde_json::from_str::<NodeId>("42").unwrap(), id);
    }

    #[test]
    fn optional_ids_serialise_as_their_raw_value() {
        assert_eq!(serde_json::to_string(&OptId::some(NodeId::new(7))).unwrap(), "7");
        assert_eq!(serde_json::to_string(&OptId::<NodeId>::NONE).unwrap(), u32::MAX.to_string());
        for packed in [OptId::some(NodeId::new(7)), OptId::NONE] {
            let json = serde_json::to_string(&packed).unwrap();
            assert_eq!(serde_json::from_str::<OptId<NodeId>>(&json).unwrap(), packed);
        }
    }

    #[test]
    fn id_vectors_index_and_iterate_by_id() {
        let mut v: IdVec<RankId, &str> = IdVec::new();
        assert_eq!(v.push("a"), RankId::new(0));
        assert_eq!(v.push("b"), RankId::new(1));
        v[RankId::new(0)] = "c";
        assert_eq!(v.iter().collect::<Vec<_>>(), [(RankId::new(0), &"c"), (RankId::new(1), &"b")]);
        assert_eq!(v.keys().rev().collect::<Vec<_>>(), [RankId::new(1), RankId::new(0)]);
        assert_eq!(v.get(RankId::new(2)), None);
        assert_eq!(v, vec!["c", "b"]);
        for (k, x) in v.iter_mut() {
            if k == RankId::new(1) {
                *x = "d";
            }
        }
        assert_eq!(v.into_vec(), ["c", "d"]);
    }
}
