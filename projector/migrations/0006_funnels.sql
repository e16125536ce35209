-- Funnels (contract §8) are computed inside PostgreSQL, next to the events: the service sends
-- one query and gets one row per step back, never the events themselves.
--
-- The query aggregates each candidate player's events (in timeline order: occurred_at, then
-- seq) into two arrays and this function walks them. Event names arrive as integer codes
-- (the 1-based position of the name in `steps`, 0 for an event that is no step) because
-- PL/pgSQL subscripting is O(1) on fixed-width arrays but O(i) on text[].
--
-- Semantics, per entry (every occurrence of step 1 with entry_from <= time < entry_to is an
-- entry, so a player who drops out can re-enter later):
--   sequential  the next occurrence of each step after the previous step, other events
--               may come between;
--   strict      each step must be the very next event (the arrays then also hold the
--               player's other custom events, as codes 0, which break the chain);
--   any         steps 2..N in any order after the entry; step k counts once steps 2..k have
--               all happened, at the latest of their first occurrences.
-- Everything must happen within window_seconds of the entry (the bound is inclusive). Ties
-- in time keep timeline order. The player's best entry (most steps; the earliest among
-- equals) is returned as the time each step was reached.
CREATE FUNCTION funnel_progress(
    codes          integer[],
    times          timestamptz[],
    steps          text[],
    window_seconds double precision,
    mode           text,
    entry_from     timestamptz,
    entry_to       timestamptz
) RETURNS timestamptz[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    n          integer := coalesce(array_length(codes, 1), 0);
    m          integer := array_length(steps, 1);
    win        interval := make_interval(secs => window_seconds);
    canon      integer[] := '{}';
    best       timestamptz[] := '{}';
    reached    timestamptz[];
    first_seen timestamptz[];
    deadline   timestamptz;
    i integer; j integer; k integer; s integer;
BEGIN
    -- canon[k]: the code an event must carry to be step k (steps may repeat a name).
    FOR k IN 1..m LOOP
        canon := canon || array_position(steps, steps[k]);
    END LOOP;
    FOR i IN 1..n LOOP
        CONTINUE WHEN codes[i] <> canon[1] OR times[i] < entry_from OR times[i] >= entry_to;
        reached := ARRAY[times[i]];
        deadline := times[i] + win;
        IF mode = 'any' THEN
            first_seen := array_fill(NULL::timestamptz, ARRAY[m]);
            FOR j IN i + 1 .. n LOOP
                EXIT WHEN times[j] > deadline;
                FOR s IN 2..m LOOP
                    IF first_seen[s] IS NULL AND codes[j] = canon[s] THEN
                        first_seen[s] := times[j];
                        EXIT;
                    END IF;
                END LOOP;
            END LOOP;
            FOR k IN 2..m LOOP
                EXIT WHEN first_seen[k] IS NULL;
                reached := reached || greatest(reached[k - 1], first_seen[k]);
            END LOOP;
        ELSE
            k := 2;
            FOR j IN i + 1 .. n LOOP
                EXIT WHEN k > m OR times[j] > deadline;
                IF codes[j] = canon[k] THEN
                    reached := reached || times[j];
                    k := k + 1;
                ELSIF mode = 'strict' THEN
                    EXIT;
                END IF;
            END LOOP;
        END IF;
        IF cardinality(reached) > cardinality(best) THEN
            best := reached;
            EXIT WHEN cardinality(best) = m;
        END IF;
    END LOOP;
    RETURN best;
END;
$$;
