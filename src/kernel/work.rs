//! The currency of counted kernel work: a stretch of kernel code written
//! as the cache lines it misses, the locked operations it makes and the
//! L1-resident loads of its instruction path ([`Work`]), and a sum of such
//! stretches ([`Tally`]) priced on a machine profile with a host's
//! `work_scale` (the ns per straight-line load as a multiple of `hit_ns`,
//! the one knob a host may carry).
//!
//! How a stretch is counted: its loads are roughly the memory operands of
//! the functions it stands for (one per field read, pointer followed,
//! stack reload or compare against memory; roughly one per 3-5
//! instructions); its locked operations are the `lock`-prefixed
//! instructions (atomics, spinlock takes, slab fast paths counted as one
//! each as `xfs_alloc`'s costs do); its cold lines are lines no CPU cache
//! holds when the stretch starts (freshly allocated objects, objects last
//! touched long ago). Inner loops whose trip count grows with the data
//! (records walked, entries shifted, bytes copied) are [`Work::iterated`]:
//! their loads are priced without the scale, at `hit_ns`; a loop whose
//! turns do not wait on one another ([`Work::overlapped`]) at the
//! profile's measured `levels.loop_load_ns` (`fsmeta calibrate`, since
//! session 64), else at `hit_ns`.

use crate::machine::MachineProfile;

/// The work of one counted stretch of kernel code: lines missed to DRAM,
/// locked read-modify-writes, and L1-resident loads standing for the
/// instruction path (one per load the code makes, roughly one per 3-5
/// instructions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    /// Cache lines not in any CPU cache (priced at `memory_ns`).
    pub cold_lines: f64,
    /// Locked operations on lines this CPU holds (priced at `atomic_ns`).
    pub atomics: f64,
    /// Loads that hit L1 (priced at `hit_ns`, times the study's
    /// `work_scale` unless `iterated`).
    pub hits: f64,
    /// Whether this is the body of an inner loop whose trip count grows
    /// with the data (records walked, binary-search probes, busy-tree
    /// nodes, entries shifted, bytes copied): after its first turns its
    /// code runs from a hot instruction cache with trained branches, so
    /// `work_scale` (what a host's straight-line kernel code costs beyond
    /// its loads) does not apply: its loads are priced at `hit_ns`, or
    /// at `loop_load_ns` where its turns overlap ([`Work::overlapped`]).
    /// Per-call and per-level work is not iterated.
    pub iterated: bool,
    /// For an inner loop ([`Work::iterated`]): whether the turns of the
    /// loop it is counted in carry no dependency from one to the next
    /// (each turn's addresses come from the loop's cursor or index, not
    /// from the last turn's data, and no running value such as a checksum
    /// threads through them), so that an out-of-order core overlaps them
    /// turn over turn. A loop nested in such a loop overlaps across the
    /// outer loop's turns even where its own turns chain (the busy tree's
    /// descent, node after node, within each record of the by-size walk,
    /// each record's descent from the root: `xfs_alloc`'s `BUSY_NODE`,
    /// measured live so, docs/lab-hosts.md session 64). Such a loop's loads
    /// are priced at the profile's measured `levels.loop_load_ns`
    /// (`hit_ns` without it); a loop whose turns wait on one another, or
    /// whose turns have not been shown to overlap, at `hit_ns`, each load
    /// after the last.
    pub overlapped: bool,
    /// Calls through a function pointer (ops tables, callbacks): each
    /// pays what the host's Spectre v2 mitigation adds to an indirect
    /// call (`mitigation.indirect_call_ns`, 0 on a profile without it),
    /// on top of its loads.
    pub indirect_calls: f64,
    /// Returns through the host's return thunk, counted in inner loops
    /// ([`Work::iterated`]) only: each call of a function compiled out of
    /// line (listed in `/proc/kallsyms`) returns once, and where the
    /// kernel mitigates SRSO with Safe RET every return mispredicts
    /// (`mitigation.return_ns`, 0 on a profile without it). Straight-line
    /// stretches count none: their returns are part of the code the
    /// host's `work_scale` scales, which an inner loop does not pay.
    pub returns: f64,
    /// Lines of a new object written before they are read, in no CPU's
    /// cache (a slab constructor's `memset` of a fresh object, a new
    /// object's first stores): the store buffer takes the stores and the
    /// line fills overlap, so each is priced at the profile's measured
    /// `levels.fresh_line_ns` (`memory_ns` on a profile without it).
    pub new_lines: f64,
}

impl Work {
    /// No work: the base of a stretch written field by field
    /// (`Work { hits: 100.0, atomics: 12.0, ..Work::ZERO }`), straight-line
    /// and not overlapped unless it says so.
    pub const ZERO: Work = Work {
        cold_lines: 0.0,
        atomics: 0.0,
        hits: 0.0,
        iterated: false,
        overlapped: false,
        indirect_calls: 0.0,
        new_lines: 0.0,
        returns: 0.0,
    };

    /// Straight-line work: `hits` loads and `atomics` locked operations.
    pub const fn straight(hits: f64, atomics: f64) -> Work {
        Work {
            atomics,
            hits,
            ..Work::ZERO
        }
    }

    /// The body of an inner loop: `hits` loads per turn.
    pub const fn looped(hits: f64) -> Work {
        Work {
            hits,
            iterated: true,
            ..Work::ZERO
        }
    }

    /// This loop's turns overlap ([`Work::overlapped`]); only an inner
    /// loop's ([`Work::iterated`]) can.
    pub const fn overlapping(self) -> Work {
        debug_assert!(self.iterated, "only an inner loop's turns overlap");
        Work { overlapped: true, ..self }
    }

    /// This work with `n` indirect calls per run.
    pub const fn indirect(self, n: f64) -> Work {
        Work { indirect_calls: n, ..self }
    }

    /// This work with `n` returns per run ([`Work::returns`]).
    pub const fn returning(self, n: f64) -> Work {
        Work { returns: n, ..self }
    }

    /// This work with `n` lines of a new object initialised where no cache
    /// holds them ([`Work::new_lines`]).
    pub const fn fresh(self, n: f64) -> Work {
        Work { new_lines: n, ..self }
    }

    /// Price in ns on `m` with no scale: loads at `hit_ns`, an
    /// overlapped loop's at `loop_load_ns` ([`Tally::ns`]).
    pub fn ns(&self, m: &MachineProfile) -> f64 {
        let mut t = Tally::default();
        t.add(*self, 1.0);
        t.ns(m, 1.0)
    }
}

/// A sum of counted stretches, each times how often it runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    /// Lines missed to DRAM.
    pub cold_lines: f64,
    /// Locked operations.
    pub atomics: f64,
    /// Straight-line L1 loads (priced at `hit_ns x work_scale`).
    pub hits: f64,
    /// Inner-loop L1 loads, each after the last (priced at `hit_ns`).
    pub iterated_hits: f64,
    /// Inner-loop L1 loads of turns that overlap ([`Work::overlapped`]:
    /// priced at the profile's `loop_load_ns`, `hit_ns` without it).
    pub overlapped_hits: f64,
    /// Indirect calls (priced at the profile's `indirect_call_ns`).
    pub indirect_calls: f64,
    /// New objects' lines initialised in no cache (priced at the
    /// profile's `fresh_line_ns`).
    pub new_lines: f64,
    /// Returns through the host's return thunk (priced at the profile's
    /// `return_ns`).
    pub returns: f64,
}

impl Tally {
    /// Adds `times` runs of `w`.
    pub fn add(&mut self, w: Work, times: f64) -> &mut Self {
        self.cold_lines += w.cold_lines * times;
        self.atomics += w.atomics * times;
        self.indirect_calls += w.indirect_calls * times;
        self.new_lines += w.new_lines * times;
        self.returns += w.returns * times;
        if w.iterated && w.overlapped {
            self.overlapped_hits += w.hits * times;
        } else if w.iterated {
            self.iterated_hits += w.hits * times;
        } else {
            self.hits += w.hits * times;
        }
        self
    }

    /// Adds another tally, `times` over.
    pub fn add_tally(&mut self, t: &Tally, times: f64) -> &mut Self {
        self.cold_lines += t.cold_lines * times;
        self.atomics += t.atomics * times;
        self.hits += t.hits * times;
        self.iterated_hits += t.iterated_hits * times;
        self.overlapped_hits += t.overlapped_hits * times;
        self.indirect_calls += t.indirect_calls * times;
        self.new_lines += t.new_lines * times;
        self.returns += t.returns * times;
        self
    }

    /// This tally scaled by `k` (a mean over operations).
    pub fn scaled(&self, k: f64) -> Tally {
        let mut t = Tally::default();
        t.add_tally(self, k);
        t
    }

    /// Price in ns on `m` with the host's `work_scale`: cold lines at
    /// `memory_ns`, new objects' lines at `fresh_line_ns`, locked
    /// operations at `atomic_ns`, straight-line loads at `hit_ns x
    /// work_scale`, inner-loop loads at `hit_ns`, those of a loop whose
    /// turns overlap at `loop_load_ns` (`hit_ns` without it), indirect
    /// calls at `indirect_call_ns`, returns at `return_ns` (the knob does
    /// not scale a measured price).
    pub fn ns(&self, m: &MachineProfile, work_scale: f64) -> f64 {
        self.ns_cold_at(m, work_scale, m.memory_ns)
    }

    /// [`Tally::ns`] with the cold lines priced at `cold_ns` each instead
    /// of a DRAM load: lines an earlier call left in a cache level
    /// (`xfs_alloc`'s `between_calls`).
    pub fn ns_cold_at(&self, m: &MachineProfile, work_scale: f64, cold_ns: f64) -> f64 {
        self.cold_lines * cold_ns
            + self.new_lines * m.fresh_line_ns()
            + self.atomics * m.atomic_ns
            + self.hits * m.hit_ns * work_scale
            + self.iterated_hits * m.hit_ns
            + self.overlapped_hits * m.loop_load_ns()
            + self.indirect_calls * m.indirect_call_ns()
            + self.returns * m.return_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{MitigationPrices, find_builtin};

    #[test]
    fn only_a_loop_whose_turns_overlap_is_priced_at_the_measured_loop_load() {
        let mut m = find_builtin("cascadelake-gold-6242").expect("built in");
        let mut t = Tally::default();
        t.add(Work::looped(10.0).overlapping(), 2.0)
            .add(Work::looped(3.0), 1.0)
            .add(Work::straight(5.0, 0.0), 1.0);
        assert_eq!((t.overlapped_hits, t.iterated_hits, t.hits), (20.0, 3.0, 5.0));
        let without = t.ns(&m, 2.0);
        assert!(
            (without - (23.0 * m.hit_ns + 10.0 * m.hit_ns)).abs() < 1e-9,
            "hit_ns without a measurement"
        );
        let levels = crate::machine::profile::CacheLevels {
            l1d_ways: 8,
            l2_ways: 8,
            l2_hit_ns: 4.0,
            llc_hit_ns: 14.0,
            fresh_line_ns: None,
            loop_load_ns: Some(0.25),
        };
        m.levels = Some(levels);
        let with = t.ns(&m, 2.0);
        assert!((with - (20.0 * 0.25 + 3.0 * m.hit_ns + 10.0 * m.hit_ns)).abs() < 1e-9, "{with}");
    }

    #[test]
    fn returns_are_priced_at_the_measured_return_not_scaled_by_the_knob() {
        let mut m = find_builtin("cascadelake-gold-6242").expect("built in");
        let w = Work::looped(10.0).returning(3.0);
        let mut t = Tally::default();
        t.add(w, 2.0)
            .add(Work::straight(5.0, 0.0), 1.0)
            .add(Work::looped(0.0).returning(1.0), 1.0);
        assert_eq!(t.returns, 7.0);
        let base = t.ns(&m, 2.0);
        assert_eq!(base, 20.0 * m.hit_ns + 5.0 * m.hit_ns * 2.0, "no return price without the table");
        m.mitigation = Some(MitigationPrices {
            spectre_v2: "Not affected".into(),
            indirect_call_ns: 0.0,
            spec_rstack_overflow: Some("Mitigation: Safe RET".into()),
            return_ns: 6.0,
        });
        assert!((t.ns(&m, 2.0) - base - 42.0).abs() < 1e-9);
        assert!(
            (t.ns(&m, 3.0) - t.ns(&m, 2.0) - 5.0 * m.hit_ns).abs() < 1e-9,
            "the knob scales loads only"
        );
    }
}
