-- A job's notification also names the process that wrote it (its
-- connection's application_name, unique per portal process): that process
-- runs the job when it falls due, and the others look only after a grace
-- period, in case it died first. So one replica wakes for each job, not
-- every one (the others' workers would find it taken).
CREATE OR REPLACE FUNCTION announce_job() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('paydesk_gate',
        'job:' || extract(epoch FROM NEW.run_at)::text || ':' || current_setting('application_name'));
    RETURN NULL;
END;
$$;
