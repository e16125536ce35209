-- Messages PostgreSQL refuses for what they hold (a NUL in text, a number out of range, an
-- index entry too large) are parked too, instead of halting the log for every account
-- (issue 12). The SQLSTATE says which rule refused them, so an operator can find every
-- message a fix covers (`WHERE sqlstate = '22021'`) and re-apply them with
-- `projector parked retry`. NULL for messages parked before they reached PostgreSQL
-- (undecodable, unknown envelope version).
ALTER TABLE parked_messages ADD COLUMN sqlstate text;
