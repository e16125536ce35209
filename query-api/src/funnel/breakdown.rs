//! A funnel broken down by one property of each player's entry (the step-1 event their best
//! journey started from): the top values by players entering, everything else as "other",
//! and the players whose entry lacks the property (or has it as JSON null) as "(none)".

use std::collections::HashMap;

/// Which players a breakdown row counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BreakdownGroup {
    /// Entries whose property has this value (as text: `properties ->> key`).
    Value(String),
    /// Entries with a value outside the top values.
    Other,
    /// Entries without the property, or with it null.
    Missing,
}

/// One row: a group and its players per step.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakdownRow {
    /// The players counted.
    pub group: BreakdownGroup,
    /// Players per step, step 1 first.
    pub players: Vec<i64>,
}

/// Players per step for each property value seen (None: missing).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Groups {
    counts: HashMap<Option<Box<[u8]>>, Vec<i64>>,
}

impl Groups {
    /// Counts a player who reached `reached` of `steps` steps from an entry with `property`.
    pub(crate) fn add(&mut self, property: Option<&[u8]>, reached: usize, steps: usize) {
        let counts = self
            .counts
            .entry(property.map(Box::from))
            .or_insert_with(|| vec![0; steps]);
        for count in counts.iter_mut().take(reached) {
            *count += 1;
        }
    }

    /// Adds another slice's groups.
    pub(crate) fn merge(&mut self, other: Groups) {
        for (value, theirs) in other.counts {
            match self.counts.get_mut(&value) {
                Some(mine) => mine.iter_mut().zip(theirs).for_each(|(m, t)| *m += t),
                None => {
                    self.counts.insert(value, theirs);
                }
            }
        }
    }

    /// The `limit` values with the most entering players (ties by value), then "other" and
    /// "(none)" when they count anyone.
    pub(crate) fn rows(self, limit: usize) -> Vec<BreakdownRow> {
        let mut missing = None;
        let mut values = Vec::new();
        for (value, players) in self.counts {
            match value {
                Some(bytes) => values.push((String::from_utf8_lossy(&bytes).into_owned(), players)),
                None => missing = Some(players),
            }
        }
        values.sort_by(|(a, a_players), (b, b_players)| {
            b_players.first().cmp(&a_players.first()).then(a.cmp(b))
        });
        let rest = values.split_off(limit.min(values.len()));
        let mut rows: Vec<BreakdownRow> = values
            .into_iter()
            .map(|(value, players)| BreakdownRow {
                group: BreakdownGroup::Value(value),
                players,
            })
            .collect();
        if let Some(other) = rest.into_iter().map(|(_, p)| p).reduce(|mut sum, players| {
            sum.iter_mut().zip(players).for_each(|(s, p)| *s += p);
            sum
        }) {
            rows.push(BreakdownRow {
                group: BreakdownGroup::Other,
                players: other,
            });
        }
        if let Some(players) = missing {
            rows.push(BreakdownRow {
                group: BreakdownGroup::Missing,
                players,
            });
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_values_then_other_then_none() {
        let mut groups = Groups::default();
        // eu: 3 entered, 1 converted; us: 2 entered; asia and sa: 1 each; two without.
        for reached in [2, 1, 1] {
            groups.add(Some(b"eu"), reached, 2);
        }
        let mut slice = Groups::default();
        slice.add(Some(b"us"), 2, 2);
        slice.add(Some(b"us"), 2, 2);
        slice.add(Some(b"sa"), 1, 2);
        slice.add(Some(b"asia"), 2, 2);
        slice.add(None, 1, 2);
        groups.add(None, 2, 2);
        groups.merge(slice);
        let rows = groups.rows(2);
        let value = |v: &str| BreakdownGroup::Value(v.to_owned());
        assert_eq!(
            rows,
            [
                BreakdownRow {
                    group: value("eu"),
                    players: vec![3, 1]
                },
                BreakdownRow {
                    group: value("us"),
                    players: vec![2, 2]
                },
                BreakdownRow {
                    group: BreakdownGroup::Other,
                    players: vec![2, 1]
                },
                BreakdownRow {
                    group: BreakdownGroup::Missing,
                    players: vec![2, 1]
                },
            ]
        );
        // Ties in entering players go by value, and no "other" when everything fits.
        let mut tied = Groups::default();
        tied.add(Some(b"b"), 1, 2);
        tied.add(Some(b"a"), 1, 2);
        let rows = tied.rows(10);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].group, value("a"));
    }
}
