// In-process nudges: a route that queues work (or a job that makes new work) wakes the local
// workers and scheduler so they need not wait for their next poll. Other processes find the work
// at their next poll.
export class Wakeups {
  private readonly listeners = new Set<() => void>();

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  notify(): void {
    for (const fn of this.listeners) fn();
  }
}
