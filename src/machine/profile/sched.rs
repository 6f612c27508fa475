//! What waking a thread that sleeps on another, idle CPU costs on this
//! host, measured by `fsmeta calibrate` ([`crate::calibrate::sched`]):
//! the prices of the waits a btrfs unmount's teardown makes
//! ([`crate::kernel::btrfs::unmount`]).

/// A wake round trip and a thread stop, the woken thread on another
/// CPU that has gone idle.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SchedPrices {
    /// us from waking a thread asleep on the other CPU (a futex wake)
    /// until it has woken the waker back, the waker asleep meanwhile
    /// (the median): the shape of `kthread_park`, of
    /// `synchronize_rcu_expedited`'s wait for its kthread and of
    /// `flush_work` of an idle work item.
    pub wake_us: f64,
    /// us from waking a thread asleep on the other CPU until it has
    /// exited and been joined, the joiner asleep meanwhile (the median):
    /// the shape of `kthread_stop` (kernel/kthread.c: wake, then wait for
    /// the thread's exit).
    pub thread_stop_us: f64,
}

/// Largest accepted price, us (1 s).
pub const MAX_SCHED_US: f64 = 1e6;

impl SchedPrices {
    /// Why a price is out of range, as (field, message).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        for (field, us) in [("sched.wake_us", self.wake_us), ("sched.thread_stop_us", self.thread_stop_us)] {
            if !(us > 0.0 && us <= MAX_SCHED_US) {
                return Err((field, format!("{us} us is not in (0, {MAX_SCHED_US}]")));
            }
        }
        Ok(())
    }
}
