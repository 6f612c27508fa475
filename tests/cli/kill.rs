//! Outputs are all-or-nothing: a run killed (SIGKILL) at any instant leaves
//! `OUT/<name>` holding exactly the complete old set or the complete new
//! one, and the next run removes what the killed one left behind.
//!
//! The commit is slowed down by the `FSMETA_TEST_SLOW_COMMIT_MS` test hook
//! so that the kills, spread from the start of a run to past its end, land
//! before, during and after the write; the test prints how many landed in
//! each phase (`cargo test --release --test cli kill -- --nocapture`).

use super::{temp_dir, write};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NAME: &str = "kill";
/// Kills spread evenly from 0 to 1.1 times a full (slowed) run.
const KILLS: u32 = 30;
/// Extra kills during start-up and simulation, which are short.
const EARLY_MS: [u64; 4] = [1, 2, 3, 5];
const SLOW_COMMIT_MS: &str = "25";
/// When no kill of the spread hit the write: rounds of finer kills, and
/// the steps each round divides its interval into.
const REFINE_ROUNDS: u32 = 4;
const REFINE_STEPS: u32 = 12;
/// The phases [`phase`] names that the refinement looks for.
const WRITING: &str = "writing the new set";
const BEFORE: &str = "before writing (start-up, simulation)";
/// A pid no process can have (Linux caps pids at 2^22).
const DEAD_PID: u32 = 4_000_000_000;

const SCENARIO: &str = r#"[scenario]
name = "kill"
seed = 1
replications = 2
ops = 2000

[workload]
kind = "path"
threads = 1

[locks.l]
kind = "queued"

[[path]]
work = { dist = "exp", mean_ns = 500.0 }
[[path]]
lock = "l"
[[path]]
work = { dist = "exp", mean_ns = 100.0 }
[[path]]
unlock = "l"

[sweep]
"workload.threads" = [1, 2]

[[plot]]
x = "workload.threads"
y = "ops_per_sec"

[[plot]]
x = "workload.threads"
y = "l.wait_mean_ns"
"#;

/// Every file of a set, by name.
type Set = BTreeMap<String, Vec<u8>>;

/// Starts `fsmeta run` on `scenario` into `out` with `seed`.
fn start(scenario: &Path, out: &Path, seed: u64, slow: bool) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fsmeta"));
    cmd.args(["run", "--silent", "--jobs", "1", "--seed", &seed.to_string()])
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if slow {
        cmd.env("FSMETA_TEST_SLOW_COMMIT_MS", SLOW_COMMIT_MS);
    }
    cmd.spawn().expect("fsmeta starts")
}

/// Runs to the end; returns how long it took.
fn run(scenario: &Path, out: &Path, seed: u64, slow: bool) -> Duration {
    let t = Instant::now();
    let status = start(scenario, out, seed, slow).wait().expect("fsmeta runs");
    assert!(status.success(), "fsmeta run --seed {seed}: {status}");
    t.elapsed()
}

/// The set `out/kill` holds now.
fn read_set(out: &Path) -> Set {
    let dir = out.join(NAME);
    let Ok(items) = std::fs::read_dir(&dir) else {
        return Set::new();
    };
    items
        .map(|e| {
            let p = e.expect("dir entry").path();
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("output readable"))
        })
        .collect()
}

/// The file names in `out` other than `kill` itself.
fn leftovers(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(out)
        .expect("out readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n != NAME)
        .collect();
    v.sort();
    v
}

/// The file name `out/kill` links to.
fn target(out: &Path) -> String {
    let t = std::fs::read_link(out.join(NAME)).expect("out/kill is a link");
    t.to_string_lossy().into_owned()
}

/// Where the run of process `pid` was when it was killed, from what it left.
fn phase(out: &Path, pid: u32, old_target: &str) -> &'static str {
    let mine = |kind: &str| leftovers(out).into_iter().any(|n| n.starts_with(&format!(".{NAME}.{kind}-{pid}-")));
    let linked = target(out).starts_with(&format!(".{NAME}.v-{pid}-"));
    match (mine("tmp"), mine("v"), linked) {
        (true, _, _) => WRITING,
        (false, true, false) => "new set complete, before the swap",
        (false, _, true) if leftovers(out).iter().any(|n| n == old_target) => "swapped, old set not yet removed",
        (false, _, true) => "swapped and cleaned up",
        (false, false, false) => BEFORE,
    }
}

/// The scenario file and the reference sets of seeds 1 and 2.
fn references(dir: &Path) -> (PathBuf, [Set; 2]) {
    let scenario = write(dir, "kill.toml", SCENARIO);
    let sets = [1u64, 2].map(|seed| {
        let out = dir.join(format!("ref-{seed}"));
        run(&scenario, &out, seed, false);
        read_set(&out)
    });
    assert_eq!(sets[0].keys().collect::<Vec<_>>(), sets[1].keys().collect::<Vec<_>>());
    assert_eq!(sets[0].len(), 11, "{:?}", sets[0].keys());
    assert_ne!(sets[0]["runs.csv"], sets[1]["runs.csv"], "seeds 1 and 2 must differ");
    (scenario, sets)
}

/// Kills a run into `out` after `delay`; checks the set is the old or the new
/// one; returns the phase the kill landed in and the set now in place.
fn kill_once(scenario: &Path, out: &Path, sets: &[Set; 2], now: usize, delay: Duration) -> (&'static str, usize) {
    let old_target = target(out);
    let mut child = start(scenario, out, [2, 1][now], true);
    std::thread::sleep(delay);
    let exited = child.try_wait().expect("try_wait").is_some();
    child.kill().expect("kill"); // SIGKILL; harmless once it has exited
    child.wait().expect("wait");
    let found = read_set(out);
    let after = sets.iter().position(|s| *s == found);
    let files: Vec<&String> = found.keys().collect();
    let after = after.unwrap_or_else(|| panic!("killed after {delay:?}: a mixed or partial set: {files:?}"));
    let phase = if exited {
        "after the run ended"
    } else {
        phase(out, child.id(), &old_target)
    };
    (phase, after)
}

#[test]
fn a_killed_run_leaves_the_old_set_or_the_new_set() {
    let dir = temp_dir("kill");
    let (scenario, sets) = references(&dir);
    let out = dir.join("out");
    run(&scenario, &out, 1, false);
    run(&scenario, &out, 1, false);
    assert!(read_set(&out) == sets[0], "two runs of seed 1 give its set");
    let full = run(&scenario, &out, 2, true);
    assert!(read_set(&out) == sets[1]);
    let mut now = 1;
    let mut phases: BTreeMap<&str, u32> = BTreeMap::new();
    let mut landed: Vec<(Duration, &str)> = Vec::new();
    let spread = (0..KILLS).map(|i| full.mul_f64(1.1 * f64::from(i) / f64::from(KILLS - 1)));
    for delay in EARLY_MS.map(Duration::from_millis).into_iter().chain(spread) {
        let (phase, after) = kill_once(&scenario, &out, &sets, now, delay);
        *phases.entry(phase).or_default() += 1;
        landed.push((delay, phase));
        now = after;
    }
    // On a loaded machine one timed run says little about the next: when
    // no kill hit the write, more kills in finer steps between the last
    // delay that landed before it and the first that landed after it.
    for _ in 0..REFINE_ROUNDS {
        if phases.contains_key(WRITING) {
            break;
        }
        let before = landed
            .iter()
            .filter(|(_, p)| *p == BEFORE)
            .map(|(d, _)| *d)
            .max()
            .unwrap_or_default();
        let after = landed
            .iter()
            .filter(|(d, p)| *p != BEFORE && *d > before)
            .map(|(d, _)| *d)
            .min()
            .unwrap_or(before + full);
        for k in 1..REFINE_STEPS {
            let delay = before + (after - before).mul_f64(f64::from(k) / f64::from(REFINE_STEPS));
            let (phase, next) = kill_once(&scenario, &out, &sets, now, delay);
            *phases.entry(phase).or_default() += 1;
            landed.push((delay, phase));
            now = next;
        }
    }
    println!("kill test: a full slowed run takes {full:?}; kills per phase: {phases:#?}");
    assert!(phases.get(WRITING).is_some_and(|&n| n > 0), "no kill hit the write: {phases:?}");
    let live = out.join(format!(".{NAME}.tmp-{}-0", std::process::id()));
    let dead = out.join(format!(".{NAME}.tmp-{DEAD_PID}-0"));
    std::fs::create_dir_all(&live).expect("mkdir");
    std::fs::create_dir_all(&dead).expect("mkdir");
    // A run killed inside the --out write check leaves its empty probe.
    let probe = out.join(format!(".fsmeta-write-check-{DEAD_PID}"));
    std::fs::create_dir_all(&probe).expect("mkdir");
    run(&scenario, &out, 1, false);
    assert!(read_set(&out) == sets[0]);
    assert!(live.is_dir(), "a live process's folder must be kept");
    std::fs::remove_dir(&live).expect("rmdir");
    assert_eq!(leftovers(&out), vec![target(&out)], "everything dead runs left is removed");
}

#[test]
fn a_folder_from_an_older_version_is_replaced_by_a_link() {
    let dir = temp_dir("kill-migrate");
    let scenario = write(&dir, "kill.toml", SCENARIO);
    let out = dir.join("out");
    let legacy = out.join(NAME);
    std::fs::create_dir_all(&legacy).expect("mkdir");
    std::fs::write(legacy.join("runs.csv"), "old\n").expect("write");
    run(&scenario, &out, 1, false);
    assert!(std::fs::symlink_metadata(&legacy).expect("exists").file_type().is_symlink());
    assert_eq!(leftovers(&out), vec![target(&out)]);
    assert_eq!(read_set(&out).len(), 11);
}
