use fsmeta::calibrate::chase::sizes;
use fsmeta::calibrate::plateau::plateaus;

/// A latency curve over the chase's sizes: `levels[i].1` ns below
/// `levels[i].0` bytes, with a smooth step (logistic in log2 size, width
/// `w` octaves) to the next level centred just past each size, and a
/// deterministic ripple of +-`noise` (relative).
fn curve(levels: &[(usize, f64)], top: f64, w: f64, noise: f64) -> Vec<(usize, f64)> {
    sizes(256 << 20)
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let x = (s as f64).log2();
            let mut ns = levels[0].1;
            for (k, &(size, _)) in levels.iter().enumerate() {
                let next = levels.get(k + 1).map_or(top, |l| l.1);
                let centre = (size as f64).log2() + 0.5;
                ns += (next - levels[k].1) / (1.0 + (-(x - centre) / w).exp());
            }
            let ripple = if i % 3 == 0 {
                1.0 + noise
            } else if i % 3 == 1 {
                1.0 - noise
            } else {
                1.0
            };
            (s, ns * ripple)
        })
        .collect()
}

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

#[test]
fn four_levels_four_plateaus_knees_near_the_sizes() {
    let levels = [(32 * KIB, 1.3), (MIB, 4.0), (32 * MIB, 14.0)];
    for (w, noise) in [(0.05, 0.0), (0.2, 0.04), (0.3, 0.08)] {
        let p = plateaus(&curve(&levels, 110.0, w, noise));
        assert_eq!(p.len(), 4, "w {w} noise {noise}: {p:?}");
        for (k, &(size, ns)) in levels.iter().enumerate() {
            assert!(
                p[k].knee_bytes <= 2 * size && p[k].knee_bytes >= size / 2,
                "w {w}: knee {k} at {} for {size}",
                p[k].knee_bytes
            );
            assert!((p[k].ns / ns - 1.0).abs() < 0.1, "w {w}: level {k} {} ns for {ns}", p[k].ns);
        }
        assert!((p[3].ns / 110.0 - 1.0).abs() < 0.1, "{p:?}");
        assert_eq!(p[3].knee_bytes, 256 * MIB);
    }
}

#[test]
fn flat_curve_is_one_plateau_and_a_ramp_is_none() {
    let flat: Vec<(usize, f64)> = sizes(64 * MIB).into_iter().map(|s| (s, 2.0)).collect();
    let p = plateaus(&flat);
    assert_eq!(p.len(), 1);
    assert_eq!((p[0].first_bytes, p[0].knee_bytes, p[0].points), (4 * KIB, 64 * MIB, flat.len()));
    // Rising 30% at every size: no two neighbours are flat.
    let ramp: Vec<(usize, f64)> = sizes(64 * MIB)
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s, 1.3f64.powi(i as i32)))
        .collect();
    assert!(plateaus(&ramp).is_empty());
    // A slow drift (10% per size) ends a plateau when it has risen 60%.
    let drift: Vec<(usize, f64)> = sizes(64 * MIB)
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s, 1.1f64.powi(i as i32)))
        .collect();
    let p = plateaus(&drift);
    assert!(p.len() > 1 && p.iter().all(|q| q.points <= 6), "{p:?}");
}
