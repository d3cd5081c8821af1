//! The examples' command-line options: `--flag VALUE` and bare `--flag`, nothing more.

use crate::ExampleError;

/// The arguments of one run, checked against the options an example knows.
#[derive(Debug)]
pub struct Options {
    args: Vec<String>,
}

impl Options {
    /// The process's arguments; an option not in `known` is an error listing `usage`.
    pub fn from_env(known: &[&str], usage: &str) -> Result<Options, ExampleError> {
        Self::parse(std::env::args().skip(1).collect(), known, usage)
    }

    /// `args`, checked as [`Options::from_env`] checks the process's.
    pub fn parse(args: Vec<String>, known: &[&str], usage: &str) -> Result<Options, ExampleError> {
        match args.iter().find(|a| a.starts_with("--") && !known.contains(&a.as_str())) {
            Some(bad) => Err(ExampleError::UnknownOption { option: bad.clone(), usage: usage.into() }),
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
    pub fn number(&self, flag: &str, default: u64) -> Result<u64, ExampleError> {
        self.value(flag).map_or(Ok(default), |v| {
            v.parse().map_err(|_| ExampleError::NotANumber { option: flag.into(), value: v.clone() })
        })
    }

    /// [`Options::number`] as a `u32`.
    pub fn number_u32(&self, flag: &str, default: u32) -> Result<u32, ExampleError> {
        let n = self.number(flag, u64::from(default))?;
        u32::try_from(n).map_err(|_| ExampleError::NotANumber { option: flag.into(), value: n.to_string() })
    }

    /// The numbers of `flag N[,N..]`, none when `flag` is absent.
    pub fn list_u32(&self, flag: &str) -> Result<Vec<u32>, ExampleError> {
        let Some(list) = self.value(flag) else { return Ok(Vec::new()) };
        list.split(',')
            .map(|word| {
                word.trim().parse().map_err(|_| ExampleError::NotANumber { option: flag.into(), value: word.into() })
            })
            .collect()
    }

    /// `--profile NAME|FILE`, the A3 die preset by default.
    pub fn profile(&self) -> Result<hpmoe_core::cost::CostProfile, ExampleError> {
        let spec = self.value("--profile").unwrap_or_else(|| "ascend_a3_die".into());
        Ok(hpmoe_core::cost::CostProfile::from_spec(&spec)?)
    }

    /// `--pass forward|backward|training_step`, the forward by default.
    pub fn pass(&self) -> Result<hpmoe_host::moe::Pass, ExampleError> {
        use hpmoe_host::moe::Pass;
        let Some(name) = self.value("--pass") else { return Ok(Pass::Forward) };
        Pass::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| ExampleError::NotAChoice {
            option: "--pass".into(),
            choices: Pass::ALL.iter().map(|p| p.name().to_string()).collect(),
            value: name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> Result<Options, ExampleError> {
        Options::parse(args.iter().map(|s| s.to_string()).collect(), &["--ep", "--json", "--profile"], "--ep N, --json")
    }

    #[test]
    fn values_flags_numbers_and_unknown_options() {
        let o = opts(&["--ep", "16", "--json"]).unwrap();
        assert_eq!(
            (o.value("--ep").as_deref(), o.flag("--json"), o.number("--ep", 8).ok()),
            (Some("16"), true, Some(16))
        );
        assert_eq!(opts(&[]).unwrap().number("--ep", 8).ok(), Some(8));
        let x = opts(&["--ep", "x"]).unwrap().number("--ep", 8).unwrap_err();
        assert!(matches!(&x, ExampleError::NotANumber { option, value } if option == "--ep" && value == "x"), "{x}");
        let huge = opts(&["--ep", "4294967296"]).unwrap().number_u32("--ep", 8).unwrap_err();
        assert!(matches!(huge, ExampleError::NotANumber { .. }), "{huge}");
        let nope = opts(&["--nope"]).unwrap_err();
        assert!(matches!(&nope, ExampleError::UnknownOption { option, .. } if option == "--nope"), "{nope}");
        assert_eq!(nope.to_string(), "unknown option --nope; options: --ep N, --json");
        assert_eq!(opts(&[]).unwrap().profile().unwrap().name, "ascend_a3_die");
        assert_eq!(opts(&["--profile", "ascend910b"]).unwrap().profile().unwrap().name, "ascend910b");
        let missing = opts(&["--profile", "no-such-file.toml"]).unwrap().profile().unwrap_err();
        assert!(matches!(missing, ExampleError::Profile(_)), "{missing}");
        assert!(missing.to_string().contains("cannot read profile no-such-file.toml"), "{missing}");
    }
}
