-- The gate's job runners sleep until told: every job queued or
-- rescheduled announces when it is due on the 'paydesk_gate' channel ('job:' and
-- its run_at in epoch seconds), in the transaction that writes it, so a runner
-- hears of it when (and only if) it commits.
CREATE FUNCTION announce_job() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('paydesk_gate', 'job:' || extract(epoch FROM NEW.run_at)::text);
    RETURN NULL;
END;
$$;

CREATE TRIGGER jobs_announce
    AFTER INSERT OR UPDATE OF run_at ON jobs
    FOR EACH ROW WHEN (NEW.done_at IS NULL)
    EXECUTE FUNCTION announce_job();
