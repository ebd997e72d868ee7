-- Extension execution records (one row per delivery, replaced in place)
-- and each extension's outputs (replaced whole by every run that has any).
CREATE TABLE IF NOT EXISTS extension_executions (
    delivery_id TEXT PRIMARY KEY,
    event_id    TEXT NOT NULL,
    stage       TEXT NOT NULL,
    extension   TEXT NOT NULL,
    task        TEXT NOT NULL,
    task_type   TEXT NOT NULL,
    status      TEXT NOT NULL,
    message     TEXT NOT NULL,
    started_at  BIGINT NOT NULL,
    finished_at BIGINT NOT NULL,
    outputs     TEXT
);
CREATE INDEX IF NOT EXISTS extension_executions_event ON extension_executions (event_id, started_at);
CREATE INDEX IF NOT EXISTS extension_executions_extension ON extension_executions (extension, started_at);

CREATE TABLE IF NOT EXISTS extension_outputs (
    extension   TEXT PRIMARY KEY,
    outputs     TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    updated_at  BIGINT NOT NULL
);
