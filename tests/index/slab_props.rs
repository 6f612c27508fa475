//! Property tests for slab placement: live addresses are distinct object
//! starts inside the cache's range, counts add up, and a new slab is only
//! made when every existing slab is full.

use std::collections::BTreeSet;

use fsmeta::kernel::mm::slab::{SlabCache, SlabConfig};
use proptest::prelude::*;

proptest! {
    #[test]
    fn placement_invariants(
        object_bytes in 8u64..3000,
        align_log2 in 3u32..7,
        pages in 1u64..4,
        ctor in any::<bool>(),
        ops in prop::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 1..400),
    ) {
        let cfg = SlabConfig::new(object_bytes).with_align(1 << align_log2).with_pages_per_slab(pages).with_freeptr_outside(ctor);
        let base = 0x4000_0000;
        let mut cache = SlabCache::new(cfg, base).unwrap();
        let per = cfg.objects_per_slab();
        prop_assert_eq!(per, cfg.slab_bytes() / cfg.stride_bytes());
        prop_assert!(cfg.stride_bytes() >= object_bytes && cfg.stride_bytes().is_multiple_of(1 << align_log2));
        let mut live: BTreeSet<u64> = BTreeSet::new();
        for (alloc, pick) in ops {
            if alloc || live.is_empty() {
                let slabs_before = cache.slabs_total() as u64;
                let addr = cache.alloc();
                if cache.slabs_total() as u64 > slabs_before {
                    prop_assert_eq!(live.len() as u64, slabs_before * per, "new slab while a slot was free");
                }
                prop_assert!(live.insert(addr), "address handed out twice");
                let off = addr - base;
                prop_assert!((off % cfg.slab_bytes()).is_multiple_of(cfg.stride_bytes()));
                prop_assert!(off % cfg.slab_bytes() + cfg.stride_bytes() <= cfg.slab_bytes(), "object crosses its slab");
                prop_assert!(addr + cfg.stride_bytes() <= cache.end());
            } else {
                let addr = *live.iter().nth(pick.index(live.len())).unwrap();
                live.remove(&addr);
                prop_assert_eq!(cache.free(addr), Ok(()));
                prop_assert!(cache.free(addr).is_err(), "double free accepted");
            }
            prop_assert_eq!(cache.objects_live(), live.len() as u64);
            let slabs_needed = live.iter().map(|a| (a - base) / cfg.slab_bytes()).collect::<BTreeSet<_>>().len();
            prop_assert_eq!(cache.slabs_in_use(), slabs_needed);
        }
    }
}
