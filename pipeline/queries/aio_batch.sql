-- aio_batch: E1 async-I/O submission table (request size, requests per io_submit, iostat r/s, MB/s)
SELECT "workload.bs" AS request_size,
       "workload.iodepth_batch_submit" AS requests_per_io_submit,
       "workload.iodepth" AS iodepth,
       "iostat.sda.r_s" AS r_s,
       "iostat.sda.rrqm_s" AS rrqm_s,
       "iostat.sda.avgrq_sz" AS avgrq_sz,
       "fio.MB_s" AS MB_s,
       config_hash
FROM runs
WHERE experiment = 'aio_batch' AND status = 'ok'
ORDER BY "workload.bs", "workload.iodepth_batch_submit";
