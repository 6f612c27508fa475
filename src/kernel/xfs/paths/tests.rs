use super::*;

#[test]
fn print_prices() {
    let p = CodeParams { dir_entries: 20_000 };
    for c in CODE_PATHS {
        let t = (c.count)(&p);
        let ns = t.cold_lines * 147.49 + t.atomics * 2.03 + t.hits * 1.35 * 2.913 + t.iterated_hits * 1.35;
        println!("{} {:?} {:.0} ns", c.name, t, ns);
    }
    for n in [0u64, 100, 130, 450, 520, 20000] {
        println!("{n} {:?}", dir2::shape(n));
    }
}
