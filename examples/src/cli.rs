//! The examples' command-line options: `--flag VALUE` and bare `--flag`, nothing more.

/// The arguments of one run, checked against the options an example knows.
#[derive(Debug)]
pub struct Options {
    args: Vec<String>,
}

impl Options {
    /// The process's arguments; an option not in `known` is an error listing `usage`.
    pub fn from_env(known: &[&str], usage: &str) -> Result<Options, String> {
        Self::parse(std::env::args().skip(1).collect(), known, usage)
    }

    pub fn parse(args: Vec<String>, known: &[&str], usage: &str) -> Result<Options, String> {
        match args.iter().find(|a| a.starts_with("--") && !known.contains(&a.as_str())) {
            Some(bad) => Err(format!("unknown option {bad}; options: {usage}")),
            None => Ok(Options { args }),
        }
    }

    /// The word after `flag`, if `flag` was given.
    pub fn value(&self, flag: &str) -> Option<String> {
        self.args.iter().position(|a| a == flag).and_then(|i| self.args.get(i + 1)).cloned()
    }

    /// Whether the bare `flag` was given.
    pub fn flag(&self, flag: &str) -> bool {
        self.args.iter().any(|a| a == flag)
    }

    /// The number after `flag`, or `default` when `flag` is absent.
    pub fn number(&self, flag: &str, default: u64) -> Result<u64, String> {
        self.value(flag).map_or(Ok(default), |v| v.parse().map_err(|_| format!("{flag} takes a number, got {v}")))
    }

    /// `--profile NAME|FILE`, the A3 die preset by default.
    pub fn profile(&self) -> Result<hpmoe_core::cost::CostProfile, String> {
        let spec = self.value("--profile").unwrap_or_else(|| "ascend_a3_die".into());
        hpmoe_core::cost::CostProfile::from_spec(&spec).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> Result<Options, String> {
        Options::parse(args.iter().map(|s| s.to_string()).collect(), &["--ep", "--json", "--profile"], "--ep N, --json")
    }

    #[test]
    fn values_flags_numbers_and_unknown_options() {
        let o = opts(&["--ep", "16", "--json"]).unwrap();
        assert_eq!((o.value("--ep").as_deref(), o.flag("--json"), o.number("--ep", 8)), (Some("16"), true, Ok(16)));
        assert_eq!(opts(&[]).unwrap().number("--ep", 8), Ok(8));
        assert_eq!(opts(&["--ep", "x"]).unwrap().number("--ep", 8), Err("--ep takes a number, got x".into()));
        assert_eq!(opts(&["--nope"]).unwrap_err(), "unknown option --nope; options: --ep N, --json");
        assert_eq!(opts(&[]).unwrap().profile().unwrap().name, "ascend_a3_die");
        assert_eq!(opts(&["--profile", "ascend910b"]).unwrap().profile().unwrap().name, "ascend910b");
        let missing = opts(&["--profile", "no-such-file.toml"]).unwrap().profile().unwrap_err();
        assert!(missing.contains("cannot read profile no-such-file.toml"), "{missing}");
    }
}
