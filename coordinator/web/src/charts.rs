//! Charts drawn by plotters: lines against games or iterations, and bars
//! with 95 % intervals. A line chart draws onto any plotters backend: the
//! web view's SVG and `report --plot`'s stacked SVG or PNG ([`panels`]).
//! Text uses DejaVu Sans embedded in the binary (the `dejavu` crate), so a
//! PNG needs no system font.
//!
//! Every series is drawn as one `<polyline>` with one point per value given
//! (after [`thin`]), so a browser test can count them.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

/// Most points drawn per series; longer histories keep evenly spaced points
/// and always their first and last.
pub const MAX_POINTS: usize = 1000;

/// Chart size in pixels.
const SIZE: (u32, u32) = (640, 280);

/// Series colours, in order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
];

/// One line: a legend name and `(x, y)` points in increasing `x`.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Thin and light (an interval's edges) rather than the main line.
    pub secondary: bool,
}

/// A horizontal reference line (an SPRT bound, zero).
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub name: String,
    pub y: f64,
}

/// A line chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineChart {
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub levels: Vec<Level>,
}

/// A bar with its 95 % interval, in `[0, 1]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub group: String,
    pub name: String,
    pub value: f64,
    pub lower: f64,
    pub upper: f64,
}

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw a chart: {0}")]
pub struct ChartError(String);

fn err(e: impl std::fmt::Display) -> ChartError {
    ChartError(e.to_string())
}

/// At most [`MAX_POINTS`] of `points`: every k-th, and the last.
pub fn thin<T: Copy>(points: &[T]) -> Vec<T> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let step = points.len().div_ceil(MAX_POINTS - 1);
    let mut out: Vec<T> = points.iter().step_by(step).copied().collect();
    if !(points.len() - 1).is_multiple_of(step) {
        out.extend(points.last().copied());
    }
    out
}

/// `[lo, hi]` widened so that it is never empty and has a margin.
fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-9);
    if hi - lo < 1e-9 {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo - pad, hi + pad)
    }
}

fn canvas(svg: &mut String) -> DrawingArea<SVGBackend<'_>, Shift> {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    let _ = root.fill(&WHITE);
    root
}

/// Registers the embedded DejaVu Sans as plotters' `sans-serif` once; every
/// text layout (SVG) and glyph (PNG) is measured and drawn with it.
fn fonts() -> Result<(), ChartError> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
                .map_err(|_| "the embedded DejaVu Sans font does not parse".to_owned())
        })
        .clone()
        .map_err(ChartError)
}

/// An image file's format, from its name's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Svg,
    Png,
}

impl ImageFormat {
    /// `.svg` or `.png` (any case); anything else is refused, naming it.
    pub fn from_path(path: &Path) -> Result<Self, ChartError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(ImageFormat::Svg),
            Some("png") => Ok(ImageFormat::Png),
            _ => Err(ChartError(format!(
                "{} names no image format: give a file ending in .svg or .png",
                path.display()
            ))),
        }
    }
}

/// A titled chart: one panel of a stacked image.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub title: String,
    pub chart: LineChart,
}

/// The panels stacked top to bottom, each [`SIZE`] with its title above,
/// as an SVG document or PNG file bytes.
pub fn panels(panels: &[Panel], format: ImageFormat) -> Result<Vec<u8>, ChartError> {
    fn draw_all<DB: DrawingBackend>(
        root: &DrawingArea<DB, Shift>,
        panels: &[Panel],
    ) -> Result<(), ChartError> {
        root.fill(&WHITE).map_err(err)?;
        for (area, p) in root
            .split_evenly((panels.len().max(1), 1))
            .iter()
            .zip(panels)
        {
            p.chart.draw(area, Some(&p.title))?;
        }
        root.present().map_err(err)
    }
    let (w, h) = (SIZE.0, SIZE.1 * panels.len().max(1) as u32);
    match format {
        ImageFormat::Svg => {
            let mut svg = String::new();
            draw_all(
                &SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(),
                panels,
            )?;
            Ok(svg.into_bytes())
        }
        ImageFormat::Png => {
            let mut rgb = vec![0u8; w as usize * h as usize * 3];
            draw_all(
                &BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area(),
                panels,
            )?;
            let mut out = Vec::new();
            let mut encoder = png::Encoder::new(&mut out, w, h);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder.write_header().map_err(err)?;
            writer.write_image_data(&rgb).map_err(err)?;
            writer.finish().map_err(err)?;
            Ok(out)
        }
    }
}

impl LineChart {
    /// The chart as an SVG document; an empty chart says so.
    pub fn svg(&self) -> Result<String, ChartError> {
        let mut svg = String::new();
        {
            let root = canvas(&mut svg);
            self.draw(&root, None)?;
            root.present().map_err(err)?;
        }
        Ok(svg)
    }

    /// Draws the chart, with `caption` above it if given, onto any plotters
    /// backend's area.
    pub fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        caption: Option<&str>,
    ) -> Result<(), ChartError> {
        fonts()?;
        let series: Vec<Series> = self
            .series
            .iter()
            .map(|s| Series {
                points: thin(&s.points),
                ..s.clone()
            })
            .collect();
        let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
        let (x0, x1) = range(xs);
        let ys = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(self.levels.iter().map(|l| l.y));
        let (y0, y1) = range(ys);
        let mut builder = ChartBuilder::on(root);
        builder
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56);
        if let Some(caption) = caption {
            builder.caption(caption, ("sans-serif", 16));
        }
        let mut chart = builder
            .build_cartesian_2d(x0.max(0.0)..x1, y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        for level in &self.levels {
            let style = RGBColor(120, 120, 120).stroke_width(1);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x0.max(0.0), level.y), (x1, level.y)],
                    style,
                )))
                .map_err(err)?
                .label(level.name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
        }
        let mut colour = 0;
        for s in &series {
            let c = PALETTE[colour % PALETTE.len()];
            let style = if s.secondary {
                c.mix(0.45).stroke_width(1)
            } else {
                colour += 1;
                c.stroke_width(2)
            };
            let drawn = chart
                .draw_series(LineSeries::new(s.points.iter().copied(), style))
                .map_err(err)?;
            if !s.secondary {
                drawn
                    .label(s.name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// Bars with interval whiskers, grouped (e.g. per variant: Red win, draw,
/// Black win), on a `[0, 1]` axis.
pub fn bars(bars: &[Bar], y_label: &str) -> Result<String, ChartError> {
    fonts()?;
    let mut groups: Vec<&str> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for b in bars {
        if !groups.contains(&b.group.as_str()) {
            groups.push(&b.group);
        }
        if !names.contains(&b.name.as_str()) {
            names.push(&b.name);
        }
    }
    let slots = names.len().max(1) as f64 + 1.0;
    let width = groups.len().max(1) as f64;
    let mut svg = String::new();
    {
        let root = canvas(&mut svg);
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..width, 0.0..1.0)
            .map_err(err)?;
        let labels = groups.clone();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(groups.len().max(1) * 2 + 1)
            .x_label_formatter(&|x| {
                let i = x.floor() as usize;
                if (x - x.floor() - 0.5).abs() < 1e-6 {
                    labels.get(i).map(|s| (*s).to_owned()).unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_desc(y_label)
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        for (k, name) in names.iter().enumerate() {
            let c = PALETTE[k % PALETTE.len()];
            let mine: Vec<&Bar> = bars.iter().filter(|b| b.name == *name).collect();
            let rects = mine.iter().map(|b| {
                let g = groups.iter().position(|g| *g == b.group).unwrap_or(0) as f64;
                let left = g + (k as f64 + 0.5) / slots;
                Rectangle::new([(left, 0.0), (left + 1.0 / slots, b.value)], c.filled())
            });
            chart
                .draw_series(rects)
                .map_err(err)?
                .label(*name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
            let whiskers = mine.iter().map(|b| {
                let g = groups.iter().position(|g| *g == b.group).unwrap_or(0) as f64;
                let mid = g + (k as f64 + 1.0) / slots;
                PathElement::new(vec![(mid, b.lower), (mid, b.upper)], BLACK.stroke_width(2))
            });
            chart.draw_series(whiskers).map_err(err)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polylines(svg: &str) -> Vec<usize> {
        svg.split("<polyline")
            .skip(1)
            .map(|p| {
                let start = p.find("points=\"").unwrap() + 8;
                let end = start + p[start..].find('"').unwrap();
                p[start..end].split_whitespace().count()
            })
            .collect()
    }

    #[test]
    fn a_line_has_one_point_per_value() {
        let chart = LineChart {
            x_label: "games".into(),
            y_label: "LLR".into(),
            series: vec![Series {
                name: "LLR".into(),
                points: (0..37)
                    .map(|i| (i as f64 * 16.0, (i as f64).sin()))
                    .collect(),
                secondary: false,
            }],
            levels: vec![
                Level {
                    name: "lower".into(),
                    y: -2.94,
                },
                Level {
                    name: "upper".into(),
                    y: 2.94,
                },
            ],
        };
        let svg = chart.svg().unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(polylines(&svg).contains(&37), "{:?}", polylines(&svg));
        assert!(svg.contains("LLR") && svg.contains("games"));
    }

    fn line(name: &str, n: usize) -> LineChart {
        LineChart {
            x_label: "iterations".into(),
            y_label: name.into(),
            series: vec![Series {
                name: name.into(),
                points: (0..n).map(|i| (i as f64, (i * i) as f64)).collect(),
                secondary: false,
            }],
            levels: vec![Level {
                name: "start".into(),
                y: 0.0,
            }],
        }
    }

    fn stack(sizes: &[usize]) -> Vec<Panel> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| Panel {
                title: format!("panel {i}"),
                chart: line(&format!("p{i}"), n),
            })
            .collect()
    }

    #[test]
    fn a_stacked_svg_keeps_every_point_of_every_panel() {
        let svg =
            String::from_utf8(panels(&stack(&[37, 12, 2500]), ImageFormat::Svg).unwrap()).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("height=\"840\""));
        let lines = polylines(&svg);
        for n in [37, 12, thin(&[0; 2500]).len()] {
            assert!(lines.contains(&n), "{n} points missing from {lines:?}");
        }
        assert!(svg.contains("panel 0") && svg.contains("panel 2"));
    }

    #[test]
    fn a_png_decodes_at_the_stacked_size_with_its_text_drawn() {
        let bytes = panels(&stack(&[20, 30]), ImageFormat::Png).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (SIZE.0, 2 * SIZE.1));
        assert_eq!(info.color_type, png::ColorType::Rgb);
        // The caption band above the second panel's plot holds dark glyph pixels.
        let dark = (SIZE.1 as usize..SIZE.1 as usize + 30)
            .flat_map(|y| (0..SIZE.0 as usize).map(move |x| (y * SIZE.0 as usize + x) * 3))
            .filter(|&i| buf[i] < 128 && buf[i + 1] < 128 && buf[i + 2] < 128)
            .count();
        assert!(dark > 20, "no caption drawn: {dark} dark pixels");
    }

    #[test]
    fn the_format_comes_from_the_extension() {
        assert_eq!(
            ImageFormat::from_path(Path::new("run.SVG")).unwrap(),
            ImageFormat::Svg
        );
        assert_eq!(
            ImageFormat::from_path(Path::new("a/b.png")).unwrap(),
            ImageFormat::Png
        );
        let e = ImageFormat::from_path(Path::new("plot.jpg")).unwrap_err();
        assert!(e.to_string().contains("plot.jpg"), "{e}");
        assert!(ImageFormat::from_path(Path::new("plot")).is_err());
    }

    #[test]
    fn thinning_keeps_the_ends_and_the_cap() {
        let v: Vec<u32> = (0..100_000).collect();
        let t = thin(&v);
        assert!(t.len() <= MAX_POINTS, "{}", t.len());
        assert_eq!((t[0], *t.last().unwrap()), (0, 99_999));
        assert_eq!(thin(&v[..10]), v[..10].to_vec());
    }

    #[test]
    fn bars_draw_a_rectangle_per_value() {
        let b = |group: &str, name: &str, value: f64| Bar {
            group: group.into(),
            name: name.into(),
            value,
            lower: value - 0.05,
            upper: value + 0.05,
        };
        let svg = bars(
            &[
                b("standard", "draw", 0.5),
                b("standard", "red", 0.3),
                b("conv", "draw", 0.4),
            ],
            "rate",
        )
        .unwrap();
        assert!(svg.matches("<rect").count() >= 3, "{svg}");
        assert!(svg.contains("standard"));
    }
}
