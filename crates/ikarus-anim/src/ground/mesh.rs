//! A triangle mesh as the ground (a level or terrain read from glTF/GLB): the highest
//! triangle straight above or below a point, found through a grid of cells over the mesh's
//! ground plan.

use glam::DVec3;

use super::terrain::Ground;

/// The most cells a side of a [`TriangleMesh`]'s grid.
const MAX_CELLS: usize = 256;
/// How far outside a triangle's plan (in barycentric units) a point still counts as on it:
/// points on a shared edge find one of the two triangles.
const EDGE: f64 = 1e-12;

/// Triangles to stand on: the ground at `(x, z)` is the highest triangle whose plan (its
/// projection on the XZ plane) holds the point; its normal, turned up. Triangles standing
/// vertical (walls) are left out; outside every triangle there is no ground (`None`: the foot
/// keeps the animation).
#[derive(Clone, Debug, PartialEq)]
pub struct TriangleMesh {
    triangles: Vec<[DVec3; 3]>,
    /// `[x0, z0]` of the grid's first cell.
    origin: [f64; 2],
    cell: f64,
    columns: usize,
    rows: usize,
    /// Per cell (row-major), the triangles whose plan's bounding box meets it.
    cells: Vec<Vec<u32>>,
}

/// Why triangles are no ground.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TriangleMeshError {
    /// A vertex is not a finite point.
    #[error("triangle {0} has a vertex that is not a finite point")]
    NotFinite(usize),
    /// No triangle faces up or down (none, or all walls).
    #[error("no triangle to stand on: the mesh has none that is not vertical")]
    Empty,
    /// More triangles than the grid can index.
    #[error("{0} triangles: more than 2³² cannot be indexed")]
    TooMany(usize),
}

impl TriangleMesh {
    /// The ground of `triangles` (model space of the character, +Y up): checked to be finite,
    /// walls dropped, a grid of at most 256 × 256 cells laid over the rest, each cell about
    /// a mean triangle's size.
    ///
    /// # Errors
    /// [`TriangleMeshError`]: a vertex not finite; no triangle that is not vertical.
    pub fn new(triangles: Vec<[DVec3; 3]>) -> Result<Self, TriangleMeshError> {
        if let Some(k) = triangles
            .iter()
            .position(|t| !t.iter().all(|v| v.is_finite()))
        {
            return Err(TriangleMeshError::NotFinite(k));
        }
        let triangles: Vec<[DVec3; 3]> = triangles
            .into_iter()
            .filter(|[a, b, c]| (*b - *a).cross(*c - *a).y.abs() > 1e-12)
            .collect();
        if triangles.is_empty() {
            return Err(TriangleMeshError::Empty);
        }
        u32::try_from(triangles.len()).map_err(|_| TriangleMeshError::TooMany(triangles.len()))?;
        let plan = |t: &[DVec3; 3]| {
            let lo = t[0].min(t[1]).min(t[2]);
            let hi = t[0].max(t[1]).max(t[2]);
            ([lo.x, lo.z], [hi.x, hi.z])
        };
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        let mut sizes = 0.0;
        for t in &triangles {
            let (a, b) = plan(t);
            lo = [lo[0].min(a[0]), lo[1].min(a[1])];
            hi = [hi[0].max(b[0]), hi[1].max(b[1])];
            sizes += (b[0] - a[0]).max(b[1] - a[1]);
        }
        #[allow(clippy::cast_precision_loss)] // a mean
        let mean = sizes / triangles.len() as f64;
        let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(1e-9);
        #[allow(clippy::cast_precision_loss)]
        let cell = mean.max(extent / MAX_CELLS as f64).max(1e-9);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // ≤ MAX_CELLS
        let count = |span: f64| ((span / cell).floor() as usize + 1).min(MAX_CELLS);
        let (columns, rows) = (count(hi[0] - lo[0]), count(hi[1] - lo[1]));
        let mut cells = vec![Vec::new(); columns * rows];
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // clamped
        let index = |v: f64, origin: f64, n: usize| {
            (((v - origin) / cell).floor().max(0.0) as usize).min(n - 1)
        };
        for (k, t) in triangles.iter().enumerate() {
            let (a, b) = plan(t);
            for i in index(a[1], lo[1], rows)..=index(b[1], lo[1], rows) {
                for j in index(a[0], lo[0], columns)..=index(b[0], lo[0], columns) {
                    #[allow(clippy::cast_possible_truncation)] // checked above
                    cells[i * columns + j].push(k as u32);
                }
            }
        }
        Ok(Self {
            triangles,
            origin: lo,
            cell,
            columns,
            rows,
            cells,
        })
    }

    /// The triangles kept (walls dropped).
    #[must_use]
    pub fn triangles(&self) -> &[[DVec3; 3]] {
        &self.triangles
    }
}

/// Where the vertical line through `(x, z)` meets triangle `t`: its height and the
/// triangle's unit normal turned up, if the point is inside its plan (edges included).
pub(crate) fn vertical_hit(t: &[DVec3; 3], x: f64, z: f64) -> Option<(f64, DVec3)> {
    let [a, b, c] = *t;
    // Barycentric coordinates in the plan.
    let d = (b.x - a.x) * (c.z - a.z) - (c.x - a.x) * (b.z - a.z);
    if d.abs() <= f64::EPSILON * (b - a).length() * (c - a).length() {
        return None;
    }
    let u = ((x - a.x) * (c.z - a.z) - (c.x - a.x) * (z - a.z)) / d;
    let v = ((b.x - a.x) * (z - a.z) - (x - a.x) * (b.z - a.z)) / d;
    if u < -EDGE || v < -EDGE || u + v > 1.0 + EDGE {
        return None;
    }
    let height = a.y + u * (b.y - a.y) + v * (c.y - a.y);
    let n = (b - a).cross(c - a).try_normalize()?;
    let n = if n.y < 0.0 { -n } else { n };
    height.is_finite().then_some((height, n))
}

impl Ground for TriangleMesh {
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)> {
        let (u, v) = (
            (x - self.origin[0]) / self.cell,
            (z - self.origin[1]) / self.cell,
        );
        #[allow(clippy::cast_precision_loss)]
        if !(u >= 0.0 && v >= 0.0 && u < self.columns as f64 + 1.0 && v < self.rows as f64 + 1.0) {
            return None;
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // in range
        let (j, i) = (
            (u as usize).min(self.columns - 1),
            (v as usize).min(self.rows - 1),
        );
        self.cells[i * self.columns + j]
            .iter()
            .filter_map(|&k| vertical_hit(&self.triangles[k as usize], x, z))
            .max_by(|p, q| p.0.total_cmp(&q.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every triangle tried (no grid): the independent answer.
    fn brute(triangles: &[[DVec3; 3]], x: f64, z: f64) -> Option<(f64, DVec3)> {
        triangles
            .iter()
            .filter_map(|t| vertical_hit(t, x, z))
            .max_by(|p, q| p.0.total_cmp(&q.0))
    }

    #[test]
    fn a_stepped_mesh_gives_the_highest_triangle_as_every_triangle_does() {
        // Two quads (a floor, and a raised, tilted slab over half of it), a wall left out.
        let quad = |y0: f64, y1: f64, x0: f64, x1: f64| {
            let (a, b, c, d) = (
                DVec3::new(x0, y0, 0.0),
                DVec3::new(x1, y1, 0.0),
                DVec3::new(x1, y1, 2.0),
                DVec3::new(x0, y0, 2.0),
            );
            [[a, c, b], [a, d, c]]
        };
        let mut triangles: Vec<[DVec3; 3]> = quad(0.0, 0.0, 0.0, 4.0).to_vec();
        triangles.extend(quad(0.3, 0.5, 2.0, 4.0));
        triangles.push([
            DVec3::ZERO,
            DVec3::new(0.0, 1.0, 0.0),
            DVec3::new(0.0, 0.0, 1.0),
        ]);
        let mesh = TriangleMesh::new(triangles.clone()).unwrap();
        assert_eq!(mesh.triangles().len(), 4, "the wall is dropped");
        let (h, n) = mesh.sample(1.0, 1.0).unwrap();
        assert!(h.abs() < 1e-12 && (n - DVec3::Y).length() < 1e-12);
        let (h, n) = mesh.sample(3.0, 0.5).unwrap();
        assert!((h - 0.4).abs() < 1e-12, "{h}");
        let expected = DVec3::new(-0.2, 2.0, 0.0).normalize();
        assert!((n - expected).length() < 1e-12, "{n}");
        assert!(mesh.sample(5.0, 1.0).is_none() && mesh.sample(1.0, -0.1).is_none());
        // Against every triangle, over a lattice crossing every cell.
        for i in -5..=45 {
            for k in -5..=25 {
                let (x, z) = (f64::from(i) * 0.1, f64::from(k) * 0.1);
                assert_eq!(mesh.sample(x, z), brute(&triangles, x, z), "({x}, {z})");
            }
        }
        assert_eq!(
            TriangleMesh::new(vec![[DVec3::NAN; 3]]),
            Err(TriangleMeshError::NotFinite(0))
        );
        assert_eq!(TriangleMesh::new(Vec::new()), Err(TriangleMeshError::Empty));
    }
}
