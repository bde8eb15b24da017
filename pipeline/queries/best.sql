-- best: rank an experiment's configurations by a metric (mean over seeds) and show each one's margin over the next
-- Usage: python -m pipeline.query best --experiment NAME --metric COLUMN [--asc]
-- A configuration is the set of parameters that vary within the experiment
-- (run.seed excluded: runs that differ only in seed are averaged).
WITH configs AS (
    SELECT {{config_label}} AS config,
           avg({{metric}}) AS value,
           count(*) AS runs,
           min(config_hash) AS example_run
    FROM runs
    WHERE experiment = $experiment AND status = 'ok'
    GROUP BY ALL
), ranked AS (
    SELECT row_number() OVER (ORDER BY value {{order}}, config) AS rank, *
    FROM configs
)
SELECT rank,
       config,
       value,
       abs(value - lead(value) OVER (ORDER BY rank)) AS margin,
       100.0 * abs(value - lead(value) OVER (ORDER BY rank))
             / nullif(abs(lead(value) OVER (ORDER BY rank)), 0) AS margin_pct,
       runs,
       example_run
FROM ranked
ORDER BY rank;
