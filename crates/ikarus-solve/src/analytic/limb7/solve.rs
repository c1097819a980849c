//! The closed form: [`Limb7`]'s solves (position, position and orientation, the wrist for a\n//! swivel, the feasible swivels) and [`solve_slice`] over many limbs.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Limb7 {
    /// Validates the geometry and precomputes the constants.
    ///
    /// # Errors
    /// Zero-length bones, zero axis or reference, non-unit frames, a bad range, or a limb whose
    /// reach does not depend on the elbow.
    pub fn new(geometry: Limb7Geometry) -> Result<Self, Limb7Error> {
        let g = geometry;
        let a = g.upper;
        let a_len = a.length();
        if !(a_len.is_finite() && a_len > 0.0) {
            return Err(Limb7Error::ZeroLengthBone { bone: "upper" });
        }
        let b_len = g.lower.length();
        if !(b_len.is_finite() && b_len > 0.0) {
            return Err(Limb7Error::ZeroLengthBone { bone: "lower" });
        }
        let [lo, hi] = g.elbow_range;
        if !(lo.is_finite() && hi.is_finite() && lo <= hi && hi - lo <= TAU + 1e-12) {
            return Err(Limb7Error::BadRange { min: lo, max: hi });
        }
        for (what, q) in [
            ("elbow_frame", g.elbow_frame),
            ("wrist_frame", g.wrist_frame),
        ] {
            if !q.is_finite() || (q.length_squared() - 1.0).abs() > 1e-9 {
                return Err(Limb7Error::BadDirection { what });
            }
        }
        let axis = unit(g.elbow_axis).ok_or(Limb7Error::BadDirection { what: "elbow_axis" })?;
        let reference = unit(g.swivel_reference).ok_or(Limb7Error::BadDirection {
            what: "swivel_reference",
        })?;
        let m = g.elbow_frame * axis;
        let b0 = g.elbow_frame * g.lower;
        let (a_par, b_par) = (a.dot(m), b0.dot(m));
        let (a_perp, b_perp) = (a - a_par * m, b0 - b_par * m);
        let cos_part = a_perp.dot(b_perp);
        let sin_part = a_perp.dot(m.cross(b_perp));
        let rho = a_perp.length() * b_perp.length();
        if rho <= DEGENERATE * a_len * b_len {
            return Err(Limb7Error::NoReach);
        }
        let theta0 = sin_part.atan2(cos_part);
        let d2_const = a.length_squared() + g.lower.length_squared() + 2.0 * a_par * b_par;
        let (branches, branch_count) = branches(lo - theta0, hi - theta0);
        let mut limb = Self {
            geometry: g,
            axis,
            m,
            b0,
            d2_const,
            two_rho: 2.0 * rho,
            theta0,
            cos_theta0: theta0.cos(),
            sin_theta0: theta0.sin(),
            base: a + b_par * m,
            b_perp,
            m_x_b_perp: m.cross(b_perp),
            branches,
            branch_count,
            d2_min: 0.0,
            d2_max: 0.0,
            reference,
            reference2: DVec3::ZERO,
            straight_beta: 0.0,
            wrist_c: g.elbow_frame * g.wrist_frame,
            wrist_s: g.elbow_frame * DQuat::from_xyzw(axis.x, axis.y, axis.z, 0.0) * g.wrist_frame,
        };
        // Reach over the range: its ends and the extremes of the cosine inside it.
        let (mut d2_min, mut d2_max) = (f64::INFINITY, f64::NEG_INFINITY);
        for theta in limb.critical_angles() {
            let d2 = limb.d2(theta);
            d2_min = d2_min.min(d2);
            d2_max = d2_max.max(d2);
        }
        limb.d2_min = d2_min.max(0.0);
        limb.d2_max = d2_max;
        // Secondary reference: perpendicular to the reference and, as far as possible, to the
        // upper bone at rest.
        limb.reference2 = unit(reference.cross(a))
            .or_else(|| unit(reference.cross(DVec3::X)))
            .or_else(|| unit(reference.cross(DVec3::Y)))
            .unwrap_or(DVec3::Z);
        // The elbow offset's angle from m × ŵ in a well-bent pose, reused when straight.
        let theta_bent = limb.bent_angle();
        let w = a + limb.hinge_in_shoulder(theta_bent) * b0;
        if let (Some(w_hat), Some(k)) = (unit(w), unit(m.cross(w))) {
            let offset = a - a.dot(w_hat) * w_hat;
            limb.straight_beta = offset.dot(w_hat.cross(k)).atan2(offset.dot(k));
        }
        Ok(limb)
    }

    /// The geometry this limb was built from.
    pub fn geometry(&self) -> &Limb7Geometry {
        &self.geometry
    }

    /// The shortest and longest shoulder–wrist distances the hinge range allows, metres.
    pub fn reach(&self) -> (f64, f64) {
        (self.d2_min.sqrt(), self.d2_max.sqrt())
    }

    /// True when the wrist can reach `target` (limb frame) within the elbow's range (the
    /// seed's `IsSolution`, with the range's shortest reach as the inner bound).
    pub fn is_reachable(&self, target: DVec3) -> bool {
        let d2 = target.length_squared();
        d2.is_finite()
            && d2 <= self.d2_max * (1.0 + REACH_TOLERANCE)
            && d2 >= self.d2_min * (1.0 - REACH_TOLERANCE)
    }

    /// Solves shoulder and elbow so the wrist reaches `target` (limb frame, metres) with the
    /// elbow at `swivel` (radians; see the module docs for the reference); the wrist is left
    /// alone (the seed's first `Solve`). `elbow_hint` picks between two legal elbow angles
    /// (the current angle; `None` prefers the larger).
    ///
    /// # Errors
    /// [`Limb7Error::NonFinite`] for a NaN or infinite target or swivel.
    pub fn solve_position(
        &self,
        target: DVec3,
        swivel: f64,
        elbow_hint: Option<f64>,
    ) -> Result<Limb7Solution, Limb7Error> {
        if !target.is_finite() || !swivel.is_finite() || !elbow_hint.unwrap_or(0.0).is_finite() {
            return Err(Limb7Error::NonFinite);
        }
        Ok(self.solve_unchecked(target, swivel, elbow_hint))
    }

    /// Solves all seven joints so the wrist reaches `target` with `orientation` (the wrist's
    /// rotation in the limb frame, `limb_from_wrist`) and the elbow at `swivel` (the seed's
    /// second `Solve`).
    ///
    /// # Errors
    /// [`Limb7Error::NonFinite`] for a NaN or infinite goal or swivel, or a zero quaternion.
    pub fn solve_pose(
        &self,
        target: DVec3,
        orientation: DQuat,
        swivel: f64,
        elbow_hint: Option<f64>,
    ) -> Result<Limb7Solution, Limb7Error> {
        let goal = unit_quat(orientation).ok_or(Limb7Error::NonFinite)?;
        if !target.is_finite() || !swivel.is_finite() || !elbow_hint.unwrap_or(0.0).is_finite() {
            return Err(Limb7Error::NonFinite);
        }
        Ok(pulp::Arch::new().dispatch(PoseSolve {
            limb: self,
            target,
            goal,
            swivel,
            elbow_hint,
        }))
    }

    /// The wrist's local rotation that gives it the limb-frame orientation `goal` on top of the
    /// shoulder and elbow of `solution`.
    #[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    pub fn wrist_for(&self, solution: &Limb7Solution, goal: DQuat) -> DQuat {
        let hinge = solution.elbow_hinge;
        let (c, s) = (hinge.w, hinge.xyz().dot(self.axis));
        let before_wrist = solution.shoulder * (self.wrist_c * c + self.wrist_s * s);
        // A product of unit quaternions: unit to rounding.
        before_wrist.conjugate() * goal
    }

    /// Forward kinematics of the limb: the elbow's and wrist's positions and the wrist's
    /// orientation in the limb frame, for a shoulder rotation, an elbow angle and a wrist
    /// rotation.
    pub fn forward(
        &self,
        shoulder: DQuat,
        elbow_angle: f64,
        wrist: DQuat,
    ) -> (DVec3, DVec3, DQuat) {
        let g = &self.geometry;
        let elbow_rotation =
            shoulder * g.elbow_frame * DQuat::from_axis_angle(self.axis, elbow_angle);
        let elbow = shoulder * g.upper;
        let wrist_position = elbow + elbow_rotation * g.lower;
        (
            elbow,
            wrist_position,
            elbow_rotation * g.wrist_frame * wrist,
        )
    }

    /// The swivel angle of a pose given by the wrist's and elbow's positions (limb frame): the
    /// seed's `GetSwivel`, measured about the shoulder→wrist axis. `None` when the elbow lies
    /// on that axis (a straight limb: use [`swivel_from_pose`](Self::swivel_from_pose)) or the
    /// wrist is at the shoulder.
    pub fn swivel_from_positions(&self, wrist: DVec3, elbow: DVec3) -> Option<f64> {
        let n = unit(wrist)?;
        let offset = elbow - elbow.dot(n) * n;
        if offset.length_squared() <= (DEGENERATE * elbow.length()).powi(2) {
            return None;
        }
        let (u, v) = self.swivel_basis(n);
        Some(offset.dot(v).atan2(offset.dot(u)))
    }

    /// The swivel angle of a pose given by the shoulder's local rotation and the elbow angle,
    /// measured about the shoulder→wrist axis; defined for straight limbs too (the bend plane
    /// carries it, as in [`solve_position`](Self::solve_position)).
    pub fn swivel_from_pose(&self, shoulder: DQuat, elbow_angle: f64) -> f64 {
        let w = self.geometry.upper + self.hinge_in_shoulder(elbow_angle) * self.b0;
        let Some(w_hat) = unit(w) else {
            return 0.0;
        };
        let k = self.elbow_direction(w, w_hat);
        let n = shoulder * w_hat;
        let (u, v) = self.swivel_basis(n);
        let dir = shoulder * k;
        atan2(dir.dot(v), dir.dot(u))
    }

    /// The feasible swivel intervals for a goal: every swivel in them keeps the shoulder (and,
    /// with an `orientation`, the wrist) inside `limits`. Sorted by start; empty when no swivel
    /// is feasible; `[SwivelInterval::FULL]` when all are. The elbow's own range is not a
    /// function of the swivel and is not part of the answer (see
    /// [`is_reachable`](Self::is_reachable)). `include` lists swivels sampled besides the
    /// regular grid (the current and the wished swivel, say), so that a narrow interval holding
    /// one of them is never missed.
    ///
    /// # Errors
    /// [`Limb7Error::NonFinite`] for a NaN or infinite goal.
    pub fn feasible_swivels(
        &self,
        target: DVec3,
        orientation: Option<DQuat>,
        limits: &Limb7Limits<'_>,
        elbow_hint: Option<f64>,
        include: &[f64],
    ) -> Result<Vec<SwivelInterval>, Limb7Error> {
        if !target.is_finite() || !elbow_hint.unwrap_or(0.0).is_finite() {
            return Err(Limb7Error::NonFinite);
        }
        let goal = match orientation {
            Some(q) => Some(unit_quat(q).ok_or(Limb7Error::NonFinite)?),
            None => None,
        };
        let legal = |swivel: f64| self.is_legal(target, goal, limits, elbow_hint, swivel);
        let step = TAU / SWIVEL_SAMPLES as f64;
        let mut angles: Vec<f64> = (0..SWIVEL_SAMPLES)
            .map(|i| -PI + step * i as f64)
            .chain(include.iter().filter(|a| a.is_finite()).map(|&a| {
                let a = wrap(a);
                if a >= PI { -PI } else { a }
            }))
            .collect();
        angles.sort_by(f64::total_cmp);
        angles.dedup();
        let samples: Vec<bool> = angles.iter().map(|&a| legal(a)).collect();
        if samples.iter().all(|&ok| ok) {
            return Ok(vec![SwivelInterval::FULL]);
        }
        // Boundaries between consecutive samples, refined by bisection.
        let refine = |mut inside: f64, mut outside: f64| {
            for _ in 0..60 {
                let mid = 0.5 * (inside + outside);
                if legal(mid) {
                    inside = mid;
                } else {
                    outside = mid;
                }
                if (inside - outside).abs() < 1e-13 {
                    break;
                }
            }
            wrap(inside)
        };
        let mut starts = Vec::new();
        let mut ends = Vec::new();
        for i in 0..angles.len() {
            let j = (i + 1) % angles.len();
            let (a, b) = (angles[i], if j == 0 { angles[0] + TAU } else { angles[j] });
            match (samples[i], samples[j]) {
                (false, true) => starts.push(refine(b, a)),
                (true, false) => ends.push(refine(a, b)),
                _ => {}
            }
        }
        // Pair each start with the next end counter-clockwise.
        let mut intervals: Vec<SwivelInterval> = starts
            .iter()
            .map(|&start| {
                let end = ends
                    .iter()
                    .copied()
                    .min_by(|x, y| {
                        (x - start)
                            .rem_euclid(TAU)
                            .total_cmp(&(y - start).rem_euclid(TAU))
                    })
                    .unwrap_or(start);
                SwivelInterval { start, end }
            })
            .collect();
        intervals.sort_by(|x, y| x.start.total_cmp(&y.start));
        Ok(intervals)
    }

    /// True when the swivel keeps the shoulder (and, with a unit `goal` orientation, the
    /// wrist) inside `limits`: one closed-form solve and the limits' `contains`. Every input
    /// must be finite (see [`feasible_swivels`](Self::feasible_swivels), which checks).
    fn is_legal(
        &self,
        target: DVec3,
        goal: Option<DQuat>,
        limits: &Limb7Limits<'_>,
        elbow_hint: Option<f64>,
        swivel: f64,
    ) -> bool {
        self.solution_is_legal(
            &self.solve_unchecked(target, swivel, elbow_hint),
            goal,
            limits,
        )
    }

    /// True when `solution` keeps the shoulder (and, with a unit `goal` orientation, the
    /// wrist) inside `limits`.
    fn solution_is_legal(
        &self,
        solution: &Limb7Solution,
        goal: Option<DQuat>,
        limits: &Limb7Limits<'_>,
    ) -> bool {
        limits
            .shoulder
            .contains(limits.shoulder_rest.conjugate() * solution.shoulder)
            && goal.is_none_or(|goal| {
                let wrist = self.wrist_for(solution, goal);
                limits.wrist.contains(limits.wrist_rest.conjugate() * wrist)
            })
    }

    /// The swivel whose closed-form pose lies least outside `limits` (the sum of the
    /// shoulder's and, with a unit `goal`, the wrist's [`JointLimit::violation`]): the
    /// [`SWIVEL_SAMPLES`] grid, then a golden-section search between the best sample's
    /// neighbours. Used when no swivel is feasible, so that projecting onto the limits moves
    /// the limb as little as possible (a target just outside the legal workspace is then
    /// missed by about how far it lies outside). Every input must be finite.
    fn least_violating_swivel(
        &self,
        target: DVec3,
        goal: Option<DQuat>,
        limits: &Limb7Limits<'_>,
        elbow_hint: Option<f64>,
    ) -> f64 {
        let violation = |swivel: f64| {
            let s = self.solve_unchecked(target, swivel, elbow_hint);
            let shoulder = limits
                .shoulder
                .violation(limits.shoulder_rest.conjugate() * s.shoulder);
            shoulder
                + goal.map_or(0.0, |goal| {
                    let wrist = self.wrist_for(&s, goal);
                    limits
                        .wrist
                        .violation(limits.wrist_rest.conjugate() * wrist)
                })
        };
        let step = TAU / SWIVEL_SAMPLES as f64;
        let (mut best, mut best_violation) = (0.0, f64::INFINITY);
        for i in 0..SWIVEL_SAMPLES {
            let swivel = -PI + step * i as f64;
            let v = violation(swivel);
            if v < best_violation {
                (best, best_violation) = (swivel, v);
            }
        }
        // Golden-section search on [best − step, best + step].
        let ratio = 0.5 * (5f64.sqrt() - 1.0);
        let (mut lo, mut hi) = (best - step, best + step);
        let (mut x1, mut x2) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
        let (mut v1, mut v2) = (violation(x1), violation(x2));
        for _ in 0..48 {
            if v1 <= v2 {
                (hi, x2, v2) = (x2, x1, v1);
                x1 = hi - ratio * (hi - lo);
                v1 = violation(x1);
            } else {
                (lo, x1, v1) = (x1, x2, v2);
                x2 = lo + ratio * (hi - lo);
                v2 = violation(x2);
            }
        }
        let (x, v) = if v1 <= v2 { (x1, v1) } else { (x2, v2) };
        wrap(if v < best_violation { x } else { best })
    }

    /// The swivel for `policy` and its closed-form solution (shoulder and elbow; the wrist is
    /// the caller's), whether that solution is already known to be legal, and the feasible
    /// intervals when they were computed. `current` is the pose's swivel, `hint` its elbow
    /// angle.
    pub(super) fn choose_solution(
        &self,
        policy: SwivelPolicy,
        target: DVec3,
        orientation: Option<DQuat>,
        limits: &Limb7Limits<'_>,
        hint: f64,
        current: f64,
    ) -> Result<(Limb7Solution, bool, Option<Vec<SwivelInterval>>), Limb7Error> {
        let wishes = match policy {
            SwivelPolicy::Fixed(wish) | SwivelPolicy::NearestFeasible(wish) => [wish, current],
            SwivelPolicy::KeepCurrent | SwivelPolicy::MiddleOfFeasible => [current, current],
        };
        // `KeepCurrent`: the current swivel's solution, once found legal, is the answer (its
        // shoulder and wrist need no second check).
        let mut legal_current = None;
        let needs_feasible = match policy {
            SwivelPolicy::NearestFeasible(_) | SwivelPolicy::MiddleOfFeasible => true,
            SwivelPolicy::KeepCurrent => {
                let solution = self.solve_unchecked(target, wrap(current), Some(hint));
                let legal = solution.shoulder.is_finite()
                    && self.solution_is_legal(&solution, orientation, limits);
                legal_current = legal.then_some(solution);
                !legal
            }
            SwivelPolicy::Fixed(_) => false,
        };
        let feasible = if needs_feasible {
            Some(self.feasible_swivels(target, orientation, limits, Some(hint), &wishes)?)
        } else {
            None
        };
        let swivel = match feasible.as_deref() {
            // Nothing is feasible: the swivel that needs the smallest correction by the limits
            // (except for a fixed swivel, which is the caller's to keep).
            Some([]) if !matches!(policy, SwivelPolicy::Fixed(_)) => {
                self.least_violating_swivel(target, orientation, limits, Some(hint))
            }
            intervals => Limb7::choose_swivel(policy, current, intervals.unwrap_or(&[])),
        };
        let known_legal = legal_current.is_some();
        let solution = match legal_current {
            Some(solution) => solution,
            None => self.solve_position(target, swivel, Some(hint))?,
        };
        Ok((solution, known_legal, feasible))
    }

    /// Picks the swivel for `policy`: `current` is the current pose's swivel, `feasible` the
    /// feasible intervals (read by every policy but `Fixed`; empty means none is feasible —
    /// or, for `KeepCurrent`, that the current swivel is known to be feasible — in which case
    /// the wish or the current swivel is kept).
    pub fn choose_swivel(policy: SwivelPolicy, current: f64, feasible: &[SwivelInterval]) -> f64 {
        let nearest = |wish: f64| {
            feasible
                .iter()
                .map(|interval| interval.nearest(wish))
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .map_or(wrap(wish), |(swivel, _)| swivel)
        };
        match policy {
            SwivelPolicy::Fixed(swivel) => wrap(swivel),
            SwivelPolicy::KeepCurrent => nearest(current),
            SwivelPolicy::NearestFeasible(wish) => nearest(wish),
            SwivelPolicy::MiddleOfFeasible => feasible
                .iter()
                .min_by(|x, y| x.nearest(current).1.total_cmp(&y.nearest(current).1))
                .map_or(wrap(current), SwivelInterval::middle),
        }
    }

    #[allow(clippy::inline_always)] // inlined into `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    pub(super) fn solve_unchecked(
        &self,
        target: DVec3,
        swivel: f64,
        elbow_hint: Option<f64>,
    ) -> Limb7Solution {
        let d2_target = target.length_squared();
        let (theta, cos, sin, reached_elbow) = self.elbow_angle_for(d2_target, elbow_hint);
        let hinge = half_angle_rotation(self.axis, cos, sin);
        let w = self.base + cos * self.b_perp + sin * self.m_x_b_perp;
        let w_len2 = w.length_squared();
        let tiny = (DEGENERATE * DEGENERATE) * self.d2_max;
        let target_far = d2_target > tiny;
        let inv_target = if target_far {
            1.0 / d2_target.sqrt()
        } else {
            0.0
        };
        let w_hat = if reached_elbow && target_far {
            // |w| = |target| up to rounding when the elbow angle is exact: one square root.
            w * inv_target
        } else if w_len2 > tiny {
            w / w_len2.sqrt()
        } else {
            // Folded onto the shoulder (bones of equal length): the upper bone's axis.
            self.geometry.upper.normalize()
        };
        // The shoulder→target axis; a target at the shoulder keeps the limb's own axis.
        let n = if target_far {
            target * inv_target
        } else {
            w_hat
        };
        let (u, v) = self.swivel_basis(n);
        let (sin, cos) = sin_cos(swivel);
        let elbow_dir = cos * u + sin * v;
        let k = self.elbow_direction(w, w_hat);
        // Rotation taking (ŵ, k, ŵ×k) to (n, e, n×e).
        let from = DMat3::from_cols(w_hat, k, w_hat.cross(k));
        let to = DMat3::from_cols(n, elbow_dir, n.cross(elbow_dir));
        // Both frames are orthonormal, so the product is a rotation and its quaternion unit.
        let shoulder = DQuat::from_mat3(&(to * from.transpose()));
        let reached = reached_elbow
            && (w_len2 - d2_target).abs() <= 4.0 * REACH_TOLERANCE * self.d2_max.max(d2_target);
        Limb7Solution {
            shoulder,
            elbow_angle: theta,
            elbow_hinge: hinge,
            wrist: None,
            swivel: wrap(swivel),
            reached,
        }
    }

    /// Elbow angle whose reach is `d2` (or nearest to it in range), its cosine and sine, and
    /// whether it is exact.
    #[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    fn elbow_angle_for(&self, d2: f64, hint: Option<f64>) -> (f64, f64, f64, bool) {
        let [lo, hi] = self.geometry.elbow_range;
        let c = (d2 - self.d2_const) / self.two_rho;
        if (-1.0..=1.0).contains(&c) {
            // Branches are tested on cos δ = c; δ itself (an arc cosine) is only needed for
            // the angle returned, off the critical path of the pose.
            let mut found: Option<(usize, f64)> = None;
            for (index, branch) in self.branches[..self.branch_count].iter().enumerate() {
                if c > branch.cos_lo || c < branch.cos_hi {
                    continue;
                }
                let theta = || (self.theta0 + branch.sign * c.acos() + branch.shift).clamp(lo, hi);
                found = match (found, hint) {
                    (None, _) => Some((index, f64::NAN)),
                    (Some((best, _)), hint) => {
                        let b = &self.branches[best];
                        let best_theta = (self.theta0 + b.sign * c.acos() + b.shift).clamp(lo, hi);
                        let this = theta();
                        let better = match hint {
                            Some(h) => near_distance(this, h) < near_distance(best_theta, h),
                            None => this > best_theta,
                        };
                        Some(if better {
                            (index, this)
                        } else {
                            (best, best_theta)
                        })
                    }
                };
            }
            if let Some((index, theta)) = found {
                let branch = &self.branches[index];
                let theta = if theta.is_nan() {
                    (self.theta0 + branch.sign * c.acos() + branch.shift).clamp(lo, hi)
                } else {
                    theta
                };
                // cos and sin of θ₀ ± δ without evaluating them.
                let s = (1.0 - c * c).max(0.0).sqrt() * branch.sign;
                let cos = self.cos_theta0 * c - self.sin_theta0 * s;
                let sin = self.sin_theta0 * c + self.cos_theta0 * s;
                return (theta, cos, sin, true);
            }
        }
        // Out of reach within the range: the critical angle whose distance is nearest.
        let target = d2.sqrt();
        let theta = self
            .critical_angles()
            .min_by(|x, y| {
                (self.d2(*x).max(0.0).sqrt() - target)
                    .abs()
                    .total_cmp(&(self.d2(*y).max(0.0).sqrt() - target).abs())
            })
            .unwrap_or(lo);
        let exact = (self.d2(theta) - d2).abs() <= REACH_TOLERANCE * self.d2_max.max(d2);
        let (sin, cos) = (theta - self.theta0).sin_cos();
        // Rotate back by θ₀: the cosine and sine of θ itself.
        let (cos, sin) = (
            cos * self.cos_theta0 - sin * self.sin_theta0,
            sin * self.cos_theta0 + cos * self.sin_theta0,
        );
        (theta, cos, sin, exact)
    }

    /// The range's ends and the cosine's extremes inside it.
    fn critical_angles(&self) -> impl Iterator<Item = f64> + '_ {
        let [lo, hi] = self.geometry.elbow_range;
        [lo, hi, self.theta0, self.theta0 + PI]
            .into_iter()
            .enumerate()
            .filter_map(move |(i, theta)| {
                if i < 2 {
                    Some(theta)
                } else {
                    into_range(theta, lo, hi)
                }
            })
    }

    fn d2(&self, theta: f64) -> f64 {
        self.d2_const + self.two_rho * (theta - self.theta0).cos()
    }

    /// An elbow angle well inside the range and away from straight, for reference frames.
    pub(super) fn bent_angle(&self) -> f64 {
        let [lo, hi] = self.geometry.elbow_range;
        let middle = 0.5 * (lo + hi);
        if hi - lo < 1e-6 {
            // A locked elbow: bend off straight as far as possible by hand.
            return self.theta0 + PI / 2.0;
        }
        middle
    }

    pub(super) fn hinge_in_shoulder(&self, theta: f64) -> DQuat {
        DQuat::from_axis_angle(self.m, theta)
    }

    /// The unit direction (shoulder frame, normal to ŵ) from the shoulder→wrist axis to the
    /// elbow; for a straight limb the bend plane's direction with the same offset angle.
    #[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    fn elbow_direction(&self, w: DVec3, w_hat: DVec3) -> DVec3 {
        let a = self.geometry.upper;
        let offset = a - a.dot(w_hat) * w_hat;
        let offset2 = offset.length_squared();
        let a2 = a.length_squared();
        if offset2 > 1e-4 * a2 {
            return offset / offset2.sqrt();
        }
        // Near straight, rounding along ŵ matters: project once more. Below 1e-6 of the bone
        // the offset's direction is mostly rounding; the bend plane gives the same direction
        // in the limit.
        if offset2 > 1e-12 * a2 {
            let offset = offset - offset.dot(w_hat) * w_hat;
            return offset / offset.length();
        }
        let k = unit(self.m.cross(w)).unwrap_or_else(|| w_hat.any_orthonormal_vector());
        let (sin, cos) = self.straight_beta.sin_cos();
        cos * k + sin * w_hat.cross(k)
    }

    /// `(û, v̂)`: the reference projected normal to `n`, and `n × û`.
    #[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    fn swivel_basis(&self, n: DVec3) -> (DVec3, DVec3) {
        let p = self.reference - self.reference.dot(n) * n;
        let len2 = p.length_squared();
        let u = if len2 > 1e-12 {
            p / len2.sqrt()
        } else {
            let p = self.reference2 - self.reference2.dot(n) * n;
            let len2 = p.length_squared();
            if len2 > 1e-12 {
                p / len2.sqrt()
            } else {
                n.any_orthonormal_vector()
            }
        };
        (u, n.cross(u))
    }
}

/// Solves many limbs at once: `out[i]` is [`Limb7::solve_pose`] of `limbs[i]` for
/// `targets[i]`, `orientations[i]` and `swivels[i]` (no hint). Allocates nothing; the shortest
/// slice sets the count.
pub fn solve_slice(
    limbs: &[Limb7],
    targets: &[DVec3],
    orientations: &[DQuat],
    swivels: &[f64],
    out: &mut [Result<Limb7Solution, Limb7Error>],
) {
    for ((((limb, &target), &orientation), &swivel), slot) in limbs
        .iter()
        .zip(targets)
        .zip(orientations)
        .zip(swivels)
        .zip(out.iter_mut())
    {
        *slot = limb.solve_pose(target, orientation, swivel, None);
    }
}
