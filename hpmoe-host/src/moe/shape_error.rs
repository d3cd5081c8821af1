//! Why a [`MoeShape`] has no taskflow: every rule of its layout it breaks, with the shape.

use super::MoeShape;
use std::fmt;

/// One rule of the layer's layout ([`MoeShape::validate`], and for the backward and training
/// step [`MoeShape::pass_taskflow`]'s extra two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeRule {
    /// Every size (and the rank and AIC counts) must be positive; checked first, alone.
    PositiveSizes,
    /// `experts` must be a multiple of `ranks`.
    ExpertsPerRank,
    /// `gmm1_cols` must divide `2 * intermediate`.
    Gmm1ColsDivide,
    /// `gmm1_cols` must be even (a gate half and an up half).
    Gmm1ColsEven,
    /// `gmm2_cols` must divide `hidden`.
    Gmm2ColsDivide,
    /// `sum_rows` must divide `tokens_per_rank`.
    SumRowsDivide,
    /// Balanced: the routed rows must split evenly over the experts.
    RoutedRowsSplit,
    /// Balanced: the rows per expert must split evenly over the source ranks.
    RowsPerExpertSplit,
    /// Balanced: the rows per source must be a positive multiple of `row_block`.
    RowsPerSourceBlocks,
    /// Natural: `tokens_per_rank * top_k * ranks` must not overflow.
    RoutedRowsOverflow,
    /// Natural: `top_k` must not exceed `experts`.
    TopKExperts,
    /// Natural: the capacity must be a positive multiple of `row_block`.
    CapacityBlocks,
    /// Natural: `experts * capacity` must fit an `i32` slot index.
    SlotIndexFits,
    /// Backward, balanced: `wgrad_rows` must be a positive multiple of `row_block` dividing the
    /// rows per expert.
    WgradRows {
        /// The rows per expert.
        rows_per_expert: u64,
    },
    /// Backward, balanced: `row_block` must be a multiple of `top_k` (a combine-backward block
    /// of slots starts at a token).
    RowBlockTopK,
    /// Backward, natural: `wgrad_source_groups` must be a positive divisor of `ranks` (each
    /// weight-gradient tile sums whole source ranks' slots).
    WgradSourceGroups,
}

impl ShapeRule {
    /// Whether the rule is one of the backward's own (beyond the forward's).
    pub fn is_backward(self) -> bool {
        matches!(self, ShapeRule::WgradRows { .. } | ShapeRule::RowBlockTopK | ShapeRule::WgradSourceGroups)
    }
}

impl fmt::Display for ShapeRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeRule::PositiveSizes => f.write_str("every size must be positive"),
            ShapeRule::ExpertsPerRank => f.write_str("experts must be a multiple of ranks"),
            ShapeRule::Gmm1ColsDivide => f.write_str("gmm1_cols must divide 2 * intermediate"),
            ShapeRule::Gmm1ColsEven => f.write_str("gmm1_cols must be even (a gate half and an up half)"),
            ShapeRule::Gmm2ColsDivide => f.write_str("gmm2_cols must divide hidden"),
            ShapeRule::SumRowsDivide => f.write_str("sum_rows must divide tokens_per_rank"),
            ShapeRule::RoutedRowsSplit => f.write_str("routed rows must split evenly over experts"),
            ShapeRule::RowsPerExpertSplit => f.write_str("rows per expert must split evenly over source ranks"),
            ShapeRule::RowsPerSourceBlocks => f.write_str("rows per source must be a positive multiple of row_block"),
            ShapeRule::RoutedRowsOverflow => f.write_str("tokens * top_k * ranks overflows"),
            ShapeRule::TopKExperts => f.write_str("top_k must not exceed experts"),
            ShapeRule::CapacityBlocks => f.write_str("capacity must be a positive multiple of row_block"),
            ShapeRule::SlotIndexFits => f.write_str("experts * capacity must fit an i32 slot index"),
            ShapeRule::WgradRows { rows_per_expert } => write!(
                f,
                "wgrad_rows must be a positive multiple of row_block dividing the {rows_per_expert} rows per expert"
            ),
            ShapeRule::RowBlockTopK => f.write_str("row_block must be a multiple of top_k"),
            ShapeRule::WgradSourceGroups => f.write_str(
                "wgrad_source_groups must be a positive divisor of ranks (a weight-gradient tile sums whole source ranks' slots)",
            ),
        }
    }
}

/// A shape that breaks rules of the layout: all of the forward's it breaks (or only
/// [`ShapeRule::PositiveSizes`], which the others assume), else all of the backward's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    /// The shape refused.
    pub shape: Box<MoeShape>,
    /// The rules it breaks, in the order above; never empty.
    pub broken: Vec<ShapeRule>,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let backward = self.broken.iter().all(|r| r.is_backward());
        f.write_str(if backward { "invalid MoE backward shape: " } else { "invalid MoE shape: " })?;
        for (i, rule) in self.broken.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{rule}")?;
        }
        write!(f, ": {:?}", self.shape)
    }
}

impl std::error::Error for ShapeError {}
