//! The arguments of `#[taskflow(...)]`, `#[tile(...)]` and `#[op(...)]`, read with darling.
//! Grid ranges and `after` entries hold expressions, so they are kept as syntax here and
//! evaluated by the lowering.

use crate::limits::MAX_RANKS;
use crate::model::{CoreKind, MachineProfile, WorkModel};
use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::{PathList, SpannedValue};
use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Meta, Token};

/// The machine profile: `ascend910b`, `ascend_a3_die` or `small(AIC_PER_RANK)`.
#[derive(Clone, Debug)]
pub enum ProfileArg {
    Ascend910b,
    AscendA3Die,
    Small(u32),
}

impl FromMeta for ProfileArg {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let names = "ascend910b, ascend_a3_die, small(AIC_PER_RANK)";
        match expr {
            Expr::Path(p) if p.path.is_ident("ascend910b") => Ok(ProfileArg::Ascend910b),
            Expr::Path(p) if p.path.is_ident("ascend_a3_die") => Ok(ProfileArg::AscendA3Die),
            Expr::Call(c) if matches!(&*c.func, Expr::Path(p) if p.path.is_ident("small")) => {
                match c.args.first().map(u32::from_expr) {
                    Some(Ok(n)) if c.args.len() == 1 && n > 0 => Ok(ProfileArg::Small(n)),
                    _ => Err(darling::Error::custom("`small` takes the number of AIC cores per rank, e.g. `small(2)`")
                        .with_span(c)),
                }
            }
            _ => {
                Err(darling::Error::custom(format!("unknown machine profile; known profiles: {names}")).with_span(expr))
            }
        }
    }
}

impl ProfileArg {
    pub fn profile(&self, ranks: u32) -> MachineProfile {
        match self {
            ProfileArg::Ascend910b => MachineProfile::ascend910b(ranks),
            ProfileArg::AscendA3Die => MachineProfile::ascend_a3_die(ranks),
            ProfileArg::Small(aic) => MachineProfile::small(*aic, ranks),
        }
    }
}

/// `#[taskflow(profile = ..., ranks = N)]`.
#[derive(Debug, FromMeta)]
pub struct TaskflowArgs {
    pub profile: ProfileArg,
    pub ranks: SpannedValue<u32>,
}

impl TaskflowArgs {
    /// Reads the attribute's tokens; ranks must be in `1..=MAX_RANKS`.
    pub fn parse(tokens: TokenStream) -> syn::Result<Self> {
        let items = NestedMeta::parse_meta_list(tokens)?;
        let args = TaskflowArgs::from_list(&items).map_err(|e| {
            let hint = "expected `#[taskflow(profile = ascend910b, ranks = 8)]`";
            let mut err = syn::Error::from(e);
            if items.is_empty() {
                err = syn::Error::new(Span::call_site(), hint);
            }
            err
        })?;
        if *args.ranks == 0 || *args.ranks > MAX_RANKS {
            return Err(syn::Error::new(args.ranks.span(), format!("`ranks` must be in 1..={MAX_RANKS}")));
        }
        Ok(args)
    }
}

/// A helper attribute's arguments; a bare `#[tile]` reads as an empty list, so that what
/// is missing is reported by name.
fn helper_args<T: FromMeta>(meta: &Meta) -> syn::Result<T> {
    match meta {
        Meta::Path(_) => T::from_list(&[]),
        _ => T::from_meta(meta),
    }
    .map_err(syn::Error::from)
}

/// A bare word among an attribute's arguments (`aic`), with its span. darling's own `Flag` is not
/// used: it panics on `aic()` (an empty list), and no input may make the macro panic.
#[derive(Clone, Copy, Debug, Default)]
struct Word(Option<Span>);

impl Word {
    fn is_present(&self) -> bool {
        self.0.is_some()
    }

    fn span(&self) -> Span {
        self.0.unwrap_or_else(Span::call_site)
    }
}

impl FromMeta for Word {
    fn from_none() -> Option<Self> {
        Some(Word(None))
    }

    fn from_meta(item: &Meta) -> darling::Result<Self> {
        match item {
            Meta::Path(p) => Ok(Word(Some(p.span()))),
            _ => {
                Err(darling::Error::custom("a core kind is a bare word: `aic` or `aiv`, without arguments")
                    .with_span(item))
            }
        }
    }
}

/// `aic` or `aiv`, given as a bare word among an attribute's arguments.
fn core_kind(aic: Word, aiv: Word, what: &str, span: Span) -> darling::Result<CoreKind> {
    match (aic.is_present(), aiv.is_present()) {
        (true, false) => Ok(CoreKind::Aic),
        (false, true) => Ok(CoreKind::Aiv),
        (true, true) => Err(darling::Error::custom(format!("{what} runs on one core kind: `aic` or `aiv`, not both"))
            .with_span(&aiv.span())),
        (false, false) => Err(darling::Error::custom(format!(
            "{what} needs a core kind: `aic` (matrix) or `aiv` (vector and communication)"
        ))
        .with_span(&span)),
    }
}

/// One `name in 0..extent` entry of `grid(...)`.
#[derive(Clone, Debug)]
pub struct GridEntry {
    pub name: Ident,
    pub range: Expr,
    /// The whole entry, for errors.
    pub tokens: TokenStream,
}

impl Parse for GridEntry {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        let in_token = input.parse::<Token![in]>()?;
        let range: Expr = input.parse()?;
        let tokens = quote::quote!(#name #in_token #range);
        Ok(GridEntry { name, range, tokens })
    }
}

/// `grid(e in 0..E, m in 0..M)`.
#[derive(Clone, Debug, Default)]
pub struct GridArg(pub Vec<GridEntry>);

impl FromMeta for GridArg {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        match item {
            Meta::List(l) => Punctuated::<GridEntry, Token![,]>::parse_terminated
                .parse2(l.tokens.clone())
                .map(|p| GridArg(p.into_iter().collect()))
                .map_err(|e| {
                    darling::Error::custom(format!("{e}; a grid is written `grid(e in 0..E, m in 0..M)`"))
                        .with_span(&e.span())
                }),
            _ => Err(darling::Error::custom("a grid is written `grid(e in 0..E, m in 0..M)`").with_span(item)),
        }
    }
}

/// `after(gmm1(e, ..), dispatch)`: each entry a tile name, optionally with one index
/// expression or `..` (every value) per grid dimension of that tile.
#[derive(Clone, Debug, Default)]
pub struct AfterArg(pub Vec<Expr>);

impl FromMeta for AfterArg {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        match item {
            Meta::List(l) => Punctuated::<Expr, Token![,]>::parse_terminated
                .parse2(l.tokens.clone())
                .map(|p| AfterArg(p.into_iter().collect()))
                .map_err(darling::Error::from),
            _ => Err(darling::Error::custom("write `after(tile(i, ..), other_tile)`").with_span(item)),
        }
    }
}

/// `when(R > W)`: the one condition on which a tile family exists, kept as syntax for the
/// lowering to evaluate.
#[derive(Clone, Debug, Default)]
pub struct WhenArg(pub Option<Expr>);

impl FromMeta for WhenArg {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        let usage = "write `when(CONDITION)`, e.g. `when(R / W > 1)`";
        match item {
            Meta::List(l) => syn::parse2::<Expr>(l.tokens.clone())
                .map(|e| WhenArg(Some(e)))
                .map_err(|e| darling::Error::custom(format!("{e}; {usage}")).with_span(&e.span())),
            _ => Err(darling::Error::custom(usage).with_span(item)),
        }
    }
}

/// `#[tile(aic | aiv, grid(...), after(...), when(...))]`.
#[derive(Debug, FromMeta)]
pub struct TileArgsRaw {
    #[darling(default)]
    aic: Word,
    #[darling(default)]
    aiv: Word,
    #[darling(default)]
    grid: GridArg,
    #[darling(default)]
    after: AfterArg,
    #[darling(default)]
    when: WhenArg,
}

/// A tile's arguments, checked.
#[derive(Clone, Debug)]
pub struct TileArgs {
    pub core: CoreKind,
    pub grid: Vec<GridEntry>,
    pub after: Vec<Expr>,
    /// The condition on compile-time constants under which the family exists (`when(..)`).
    pub when: Option<Expr>,
}

impl TileArgs {
    /// Reads a `#[tile(...)]` attribute.
    pub fn parse(meta: &Meta) -> syn::Result<Self> {
        let raw: TileArgsRaw = helper_args(meta)?;
        let core = core_kind(raw.aic, raw.aiv, "a tile", meta.span()).map_err(syn::Error::from)?;
        Ok(TileArgs { core, grid: raw.grid.0, after: raw.after.0, when: raw.when.0 })
    }
}

/// `work = matmul | matmul_nt | matmul_tn | copy | vector(FLOPS_PER_ELEMENT) | gather(FLOPS_PER_ELEMENT)`.
#[derive(Clone, Copy, Debug)]
pub struct WorkArg(pub WorkModel);

impl Default for WorkArg {
    fn default() -> Self {
        WorkArg(WorkModel::Vector { flops_per_element: 1 })
    }
}

impl FromMeta for WorkArg {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let usage = "`work` is `matmul`, `matmul_nt`, `matmul_tn`, `copy`, `vector(FLOPS_PER_ELEMENT)` or \
                     `gather(FLOPS_PER_ELEMENT)`";
        match expr {
            Expr::Path(p) if p.path.is_ident("matmul") => Ok(WorkArg(WorkModel::Matmul)),
            Expr::Path(p) if p.path.is_ident("matmul_nt") => Ok(WorkArg(WorkModel::MatmulNt)),
            Expr::Path(p) if p.path.is_ident("matmul_tn") => Ok(WorkArg(WorkModel::MatmulTn)),
            Expr::Path(p) if p.path.is_ident("copy") => Ok(WorkArg(WorkModel::Copy)),
            Expr::Call(c) if c.args.len() == 1 => {
                let per_element = || u32::from_expr(&c.args[0]).map_err(|_| darling::Error::custom(usage).with_span(c));
                match &*c.func {
                    Expr::Path(p) if p.path.is_ident("vector") => {
                        Ok(WorkArg(WorkModel::Vector { flops_per_element: per_element()? }))
                    }
                    Expr::Path(p) if p.path.is_ident("gather") => {
                        Ok(WorkArg(WorkModel::Gather { flops_per_element: per_element()? }))
                    }
                    _ => Err(darling::Error::custom(usage).with_span(expr)),
                }
            }
            _ => Err(darling::Error::custom(usage).with_span(expr)),
        }
    }
}

/// `#[op(aic | aiv, work = ..., emit = "...", read_write(p, ..))]`.
#[derive(Debug, FromMeta)]
pub struct OpArgsRaw {
    #[darling(default)]
    aic: Word,
    #[darling(default)]
    aiv: Word,
    #[darling(default)]
    work: WorkArg,
    emit: SpannedValue<String>,
    #[darling(default)]
    read_write: PathList,
}

/// A user op's arguments, checked.
#[derive(Clone, Debug)]
pub struct OpArgs {
    pub core: CoreKind,
    pub work: WorkModel,
    pub emit: String,
    pub emit_span: Span,
    pub read_write: Vec<Ident>,
}

impl OpArgs {
    /// Reads an `#[op(...)]` attribute.
    pub fn parse(meta: &Meta) -> syn::Result<Self> {
        let raw: OpArgsRaw = helper_args(meta)?;
        let core = core_kind(raw.aic, raw.aiv, "an op", meta.span()).map_err(syn::Error::from)?;
        let mut read_write = Vec::new();
        for p in raw.read_write.iter() {
            match p.get_ident() {
                Some(i) => read_write.push(i.clone()),
                None => return Err(syn::Error::new_spanned(p, "`read_write` lists parameter names")),
            }
        }
        Ok(OpArgs { core, work: raw.work.0, emit: (*raw.emit).clone(), emit_span: raw.emit.span(), read_write })
    }
}
