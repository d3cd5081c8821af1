//! The project's Markdown documents link to each other and to their own sections: every such
//! link must land. A link to a file in the repository must name a file that exists, and a link
//! to a section (`#anchor`, in the same document or another one) must name a heading that
//! document has, under the anchor GitHub derives from it. Moving text between the README and
//! `docs/` is how such links break, silently, so this test reads them all.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The documents checked: the README and every Markdown file under `docs/`.
fn documents(workspace: &Path) -> Vec<PathBuf> {
    let mut docs = vec![workspace.join("README.md")];
    if let Ok(entries) = std::fs::read_dir(workspace.join("docs")) {
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        found.sort();
        docs.extend(found);
    }
    docs
}

/// GitHub's anchor of a heading's text: lower case, inline code marks and punctuation dropped
/// (letters, digits, `-` and `_` kept), spaces turned into `-`.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '-' || c == '_' || c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a document's headings (outside code blocks); a repeated heading's later
/// anchors get `-1`, `-2`, … as GitHub numbers them.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for line in prose_lines(text) {
        if !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = anchor_of(heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The lines of a document outside its fenced code blocks (and without the fences).
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    text.lines().filter(move |line| {
        let fence = line.trim_start().starts_with("```");
        in_code ^= fence;
        !fence && !in_code
    })
}

/// Every inline link target `](target)` of a document, outside code blocks and code spans.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        // Drop code spans, whose brackets are not links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn every_link_between_and_within_the_documents_lands() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents(&workspace) {
        let text = std::fs::read_to_string(&doc).unwrap();
        let dir = doc.parent().unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() { doc.clone() } else { dir.join(path) };
            if !file.exists() {
                broken.push(format!("{}: `{target}`: no file {}", doc.display(), file.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            let is_markdown = file.extension().is_some_and(|x| x == "md");
            if is_markdown && !anchors(&std::fs::read_to_string(&file).unwrap()).contains(anchor) {
                broken.push(format!("{}: `{target}`: no heading with anchor #{anchor}", doc.display()));
            }
        }
    }
    assert!(checked > 20, "the documents link to their sections ({checked} links found)");
    assert!(broken.is_empty(), "{} broken links:\n{}", broken.len(), broken.join("\n"));
}

#[test]
fn anchors_follow_githubs_rules() {
    assert_eq!(anchor_of(" Writing a taskflow: `#[taskflow]`"), "writing-a-taskflow-taskflow");
    assert_eq!(
        anchor_of(" Training: the backward and the training step"),
        "training-the-backward-and-the-training-step"
    );
    assert_eq!(
        anchor_of(" The scheduler's server tier, and whether the bound is loose"),
        "the-schedulers-server-tier-and-whether-the-bound-is-loose"
    );
    let repeated = anchors("# A\n## A\n```\n# not a heading\n```\n#not one either\n");
    assert_eq!(repeated, HashSet::from(["a".to_string(), "a-1".to_string()]));
    assert_eq!(link_targets("see [x](#a) and `[y](#b)` and [z](docs/h.md#c)"), vec!["#a", "docs/h.md#c"]);
}
