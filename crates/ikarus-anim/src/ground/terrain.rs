//! What a character stands on: the [`Ground`] trait (height and normal under a point) and its
//! shapes — a [`Plane`], a [`Heightfield`], or any function of the caller's ([`GroundFn`]).

use glam::DVec3;

/// The ground under a point: its height (+Y, metres, model space of the character) and its
/// unit normal at the point straight below or above `(x, z)`. `None` where there is no
/// ground (a plane standing vertical, a function's hole): the foot then keeps the animation.
pub trait Ground {
    /// The ground's height and unit normal at `(x, z)`.
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)>;

    /// The ground's height at `(x, z)`: [`sample`](Self::sample)'s height, `None` where it
    /// has none. A ground may answer it faster (a heightfield skips its normal); the
    /// grounding asks only this for most of its points.
    fn height(&self, x: f64, z: f64) -> Option<f64> {
        self.sample(x, z).map(|(height, _)| height)
    }
}

/// A plane through `point` with normal `normal` (any length; pointing up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    /// A point of the plane.
    pub point: DVec3,
    /// Its normal (normalised on use; its +Y part must be positive).
    pub normal: DVec3,
}

impl Plane {
    /// A plane through the origin rising at `angle` radians along +X (a slope up towards +X).
    pub fn slope(angle: f64) -> Self {
        Self {
            point: DVec3::ZERO,
            normal: DVec3::new(-angle.sin(), angle.cos(), 0.0),
        }
    }
}

impl Ground for Plane {
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)> {
        let n = self.normal.try_normalize()?;
        if n.y <= 1e-6 || !self.point.is_finite() {
            return None;
        }
        let height = self.point.y - (n.x * (x - self.point.x) + n.z * (z - self.point.z)) / n.y;
        height.is_finite().then_some((height, n))
    }
}

/// Heights on a regular grid: `heights[i][j]` is the ground's height at
/// `x = origin[0] + j·cell`, `z = origin[1] + i·cell`; bilinear between samples, the nearest
/// edge value outside the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Heightfield {
    /// `[x0, z0]`, the grid's first sample.
    pub origin: [f64; 2],
    /// The spacing of samples (metres, > 0).
    pub cell: f64,
    /// Rows along +Z of samples along +X; every row as long as the first.
    pub heights: Vec<Vec<f64>>,
}

/// Why a [`Heightfield`] is not one.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HeightfieldError {
    /// No rows, or an empty row.
    #[error("the heightfield has no samples")]
    Empty,
    /// A row of another length than the first.
    #[error("heightfield row {row} has {found} samples, row 0 has {expected}")]
    Ragged {
        /// The row.
        row: usize,
        /// Its length.
        found: usize,
        /// The first row's length.
        expected: usize,
    },
    /// The cell size or a height is not a finite number (the cell must be positive).
    #[error("heightfield {what} is not a finite number (the cell must be > 0)")]
    NotFinite {
        /// `cell`, `origin` or `height`.
        what: &'static str,
    },
}

impl Heightfield {
    /// Checks the grid: rows of equal length, finite heights, a positive cell.
    ///
    /// # Errors
    /// [`HeightfieldError`] naming what is wrong.
    pub fn new(
        origin: [f64; 2],
        cell: f64,
        heights: Vec<Vec<f64>>,
    ) -> Result<Self, HeightfieldError> {
        if !(cell.is_finite() && cell > 0.0) {
            return Err(HeightfieldError::NotFinite { what: "cell" });
        }
        if !origin.iter().all(|v| v.is_finite()) {
            return Err(HeightfieldError::NotFinite { what: "origin" });
        }
        let expected = heights.first().map_or(0, Vec::len);
        if expected == 0 {
            return Err(HeightfieldError::Empty);
        }
        for (row, r) in heights.iter().enumerate() {
            if r.len() != expected {
                return Err(HeightfieldError::Ragged {
                    row,
                    found: r.len(),
                    expected,
                });
            }
            if !r.iter().all(|h| h.is_finite()) {
                return Err(HeightfieldError::NotFinite { what: "height" });
            }
        }
        Ok(Self {
            origin,
            cell,
            heights,
        })
    }
}

impl Heightfield {
    /// The bilinear patch under `(x, z)`: its height and its slopes along +X and +Z (zero
    /// along an axis clamped at the edge); `None` for an empty grid or a point that is not
    /// finite.
    #[allow(clippy::cast_possible_truncation)] // grid indices of a grid that fits in memory
    fn patch(&self, x: f64, z: f64) -> Option<(f64, f64, f64)> {
        if self.heights.first().is_none_or(Vec::is_empty) || !(x.is_finite() && z.is_finite()) {
            return None;
        }
        let rows = self.heights.len();
        let columns = self.heights[0].len();
        #[allow(clippy::cast_precision_loss)] // grid sizes
        let (max_u, max_v) = ((columns - 1) as f64, (rows - 1) as f64);
        // Outside the grid: the nearest edge value (flat, normal up).
        let (inside_u, inside_v) = (
            (x - self.origin[0]) / self.cell,
            (z - self.origin[1]) / self.cell,
        );
        let (u, v) = (inside_u.clamp(0.0, max_u), inside_v.clamp(0.0, max_v));
        let (j, i) = (u.floor(), v.floor());
        let (fu, fv) = (u - j, v - i);
        // u and v are clamped into the grid: the cell's corners, the far ones clamped too.
        #[allow(clippy::cast_sign_loss)] // floor of a value ≥ 0
        let (j, i) = (j as usize, i as usize);
        let (j1, i1) = ((j + 1).min(columns - 1), (i + 1).min(rows - 1));
        // (A grid built without `new` may have short rows: no ground there, no panic.)
        let (near, far) = (&self.heights[i], &self.heights[i1]);
        let (h00, h01) = (*near.get(j)?, *near.get(j1)?);
        let (h10, h11) = (*far.get(j)?, *far.get(j1)?);
        let height =
            (h00 * (1.0 - fu) + h01 * fu) * (1.0 - fv) + (h10 * (1.0 - fu) + h11 * fu) * fv;
        // The bilinear patch's slopes (zero along an axis clamped at the edge).
        let dx = if (0.0..=max_u).contains(&inside_u) && columns > 1 {
            ((h01 - h00) * (1.0 - fv) + (h11 - h10) * fv) / self.cell
        } else {
            0.0
        };
        let dz = if (0.0..=max_v).contains(&inside_v) && rows > 1 {
            ((h10 - h00) * (1.0 - fu) + (h11 - h01) * fu) / self.cell
        } else {
            0.0
        };
        Some((height, dx, dz))
    }
}

impl Ground for Heightfield {
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)> {
        let (height, dx, dz) = self.patch(x, z)?;
        // Heights far apart can overflow the slopes: no ground there rather than a NaN.
        let normal = DVec3::new(-dx, 1.0, -dz).try_normalize()?;
        height.is_finite().then_some((height, normal))
    }

    fn height(&self, x: f64, z: f64) -> Option<f64> {
        // The same answer as `sample`'s, whose normal fails only where the slopes overflow.
        let (height, dx, dz) = self.patch(x, z)?;
        let normal = DVec3::new(-dx, 1.0, -dz).length_squared();
        (height.is_finite() && normal.is_finite()).then_some(height)
    }
}

/// Any function of the caller's as the ground: `f(x, z)` gives the height and normal.
pub struct GroundFn<F>(pub F);

impl<F: Fn(f64, f64) -> Option<(f64, DVec3)>> Ground for GroundFn<F> {
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)> {
        let (h, n) = (self.0)(x, z)?;
        let n = n.try_normalize()?;
        (h.is_finite() && n.y > 0.0).then_some((h, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ragged_grid_built_by_hand_has_no_ground_where_a_row_is_short() {
        // `new` refuses it; built field by field, sampling it answers `None`, never a panic.
        let field = Heightfield {
            origin: [0.0, 0.0],
            cell: 1.0,
            heights: vec![vec![0.0, 1.0, 2.0], vec![0.0]],
        };
        assert_eq!(field.sample(1.5, 0.5), None);
        assert_eq!(field.height(1.5, 0.5), None);
        // Height and sample agree wherever there is ground.
        let whole =
            Heightfield::new([1.0, 2.0], 0.5, vec![vec![0.0, 1.0], vec![2.0, 5.0]]).unwrap();
        for (x, z) in [(1.1, 2.2), (0.0, 0.0), (1.4, 2.45), (9.0, 9.0)] {
            assert_eq!(whole.height(x, z), whole.sample(x, z).map(|(h, _)| h));
        }
    }

    #[test]
    fn a_heightfield_is_bilinear_inside_and_flat_outside() {
        let field =
            Heightfield::new([1.0, 2.0], 0.5, vec![vec![0.0, 1.0], vec![2.0, 5.0]]).unwrap();
        // The corners.
        for (x, z, h) in [
            (1.0, 2.0, 0.0),
            (1.5, 2.0, 1.0),
            (1.0, 2.5, 2.0),
            (1.5, 2.5, 5.0),
        ] {
            assert!((field.sample(x, z).unwrap().0 - h).abs() < 1e-12);
        }
        // The middle: the mean of the four.
        let (h, n) = field.sample(1.25, 2.25).unwrap();
        assert!((h - 2.0).abs() < 1e-12);
        // The normal against finite differences of the height.
        let e = 1e-6;
        let dx = (field.sample(1.25 + e, 2.25).unwrap().0
            - field.sample(1.25 - e, 2.25).unwrap().0)
            / (2.0 * e);
        let dz = (field.sample(1.25, 2.25 + e).unwrap().0
            - field.sample(1.25, 2.25 - e).unwrap().0)
            / (2.0 * e);
        assert!((n - DVec3::new(-dx, 1.0, -dz).normalize()).length() < 1e-6);
        // Outside: the nearest edge.
        assert!((field.sample(0.0, 0.0).unwrap().0 - 0.0).abs() < 1e-12);
        assert!((field.sample(9.0, 9.0).unwrap().0 - 5.0).abs() < 1e-12);
        assert!(Heightfield::new([0.0, 0.0], 0.0, vec![vec![0.0]]).is_err());
        assert!(matches!(
            Heightfield::new([0.0, 0.0], 1.0, vec![vec![0.0, 1.0], vec![0.0]]),
            Err(HeightfieldError::Ragged {
                row: 1,
                found: 1,
                expected: 2
            })
        ));
        assert!(Heightfield::new([0.0, 0.0], 1.0, vec![]).is_err());
    }

    #[test]
    fn a_slope_rises_along_x() {
        let slope = Plane::slope(15f64.to_radians());
        let (h, n) = slope.sample(2.0, 7.0).unwrap();
        assert!((h - 2.0 * 15f64.to_radians().tan()).abs() < 1e-12);
        assert!((n.angle_between(DVec3::Y) - 15f64.to_radians()).abs() < 1e-12);
        let wall = Plane {
            point: DVec3::ZERO,
            normal: DVec3::X,
        };
        assert!(wall.sample(0.0, 0.0).is_none());
    }
}
