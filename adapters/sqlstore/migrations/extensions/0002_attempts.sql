-- The runs of each delivery (a webhook delivered again under its
-- webhook-id, a call a worker lost and made again); 0 for records written
-- before runs were counted. The history lists deliveries newest first.
ALTER TABLE extension_executions ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS extension_executions_started ON extension_executions (started_at);
