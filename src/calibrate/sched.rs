//! What waking a thread that sleeps on another, idle CPU costs, and
//! stopping one that sleeps where the scheduler put it: the
//! waits of a btrfs unmount's teardown (`close_ctree`, fs/btrfs/
//! disk-io.c) are of this shape, and the lab's `rm -fr` phase ends in
//! them ([`crate::kernel::btrfs::unmount`] counts them).
//!
//! Three measurements, with the calling thread pinned to CPU `a` and the
//! woken one to CPU `b` (the third: to either). The samples follow one another as the
//! unmount's waits do: before each the caller runs on for [`GAP`] (a
//! busy wait) while the other thread is asleep and its CPU idle, as the
//! lab's trace of an unmount shows them (session 67: the next
//! workqueue's rescuer woken about 16 us after the last one exited):
//! - a **wake round trip** ([`SchedCost::wake`]): the caller wakes the
//!   sleeper (`unpark`, a futex wake) and sleeps until the sleeper wakes
//!   it back: the shape of `kthread_park`, `synchronize_rcu_expedited`'s
//!   wait for its kthread and `flush_work` on an idle work item;
//! - a **thread stop** ([`SchedCost::thread_stop`]): the caller wakes a
//!   sleeping thread that then exits, and waits for its exit (the
//!   kernel clears the thread's child-tid word and wakes the waiter's
//!   futex on it): the shape of `kthread_stop`, which wakes the kthread
//!   and sleeps until its exit completes (kernel/kthread.c);
//! - a **placed thread stop** ([`SchedCost::placed_stop`]): the same, the
//!   stopped thread made on the caller's CPU (it inherits the measuring
//!   thread's affinity, `a` alone, and only widens it), asleep there and
//!   free to run on `a` or `b`, so that the host's
//!   scheduler places its wake, as it places a workqueue rescuer's that
//!   `kthread_stop` wakes (made at the mount, asleep since). Where it runs
//!   on the caller's CPU (a kernel that packs woken tasks onto busy
//!   vCPUs, as the family 6 model 167 VM's does, `sched_vcpu_pack` on its
//!   command line), no idle CPU is woken: in the lab's trace there
//!   (session 73) the workqueue rescuers' stops ran on the unmounting
//!   thread's own CPU and returned in 6.5-12.5 us, where calibrate's stop
//!   pinned to the other CPU took 55.6.
//!
//! On x86-64 the stopped thread is made by a raw `clone(2)` and runs no
//! user-space code but its futex wait and `exit(2)` (raw system calls),
//! so the stop is the kernel's work, as a kthread's is: a thread of the
//! C library and of `std` also runs their exit code (thread-local
//! destructors, the stack's release): 51 us against 29 on the Xeon 6 VM
//! (session 68, by hand, the caller spinning until the thread ran).
//! Elsewhere a `std` thread stands in. The new thread starts on the
//! caller's CPU, so the caller yields until the thread has set its
//! affinity (moved itself to `b`, or for the placed stop widened it to
//! `a` and `b`; spinning instead measured 32.7 us against 15.5). A kthread's
//! exit does more than this (the trace of an unmount: 22-44 us a stop),
//! which a user-space thread does not show. A sample is the wall time of
//! the caller's side, in us.

use super::CalibrateError;
use super::pin::pin_to;
use super::stats::Spread;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How long the caller runs on before each sample, the other thread
/// asleep and its CPU idle.
pub const GAP: Duration = Duration::from_micros(20);

/// Runs on the calling CPU for [`GAP`].
fn busy_gap() {
    let t0 = Instant::now();
    while t0.elapsed() < GAP {
        std::hint::spin_loop();
    }
}

/// The three prices, us.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchedCost {
    /// The calling CPU.
    pub a: u32,
    /// The woken thread's CPU (for the placed stop: the other CPU it may
    /// run on).
    pub b: u32,
    /// Wake round trips, us.
    pub wake: Spread,
    /// Thread stops, us.
    pub thread_stop: Spread,
    /// Thread stops, the thread made on `a` and placed by the scheduler on
    /// `a` or `b`, us; `None` when they could not be measured (the other
    /// two prices are kept).
    pub placed_stop: Option<Spread>,
    /// Of the placed stops, how many ran on the caller's CPU `a` after
    /// their wake (`getcpu(2)` in the thread), where that is known (the
    /// raw thread of x86-64).
    pub placed_on_caller: Option<usize>,
}

/// Why the prices were not measured.
#[derive(Debug, Clone, PartialEq)]
pub struct NotMeasured(pub String);

/// Measures the three prices, `n` samples each, on CPUs `a` (the caller) and
/// `b` (the woken thread), from a thread of its own pinned to `a` (the
/// calling thread's CPUs are left as they were).
pub fn measure(a: u32, b: u32, n: usize) -> Result<SchedCost, NotMeasured> {
    let run = || -> Result<SchedCost, CalibrateError> {
        pin_to(a)?;
        let spread = |v: Vec<f64>, what: &str| Spread::of(&v).ok_or_else(|| CalibrateError::Unsupported(format!("{what}: no sample")));
        let us = |v: &[Stop]| v.iter().map(|s| s.us).collect::<Vec<f64>>();
        let wake = spread(wake_round_trips(b, n)?, "wake round trip")?;
        let thread_stop = spread(us(&thread_stops(&[b], n)?), "thread stop")?;
        // Optional: its failure keeps the other two.
        let placed = thread_stops(&[a, b], n).ok();
        let known: Option<Vec<u32>> = placed.as_ref().and_then(|v| v.iter().map(|s| s.ran_on).collect());
        Ok(SchedCost {
            a,
            b,
            wake,
            thread_stop,
            placed_stop: placed.and_then(|v| Spread::of(&us(&v))),
            placed_on_caller: known.map(|cpus| cpus.iter().filter(|&&c| c == a).count()),
        })
    };
    thread::scope(|s| s.spawn(run).join())
        .unwrap_or_else(|_| Err(CalibrateError::Unsupported("the measuring thread panicked".into())))
        .map_err(|e| NotMeasured(e.to_string()))
}

/// The pair of CPUs to measure on: the nearest pair of two cores (a
/// kthread woken by an unmount runs on an idle core, not on the caller's
/// SMT sibling), else the nearest pair; `pairs` nearest first, as
/// [`crate::calibrate::sysfs::HostTopology::representative_pairs`] gives them.
pub fn pick_pair(pairs: &[(crate::machine::Distance, u32, u32)]) -> Option<(u32, u32)> {
    let two_cores = pairs.iter().find(|(d, _, _)| *d != crate::machine::Distance::SmtSibling);
    two_cores.or(pairs.first()).map(|&(_, a, b)| (a, b))
}

/// `n` wake round trips with a partner thread on CPU `b`, us each.
fn wake_round_trips(b: u32, n: usize) -> Result<Vec<f64>, CalibrateError> {
    let caller = thread::current();
    let turn = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let partner = {
        let (turn, stop) = (Arc::clone(&turn), Arc::clone(&stop));
        thread::spawn(move || -> Result<(), CalibrateError> {
            pin_to(b)?;
            loop {
                // Woken by the caller with `turn` set: wake it back.
                while !turn.swap(false, Ordering::AcqRel) {
                    if stop.load(Ordering::Acquire) {
                        return Ok(());
                    }
                    thread::park();
                }
                if stop.load(Ordering::Acquire) {
                    return Ok(());
                }
                caller.unpark();
            }
        })
    };
    let mut samples = Vec::with_capacity(n);
    // One round trip first, unrecorded: the partner pinned and asleep.
    for i in 0..=n {
        busy_gap();
        let t0 = Instant::now();
        turn.store(true, Ordering::Release);
        partner.thread().unpark();
        // The turn was taken when `turn` is false again; a token left by
        // the last turn's unpark only adds a check. A partner that
        // ended (its pin failed) is joined below for its error.
        while turn.load(Ordering::Acquire) && !partner.is_finished() {
            thread::park_timeout(Duration::from_millis(100));
        }
        if partner.is_finished() {
            break;
        }
        if i > 0 {
            samples.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    stop.store(true, Ordering::Release);
    partner.thread().unpark();
    let joined = partner
        .join()
        .map_err(|_| CalibrateError::Unsupported("the wake partner thread panicked".into()))?;
    joined?;
    Ok(samples)
}

/// One thread stop: its time and, where known, the CPU the thread ran on
/// after its wake.
#[derive(Debug, Clone, Copy)]
struct Stop {
    /// us.
    us: f64,
    /// `getcpu(2)` in the thread after its wake (the raw thread of
    /// x86-64; `None` elsewhere).
    ran_on: Option<u32>,
}

/// `n` thread stops, the thread on the CPUs of `cpus`.
fn thread_stops(cpus: &[u32], n: usize) -> Result<Vec<Stop>, CalibrateError> {
    (0..n).map(|_| one_stop(cpus)).collect()
}

/// One thread stop with a `std` thread (not x86-64), the thread on the
/// CPUs of `cpus` (where it ran is not known).
#[cfg(not(target_arch = "x86_64"))]
fn one_stop(cpus: &[u32]) -> Result<Stop, CalibrateError> {
    let cpus = cpus.to_vec();
    let go = Arc::new(AtomicBool::new(false));
    let asleep = Arc::new(AtomicBool::new(false));
    let t = {
        let (go, asleep) = (Arc::clone(&go), Arc::clone(&asleep));
        thread::spawn(move || -> Result<(), CalibrateError> {
            super::pin::pin_to_set(&cpus)?;
            asleep.store(true, Ordering::Release);
            while !go.load(Ordering::Acquire) {
                thread::park();
            }
            Ok(())
        })
    };
    // The thread starts on this thread's CPU: yield to it.
    while !asleep.load(Ordering::Acquire) && !t.is_finished() {
        thread::yield_now();
    }
    busy_gap();
    let t0 = Instant::now();
    go.store(true, Ordering::Release);
    t.thread().unpark();
    let joined = t
        .join()
        .map_err(|_| CalibrateError::Unsupported("a stopped thread panicked".into()))?;
    let us = t0.elapsed().as_secs_f64() * 1e6;
    joined?;
    Ok(Stop { us, ran_on: None })
}

#[cfg(target_arch = "x86_64")]
use raw::one_stop;

/// A thread made by `clone(2)` that runs only raw system calls.
#[cfg(target_arch = "x86_64")]
mod raw {
    use super::{CalibrateError, Stop, busy_gap};
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::time::Instant;

    /// The stopped thread's stack, bytes.
    const STACK: usize = 64 << 10;

    /// What the caller and the thread share.
    #[repr(C)]
    struct Shared {
        /// Set to 1 by the caller: exit.
        go: AtomicI32,
        /// Set by the thread just before its wait: 1 once pinned, 2 if
        /// its `sched_setaffinity` failed.
        ready: AtomicI32,
        /// The thread's id; the kernel writes 0 here at its exit and
        /// wakes a futex waiter (`CLONE_CHILD_CLEARTID`).
        tid: AtomicI32,
        /// The CPU set the thread pins itself to.
        mask: libc::cpu_set_t,
        /// The CPU the thread ran on after its wake (`getcpu(2)`), -1
        /// until then.
        ran_on: AtomicI32,
    }

    /// A raw system call of up to three arguments (no `errno`: the thread
    /// shares the caller's thread pointer, so it must not touch the C
    /// library's thread-local state).
    ///
    /// # Safety
    /// The call's arguments must be valid for system call `nr`.
    unsafe fn syscall3(nr: i64, a: i64, b: i64, c: i64) -> i64 {
        let ret;
        // SAFETY: the caller passes valid arguments; `syscall` clobbers
        // rcx and r11, declared; r10, r8 and r9 are zero (unused).
        unsafe {
            std::arch::asm!(
                "syscall",
                inlateout("rax") nr => ret,
                in("rdi") a,
                in("rsi") b,
                in("rdx") c,
                in("r10") 0i64,
                in("r8") 0i64,
                in("r9") 0i64,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }

    /// The thread: pin, wait for `go`, exit.
    extern "C" fn body(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the caller's `Shared`, which outlives the
        // thread (the caller waits for the kernel's clear of `tid`).
        let s = unsafe { &*(arg as *const Shared) };
        // SAFETY: pid 0 (this thread), the set's size and address.
        let pinned = unsafe {
            syscall3(
                libc::SYS_sched_setaffinity,
                0,
                std::mem::size_of::<libc::cpu_set_t>() as i64,
                &s.mask as *const libc::cpu_set_t as i64,
            )
        };
        s.ready.store(if pinned == 0 { 1 } else { 2 }, Ordering::Release);
        while s.go.load(Ordering::Acquire) == 0 {
            // SAFETY: a futex wait on `go` while it is 0.
            unsafe {
                syscall3(
                    libc::SYS_futex,
                    s.go.as_ptr() as i64,
                    (libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG) as i64,
                    0,
                )
            };
        }
        let mut cpu: u32 = u32::MAX;
        // SAFETY: getcpu(2) writes the CPU into `cpu` (a valid u32 of this
        // stack frame); the node and cache arguments are null (unused).
        let got = unsafe { syscall3(libc::SYS_getcpu, &mut cpu as *mut u32 as i64, 0, 0) };
        if got == 0 {
            s.ran_on.store(cpu as i32, Ordering::Release);
        }
        loop {
            // SAFETY: exit(2) ends this thread only; it does not return.
            unsafe { syscall3(libc::SYS_exit, 0, 0, 0) };
        }
    }

    /// One thread stop, the thread on the CPUs of `cpus` (where the
    /// scheduler places it, if more than one), us.
    pub fn one_stop(cpus: &[u32]) -> Result<Stop, CalibrateError> {
        let mask = crate::calibrate::pin::cpu_set(cpus)?;
        let mut stack = vec![0u128; STACK / 16];
        let shared = Box::new(Shared {
            go: AtomicI32::new(0),
            ready: AtomicI32::new(0),
            tid: AtomicI32::new(1),
            mask,
            ran_on: AtomicI32::new(-1),
        });
        let arg = &*shared as *const Shared as *mut libc::c_void;
        let flags = libc::CLONE_VM
            | libc::CLONE_FS
            | libc::CLONE_FILES
            | libc::CLONE_SIGHAND
            | libc::CLONE_THREAD
            | libc::CLONE_SYSVSEM
            | libc::CLONE_PARENT_SETTID
            | libc::CLONE_CHILD_CLEARTID;
        let tid = shared.tid.as_ptr();
        // Every signal blocked across the clone, so the thread inherits a
        // full mask and never runs a handler (it shares this thread's
        // thread pointer); this thread's mask is restored after.
        // SAFETY: all zeroes is a valid `sigset_t`; both are then filled
        // by `sigfillset` and by the call.
        let (mut all, mut old): (libc::sigset_t, libc::sigset_t) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
        // SAFETY: valid pointers to the two sets above.
        unsafe {
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        }
        // SAFETY: the stack's top (16-byte aligned) and `arg` stay valid
        // until the thread has exited: this function returns only after
        // the kernel cleared `tid`, which it does at the thread's exit,
        // after the thread's last user-space instruction; `body` touches
        // only `Shared` and raw system calls.
        let rc = unsafe {
            let top = stack.as_mut_ptr().add(stack.len()).cast::<libc::c_void>();
            libc::clone(body, top, flags, arg, tid, std::ptr::null_mut::<libc::c_void>(), tid)
        };
        let clone_error = std::io::Error::last_os_error();
        // SAFETY: the mask saved above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(CalibrateError::Unsupported(format!("clone: {clone_error}")));
        }
        // The thread starts on this thread's CPU: yield to it until it
        // has moved itself.
        while shared.ready.load(Ordering::Acquire) == 0 {
            std::thread::yield_now();
        }
        let pinned = shared.ready.load(Ordering::Acquire) == 1;
        busy_gap();
        let t0 = Instant::now();
        shared.go.store(1, Ordering::Release);
        // SAFETY: wake one waiter on `go`.
        unsafe { libc::syscall(libc::SYS_futex, shared.go.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, 1) };
        loop {
            let v = shared.tid.load(Ordering::Acquire);
            if v == 0 {
                break;
            }
            // SAFETY: a futex wait on `tid` while it holds `v` (shared:
            // the kernel's wake at exit is not a private futex's).
            unsafe { libc::syscall(libc::SYS_futex, tid, libc::FUTEX_WAIT, v, std::ptr::null::<libc::timespec>()) };
        }
        let us = t0.elapsed().as_secs_f64() * 1e6;
        drop(stack);
        if !pinned {
            return Err(CalibrateError::Affinity {
                cpu: crate::calibrate::pin::named_cpu(cpus),
                detail: "the stopped thread could not pin itself".into(),
            });
        }
        let ran_on = u32::try_from(shared.ran_on.load(Ordering::Acquire)).ok();
        Ok(Stop { us, ran_on })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pair_is_two_cores_where_the_host_has_them() {
        use crate::machine::Distance::{SameLlc, SmtSibling};
        assert_eq!(pick_pair(&[(SmtSibling, 0, 64), (SameLlc, 0, 1)]), Some((0, 1)));
        assert_eq!(pick_pair(&[(SmtSibling, 0, 1)]), Some((0, 1)));
        assert_eq!(pick_pair(&[]), None);
    }

    #[test]
    fn each_sample_is_a_positive_finite_time() {
        let cpus = crate::calibrate::allowed_cpus().unwrap();
        // One allowed CPU: both threads on it (the measurement still runs).
        let (a, b) = (cpus[0], *cpus.get(1).unwrap_or(&cpus[0]));
        let c = measure(a, b, 5).unwrap();
        assert_eq!((c.a, c.b), (a, b));
        let placed = c.placed_stop.expect("the placed stop");
        if cfg!(target_arch = "x86_64") {
            assert!(c.placed_on_caller.is_some_and(|k| k <= 5), "{:?}", c.placed_on_caller);
        }
        for s in [c.wake, c.thread_stop, placed] {
            assert_eq!(s.n, 5);
            assert!(s.p10.is_finite() && s.p10 > 0.0 && s.p90 < 1e6, "{s:?}");
        }
    }
}
