-- A tenant with several connections chooses which one its pages use.
ALTER TABLE connections ADD COLUMN is_primary boolean NOT NULL DEFAULT false;
