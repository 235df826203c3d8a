//! Every import points down: no cycle of `use` across the files of the library, the CLI or the
//! campaign service (`examples/campaigns`, the model a newcomer copies).
//!
//! Each file is a node. A file depends on another when one of its paths (`use` trees and
//! paths written in code, from `crate::`, `super::`, `self::` or a child module) names an item
//! defined there. A name a module only re-exports (`pub use child::Item`) is followed to the
//! file that defines it (as is a name a parent imports, which its children see), so a façade
//! that re-exports its children does not make each child depend on its siblings through it. Declaring a module (`mod child;`) is containment, not an
//! import. The check strips comments and string literals before it reads, and reports each
//! cycle with the paths that close it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

#[test]
fn the_library_imports_point_one_way() {
    let crate_ = assert_acyclic(
        &Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("src"),
        "lib.rs",
    );
    assert_layered(&crate_, &readme_layers(0), "lib.rs");
}

#[test]
fn the_cli_imports_point_one_way() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("cli/src");
    let crate_ = assert_acyclic(&root, "main.rs");
    assert_layered(&crate_, &readme_layers(1), "main.rs");
}

#[test]
fn the_campaign_service_imports_point_one_way() {
    // The example a newcomer copies: its library (the service, its tools, its store) and
    // its binary, file by file.
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("examples/campaigns/src");
    let crate_ = assert_acyclic(&root, "lib.rs");
    // Every tool's module is read: the check sees the list and what it lists.
    for tool in ["send_sms", "send_batch", "lookup_campaign", "lookup_sms"] {
        let file = format!("tools/{tool}.rs");
        assert!(crate_.edges.contains_key(&file), "{file} was not read");
        assert!(
            crate_.edges["tools.rs"].contains_key(&file),
            "the list names {file}'s tool"
        );
    }
}

/// The layers of CONTRIBUTING.md's "How the crate is built" section, lowest first: its `which`th
/// numbered list (the library's, then the CLI's), each item's module names in backquotes
/// before its colon.
fn readme_layers(which: usize) -> Vec<Vec<String>> {
    let readme = fs::read_to_string(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("CONTRIBUTING.md"),
    )
    .expect("read CONTRIBUTING.md");
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("How the crate is built"))
        .expect("CONTRIBUTING.md has a section \"How the crate is built\"");
    let mut lists: Vec<Vec<Vec<String>>> = Vec::new();
    let mut in_list = false;
    for line in section.lines() {
        let item = line
            .split_once(". ")
            .filter(|(n, _)| n.parse::<u32>().is_ok());
        match item {
            Some((_, rest)) => {
                if !in_list {
                    lists.push(Vec::new());
                    in_list = true;
                }
                let names = rest.split(':').next().unwrap_or_default();
                let modules = names
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .map(str::to_owned)
                    .collect();
                lists.last_mut().expect("a list").push(modules);
            }
            None if line.starts_with("   ") => {}
            None => in_list = false,
        }
    }
    lists
        .into_iter()
        .nth(which)
        .expect("CONTRIBUTING.md lists the layers")
}

/// Every import from a module goes to its own layer or one below; every module is in one
/// layer (the root file is above them all).
fn assert_layered(crate_: &Crate, layers: &[Vec<String>], root_file: &str) {
    let top = |file: &str| -> String {
        file.split('/')
            .next()
            .unwrap_or(file)
            .trim_end_matches(".rs")
            .to_owned()
    };
    let layer_of = |module: &str| {
        layers
            .iter()
            .position(|layer| layer.iter().any(|m| m == module))
    };
    let mut wrong = Vec::new();
    for (from, deps) in &crate_.edges {
        if from == root_file {
            continue;
        }
        let Some(from_layer) = layer_of(&top(from)) else {
            wrong.push(format!("{} is in no layer of CONTRIBUTING.md", top(from)));
            continue;
        };
        for (to, via) in deps {
            if to == root_file {
                wrong.push(format!(
                    "{from} imports from the root by {}",
                    via.join(", ")
                ));
            } else if let Some(to_layer) = layer_of(&top(to))
                && to_layer > from_layer
            {
                wrong.push(format!(
                    "{from} (layer {}) imports {to} (layer {}) by {}",
                    from_layer + 1,
                    to_layer + 1,
                    via.join(", ")
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports against CONTRIBUTING.md's layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_sees_a_cycle_through_a_re_export_and_a_super_path() {
    let files = [
        ("lib.rs", "mod a; mod b; pub use a::Thing;"),
        ("a.rs", "use crate::b::helper; pub struct Thing;"),
        // A path in code, not only in `use`, through the root's re-export.
        (
            "b.rs",
            "pub fn helper() -> crate::Thing { crate::Thing } // crate::c::ignored",
        ),
        ("b/inner.rs", "use super::helper;"),
    ];
    let crate_ = Crate::from_texts(&files);
    let cycles = crate_.cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0], ["a.rs", "b.rs"]);
}

#[test]
fn an_exported_macro_is_the_file_that_defines_it() {
    let files = [
        ("lib.rs", "mod a; mod b; pub use a::Thing;"),
        (
            "a.rs",
            "pub struct Thing; macro_rules! helper { () => {} } \
             macro_rules! outer { () => { $crate::helper!() } }",
        ),
        ("b.rs", "fn f() { crate::helper!() }"),
    ];
    let crate_ = Crate::from_texts(&files);
    assert!(
        crate_.edges["a.rs"].is_empty(),
        "{:?}",
        crate_.edges["a.rs"]
    );
    assert_eq!(crate_.edges["b.rs"].keys().collect::<Vec<_>>(), ["a.rs"]);
}

#[test]
fn the_check_reads_use_trees_strings_and_child_modules() {
    let files = [
        (
            "main.rs",
            "mod check; mod output; use output::Format; fn f() { check::run(); }",
        ),
        (
            "check.rs",
            r#"pub fn run() { let _ = "crate::output::x"; } /* crate::output */"#,
        ),
        (
            "output.rs",
            "use crate::{check::{self, run as go}}; pub enum Format {}",
        ),
    ];
    let crate_ = Crate::from_texts(&files);
    assert_eq!(crate_.cycles(), Vec::<Vec<String>>::new());
    let deps = &crate_.edges["main.rs"];
    assert!(
        deps.contains_key("check.rs") && deps.contains_key("output.rs"),
        "{deps:?}"
    );
    assert!(
        crate_.edges["output.rs"].contains_key("check.rs"),
        "{:?}",
        crate_.edges
    );
    assert!(
        crate_.edges["check.rs"].is_empty(),
        "strings and comments are not paths"
    );
}

#[test]
fn the_check_reads_inline_modules() {
    let files = [
        ("lib.rs", "mod a; mod b; mod c; mod d;"),
        // `super` in an inline test module is the file's own module, not its parent.
        (
            "a.rs",
            "pub fn f() {} #[cfg(test)] mod tests { use super::*; use crate::b::g; }",
        ),
        (
            "b.rs",
            "pub fn g() {} mod inner { fn h() { super::super::a::f() } }",
        ),
        // A `use` inside an inline module binds the name there, not in the file's module.
        ("c.rs", "fn k() {} mod tests { use crate::b::g; }"),
        ("d.rs", "use crate::c::g;"),
    ];
    let crate_ = Crate::from_texts(&files);
    assert_eq!(
        crate_.cycles(),
        [["a.rs", "b.rs"]].map(|c| c.map(String::from))
    );
    assert!(
        !crate_.edges["a.rs"].contains_key("lib.rs"),
        "{:?}",
        crate_.edges
    );
    assert!(
        crate_.edges["d.rs"].contains_key("c.rs"),
        "{:?}",
        crate_.edges
    );
    assert!(
        !crate_.edges["d.rs"].contains_key("b.rs"),
        "{:?}",
        crate_.edges
    );
}

#[test]
fn the_layer_check_sees_an_import_from_above() {
    let files = [
        ("lib.rs", "mod low; mod high;"),
        ("low.rs", "use crate::high::Thing; pub fn f() {}"),
        ("high.rs", "pub struct Thing;"),
    ];
    let crate_ = Crate::from_texts(&files);
    let layers = vec![vec!["low".to_owned()], vec!["high".to_owned()]];
    let checked = std::panic::catch_unwind(|| assert_layered(&crate_, &layers, "lib.rs"));
    assert!(checked.is_err(), "low imports from the layer above it");
    let flipped = vec![vec!["high".to_owned()], vec!["low".to_owned()]];
    assert_layered(&crate_, &flipped, "lib.rs");
}

fn assert_acyclic(root: &Path, root_file: &str) -> Crate {
    let crate_ = Crate::read(root, root_file);
    assert!(
        crate_.edges.len() > 3,
        "the check found too few files under {}",
        root.display()
    );
    let cycles = crate_.cycles();
    let mut report = String::new();
    for cycle in &cycles {
        let _ = writeln!(report, "\ncycle: {}", cycle.join(" -> "));
        for from in cycle {
            for (to, via) in &crate_.edges[from] {
                if cycle.contains(to) {
                    let _ = writeln!(report, "  {from} -> {to} by {}", via.join(", "));
                }
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "imports under {} form cycles:{report}",
        root.display()
    );
    crate_
}

/// The files of one crate, their module paths, re-exports and dependencies.
struct Crate {
    /// Module path (segments from the crate root) to file name (relative, `/`-separated).
    modules: BTreeMap<Vec<String>, String>,
    /// File name to its tokens, comments and literals removed.
    tokens: BTreeMap<String, Vec<String>>,
    /// File name to the files it depends on, each with the paths that make the dependency.
    edges: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

impl Crate {
    fn read(root: &Path, root_file: &str) -> Crate {
        let mut files = Vec::new();
        collect(root, root, &mut files);
        let texts: Vec<(String, String)> = files
            .into_iter()
            .map(|name| {
                let text = fs::read_to_string(root.join(&name)).expect("read a source file");
                let name = if name == root_file {
                    "lib.rs".to_owned()
                } else {
                    name
                };
                (name, text)
            })
            .collect();
        let mut crate_ = Crate::build(&texts);
        if root_file != "lib.rs" {
            // Report under the file's own name.
            crate_.rename("lib.rs", root_file);
        }
        crate_
    }

    fn from_texts(files: &[(&str, &str)]) -> Crate {
        let texts: Vec<(String, String)> = files
            .iter()
            .map(|(name, text)| {
                let name = if *name == "main.rs" { "lib.rs" } else { name };
                ((*name).to_owned(), (*text).to_owned())
            })
            .collect();
        let mut crate_ = Crate::build(&texts);
        if files.iter().any(|(name, _)| *name == "main.rs") {
            crate_.rename("lib.rs", "main.rs");
        }
        crate_
    }

    fn build(texts: &[(String, String)]) -> Crate {
        let mut crate_ = Crate {
            modules: BTreeMap::new(),
            tokens: BTreeMap::new(),
            edges: BTreeMap::new(),
        };
        for (name, text) in texts {
            crate_.modules.insert(module_path(name), name.clone());
            crate_.tokens.insert(name.clone(), tokens(&strip(text)));
        }
        for (name, _) in texts {
            let mut deps: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (module, path) in crate_.paths_in(name) {
                if let Some(absolute) = crate_.absolute(&module, &path) {
                    // An exported macro lives at the root but is the file's that defines it.
                    let target = match crate_.macro_file(&path) {
                        Some(file) => file,
                        None => crate_.resolve(&absolute, 0),
                    };
                    if &target != name {
                        deps.entry(target).or_default().push(path.join("::"));
                    }
                }
            }
            for via in deps.values_mut() {
                via.sort();
                via.dedup();
            }
            crate_.edges.insert(name.clone(), deps);
        }
        crate_
    }

    fn rename(&mut self, from: &str, to: &str) {
        let fix = |name: &mut String| {
            if name == from {
                to.clone_into(name);
            }
        };
        for name in self.modules.values_mut() {
            fix(name);
        }
        let edges = std::mem::take(&mut self.edges);
        for (mut name, deps) in edges {
            fix(&mut name);
            let deps = deps
                .into_iter()
                .map(|(mut to, via)| {
                    fix(&mut to);
                    (to, via)
                })
                .collect();
            self.edges.insert(name, deps);
        }
    }

    /// The file that defines the macro `path` names (`crate::name`, as `$crate::name!` is
    /// written), when a file of the crate defines one by that name with `macro_rules!`: a
    /// `#[macro_export]` macro is named from the root, but it is the defining file's.
    fn macro_file(&self, path: &[String]) -> Option<String> {
        let [first, name] = path else { return None };
        if first != "crate" {
            return None;
        }
        self.tokens.iter().find_map(|(file, tokens)| {
            tokens
                .windows(3)
                .any(|w| w[0] == "macro_rules" && w[1] == "!" && w[2] == *name)
                .then(|| file.clone())
        })
    }

    /// Every path a file writes, with the module it is written in (the file's, or an inline
    /// `mod name { … }` inside it): each leaf of its `use` trees, and each `a::b::c` in code.
    fn paths_in(&self, file: &str) -> Vec<(Vec<String>, Vec<String>)> {
        let tokens = &self.tokens[file];
        let mut module = module_path(file);
        // The brace depth at which each open inline module started.
        let mut inline: Vec<usize> = Vec::new();
        let mut depth = 0;
        let mut paths = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            if tokens[i] == "mod" && tokens.get(i + 2).is_some_and(|t| t == "{") {
                module.push(tokens[i + 1].clone());
                inline.push(depth);
                depth += 1;
                i += 3;
                continue;
            }
            if tokens[i] == "{" {
                depth += 1;
            } else if tokens[i] == "}" {
                depth -= 1;
                if inline.last() == Some(&depth) {
                    inline.pop();
                    module.pop();
                }
            } else if tokens[i] == "use" {
                let mut leaves = Vec::new();
                i = use_tree(tokens, i + 1, &[], &mut leaves);
                paths.extend(leaves.into_iter().map(|(path, _)| (module.clone(), path)));
                continue;
            } else if is_ident(&tokens[i]) && tokens.get(i + 1).is_some_and(|t| t == "::") {
                let start = i;
                let mut path = vec![tokens[i].clone()];
                while tokens.get(i + 1).is_some_and(|t| t == "::")
                    && tokens.get(i + 2).is_some_and(|t| is_ident(t))
                {
                    path.push(tokens[i + 2].clone());
                    i += 2;
                }
                // `a::b` after `::` or `.` is part of a longer path or a method's turbofish.
                let prev = start.checked_sub(1).map(|p| tokens[p].as_str());
                if !matches!(prev, Some("::" | ".")) {
                    paths.push((module.clone(), path));
                }
            }
            i += 1;
        }
        paths
    }

    /// A path as module segments from the crate root, or `None` for another crate's path.
    fn absolute(&self, module: &[String], path: &[String]) -> Option<Vec<String>> {
        let mut base: Vec<String> = module.to_vec();
        let mut rest = path;
        match path.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &path[1..];
            }
            Some("self") => rest = &path[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut child = module.to_vec();
                child.push(first.to_owned());
                if !self.modules.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The file that defines what an absolute path names, following re-exports.
    fn resolve(&self, absolute: &[String], depth: usize) -> String {
        let mut module: Vec<String> = Vec::new();
        let mut rest = absolute;
        while let Some(segment) = rest.first() {
            let mut next = module.clone();
            next.push(segment.clone());
            if !self.modules.contains_key(&next) {
                break;
            }
            module = next;
            rest = &rest[1..];
        }
        let file = self.modules[&module].clone();
        let Some(item) = rest.first() else {
            return file;
        };
        if depth < 16
            && let Some(target) = self.re_export(&file, item)
            && let Some(mut target) = self.absolute(&module, &target)
        {
            target.extend(rest[1..].iter().cloned());
            return self.resolve(&target, depth + 1);
        }
        file
    }

    /// The path a file binds `name` to with a `use` (a re-export, or a private import its child
    /// modules see), if it does.
    fn re_export(&self, file: &str, name: &str) -> Option<Vec<String>> {
        let tokens = &self.tokens[file];
        // Only a `use` at the file's own level binds a name of its module; one in an inline
        // module or a function body binds it there.
        let mut depth = 0usize;
        let mut i = 0;
        while i < tokens.len() {
            match tokens[i].as_str() {
                "{" => depth += 1,
                "}" => depth = depth.saturating_sub(1),
                "use" if depth == 0 => {
                    let mut leaves = Vec::new();
                    i = use_tree(tokens, i + 1, &[], &mut leaves);
                    if let Some((path, _)) = leaves.into_iter().find(|(_, alias)| alias == name) {
                        return Some(path);
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// The strongly connected components of more than one file, each sorted.
    fn cycles(&self) -> Vec<Vec<String>> {
        let names: Vec<&String> = self.edges.keys().collect();
        let reach = |from: &String| -> BTreeSet<String> {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from.clone()];
            while let Some(node) = stack.pop() {
                for to in self.edges.get(&node).into_iter().flat_map(BTreeMap::keys) {
                    if seen.insert(to.clone()) {
                        stack.push(to.clone());
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&String, BTreeSet<String>> =
            names.iter().map(|n| (*n, reach(n))).collect();
        let mut cycles: Vec<Vec<String>> = Vec::new();
        for name in &names {
            if cycles.iter().any(|c| c.contains(name)) {
                continue;
            }
            let mut component: Vec<String> = names
                .iter()
                .filter(|other| {
                    other != &name
                        && reaches[*name].contains(**other)
                        && reaches[**other].contains(*name)
                })
                .map(|other| (*other).clone())
                .collect();
            if !component.is_empty() {
                component.push((*name).clone());
                component.sort();
                cycles.push(component);
            }
        }
        cycles
    }
}

/// Reads a use tree from `tokens[i]`, pushing each leaf path with the name it binds; returns
/// the index of the token that ends it.
fn use_tree(
    tokens: &[String],
    mut i: usize,
    prefix: &[String],
    leaves: &mut Vec<(Vec<String>, String)>,
) -> usize {
    let mut path = prefix.to_vec();
    while let Some(token) = tokens.get(i) {
        match token.as_str() {
            "{" => {
                i += 1;
                loop {
                    i = use_tree(tokens, i, &path, leaves);
                    match tokens.get(i).map(String::as_str) {
                        Some(",") => i += 1,
                        _ => break,
                    }
                    if tokens.get(i).is_some_and(|t| t == "}") {
                        break;
                    }
                }
                return i + 1;
            }
            "*" => {
                leaves.push((path, "*".to_owned()));
                return i + 1;
            }
            "::" => i += 1,
            "as" => {
                let alias = tokens.get(i + 1).cloned().unwrap_or_default();
                leaves.push((path, alias));
                return i + 2;
            }
            "," | "}" | ";" => {
                if path.len() > prefix.len() {
                    let name = if path.last().is_some_and(|s| s == "self") {
                        path.pop();
                        path.last().cloned().unwrap_or_default()
                    } else {
                        path.last().cloned().unwrap_or_default()
                    };
                    leaves.push((path, name));
                }
                return i;
            }
            ident => {
                path.push(ident.to_owned());
                i += 1;
            }
        }
    }
    i
}

fn is_ident(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::`, and single punctuation characters.
fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
            continue;
        }
        if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".to_owned());
            i += 2;
            continue;
        }
        if !c.is_whitespace() {
            out.push(c.to_string());
        }
        i += 1;
    }
    out
}

/// The code with comments, string literals and character literals replaced by spaces.
fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if let Some(end) = raw_string_end(&chars, i) {
            i = end;
            out.push(' ');
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Where a raw string literal (`r"…"`, `r#"…"#`, `br#"…"#`) starting at `i` ends, if one does.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let preceded_by_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    if preceded_by_ident {
        return None;
    }
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    loop {
        if j >= chars.len() {
            return Some(j);
        }
        if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
}

/// `a/b.rs` → `[a, b]`; `a/mod.rs` → `[a]`; `lib.rs` → `[]`.
fn module_path(name: &str) -> Vec<String> {
    if name == "lib.rs" {
        return Vec::new();
    }
    let trimmed = name.strip_suffix(".rs").unwrap_or(name);
    let mut segments: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
    if segments.last().is_some_and(|s| s == "mod") {
        segments.pop();
    }
    segments
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .expect("read a source directory")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).expect("under the root");
            files.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}
