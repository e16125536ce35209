//! The registry's invariants: one entry per read model, names and tables each owned once,
//! dependencies registered and applied first.

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

/// Every `impl ReadModel for` under `src/projections/` is a registered model: a module that
/// implements the trait but was left out of [`READ_MODELS`] fails here, before any database.
#[test]
fn every_implementation_in_the_source_is_registered() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/projections");
    let mut implementations = Vec::new();
    collect_implementations(&root, &mut implementations);
    assert!(
        !implementations.is_empty(),
        "found no `impl ReadModel for` under {}",
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
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("a source file");
        for line in source.lines() {
            if let Some(rest) = line.trim_start().strip_prefix("impl ReadModel for ") {
                let name = rest.trim_end_matches(['{', ' ']);
                let file = path
                    .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                    .unwrap_or(&path);
                found.push(format!("{name} in {}", file.display()));
            }
        }
    }
}

/// The trait objects compare and print by name, which `rebuild --model` and the tests rely on.
#[test]
fn models_compare_and_print_by_name() {
    let players: &dyn ReadModel = &super::players::Players;
    assert_eq!(format!("{players:?}"), "players");
    assert_eq!(by_name("players"), Some(players));
    assert_ne!(by_name("chat"), Some(players));
}
