-- Finished updates (firmware.UpdateHistory as JSON), kept for the
-- operator until the retention removes them; one per machine and update
-- generation.
CREATE TABLE IF NOT EXISTS firmware_history (
    machine_id  TEXT NOT NULL,
    generation  BIGINT NOT NULL,
    finished_at BIGINT NOT NULL,
    doc         TEXT NOT NULL,
    PRIMARY KEY (machine_id, generation)
);
CREATE INDEX IF NOT EXISTS firmware_history_finished ON firmware_history (finished_at);

-- The figures of the update manager's last pass (firmware.PassFigures as
-- JSON): one row, which the pass replaces.
CREATE TABLE IF NOT EXISTS firmware_pass (
    id  BIGINT PRIMARY KEY,
    at  BIGINT NOT NULL,
    doc TEXT NOT NULL
);
