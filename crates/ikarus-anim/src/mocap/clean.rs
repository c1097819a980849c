//! Keypoint tracks before solving: missing or low-confidence points filled in, an optional
//! One-Euro filter.
//!
//! Points are stored frame-major: frame `f`'s point `k` is `points[f * count + k]`.

use glam::DVec3;

/// Fills every point marked missing (`valid` false) by linear interpolation in time between
/// the nearest valid frames of the same keypoint, holding the first or last valid point at the
/// ends. Returns, per keypoint, whether it had any valid frame (keypoints never seen are left
/// as they are and should not be used), and the number of points filled.
pub fn fill_gaps(points: &mut [DVec3], valid: &[bool], count: usize) -> (Vec<bool>, usize) {
    let frames = points.len().checked_div(count).unwrap_or(0);
    let mut seen = vec![false; count];
    let mut filled = 0;
    for (k, seen) in seen.iter_mut().enumerate() {
        let mut last: Option<usize> = None;
        for f in 0..frames {
            if !valid[f * count + k] {
                continue;
            }
            let from = last.map_or(0, |l| l + 1);
            for g in from..f {
                points[g * count + k] = match last {
                    Some(l) => {
                        let t = (g - l) as f64 / (f - l) as f64;
                        points[l * count + k].lerp(points[f * count + k], t)
                    }
                    None => points[f * count + k],
                };
                filled += 1;
            }
            last = Some(f);
        }
        if let Some(l) = last {
            *seen = true;
            for g in l + 1..frames {
                points[g * count + k] = points[l * count + k];
                filled += 1;
            }
        }
    }
    (seen, filled)
}

/// The One-Euro filter (Casiez, Roussel, Vogel 2012): a low-pass filter whose cut-off rises with
/// speed, so slow motion loses its jitter and fast motion keeps its lag small.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneEuro {
    /// Cut-off at rest, Hz. Smaller: smoother still poses, more lag. Default 2.
    pub min_cutoff: f64,
    /// How fast the cut-off rises with speed (Hz per m/s). Larger: less lag in fast moves,
    /// more jitter. Default 2.
    pub beta: f64,
    /// Cut-off of the speed estimate, Hz. Default 1.
    pub derivative_cutoff: f64,
    /// Runs the filter forward and then backward in time, which cancels its lag (whole clips).
    /// False filters forward only, as a live stream must. Default true.
    pub both_ways: bool,
}

impl Default for OneEuro {
    fn default() -> Self {
        Self {
            min_cutoff: 2.0,
            beta: 2.0,
            derivative_cutoff: 1.0,
            both_ways: true,
        }
    }
}

fn alpha(cutoff: f64, dt: f64) -> f64 {
    let tau = 1.0 / (2.0 * std::f64::consts::PI * cutoff);
    1.0 / (1.0 + tau / dt)
}

impl OneEuro {
    /// Filters the body's shape in place: every point's offset from the frame's centroid
    /// (frame-major, `count` points a frame, `dt` seconds between frames), forward in time.
    /// The centroid itself (noise averaged over all points) is not filtered, so a running
    /// body does not lag behind. Non-finite points are left alone.
    pub fn filter_shape(&self, points: &mut [DVec3], count: usize, dt: f64) {
        if count == 0 {
            return;
        }
        let centroids: Vec<DVec3> = points
            .chunks_exact(count)
            .map(|f| {
                let (sum, n) = f
                    .iter()
                    .filter(|p| p.is_finite())
                    .fold((DVec3::ZERO, 0.0), |(s, n), p| (s + *p, n + 1.0));
                if n > 0.0 { sum / n } else { DVec3::ZERO }
            })
            .collect();
        for (frame, c) in points.chunks_exact_mut(count).zip(&centroids) {
            for p in frame.iter_mut() {
                *p -= *c;
            }
        }
        self.filter(points, count, dt);
        for (frame, c) in points.chunks_exact_mut(count).zip(&centroids) {
            for p in frame.iter_mut() {
                *p += *c;
            }
        }
    }

    /// Filters every keypoint track in place (frame-major, `count` points a frame, `dt`
    /// seconds between frames), forward in time and then, with
    /// [`both_ways`](Self::both_ways), backward; speed measured as the point's 3-D speed.
    pub fn filter(&self, points: &mut [DVec3], count: usize, dt: f64) {
        if count == 0 || !(dt.is_finite() && dt > 0.0) {
            return;
        }
        let frames = points.len() / count;
        self.pass(points, count, dt, &(0..frames));
        if self.both_ways {
            self.pass(points, count, dt, &(0..frames).rev());
        }
    }

    /// One pass over the frames in the given order.
    fn pass(
        &self,
        points: &mut [DVec3],
        count: usize,
        dt: f64,
        order: &(impl Iterator<Item = usize> + Clone),
    ) {
        for k in 0..count {
            let mut frames = order.clone();
            let Some(first) = frames.next() else { return };
            let mut x = points[first * count + k];
            let mut dx = DVec3::ZERO;
            for f in frames {
                let raw = points[f * count + k];
                if !raw.is_finite() || !x.is_finite() {
                    x = raw;
                    continue;
                }
                let speed = (raw - x) / dt;
                dx = dx.lerp(speed, alpha(self.derivative_cutoff, dt));
                let cutoff = self.min_cutoff + self.beta * dx.length();
                x = x.lerp(raw, alpha(cutoff, dt));
                points[f * count + k] = x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_interpolated_and_ends_held() {
        let count = 1;
        let mut points: Vec<DVec3> = (0..6).map(|f| DVec3::splat(f64::from(f))).collect();
        let valid = [false, true, false, false, true, false];
        points[0] = DVec3::NAN;
        points[2] = DVec3::NAN;
        let (seen, filled) = fill_gaps(&mut points, &valid, count);
        assert_eq!(seen, vec![true]);
        assert_eq!(filled, 4);
        assert_eq!(points[0], DVec3::splat(1.0));
        assert!((points[2] - DVec3::splat(2.0)).length() < 1e-12);
        assert!((points[3] - DVec3::splat(3.0)).length() < 1e-12);
        assert_eq!(points[5], DVec3::splat(4.0));
    }

    #[test]
    fn one_euro_reduces_jitter_of_a_still_point() {
        let count = 1;
        let mut state = 12345_u64;
        let mut noise = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.02
        };
        let raw: Vec<DVec3> = (0..500)
            .map(|_| DVec3::new(noise(), noise(), noise()))
            .collect();
        let mut filtered = raw.clone();
        OneEuro::default().filter(&mut filtered, count, 1.0 / 60.0);
        let rms =
            |p: &[DVec3]| (p[100..].iter().map(|v| v.length_squared()).sum::<f64>() / 400.0).sqrt();
        assert!(
            rms(&filtered) < 0.5 * rms(&raw),
            "{} vs {}",
            rms(&filtered),
            rms(&raw)
        );
    }
}
