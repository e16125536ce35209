//! The order of the index build's statements ([`super::indexes`]): each table's own come in
//! their order (made logged, then its indexes, then vacuumed and analyzed), and the tables
//! go side by side, so a connection is never idle while another table's work waits.
//!
//! Before, each step was a barrier for every table: no index was built before every table was
//! logged, and no table vacuumed before every index was built. On the benchmark's million
//! records the chat messages' trigram index alone takes about 16 s (GIN indexes are built by
//! one process); it started only after every table was logged, and the other connection sat
//! idle for its last seconds. Now the longest chain of work goes first: the chat table is made
//! logged first, its trigram index starts right after, and the other connection does every
//! other table meanwhile.
//!
//! A table's work may start before the load has ended: once the models writing to it have
//! loaded everything ([`Plan::next_among`] the tables that are ready), while the slowest model
//! still loads on a core of its own.

/// What a statement does to its table; a table's steps run in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Step {
    /// `ALTER TABLE ... SET LOGGED` (it rewrites the table and rebuilds its indexes, so
    /// none is built before it).
    Logged,
    /// One of its deferred indexes (they may run side by side).
    Index,
    /// `VACUUM (ANALYZE)`, once every index is built (with their statistics targets set).
    Vacuum,
}

/// One statement of the index build.
#[derive(Debug)]
pub(super) struct Job {
    pub(super) sql: String,
    pub(super) table: &'static str,
    pub(super) step: Step,
    /// What it costs per byte of its table, relative to the other steps.
    pub(super) cost: f64,
    /// Its share of the phase's work (the bytes it works through times its step's cost).
    pub(super) weight: f64,
}

/// What a free connection does next.
#[derive(Debug, PartialEq)]
pub(super) enum Next {
    /// Runs the job of this index, then tells [`Plan::done`].
    Run(usize),
    /// Waits for a running job to finish: every job left waits for one.
    Wait,
    /// Stops: every job has been taken.
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Waiting,
    Running,
    Done,
}

/// The index build's jobs and where each stands.
#[derive(Debug)]
pub(super) struct Plan {
    jobs: Vec<Job>,
    /// The work from each job's start to its table's end, along the longest chain: what
    /// is picked first among the jobs ready.
    reach: Vec<f64>,
    states: Vec<State>,
}

impl Plan {
    pub(super) fn new(jobs: Vec<Job>) -> Plan {
        let states = vec![State::Waiting; jobs.len()];
        let mut plan = Plan {
            jobs,
            reach: Vec::new(),
            states,
        };
        plan.reach = plan.reach();
        plan
    }

    /// Weighs the jobs of the tables for which `size` tells their bytes again (their cost
    /// times it).
    pub(super) fn reweigh(&mut self, size: impl Fn(&str) -> Option<f64>) {
        for job in &mut self.jobs {
            if let Some(bytes) = size(job.table) {
                job.weight = job.cost * bytes;
            }
        }
        self.reach = self.reach();
    }

    /// The tables none of whose jobs has started.
    pub(super) fn unstarted(&self) -> Vec<&'static str> {
        let mut tables: Vec<&'static str> = self.jobs.iter().map(|j| j.table).collect();
        tables.sort_unstable();
        tables.dedup();
        tables.retain(|table| {
            self.jobs
                .iter()
                .zip(&self.states)
                .all(|(job, state)| job.table != *table || *state == State::Waiting)
        });
        tables
    }

    /// The weight of the jobs not done yet (running or waiting).
    pub(super) fn left(&self) -> f64 {
        self.jobs
            .iter()
            .zip(&self.states)
            .filter(|(_, state)| **state != State::Done)
            .map(|(job, _)| job.weight)
            .sum()
    }

    /// The work from each job's start to its table's end, along the longest chain.
    fn reach(&self) -> Vec<f64> {
        let jobs = &self.jobs;
        let weight_of = |table: &str, step: Step| -> Vec<f64> {
            jobs.iter()
                .filter(|j| j.table == table && j.step == step)
                .map(|j| j.weight)
                .collect()
        };
        jobs.iter()
            .map(|job| {
                let vacuum: f64 = weight_of(job.table, Step::Vacuum).iter().sum();
                let longest_index = weight_of(job.table, Step::Index)
                    .into_iter()
                    .fold(0.0, f64::max);
                job.weight
                    + match job.step {
                        Step::Logged => longest_index + vacuum,
                        Step::Index => vacuum,
                        Step::Vacuum => 0.0,
                    }
            })
            .collect()
    }

    pub(super) fn job(&self, index: usize) -> &Job {
        &self.jobs[index]
    }

    /// The job a free connection runs next (now marked running), if one is ready.
    pub(super) fn next(&mut self) -> Next {
        self.next_among(|_| true)
    }

    /// The job a free connection runs next among those of the tables `open` says may start.
    pub(super) fn next_among(&mut self, open: impl Fn(&str) -> bool) -> Next {
        let ready = (0..self.jobs.len())
            .filter(|&i| {
                self.states[i] == State::Waiting && open(self.jobs[i].table) && self.is_ready(i)
            })
            .max_by(|&a, &b| self.reach[a].total_cmp(&self.reach[b]));
        match ready {
            Some(index) => {
                self.states[index] = State::Running;
                Next::Run(index)
            }
            None if self.states.contains(&State::Waiting) => Next::Wait,
            None => Next::Finished,
        }
    }

    /// The job `index` finished.
    pub(super) fn done(&mut self, index: usize) {
        self.states[index] = State::Done;
    }

    /// Whether every earlier step of the job's table is done.
    fn is_ready(&self, index: usize) -> bool {
        let job = &self.jobs[index];
        self.jobs.iter().zip(&self.states).all(|(other, state)| {
            other.table != job.table || other.step >= job.step || *state == State::Done
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(table: &'static str, step: Step, weight: f64) -> Job {
        Job {
            sql: format!("{step:?} {table} {weight}"),
            table,
            step,
            cost: weight,
            weight,
        }
    }

    /// Two big tables and a small one, the first with a slow index.
    fn plan() -> Plan {
        Plan::new(vec![
            job("small", Step::Logged, 1.0),
            job("small", Step::Index, 0.8),
            job("small", Step::Vacuum, 0.2),
            job("chat", Step::Logged, 10.0),
            job("chat", Step::Index, 8.0),
            job("chat", Step::Index, 16.0),
            job("chat", Step::Vacuum, 2.0),
            job("events", Step::Logged, 12.0),
            job("events", Step::Index, 9.6),
            job("events", Step::Vacuum, 2.4),
        ])
    }

    /// The statement of the job a free connection takes next.
    fn take(plan: &mut Plan) -> String {
        take_among(plan, |_| true)
    }

    /// The statement of the job a free connection takes next among `open`'s tables.
    fn take_among(plan: &mut Plan, open: impl Fn(&str) -> bool) -> String {
        match plan.next_among(open) {
            Next::Run(index) => plan.job(index).sql.clone(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn the_longest_chain_starts_first_and_its_slow_index_right_after_its_table() {
        let mut plan = plan();
        assert_eq!(take(&mut plan), "Logged chat 10");
        assert_eq!(take(&mut plan), "Logged events 12");
        plan.done(3);
        assert_eq!(take(&mut plan), "Index chat 16");
        assert_eq!(take(&mut plan), "Index chat 8");
    }

    #[test]
    fn a_table_open_early_starts_alone_and_the_rest_waits_for_the_others() {
        let mut plan = plan();
        let chat = |table: &str| table == "chat";
        assert_eq!(take_among(&mut plan, chat), "Logged chat 10");
        assert_eq!(plan.next_among(chat), Next::Wait, "its indexes wait for it");
        plan.done(3);
        assert_eq!(take_among(&mut plan, chat), "Index chat 16");
        // Every table open: the longest chain of the others first.
        assert_eq!(take(&mut plan), "Logged events 12");
    }

    #[test]
    fn the_tables_no_statement_started_on_are_unstarted() {
        let mut plan = plan();
        let all = plan.unstarted();
        assert!(all.contains(&"chat") && all.contains(&"events"), "{all:?}");
        assert_eq!(take(&mut plan), "Logged chat 10");
        let left = plan.unstarted();
        assert!(
            !left.contains(&"chat") && left.contains(&"events"),
            "{left:?}"
        );
        assert_eq!(left.len(), all.len() - 1, "{left:?}");
    }

    #[test]
    fn reweighed_tables_change_which_goes_first_and_what_is_left() {
        let mut plan = plan();
        let left = plan.left();
        // The small table turned out the biggest (weighed while it was still loading).
        plan.reweigh(|table| (table == "small").then_some(100.0));
        assert_eq!(take(&mut plan), "Logged small 1");
        assert!(
            (plan.left() - (left - 2.0 + 200.0)).abs() < 1e-9,
            "{}",
            plan.left()
        );
        plan.done(0);
        assert!(
            (plan.left() - (left - 2.0 + 100.0)).abs() < 1e-9,
            "{}",
            plan.left()
        );
    }

    #[test]
    fn a_table_is_vacuumed_only_once_every_index_of_it_is_built() {
        let mut plan = Plan::new(vec![
            job("t", Step::Vacuum, 0.2),
            job("t", Step::Index, 0.8),
            job("t", Step::Logged, 1.0),
            job("t", Step::Index, 1.6),
        ]);
        assert_eq!(plan.next(), Next::Run(2), "made logged first");
        assert_eq!(plan.next(), Next::Wait, "its indexes wait for it");
        plan.done(2);
        assert_eq!(plan.next(), Next::Run(3));
        assert_eq!(plan.next(), Next::Run(1));
        assert_eq!(plan.next(), Next::Wait, "the vacuum waits for both indexes");
        plan.done(3);
        assert_eq!(plan.next(), Next::Wait);
        plan.done(1);
        assert_eq!(plan.next(), Next::Run(0));
        assert_eq!(plan.next(), Next::Finished, "every job taken");
    }

    #[test]
    fn a_table_without_deferred_indexes_is_vacuumed_once_logged() {
        let mut plan = Plan::new(vec![
            job("t", Step::Logged, 1.0),
            job("t", Step::Vacuum, 0.2),
        ]);
        assert_eq!(plan.next(), Next::Run(0));
        assert_eq!(plan.next(), Next::Wait);
        plan.done(0);
        assert_eq!(plan.next(), Next::Run(1));
    }

    #[test]
    fn every_job_runs_once_in_its_tables_order() {
        let mut plan = plan();
        let mut order = Vec::new();
        loop {
            match plan.next() {
                Next::Run(index) => {
                    order.push(index);
                    plan.done(index);
                }
                Next::Wait => panic!("nothing running, yet a job waits"),
                Next::Finished => break,
            }
        }
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        let position = |i: usize| order.iter().position(|&o| o == i);
        for (before, after) in [
            (0, 1),
            (1, 2),
            (3, 4),
            (3, 5),
            (4, 6),
            (5, 6),
            (7, 8),
            (8, 9),
        ] {
            assert!(
                position(before) < position(after),
                "{before} ran after {after}"
            );
        }
    }
}
