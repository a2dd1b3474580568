//! Every relative link and anchor in the project's Markdown documents
//! resolves: a link names a file that exists (relative to the document), and
//! an anchor (`#…`) names a heading of that file, as GitHub spells heading
//! anchors (lowercase; letters, digits, `-` and `_` kept; spaces to `-`; a
//! repeated heading gets `-1`, `-2`, …).

use std::collections::{BTreeMap, BTreeSet};

/// GitHub's anchor for a heading's text.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Lines outside fenced code blocks.
fn prose(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |l| {
        if l.starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchors of a document's headings.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in prose(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let s = slug(&line[hashes..]);
            let n = seen.entry(s.clone()).or_default();
            out.insert(if *n == 0 {
                s.clone()
            } else {
                format!("{s}-{n}")
            });
            *n += 1;
        }
    }
    out
}

/// The targets of the inline links and images `[text](target)` of a document.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let tail = &rest[i + 2..];
            let Some(end) = tail.find(')') else { break };
            let target = &tail[..end];
            if !target.is_empty() && !target.contains(char::is_whitespace) {
                out.push(target.to_owned());
            }
            rest = &tail[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_in_the_documents_resolves() {
    let root = &xq_tests::docs::workspace_root();
    let docs = xq_tests::docs::markdown_files(root, &[]);
    assert!(
        docs.len() >= 10,
        "found only {} documents under {}",
        docs.len(),
        root.display()
    );
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap().join(path)
            };
            let name = doc.strip_prefix(root).unwrap().display().to_string();
            if !file.exists() {
                broken.push(format!("{name}: {target}: no such file"));
                continue;
            }
            if !anchor.is_empty() {
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                if !anchors(&text).contains(anchor) {
                    broken.push(format!("{name}: {target}: no such heading"));
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} links checked");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_spelled_as_github_spells_them() {
    assert_eq!(
        slug(" Load test (`tests/benches/load.rs`)"),
        "load-test-testsbenchesloadrs"
    );
    assert_eq!(
        slug(" Capture conversion (engine/RULES.md §8)"),
        "capture-conversion-enginerulesmd-8"
    );
    let a = anchors("# A\n## A\n```\n# B\n```\n### C d");
    assert_eq!(
        a,
        ["a", "a-1", "c-d"].map(String::from).into_iter().collect()
    );
    assert_eq!(
        links("see [x](a.md#b) and ![p](img.png) [bad](no space)"),
        ["a.md#b", "img.png"]
    );
}
