//! What the filesystem holding the lab's images charges for the flushes a
//! btrfs commit sends through the loop device: the loop driver serves a
//! flush by `vfs_fsync` of the image file (drivers/block/loop.c,
//! `lo_req_flush`), which writes back what the commit's writes left in the
//! file's page cache, allocates the sparse file's blocks, commits the
//! host filesystem's journal and flushes its disk's cache. Measured by
//! `fsmeta calibrate` ([`crate::calibrate::storage`]).

/// `fsync` times of a sparse image file after writes of a commit's shape,
/// and the time of one write request through a loop device.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct StoragePrices {
    /// KiB written, before the first `fsync`, in each of two contiguous
    /// runs far apart (the two stripes of a DUP metadata chunk), ascending.
    pub flush_kib: Vec<f64>,
    /// us the first `fsync` took after each [`Self::flush_kib`] (the
    /// medians).
    pub flush_us: Vec<f64>,
    /// us the first `fsync` took after each [`Self::flush_kib`] written as
    /// separate 16 KiB blocks, each its own region (a 16 KiB gap after
    /// every block), in each of the two runs: the layout of a btrfs
    /// commit's tree blocks, which the lab's block trace shows as one
    /// write request a block copy (`io_writes` = 2 x blocks + 2 supers).
    /// The medians; absent in profiles measured before session 67, which
    /// then price a commit's flush at [`Self::flush_us`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_flush_us: Option<Vec<f64>>,
    /// us the `fsync` took after two 4 KiB writes at 64 KiB and 64 MiB
    /// (the superblock and its first copy) that followed (the median).
    pub super_flush_us: f64,
    /// us one 16 KiB write request takes through a loop device over a new
    /// sparse image on that filesystem, 16 sent at once (the loop
    /// driver's worker writes it into the image's page cache and
    /// completes it; the median over the samples of their time over 16).
    pub write_us: f64,
    /// us the kernel takes to drop one clean 4 KiB folio from a file's
    /// page cache (`posix_fadvise(POSIX_FADV_DONTNEED)` over a file of
    /// cached, clean pages on that filesystem: `invalidate_mapping_pages`,
    /// the folios looked up in batches, each taken out of the mapping and
    /// freed; the median over the samples of their time per folio): the
    /// price of each folio of the btree inode a btrfs unmount invalidates
    /// (`invalidate_inode_pages2` in `close_ctree`). Absent in profiles
    /// measured before session 69, which then leave those folios
    /// unpriced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_folio_us: Option<f64>,
}

/// Largest accepted price of one write request, us (1 s).
pub const MAX_WRITE_US: f64 = 1e6;

/// Largest accepted price of one `fsync`, us (10 s).
pub const MAX_FLUSH_US: f64 = 1e7;

/// Accepted sizes of a run, KiB: 1 KiB to 1 TiB.
const KIB_RANGE: std::ops::RangeInclusive<f64> = 1.0..=(1u64 << 30) as f64;

impl StoragePrices {
    /// Why the table cannot price a flush, as (field, message).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.flush_kib.is_empty() || self.flush_kib.len() != self.flush_us.len() {
            let msg = format!(
                "{} sizes and {} times: expected as many of each, at least one",
                self.flush_kib.len(),
                self.flush_us.len()
            );
            return Err(("storage.flush_us", msg));
        }
        if !self.flush_kib.iter().all(|k| KIB_RANGE.contains(k)) || !self.flush_kib.windows(2).all(|w| w[0] < w[1]) {
            return Err(("storage.flush_kib", "expected sizes from 1 KiB to 1 TiB, ascending".to_string()));
        }
        let in_range = |us: f64| us.is_finite() && (0.0..=MAX_FLUSH_US).contains(&us);
        if let Some(us) = self.flush_us.iter().find(|us| !in_range(**us)) {
            return Err(("storage.flush_us", format!("{us} us is not in [0, {MAX_FLUSH_US}]")));
        }
        if let Some(b) = &self.block_flush_us {
            if b.len() != self.flush_kib.len() {
                let msg = format!(
                    "{} times for {} sizes (flush_kib): expected one a size",
                    b.len(),
                    self.flush_kib.len()
                );
                return Err(("storage.block_flush_us", msg));
            }
            if let Some(us) = b.iter().find(|us| !in_range(**us)) {
                return Err(("storage.block_flush_us", format!("{us} us is not in [0, {MAX_FLUSH_US}]")));
            }
        }
        if !in_range(self.super_flush_us) {
            let msg = format!("{} us is not in [0, {MAX_FLUSH_US}]", self.super_flush_us);
            return Err(("storage.super_flush_us", msg));
        }
        if !(self.write_us.is_finite() && (0.0..=MAX_WRITE_US).contains(&self.write_us)) {
            let msg = format!("{} us is not in [0, {MAX_WRITE_US}]", self.write_us);
            return Err(("storage.write_us", msg));
        }
        if let Some(us) = self.drop_folio_us {
            Self::check_drop_folio(us).map_err(|m| ("storage.drop_folio_us", m))?;
        }
        Ok(())
    }

    /// Why `us` cannot be [`Self::drop_folio_us`] (the one optional field:
    /// a calibration whose drop is out of range keeps the rest of the
    /// table).
    pub fn check_drop_folio(us: f64) -> Result<(), String> {
        if us > 0.0 && us <= MAX_WRITE_US {
            Ok(())
        } else {
            Err(format!("{us} us is not in (0, {MAX_WRITE_US}]"))
        }
    }

    /// us the first `fsync` of a commit takes after `kib` KiB written in
    /// each of the two runs: the measured times interpolated linearly in
    /// the size, and beyond the largest size continued along the last
    /// segment (below the smallest, along the first; never below 0). A
    /// table of one size gives its time at every size.
    pub fn flush_us_at(&self, kib: f64) -> f64 {
        interpolate(&self.flush_kib, &self.flush_us, kib)
    }

    /// us the first `fsync` of a commit takes after `kib` KiB of separate
    /// tree blocks in each run ([`Self::block_flush_us`], interpolated as
    /// [`Self::flush_us_at`] does); [`Self::flush_us_at`] where the
    /// profile has no `block_flush_us`.
    pub fn block_flush_us_at(&self, kib: f64) -> f64 {
        match &self.block_flush_us {
            Some(b) => interpolate(&self.flush_kib, b, kib),
            None => self.flush_us_at(kib),
        }
    }

    /// us a commit's two flushes take on the loop device: the first after
    /// its `kib` KiB of tree blocks per run ([`Self::block_flush_us_at`]),
    /// the second after the superblocks ([`Self::super_flush_us`]).
    pub fn commit_flush_us(&self, kib: f64) -> f64 {
        self.block_flush_us_at(kib) + self.super_flush_us
    }
}

/// The times `t` at the ascending sizes `k` (as long, at least one)
/// interpolated linearly at `kib`, continued beyond either end along the
/// end segment, never below 0; one size gives its time everywhere.
fn interpolate(k: &[f64], t: &[f64], kib: f64) -> f64 {
    if k.len() == 1 {
        return t[0];
    }
    let i = k.partition_point(|&x| x < kib).clamp(1, k.len() - 1);
    let slope = (t[i] - t[i - 1]) / (k[i] - k[i - 1]);
    (t[i - 1] + slope * (kib - k[i - 1])).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prices() -> StoragePrices {
        StoragePrices {
            flush_kib: vec![16.0, 64.0, 256.0, 1024.0],
            flush_us: vec![300.0, 500.0, 900.0, 3000.0],
            block_flush_us: None,
            super_flush_us: 200.0,
            write_us: 7.0,
            drop_folio_us: None,
        }
    }

    #[test]
    fn a_flush_is_interpolated_between_the_measured_sizes_and_continued_beyond() {
        let p = prices();
        assert_eq!(p.flush_us_at(64.0), 500.0);
        assert_eq!(p.flush_us_at(160.0), 700.0, "halfway between 64 and 256");
        assert_eq!(p.flush_us_at(2048.0), 3000.0 + 1024.0 * 2100.0 / 768.0, "the last segment's slope");
        assert_eq!(p.flush_us_at(8.0), 300.0 - 8.0 * 200.0 / 48.0, "the first segment's");
        assert_eq!(p.flush_us_at(0.0), 300.0 - 16.0 * 200.0 / 48.0);
        assert_eq!(p.commit_flush_us(160.0), 900.0);
        let one = StoragePrices {
            flush_kib: vec![16.0],
            flush_us: vec![300.0],
            block_flush_us: None,
            super_flush_us: 1.0,
            write_us: 7.0,
            drop_folio_us: None,
        };
        assert_eq!(one.flush_us_at(1000.0), 300.0);
    }

    #[test]
    fn a_commit_is_priced_by_the_separate_blocks_table_where_the_profile_has_one() {
        let mut p = prices();
        // Without it, the contiguous runs' times.
        assert_eq!(p.commit_flush_us(160.0), 900.0);
        p.block_flush_us = Some(vec![400.0, 1000.0, 1800.0, 6000.0]);
        assert_eq!(p.block_flush_us_at(64.0), 1000.0);
        assert_eq!(p.block_flush_us_at(160.0), 1400.0, "halfway between 64 and 256");
        assert_eq!(p.commit_flush_us(160.0), 1600.0);
        // The contiguous table is still there for what asks for it.
        assert_eq!(p.flush_us_at(160.0), 700.0);
        p.block_flush_us = Some(vec![400.0, 1000.0, 1800.0]);
        assert_eq!(p.check().unwrap_err().0, "storage.block_flush_us");
        p.block_flush_us = Some(vec![400.0, f64::NAN, 1800.0, 6000.0]);
        assert_eq!(p.check().unwrap_err().0, "storage.block_flush_us");
    }

    #[test]
    fn a_table_that_cannot_price_a_flush_is_refused() {
        assert!(prices().check().is_ok());
        let mut p = prices();
        p.flush_us.pop();
        assert_eq!(p.check().unwrap_err().0, "storage.flush_us");
        let mut p = prices();
        p.flush_kib.swap(0, 1);
        assert_eq!(p.check().unwrap_err().0, "storage.flush_kib");
        let mut p = prices();
        p.flush_us[2] = f64::NAN;
        assert_eq!(p.check().unwrap_err().0, "storage.flush_us");
        let mut p = prices();
        p.super_flush_us = -1.0;
        assert_eq!(p.check().unwrap_err().0, "storage.super_flush_us");
        for bad in [f64::NAN, -1.0, 2e6] {
            let mut p = prices();
            p.write_us = bad;
            assert_eq!(p.check().unwrap_err().0, "storage.write_us", "{bad}");
        }
        // A folio's drop, where the table has one, is a positive price.
        for bad in [f64::NAN, -1.0, 0.0, 2e6] {
            let mut p = prices();
            p.drop_folio_us = Some(bad);
            assert_eq!(p.check().unwrap_err().0, "storage.drop_folio_us", "{bad}");
        }
        let mut p = prices();
        p.drop_folio_us = Some(0.2);
        assert!(p.check().is_ok());
        for kib in [vec![], vec![0.0], vec![5e-324, 1e-323], vec![16.0, f64::INFINITY]] {
            let p = StoragePrices {
                flush_us: vec![100.0; kib.len()],
                flush_kib: kib.clone(),
                block_flush_us: None,
                super_flush_us: 1.0,
                write_us: 7.0,
                drop_folio_us: None,
            };
            assert!(p.check().is_err(), "{kib:?}");
        }
    }
}
