-- Funnels are now walked by query-api over an index-only scan (see 0007): the PL/pgSQL walk
-- of 0006 is no longer called. query-api replicas older than this release call it, so
-- upgrade query-api together with the projector (see CHANGELOG).
DROP FUNCTION IF EXISTS funnel_progress(
    integer[], timestamptz[], text[], double precision, text, timestamptz, timestamptz
);

-- Index-only scans skip the heap only for pages the visibility map marks all-visible, and
-- only VACUUM sets it. On an insert-only table autovacuum comes after 20% new rows by
-- default, which on a large table leaves weeks of recent events (the ones funnels read)
-- unmarked. Vacuum events after every 100k inserts instead: each run only visits new pages.
ALTER TABLE events SET (
    autovacuum_vacuum_insert_threshold = 100000,
    autovacuum_vacuum_insert_scale_factor = 0
);
