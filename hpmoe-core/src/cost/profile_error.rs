//! Why a [`CostProfile`](super::CostProfile) could not be read, parsed or validated, as data.

use super::PRESETS;
use std::path::PathBuf;
use std::sync::Arc;

/// A profile that could not be read, parsed or validated.
#[derive(Clone, Debug)]
pub enum ProfileError {
    /// No preset has this name (see [`PRESETS`]).
    UnknownPreset {
        /// The name asked for.
        name: String,
    },
    /// The text is not TOML.
    Toml(Arc<toml::de::Error>),
    /// The text is not JSON (or, with `toml`, the TOML has a value JSON cannot hold).
    Json {
        /// Whether the text was TOML.
        toml: bool,
        /// The parser's error.
        error: Arc<serde_json::Error>,
    },
    /// The document is not a table (object).
    NotATable,
    /// `base` is not a string.
    BaseNotAName {
        /// What it is, as JSON.
        got: String,
    },
    /// The fields do not make a profile (a missing, unknown or mistyped field).
    Fields(Arc<serde_json::Error>),
    /// The profile file cannot be read.
    Read {
        /// The file.
        path: PathBuf,
        /// The system's error.
        error: Arc<std::io::Error>,
    },
    /// The profile file's contents are refused.
    InFile {
        /// The file.
        path: PathBuf,
        /// Why.
        error: Box<ProfileError>,
    },
    /// [`CostProfile::with_field`](super::CostProfile::with_field): the field is not a numeric field of a profile.
    NotNumeric {
        /// The field.
        field: String,
    },
    /// [`CostProfile::with_field`](super::CostProfile::with_field): the value is not finite.
    NotFinite {
        /// The field.
        field: String,
        /// The value.
        value: f64,
    },
    /// A rate that must be positive and finite is not.
    NotPositive {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// A fraction outside its range.
    OutOfRange {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
        /// The range, as written in the message (`(0, 1]`).
        range: &'static str,
    },
    /// A time that is negative, not finite, or not below 1e15.
    BadTime {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// `dies_per_package` or `packages_per_server` is 0.
    EmptyTopology,
}

/// Equal when the kind and message are (the wrapped parser and system errors are compared by
/// their messages).
impl PartialEq for ProfileError {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other) && self.to_string() == other.to_string()
    }
}

impl Eq for ProfileError {}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileError::UnknownPreset { name } => {
                write!(f, "unknown profile `{name}`; presets: {}", PRESETS.join(", "))
            }
            ProfileError::Toml(e) => write!(f, "invalid TOML profile: {e}"),
            ProfileError::Json { toml: true, error } => write!(f, "invalid TOML profile: {error}"),
            ProfileError::Json { toml: false, error } => write!(f, "invalid JSON profile: {error}"),
            ProfileError::NotATable => f.write_str("a profile must be a table/object"),
            ProfileError::BaseNotAName { got } => write!(f, "`base` must be a preset name, got {got}"),
            ProfileError::Fields(e) => write!(f, "invalid profile: {e}"),
            ProfileError::Read { path, error } => write!(f, "cannot read profile {}: {error}", path.display()),
            ProfileError::InFile { path, error } => write!(f, "{}: {error}", path.display()),
            ProfileError::NotNumeric { field } => write!(f, "`{field}` is not a numeric profile field"),
            ProfileError::NotFinite { field, value } => write!(f, "`{field}` = {value} is not a finite number"),
            ProfileError::NotPositive { field, value } => write!(f, "`{field}` must be a positive number, got {value}"),
            ProfileError::OutOfRange { field, value, range } => write!(f, "`{field}` must be in {range}, got {value}"),
            ProfileError::BadTime { field, value } => {
                write!(f, "`{field}` must be a non-negative time below 1e15, got {value}")
            }
            ProfileError::EmptyTopology => f.write_str("`dies_per_package` and `packages_per_server` must be positive"),
        }
    }
}

/// The message includes a wrapped error's, so [`source`](std::error::Error::source) is `None`;
/// the wrapped error is the variant's field.
impl std::error::Error for ProfileError {}
