//! How outputs name a point of the grid: by the labels of its axes
//! (`labels = [...]`, or the default labels of list and table values,
//! see [`super::labels`]), else by its swept values. Names are for
//! people; what a point *is* (its random numbers, what `at = {...}`
//! selects, how `compare` pairs two scenarios) stays its values.

use super::Scenario;
use super::sweep::{short_value, value_text};
use toml::Value;

/// The suffix of a label column in `runs.csv`, `summary.csv` and
/// `summary.json` (`path[4].every:label`).
pub const LABEL_COLUMN_SUFFIX: &str = ":label";

impl Scenario {
    /// The axis of swept parameter `k` (in [`Scenario::sweep`] order) and
    /// its place among the axis's parameters.
    pub fn axis_of(&self, k: usize) -> Option<(usize, usize)> {
        let mut i = k;
        for (a, axis) in self.axes.iter().enumerate() {
            if i < axis.params.len() {
                return Some((a, i));
            }
            i -= axis.params.len();
        }
        None
    }

    /// The label of swept parameter `k` at step `step` (an index into its
    /// list), when the value does not name itself.
    pub fn label(&self, k: usize, step: usize) -> Option<&str> {
        let (a, i) = self.axis_of(k)?;
        self.axes[a].label(i, step)
    }

    /// Whether the values of swept parameter `k` are shown by labels.
    pub fn is_labelled(&self, k: usize) -> bool {
        self.label(k, 0).is_some()
    }

    /// Value `v` of swept parameter `k` as plots show it: its label, else
    /// the short value ([`short_value`]).
    pub fn shown(&self, k: usize, v: &Value) -> String {
        let step = self.sweep.get(k).and_then(|(_, vs)| vs.iter().position(|w| w == v));
        match step.and_then(|s| self.label(k, s)) {
            Some(l) => l.to_string(),
            None => short_value(v),
        }
    }

    /// Swept parameter `k` at `point` as plots show it (as [`Self::shown`],
    /// without searching the list).
    pub fn shown_at(&self, k: usize, point: usize) -> String {
        let Some(p) = self.points.get(point) else { return String::new() };
        match p.steps.get(k).and_then(|&step| self.label(k, step)) {
            Some(l) => l.to_string(),
            None => p.values.get(k).map(short_value).unwrap_or_default(),
        }
    }

    /// The coordinates of `point` as people read them, one per axis
    /// step: `path=label` for a labelled list, the label alone for a
    /// labelled `[[sweep.zip]]` group (it names the whole step), else
    /// `path=value` per parameter. `short` gives the last component of
    /// each path and file stems for file paths.
    pub fn point_names(&self, point: usize, short: bool) -> Vec<String> {
        let Some(p) = self.points.get(point) else { return Vec::new() };
        let name = |path: &str| -> String {
            if short {
                path.rsplit('.').next().unwrap_or(path).to_string()
            } else {
                path.to_string()
            }
        };
        let mut out = Vec::new();
        let mut k = 0;
        for axis in &self.axes {
            let step = p.steps.get(k).copied().unwrap_or(0);
            match (&axis.labels, axis.params.as_slice()) {
                (Some(l), [(path, _, _)]) => out.push(format!("{}={}", name(path), l[step])),
                (Some(l), _) => out.push(l[step].clone()),
                (None, params) => {
                    for (i, (path, _, values)) in params.iter().enumerate() {
                        let text = match axis.label(i, step) {
                            Some(l) => l.to_string(),
                            None if short => short_value(&values[step]),
                            None => value_text(&values[step]),
                        };
                        out.push(format!("{}={text}", name(path)));
                    }
                }
            }
            k += axis.params.len();
        }
        out
    }

    /// The point columns of the CSV files and `summary.json`: every swept
    /// path, a labelled one followed by its label column (`PATH:label`);
    /// a labelled `[[sweep.zip]]` group has one label column, after its
    /// values, named by its first path.
    pub fn point_columns(&self) -> Vec<String> {
        let mut out = Vec::new();
        for axis in &self.axes {
            for (i, (path, _, _)) in axis.params.iter().enumerate() {
                out.push(path.clone());
                if axis.labels.is_none() && axis.defaults.get(i).is_some_and(Option::is_some) {
                    out.push(format!("{path}{LABEL_COLUMN_SUFFIX}"));
                }
            }
            if let (Some(_), Some((first, _, _))) = (&axis.labels, axis.params.first()) {
                out.push(format!("{first}{LABEL_COLUMN_SUFFIX}"));
            }
        }
        out
    }

    /// The cells of `point` under [`Self::point_columns`]: the full
    /// values ([`value_text`]) and the labels.
    pub fn point_cells(&self, point: usize) -> Vec<String> {
        let Some(p) = self.points.get(point) else { return Vec::new() };
        let mut out = Vec::new();
        let mut k = 0;
        for axis in &self.axes {
            let step = p.steps.get(k).copied().unwrap_or(0);
            for (i, (_, _, values)) in axis.params.iter().enumerate() {
                out.push(value_text(&values[step]));
                if axis.labels.is_none()
                    && let Some(l) = axis.label(i, step)
                {
                    out.push(l.to_string());
                }
            }
            if let Some(l) = &axis.labels {
                out.push(l[step].clone());
            }
            k += axis.params.len();
        }
        out
    }
}
