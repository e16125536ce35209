-- The event log is consumed in partitions (by a hash of the account: shared::subjects), each
-- on its own, so every read model has one checkpoint per partition. Rows made before
-- partitions covered every account at once: they become log_partition -1, and the projector
-- seeds each partition's row from them on its first start (a partition resumes where the
-- whole log stood), then deletes them (projector::checkpoint::ensure).
ALTER TABLE projection_checkpoints ADD COLUMN log_partition integer NOT NULL DEFAULT -1;
ALTER TABLE projection_checkpoints DROP CONSTRAINT projection_checkpoints_pkey;
ALTER TABLE projection_checkpoints ADD PRIMARY KEY (projection, log_partition);
ALTER TABLE projection_checkpoints ALTER COLUMN log_partition DROP DEFAULT;
