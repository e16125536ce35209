//! The registry's invariants (one entry per read model, names and tables each owned once,
//! dependencies registered and applied first), and the statement ranges every fold writes in.

use super::{READ_MODELS, ReadModel, by_name, tables};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn names_are_unique_checkpoint_names_found_by_name() {
    let mut seen = BTreeSet::new();
    for model in READ_MODELS {
        let name = model.name();
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{name:?} is not a plain snake_case checkpoint name"
        );
        assert!(seen.insert(name), "two read models are named {name}");
        assert_eq!(by_name(name), Some(*model));
    }
    assert_eq!(by_name("no_such_model"), None);
}

#[test]
fn every_table_belongs_to_exactly_one_model() {
    let mut owners = std::collections::BTreeMap::new();
    for model in READ_MODELS {
        assert!(!model.tables().is_empty(), "{model:?} writes no table");
        for table in model.tables() {
            if let Some(other) = owners.insert(*table, model.name()) {
                panic!("{table} is claimed by both {other} and {model:?}");
            }
        }
    }
    assert_eq!(tables().count(), owners.len());
}

#[test]
fn dependencies_are_registered_models_applied_earlier() {
    for (position, model) in READ_MODELS.iter().enumerate() {
        for dependency in model.depends_on() {
            let Some(at) = READ_MODELS.iter().position(|m| m.name() == *dependency) else {
                panic!("{model:?} depends on {dependency}, which is not registered");
            };
            assert!(
                at < position,
                "{model:?} depends on {dependency}, which READ_MODELS lists after it"
            );
        }
    }
}

/// Every implementation under `src/projections/` (a `read_model! { ... }` or a hand-written
/// `impl ReadModel for`) is a registered model: a module that implements the trait but was left
/// out of [`READ_MODELS`] fails here, before any database.
#[test]
fn every_implementation_in_the_source_is_registered() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/projections");
    let mut implementations = Vec::new();
    collect_implementations(&root, &mut implementations);
    assert!(
        !implementations.is_empty(),
        "found no `read_model!` or `impl ReadModel for` under {}",
        root.display()
    );
    assert_eq!(
        implementations.len(),
        READ_MODELS.len(),
        "read models implemented: {implementations:?}; registered in READ_MODELS: \
         {READ_MODELS:?}: add the missing one to READ_MODELS (projections/mod.rs)"
    );
}

fn collect_implementations(dir: &Path, found: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).expect("the projections source directory");
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect_implementations(&path, found);
            continue;
        }
        // Unit-test files (`tests.rs`, `*_tests.rs`) hold no model, and this one quotes the
        // patterns it looks for.
        if path.extension().is_none_or(|e| e != "rs")
            || path.to_string_lossy().ends_with("tests.rs")
        {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("a source file");
        let file = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(&path);
        for name in implemented_models(&source) {
            found.push(format!("{name} in {}", file.display()));
        }
    }
}

/// The models a source file implements [`ReadModel`] for: each `read_model! { Name: ... }` (the
/// name may be on the next line, for a long one) and each hand-written
/// `impl ReadModel for Name`. The macro's own definition (`$model`) and comments are skipped.
fn implemented_models(source: &str) -> Vec<String> {
    let mut models = Vec::new();
    let mut lines = source.lines().map(str::trim_start);
    while let Some(line) = lines.next() {
        let name = if let Some(rest) = line.strip_prefix("read_model! {") {
            let rest = match rest.trim() {
                "" => lines.next().unwrap_or("").trim_start(),
                rest => rest,
            };
            rest.split(':').next().unwrap_or("").trim()
        } else if let Some(rest) = line.strip_prefix("impl ReadModel for ") {
            rest.trim_end_matches(['{', ' '])
        } else {
            continue;
        };
        if !name.is_empty() && !name.starts_with('$') {
            models.push(name.to_owned());
        }
    }
    models
}

#[test]
fn the_source_scan_finds_macro_and_hand_written_implementations() {
    let source = "/// `read_model! { Doc: ... }` in a comment is not one.\n\
                  read_model! { Chat: \"chat\", tables: [\"c\"], fold: apply }\n\
                  read_model! {\n    Servers: \"servers\",\n}\n\
                  impl ReadModel for Rollups {\n\
                  impl $crate::projections::ReadModel for $model {\n";
    assert_eq!(implemented_models(source), ["Chat", "Servers", "Rollups"]);
}

/// The trait objects compare and print by name, which `rebuild --model` and the tests rely on.
#[test]
fn models_compare_and_print_by_name() {
    let players: &dyn ReadModel = &super::players::Players;
    assert_eq!(format!("{players:?}"), "players");
    assert_eq!(by_name("players"), Some(players));
    assert_ne!(by_name("chat"), Some(players));
}

#[test]
fn statement_ranges_cover_every_row_once_in_bounded_steps() {
    let ranges: Vec<_> = super::statement_ranges(12, 5).collect();
    assert_eq!(ranges, [0..5, 5..10, 10..12]);
    assert_eq!(super::statement_ranges(0, 5).count(), 0);
    assert_eq!(super::statement_ranges(5, 5).next(), Some(0..5));
    assert_eq!(super::statement_ranges(5, 5).count(), 1);
}
