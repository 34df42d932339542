//! A 2-D view of embedded instances for the campaign report: their first two principal
//! components. Power iteration on the centred data (v ← Xᵀ X v), written here because two
//! components of at most a few thousand 100-dimensional points do not warrant a
//! linear-algebra dependency.

/// Each point's coordinates on the two directions of greatest variance (zeros when the
/// points do not vary). Deterministic: the same points give the same picture.
pub fn project_2d(points: &[Vec<f32>]) -> Vec<(f64, f64)> {
    let n = points.len();
    let d = points.iter().map(Vec::len).min().unwrap_or(0);
    if n == 0 || d == 0 {
        return vec![(0.0, 0.0); n];
    }
    let mut mean = vec![0.0f64; d];
    for p in points {
        for (m, &x) in mean.iter_mut().zip(p) {
            *m += x as f64 / n as f64;
        }
    }
    let centred: Vec<Vec<f64>> =
        points.iter().map(|p| p.iter().zip(&mean).map(|(&x, m)| x as f64 - m).collect()).collect();
    let first = principal(&centred, d, None);
    let second = principal(&centred, d, first.as_deref());
    let coordinate = |row: &[f64], axis: &Option<Vec<f64>>| axis.as_ref().map_or(0.0, |a| dot(row, a));
    centred.iter().map(|row| (coordinate(row, &first), coordinate(row, &second))).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn normalize(v: &mut [f64]) -> bool {
    let norm = dot(v, v).sqrt();
    if norm < 1e-12 {
        return false;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    true
}

/// The unit direction of greatest variance orthogonal to `except`; None without variance.
fn principal(rows: &[Vec<f64>], d: usize, except: Option<&[f64]>) -> Option<Vec<f64>> {
    let orthogonalize = |v: &mut Vec<f64>| {
        if let Some(e) = except {
            let along = dot(v, e);
            v.iter_mut().zip(e).for_each(|(x, y)| *x -= along * y);
        }
    };
    // A start that is not orthogonal to the answer for any data seen in practice.
    let mut v: Vec<f64> = (0..d).map(|i| 1.0 + (i as f64 * 0.618).fract()).collect();
    orthogonalize(&mut v);
    if !normalize(&mut v) {
        return None;
    }
    for _ in 0..200 {
        let mut next = vec![0.0; d];
        for row in rows {
            let along = dot(row, &v);
            next.iter_mut().zip(row).for_each(|(n, x)| *n += along * x);
        }
        orthogonalize(&mut next);
        if !normalize(&mut next) {
            return None;
        }
        let converged = dot(&next, &v).abs() > 1.0 - 1e-10;
        v = next;
        if converged {
            break;
        }
    }
    // A sign of its own, so that equal inputs give equal pictures.
    if v.iter().copied().find(|x| x.abs() > 1e-9).is_some_and(|x| x < 0.0) {
        v.iter_mut().for_each(|x| *x = -*x);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_on_a_tilted_line_project_onto_the_first_axis_keeping_their_distances() {
        // Along (1, 1, 0), each point twice: 0.1 above and below the line (no correlation).
        let points: Vec<Vec<f32>> =
            (0..20).map(|k| vec![(k / 2) as f32, (k / 2) as f32, if k % 2 == 0 { 0.1 } else { -0.1 }]).collect();
        let projected = project_2d(&points);
        let span = projected[19].0 - projected[0].0;
        assert!((span.abs() - 9.0 * 2f64.sqrt()).abs() < 1e-5, "{projected:?}");
        assert!(
            projected.iter().all(|p| (p.1.abs() - 0.1).abs() < 1e-5),
            "the second axis is the spread: {projected:?}"
        );
    }

    #[test]
    fn identical_points_and_no_points_project_to_the_origin() {
        assert_eq!(project_2d(&[vec![1.0, 2.0], vec![1.0, 2.0]]), vec![(0.0, 0.0), (0.0, 0.0)]);
        assert!(project_2d(&[]).is_empty());
    }
}
