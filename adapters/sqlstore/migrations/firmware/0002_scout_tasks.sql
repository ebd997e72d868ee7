-- The task offered to each machine's on-host agent (firmware.ScoutTask as
-- JSON), kept so that the agent fetches it from any worker.
CREATE TABLE IF NOT EXISTS firmware_scout_tasks (
    machine_id TEXT PRIMARY KEY,
    task_id    TEXT NOT NULL,
    doc        TEXT NOT NULL
);
