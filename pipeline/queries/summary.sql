-- summary: runs per experiment and status, with simulated and wall time
SELECT experiment,
       status,
       count(*) AS runs,
       sum(sim_seconds) AS sim_seconds,
       sum(wall_seconds) AS wall_seconds,
       sum(events_processed) AS events,
       max(code_version) AS code_version
FROM runs
GROUP BY ALL
ORDER BY experiment, status;
