//! Service-time distributions for `work` steps: the exponential by the
//! engine's own ziggurat ([`super::exp`]), the others through statrs.

use super::exp::StdExp;
use super::time::SimTimePs;
use rand::distr::Distribution;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{LogNormal, Normal, Uniform};

/// The exponential distribution of durations with a given mean: a standard
/// exponential draw ([`StdExp`]) times the mean in picoseconds, rounded to
/// the picosecond as [`SimTimePs::from_ps_f64`] says.
#[derive(Debug, Clone, Copy)]
pub struct ExpDuration {
    mean_ps: f64,
    std: StdExp,
}

impl ExpDuration {
    /// Mean `mean_ns` nanoseconds; `None` unless it is finite and above 0.
    pub fn from_mean_ns(mean_ns: f64) -> Option<Self> {
        let mean_ps = mean_ns * 1000.0;
        (mean_ps.is_finite() && mean_ps > 0.0).then(|| ExpDuration {
            mean_ps,
            std: StdExp::new(),
        })
    }

    /// One draw (beyond the clock's range: [`SimTimePs::MAX`]).
    #[inline(always)]
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> SimTimePs {
        SimTimePs::from_ps_f64(self.std.sample(rng) * self.mean_ps)
    }
}

/// A distribution of durations, built and checked once; samples are in ns
/// and converted to [`SimTimePs`] by [`SimTimePs::from_ns_f64`].
#[derive(Debug, Clone)]
pub enum Duration {
    /// Always the same duration.
    Fixed(SimTimePs),
    /// Exponential with a given mean.
    Exp(ExpDuration),
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
            Duration::Exp(d) => d.sample(rng),
            Duration::Uniform(d) => SimTimePs::from_ns_f64(d.sample(rng)),
            Duration::Normal(d) => SimTimePs::from_ns_f64(d.sample(rng)),
            Duration::LogNormal(d) => SimTimePs::from_ns_f64(d.sample(rng)),
        }
    }

    /// The mean of a draw, in ns (for a normal clamped at zero, the
    /// unclamped mean or 0, whichever is larger: a lower bound, as the
    /// clamp only raises draws).
    pub fn mean_ns(&self) -> f64 {
        use statrs::statistics::Distribution as _;
        match self {
            Duration::Fixed(t) => t.0 as f64 / 1000.0,
            Duration::Exp(d) => d.mean_ps / 1000.0,
            Duration::Uniform(d) => d.mean().unwrap_or(0.0),
            Duration::Normal(d) => d.mean().unwrap_or(0.0).max(0.0),
            Duration::LogNormal(d) => d.mean().unwrap_or(0.0),
        }
    }

    /// True when every draw is the same value.
    pub fn is_fixed(&self) -> bool {
        matches!(self, Duration::Fixed(_))
    }
}
