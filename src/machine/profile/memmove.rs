//! What the kernel's `__memmove` (arch/x86/lib/memmove_64.S) costs per
//! 64 bytes for the two moves `btrfs_del_items` makes inside a leaf,
//! measured by `fsmeta calibrate` ([`crate::calibrate::memmove`]).

/// ns per 64 bytes moved inside an L1-resident leaf, by the move's kind.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemmovePrices {
    /// Destination above the source (the items' data moved up over a
    /// deleted item's): 32-byte turns from the top, four loads then four
    /// stores.
    pub backward_ns: f64,
    /// Destination less than 64 bytes below the source (the headers of a
    /// one- or two-item deletion moved down): `rep movsb` off its fast
    /// path where the CPU has `fsrm` or `erms`, else 32-byte turns.
    pub forward_near_ns: f64,
    /// Destination 64 bytes or more below the source (the headers of a
    /// larger deletion): `rep movsb` on its fast path, or 32-byte turns.
    pub forward_far_ns: f64,
}

/// A forward move whose destination is fewer than this many bytes below
/// its source is priced at [`MemmovePrices::forward_near_ns`]: `rep
/// movsb` leaves its fast path below it (a hand check on the Xeon family
/// 6 model 207 VM, 2,950 bytes: 17-19 ns per 64 bytes at distances of
/// 25, 32, 50 and 63 bytes, 0.41 at 64 and 75).
pub const FAST_STRING_DISTANCE: u64 = 64;

/// Largest accepted price, ns per 64 bytes.
pub const MAX_MEMMOVE_NS: f64 = 1e3;

impl MemmovePrices {
    /// Why a price is out of range, as (field, message).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let fields = [
            ("memmove.backward_ns", self.backward_ns),
            ("memmove.forward_near_ns", self.forward_near_ns),
            ("memmove.forward_far_ns", self.forward_far_ns),
        ];
        for (field, ns) in fields {
            if !(ns > 0.0 && ns <= MAX_MEMMOVE_NS) {
                return Err((field, format!("{ns} ns is not in (0, {MAX_MEMMOVE_NS}]")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_price_must_be_positive_and_bounded_and_is_named() {
        let ok = MemmovePrices {
            backward_ns: 1.6,
            forward_near_ns: 20.7,
            forward_far_ns: 0.9,
        };
        assert_eq!(ok.check(), Ok(()));
        let zero = MemmovePrices {
            forward_near_ns: 0.0,
            ..ok.clone()
        };
        assert_eq!(zero.check().map_err(|e| e.0), Err("memmove.forward_near_ns"));
        let huge = MemmovePrices {
            backward_ns: 2e3,
            ..ok.clone()
        };
        assert_eq!(huge.check().map_err(|e| e.0), Err("memmove.backward_ns"));
        let nan = MemmovePrices {
            forward_far_ns: f64::NAN,
            ..ok
        };
        assert_eq!(nan.check().map_err(|e| e.0), Err("memmove.forward_far_ns"));
    }
}
