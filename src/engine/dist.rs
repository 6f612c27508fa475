//! Service-time distributions for `work` steps, sampled through statrs.

use super::time::SimTimePs;
use rand::distr::Distribution;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{Exp, LogNormal, Normal, Uniform};

/// A distribution of durations, built and checked once; samples are in ns
/// and converted to [`SimTimePs`] by [`SimTimePs::from_ns_f64`].
#[derive(Debug, Clone)]
pub enum Duration {
    /// Always the same duration.
    Fixed(SimTimePs),
    /// Exponential with the given rate in 1/ns (mean = 1/rate).
    Exp(Exp),
    /// Uniform between two bounds in ns.
    Uniform(Uniform),
    /// Normal in ns, negative draws clamped to zero.
    Normal(Normal),
    /// Log-normal in ns.
    LogNormal(LogNormal),
}

impl Duration {
    /// Draws one duration. A draw (or a fixed value) beyond the clock's
    /// range is [`SimTimePs::MAX`] (see [`SimTimePs::from_ns_f64`]); the
    /// interpreter turns it into an error.
    #[inline]
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> SimTimePs {
        match self {
            Duration::Fixed(t) => *t,
            Duration::Exp(d) => SimTimePs::from_ns_f64(d.sample(rng)),
            Duration::Uniform(d) => SimTimePs::from_ns_f64(d.sample(rng)),
            Duration::Normal(d) => SimTimePs::from_ns_f64(d.sample(rng)),
            Duration::LogNormal(d) => SimTimePs::from_ns_f64(d.sample(rng)),
        }
    }

    /// True when every draw is the same value.
    pub fn is_fixed(&self) -> bool {
        matches!(self, Duration::Fixed(_))
    }
}
