// Names how a measured cost grows with size, from the slope of log(cost) against log(size) between
// the smallest and the largest point: 0 is flat, 1 is linear, 2 quadratic.
export interface Point {
  x: number;
  y: number;
}

export function slope(points: Point[]): number {
  const ps = points.filter((p) => p.x > 0 && p.y > 0).sort((a, b) => a.x - b.x);
  if (ps.length < 2) return NaN;
  const a = ps[0]!;
  const b = ps[ps.length - 1]!;
  return Math.log(b.y / a.y) / Math.log(b.x / a.x);
}

export function growth(points: Point[]): string {
  const s = slope(points);
  if (Number.isNaN(s)) return 'not measured';
  const name = s < 0.12 ? 'flat (at most logarithmic)' : s < 0.8 ? 'sub-linear' : s < 1.2 ? 'linear' : 'worse than linear';
  return `${name}, log-log slope ${s.toFixed(2)}`;
}
