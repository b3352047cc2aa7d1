-- Transaction pages link to the approval request filed under their reference.
CREATE INDEX action_requests_upstream_reference_idx ON action_requests (tenant_id, upstream_reference);
