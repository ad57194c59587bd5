//! The documentation's links resolve, and the README stays short.
//!
//! Reads `README.md`, `docs/*.md` and `rust/orogen-cli/README.md` at the workspace root.
//! Every Markdown link or image `[text](target)` outside code must name a file or folder that
//! exists (relative to the linking file), and a `#anchor` must match a heading of the target
//! Markdown file (or of the linking file itself) by GitHub's rule for heading ids. Web links
//! (`http:`, `https:`, `mailto:`) are not followed. The README is at most 300 lines and links
//! every file of `docs/`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Most lines the README may have (issue #40).
const README_MAX_LINES: usize = 300;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files whose links are checked, relative to the workspace root.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![
        PathBuf::from("README.md"),
        PathBuf::from("rust/orogen-cli/README.md"),
    ];
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(root).expect("under the root").to_path_buf())
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// `text` without fenced code blocks and inline code spans (their content is not Markdown).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(f) = &fence {
            if trimmed.starts_with(f.as_str()) {
                fence = None;
            }
            out.push('\n');
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let ch = trimmed.chars().next().expect("a fence character");
            let len = trimmed.chars().take_while(|&c| c == ch).count();
            fence = Some(ch.to_string().repeat(len));
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    strip_code_spans(&out)
}

/// Removes inline code: a run of n backticks up to the next run of exactly n.
fn strip_code_spans(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = chars[i..].iter().take_while(|&&c| c == '`').count();
        // Find the closing run of exactly n backticks.
        let mut j = i + n;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let m = chars[j..].iter().take_while(|&&c| c == '`').count();
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => i = j + n,
            None => {
                // An unmatched run is literal text.
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

/// The targets of the inline links and images in `text` (code already removed): what
/// follows `](` up to the closing `)`, without an optional `"title"`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find([')', '\n']).unwrap_or(after.len());
        let target = after[..end].split_whitespace().next().unwrap_or("");
        let target = target.trim_start_matches('<').trim_end_matches('>');
        targets.push(target.to_string());
        rest = &after[end..];
    }
    targets
}

/// GitHub's id for a heading: its text lowercased, every character that is not a letter,
/// digit, space, `-` or `_` dropped, spaces turned into `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The ids of the ATX headings of a Markdown text; a repeated id gets `-1`, `-2`, … as on
/// GitHub.
fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || !t.starts_with('#') {
            continue;
        }
        let hashes = t.chars().take_while(|&c| c == '#').count();
        let body = &t[hashes..];
        if hashes > 6 || !(body.is_empty() || body.starts_with(' ')) {
            continue;
        }
        let body = body.trim().trim_end_matches('#').trim();
        let base = slug(body);
        let mut id = base.clone();
        let mut k = 1;
        while ids.contains(&id) {
            id = format!("{base}-{k}");
            k += 1;
        }
        ids.insert(id);
    }
    ids
}

/// The broken links of `file` (relative to `root`, whose text is `text`), one line each.
fn broken_links(root: &Path, file: &Path, text: &str) -> Vec<String> {
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut broken = Vec::new();
    for target in link_targets(&prose(text)) {
        if target.is_empty() {
            broken.push(format!("{}: an empty link target", file.display()));
            continue;
        }
        if ["http://", "https://", "mailto:"]
            .iter()
            .any(|p| target.starts_with(p))
        {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        // A bare `#anchor` points into `file` itself, whose text is `text`.
        let linked = if path.is_empty() {
            file.to_path_buf()
        } else {
            dir.join(path)
        };
        let full = root.join(&linked);
        if !path.is_empty() && !full.exists() {
            broken.push(format!(
                "{}: `{target}`: no file {}",
                file.display(),
                linked.display()
            ));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if linked.extension().is_none_or(|x| x != "md") {
            broken.push(format!(
                "{}: `{target}`: an anchor into a file that is not Markdown",
                file.display()
            ));
            continue;
        }
        let linked_text = if path.is_empty() {
            text.to_string()
        } else {
            fs::read_to_string(&full).expect("the linked file is readable")
        };
        if !heading_ids(&linked_text).contains(anchor) {
            broken.push(format!(
                "{}: `{target}`: no heading with the id `{anchor}` in {}",
                file.display(),
                linked.display()
            ));
        }
    }
    broken
}

#[test]
fn every_link_in_the_readme_and_docs_resolves() {
    let root = workspace_root();
    let files = documents(&root);
    assert!(
        files.len() >= 5,
        "README, the CLI's README and docs/*.md: found {files:?}"
    );
    let mut broken = Vec::new();
    let mut links = 0;
    for file in &files {
        let text = fs::read_to_string(root.join(file))
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        links += link_targets(&prose(&text)).len();
        broken.extend(broken_links(&root, file, &text));
    }
    assert!(
        links >= 40,
        "only {links} links found: is the link reader broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_short_and_links_every_document() {
    let root = workspace_root();
    let readme = fs::read_to_string(root.join("README.md")).expect("README.md is readable");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, at most {README_MAX_LINES}"
    );
    let targets: BTreeSet<String> = link_targets(&prose(&readme))
        .into_iter()
        .map(|t| t.split('#').next().unwrap_or("").to_string())
        .collect();
    for doc in documents(&root).iter().filter(|d| d.starts_with("docs")) {
        let name = doc.to_string_lossy().replace('\\', "/");
        assert!(targets.contains(&name), "README.md does not link {name}");
    }
}

#[test]
fn heading_ids_follow_githubs_rule() {
    assert_eq!(
        slug("Export to Terrain3D / HTerrain"),
        "export-to-terrain3d--hterrain"
    );
    assert_eq!(slug("How the terrain looks"), "how-the-terrain-looks");
    assert_eq!(
        slug("Planet (`planet:`) and planet regions (`Planet(region: ...)`)"),
        "planet-planet-and-planet-regions-planetregion-"
    );
    assert_eq!(
        slug("River curves (`river_curves:`)"),
        "river-curves-river_curves"
    );
    let ids = heading_ids("# A\n## A\n```\n# not a heading\n```\n#nospace\n### B ##\n");
    let expected: BTreeSet<String> = ["a", "a-1", "b"].iter().map(|s| s.to_string()).collect();
    assert_eq!(ids, expected);
}

#[test]
fn a_broken_link_or_anchor_is_reported() {
    let root = workspace_root();
    let file = Path::new("docs/probe.md");
    let text = "# Top\n\n[ok](#top) [ok](../README.md#install) [web](https://example.org/x)\n\
                `[in code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n\
                [file](missing.md) [anchor](#nowhere) [far](godot.md#no-such-heading)\n\
                ![image](no-such-picture.png)\n";
    let broken = broken_links(&root, file, text);
    assert_eq!(broken.len(), 4, "{broken:#?}");
    assert!(broken[0].contains("missing.md"), "{}", broken[0]);
    assert!(broken[1].contains("`nowhere`"), "{}", broken[1]);
    assert!(broken[2].contains("no-such-heading"), "{}", broken[2]);
    assert!(broken[3].contains("no-such-picture.png"), "{}", broken[3]);
}
