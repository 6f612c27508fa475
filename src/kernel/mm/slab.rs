//! Slab placement: where objects of one kmem_cache sit in memory.
//!
//! Models the part of SLUB (`mm/slub.c`) that decides addresses: objects of
//! one cache are packed into slabs of `pages_per_slab` pages at a fixed
//! stride, allocation takes from the current ("cpu") slab, and a slab that
//! regains a free slot goes on a partial list that is reused before a new
//! slab is made. Each cache owns its own address range starting at `base`,
//! so two caches never share a cache line.
//!
//! What it does not model: the allocator's own metadata touches (freelist
//! pointer reads, `struct slab` updates), per-node lists, returning empty
//! slabs to the page allocator, and freelist randomisation. Within a slab it
//! hands out the lowest free address first (deterministic; SLUB's freelist
//! pops the most recently freed object first).

/// Shape of one slab cache: the inputs of SLUB's `calculate_sizes()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlabConfig {
    /// `sizeof` the object, bytes (`kmem_cache_create`'s `size`).
    pub object_bytes: u64,
    /// Alignment of each object, bytes: 8 (`sizeof(void *)`, SLUB's minimum)
    /// by default, 64 for `SLAB_HWCACHE_ALIGN`. A power of two.
    pub align_bytes: u64,
    /// Page size, bytes (4096 on x86-64).
    pub page_bytes: u64,
    /// Pages per slab: `1 << order`; SLUB picks order 0..3 by waste.
    pub pages_per_slab: u64,
    /// True when SLUB must keep the free pointer outside the object: the
    /// cache has a constructor or is `SLAB_TYPESAFE_BY_RCU` (mm/slub.c
    /// `calculate_sizes()`: "Relocate free pointer after the object"). Adds
    /// 8 bytes to the stride. Both `btrfs_inode` (ctor `init_once`) and
    /// `radix_tree_node` (ctor `radix_tree_node_ctor`) have constructors.
    pub freeptr_outside: bool,
}

impl SlabConfig {
    /// One-page slabs, 8-byte alignment, free pointer inside the object.
    pub fn new(object_bytes: u64) -> Self {
        Self {
            object_bytes,
            align_bytes: 8,
            page_bytes: 4096,
            pages_per_slab: 1,
            freeptr_outside: false,
        }
    }

    /// Same config with `align_bytes` (e.g. 64 for `SLAB_HWCACHE_ALIGN`).
    pub fn with_align(self, align_bytes: u64) -> Self {
        Self { align_bytes, ..self }
    }

    /// Same config with `pages_per_slab` pages per slab (a higher order).
    pub fn with_pages_per_slab(self, pages_per_slab: u64) -> Self {
        Self { pages_per_slab, ..self }
    }

    /// Same config with the free pointer placed after the object (caches
    /// with a constructor, as SLUB's `calculate_sizes()` does).
    pub fn with_freeptr_outside(self, freeptr_outside: bool) -> Self {
        Self { freeptr_outside, ..self }
    }

    /// Bytes from one object's start to the next (SLUB's `s->size`):
    /// object rounded to 8, plus 8 for an outside free pointer, rounded up
    /// to the alignment.
    pub fn stride_bytes(&self) -> u64 {
        let word = self.object_bytes.div_ceil(8) * 8;
        let with_ptr = if self.freeptr_outside { word + 8 } else { word };
        with_ptr.div_ceil(self.align_bytes) * self.align_bytes
    }

    /// Bytes per slab: `page_bytes * pages_per_slab`.
    pub fn slab_bytes(&self) -> u64 {
        self.page_bytes * self.pages_per_slab
    }

    /// Objects per slab: `floor(slab bytes / stride)` (SLUB's `order_objects()`).
    pub fn objects_per_slab(&self) -> u64 {
        self.slab_bytes() / self.stride_bytes()
    }

    fn validate(&self) -> Result<(), SlabError> {
        if self.object_bytes == 0 {
            return Err(SlabError::ZeroObject);
        }
        for (what, v) in [("align_bytes", self.align_bytes), ("page_bytes", self.page_bytes)] {
            if !v.is_power_of_two() {
                return Err(SlabError::NotPowerOfTwo { what, value: v });
            }
        }
        if self.pages_per_slab == 0 || self.objects_per_slab() == 0 {
            return Err(SlabError::ObjectTooLarge {
                stride: self.stride_bytes(),
                slab: self.slab_bytes(),
            });
        }
        Ok(())
    }
}

/// Why a slab cache could not be made or an address could not be freed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlabError {
    /// `object_bytes` is zero.
    ZeroObject,
    /// A size that must be a power of two is not.
    NotPowerOfTwo {
        /// Field name.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// Not one object fits in a slab.
    ObjectTooLarge {
        /// Stride, bytes.
        stride: u64,
        /// Slab size, bytes.
        slab: u64,
    },
    /// `free` of an address that is not a live object of this cache.
    NotLive(u64),
}

impl std::fmt::Display for SlabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ZeroObject => write!(f, "object size is zero"),
            Self::NotPowerOfTwo { what, value } => write!(f, "{what} = {value} is not a power of two"),
            Self::ObjectTooLarge { stride, slab } => write!(f, "object stride {stride} B does not fit a {slab} B slab"),
            Self::NotLive(addr) => write!(f, "address {addr:#x} is not a live object of this cache"),
        }
    }
}

impl std::error::Error for SlabError {}

/// Takes the lowest free slot of a slab's bitmap `bits`.
fn take_lowest(bits: &mut [u64]) -> Option<u64> {
    let (w, word) = bits.iter_mut().enumerate().find(|(_, w)| **w != 0)?;
    let bit = u64::from(word.trailing_zeros());
    *word &= !(1u64 << bit);
    Some(w as u64 * 64 + bit)
}

/// Returns `slot` to a slab's bitmap `bits`; false if it was already free.
fn put(bits: &mut [u64], slot: u64) -> bool {
    let (w, mask) = ((slot / 64) as usize, 1u64 << (slot % 64));
    if bits[w] & mask != 0 {
        return false;
    }
    bits[w] |= mask;
    true
}

/// A slab cache (`struct kmem_cache`) handing out simulated addresses.
///
/// Follows `slab_alloc_node()` / `___slab_alloc()` and `do_slab_free()` /
/// `__slab_free()` in `mm/slub.c` for *which* object comes back: current
/// slab first, then the most recently partial slab (SLUB's per-cpu partial
/// list is LIFO), then a new slab at the next address.
#[derive(Clone, Debug)]
pub struct SlabCache {
    config: SlabConfig,
    base: u64,
    /// Whether each slab (by index) is on the partial list. A slab's free
    /// count is its bitmap's: no count is kept apart, so a slab costs its
    /// bitmap words and this byte (10^7 inodes make 3.3M slabs).
    on_partial: Vec<bool>,
    /// Every slab's free-slot bitmap (bit set = free), `words` words each,
    /// in slab order: a new slab costs no allocation of its own.
    bits: Vec<u64>,
    /// Bitmap words per slab.
    words: usize,
    current: Option<usize>,
    partial: Vec<usize>,
    live: u64,
}

impl SlabCache {
    /// A cache whose slabs are laid out from byte address `base` upwards.
    /// `base` should be slab-aligned and leave room for every slab the run
    /// will need; give each cache its own range.
    pub fn new(config: SlabConfig, base: u64) -> Result<Self, SlabError> {
        config.validate()?;
        Ok(Self {
            config,
            base,
            on_partial: Vec::new(),
            bits: Vec::new(),
            words: config.objects_per_slab().div_ceil(64) as usize,
            current: None,
            partial: Vec::new(),
            live: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SlabConfig {
        &self.config
    }

    /// Byte address of the first slab.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// One past the last byte of the last slab made so far.
    pub fn end(&self) -> u64 {
        self.base + self.on_partial.len() as u64 * self.config.slab_bytes()
    }

    /// Allocates one object and returns its byte address (`kmem_cache_alloc`).
    /// Never fails: memory exhaustion is injected by callers (see
    /// [`crate::kernel::index::xarray::FailPlan`]).
    pub fn alloc(&mut self) -> u64 {
        let slab = self.slab_with_room();
        let slot = take_lowest(self.bits_of(slab)).expect("slab_with_room returns a slab with a free slot");
        self.live += 1;
        self.addr_of(slab, slot)
    }

    /// Frees the object at `addr` (`kmem_cache_free`). A full slab that
    /// regains a slot goes on top of the partial list.
    pub fn free(&mut self, addr: u64) -> Result<(), SlabError> {
        let (slab, slot) = self.locate(addr).ok_or(SlabError::NotLive(addr))?;
        let was_full = !self.has_room(slab);
        if !put(self.bits_of(slab), slot) {
            return Err(SlabError::NotLive(addr));
        }
        self.live -= 1;
        if was_full && self.current != Some(slab) && !self.on_partial[slab] {
            self.on_partial[slab] = true;
            self.partial.push(slab);
        }
        Ok(())
    }

    /// Objects per slab (see [`SlabConfig::objects_per_slab`]).
    pub fn objects_per_slab(&self) -> u64 {
        self.config.objects_per_slab()
    }

    /// Slabs made so far (memory held by the cache, including empty slabs,
    /// which this model keeps, like SLUB below `min_partial`).
    pub fn slabs_total(&self) -> usize {
        self.on_partial.len()
    }

    /// Slabs holding at least one live object.
    pub fn slabs_in_use(&self) -> usize {
        let per = self.objects_per_slab();
        let free = |words: &[u64]| words.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
        self.bits.chunks(self.words).filter(|words| free(words) < per).count()
    }

    /// Live objects.
    pub fn objects_live(&self) -> u64 {
        self.live
    }

    /// True if `addr` is the start of a live object of this cache.
    pub fn is_live(&self, addr: u64) -> bool {
        match self.locate(addr) {
            Some((slab, slot)) => self.words_of(slab)[(slot / 64) as usize] & (1u64 << (slot % 64)) == 0,
            None => false,
        }
    }

    /// Whether slab `slab` has a free slot.
    #[inline]
    fn has_room(&self, slab: usize) -> bool {
        self.words_of(slab).iter().any(|&w| w != 0)
    }

    /// Slab `slab`'s free-slot bitmap, to read.
    fn words_of(&self, slab: usize) -> &[u64] {
        &self.bits[slab * self.words..(slab + 1) * self.words]
    }

    /// Slab `slab`'s free-slot bitmap.
    fn bits_of(&mut self, slab: usize) -> &mut [u64] {
        &mut self.bits[slab * self.words..(slab + 1) * self.words]
    }

    /// Makes a new slab, every slot free; returns its index.
    fn new_slab(&mut self) -> usize {
        let objects = self.objects_per_slab();
        let start = self.bits.len();
        self.bits.resize(start + self.words, u64::MAX);
        let tail = objects % 64;
        if tail != 0 {
            self.bits[start + self.words - 1] = (1u64 << tail) - 1;
        }
        self.on_partial.push(false);
        self.on_partial.len() - 1
    }

    fn slab_with_room(&mut self) -> usize {
        if let Some(cur) = self.current
            && self.has_room(cur)
        {
            return cur;
        }
        let next = match self.partial.pop() {
            Some(p) => {
                self.on_partial[p] = false;
                p
            }
            None => self.new_slab(),
        };
        self.current = Some(next);
        next
    }

    fn addr_of(&self, slab: usize, slot: u64) -> u64 {
        self.base + slab as u64 * self.config.slab_bytes() + slot * self.config.stride_bytes()
    }

    /// (slab, slot) of an object start address, if it is one.
    fn locate(&self, addr: u64) -> Option<(usize, u64)> {
        let off = addr.checked_sub(self.base)?;
        let slab = (off / self.config.slab_bytes()) as usize;
        let within = off % self.config.slab_bytes();
        let stride = self.config.stride_bytes();
        let ok = slab < self.on_partial.len() && within.is_multiple_of(stride) && within / stride < self.objects_per_slab();
        ok.then_some((slab, within / stride))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_per_page_for_btrfs_inode_sizes() {
        // Case 2: 1064 B (with rb_node), 1040 B (without), 1024 B (after
        // follow-ups), free pointer inside the object.
        assert_eq!(SlabConfig::new(1064).objects_per_slab(), 3);
        assert_eq!(SlabConfig::new(1040).objects_per_slab(), 3);
        assert_eq!(SlabConfig::new(1024).objects_per_slab(), 4);
        // xa_node: 576 B, "7 nodes per 4 KiB page" (include/linux/xarray.h).
        assert_eq!(SlabConfig::new(576).objects_per_slab(), 7);
    }

    #[test]
    fn constructor_caches_pay_an_outside_free_pointer() {
        // btrfs_inode has the ctor init_once, so SLUB strides 1024 + 8:
        // still 3 per 4 KiB page, and 31 (not 32) per order-3 slab.
        let ino = SlabConfig::new(1024).with_freeptr_outside(true);
        assert_eq!(ino.stride_bytes(), 1032);
        assert_eq!(ino.objects_per_slab(), 3);
        assert_eq!(ino.with_pages_per_slab(8).objects_per_slab(), 31);
        // radix_tree_node (ctor radix_tree_node_ctor): 584 B stride, still 7.
        let xa = SlabConfig::new(576).with_freeptr_outside(true);
        assert_eq!((xa.stride_bytes(), xa.objects_per_slab()), (584, 7));
    }

    #[test]
    fn alignment_and_higher_order() {
        let c = SlabConfig::new(1000).with_align(64);
        assert_eq!(c.stride_bytes(), 1024);
        assert_eq!(SlabConfig::new(1064).with_pages_per_slab(8).objects_per_slab(), 30);
        assert_eq!(SlabConfig::new(13).stride_bytes(), 16);
    }

    #[test]
    fn bad_configs_are_rejected() {
        assert_eq!(SlabCache::new(SlabConfig::new(0), 0).unwrap_err(), SlabError::ZeroObject);
        assert!(matches!(
            SlabCache::new(SlabConfig::new(8).with_align(24), 0),
            Err(SlabError::NotPowerOfTwo { .. })
        ));
        assert!(matches!(
            SlabCache::new(SlabConfig::new(5000), 0),
            Err(SlabError::ObjectTooLarge { .. })
        ));
    }

    #[test]
    fn a_slab_of_several_bitmap_words_fills_frees_and_refills() {
        // 24-byte objects: 170 to a page, a bitmap of 64 + 64 + 42 bits.
        let mut c = SlabCache::new(SlabConfig::new(24), 0).unwrap();
        assert_eq!(c.objects_per_slab(), 170);
        let first: Vec<u64> = (0..170).map(|_| c.alloc()).collect();
        assert_eq!(first.last(), Some(&(169 * 24)), "the last slot of the partial word");
        assert_eq!((c.slabs_total(), c.slabs_in_use()), (1, 1));
        assert_eq!(c.alloc(), 4096, "a full slab opens the next");
        // Freeing a slot of the full first slab puts it on the partial
        // list; the current slab still has room, so it serves first.
        c.free(100 * 24).unwrap();
        assert_eq!(c.alloc(), 4096 + 24);
        for k in 2..170 {
            assert_eq!(c.alloc(), 4096 + k * 24);
        }
        assert_eq!(c.alloc(), 100 * 24, "then the partial slab's free slot");
        assert_eq!(c.alloc(), 2 * 4096);
        assert_eq!((c.slabs_total(), c.slabs_in_use(), c.objects_live()), (3, 3, 341));
        assert_eq!(c.free(100 * 24 + 8), Err(SlabError::NotLive(100 * 24 + 8)));
    }

    #[test]
    fn addresses_fill_a_slab_then_open_the_next() {
        let mut c = SlabCache::new(SlabConfig::new(1064), 0x10_0000).unwrap();
        let a: Vec<u64> = (0..4).map(|_| c.alloc()).collect();
        assert_eq!(a, vec![0x10_0000, 0x10_0000 + 1064, 0x10_0000 + 2128, 0x10_1000]);
        assert_eq!((c.slabs_total(), c.slabs_in_use(), c.objects_live()), (2, 2, 4));
    }

    #[test]
    fn freed_slots_are_reused_lowest_first() {
        let mut c = SlabCache::new(SlabConfig::new(1024), 0).unwrap();
        let a: Vec<u64> = (0..4).map(|_| c.alloc()).collect();
        c.free(a[2]).unwrap();
        c.free(a[1]).unwrap();
        assert_eq!(c.alloc(), a[1]);
        assert_eq!(c.alloc(), a[2]);
        assert_eq!(c.alloc(), 4096); // slab full: a new one
    }

    #[test]
    fn most_recently_partial_slab_is_reused_first() {
        let mut c = SlabCache::new(SlabConfig::new(2048), 0).unwrap(); // 2 per slab
        let a: Vec<u64> = (0..6).map(|_| c.alloc()).collect(); // slabs 0, 1, 2 full
        c.free(a[0]).unwrap(); // slab 0 partial
        c.free(a[3]).unwrap(); // slab 1 partial, on top
        assert_eq!(c.alloc(), a[3]);
        assert_eq!(c.alloc(), a[0]);
        assert_eq!(c.alloc(), 6 * 2048); // no partial left: new slab 3
        assert_eq!(c.slabs_total(), 4);
    }

    #[test]
    fn double_free_and_foreign_addresses_fail() {
        let mut c = SlabCache::new(SlabConfig::new(576), 4096).unwrap();
        let a = c.alloc();
        assert!(c.is_live(a));
        c.free(a).unwrap();
        assert!(!c.is_live(a));
        assert_eq!(c.free(a), Err(SlabError::NotLive(a)));
        assert_eq!(c.free(a + 8), Err(SlabError::NotLive(a + 8)));
        assert_eq!(c.free(0), Err(SlabError::NotLive(0)));
        assert_eq!(c.slabs_in_use(), 0);
        assert_eq!(c.slabs_total(), 1);
    }
}
