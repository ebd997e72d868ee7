-- The fleet manager's ledger: one row per device with its identity, the
-- Ironic reference projected from Ironic (its revision counts changes), the
-- platform_class, and the Enrollment proof (proof_run = '' when there is
-- none). version counts every write that changed the row. Times are UTC
-- Unix nanoseconds.
CREATE TABLE ledger_devices (
    device          TEXT PRIMARY KEY,
    identity        TEXT NOT NULL,
    reference       TEXT NOT NULL DEFAULT '',
    revision        BIGINT NOT NULL DEFAULT 0,
    projected_at    BIGINT NOT NULL DEFAULT 0,
    platform_class  TEXT NOT NULL DEFAULT '',
    proof_identity  TEXT NOT NULL DEFAULT '',
    proof_reference TEXT NOT NULL DEFAULT '',
    proof_revision  BIGINT NOT NULL DEFAULT 0,
    proof_run       TEXT NOT NULL DEFAULT '',
    proof_at        BIGINT NOT NULL DEFAULT 0,
    version         BIGINT NOT NULL DEFAULT 1,
    updated_at      BIGINT NOT NULL
);

-- Every projected reference by revision: a compare-and-set refuses proof
-- of a reference that became current more than once since the run's
-- submission snapshot (A -> B -> A).
CREATE TABLE ledger_reference_history (
    device       TEXT NOT NULL,
    revision     BIGINT NOT NULL,
    reference    TEXT NOT NULL,
    projected_at BIGINT NOT NULL,
    PRIMARY KEY (device, revision)
);

CREATE INDEX ledger_reference_history_by_reference ON ledger_reference_history (device, reference, revision);
