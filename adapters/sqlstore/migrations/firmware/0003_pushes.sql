-- Firmware pushes (firmware.Push as JSON), each recorded before it is sent,
-- so that an attempt that finds one without a result asks the BMC whether
-- it happened instead of pushing again.
CREATE TABLE IF NOT EXISTS firmware_pushes (
    machine_id TEXT NOT NULL,
    id         TEXT NOT NULL,
    at         BIGINT NOT NULL,
    doc        TEXT NOT NULL,
    PRIMARY KEY (machine_id, id)
);
