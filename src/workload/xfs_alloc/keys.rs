//! The parameters of the `xfs-alloc` workload, for the reference.

use crate::workload::ParamSpec;
use crate::workload::contract::param as p;

/// Every key of `[xfs_alloc]`.
pub const PARAMS: &[ParamSpec] = &[
    p(
        "xfs_alloc.agblocks",
        "a whole number of blocks",
        "2 to 4,294,967,295",
        "allocation group size (sb_agblocks)",
    ),
    p(
        "xfs_alloc.block_size",
        "bytes",
        "at least 4 records per block",
        "filesystem block size",
    ),
    p(
        "xfs_alloc.btree_header_bytes",
        "bytes",
        "below block_size",
        "btree block header: 56 (v5, CRC) or 16 (v4)",
    ),
    p(
        "xfs_alloc.btree_fill",
        "a fraction, \"inserted\" or \"layout\"",
        "0.5 to 1",
        "fill of bulk-loaded btree blocks; \"inserted\": the trees grown by inserts in block order, as the lab's hole punching grows them (full blocks for extents of one length); \"layout\": the blocks of btree_layout_file, as xfs_db read them from the live AG",
    ),
    p(
        "xfs_alloc.btree_layout_file",
        "a path",
        "a layout file (the lab's ag1.layout), relative to the scenario",
        "records or keys per block of each level of both trees, left to right (xfs_db btdump -i of the AG the freesp_file came from); required by btree_fill = \"layout\"",
    ),
    p(
        "xfs_alloc.source",
        "a word",
        "freesp_file, histogram, fragmentation, aging",
        "where the AG's free space comes from",
    ),
    p(
        "xfs_alloc.freesp_file",
        "a path",
        "an xfs_db -c freesp file, relative to the scenario",
        "free space as xfs_db printed it",
    ),
    p(
        "xfs_alloc.histogram",
        "a list of tables",
        "{ from, to, extents } with 1 <= from <= to",
        "buckets of free extents (lengths uniform per bucket)",
    ),
    p(
        "xfs_alloc.histogram[].from / to / extents",
        "whole numbers",
        "1 <= from <= to; extents 0 or more",
        "one bucket: `extents` free extents of lengths drawn uniformly in from..=to blocks (a sweep sets one as `xfs_alloc.histogram[N].extents`)",
    ),
    p(
        "xfs_alloc.fragmentation",
        "a fraction",
        "0 to 1",
        "share of free blocks in small extents, the rest one extent",
    ),
    p(
        "xfs_alloc.free_blocks",
        "a whole number of blocks",
        "1 to agblocks - 1",
        "free blocks (fragmentation source)",
    ),
    p(
        "xfs_alloc.small_extent_blocks",
        "a whole number of blocks",
        "1 or more",
        "length of the small extents (fragmentation source)",
    ),
    p(
        "xfs_alloc.aging.alloc_max_blocks",
        "a whole number of blocks",
        "1 or more",
        "longest extent a write allocates (aging)",
    ),
    p(
        "xfs_alloc.aging.punch_max_blocks",
        "a whole number of blocks",
        "1 or more",
        "longest hole punched (aging)",
    ),
    p(
        "xfs_alloc.aging.punch_share",
        "a fraction",
        "0 to 1",
        "share of releases that punch a hole rather than free an extent",
    ),
    p(
        "xfs_alloc.aging.target_used",
        "a fraction",
        "above 0 and below 1",
        "allocate while the used share is below this",
    ),
    p(
        "xfs_alloc.aging.short_below_blocks",
        "a whole number of blocks",
        "1 or more",
        "extents shorter than this count as short",
    ),
    p(
        "xfs_alloc.aging.target_short_share",
        "a fraction",
        "0 to 1",
        "stop once this share of free blocks is in short extents",
    ),
    p(
        "xfs_alloc.aging.max_steps",
        "a whole number",
        "1 to 100,000,000",
        "give up after this many steps",
    ),
    p("xfs_alloc.minlen", "a whole number of blocks", "1 or more", "request minlen"),
    p("xfs_alloc.maxlen", "a whole number of blocks", "minlen or more", "request maxlen"),
    p(
        "xfs_alloc.alignment",
        "a whole number of blocks",
        "1 or more",
        "request start alignment (1 = none)",
    ),
    p(
        "xfs_alloc.calls",
        "a whole number",
        "1 or more (and within the memory budget)",
        "timed xfs_alloc_ag_vextent_size calls",
    ),
    p(
        "xfs_alloc.free_prob",
        "a probability",
        "0 to 1",
        "after each call, chance of freeing an earlier allocation",
    ),
    p(
        "xfs_alloc.strategy",
        "a word",
        "lt, le, budget:N",
        "backward-walk cutoff (flen < bestrlen, flen <= bestrlen, or N records)",
    ),
    p(
        "xfs_alloc.record_ns",
        "a time in ns",
        "0 or more",
        "cost of one record step of the walk: the fitted knob of case 4 lt, or \"counted\" (from the code, priced by the profile)",
    ),
    p(
        "xfs_alloc.work_scale",
        "a multiple of hit_ns",
        "above 0, at most 1000, or \"host\"",
        "ns per counted instruction-path load over the profile's hit_ns: a measured host's one fitted knob (default 1); \"host\" takes the profile's [knob] work_scale",
    ),
    p(
        "xfs_alloc.between_calls",
        "a word",
        "cold, l2, llc",
        "where lines an earlier call touched are found: cold = DRAM every call (default); l2 / llc = that level's hit latency from [levels]",
    ),
    p(
        "xfs_alloc.timed_from",
        "a word",
        "xfs_alloc_ag_vextent_size, xfs_alloc_read_agf",
        "start of the timed window: the by-size call alone (default), or the lab's window from the AGF read to xfs_alloc_size_done",
    ),
    p(
        "xfs_alloc.probes",
        "a list of tracepoint names",
        "xfs_alloc_read_agf, xfs_alloc_size_done, xfs_extent_busy_trim, xfs_trans_read_buf",
        "tracepoints enabled while timing; each firing in the window is priced",
    ),
    p(
        "xfs_alloc.busy_extents",
        "a whole number",
        "0 or more",
        "free extents still busy when the calls start: the last records of the by-size tree, which xfs_extent_busy_trim cuts out",
    ),
    p(
        "xfs_alloc.request",
        "a word",
        "one, fallocate",
        "what a call allocates: one xfs_alloc_ag_vextent_size (default), or fallocate(maxlen blocks) on an empty file: the timed by-size allocation, then near allocations (xfs_alloc_ag_vextent_near) for the blocks still wanted, untimed",
    ),
    p(
        "xfs_alloc.before",
        "a list of steps",
        "up to 16 of \"calls:N\" and \"busy:N\", N in 1..=1,000,000",
        "replayed in order before the timed calls: calls:N makes N untimed calls as the timed ones; busy:N takes N blocks by such calls and frees each call's blocks at once (busy: no log checkpoint)",
    ),
];
