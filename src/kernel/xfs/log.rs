//! The CIL's background push, counted (6.18 `fs/xfs/xfs_log_cil.c`,
//! `fs/xfs/xfs_log.c`): how many bytes each create adds to the current
//! checkpoint, so how many creates fill it to `XLOG_CIL_SPACE_LIMIT`, and
//! the work of `xlog_cil_push_work` that writes such a checkpoint into the
//! in-core log buffers (iclogs), in [`Work`] (see [`crate::kernel::work`]).
//!
//! What a create logs (`xlog_cil_insert_items` adds the growth of each
//! item's log vector, `lv_bytes`, to the context's space): the new inode
//! (core only, [`INODE_LV_BYTES`]), its share of the directory's data
//! block (the block ends fully logged, [`FULL_BLOCK_LV_BYTES`], after
//! `per_data_block` entries), an inode chunk's `xfs_icreate_log` item
//! every 64 creates ([`ICREATE_LV_BYTES`]); once per checkpoint each leaf
//! of the directory (an insert shifts the entries after it and logs them:
//! `xfs_dir3_leaf_log_ents`, so every leaf ends fully logged) and five
//! more blocks (the free index and node blocks, the AGI, the inobt and
//! finobt leaves; the AGI's logged regions are smaller: an upper bound).
//!
//! Not counted (named): the per-iclog I/O completion (`xlog_ioend_work`),
//! the checkpoint's committed callbacks (`xlog_cil_committed`: AIL
//! insertion, unpinning, freeing the log vectors; a background push's
//! commit record stays in an iclog until the next push or log force, so
//! the lab saw them run after the phase: docs/lab-hosts.md, session 59),
//! the block layer and the loop device's worker that writes the iclogs.

use super::dir2;
use super::inode::INODES_PER_CHUNK;
use crate::kernel::work::{Tally, Work};

/// The lab's log: `mkfs.xfs` 6.1's default internal log on the 2 GiB
/// image, 16,384 blocks of 4 KiB (`xfs_info`: `log =internal log
/// bsize=4096 blocks=16384`), bytes.
pub const LAB_LOG_BYTES: u64 = 16_384 * 4096;

/// `XLOG_CIL_SPACE_LIMIT(log)` (`xfs_log_priv.h`): an eighth of the log,
/// at most 16 x the iclogs' total record space of a v2 log (8 x 256 KiB),
/// bytes: 8 MiB for the lab's log.
pub fn cil_space_limit(log_bytes: u64) -> u64 {
    (log_bytes >> 3).min(16 * (8 << 18))
}

/// Usable bytes of one iclog: the default `logbsize` of a v2 log without
/// a stripe unit, 32 KiB (`XLOG_BIG_RECORD_BSIZE`), less its 512-byte
/// record header (`l_iclog_hsize`).
pub const ICLOG_BYTES: f64 = 32_768.0 - 512.0;

/// `lv_bytes` of an inode logged with its core only (a new empty file, an
/// unlinked one): `xfs_inode_item_size`'s two vectors, the 56-byte
/// `xfs_inode_log_format` and the 176-byte log dinode, each with its
/// 12-byte op header (`xlog_finish_iovec`).
pub const INODE_LV_BYTES: f64 = 56.0 + 12.0 + 176.0 + 12.0;

/// `lv_bytes` of a 4 KiB buffer logged whole: the `xfs_buf_log_format`
/// vector (24 bytes and one bitmap word, with its op header: 36) and one
/// range of 32 dirty 128-byte chunks with its op header.
pub const FULL_BLOCK_LV_BYTES: f64 = 36.0 + 12.0 + 4096.0;

/// `lv_bytes` of an `xfs_icreate_log` item (`xfs_icreate_item_format`:
/// one vector of the 28-byte `struct xfs_icreate_log` with its op
/// header).
pub const ICREATE_LV_BYTES: f64 = 28.0 + 12.0;

/// Blocks besides the directory's leaves logged once per checkpoint: the
/// free index and node blocks, the AGI, the inobt and finobt leaves.
pub const BLOCKS_PER_CHECKPOINT: f64 = 5.0;

/// What a checkpoint of creates into one directory of `dir_entries`
/// names holds: bytes per create, bytes per checkpoint, and items.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Checkpoint {
    /// Creates that fill it to the space limit.
    pub creates: u64,
    /// Bytes each create adds (its inode, its share of a data block and
    /// of a chunk's icreate item).
    pub bytes_per_create: f64,
    /// Bytes logged once per checkpoint (the leaves and the other
    /// blocks).
    pub fixed_bytes: f64,
    /// Inode items (one per create).
    pub inodes: f64,
    /// Buffer items (data blocks, leaves, the other blocks).
    pub buffers: f64,
    /// `xfs_icreate_log` items (one per chunk).
    pub icreates: f64,
}

impl Checkpoint {
    /// Log vectors in the checkpoint.
    pub fn items(&self) -> f64 {
        self.inodes + self.buffers + self.icreates
    }

    /// Bytes copied into iclogs.
    pub fn bytes(&self) -> f64 {
        self.fixed_bytes + self.bytes_per_create * self.creates as f64
    }

    /// Iclogs filled.
    pub fn iclogs(&self) -> f64 {
        (self.bytes() / ICLOG_BYTES).ceil()
    }
}

/// The checkpoint a background push writes when creates into a
/// directory of `dir_entries` names fill the CIL of a log of `log_bytes`
/// (the directory's shape at that size: [`dir2::shape`]).
pub fn create_checkpoint(dir_entries: u64, log_bytes: u64) -> Checkpoint {
    let s = dir2::shape(dir_entries);
    let per_chunk = 1.0 / INODES_PER_CHUNK as f64;
    let bytes_per_create = INODE_LV_BYTES + FULL_BLOCK_LV_BYTES / s.per_data_block.max(1.0) + ICREATE_LV_BYTES * per_chunk;
    let fixed_blocks = s.leaves as f64 + BLOCKS_PER_CHECKPOINT;
    let fixed_bytes = fixed_blocks * FULL_BLOCK_LV_BYTES;
    let room = (cil_space_limit(log_bytes) as f64 - fixed_bytes).max(bytes_per_create);
    let creates = (room / bytes_per_create).ceil() as u64;
    let n = creates as f64;
    Checkpoint {
        creates,
        bytes_per_create,
        fixed_bytes,
        inodes: n,
        buffers: fixed_blocks + n / s.per_data_block.max(1.0),
        icreates: n * per_chunk,
    }
}

/// `xlog_cil_push_work` up to `xlog_cil_ctx_switch`, less its items: the
/// new context and ticket (`xlog_cil_ctx_alloc`, `xlog_cil_ticket_alloc`,
/// allocated just before `down_write(&cil->xc_ctx_lock)`, a step of the
/// scenario), `xc_push_lock` twice, the per-CPU lists aggregated
/// (`xlog_cil_push_pcp_aggregate`), the switch to the new context: about
/// 100 loads, 12 locked operations, 4 lines last written by other CPUs
/// (their per-CPU CIL state, the old context). The context lock is
/// released right after (`up_write`).
pub const PUSH_SWITCH: Work = Work {
    cold_lines: 4.0,
    atomics: 12.0,
    hits: 100.0,
    ..Work::ZERO
};

/// `xlog_cil_push_work` after the switch, less its items and iclogs: the
/// transaction header (`xlog_cil_build_trans_hdr`), the ordering and write
/// state (`xlog_cil_order_write`, `xlog_cil_set_ctx_write_state`:
/// `xc_push_lock`, the wake-ups), the commit record
/// (`xlog_cil_write_commit_record`), the ticket's ungrant (the grant
/// heads): about 150 loads, 18 locked operations, 6 lines last written by
/// other CPUs (the grant heads, `l_tail_lsn`, the iclogs' lock).
pub const PUSH_COMMIT: Work = Work {
    cold_lines: 6.0,
    atomics: 18.0,
    hits: 150.0,
    ..Work::ZERO
};

/// One log item walked by `xlog_cil_build_lv_chain`, under the context
/// lock: the whiteout test, the item's log vector put on the chain
/// (`lv_order_id`, the byte and vector counts), the item taken off the
/// CIL (`list_del_init`, `li_order_id`, `li_lv` cleared): about 15 loads,
/// a loop over the checkpoint's items. Cold: the item's two lines the
/// walk reads (`li_cil`, `li_lv`, `li_flags`; `li_order_id`) and the log
/// vector's first line, last touched when the committing thread formatted
/// them, thousands of creates before (about 2.5 KB of new objects per
/// create pass through the caches in between). The push never touches
/// the `xfs_inode` or the `xfs_buf`.
pub const WALK_ITEM: Work = Work {
    cold_lines: 3.0,
    hits: 15.0,
    iterated: true,
    ..Work::ZERO
};

/// One log vector written by `xlog_write` -> `xlog_write_full`
/// (`xlog_write_iovec` per vector: the op header's `oh_tid`, the copy's
/// bookkeeping), about 10 loads a vector, two vectors for an inode or a
/// buffer: 20, after the lock. The vector's lines after its first follow
/// it in one `kmalloc` object and are read in order by the copy, so they
/// are counted as the copy's loads ([`COPY_8_BYTES`]), not as misses.
pub const WRITE_ITEM: Work = Work::looped(20.0);

/// Eight bytes copied (`memcpy` in `xlog_write_iovec`) or summed
/// (`xlog_cksum`: `crc32c` over the record), one load each.
pub const COPY_8_BYTES: Work = Work::looped(1.0);

/// One comparison of `list_sort(NULL, &ctx->lv_chain, xlog_cil_order_cmp)`:
/// the merge's loads and the comparator, called through its pointer and
/// returning once.
pub const SORT_COMPARE: Work = Work::looped(5.0).indirect(1.0).returning(1.0);

/// `list_sort`'s comparisons for `n` log vectors in a chain built from
/// the per-CPU lists, each already in `li_order_id` order: a bottom-up
/// merge of sorted runs stops each merge when one run ends, about `n/2
/// log2 n`, and the final merge of the CPUs' runs about `n` more.
pub fn sort_compares(n: f64) -> f64 {
    if n < 2.0 { 0.0 } else { 0.5 * n * n.log2() + n }
}

/// One iclog filled and sent (`xlog_state_get_iclog_space`,
/// `xlog_state_switch_iclogs`, `xlog_state_release_iclog`, `xlog_sync`:
/// `xlog_calc_iclog_size`, `xlog_pack_data` over its 512-byte blocks,
/// `xlog_write_iclog`: `down(&iclog->ic_sema)`, the bio set up and
/// submitted): about 214 loads, 6 locked operations (`l_icloglock` three
/// times, the reference count, the semaphore), 2 lines another CPU wrote
/// (the iclog's state after its last I/O completion); its checksum is
/// [`COPY_8_BYTES`] over the record.
pub const PUSH_ICLOG: Work = Work {
    cold_lines: 2.0,
    atomics: 6.0,
    hits: 214.0,
    ..Work::ZERO
};

/// `xlog_cil_push_work` of the checkpoint [`create_checkpoint`] gives for
/// the lab's log.
pub fn push(dir_entries: u64) -> Tally {
    push_of(&create_checkpoint(dir_entries, LAB_LOG_BYTES))
}

/// `xlog_cil_push_work` of that checkpoint up to `xlog_cil_ctx_switch`
/// (the part under the context lock).
pub fn push_to_switch(dir_entries: u64) -> Tally {
    push_to_switch_of(&create_checkpoint(dir_entries, LAB_LOG_BYTES))
}

/// `xlog_cil_push_work` of checkpoint `c` up to the context switch: the
/// new context, the per-CPU lists aggregated, the items walked into the
/// vector chain.
pub fn push_to_switch_of(c: &Checkpoint) -> Tally {
    let mut t = Tally::default();
    t.add(PUSH_SWITCH, 1.0).add(WALK_ITEM, c.items());
    t
}

/// `xlog_cil_push_work` of checkpoint `c`: [`push_to_switch_of`], then the
/// chain sorted, each vector copied into the iclogs and each record
/// summed, the iclogs sent and the commit record.
pub fn push_of(c: &Checkpoint) -> Tally {
    let mut t = push_to_switch_of(c);
    let items = c.items();
    t.add(PUSH_COMMIT, 1.0).add(WRITE_ITEM, items);
    t.add(SORT_COMPARE, sort_compares(items));
    // Copied into the iclogs, then summed by xlog_cksum.
    t.add(COPY_8_BYTES, 2.0 * c.bytes() / 8.0);
    t.add(PUSH_ICLOG, c.iclogs());
    t
}

#[cfg(test)]
mod tests;
