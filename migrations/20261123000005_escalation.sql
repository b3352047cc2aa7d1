-- When the backup role of an escalated request was told.
ALTER TABLE action_requests ADD COLUMN escalated_at timestamptz;
