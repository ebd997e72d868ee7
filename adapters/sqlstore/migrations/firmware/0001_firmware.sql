-- The firmware update manager's and workflow's state (firmware.Store).
-- Times are UTC Unix nanoseconds (0: unset); documents are JSON text.

-- Host reprovisioning requests, one per machine.
CREATE TABLE IF NOT EXISTS firmware_requests (
    machine_id     TEXT PRIMARY KEY,
    initiator      TEXT NOT NULL,
    message        TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    started_at     BIGINT NOT NULL DEFAULT 0,
    approved_at    BIGINT NOT NULL DEFAULT 0,
    manual_done_at BIGINT NOT NULL DEFAULT 0
);

-- Each machine's update record, written by compare-and-set on revision.
CREATE TABLE IF NOT EXISTS firmware_updates (
    machine_id TEXT PRIMARY KEY,
    revision   BIGINT NOT NULL,
    substate   TEXT NOT NULL,
    doc        TEXT NOT NULL
);

-- Per-machine autoupdate overrides (absent: the site default).
CREATE TABLE IF NOT EXISTS firmware_autoupdate (
    machine_id TEXT PRIMARY KEY,
    enabled    BIGINT NOT NULL
);

-- Explicit-start firmware update windows.
CREATE TABLE IF NOT EXISTS firmware_windows (
    machine_id TEXT PRIMARY KEY,
    start_at   BIGINT NOT NULL,
    end_at     BIGINT NOT NULL
);

-- The last reported versions of each machine.
CREATE TABLE IF NOT EXISTS firmware_observed (
    machine_id  TEXT PRIMARY KEY,
    observed_at BIGINT NOT NULL,
    doc         TEXT NOT NULL
);

-- Runtime catalog overrides, keyed by vendor family, lower-cased model,
-- component and version.
CREATE TABLE IF NOT EXISTS firmware_overrides (
    family     TEXT NOT NULL,
    model_key  TEXT NOT NULL,
    component  TEXT NOT NULL,
    version    TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    doc        TEXT NOT NULL,
    PRIMARY KEY (family, model_key, component, version)
);

-- Results of uploads, scripts and on-host agent runs.
CREATE TABLE IF NOT EXISTS firmware_results (
    machine_id TEXT NOT NULL,
    id         TEXT NOT NULL,
    doc        TEXT NOT NULL,
    PRIMARY KEY (machine_id, id)
);

-- Upload slots (max_uploads), held until the upload has finished.
CREATE TABLE IF NOT EXISTS firmware_upload_slots (
    holder     TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
