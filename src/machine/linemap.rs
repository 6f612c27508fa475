//! A small open-addressing table from line address to per-line state.
//!
//! The cache model keeps coherence state for every line held in some
//! core's private cache. `std::collections::HashMap` would do, but the
//! project bans it (its iteration order is random, and a result must never
//! depend on it); this table has no iteration at all, uses a fixed
//! multiplicative hash (Fibonacci hashing) and linear probing with
//! backward-shift deletion, so it is deterministic and O(1) expected.

/// Key that marks an empty bucket. Line addresses are byte addresses / 64,
/// so they never reach it.
const EMPTY: u64 = u64::MAX;
const MIN_BUCKETS: usize = 16;

/// Map from line address to a `Copy` value.
#[derive(Clone, Debug)]
pub struct LineMap<V: Copy> {
    /// (key, value) pairs side by side: one host cache line per probe.
    buckets: Vec<(u64, V)>,
    len: usize,
    shift: u32,
}

impl<V: Copy + Default> Default for LineMap<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Copy + Default> LineMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::with_buckets(MIN_BUCKETS)
    }

    fn with_buckets(n: usize) -> Self {
        debug_assert!(n.is_power_of_two());
        Self {
            buckets: vec![(EMPTY, V::default()); n],
            len: 0,
            shift: 64 - n.trailing_zeros(),
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    fn find(&self, key: u64) -> Result<usize, usize> {
        let mask = self.buckets.len() - 1;
        let mut i = self.home(key);
        loop {
            match self.buckets[i].0 {
                k if k == key => return Ok(i),
                EMPTY => return Err(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The value for `key`, if present.
    pub fn get(&self, key: u64) -> Option<V> {
        self.find(key).ok().map(|i| self.buckets[i].1)
    }

    /// The value for `key`, mutable, if present.
    pub fn get_mut(&mut self, key: u64) -> Option<&mut V> {
        self.find(key).ok().map(|i| &mut self.buckets[i].1)
    }

    /// The value for `key`, inserting `V::default()` first if absent.
    pub fn entry(&mut self, key: u64) -> &mut V {
        assert_ne!(key, EMPTY, "u64::MAX is not a line address");
        if (self.len + 1) * 2 > self.buckets.len() {
            self.grow();
        }
        let i = match self.find(key) {
            Ok(i) => i,
            Err(i) => {
                self.buckets[i] = (key, V::default());
                self.len += 1;
                i
            }
        };
        &mut self.buckets[i].1
    }

    /// Removes `key`; returns its value if it was present.
    pub fn remove(&mut self, key: u64) -> Option<V> {
        let mut hole = self.find(key).ok()?;
        let val = self.buckets[hole].1;
        let mask = self.buckets.len() - 1;
        let mut i = hole;
        loop {
            i = (i + 1) & mask;
            let k = self.buckets[i].0;
            if k == EMPTY {
                break;
            }
            // Move k back into the hole unless its home lies cyclically in (hole, i].
            let home = self.home(k);
            if (i.wrapping_sub(home) & mask) >= (i.wrapping_sub(hole) & mask) {
                self.buckets[hole] = self.buckets[i];
                hole = i;
            }
        }
        self.buckets[hole].0 = EMPTY;
        self.len -= 1;
        Some(val)
    }

    fn grow(&mut self) {
        let old = std::mem::replace(self, Self::with_buckets(self.buckets.len() * 2));
        for (k, v) in old.buckets {
            if k != EMPTY {
                let i = self.find(k).expect_err("keys are unique");
                self.buckets[i] = (k, v);
                self.len += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn agrees_with_btreemap_under_churn() {
        let mut m: LineMap<u32> = LineMap::new();
        let mut r: BTreeMap<u64, u32> = BTreeMap::new();
        let mut x: u64 = 12345;
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x % 5000; // many collisions and re-inserts
            if x.is_multiple_of(3) {
                assert_eq!(m.remove(key), r.remove(&key), "step {step}");
            } else {
                *m.entry(key) += 1;
                *r.entry(key).or_default() += 1;
            }
            assert_eq!(m.len(), r.len());
        }
        for k in 0..5000 {
            assert_eq!(m.get(k), r.get(&k).copied());
        }
    }
}
