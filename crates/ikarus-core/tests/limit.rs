//! Joint limit projection: lands inside, idempotent, identity on legal rotations, continuous
//! across ±180°, and the Euler limit accepts both decompositions (seed 002, Euler limits).

use std::f64::consts::{FRAC_PI_2, PI};

use glam::{DQuat, DVec3};
use ikarus_core::{EulerLimit, EulerOrder, HingeLimit, JointLimit, MmdLimit, SwingTwistLimit};
use ikarus_testdata::limits::{hinge, swing_twist_y};
use proptest::prelude::*;

use ikarus_testdata::limits::EULER_ORDERS as ORDERS;

fn angle_between(a: DQuat, b: DQuat) -> f64 {
    let d = a.conjugate() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

fn unit_vector() -> impl Strategy<Value = DVec3> {
    (-1.0..1.0f64, 0.0..std::f64::consts::TAU).prop_map(|(z, phi)| {
        let r = (1.0 - z * z).sqrt();
        DVec3::new(r * phi.cos(), r * phi.sin(), z)
    })
}

fn rotation() -> impl Strategy<Value = DQuat> {
    (unit_vector(), -PI..PI).prop_map(|(axis, angle)| DQuat::from_axis_angle(axis, angle))
}

fn range(lo: f64, hi: f64) -> impl Strategy<Value = (f64, f64)> {
    (lo..hi, lo..hi).prop_map(|(a, b)| (a.min(b), a.max(b)))
}

fn limit() -> impl Strategy<Value = JointLimit> {
    let hinge = (unit_vector(), range(-PI, PI))
        .prop_map(|(axis, (min, max))| JointLimit::Hinge(HingeLimit { axis, min, max }));
    let swing_twist = (
        unit_vector(),
        unit_vector(),
        (-2.5..=0.0f64, 0.0..2.5f64),
        (-2.5..=0.0f64, 0.0..2.5f64),
        range(-PI, PI),
    )
        .prop_filter_map("parallel axes", |(t, s, su, sv, twist)| {
            let swing_axis = (s - t * s.dot(t)).try_normalize()?;
            Some(JointLimit::SwingTwist(SwingTwistLimit {
                twist_axis: t,
                swing_axis,
                swing_u: su,
                swing_v: sv,
                twist,
            }))
        });
    let euler =
        (0..6usize, range(-PI, PI), range(-PI, PI), range(-PI, PI)).prop_map(|(o, a, b, c)| {
            JointLimit::Euler(EulerLimit {
                order: ORDERS[o],
                min: [a.0, b.0, c.0],
                max: [a.1, b.1, c.1],
            })
        });
    let mmd =
        (range(-PI, PI), range(-PI, PI), range(-PI, PI), 0..8u8).prop_map(|(x, y, z, locked)| {
            let pick = |r: (f64, f64), bit: u8| {
                if locked & bit == 0 { r } else { (0.0, 0.0) }
            };
            let (x, y, z) = (pick(x, 1), pick(y, 2), pick(z, 4));
            JointLimit::Mmd(MmdLimit {
                min: DVec3::new(x.0, y.0, z.0),
                max: DVec3::new(x.1, y.1, z.1),
            })
        });
    prop_oneof![
        Just(JointLimit::Free),
        Just(JointLimit::Locked),
        hinge,
        swing_twist,
        euler,
        mmd.prop_filter("MMD ranges that admit no rotation", |l| l
            .validate()
            .is_ok()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn projection_lands_inside_and_is_idempotent(limit in limit(), q in rotation()) {
        prop_assert!(limit.validate().is_ok(), "{limit:?}");
        let p = limit.project(q);
        prop_assert!(p.is_finite() && (p.length() - 1.0).abs() < 1e-12, "{p}");
        prop_assert!(limit.contains(p), "{limit:?}: project({q}) = {p} is outside");
        prop_assert!(limit.violation(p) < 1e-9, "{limit:?}: violation {}", limit.violation(p));
        let pp = limit.project(p);
        prop_assert!(angle_between(p, pp) < 1e-9, "{limit:?}: not idempotent, {p} -> {pp}");
        if limit.contains(q) {
            prop_assert_eq!(p, q, "legal rotation changed");
        } else {
            prop_assert!(limit.violation(q) > 0.0);
        }
    }

    #[test]
    fn projection_is_continuous_across_180_degrees(
        limit in limit(), rest in rotation(), epsilon in 1e-9..1e-6f64,
    ) {
        // Two rotations 2ε apart on either side of the ±π seam of the limit's own angles.
        let seam = |angle: f64| -> DQuat {
            match &limit {
                JointLimit::Hinge(h) => DQuat::from_axis_angle(h.axis, angle),
                JointLimit::SwingTwist(s) => DQuat::from_axis_angle(s.twist_axis, angle),
                JointLimit::Euler(e) => {
                    let (_, b, c) = rest.to_euler(e.order.to_euler_rot());
                    DQuat::from_euler(e.order.to_euler_rot(), angle, b, c)
                }
                _ => rest * DQuat::from_rotation_x(angle),
            }
        };
        let a = seam(PI - epsilon);
        let b = seam(-PI + epsilon);
        prop_assert!(angle_between(a, b) < 3.0 * epsilon);
        let (pa, pb) = (limit.project(a), limit.project(b));
        prop_assert!(
            angle_between(pa, pb) < 1e-3,
            "{limit:?}: {a} -> {pa} but {b} -> {pb}"
        );
    }

    #[test]
    fn euler_limit_accepts_both_decompositions(
        o in 0..6usize,
        angles in (-PI..PI, -PI..PI, -PI..PI),
        margins in (0.0..0.5f64, 0.0..0.5f64, 0.0..0.5f64),
    ) {
        // Ranges around angles whose middle one may lie beyond ±90°: glam decomposes such a
        // rotation into the other solution, which the limit must still accept.
        let (a, b, c) = angles;
        let order = ORDERS[o];
        let limit = JointLimit::Euler(EulerLimit {
            order,
            min: [(a - margins.0).max(-PI), (b - margins.1).max(-PI), (c - margins.2).max(-PI)],
            max: [(a + margins.0).min(PI), (b + margins.1).min(PI), (c + margins.2).min(PI)],
        });
        let q = DQuat::from_euler(order.to_euler_rot(), a, b, c);
        prop_assert!(limit.contains(q), "{limit:?} rejects its own angles {angles:?}");
        prop_assert_eq!(limit.project(q), q);
    }
}

#[test]
fn euler_fold_cases_three_and_four() {
    // Middle angle at the fold: Rx(a) Ry(π/2) Rz(c) depends on a + c only. The limit allows
    // a in [0.5, 0.6] and c in [0.3, 0.4]; a rotation written as (0.0, π/2, 0.85) is the same as
    // (0.5, π/2, 0.35), which is inside.
    let limit = JointLimit::Euler(EulerLimit {
        order: EulerOrder::Xyz,
        min: [0.5, 1.0, 0.3],
        max: [0.6, FRAC_PI_2, 0.4],
    });
    let q = DQuat::from_euler(EulerOrder::Xyz.to_euler_rot(), 0.0, FRAC_PI_2, 0.85);
    let same = DQuat::from_euler(EulerOrder::Xyz.to_euler_rot(), 0.5, FRAC_PI_2, 0.35);
    assert!(angle_between(q, same) < 1e-12);
    assert!(limit.contains(q));
    // a + c = 1.2 is beyond the reachable 0.8..1.0.
    let outside = DQuat::from_euler(EulerOrder::Xyz.to_euler_rot(), 0.0, FRAC_PI_2, 1.2);
    assert!(!limit.contains(outside));
    assert!(limit.violation(outside) > 0.1);
}

#[test]
fn euler_limit_decomposition_example() {
    // (a, b, c) = (0.2, 2.0, -0.3) is returned by glam as (0.2 - π, π - 2.0, -0.3 + π).
    let order = EulerOrder::Yxz;
    let q = DQuat::from_euler(order.to_euler_rot(), 0.2, 2.0, -0.3);
    let (a, b, c) = q.to_euler(order.to_euler_rot());
    assert!((b - (PI - 2.0)).abs() < 1e-12, "{a} {b} {c}");
    let narrow = |b_range: (f64, f64)| {
        JointLimit::Euler(EulerLimit {
            order,
            min: [0.1, b_range.0, -0.4],
            max: [0.3, b_range.1, -0.2],
        })
    };
    assert!(narrow((1.9, 2.1)).contains(q));
    // The same angles with the middle range mirrored into [-90°, 90°] would need a, c flipped.
    assert!(!narrow((PI - 2.1, PI - 1.9)).contains(q));
}

#[test]
fn mmd_limit_follows_seed_001() {
    // Knee: x in [0, π] (seed's example), y and z locked.
    let knee = JointLimit::Mmd(MmdLimit {
        min: DVec3::ZERO,
        max: DVec3::new(PI, 0.0, 0.0),
    });
    // The seed's ideal rotation of about -100° about x clamps to identity.
    let ideal = DQuat::from_rotation_x(-1.74);
    assert!(angle_between(knee.project(ideal), DQuat::IDENTITY) < 1e-12);
    let bend = DQuat::from_rotation_x(1.0);
    assert_eq!(knee.project(bend), bend);
    // A twisted bend keeps its x component: x = sin(0.5) stays, y and z go.
    let twisted = DQuat::from_rotation_x(1.0) * DQuat::from_rotation_y(0.4);
    let p = knee.project(twisted);
    assert!(
        (p.x - twisted.x).abs() < 1e-12 && p.y == 0.0 && p.z == 0.0,
        "{p}"
    );
    // Locked y and z are removed from a residual rotation; x stays.
    let residual = DQuat::from_xyzw(0.3, 0.2, 0.1, 0.9).normalize();
    let kept = knee.unlocked_part(residual);
    assert!(kept.y == 0.0 && kept.z == 0.0 && kept.x > 0.0 && (kept.length() - 1.0).abs() < 1e-12);
}

#[test]
fn hinge_and_swing_twist_projection_examples() {
    let elbow = hinge(DVec3::Y, 0.0, 2.6);
    // Off-axis part dropped, angle kept.
    let p = elbow.project(DQuat::from_rotation_y(1.0) * DQuat::from_rotation_x(0.3));
    assert!(angle_between(p, DQuat::from_rotation_y(1.0)) < 1e-12);
    // Past the upper bound, nearer to it than to 0 on the circle: clamps to 2.6.
    assert!(
        angle_between(
            elbow.project(DQuat::from_rotation_y(3.0)),
            DQuat::from_rotation_y(2.6)
        ) < 1e-12
    );
    // At -0.5 the nearer bound is 0.
    assert!(angle_between(elbow.project(DQuat::from_rotation_y(-0.5)), DQuat::IDENTITY) < 1e-12);
    let cone = swing_twist_y((-0.5, 0.5), (-0.5, 0.5), (-0.2, 0.2));
    let p = cone.project(DQuat::from_rotation_x(0.9) * DQuat::from_rotation_y(0.5));
    assert!(angle_between(p, DQuat::from_rotation_x(0.5) * DQuat::from_rotation_y(0.2)) < 1e-12);
}
