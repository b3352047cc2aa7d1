-- A request's row is updated several times as it moves (approved,
-- executing, its progress saved before and after money moves). Room left
-- on each page lets those updates that change no indexed column (the
-- progress saves) stay on the page (HOT), without new index entries.
ALTER TABLE action_requests SET (fillfactor = 80);
