//! Which of the live tables' indexes the copy does without while loading.
//!
//! Building an index once over a loaded table is a sort and a sequential write; keeping it
//! while loading is a random insert into it for every row written, and most of a replay's
//! time went there. So the copy keeps, while loading, only its unique indexes (the folds'
//! `ON CONFLICT` needs them) and the indexes a fold reads through
//! ([`ReadModel::load_indexes`]); [`super::indexes`] builds the others after the load.
//!
//! The erasure scrub's reads of other models' tables by player are not load indexes: each
//! erasure replayed scans the account's rows of the tables it scrubs instead (through their
//! primary keys, which lead with the account), a cost paid once per erasure, where keeping
//! those indexes would cost every record of those tables. Measured: a player's events
//! scrubbed in about 0.1 s per million events of the account without the index, 3 ms with
//! it; a log with a few erasures loses nothing, one with many thousands in large accounts
//! would spend minutes on them.
//!
//! An index can also refuse a row: a B-tree entry larger than a third of a page (2,704
//! bytes) fails the statement, and the live projector parks the message for that model. The
//! copy must refuse the same rows, or it would hold what the live tables never did. Of an
//! index whose columns are all fixed-width (no entry can grow that large) nothing is kept. Of
//! a B-tree index with text columns, the copy keeps while loading a guard: the same index
//! restricted to the rows whose text columns are long enough that their entry might not fit
//! (none, in practice), so the same rows are refused by the same check, with the same error,
//! at the cost of a predicate per row. Any other index is kept whole while loading.
//!
//! [`ReadModel::load_indexes`]: crate::projections::ReadModel::load_indexes

use super::copy::quoted;
use anyhow::Context;
use sqlx::{Executor, PgConnection};

/// The largest B-tree entry (version 4, 8 kB pages).
const BTREE_ENTRY_MAX: i32 = 2704;
/// Bytes of an entry besides its columns' data: its header, null bitmap and alignment.
const ENTRY_OVERHEAD: i32 = 24 + 64;
/// Bytes of each column besides its data, at most (a text's header, alignment).
const COLUMN_OVERHEAD: i32 = 8;

/// A live index the copy does without while loading, built by [`super::indexes`].
#[derive(Debug, Clone)]
pub(super) struct Deferred {
    /// The copy's table it indexes.
    pub(super) table: &'static str,
    /// The live index's name, which the copy's gets.
    pub(super) name: String,
    /// The live index's `CREATE INDEX` statement, on the copy's table.
    definition: String,
    /// Whether the copy holds a guard under the index's name while loading.
    guarded: bool,
}

impl Deferred {
    /// The statement that builds it on the copy (in `schema`), in place of its guard.
    pub(super) fn statement(&self, schema: &str) -> String {
        if self.guarded {
            format!(
                "DROP INDEX {schema}.{}; {}",
                quoted(&self.name),
                self.definition
            )
        } else {
            self.definition.clone()
        }
    }
}

/// What the copy holds of a live index while loading.
#[derive(Debug, PartialEq)]
enum Loading {
    /// The index itself.
    Whole,
    /// Nothing.
    Nothing,
    /// The index, only for the rows this predicate holds for.
    Guard(String),
}

/// An index of a live table or of its copy: its schema, table, name, whether unique, and
/// definition.
type IndexRow = (String, String, String, bool, String);

/// A column of a live index: the index, its access method, the column's width (-1:
/// variable), whether it is text, and its definition.
type ColumnRow = (String, String, i32, bool, String);

/// Inside the copy's creating transaction: names each index the copy's tables got from
/// `LIKE ... INCLUDING ALL` after the live index of the same definition, drops those neither
/// unique nor in `load` (live index names) or puts guards in their place (see the module
/// docs), and returns what they were.
pub(super) async fn defer(
    tx: &mut PgConnection,
    schema: &str,
    tables: &[&'static str],
    load: &[&str],
) -> anyhow::Result<Vec<Deferred>> {
    let rows: Vec<IndexRow> = sqlx::query_as(
        "SELECT n.nspname::text, t.relname::text, i.relname::text, x.indisunique,
                pg_get_indexdef(x.indexrelid)
         FROM pg_index x
         JOIN pg_class i ON i.oid = x.indexrelid
         JOIN pg_class t ON t.oid = x.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
         WHERE n.nspname IN ('public', $1) AND t.relname = ANY($2)
         ORDER BY t.relname, i.relname",
    )
    .bind(schema)
    .bind(tables)
    .fetch_all(&mut *tx)
    .await?;
    let columns: Vec<ColumnRow> = sqlx::query_as(
        "SELECT i.relname::text, am.amname::text, a.attlen::int4, a.atttypid = 'text'::regtype,
                pg_get_indexdef(x.indexrelid, a.attnum, true)
         FROM pg_index x
         JOIN pg_class i ON i.oid = x.indexrelid
         JOIN pg_am am ON am.oid = i.relam
         JOIN pg_attribute a ON a.attrelid = x.indexrelid AND a.attnum > 0
         JOIN pg_class t ON t.oid = x.indrelid
         WHERE t.relnamespace = 'public'::regnamespace AND t.relname = ANY($1)
         ORDER BY i.relname, a.attnum",
    )
    .bind(tables)
    .fetch_all(&mut *tx)
    .await?;
    let (live, mut copied): (Vec<IndexRow>, Vec<IndexRow>) =
        rows.into_iter().partition(|row| row.0 == "public");
    let mut deferred = Vec::new();
    let (mut ddl, mut guards) = (String::new(), String::new());
    for (_, table, name, unique, definition) in live {
        let found = copied.iter().position(|(_, t, _, u, d)| {
            *t == table && *u == unique && after_table(d) == after_table(&definition)
        });
        let (_, _, copy_name, _, _) =
            copied.swap_remove(found.with_context(|| {
                format!("the rebuild's copy of {table} has no index like {name}")
            })?);
        let table = tables
            .iter()
            .copied()
            .find(|t| *t == table)
            .context("an index of a table not copied")?;
        let loading = if unique || load.contains(&name.as_str()) {
            Loading::Whole
        } else {
            loading(columns.iter().filter(|c| c.0 == name))
        };
        if loading == Loading::Whole {
            if copy_name != name {
                ddl.push_str(&format!(
                    "ALTER INDEX {schema}.{} RENAME TO {};",
                    quoted(&copy_name),
                    quoted(&name)
                ));
            }
            continue;
        }
        ddl.push_str(&format!("DROP INDEX {schema}.{};", quoted(&copy_name)));
        let on_live = format!(" ON public.{table} USING ");
        anyhow::ensure!(
            definition.contains(&on_live),
            "unexpected definition of index {name}: {definition}"
        );
        let definition = definition.replacen(&on_live, &format!(" ON {schema}.{table} USING "), 1);
        let guarded = match &loading {
            Loading::Guard(predicate) => {
                // pg_get_indexdef ends with the predicate of a partial index.
                let joiner = if definition.contains(" WHERE ") {
                    " AND "
                } else {
                    " WHERE "
                };
                guards.push_str(&format!("{definition}{joiner}({predicate});"));
                true
            }
            _ => false,
        };
        deferred.push(Deferred {
            table,
            name,
            definition,
            guarded,
        });
    }
    ddl.push_str(&guards);
    if !ddl.is_empty() {
        (&mut *tx).execute(ddl.as_str()).await?;
    }
    Ok(deferred)
}

/// What the copy holds while loading of a live index that is neither unique nor a load
/// index, from its columns (see the module docs).
fn loading<'a>(columns: impl Iterator<Item = &'a ColumnRow>) -> Loading {
    let mut method_is_btree = true;
    let (mut fixed, mut texts) = (ENTRY_OVERHEAD, Vec::new());
    for (_, method, width, text, column) in columns {
        method_is_btree &= method == "btree";
        match (*width, *text) {
            (width, _) if width > 0 => fixed += width + COLUMN_OVERHEAD,
            (_, true) => {
                fixed += COLUMN_OVERHEAD;
                texts.push(format!("coalesce(octet_length(({column})), 0)"));
            }
            // Some other type of variable width: its size is not told by a function an
            // index predicate may call.
            _ => return Loading::Whole,
        }
    }
    if texts.is_empty() {
        return Loading::Nothing;
    }
    let room = BTREE_ENTRY_MAX - fixed;
    if !method_is_btree || room < 1024 {
        return Loading::Whole;
    }
    Loading::Guard(format!("{} > {room}", texts.join(" + ")))
}

/// What follows the table's name in an index's definition: the same in both schemas.
fn after_table(definition: &str) -> Option<&str> {
    definition.find(" USING ").map(|at| &definition[at..])
}

#[cfg(test)]
mod tests {
    use super::{ColumnRow, Loading, loading};

    fn column(method: &str, width: i32, text: bool, definition: &str) -> ColumnRow {
        ("i".into(), method.into(), width, text, definition.into())
    }

    #[test]
    fn fixed_width_indexes_are_deferred_and_text_ones_guarded() {
        let uuid = column("btree", 16, false, "account_id");
        let time = column("btree", 8, false, "sent_at");
        assert_eq!(loading([&uuid, &time].into_iter()), Loading::Nothing);
        // A GIN index's columns are its keys' (trigrams: int4).
        let trigram = column("gin", 4, false, "lower(name)");
        assert_eq!(loading([&trigram].into_iter()), Loading::Nothing);

        let name = column("btree", -1, true, "lower(name)");
        let Loading::Guard(predicate) = loading([&uuid, &name].into_iter()) else {
            panic!("a text column is guarded")
        };
        // 2704 - (24 + 64) - (16 + 8) - 8
        assert_eq!(predicate, "coalesce(octet_length((lower(name))), 0) > 2584");

        let array = column("btree", -1, false, "names");
        assert_eq!(loading([&uuid, &array].into_iter()), Loading::Whole);
        let gist = column("gist", -1, true, "name");
        assert_eq!(loading([&gist].into_iter()), Loading::Whole);
    }
}
