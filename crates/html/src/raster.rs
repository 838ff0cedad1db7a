//! Charts as PNG for documents that take no SVG (word processors, slides,
//! tickets). The SVG plotters drew is rendered by resvg, so the PNG is the
//! same chart pixel for pixel; its text needs a font, found among the
//! system's (DejaVu Sans, or any sans-serif face there is).

use resvg::{tiny_skia, usvg};

/// Rendered at twice the SVG's size: sharp when a document scales it.
const SCALE: f32 = 2.0;

/// The fonts for every chart of a report, loaded once.
pub struct Raster {
    options: usvg::Options<'static>,
}

impl Raster {
    /// The system's fonts; an error naming the package to install when
    /// there are none (a PNG without its axis labels would mislead).
    pub fn new() -> Result<Raster, String> {
        let mut options = usvg::Options::default();
        let db = options.fontdb_mut();
        db.load_system_fonts();
        if db.is_empty() {
            return Err("no fonts found for PNG charts' text: install a font (Debian: apt-get install fonts-dejavu-core)".into());
        }
        // plotters names "sans-serif"; fontdb's default for it is Arial,
        // which Debian does not ship.
        let has = |f: &str| db.faces().any(|face| face.families.iter().any(|(name, _)| name == f));
        let sans = ["DejaVu Sans", "Liberation Sans", "Arial"]
            .into_iter()
            .find(|f| has(f))
            .map(String::from)
            .or_else(|| db.faces().find_map(|f| f.families.first()).map(|f| f.0.clone()));
        if let Some(f) = sans {
            db.set_sans_serif_family(f);
        }
        Ok(Raster { options })
    }

    /// One chart's SVG as PNG bytes.
    pub fn png(&self, svg: &str) -> Result<Vec<u8>, String> {
        let tree = usvg::Tree::from_str(svg, &self.options).map_err(|e| format!("cannot read the chart's SVG: {e}"))?;
        let size = tree.size().to_int_size().scale_by(SCALE).ok_or("the chart has no size")?;
        let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("the chart has no size")?;
        pixmap.fill(tiny_skia::Color::WHITE);
        resvg::render(&tree, tiny_skia::Transform::from_scale(SCALE, SCALE), &mut pixmap.as_mut());
        pixmap.encode_png().map_err(|e| format!("cannot encode the PNG: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_becomes_a_png_of_twice_its_size_with_its_text_drawn() {
        let r = match Raster::new() {
            Ok(r) => r,
            Err(e) if std::env::var_os("CI").is_none() => return eprintln!("SKIP: {e}"),
            Err(e) => panic!("{e}: scripts/install-deps.sh installs fonts-dejavu-core"),
        };
        let with_text = r#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><text x="5" y="25" font-family="sans-serif" font-size="20">IOPS</text></svg>"#;
        let without = r#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"></svg>"#;
        let (a, b) = (r.png(with_text).unwrap(), r.png(without).unwrap());
        assert_eq!(&a[..8], b"\x89PNG\r\n\x1a\n");
        let dims = |p: &[u8]| (u32::from_be_bytes(p[16..20].try_into().unwrap()), u32::from_be_bytes(p[20..24].try_into().unwrap()));
        assert_eq!(dims(&a), (200, 80));
        let dark = |p: &[u8]| tiny_skia::Pixmap::decode_png(p).unwrap().pixels().iter().filter(|c| c.red() < 128).count();
        assert!(dark(&a) > 50, "the text was drawn: {} dark pixels", dark(&a));
        assert_eq!(dark(&b), 0);
        assert!(r.png("<svg").is_err());
    }
}
