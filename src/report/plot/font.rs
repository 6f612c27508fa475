//! The one font every plot uses: DejaVu Sans, shipped inside the `dejavu`
//! crate and registered with plotters' `ab_glyph` text renderer once per
//! process, so text renders without fontconfig or any system font.

use std::sync::OnceLock;

/// Family name under which DejaVu Sans is registered and which every text
/// style of a plot names (it is also the `font-family` written into SVG).
pub(crate) const FAMILY: &str = "DejaVu Sans";

/// Registers DejaVu Sans (regular and bold) with plotters the first time it
/// is called; later calls return the first outcome. Returns `false` when the
/// font bytes could not be parsed, which the caller turns into an error.
pub(crate) fn ensure_registered() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        use plotters::style::{FontStyle, register_font};
        let regular = register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular()).is_ok();
        let bold = register_font(FAMILY, FontStyle::Bold, dejavu::sans::bold()).is_ok();
        regular && bold
    })
}
