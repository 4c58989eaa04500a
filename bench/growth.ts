// Names how a measured cost grows with size, from the slopes of log(cost) against log(size) between
// successive points: 0 is flat, 1 is linear, 2 quadratic. The steepest step names the growth, so a
// cost that bends upward at the large end is not averaged away.
export interface Point {
  x: number;
  y: number;
}

export function slope(points: Point[]): number {
  const ps = points.filter((p) => p.x > 0 && p.y > 0).sort((a, b) => a.x - b.x);
  if (ps.length < 2) return NaN;
  let steepest = -Infinity;
  for (let i = 1; i < ps.length; i++) steepest = Math.max(steepest, Math.log(ps[i]!.y / ps[i - 1]!.y) / Math.log(ps[i]!.x / ps[i - 1]!.x));
  return steepest;
}

export function growth(points: Point[]): string {
  const s = slope(points);
  if (Number.isNaN(s)) return 'not measured';
  const name = s < 0.12 ? 'flat (at most logarithmic)' : s < 0.8 ? 'sub-linear' : s < 1.2 ? 'linear' : 'worse than linear';
  return `${name}, steepest log-log slope ${s.toFixed(2)}`;
}
