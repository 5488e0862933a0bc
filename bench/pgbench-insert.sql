-- pgbench script (scripts/bench, --only scale): one order per transaction, the same row
-- `cupcake serve` stores for bench/post-order.lua's JSON, into a copy of the orders table with
-- every index (CREATE TABLE pgbench_orders (LIKE orders INCLUDING ALL)). Autocommit, so each
-- INSERT is one durable commit (synchronous_commit on): PostgreSQL's own ceiling for one order
-- per transaction, which cupcake's group commit is measured against.
INSERT INTO pgbench_orders (type, quantity, special_request_enabled, extra_frosting, add_sprinkles, name,
    street_address, city, zip, cost_cents, created_at_ms, name_key, is_favorite, receipt_hash)
VALUES (2, 5, true, true, false, 'Taylor Swift', '1 Main St', 'Nashville', '37201', 1500,
    (extract(epoch FROM clock_timestamp()) * 1000)::bigint, 'taylor swift', false,
    sha256(random()::text::bytea));
