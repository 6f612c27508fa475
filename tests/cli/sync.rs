//! The machine objects of issues 31 and 32 through whole `path` runs, each
//! against a hand-computed or analytical case: the rwsem (readers alone
//! never wait; a writer excludes everyone; a read-mostly mix against its
//! bounds), the qrwlock, the seqlock's retries for a known overlap,
//! percpu_ref in both modes, and work queues (M/D/1 and M/M/1 waits of an
//! unbound worker; a bound worker takes its thread's CPU).

use fsmeta::scenario::{LoadOptions, load_str};
use std::collections::BTreeMap;

/// Runs `text` once (one point, one replication) and gives its metrics.
fn run(text: &str) -> BTreeMap<String, f64> {
    let s = load_str(&super::root().join("scenarios/x.toml"), text, &LoadOptions::default()).expect("loads");
    let plan = fsmeta::plan::plan(&s);
    let r = fsmeta::runner::run_all(&s, &plan, 1, &|| {}).expect("runs");
    r[0].metrics.iter().map(|(k, v)| (k.clone(), *v)).collect()
}

/// A scenario on the ideal machine (free transfers and wake-ups) with
/// `threads` threads on a machine of `cpus` CPUs and the given sections.
fn scenario(threads: u32, cpus: u32, ops: u64, body: &str) -> String {
    format!(
        "[scenario]\nname = \"sync\"\nops = {ops}\nreplications = 1\n[machine]\nprofile = \"ideal\"\ntopology = {{ sockets = 1, cores_per_socket = {cpus}, smt = 1 }}\n[workload]\nkind = \"path\"\nthreads = {threads}\n{body}"
    )
}

const READ_SECTION: &str = r#"
[[path]]
lock = "r"
mode = "read"
[[path]]
work = { dist = "fixed", mean_ns = 100.0 }
[[path]]
unlock = "r"
"#;

#[test]
fn rwsem_and_qrwlock_readers_alone_never_wait() {
    for kind in ["rwsem", "qrwlock"] {
        // Started together (fixed work would otherwise stagger the
        // threads' starts, and the run's time would hold the offsets).
        let body = format!("[start]\nthreads = \"together\"\n[locks.r]\nkind = \"{kind}\"\n{READ_SECTION}");
        let m = run(&scenario(4, 4, 40_000, &body));
        // Four readers share the lock: each holds it 100 ns per operation
        // and nobody waits, so X = 4 / 100 ns.
        assert!((m["ops_per_sec"] / 40e6 - 1.0).abs() < 1e-6, "{kind}: {}", m["ops_per_sec"]);
        assert_eq!(m["r.contended"], 0.0, "{kind}");
        assert_eq!(m["r.wait_mean_ns"], 0.0, "{kind}");
        assert!(m["r.read_acquisitions"] >= 40_000.0);
    }
}

#[test]
fn a_writer_excludes_readers_and_writers() {
    // Every operation writes for 100 ns and reads for 10 ns: the writes
    // exclude each other and the readers, so X <= 1 / 100 ns, whatever
    // the 8 threads (they alone would allow 8 / 120 ns).
    for kind in ["rwsem", "qrwlock"] {
        let body = format!(
            "[locks.r]\nkind = \"{kind}\"\n[[path]]\nlock = \"r\"\n[[path]]\nwork = {{ dist = \"fixed\", mean_ns = 100.0 }}\n[[path]]\nunlock = \"r\"\n[[path]]\nlock = \"r\"\nmode = \"read\"\n[[path]]\nwork = {{ dist = \"fixed\", mean_ns = 10.0 }}\n[[path]]\nunlock = \"r\"\n"
        );
        let m = run(&scenario(8, 8, 50_000, &body));
        let x = m["ops_per_sec"];
        assert!(x <= 1e7 * (1.0 + 1e-9), "{kind}: {x} exceeds the writers' bound");
        assert!(x >= 0.8e7, "{kind}: {x}");
        assert!(m["r.write_utilisation"] > 0.8 && m["r.write_utilisation"] <= 1.0, "{kind}");
        assert!(m["r.contended"] > 0.0);
    }
}

#[test]
fn rwsem_read_mostly_throughput_is_within_its_hand_computed_bounds() {
    // N = 4 threads: think ~ Exp(100 ns), read for 400 ns, and every 10th
    // operation write for 100 ns. Upper bound, nobody ever waiting:
    // X <= N / (100 + 400 + 100 / 10) ns = 7.84 M/s. A lock that shared
    // nothing (a mutex) could not pass 1 / (400 + 10) ns = 2.44 M/s; the
    // shared read side must keep X well above that: at least 0.6 x bound.
    let body = r#"
[locks.r]
kind = "rwsem"
[[path]]
work = { dist = "exp", mean_ns = 100.0 }
[[path]]
lock = "r"
mode = "read"
[[path]]
work = { dist = "fixed", mean_ns = 400.0 }
[[path]]
unlock = "r"
[[path]]
lock = "r"
every = 10
[[path]]
work = { dist = "fixed", mean_ns = 100.0 }
every = 10
[[path]]
unlock = "r"
every = 10
"#;
    let m = run(&scenario(4, 4, 200_000, body));
    let x = m["ops_per_sec"];
    let upper = 4.0 / 510e-9;
    eprintln!("read-mostly rwsem: {x} ops/s, bound {upper}");
    assert!(x <= upper, "{x} above the no-wait bound {upper}");
    assert!(x >= 0.6 * upper, "{x}: the read side is not shared");
    assert!(m["r.write_acquisitions"] >= 19_990.0);
}

#[test]
fn seqlock_reader_retries_once_per_known_overlap() {
    // One thread on a 2-CPU machine queues an item on an unbound queue,
    // then reads under the seqlock for 1000 ns; the worker on the idle CPU
    // waits 100 ns and writes from 100 to 200 ns. So every read section
    // overlaps exactly one write: one retry per operation, then the second
    // section is clean. Each operation takes 1000 (retried) + 1000 + 1000
    // (the work after) = 3000 ns.
    let body = r#"
[locks.s]
kind = "seqlock"
[workqueues.w]
kind = "unbound"
[[workqueues.w.path]]
work = { dist = "fixed", mean_ns = 100.0 }
[[workqueues.w.path]]
lock = "s"
[[workqueues.w.path]]
work = { dist = "fixed", mean_ns = 100.0 }
[[workqueues.w.path]]
unlock = "s"
[[path]]
queue = "w"
[[path]]
lock = "s"
mode = "read"
[[path]]
work = { dist = "fixed", mean_ns = 1000.0 }
[[path]]
unlock = "s"
[[path]]
work = { dist = "fixed", mean_ns = 1000.0 }
"#;
    let m = run(&scenario(1, 2, 1_000, body));
    assert_eq!(m["s.retries"], 1_000.0);
    assert_eq!(m["s.read_acquisitions"], 1_000.0);
    assert_eq!(m["s.write_acquisitions"], 1_000.0);
    assert!((m["ops_per_sec"] * 3000e-9 - 1.0).abs() < 1e-9, "{}", m["ops_per_sec"]);
    assert_eq!(m["w.items"], 1_000.0);
    assert!((m["w.service_mean_ns"] - 200.0).abs() < 1e-9);
}

#[test]
fn percpu_ref_shares_no_line_in_percpu_mode_and_one_atomic_per_op_when_killed() {
    let text = |mode: &str| {
        scenario(
            4,
            4,
            40_000,
            &format!(
                "[counters.ref]\nkind = \"percpu-ref\"\nmode = \"{mode}\"\n[[path]]\ncounter = \"ref\"\nop = \"get\"\n[[path]]\nwork = {{ dist = \"exp\", mean_ns = 100.0 }}\n[[path]]\ncounter = \"ref\"\nop = \"put\"\n[[path]]\nwork = {{ dist = \"exp\", mean_ns = 100.0 }}\n"
            ),
        )
    };
    let percpu = run(&text("percpu"));
    assert_eq!(percpu["ref.data.transfers"], 0.0, "the shared count is never touched");
    // The percpu_ref line is only read: one cold fetch per thread (the
    // first from memory, the three others from a sharer), never again.
    assert_eq!(percpu["ref.transfers"], 3.0);
    assert_eq!(percpu["ref.read_misses"], 4.0);
    let killed = run(&text("atomic"));
    let ops = killed["ops"];
    // Two atomics per operation (get and put) on the shared line; with
    // four threads interleaving, most of them move the line.
    let t = killed["ref.data.transfers"];
    assert!(t > ops && t <= 2.0 * ops + 4.0, "{t} transfers for {ops} operations");
    assert_eq!(killed["ref.transfers"], 3.0);
    assert!((killed["ref.incs_per_op"] - 1.0).abs() < 1e-3, "{}", killed["ref.incs_per_op"]);
}

/// One thread on a 2-CPU machine queues an item per operation after
/// Exp(2000 ns) of work (Poisson arrivals, rate 1 / 2 us) on an unbound
/// queue whose one worker (on the idle CPU) serves it in `service`.
fn queue_wait(service: &str) -> (f64, BTreeMap<String, f64>) {
    let body = format!(
        "[workqueues.w]\nkind = \"unbound\"\n[[workqueues.w.path]]\nwork = {service}\n[[path]]\nwork = {{ dist = \"exp\", mean_ns = 2000.0 }}\n[[path]]\nqueue = \"w\"\n"
    );
    let m = run(&scenario(1, 2, 1_000_000, &body));
    eprintln!("service {service}: mean wait {} ns, busy {}", m["w.wait_mean_ns"], m["w.busy"]);
    (m["w.wait_mean_ns"], m)
}

#[test]
fn unbound_queue_with_deterministic_service_gives_the_md1_wait() {
    // M/D/1, rho = 0.5, s = 1000 ns: Wq = rho s / (2 (1 - rho)) = 500 ns.
    let (w, m) = queue_wait("{ dist = \"fixed\", mean_ns = 1000.0 }");
    assert!((w / 500.0 - 1.0).abs() < 0.02, "M/D/1 wait {w} ns, expected 500");
    assert!((m["w.busy"] - 0.5).abs() < 0.01, "utilisation {}", m["w.busy"]);
    // Little: the mean queue length is lambda x Wq = 0.25.
    assert!((m["w.queue_mean"] / 0.25 - 1.0).abs() < 0.03, "{}", m["w.queue_mean"]);
}

#[test]
fn unbound_queue_with_exponential_service_gives_the_mm1_wait() {
    // M/M/1, rho = 0.5, s = 1000 ns: Wq = rho s / (1 - rho) = 1000 ns.
    let (w, _) = queue_wait("{ dist = \"exp\", mean_ns = 1000.0 }");
    assert!((w / 1000.0 - 1.0).abs() < 0.02, "M/M/1 wait {w} ns, expected 1000");
}

#[test]
fn a_bound_worker_takes_its_threads_cpu() {
    // 1000 ns of work and a queued item of 500 ns per operation, run by
    // the same CPU's kworker: every operation costs the CPU 1500 ns.
    let body = r#"
[workqueues.w]
kind = "bound"
[[workqueues.w.path]]
work = { dist = "fixed", mean_ns = 500.0 }
[[path]]
work = { dist = "fixed", mean_ns = 1000.0 }
[[path]]
queue = "w"
"#;
    let m = run(&scenario(1, 2, 10_000, body));
    // The run stops as the last operation ends, before its item runs.
    let expect = 10_000.0 / (10_000.0 * 1500e-9 - 500e-9);
    assert!((m["ops_per_sec"] / expect - 1.0).abs() < 1e-9, "{}", m["ops_per_sec"]);
    assert!((m["w.busy"] - 1.0 / 3.0).abs() < 1e-3, "{}", m["w.busy"]);
    assert_eq!(m["w.wait_mean_ns"], 0.0, "it runs as soon as the operation ends");
}

/// Two threads, each running 5,000 operations of fixed work, queue on an
/// unbound queue with `every_total` (counted over both threads) or with
/// `every` (counted per thread): the number of items queued tells them
/// apart.
fn queued_with(key: &str, n: u32) -> f64 {
    let body = format!(
        "[workqueues.w]\nkind = \"unbound\"\n[[workqueues.w.path]]\nwork = {{ dist = \"fixed\", mean_ns = 100.0 }}\n[[path]]\nwork = {{ dist = \"fixed\", mean_ns = 1000.0 }}\n[[path]]\nqueue = \"w\"\n{key} = {n}\n"
    );
    run(&scenario(2, 4, 10_000, &body))["w.queued"]
}

#[test]
fn every_total_counts_the_arrivals_of_all_threads() {
    // 10,000 arrivals in all, 5,000 per thread: every 7,000th over both
    // threads is one item (the CIL push of a checkpoint both threads
    // fill), per thread none; every 3rd over both threads is 3,333.
    assert_eq!(queued_with("every_total", 7_000), 1.0);
    assert_eq!(queued_with("every", 7_000), 0.0);
    assert_eq!(queued_with("every_total", 3), 3_333.0);
    assert_eq!(queued_with("every", 3), 2.0 * 1_666.0);
}

/// The error `body` gives, as text (it must not load).
fn error(body: &str) -> String {
    let text = scenario(2, 4, 100, body);
    match load_str(&super::root().join("scenarios/x.toml"), &text, &LoadOptions::default()) {
        Ok(_) => panic!("loaded: {body}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn keys_the_new_objects_do_not_read_are_located_errors() {
    let cases = [
        (
            "[locks.m]\nkind = \"mutex\"\n[[path]]\nlock = \"m\"\nmode = \"read\"\n[[path]]\nunlock = \"m\"\n",
            "path[0].mode",
        ),
        (
            "[locks.r]\nkind = \"rwsem\"\n[[path]]\nlock = \"r\"\n[[path]]\nunlock = \"r\"\nmode = \"read\"\n",
            "path[1].mode",
        ),
        (
            "[locks.m]\nkind = \"mutex\"\nspin = true\n[[path]]\nlock = \"m\"\n[[path]]\nunlock = \"m\"\n",
            "locks.m.spin",
        ),
        (
            "[counters.c]\nkind = \"percpu\"\n[[path]]\ncounter = \"c\"\nop = \"get\"\n",
            "path[0].op",
        ),
        (
            "[counters.c]\nkind = \"percpu-ref\"\n[[path]]\ncounter = \"c\"\nop = \"inc\"\n",
            "path[0].op",
        ),
        (
            "[counters.c]\nkind = \"percpu-ref\"\nbatch = 8\n[[path]]\ncounter = \"c\"\nop = \"get\"\n",
            "counters.c.batch",
        ),
        (
            "[counters.c]\nkind = \"atomic\"\nmode = \"atomic\"\n[[path]]\ncounter = \"c\"\nop = \"inc\"\n",
            "counters.c.mode",
        ),
        (
            "[workqueues.w]\nkind = \"bound\"\nmax_active = 2\n[[workqueues.w.path]]\nwork = { dist = \"fixed\", mean_ns = 1.0 }\n[[path]]\nqueue = \"w\"\n",
            "workqueues.w.max_active",
        ),
        (
            "[workqueues.w]\nkind = \"unbound\"\n[[workqueues.w.path]]\nwork = { dist = \"fixed\", mean_ns = 1.0 }\nevery = 2\n[[path]]\nqueue = \"w\"\n",
            "workqueues.w.path[0].every",
        ),
        (
            "[locks.m]\nkind = \"queued\"\n[workqueues.w]\nkind = \"unbound\"\n[[workqueues.w.path]]\nlock = \"m\"\n[[path]]\nqueue = \"w\"\n",
            "workqueues.w.path[0].lock",
        ),
        (
            "[workqueues.w]\nkind = \"unbound\"\n[[workqueues.w.path]]\nwork = { dist = \"fixed\", mean_ns = 1.0 }\n[[path]]\nwork = { dist = \"fixed\", mean_ns = 1.0 }\n",
            "workqueues.w",
        ),
        ("[workqueues.w]\nkind = \"unbound\"\n[[path]]\nqueue = \"w\"\n", "workqueues.w.path"),
        ("[[path]]\nqueue = \"nope\"\n", "path[0].queue"),
        (
            "[workqueues.w]\nkind = \"unbound\"\n[[workqueues.w.path]]\nwork = { dist = \"fixed\", mean_ns = 1.0 }\n[[path]]\nqueue = \"w\"\nevery_total = 0\n",
            "path[0].every_total",
        ),
        (
            "[workqueues.w]\nkind = \"unbound\"\n[[workqueues.w.path]]\nwork = { dist = \"fixed\", mean_ns = 1.0 }\n[[path]]\nqueue = \"w\"\nevery_total = 4\nevery = 2\n",
            "path[0].every_total",
        ),
        (
            "[[path]]\nwork = { dist = \"fixed\", mean_ns = 1.0 }\nevery_total = 4\n",
            "path[0].every_total",
        ),
        (
            "[workqueues.w]\nkind = \"unbound\"\n[[workqueues.w.path]]\nwork = { dist = \"fixed\", mean_ns = 1.0 }\n[[path]]\nqueue = \"w\"\nevery_total = 4\n[[path]]\nqueue = \"w\"\n",
            "path[0].every_total",
        ),
        (
            "[workqueues.w]\nkind = \"unbound\"\n[[workqueues.w.path]]\nwork = { dist = \"fixed\", mean_ns = 1.0 }\nevery_total = 2\n[[path]]\nqueue = \"w\"\n",
            "workqueues.w.path[0].every_total",
        ),
    ];
    for (body, field) in cases {
        let e = error(body);
        // The field as the error's location (`FILE:LINE:COL: FIELD: ...`),
        // not as part of a longer one.
        assert!(e.contains(&format!(": {field}: ")), "expected an error at {field}, got: {e}");
    }
}

#[test]
fn cmpxchg_retries_once_per_known_overlap() {
    // One thread on a 2-CPU ideal machine queues an item, then runs a
    // cmpxchg loop on `head` with 1000 ns between its load and its
    // cmpxchg; the worker on the idle CPU waits 100 ns and then makes an
    // atomic add on `head`, inside that window. So each loop fails once
    // (1 retry), computes again for 1000 ns and succeeds; with the 1000 ns
    // of work after it, an operation takes 3000 ns.
    let body = r#"
[lines.head]
[workqueues.w]
kind = "unbound"
[[workqueues.w.path]]
work = { dist = "fixed", mean_ns = 100.0 }
[[workqueues.w.path]]
atomic = "head"
[[path]]
queue = "w"
[[path]]
cmpxchg = "head"
window_ns = 1000.0
[[path]]
work = { dist = "fixed", mean_ns = 1000.0 }
"#;
    let m = run(&scenario(1, 2, 1_000, body));
    assert_eq!(m["head.cmpxchg_retries"], 1_000.0);
    // Per operation: the worker's add, the failed and the good cmpxchg.
    assert_eq!(m["head.writes"], 3_000.0);
    assert!((m["ops_per_sec"] * 3000e-9 - 1.0).abs() < 1e-9, "{}", m["ops_per_sec"]);
}

#[test]
fn cmpxchg_retries_against_poisson_writes_follow_the_geometric_law() {
    // The thread adds to `head` after Exp(m) of work, so its writes are a
    // Poisson stream of rate 1/m (free accesses on the ideal machine); each
    // add queues an item whose worker (the idle CPU's, the only one) runs a
    // cmpxchg loop with a window w between load and cmpxchg. A window fails
    // if a write falls in it, with probability 1 - exp(-w/m), whatever the
    // past (Poisson), so the retries per loop are geometric with mean
    // exp(w/m) - 1 = exp(0.1) - 1 = 0.10517 for w = 100, m = 1000 ns.
    let body = r#"
[lines.head]
[workqueues.w]
kind = "unbound"
[[workqueues.w.path]]
cmpxchg = "head"
window_ns = 100.0
[[path]]
work = { dist = "exp", mean_ns = 1000.0 }
[[path]]
atomic = "head"
[[path]]
queue = "w"
"#;
    let m = run(&scenario(1, 2, 1_000_000, body));
    let per_loop = m["head.cmpxchg_retries"] / m["w.items"];
    let exact = 0.1f64.exp() - 1.0;
    assert!(
        (per_loop / exact - 1.0).abs() < 0.02,
        "{per_loop} retries per loop, expected {exact}"
    );
}
