-- failed: runs that failed, with their error
SELECT experiment, config_hash, seed, code_version, error
FROM runs
WHERE status <> 'ok'
ORDER BY experiment, config_hash;
