-- Parallel apply (issue 19): each read model applies a chunk in its own transaction, so a
-- message PostgreSQL refuses is parked for the model that refused it only, while the other
-- models keep it. A parked row now names its read model, and one message may have one row
-- per model that refused it.
--
-- `projection` is a read model's checkpoint name (`chat`, `players`, ...), or '*' for every
-- read model: messages no model can read (undecodable, unknown envelope version) are parked
-- once as '*', and so are the rows parked before this migration, when one refusal set a
-- message aside for every model. `projector parked retry` applies a row to the models it
-- names ('*': all of them). '*' rather than NULL, because the column is part of the key.
ALTER TABLE parked_messages ADD COLUMN projection text NOT NULL DEFAULT '*';
ALTER TABLE parked_messages ALTER COLUMN projection DROP DEFAULT;
ALTER TABLE parked_messages DROP CONSTRAINT parked_messages_pkey;
ALTER TABLE parked_messages ADD PRIMARY KEY (stream_sequence, projection);
