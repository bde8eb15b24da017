"""SHOW GLOBAL STATUS of the InnoDB server (``srv_export_innodb_status``): its
counters and gauges under their MySQL names; those marked * are this model's own, no
such MySQL counter."""
from __future__ import annotations


def global_status(server) -> dict:
    """``server``'s status variables, name -> value."""
    pool, fl, ck, redo, files, lk = (server.pool, server.flusher, server.ckpt, server.redo,
                                     server.files, server.locks)
    dblwr = server.dblwr
    log_fsyncs = redo.fsyncs + ck.log_fsyncs
    return {
        "Innodb_buffer_pool_pages_total": pool.capacity,
        "Innodb_buffer_pool_pages_data": pool.lru_len(),
        "Innodb_buffer_pool_pages_free": pool.free,
        "Innodb_buffer_pool_pages_dirty": len(pool.flush_list),
        "Innodb_buffer_pool_pages_flushed": fl.pages_flushed,
        "Innodb_buffer_pool_pages_LRU_flushed": fl.flushed_lru + fl.flushed_single,
        "Innodb_buffer_pool_pages_made_young": pool.made_young,
        "Innodb_buffer_pool_read_requests": pool.read_requests,
        "Innodb_buffer_pool_reads": pool.reads,
        "Innodb_buffer_pool_write_requests": pool.write_requests,
        "Innodb_buffer_pool_wait_free": pool.wait_free,
        "Innodb_pages_created": pool.pages_created,
        "Innodb_pages_read": files.reads,
        "Innodb_pages_written": fl.pages_flushed,
        "Innodb_data_reads": files.reads,
        "Innodb_data_writes": files.writes + redo.file_writes,
        "Innodb_data_read": files.bytes_read,
        "Innodb_data_written": files.bytes_written + redo.bytes_written,
        "Innodb_data_fsyncs": files.fsyncs + log_fsyncs,
        "Innodb_dblwr_writes": dblwr.writes if dblwr else 0,
        "Innodb_dblwr_pages_written": dblwr.pages_written if dblwr else 0,
        "Innodb_log_waits": redo.log_waits,
        "Innodb_log_writes": redo.file_writes,
        "Innodb_os_log_written": redo.bytes_written,
        "Innodb_os_log_fsyncs": log_fsyncs,
        "Innodb_lsn_current": redo.lsn,
        "Innodb_lsn_flushed": redo.flushed_lsn,
        "Innodb_lsn_last_checkpoint": ck.last_checkpoint_lsn,
        "Innodb_checkpoint_age": ck.checkpoint_age(),
        "Innodb_checkpoint_max_age": ck.max_checkpoint_age,
        "Innodb_checkpoints": ck.checkpoints,                         # *
        "Innodb_checkpoint_sync_waits": ck.sync_waits,                # *
        "Innodb_checkpoint_sync_wait_time": ck.sync_wait_ns / 1e6,    # * ms
        "Innodb_checkpoint_async_preflushes": ck.async_preflushes,    # * (5.1 / 5.5)
        "Innodb_buffer_pool_pages_preflushed": fl.flushed_preflush,   # *
        "Innodb_buffer_pool_pages_sync_flushed": fl.flushed_sync,     # *
        "Innodb_row_lock_waits": lk.waits,
        "Innodb_row_lock_time": lk.wait_ns / 1e6,
        "Innodb_row_lock_time_max": lk.max_wait_ns / 1e6,
        "Innodb_row_lock_current_waits": lk.current_waits,
        "Innodb_deadlocks": lk.deadlocks,
        "Innodb_rows_read": server.rows_read,
        "Innodb_rows_updated": server.rows_updated,
        "Innodb_rows_inserted": server.rows_inserted,
        "Innodb_rows_deleted": server.rows_deleted,
        "Com_commit": server.com_commit,          # COMMIT statements (not autocommit)
        "Handler_commit": server.trx_committed,   # every commit, autocommit ones too
        "Com_rollback": server.trx_rollbacks,
        **server.autoextend.stats(),                                     # *
        **server.ibuf.stats(),
    }
