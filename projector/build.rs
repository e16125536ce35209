//! Rebuilds the crate when a migration is added or edited: `sqlx::migrate!` embeds the
//! `migrations/` directory at compile time and would otherwise keep a stale copy.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
