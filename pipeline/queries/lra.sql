-- lra: E1 full-table scan per read-ahead strategy and table (scan s, rows/s, MB/s, pages read per kind, hit rate, iostat)
SELECT "workload.insert_pattern" AS table_history,
       "workload.read_ahead" AS read_ahead,
       "workload.aio_pages_per_submit" AS pages_per_io_submit,
       "engine.innodb_buffer_pool_size" AS buffer_pool,
       "workload.background_iops" AS background_iops,
       round("full_scan.scan_s", 1) AS scan_s,
       round("full_scan.rows_per_s") AS rows_per_s,
       round("full_scan.MB_s_read", 1) AS MB_s_read,
       "full_scan.pages_read_clustered_leaf" AS leaf_pages_read,
       "full_scan.pages_read_secondary_leaf" + "full_scan.pages_read_secondary_nonleaf" AS secondary_pages_read,
       "full_scan.pages_read_free" AS free_pages_read,
       round("full_scan.bp_hit_rate", 3) AS bp_hit_rate,
       round("iostat.sda.r_s") AS r_s,
       round("iostat.sda.rrqm_s") AS rrqm_s,
       round("iostat.sda.avgrq_sz", 1) AS avgrq_sz,
       round("iostat.sda.await_ms", 2) AS await_ms,
       round("full_scan.table_leaf_adjacent_share", 3) AS leaf_adjacent_share,
       round("full_scan.table_leaf_mean_jump_pages") AS leaf_mean_jump_pages,
       experiment,
       config_hash
FROM runs
WHERE experiment IN ('lra', 'lra_warmup', 'lra_load') AND status = 'ok'
ORDER BY experiment, table_history DESC, buffer_pool, background_iops, scan_s DESC;
