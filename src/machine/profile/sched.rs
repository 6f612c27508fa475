//! What waking a thread that sleeps on another, idle CPU costs on this
//! host, measured by `fsmeta calibrate` ([`crate::calibrate::sched`]):
//! the prices of the waits a btrfs unmount's teardown makes
//! ([`crate::kernel::btrfs::unmount`]).

/// A wake round trip and a thread stop, the woken thread on another
/// CPU that has gone idle, and a thread stop where the scheduler places
/// the thread.
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
    /// us of the same stop of a thread made on the stopper's CPU, asleep
    /// since and free to run on either CPU, so that the host's scheduler
    /// places its wake (the median): the shape of `kthread_stop` of a
    /// workqueue's rescuer, made at the mount and asleep since. On a host
    /// whose scheduler runs it on the stopper's CPU no idle CPU is woken.
    /// Measured by `fsmeta calibrate` since session 73; a profile without
    /// it prices that stop at [`Self::thread_stop_us`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed_stop_us: Option<f64>,
}

/// Largest accepted price, us (1 s).
pub const MAX_SCHED_US: f64 = 1e6;

impl SchedPrices {
    /// Why a price is out of range, as (field, message).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let placed = ("sched.placed_stop_us", self.placed_stop_us);
        let all = [
            ("sched.wake_us", Some(self.wake_us)),
            ("sched.thread_stop_us", Some(self.thread_stop_us)),
            placed,
        ];
        for (field, us) in all.into_iter().filter_map(|(f, us)| us.map(|us| (f, us))) {
            if !(us > 0.0 && us <= MAX_SCHED_US) {
                return Err((field, format!("{us} us is not in (0, {MAX_SCHED_US}]")));
            }
        }
        Ok(())
    }
}
