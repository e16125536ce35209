//! Rebuilds the crate (and its tests, which apply the migrations) when a migration changes:
//! `sqlx::migrate!` embeds the directory at compile time and would otherwise keep a stale copy.

fn main() {
    println!("cargo:rerun-if-changed=../projector/migrations");
}
