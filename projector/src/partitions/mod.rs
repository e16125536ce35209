//! Sharing the log's partitions between projector processes.
//!
//! Every process is a member while it runs (a shared advisory lock, [`lease::Membership`]), and
//! consumes the partitions whose leases it holds (an exclusive advisory lock per partition, on
//! a session of its own). Every [`CLAIM_POLL`] each process counts the members and takes its
//! fair share, `ceil(partitions / members)`: while it holds fewer it takes free partitions
//! (starting at a place of its own, so two processes starting together do not try the same
//! ones), and while it holds more it lets the surplus go (each consumer finishes the chunk it
//! is applying first). One process alone holds every partition; a second one gets about half
//! within a couple of polls; when a holder dies its sessions end, its locks drop, and the
//! others take its partitions within a poll or two.
//!
//! Leases save work; they are not what keeps effects exactly-once. Every model's transaction
//! locks its (model, partition) checkpoint row and skips what it covers, so a partition
//! consumed twice for a moment (a lease session lost while its chunk commits) applies
//! nothing twice.

mod lease;
pub(crate) mod tail;

use crate::startup::Projector;
use lease::{Lease, Membership};
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a process counts the members and balances its share.
pub(crate) const CLAIM_POLL: Duration = Duration::from_secs(1);

/// Claims and consumes partitions until `shutdown`, then lets every one go.
pub(crate) async fn claim(projector: Arc<Projector>, shutdown: &CancellationToken) {
    let stream = projector.reader.stream.cached_info().config.name.clone();
    let options = projector.pool.connect_options();
    let mut membership = Membership::new(&stream);
    let mut claims = Claims {
        projector,
        stream,
        shutdown,
        leases: BTreeMap::new(),
        spare: None,
        member: None,
    };
    loop {
        claims.forget_ended().await;
        let fair = match membership.live(&options).await {
            Some(live) => {
                let live = u16::try_from(live.max(1)).unwrap_or(u16::MAX);
                claims.projector.subjects.partitions().div_ceil(live)
            }
            // Not a member: consume nothing.
            None => 0,
        };
        let held = claims.leases.len();
        if usize::from(fair) < held {
            let surplus: Vec<u16> = claims
                .leases
                .keys()
                .rev()
                .take(held - usize::from(fair))
                .copied()
                .collect();
            claims.release(&surplus).await;
        } else if usize::from(fair) > held {
            if claims.member.is_none() {
                claims.member = membership.backend_pid().await.map(|pid| {
                    let name = format!("{} {pid}", crate::leadership::PROJECTOR);
                    (
                        pid.unsigned_abs(),
                        (*options).clone().application_name(&name),
                    )
                });
            }
            claims.take(usize::from(fair)).await;
        }
        tokio::select! {
            () = shutdown.cancelled() => break,
            () = tokio::time::sleep(CLAIM_POLL) => {}
        }
    }
    let every: Vec<u16> = claims.leases.keys().copied().collect();
    claims.release(&every).await;
    if let Some(session) = claims.spare.take() {
        let _ = session.close().await;
    }
    membership.leave().await;
}

/// What a process holds, and how it takes more.
struct Claims<'a> {
    projector: Arc<Projector>,
    stream: String,
    shutdown: &'a CancellationToken,
    leases: BTreeMap<u16, Lease>,
    /// Reused for lock attempts until one is granted; then it becomes that lease's session.
    spare: Option<PgConnection>,
    /// Set once a member: where this process starts looking for free partitions, and its
    /// lease sessions' options, whose application_name (`warden-projector <membership backend
    /// pid>`) shows in pg_stat_activity which process holds which partition.
    member: Option<(u32, PgConnectOptions)>,
}

impl Claims<'_> {
    /// Drops the leases whose session was lost (their consumers stopped).
    async fn forget_ended(&mut self) {
        let ended: Vec<u16> = self
            .leases
            .iter()
            .filter(|(_, lease)| lease.is_finished())
            .map(|(k, _)| *k)
            .collect();
        self.release(&ended).await;
    }

    /// Takes free partitions until it holds `fair`, starting at its own place.
    async fn take(&mut self, fair: usize) {
        let Some((pid, options)) = &self.member else {
            return;
        };
        let partitions = u32::from(self.projector.subjects.partitions());
        for step in 0..partitions {
            if fair <= self.leases.len() {
                break;
            }
            let Ok(partition) = u16::try_from((pid % partitions + step) % partitions) else {
                continue;
            };
            if self.leases.contains_key(&partition) {
                continue;
            }
            let mut session = match self.spare.take() {
                Some(session) => session,
                None => match lease::connect(options).await {
                    Ok(session) => session,
                    Err(error) => {
                        tracing::warn!(%error, "cannot open a lease session");
                        return;
                    }
                },
            };
            match lease::try_take(&mut session, &self.stream, partition).await {
                Ok(true) => {
                    tracing::info!(partition, "took a partition of the event log");
                    let stop = self.shutdown.child_token();
                    let work = consume_partition(self.projector.clone(), partition, stop.clone());
                    self.projector.progress.took(partition);
                    let key = lease::partition_key(&self.stream, partition);
                    let lease = Lease::start(session, key, stop, work);
                    self.leases.insert(partition, lease);
                }
                Ok(false) => self.spare = Some(session),
                Err(error) => {
                    tracing::warn!(%error, "cannot try for a partition's lease");
                    return;
                }
            }
        }
    }

    /// Lets `which` go, all at once: each consumer commits its chunk, then its lease is
    /// unlocked.
    async fn release(&mut self, which: &[u16]) {
        let projector = &self.projector;
        let releasing = which.iter().filter_map(|partition| {
            let lease = self.leases.remove(partition)?;
            Some(async move {
                lease.release().await;
                projector.progress.released(*partition);
                tracing::info!(partition, "let a partition of the event log go");
            })
        });
        futures::future::join_all(releasing).await;
    }
}

/// One partition's consumer until `stop`, with the idle partition's checkpoint move beside it,
/// and the retention sweep beside partition 0's.
async fn consume_partition(projector: Arc<Projector>, partition: u16, stop: CancellationToken) {
    let this = &*projector;
    let reader = crate::consumer::LogReader {
        filter_subjects: this.subjects.partition_events(partition),
        ..this.reader.clone()
    };
    let sink = crate::consumer::PartitionSink {
        projector: this,
        partition,
        committed: std::sync::atomic::AtomicU64::new(0),
    };
    let consuming = async {
        let (consumed, ()) = tokio::join!(crate::consumer::consume(&reader, &sink, &stop), async {
            idle(this, partition, &stop).await;
        });
        if let Err(error) = consumed {
            tracing::error!(partition, %error, "a partition's consumer failed");
        }
    };
    if partition == 0 {
        let sweeper = crate::retention::Sweeper {
            pool: &this.pool,
            keyring: &this.keyring,
            every: this.retention_every,
        };
        sweeper.beside(consuming).await;
    } else {
        consuming.await;
    }
}

/// How often an idle partition's checkpoints follow the stream's end.
const IDLE_EVERY: Duration = Duration::from_millis(250);

/// Moves the partition's checkpoints to the stream's end whenever it holds every message of its
/// own ([`tail::advance_idle`]), until `stop`. Asks only when the stream's end moved since the
/// partition last stood there.
async fn idle(projector: &Projector, partition: u16, stop: &CancellationToken) {
    let names = crate::projections::checkpoint_names();
    let mut settled = None;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(IDLE_EVERY) => {}
        }
        let stream = &projector.reader.stream;
        let end = match tail::stream_end(stream).await {
            Ok(end) if settled != Some(end) => end,
            Ok(_) => continue,
            Err(error) => {
                tracing::debug!(partition, %error, "cannot read the stream's end");
                continue;
            }
        };
        let slots = &projector.slots;
        let subjects = &projector.subjects;
        let pool = &projector.pool;
        match tail::advance_idle(pool, stream, subjects, partition, &names, end, slots).await {
            Ok(true) => {
                settled = Some(end);
                projector.progress.committed(partition, end, Some(0));
            }
            Ok(false) => {}
            Err(error) => tracing::debug!(partition, %error, "cannot follow the stream's end"),
        }
    }
}
