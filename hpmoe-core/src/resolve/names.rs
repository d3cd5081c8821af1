//! Name look-up with "did you mean" suggestions.

/// The candidate closest to `name` by edit distance, if it is close enough to be a typo.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, c)| (d, c.len(), c.to_string()))
        .map(|(_, c)| c)
}

/// `help: did you mean `x`?` text, or a list of what exists when nothing is close.
pub fn suggestion<'a>(what: &str, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let mut all: Vec<&str> = candidates.into_iter().collect();
    match closest(name, all.iter().copied()) {
        Some(c) => format!("did you mean `{c}`?"),
        None => {
            if all.is_empty() {
                return format!("no {what} is declared");
            }
            all.truncate(12);
            format!("declared {what}s: {}", all.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "))
        }
    }
}

/// Edit distance over chars where swapping two neighbours counts as one edit, like an
/// insertion, deletion or substitution (optimal string alignment); bounded inputs (names
/// are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(256).collect();
    let b: Vec<char> = b.chars().take(256).collect();
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
            if i > 0 && j > 0 && *ca == b[j - 1] && a[i - 1] == *cb {
                cur[j + 1] = cur[j + 1].min(before[j - 1] + 1);
            }
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_typos_only() {
        assert_eq!(closest("gmm", ["gmm1", "gmm2", "swiglu"]), Some("gmm1"));
        assert_eq!(closest("recieve", ["recv", "receive"]), Some("receive"));
        assert_eq!(closest("zzz", ["recv", "x"]), None);
        assert_eq!(closest("frist", ["first", "second"]), Some("first"));
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(suggestion("tensor", "q", ["x", "y"]), "did you mean `x`?");
        assert_eq!(suggestion("tensor", "qqqq", ["x", "y"]), "declared tensors: `x`, `y`");
    }
}
