//! A read model for the schedulers' tests: a name and dependencies, and no fold (a `*_tests.rs`
//! file, so the registry test does not count it as a model).

use super::{Positioned, ReadModel};
use futures::future::BoxFuture;
use sqlx::PgConnection;

/// A model with a name and dependencies, and no fold.
pub(crate) struct Fake(pub(crate) &'static str, pub(crate) &'static [&'static str]);

impl ReadModel for Fake {
    fn name(&self) -> &'static str {
        self.0
    }

    fn tables(&self) -> &'static [&'static str] {
        &[]
    }

    fn depends_on(&self) -> &'static [&'static str] {
        self.1
    }

    fn apply<'a>(
        &'a self,
        _: &'a mut PgConnection,
        _: &'a [&'a Positioned],
    ) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        Box::pin(async { Ok(0) })
    }
}
